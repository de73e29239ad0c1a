//! The controller's routes: the page and its two static files, the session list, one
//! session's view, its push stream, decisions, and a room's actions ([`super::room`]).
//! Everything under `/api` needs a token.

use std::sync::Arc;
use std::time::Duration;

use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::sse::{KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use serde::Deserialize;
use serde_json::Value;

use super::guard::{Refusal, check_token, header_token, refuse, same_origin};
use super::{Controller, session_token};
use crate::control::Target;
use crate::control::view::session_view;
use crate::decision::submit::{self, Answer, DecisionInput, Submitter};

const PAGE: &str = include_str!("page/index.html");
const SCRIPT: &str = include_str!("page/app.js");
const TABLE_SCRIPT: &str = include_str!("page/table.js");
const STYLE: &str = include_str!("page/app.css");
const POLICY: &str = "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; \
     img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

pub fn router(controller: Arc<Controller>) -> Router {
    Router::new()
        .route(
            "/",
            get(|| async { asset(PAGE, "text/html; charset=utf-8") }),
        )
        .route(
            "/app.js",
            get(|| async { asset(SCRIPT, "text/javascript; charset=utf-8") }),
        )
        .route(
            "/table.js",
            get(|| async { asset(TABLE_SCRIPT, "text/javascript; charset=utf-8") }),
        )
        .route(
            "/app.css",
            get(|| async { asset(STYLE, "text/css; charset=utf-8") }),
        )
        .route("/api/sessions", get(list))
        .route("/api/sessions/{id}", get(view))
        .route("/api/sessions/{id}/stream", get(stream))
        .route("/api/sessions/{id}/decide", post(decide))
        .route("/api/sessions/{id}/action", post(super::room::action))
        .layer(axum::middleware::from_fn_with_state(
            controller.clone(),
            same_origin,
        ))
        .with_state(controller)
}

fn asset(body: &'static str, kind: &'static str) -> Response {
    let mut response = body.into_response();
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static(kind));
    headers.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(POLICY),
    );
    headers.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    headers.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
    response
}

async fn list(State(controller): State<Arc<Controller>>, headers: HeaderMap) -> Response {
    if let Err(refusal) = check_token(header_token(&headers), &controller.token) {
        return refusal.into_response();
    }
    let scope = controller.scope.clone();
    let listing = tokio::task::spawn_blocking(move || scope.listing()).await;
    Json(listing.unwrap_or(Value::Array(Vec::new()))).into_response()
}

/// The session `id`, once the token presented is its own.
pub(super) fn authorized(
    controller: &Controller,
    id: &str,
    token: Option<&str>,
) -> Result<Target, Refusal> {
    let Some(target) = controller.scope.find(id) else {
        return Err(Refusal {
            status: StatusCode::NOT_FOUND,
            code: "no_such_session",
        });
    };
    let expected = session_token(&target.dir).map_err(|_| Refusal {
        status: StatusCode::INTERNAL_SERVER_ERROR,
        code: "token_unavailable",
    })?;
    check_token(token, &expected)?;
    Ok(target)
}

async fn view(
    State(controller): State<Arc<Controller>>,
    Path(id): Path<String>,
    headers: HeaderMap,
) -> Response {
    match authorized(&controller, &id, header_token(&headers)) {
        Ok(target) => Json(session_view(&target)).into_response(),
        Err(refusal) => refusal.into_response(),
    }
}

#[derive(Deserialize)]
struct StreamQuery {
    token: Option<String>,
}

/// The push stream (EventSource cannot send headers, so its token is in the query).
async fn stream(
    State(controller): State<Arc<Controller>>,
    Path(id): Path<String>,
    Query(query): Query<StreamQuery>,
    headers: HeaderMap,
) -> Response {
    let target = match authorized(&controller, &id, query.token.as_deref()) {
        Ok(target) => target,
        Err(refusal) => return refusal.into_response(),
    };
    let Some(open) = super::stream::Open::try_new() else {
        return refuse(StatusCode::TOO_MANY_REQUESTS, "too_many_streams");
    };
    let last_id = headers
        .get("last-event-id")
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.parse().ok());
    Sse::new(super::stream::follow(open, target, last_id))
        .keep_alive(KeepAlive::new().interval(Duration::from_secs(15)))
        .into_response()
}

