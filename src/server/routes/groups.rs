//! Rooms (`/api/v1/groups`): the owner of a room invitation opens its room, members are
//! admitted and heartbeat, the leader heartbeats and changes the status, a member claims a
//! room whose leader went silent. Each change runs [`crate::server::groups`]' rules inside
//! one transaction on the room's locked row.

use std::sync::Arc;

use axum::Json;
use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::StatusCode;

use super::invitations::not_offered;
use crate::api::group::{
    ClaimLeader, Group, GroupStatus, GroupStatusUpdate, LeaderHeartbeat, MemberAdmitted, NewGroup,
    NewMember,
};
use crate::api::is_url_safe_id;
use crate::server::AppState;
use crate::server::clock::now_ms;
use crate::server::error::{ApiError, ApiResult, parse_body};
use crate::server::groups::{self, ClaimOutcome, Timing};
use crate::server::replay::WriteReceipt;
use crate::server::signature::Caller;
use crate::server::store::{
    GroupRow, GroupState, GroupUpdate, InvitationEffect, InvitationState, MemberRow,
};
use crate::spec::Spec;
use crate::spec::flow::group::GroupRules;
use crate::spec::model::Flow;

pub async fn create(
    State(state): State<Arc<AppState>>,
    Caller(caller): Caller,
    receipt: WriteReceipt,
    body: Bytes,
) -> ApiResult<(StatusCode, Json<Group>)> {
    let new: NewGroup = parse_body(&body)?;
    if !is_url_safe_id(&new.post_id) {
        return Err(ApiError::not_found("invitation not found"));
    }
    let invitation = state
        .store
        .invitation(&new.post_id)
        .await?
        .ok_or_else(|| ApiError::not_found("invitation not found"))?;
    if invitation.detail.public_key != caller {
        return Err(ApiError::forbidden(
            "not_owner",
            "only the invitation's creator can open its room",
        ));
    }
    let timing = timing(&state);
    match invitation.state(timing.now) {
        InvitationState::Active => {}
        other => return Err(not_offered(other, &invitation)),
    }
    let protocol_id = invitation.detail.protocol_id.clone();
    let rules = room_rules(&state, &protocol_id).await?;
    check_policy(&new, &rules)?;
    let now = timing.now;
    let room = GroupState {
        group: GroupRow {
            group_id: groups::new_id(),
            post_id: new.post_id,
            protocol_id,
            owner_key: caller.clone(),
            min_participants: u32::from(rules.min_participants),
            max_participants: u32::from(rules.max_participants),
            allow_late_join: rules.allow_late_join,
            recovery_mode: rules.recovery_mode,
            start_policy: rules.start_policy,
            status: GroupStatus::Lobby,
            leader_key: caller.clone(),
            leader_epoch: 0,
            lease_expires_at: now.saturating_add(timing.lease_ms),
            iroh_ticket: invitation.detail.iroh_ticket.clone().unwrap_or_default(),
            transport_binding_signature: invitation
                .detail
                .transport_binding_signature
                .clone()
                .unwrap_or_default(),
            membership_version: 1,
            checkpoint_seq: 0,
            checkpoint_hash: crate::api::group::EMPTY_CHECKPOINT_HASH.to_string(),
            created_at: now,
            updated_at: now,
        },
        members: vec![MemberRow {
            public_key: caller,
            member_id: groups::new_id(),
            seat: 0,
            status: crate::api::group::MemberStatus::Active,
            join_nonce: String::new(),
            joined_at: now,
            last_seen_at: now,
        }],
    };
    if !state.store.create_group(&room, &receipt).await? {
        return Err(ApiError::conflict(
            "group_exists",
            "this invitation has a room already",
        ));
    }
    Ok((StatusCode::CREATED, Json(groups::view(&room, &timing))))
}

/// The room rules of a registered protocol; refused unless it is an `authoritative_group`.
async fn room_rules(state: &AppState, protocol_id: &str) -> ApiResult<GroupRules> {
    let record = state
        .store
        .protocol(protocol_id)
        .await?
        .ok_or_else(|| ApiError::bad_request("protocol_not_found", "protocol_id not found"))?;
    let flow = Spec::from_value(record.spec_json)
        .ok()
        .and_then(|spec| spec.model().ok().map(|model| model.flow.clone()));
    match flow {
        Some(Flow::Group(rules)) => Ok(rules),
        _ => Err(ApiError::bad_request(
            "not_a_group_protocol",
            "the invitation's protocol is not a room (flow.mode authoritative_group)",
        )),
    }
}

/// The body's policy must be the contract's, field by field.
fn check_policy(new: &NewGroup, rules: &GroupRules) -> ApiResult<()> {
    let differs = [
        (
            "min_participants",
            new.min_participants != u32::from(rules.min_participants),
            rules.min_participants.to_string(),
        ),
        (
            "max_participants",
            new.max_participants != u32::from(rules.max_participants),
            rules.max_participants.to_string(),
        ),
        (
            "allow_late_join",
            new.allow_late_join != rules.allow_late_join,
            rules.allow_late_join.to_string(),
        ),
        (
            "recovery_mode",
            new.recovery_mode != rules.recovery_mode,
            rules.recovery_mode.to_string(),
        ),
    ];
    match differs.into_iter().find(|(_, differs, _)| *differs) {
        None => Ok(()),
        Some((field, _, declared)) => Err(ApiError::bad_request(
            "group_policy_mismatch",
            format!("{field} must be the contract's: {declared}"),
        )),
    }
}

pub async fn get_one(
    State(state): State<Arc<AppState>>,
    Path(group_id): Path<String>,
) -> ApiResult<Json<Group>> {
    let room = match is_url_safe_id(&group_id) {
        true => state.store.group(&group_id).await?,
        false => None,
    };
    shown(&state, room)
}

