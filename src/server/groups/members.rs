//! Members: admission (both signatures over the admission statement, then a seat: the same
//! one again, the member's own free seat, or the lowest free one, within the room's size and
//! late-join rule), the member heartbeat, leaving.

use super::{Timing, new_id, require_epoch, require_open};
use crate::api::group::{
    GroupStatus, MemberAdmitted, MemberStatus, NewMember, admission_canonical,
};
use crate::api::is_url_safe_id;
use crate::identity;
use crate::server::error::{ApiError, ApiResult};
use crate::server::store::{GroupState, MemberRow};

/// Longest admission nonce.
const MAX_NONCE_CHARS: usize = 64;
/// Keys one room keeps (members that left stay listed with their id): a long-lived room
/// with late join and churn stays a bounded answer.
pub const MAX_KNOWN_MEMBERS: usize = 1024;

/// An admission's answer, and whether it seated a key the room never had (201).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Admission {
    pub member: MemberAdmitted,
    pub new_member: bool,
}

/// Seats `caller` (already a registered key) after checking the leader's and its own
/// signature over the admission statement of the room's current leader and epoch.
pub fn admit(
    state: &mut GroupState,
    caller: &str,
    new: &NewMember,
    timing: &Timing,
) -> ApiResult<Admission> {
    if !is_url_safe_id(&new.join_nonce) || new.join_nonce.len() > MAX_NONCE_CHARS {
        return Err(ApiError::bad_request(
            "invalid_join_nonce",
            format!("join_nonce must be 1-{MAX_NONCE_CHARS} characters of A-Za-z0-9_-"),
        ));
    }
    require_open(state)?;
    let g = &state.group;
    if caller == g.leader_key {
        return Err(ApiError::bad_request(
            "leader_cannot_join",
            "the room's leader holds its seat already",
        ));
    }
    require_epoch(state, new.leader_epoch, "leader_epoch")?;
    let statement = admission_canonical(
        &g.group_id,
        &g.leader_key,
        caller,
        &g.protocol_id,
        g.leader_epoch,
        &new.join_nonce,
    );
    for (field, key, signature) in [
        ("leader_signature", &g.leader_key, &new.leader_signature),
        (
            "member_signature",
            &caller.to_string(),
            &new.member_signature,
        ),
    ] {
        identity::verify_hex(key, statement.as_bytes(), signature).map_err(|e| {
            ApiError::bad_request(
                "invalid_admission_signature",
                format!("{field} over the admission statement of this room, leader and epoch: {e}"),
            )
        })?;
    }
    let (seat, new_member) = choose_seat(state, caller)?;
    let now = timing.now;
    let index = match state.members.iter().position(|m| m.public_key == caller) {
        Some(index) => index,
        None => {
            state.members.push(MemberRow {
                public_key: caller.to_string(),
                member_id: new_id(),
                seat,
                status: MemberStatus::Left,
                join_nonce: String::new(),
                joined_at: now,
                last_seen_at: now,
            });
            state.members.len() - 1
        }
    };
    let member = &mut state.members[index];
    if member.status != MemberStatus::Active || member.seat != seat {
        state.group.membership_version += 1;
    }
    member.seat = seat;
    member.status = MemberStatus::Active;
    member.join_nonce = new.join_nonce.clone();
    member.last_seen_at = now;
    Ok(Admission {
        member: MemberAdmitted {
            group_id: state.group.group_id.clone(),
            member_id: member.member_id.clone(),
            seat,
            public_key: caller.to_string(),
            status: MemberStatus::Active,
            membership_version: state.group.membership_version,
        },
        new_member,
    })
}

/// The seat `caller` gets, and whether it is new to the room: an active member keeps its
/// seat; a returning one gets its own seat back while nobody holds it, else (unless the room
/// runs without late join) the lowest free seat, as does a new one — in a running room the
/// lowest seat nobody ever held, while there is one.
fn choose_seat(state: &GroupState, caller: &str) -> ApiResult<(u32, bool)> {
    let g = &state.group;
    let held = |seat: u32| {
        state
            .members
            .iter()
            .any(|m| m.status == MemberStatus::Active && m.seat == seat)
    };
    let known = state.members.iter().find(|m| m.public_key == caller);
    if let Some(member) = known
        && member.status == MemberStatus::Active
    {
        return Ok((member.seat, false));
    }
    let late_join_closed = g.status == GroupStatus::Active && !g.allow_late_join;
    if known.is_none() && late_join_closed {
        return Err(ApiError::conflict(
            "late_join_closed",
            "the room is running and takes no new members",
        ));
    }
    if known.is_none() && state.members.len() >= MAX_KNOWN_MEMBERS {
        return Err(ApiError::conflict(
            "group_full",
            format!("the room has seated {MAX_KNOWN_MEMBERS} different keys, its most"),
        ));
    }
    let active = state
        .members
        .iter()
        .filter(|m| m.status == MemberStatus::Active)
        .count();
    if active >= g.max_participants as usize {
        return Err(ApiError::conflict(
            "group_full",
            format!("all {} seats are taken", g.max_participants),
        ));
    }
    if let Some(member) = known
        && !held(member.seat)
    {
        return Ok((member.seat, false));
    }
    if late_join_closed {
        return Err(ApiError::conflict(
            "late_join_closed",
            "the room is running without late join and this member's seat is taken",
        ));
    }
    // A running room keeps the seats of members that left for them while others are free:
    // its leader may still count them (the reference's leader never forgets a member).
    let seats = 0..g.max_participants;
    let never_held = |seat: u32| state.members.iter().all(|m| m.seat != seat);
    let free = match g.status {
        GroupStatus::Active => seats.clone().find(|&seat| never_held(seat)),
        _ => None,
    }
    .or_else(|| seats.clone().find(|&seat| !held(seat)));
    free.map(|seat| (seat, known.is_none()))
        .ok_or_else(|| ApiError::conflict("group_full", "no seat is free"))
}

/// The member heartbeat: an active member was seen now. One that was marked left must be
/// admitted again.
pub fn member_heartbeat(state: &mut GroupState, caller: &str, timing: &Timing) -> ApiResult<()> {
    require_open(state)?;
    let member = find_member(&mut state.members, caller)?;
    if member.status != MemberStatus::Active {
        return Err(ApiError::conflict(
            "member_left",
            "this member has left the room (or went silent too long); it must be admitted again",
        ));
    }
    member.last_seen_at = timing.now;
    Ok(())
}

/// A member gives up its seat (a member that has left already stays left). The leader
/// cannot leave: it closes the room, or its lease runs out and another member takes over.
pub fn leave(state: &mut GroupState, caller: &str) -> ApiResult<()> {
    require_open(state)?;
    if caller == state.group.leader_key {
        return Err(ApiError::conflict(
            "leader_cannot_leave",
            "the leader cannot leave its room; close it, or let its lease run out",
        ));
    }
    let GroupState { group, members } = state;
    let member = find_member(members, caller)?;
    if member.status == MemberStatus::Active {
        member.status = MemberStatus::Left;
        group.membership_version += 1;
    }
    Ok(())
}

fn find_member<'a>(members: &'a mut [MemberRow], caller: &str) -> ApiResult<&'a mut MemberRow> {
    members
        .iter_mut()
        .find(|m| m.public_key == caller)
        .ok_or_else(|| ApiError::not_found("this key is not a member of the room"))
}