/// A request's JSON body, read within `limit` bytes and the body deadline.
/// The session a page's request is for (its token checked first) and the request's JSON
/// body, read within `limit` bytes and the body timeout; or the refusal to answer.
pub(super) async fn authorized_json(
    controller: &Controller,
    id: &str,
    headers: &HeaderMap,
    body: axum::body::Body,
    limit: usize,
) -> Result<(Target, Value), Response> {
    let target =
        authorized(controller, id, header_token(headers)).map_err(IntoResponse::into_response)?;
    let body = json_body(body, limit).await?;
    Ok((target, body))
}

pub(super) async fn json_body(body: axum::body::Body, limit: usize) -> Result<Value, Response> {
    let read = axum::body::to_bytes(body, limit);
    let bytes = match tokio::time::timeout(super::LIMITS.body_timeout, read).await {
        Ok(Ok(bytes)) => bytes,
        Ok(Err(_)) => return Err(refuse(StatusCode::PAYLOAD_TOO_LARGE, "body_too_large")),
        Err(_) => return Err(refuse(StatusCode::REQUEST_TIMEOUT, "body_timeout")),
    };
    serde_json::from_slice::<Value>(&bytes)
        .map_err(|_| refuse(StatusCode::BAD_REQUEST, "invalid_json"))
}

/// Largest decision body the page sends (a move and the window it answers).
const MAX_DECIDE_BODY: usize = 64 * 1024;

/// A decision from the page: `{"move": value, "window": seq}` for the window the person saw,
/// or `{"decision": {...}}`; answered like `session decide` (200 played or queued, 422 refused, 409 too
/// late). The token is checked before a byte of the body is read, and the body is read
/// within a size and a time limit.
async fn decide(
    State(controller): State<Arc<Controller>>,
    Path(id): Path<String>,
    headers: HeaderMap,
    body: axum::body::Body,
) -> Response {
    let (target, body) =
        match authorized_json(&controller, &id, &headers, body, MAX_DECIDE_BODY).await {
            Ok(found) => found,
            Err(refusal) => return refusal,
        };
    let input = match (body.get("move"), body.get("decision")) {
        (Some(value), _) if !value.is_object() && !value.is_array() => {
            DecisionInput::Move(value.clone())
        }
        (_, Some(Value::Object(decision))) => DecisionInput::Object(decision.clone()),
        _ => return refuse(StatusCode::BAD_REQUEST, "move_or_decision_required"),
    };
    let Some(engine_dir) = target.engine_dir() else {
        return refuse(StatusCode::CONFLICT, "not_started");
    };
    let submitter = Submitter {
        origin: "web".into(),
        agent_id: body
            .get("agent_id")
            .and_then(Value::as_str)
            .map(str::to_string),
        idempotency_key: body
            .get("idempotency_key")
            .and_then(Value::as_str)
            .map(str::to_string),
        answering: body.get("window").and_then(Value::as_u64),
    };
    let mode = target.record.local_control_mode;
    let answer = tokio::task::spawn_blocking(move || {
        submit::submit(&engine_dir, mode, input, &submitter, submit::ANSWER_WAIT)
    })
    .await
    .unwrap_or_else(|_| Answer::refused("internal_error"));
    let status = match &answer {
        Answer::Played { .. } | Answer::Queued { .. } => StatusCode::OK,
        Answer::Refused { .. } => StatusCode::UNPROCESSABLE_ENTITY,
        Answer::Closed { .. } => StatusCode::CONFLICT,
    };
    (status, Json(answer)).into_response()
}