pub async fn by_post(
    State(state): State<Arc<AppState>>,
    Path(post_id): Path<String>,
) -> ApiResult<Json<Group>> {
    let room = match is_url_safe_id(&post_id) {
        true => state.store.group_by_post(&post_id).await?,
        false => None,
    };
    shown(&state, room)
}

fn shown(state: &AppState, room: Option<GroupState>) -> ApiResult<Json<Group>> {
    let room = room.ok_or_else(|| ApiError::not_found("group not found"))?;
    Ok(Json(groups::view(&room, &timing(state))))
}

pub async fn admit(
    State(state): State<Arc<AppState>>,
    Caller(caller): Caller,
    receipt: WriteReceipt,
    Path(group_id): Path<String>,
    body: Bytes,
) -> ApiResult<(StatusCode, Json<MemberAdmitted>)> {
    let new: NewMember = parse_body(&body)?;
    let admission = change(&state, &group_id, &receipt, |room, timing| {
        let admission = groups::admit(room, &caller, &new, timing)?;
        Ok((admission, InvitationEffect::Keep))
    })
    .await?;
    let status = match admission.new_member {
        true => StatusCode::CREATED,
        false => StatusCode::OK,
    };
    Ok((status, Json(admission.member)))
}

pub async fn member_heartbeat(
    State(state): State<Arc<AppState>>,
    Caller(caller): Caller,
    receipt: WriteReceipt,
    Path(group_id): Path<String>,
) -> ApiResult<Json<Group>> {
    answer(&state, &group_id, &receipt, |room, timing| {
        groups::member_heartbeat(room, &caller, timing)?;
        Ok(InvitationEffect::Keep)
    })
    .await
}

pub async fn leave(
    State(state): State<Arc<AppState>>,
    Caller(caller): Caller,
    receipt: WriteReceipt,
    Path(group_id): Path<String>,
) -> ApiResult<Json<Group>> {
    answer(&state, &group_id, &receipt, |room, _| {
        groups::leave(room, &caller)?;
        Ok(InvitationEffect::Keep)
    })
    .await
}

pub async fn leader_heartbeat(
    State(state): State<Arc<AppState>>,
    Caller(caller): Caller,
    receipt: WriteReceipt,
    Path(group_id): Path<String>,
    body: Bytes,
) -> ApiResult<Json<Group>> {
    let beat: LeaderHeartbeat = parse_body(&body)?;
    answer(&state, &group_id, &receipt, |room, timing| {
        groups::leader_heartbeat(room, &caller, &beat, timing)
    })
    .await
}

pub async fn claim_leader(
    State(state): State<Arc<AppState>>,
    Caller(caller): Caller,
    receipt: WriteReceipt,
    Path(group_id): Path<String>,
    body: Bytes,
) -> ApiResult<Json<Group>> {
    let claim: ClaimLeader = parse_body(&body)?;
    let (outcome, group) = change(&state, &group_id, &receipt, |room, timing| {
        let (outcome, effect) = groups::claim(room, &caller, &claim, timing)?;
        Ok(((outcome, groups::view(room, timing)), effect))
    })
    .await?;
    match outcome {
        ClaimOutcome::Won => Ok(Json(group)),
        ClaimOutcome::Aborted => Err(ApiError::conflict(
            "recovery_abort",
            "the room recovers by abort: its leader is gone, so the room failed",
        )),
    }
}

pub async fn set_status(
    State(state): State<Arc<AppState>>,
    Caller(caller): Caller,
    receipt: WriteReceipt,
    Path(group_id): Path<String>,
    body: Bytes,
) -> ApiResult<Json<Group>> {
    let update: GroupStatusUpdate = parse_body(&body)?;
    answer(&state, &group_id, &receipt, |room, _| {
        groups::set_status(room, &caller, &update)
    })
    .await
}

/// A change answered with the room as it is afterwards.
async fn answer(
    state: &AppState,
    group_id: &str,
    receipt: &WriteReceipt,
    rule: impl FnOnce(&mut GroupState, &Timing) -> ApiResult<InvitationEffect>,
) -> ApiResult<Json<Group>> {
    let group = change(state, group_id, receipt, |room, timing| {
        let effect = rule(room, timing)?;
        Ok((groups::view(room, timing), effect))
    })
    .await?;
    Ok(Json(group))
}

/// Runs `rule` on the room's locked state, after marking its silent members left.
async fn change<T>(
    state: &AppState,
    group_id: &str,
    receipt: &WriteReceipt,
    rule: impl FnOnce(&mut GroupState, &Timing) -> ApiResult<(T, InvitationEffect)>,
) -> ApiResult<T> {
    if !is_url_safe_id(group_id) {
        return Err(ApiError::not_found("group not found"));
    }
    let timing = timing(state);
    let updated = state
        .store
        .update_group(group_id, receipt, timing.now, |room| {
            groups::expire_members(room, &timing);
            rule(room, &timing)
        })
        .await?;
    match updated {
        GroupUpdate::Done(answer) => Ok(answer),
        GroupUpdate::Refused(refusal) => Err(refusal),
        GroupUpdate::Missing => Err(ApiError::not_found("group not found")),
        GroupUpdate::Lost => Err(ApiError::conflict(
            "claim_lost",
            "the room changed meanwhile (another member claimed it first); read it again",
        )),
    }
}

fn timing(state: &AppState) -> Timing {
    Timing {
        now: now_ms(),
        lease_ms: state.limits.group_lease_ms,
        member_timeout_ms: state.limits.group_member_timeout_ms,
        invitation_ttl_ms: state.limits.invitation_ttl_ms,
    }
}
