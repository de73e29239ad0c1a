//! Invitations: create (signed transport binding, known protocol, at most 3 offered per
//! key), browse, read one, renew, cancel. Expiry is checked on every read.

use std::sync::Arc;

use axum::Extension;
use axum::Json;
use axum::body::Bytes;
use axum::extract::rejection::QueryRejection;
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::http::header::CONTENT_TYPE;
use axum::response::{IntoResponse, Response};
use rand::RngCore;

use super::listing::{self, Params};
use crate::api::invitation::{
    Invitation, InvitationLease, InvitationList, InvitationType, NewInvitation, TransportInfo,
    check_tags,
};
use crate::identity::{self, TRANSPORT_IROH, is_lower_hex_64};
use crate::server::clock::{iso8601, now_ms};
use crate::server::error::{ApiError, ApiResult, parse_body};
use crate::server::page_cache::AdmittedVersion;
use crate::server::replay::WriteReceipt;
use crate::server::signature::Caller;
use crate::server::store::{InvitationRow, InvitationState, NewInvitationRow, OfferedFilter};
use crate::server::{AppState, MAX_ACTIVE_INVITATIONS};

/// Longest invitation message.
const MAX_MESSAGE_CHARS: usize = 512;
/// Longest iroh ticket (observed tickets are ~130 characters; relays and addresses add more).
const MAX_TICKET_CHARS: usize = 4096;

pub async fn create(
    State(state): State<Arc<AppState>>,
    Caller(caller): Caller,
    receipt: WriteReceipt,
    body: Bytes,
) -> ApiResult<(StatusCode, Json<InvitationLease>)> {
    let new: NewInvitation = parse_body(&body)?;
    let row = validate_new(new, &caller)?;
    if !state.store.protocol_exists(&row.protocol_id).await? {
        return Err(ApiError::bad_request(
            "protocol_not_found",
            "protocol_id not found",
        ));
    }
    let now = now_ms();
    let expires_at = now + state.limits.invitation_ttl_ms;
    if !state
        .store
        .insert_invitation(&row, MAX_ACTIVE_INVITATIONS, &receipt, now, expires_at)
        .await?
    {
        return Err(ApiError::new(
            StatusCode::TOO_MANY_REQUESTS,
            "too_many_invitations",
            format!("at most {MAX_ACTIVE_INVITATIONS} active invitations per key"),
        ));
    }
    Ok((StatusCode::CREATED, Json(lease(row.post_id, expires_at))))
}

/// Checks a posted invitation and turns it into a row owned by `caller`.
fn validate_new(new: NewInvitation, caller: &str) -> ApiResult<NewInvitationRow> {
    if !is_lower_hex_64(&new.protocol_id) {
        return Err(ApiError::bad_request(
            "invalid_protocol_id",
            "protocol_id must be 64 lowercase hex characters",
        ));
    }
    if new.transport != TRANSPORT_IROH {
        return Err(ApiError::bad_request(
            "unsupported_transport",
            "transport must be \"iroh\"",
        ));
    }
    let ticket = new.iroh_ticket;
    if ticket.is_empty()
        || ticket.len() > MAX_TICKET_CHARS
        || !ticket.bytes().all(|b| b.is_ascii_graphic())
    {
        return Err(ApiError::bad_request(
            "invalid_ticket",
            format!("iroh_ticket must be 1-{MAX_TICKET_CHARS} visible ASCII characters"),
        ));
    }
    let transport_info = match new.transport_info {
        None => TransportInfo {
            version: 1,
            endpoint_id: caller.to_string(),
            ticket: ticket.clone(),
        },
        Some(info) if info.ticket != ticket => {
            return Err(ApiError::bad_request(
                "ticket_mismatch",
                "transport_info.ticket must equal iroh_ticket",
            ));
        }
        Some(info) if info.endpoint_id.to_ascii_lowercase() != caller => {
            return Err(ApiError::bad_request(
                "endpoint_mismatch",
                "transport_info.endpoint_id must be the creator's public key",
            ));
        }
        Some(info) => info,
    };
    let binding =
        identity::transport_binding_canonical(caller, TRANSPORT_IROH, &ticket, &new.protocol_id);
    identity::verify_hex(caller, binding.as_bytes(), &new.transport_binding_signature).map_err(|e| {
        ApiError::bad_request(
            "invalid_binding_signature",
            format!("transport_binding_signature ({e}): it must sign this key, iroh, the ticket and protocol_id"),
        )
    })?;
    check_tags(&new.tags).map_err(|m| ApiError::bad_request("invalid_tags", m))?;
    if new.message.chars().count() > MAX_MESSAGE_CHARS {
        return Err(ApiError::bad_request(
            "invalid_message",
            format!("message must be at most {MAX_MESSAGE_CHARS} characters"),
        ));
    }
    Ok(NewInvitationRow {
        post_id: new_post_id(),
        public_key: caller.to_string(),
        protocol_id: new.protocol_id,
        invitation_type: new.invitation_type,
        message: new.message,
        tags: dedup(new.tags),
        iroh_ticket: ticket,
        transport_info,
        transport_binding_signature: new.transport_binding_signature,
        host_control_mode: new.host_control_mode,
        options: new.options,
    })
}

