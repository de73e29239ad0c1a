//! Leadership: the leader's heartbeat (lease, ticket and checkpoint floor, fenced by the
//! epoch), a member's claim once the lease ran out (a certified checkpoint no older than
//! the floor; `abort` rooms fail instead), and the leader's status changes.

use super::{Timing, check_ticket, renewal, require_epoch, require_open};
use crate::api::group::{
    ClaimLeader, EMPTY_CHECKPOINT_HASH, GroupStatus, GroupStatusUpdate, LeaderHeartbeat,
    MemberStatus, RecoveryMode, checkpoint_canonical,
};
use crate::identity::{self, TRANSPORT_IROH, is_lower_hex_64};
use crate::server::error::{ApiError, ApiResult};
use crate::server::store::{GroupState, InvitationEffect};

/// The leader of the room's epoch renews its lease, its ticket and the checkpoint floor.
pub fn leader_heartbeat(
    state: &mut GroupState,
    caller: &str,
    beat: &LeaderHeartbeat,
    timing: &Timing,
) -> ApiResult<InvitationEffect> {
    check_hash("checkpoint_hash", &beat.checkpoint_hash)?;
    check_ticket(&beat.iroh_ticket)?;
    require_epoch(state, beat.leader_epoch, "leader_epoch")?;
    require_leader(state, caller)?;
    require_open(state)?;
    check_binding(
        state,
        caller,
        &beat.iroh_ticket,
        &beat.transport_binding_signature,
    )?;
    check_floor(state, beat.checkpoint_seq, &beat.checkpoint_hash)?;
    let g = &mut state.group;
    g.lease_expires_at = timing.now.saturating_add(timing.lease_ms);
    g.iroh_ticket = beat.iroh_ticket.clone();
    g.transport_binding_signature = beat.transport_binding_signature.clone();
    g.checkpoint_seq = beat.checkpoint_seq;
    g.checkpoint_hash = beat.checkpoint_hash.clone();
    seen(state, caller, timing);
    Ok(renewal(state, timing))
}

/// What a claim did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClaimOutcome {
    /// The caller leads the next epoch.
    Won,
    /// The room recovers by `abort`: it failed (answered with a refusal, but written).
    Aborted,
}

/// A member takes over a room whose leader's lease ran out, from a checkpoint the old
/// leader certified (or the floor itself), never older than the floor.
pub fn claim(
    state: &mut GroupState,
    caller: &str,
    claim: &ClaimLeader,
    timing: &Timing,
) -> ApiResult<(ClaimOutcome, InvitationEffect)> {
    check_hash("checkpoint_hash", &claim.checkpoint_hash)?;
    check_hash("checkpoint_frame_hash", &claim.checkpoint_frame_hash)?;
    check_ticket(&claim.iroh_ticket)?;
    require_open(state)?;
    let g = &state.group;
    if caller == g.leader_key {
        return Err(ApiError::bad_request(
            "already_leader",
            "the caller leads this room already",
        ));
    }
    let active = state
        .members
        .iter()
        .any(|m| m.public_key == caller && m.status == MemberStatus::Active);
    if !active {
        return Err(ApiError::forbidden(
            "not_member",
            "only an active member of the room can claim its leadership",
        ));
    }
    require_epoch(state, claim.expected_epoch, "expected_epoch")?;
    if g.lease_expires_at > timing.now {
        return Err(ApiError::conflict(
            "lease_active",
            format!(
                "the leader's lease runs until {}",
                crate::server::clock::iso8601(g.lease_expires_at)
            ),
        ));
    }
    if g.recovery_mode == RecoveryMode::Abort {
        state.group.status = GroupStatus::Failed;
        return Ok((ClaimOutcome::Aborted, InvitationEffect::Close));
    }
    let floor = (g.checkpoint_seq, g.checkpoint_hash.as_str());
    let is_floor = (claim.checkpoint_seq, claim.checkpoint_hash.as_str()) == floor;
    if !is_floor {
        let statement = checkpoint_canonical(
            &g.group_id,
            &g.leader_key,
            claim.expected_epoch,
            claim.checkpoint_seq,
            &claim.checkpoint_frame_hash,
            claim.checkpoint_membership_version,
            &claim.checkpoint_hash,
        );
        identity::verify_hex(&g.leader_key, statement.as_bytes(), &claim.checkpoint_signature)
            .map_err(|e| {
                ApiError::bad_request(
                    "invalid_checkpoint_signature",
                    format!(
                        "checkpoint_signature is not the leader's over this checkpoint of epoch {} ({e}), \
                         and the checkpoint is not the room's floor",
                        claim.expected_epoch
                    ),
                )
            })?;
    }
    check_floor(state, claim.checkpoint_seq, &claim.checkpoint_hash)?;
    check_binding(
        state,
        caller,
        &claim.iroh_ticket,
        &claim.transport_binding_signature,
    )?;
    let g = &mut state.group;
    g.leader_epoch += 1;
    g.leader_key = caller.to_string();
    g.lease_expires_at = timing.now.saturating_add(timing.lease_ms);
    g.iroh_ticket = claim.iroh_ticket.clone();
    g.transport_binding_signature = claim.transport_binding_signature.clone();
    g.checkpoint_seq = claim.checkpoint_seq;
    g.checkpoint_hash = claim.checkpoint_hash.clone();
    seen(state, caller, timing);
    Ok((ClaimOutcome::Won, renewal(state, timing)))
}

