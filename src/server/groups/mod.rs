//! The rules of a room's control plane, as pure functions over a room's stored state (read
//! under the room's row lock by [`crate::server::store`]): who may sit down on which seat,
//! when a silent member has left, what a leader's heartbeat, a failover claim and a status
//! change may do. Every refusal is the `ApiError` the route answers with; the routes only
//! parse, call these inside one write transaction, and answer.

mod leader;
mod members;

pub use leader::{ClaimOutcome, claim, leader_heartbeat, set_status};
pub use members::{admit, leave, member_heartbeat};

use rand::RngCore;

use crate::api::group::{Group, GroupMember, GroupStatus, MemberStatus};
use crate::server::clock::iso8601;
use crate::server::error::{ApiError, ApiResult};
use crate::server::store::{GroupState, InvitationEffect};

/// Longest iroh ticket a leader may publish (the invitations' bound).
pub const MAX_TICKET_CHARS: usize = 4096;

/// The clock and the durations one request applies.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Timing {
    /// Server time, Unix ms.
    pub now: i64,
    pub lease_ms: i64,
    pub member_timeout_ms: i64,
    pub invitation_ttl_ms: i64,
}

/// 16 random bytes as 32 lowercase hex characters (room and member ids).
pub fn new_id() -> String {
    let mut bytes = [0u8; 16];
    rand::rngs::OsRng.fill_bytes(&mut bytes);
    hex::encode(bytes)
}

/// Marks left every active member of an open room, but its leader (whose liveness is its
/// lease), that was last seen more than the member timeout ago; one membership version for
/// all of them. Every change of a room starts with it, and every read shows its result.
pub fn expire_members(state: &mut GroupState, timing: &Timing) {
    if !state.group.status.is_open() {
        return;
    }
    let cutoff = timing.now.saturating_sub(timing.member_timeout_ms);
    let leader = &state.group.leader_key;
    let mut expired = false;
    for member in &mut state.members {
        if member.status == MemberStatus::Active
            && &member.public_key != leader
            && member.last_seen_at < cutoff
        {
            member.status = MemberStatus::Left;
            expired = true;
        }
    }
    if expired {
        state.group.membership_version += 1;
    }
}

/// The room as the API shows it at `timing.now` (silent members shown as left).
pub fn view(state: &GroupState, timing: &Timing) -> Group {
    let mut state = state.clone();
    expire_members(&mut state, timing);
    let GroupState { group: g, members } = state;
    let participant_count = members
        .iter()
        .filter(|m| m.status == MemberStatus::Active)
        .count() as u64;
    Group {
        group_id: g.group_id,
        post_id: g.post_id,
        protocol_id: g.protocol_id,
        status: g.status,
        leader_public_key: g.leader_key,
        leader_epoch: g.leader_epoch,
        leader_lease_seconds: u64::try_from(timing.lease_ms / 1000).unwrap_or(0),
        leader_lease_expires_at: iso8601(g.lease_expires_at),
        server_time: iso8601(timing.now),
        membership_version: g.membership_version,
        participant_count,
        min_participants: g.min_participants,
        max_participants: g.max_participants,
        allow_late_join: g.allow_late_join,
        recovery_mode: g.recovery_mode,
        start_policy: g.start_policy,
        checkpoint_seq: g.checkpoint_seq,
        checkpoint_hash: g.checkpoint_hash,
        iroh_ticket: g.iroh_ticket,
        transport_binding_signature: g.transport_binding_signature,
        members: members
            .into_iter()
            .map(|m| GroupMember {
                member_id: m.member_id,
                seat: m.seat,
                public_key: m.public_key,
                status: m.status,
                joined_at: iso8601(m.joined_at),
            })
            .collect(),
        created_at: iso8601(g.created_at),
        updated_at: iso8601(g.updated_at),
    }
}

/// What a leader's heartbeat or claim does to the room's invitation: a room that can still
/// take members stays offered while its leader lives (in the lobby, or running with late
/// join); otherwise it is left to expire.
fn renewal(state: &GroupState, timing: &Timing) -> InvitationEffect {
    let g = &state.group;
    let open_to_new = match g.status {
        GroupStatus::Lobby => true,
        GroupStatus::Active => g.allow_late_join,
        GroupStatus::Closed | GroupStatus::Failed => false,
    };
    if open_to_new {
        InvitationEffect::Renew {
            expires_at: timing.now.saturating_add(timing.invitation_ttl_ms),
        }
    } else {
        InvitationEffect::Keep
    }
}

fn require_open(state: &GroupState) -> ApiResult<()> {
    let status = state.group.status;
    if status.is_open() {
        Ok(())
    } else {
        Err(ApiError::conflict(
            "group_closed",
            format!("the room is {status}"),
        ))
    }
}

/// The fencing check: a request made for another epoch than the room's.
fn require_epoch(state: &GroupState, epoch: u64, field: &str) -> ApiResult<()> {
    let current = state.group.leader_epoch;
    if epoch == current {
        Ok(())
    } else {
        Err(ApiError::conflict(
            "epoch_mismatch",
            format!("{field} is {epoch}, the room is in leader epoch {current}"),
        ))
    }
}

/// A ticket the room can publish: 1-4096 visible ASCII characters.
fn check_ticket(ticket: &str) -> ApiResult<()> {
    if ticket.is_empty()
        || ticket.len() > MAX_TICKET_CHARS
        || !ticket.bytes().all(|b| b.is_ascii_graphic())
    {
        return Err(ApiError::bad_request(
            "invalid_ticket",
            format!("iroh_ticket must be 1-{MAX_TICKET_CHARS} visible ASCII characters"),
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests;