/// The offered list, served from [`crate::server::page_cache`] while still current.
pub async fn browse(
    State(state): State<Arc<AppState>>,
    admitted: Option<Extension<AdmittedVersion>>,
    query: Result<Query<Params>, QueryRejection>,
) -> ApiResult<Response> {
    let params = listing::params(query)?;
    let filter = browse_filter(&params)?;
    let filter_key = format!(
        "invitations|{}|{}|{}",
        filter.protocol_id.as_deref().unwrap_or_default(),
        filter
            .invitation_type
            .map(InvitationType::as_str)
            .unwrap_or_default(),
        filter.tags.join(",")
    );
    let page = listing::page(&params, &filter_key)?;
    let cache_key = format!(
        "{filter_key}|{}|{}",
        page.limit,
        params.get("cursor").map(String::as_str).unwrap_or_default()
    );
    let body = state
        .offered_pages
        .get_or_fill(
            cache_key,
            admitted.map(|Extension(version)| version),
            || async { Ok(state.store.offered_version().await?) },
            async |now| {
                let offered = state
                    .store
                    .offered_invitations(&filter, page.after.as_ref(), page.limit + 1, now)
                    .await?;
                let (results, next_cursor) =
                    listing::split_page(offered.items, page.limit, &filter_key);
                let list = InvitationList {
                    results,
                    total: offered.total.max(0) as u64,
                    next_cursor,
                };
                let body = serde_json::to_vec(&list).expect("lists always serialize");
                Ok::<_, ApiError>((Bytes::from(body), offered.changes_at))
            },
        )
        .await?;
    Ok(json_body(body))
}

fn json_body(body: Bytes) -> Response {
    ([(CONTENT_TYPE, "application/json")], body).into_response()
}

fn browse_filter(params: &Params) -> ApiResult<OfferedFilter> {
    let protocol_id = params.get("protocol_id").cloned();
    if protocol_id
        .as_deref()
        .is_some_and(|id| !is_lower_hex_64(id))
    {
        return Err(ApiError::bad_request(
            "invalid_filter",
            "protocol_id must be 64 lowercase hex characters",
        ));
    }
    let invitation_type = match params.get("type") {
        None => None,
        Some(text) => Some(InvitationType::parse(text).ok_or_else(|| {
            ApiError::bad_request("invalid_filter", "type must be supply, demand or chat")
        })?),
    };
    let tags = match params.get("tags") {
        None => Vec::new(),
        Some(text) => {
            let tags = dedup(
                text.split(',')
                    .map(str::trim)
                    .filter(|t| !t.is_empty())
                    .map(String::from)
                    .collect(),
            );
            if tags.is_empty() {
                return Err(ApiError::bad_request(
                    "invalid_filter",
                    "tags cannot be empty",
                ));
            }
            check_tags(&tags).map_err(|m| ApiError::bad_request("invalid_filter", m))?;
            tags
        }
    };
    Ok(OfferedFilter {
        protocol_id,
        invitation_type,
        tags,
    })
}