/// The leader starts its room (`lobby` → `active`) or ends it (`closed`, `failed`: its
/// invitation is closed too).
pub fn set_status(
    state: &mut GroupState,
    caller: &str,
    update: &GroupStatusUpdate,
) -> ApiResult<InvitationEffect> {
    require_epoch(state, update.leader_epoch, "leader_epoch")?;
    require_leader(state, caller)?;
    let from = state.group.status;
    let to = update.status;
    let allowed = matches!(
        (from, to),
        (GroupStatus::Lobby, GroupStatus::Active)
            | (
                GroupStatus::Lobby | GroupStatus::Active,
                GroupStatus::Closed | GroupStatus::Failed
            )
    );
    if !allowed {
        return Err(ApiError::conflict(
            "invalid_transition",
            format!("a room cannot go from {from} to {to}"),
        ));
    }
    state.group.status = to;
    Ok(if to.is_open() {
        InvitationEffect::Keep
    } else {
        InvitationEffect::Close
    })
}

fn require_leader(state: &GroupState, caller: &str) -> ApiResult<()> {
    if caller == state.group.leader_key {
        Ok(())
    } else {
        Err(ApiError::forbidden(
            "not_leader",
            "only the room's current leader can do this",
        ))
    }
}

fn check_hash(field: &str, value: &str) -> ApiResult<()> {
    if is_lower_hex_64(value) {
        Ok(())
    } else {
        Err(ApiError::bad_request(
            "invalid_checkpoint",
            format!("{field} must be 64 lowercase hex characters"),
        ))
    }
}

/// The caller's signature binding its ticket to the room's protocol.
fn check_binding(state: &GroupState, caller: &str, ticket: &str, signature: &str) -> ApiResult<()> {
    let binding = identity::transport_binding_canonical(
        caller,
        TRANSPORT_IROH,
        ticket,
        &state.group.protocol_id,
    );
    identity::verify_hex(caller, binding.as_bytes(), signature).map_err(|e| {
        ApiError::bad_request(
            "invalid_binding_signature",
            format!(
                "transport_binding_signature ({e}): it must sign this key, iroh, the ticket and the room's protocol_id"
            ),
        )
    })
}

/// A checkpoint never goes below the floor: not an older sequence number, and not another
/// checkpoint at the floor's (unless the floor is still the empty one of a new room).
fn check_floor(state: &GroupState, seq: u64, hash: &str) -> ApiResult<()> {
    let g = &state.group;
    if seq < g.checkpoint_seq {
        return Err(ApiError::conflict(
            "checkpoint_behind",
            format!(
                "checkpoint_seq {seq} is below the room's checkpoint {}",
                g.checkpoint_seq
            ),
        ));
    }
    if seq == g.checkpoint_seq
        && hash != g.checkpoint_hash
        && g.checkpoint_hash != EMPTY_CHECKPOINT_HASH
    {
        return Err(ApiError::conflict(
            "checkpoint_conflict",
            format!("checkpoint {seq} differs from the one the room holds at that sequence number"),
        ));
    }
    Ok(())
}

/// The caller (a member) was seen now.
fn seen(state: &mut GroupState, caller: &str, timing: &Timing) {
    if let Some(member) = state.members.iter_mut().find(|m| m.public_key == caller) {
        member.last_seen_at = timing.now;
    }
}
