//! The HTTP surface: which path goes to which handler, which ones need a signature, the
//! per-address rate limit in front of all of them, and JSON answers for unknown paths and
//! methods (never a redirect).

mod agents;
mod groups;
mod invitations;
mod listing;
mod meta;
mod protocols;
mod registration;
mod sessions;

use std::sync::Arc;
use std::time::Instant;

use axum::Router;
use axum::extract::Request;
use axum::middleware::{Next, from_fn, from_fn_with_state};
use axum::response::Response;
use axum::routing::{get, post};

use super::AppState;
use super::signature::{limit_address, require_signature};

/// The whole API.
pub fn router(state: Arc<AppState>) -> Router {
    let signed = Router::new()
        .route("/api/v1/auth/challenge", get(registration::challenge))
        .route("/api/v1/auth/register", post(registration::register))
        .route("/api/v1/agents", get(agents::by_public_key))
        .route(
            "/api/v1/protocols",
            get(protocols::list).post(protocols::register),
        )
        .route("/api/v1/protocols/{protocol_id}", get(protocols::get_one))
        .route(
            "/api/v1/protocols/{protocol_id}/bundle",
            get(protocols::bundle),
        )
        .route(
            "/api/v1/invitations",
            get(invitations::browse).post(invitations::create),
        )
        .route(
            "/api/v1/invitations/{post_id}",
            get(invitations::get_one).delete(invitations::cancel),
        )
        .route(
            "/api/v1/invitations/{post_id}/renew",
            post(invitations::renew),
        )
        .route("/api/v1/sessions", post(sessions::create))
        .route("/api/v1/sessions/{session_id}", get(sessions::get_one))
        .route(
            "/api/v1/sessions/{session_id}/status",
            post(sessions::set_status),
        )
        .route(
            "/api/v1/sessions/{session_id}/result",
            post(sessions::report_result),
        )
        .route("/api/v1/groups", post(groups::create))
        .route("/api/v1/groups/by-post/{post_id}", get(groups::by_post))
        .route("/api/v1/groups/{group_id}", get(groups::get_one))
        .route("/api/v1/groups/{group_id}/members", post(groups::admit))
        .route(
            "/api/v1/groups/{group_id}/members/heartbeat",
            post(groups::member_heartbeat),
        )
        .route("/api/v1/groups/{group_id}/leave", post(groups::leave))
        .route(
            "/api/v1/groups/{group_id}/heartbeat",
            post(groups::leader_heartbeat),
        )
        .route(
            "/api/v1/groups/{group_id}/claim-leader",
            post(groups::claim_leader),
        )
        .route("/api/v1/groups/{group_id}/status", post(groups::set_status))
        .route_layer(from_fn_with_state(state.clone(), require_signature));
    Router::new()
        .route("/api/v1/version", get(meta::version))
        .route("/healthz", get(meta::healthz))
        .merge(signed)
        .fallback(meta::not_found)
        .method_not_allowed_fallback(meta::method_not_allowed)
        .layer(from_fn_with_state(state.clone(), limit_address))
        .layer(from_fn(log_request))
        .with_state(state)
}

/// One debug line per request (warn for server errors).
async fn log_request(request: Request, next: Next) -> Response {
    let method = request.method().clone();
    let path = request.uri().path().to_string();
    let started = Instant::now();
    let response = next.run(request).await;
    let status = response.status().as_u16();
    let micros = started.elapsed().as_micros();
    if response.status().is_server_error() {
        tracing::warn!(%method, %path, status, micros, "request failed");
    } else {
        tracing::debug!(%method, %path, status, micros, "request");
    }
    response
}
