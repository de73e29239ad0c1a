//! Sessions: the guest registers a match with both parties' signatures over the session
//! canonical; participants end it once and report who won.

use std::sync::Arc;

use axum::Json;
use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::StatusCode;

use super::invitations::not_offered;
use crate::api::is_url_safe_id;
use crate::api::session::{
    NewSession, ResultReport, Session, SessionCreated, SessionStatus, StatusUpdate,
};
use crate::identity::{self, is_lower_hex_64};
use crate::server::AppState;
use crate::server::clock::now_ms;
use crate::server::error::{ApiError, ApiResult, parse_body};
use crate::server::replay::WriteReceipt;
use crate::server::signature::Caller;
use crate::server::store::{CreateSession, EndSession, InvitationState};
use crate::spec::Role;

pub async fn create(
    State(state): State<Arc<AppState>>,
    Caller(caller): Caller,
    receipt: WriteReceipt,
    body: Bytes,
) -> ApiResult<(StatusCode, Json<SessionCreated>)> {
    let new: NewSession = parse_body(&body)?;
    check_shape(&new)?;
    if new.guest_public_key != caller {
        return Err(ApiError::forbidden(
            "not_guest",
            "the guest (guest_public_key) must sign this request",
        ));
    }
    if new.guest_public_key == new.host_public_key {
        return Err(ApiError::bad_request(
            "self_session",
            "host and guest must be different agents",
        ));
    }
    let invitation = state
        .store
        .invitation(&new.post_id)
        .await?
        .ok_or_else(|| ApiError::not_found("invitation not found"))?;
    if invitation.detail.public_key != new.host_public_key {
        return Err(ApiError::bad_request(
            "host_mismatch",
            "host_public_key is not the invitation's creator",
        ));
    }
    if invitation.detail.protocol_id != new.protocol_id {
        return Err(ApiError::bad_request(
            "protocol_mismatch",
            "protocol_id differs from the invitation's",
        ));
    }
    let now = now_ms();
    match invitation.state(now) {
        InvitationState::Active => {}
        other => return Err(not_offered(other, &invitation)),
    }
    let canonical = new.canonical();
    for (role, key, signature) in [
        (Role::Host, &new.host_public_key, &new.host_signature),
        (Role::Guest, &new.guest_public_key, &new.guest_signature),
    ] {
        identity::verify_hex(key, canonical.as_bytes(), signature).map_err(|e| {
            ApiError::bad_request(
                "invalid_session_signature",
                format!("{role}_signature over the session canonical: {e}"),
            )
        })?;
        if state.store.agent(key).await?.is_none() {
            return Err(ApiError::not_registered(&format!("the {role}")));
        }
    }
    let session_id = identity::session_id(&canonical);
    match state
        .store
        .create_session(&session_id, &new, &receipt, now)
        .await?
    {
        CreateSession::Created => Ok((
            StatusCode::CREATED,
            Json(SessionCreated {
                session_id,
                status: Some(SessionStatus::Matched),
            }),
        )),
        CreateSession::InvitationTaken => Err(ApiError::conflict(
            "invitation_matched",
            "the invitation is no longer offered",
        )),
        CreateSession::Duplicate => Err(ApiError::conflict(
            "session_exists",
            "this session already exists",
        )),
    }
}

/// Ids and keys in their wire forms; the nonce cannot contain the canonical's separator.
fn check_shape(new: &NewSession) -> ApiResult<()> {
    let bad = |message: &str| {
        Err(ApiError::bad_request(
            "invalid_session",
            message.to_string(),
        ))
    };
    if !is_url_safe_id(&new.post_id) {
        return bad("post_id must be 1-128 characters of A-Za-z0-9_-");
    }
    if !is_lower_hex_64(&new.host_public_key) || !is_lower_hex_64(&new.guest_public_key) {
        return bad("host_public_key and guest_public_key must be 64 lowercase hex characters");
    }
    if !is_lower_hex_64(&new.protocol_id) {
        return bad("protocol_id must be 64 lowercase hex characters");
    }
    if !is_url_safe_id(&new.session_nonce) || new.session_nonce.len() > 64 {
        return bad("session_nonce must be 1-64 characters of A-Za-z0-9_-");
    }
    Ok(())
}

pub async fn get_one(
    State(state): State<Arc<AppState>>,
    Path(session_id): Path<String>,
) -> ApiResult<Json<Session>> {
    Ok(Json(find(&state, &session_id).await?))
}

/// A participant ends a matched session (closed, failed or cancelled), with its winner if
/// it names one, in one transaction; the second one gets 409, and so does an end whose
/// winner contradicts the party's earlier report (then nothing changes).
pub async fn set_status(
    State(state): State<Arc<AppState>>,
    Caller(caller): Caller,
    receipt: WriteReceipt,
    Path(session_id): Path<String>,
    body: Bytes,
) -> ApiResult<Json<Session>> {
    let update: StatusUpdate = parse_body(&body)?;
    if update.status == SessionStatus::Matched {
        return Err(ApiError::bad_request(
            "invalid_status",
            "status must be closed, failed or cancelled",
        ));
    }
    let session = find(&state, &session_id).await?;
    let role = participant(&session, &caller)?;
    let report = update.winner.map(|winner| (role, winner));
    match state
        .store
        .end_session(&session_id, update.status, report, Some(&receipt), now_ms())
        .await?
    {
        EndSession::Ended => Ok(Json(find(&state, &session_id).await?)),
        EndSession::AlreadyEnded => {
            let current = find(&state, &session_id).await?.status;
            Err(ApiError::conflict(
                "session_ended",
                format!("the session has already ended ({})", current.as_str()),
            ))
        }
        EndSession::ReportConflicts => Err(already_reported(role)),
    }
}

/// A participant reports who won; a different second report from the same party gets 409.
pub async fn report_result(
    State(state): State<Arc<AppState>>,
    Caller(caller): Caller,
    receipt: WriteReceipt,
    Path(session_id): Path<String>,
    body: Bytes,
) -> ApiResult<Json<Session>> {
    let report: ResultReport = parse_body(&body)?;
    let session = find(&state, &session_id).await?;
    let role = participant(&session, &caller)?;
    if !state
        .store
        .report_result(&session_id, role, report.winner, Some(&receipt), now_ms())
        .await?
    {
        return Err(already_reported(role));
    }
    Ok(Json(find(&state, &session_id).await?))
}

fn already_reported(role: Role) -> ApiError {
    ApiError::conflict(
        "result_reported",
        format!("the {role} already reported a different winner"),
    )
}

async fn find(state: &AppState, session_id: &str) -> ApiResult<Session> {
    state
        .store
        .session(session_id)
        .await?
        .ok_or_else(|| ApiError::not_found("session not found"))
}

fn participant(session: &Session, caller: &str) -> ApiResult<Role> {
    if session.host_public_key == caller {
        Ok(Role::Host)
    } else if session.guest_public_key == caller {
        Ok(Role::Guest)
    } else {
        Err(ApiError::forbidden(
            "not_participant",
            "only the session's host or guest can do this",
        ))
    }
}