/// The full invitation while it is offered; its creator can also see it afterwards.
pub async fn get_one(
    State(state): State<Arc<AppState>>,
    Caller(caller): Caller,
    Path(post_id): Path<String>,
) -> ApiResult<Json<Invitation>> {
    let row = find(&state, &post_id).await?;
    let now = now_ms();
    match row.state(now) {
        InvitationState::Active => Ok(Json(row.detail)),
        InvitationState::Expired if row.detail.public_key == caller => Ok(Json(Invitation {
            status: "expired".into(),
            ..row.detail
        })),
        _ if row.detail.public_key == caller => Ok(Json(row.detail)),
        other => Err(not_offered(other, &row)),
    }
}

/// Extends an offered invitation by the TTL (creator only). The update is tried first; the
/// invitation is only read to explain a refusal.
pub async fn renew(
    State(state): State<Arc<AppState>>,
    Caller(caller): Caller,
    receipt: WriteReceipt,
    Path(post_id): Path<String>,
) -> ApiResult<Json<InvitationLease>> {
    let now = now_ms();
    let expires_at = now + state.limits.invitation_ttl_ms;
    if state
        .store
        .renew_invitation(&post_id, &caller, &receipt, now, expires_at)
        .await?
    {
        return Ok(Json(lease(post_id, expires_at)));
    }
    Err(refusal(&state, &post_id, &caller, "renew", now).await?)
}

/// Withdraws an active invitation (expired ones too); 204 with an empty body.
pub async fn cancel(
    State(state): State<Arc<AppState>>,
    Caller(caller): Caller,
    receipt: WriteReceipt,
    Path(post_id): Path<String>,
) -> ApiResult<StatusCode> {
    if state
        .store
        .cancel_invitation(&post_id, &caller, &receipt)
        .await?
    {
        return Ok(StatusCode::NO_CONTENT);
    }
    let now = now_ms();
    Err(refusal(&state, &post_id, &caller, "cancel", now).await?)
}

/// Why an owner-only change did not apply: missing, not the owner, or no longer offered.
async fn refusal(
    state: &AppState,
    post_id: &str,
    caller: &str,
    action: &str,
    now: i64,
) -> ApiResult<ApiError> {
    let row = find(state, post_id).await?;
    if row.detail.public_key != caller {
        return Ok(ApiError::forbidden(
            "not_owner",
            format!("only the creator of an invitation can {action} it"),
        ));
    }
    Ok(not_offered(row.state(now), &row))
}

async fn find(state: &AppState, post_id: &str) -> ApiResult<InvitationRow> {
    state
        .store
        .invitation(post_id)
        .await?
        .ok_or_else(|| ApiError::not_found("invitation not found"))
}

/// The refusal for an invitation that is not offered any more.
pub(super) fn not_offered(state: InvitationState, row: &InvitationRow) -> ApiError {
    match state {
        InvitationState::Expired => ApiError::gone(
            "invitation_expired",
            format!("the invitation expired at {}", iso8601(row.expires_at)),
        ),
        InvitationState::Cancelled => {
            ApiError::gone("invitation_cancelled", "the invitation was cancelled")
        }
        InvitationState::Matched => {
            ApiError::conflict("invitation_matched", "the invitation is already matched")
        }
        // The state changed between the refused update and this read.
        InvitationState::Active => ApiError::conflict(
            "invitation_changed",
            "the invitation changed meanwhile; retry",
        ),
    }
}

fn lease(post_id: String, expires_at: i64) -> InvitationLease {
    InvitationLease {
        post_id,
        status: "active".into(),
        expires_at: iso8601(expires_at),
    }
}

/// 8 random bytes as 16 lowercase hex characters (URL-safe).
fn new_post_id() -> String {
    let mut bytes = [0u8; 8];
    rand::rngs::OsRng.fill_bytes(&mut bytes);
    hex::encode(bytes)
}

fn dedup(tags: Vec<String>) -> Vec<String> {
    let mut kept: Vec<String> = Vec::with_capacity(tags.len());
    for tag in tags {
        if !kept.contains(&tag) {
            kept.push(tag);
        }
    }
    kept
}
