//! The signature gate in front of every signed endpoint: buffers the raw body (size
//! limited), rebuilds the canonical bytes from the raw request target and body, checks
//! the timestamp window and the replay guard, and hands the caller's key to the handler.

use std::sync::Arc;

use axum::body::Body;
use axum::extract::{FromRequestParts, Request, State};
use axum::http::StatusCode;
use axum::http::request::Parts;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use super::AppState;
use super::clock::now_ms;
use super::error::ApiError;
use crate::identity::{
    self, HEADER_PUBLIC_KEY, HEADER_REQUEST_ID, HEADER_SIGNATURE, HEADER_TIMESTAMP, SignatureError,
    request_canonical,
};

/// The verified signer of a request (lowercase hex public key).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Caller(pub String);

impl<S: Send + Sync> FromRequestParts<S> for Caller {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, _state: &S) -> Result<Caller, ApiError> {
        parts.extensions.get::<Caller>().cloned().ok_or_else(|| {
            ApiError::unauthorized("missing_signature", "this endpoint needs a signed request")
        })
    }
}

/// Middleware: verify, then pass the request on (body intact) with [`Caller`] attached.
pub async fn require_signature(
    State(state): State<Arc<AppState>>,
    request: Request,
    next: Next,
) -> Response {
    let (mut parts, body) = request.into_parts();
    let limit = state.limits.max_body_bytes;
    let declared = parts
        .headers
        .get(axum::http::header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok());
    if declared
        .and_then(|v| v.parse::<usize>().ok())
        .is_some_and(|length| length > limit)
    {
        return too_large(limit);
    }
    let Ok(bytes) = axum::body::to_bytes(body, limit).await else {
        return too_large(limit);
    };
    match verify(&state, &parts, &bytes) {
        Ok(caller) => {
            parts.extensions.insert(caller);
            next.run(Request::from_parts(parts, Body::from(bytes)))
                .await
        }
        Err(error) => error.into_response(),
    }
}

fn too_large(limit: usize) -> Response {
    ApiError::new(
        StatusCode::PAYLOAD_TOO_LARGE,
        "body_too_large",
        format!("the request body exceeds {limit} bytes"),
    )
    .into_response()
}

fn verify(state: &AppState, parts: &Parts, body: &[u8]) -> Result<Caller, ApiError> {
    let header = |name: &str| {
        parts
            .headers
            .get(name)
            .and_then(|value| value.to_str().ok())
    };
    let (Some(public_key), Some(signature), Some(timestamp), Some(request_id)) = (
        header(HEADER_PUBLIC_KEY),
        header(HEADER_SIGNATURE),
        header(HEADER_TIMESTAMP),
        header(HEADER_REQUEST_ID),
    ) else {
        return Err(ApiError::unauthorized(
            "missing_signature",
            "signed requests need X-Public-Key, X-Signature, X-Timestamp and X-Request-Id",
        ));
    };
    let public_key = public_key.to_ascii_lowercase();
    if !identity::is_lower_hex_64(&public_key) {
        return Err(ApiError::unauthorized(
            "invalid_public_key",
            "X-Public-Key must be 64 hex characters",
        ));
    }
    let seconds = parse_unix_seconds(timestamp).ok_or_else(|| {
        ApiError::unauthorized("invalid_timestamp", "X-Timestamp must be Unix seconds")
    })?;
    let now = now_ms();
    let window = state.limits.signature_window_secs;
    if (now / 1000 - seconds).abs() > window {
        return Err(ApiError::unauthorized(
            "stale_timestamp",
            format!("X-Timestamp is more than {window} s away from the server clock"),
        ));
    }
    if !is_valid_request_id(request_id) {
        return Err(ApiError::unauthorized(
            "invalid_request_id",
            "X-Request-Id must be 1-128 visible ASCII characters",
        ));
    }
    let target = parts
        .uri
        .path_and_query()
        .map(|target| target.as_str())
        .unwrap_or_else(|| parts.uri.path());
    let canonical = request_canonical(timestamp, parts.method.as_str(), target, request_id, body);
    identity::verify_hex(&public_key, &canonical, signature).map_err(|error| {
        let message = match error {
            SignatureError::Mismatch => "the signature does not match this request".to_string(),
            other => format!("X-Signature: {other}"),
        };
        ApiError::unauthorized("invalid_signature", message)
    })?;
    let forget_at = (seconds + window + 1) * 1000;
    if !state
        .replay
        .first_use(&public_key, request_id, forget_at, now)
    {
        return Err(ApiError::unauthorized(
            "replayed_request",
            "this X-Request-Id was already used by this key",
        ));
    }
    Ok(Caller(public_key))
}

/// Decimal digits only (what the reference sends), as a number.
fn parse_unix_seconds(text: &str) -> Option<i64> {
    if text.is_empty() || text.len() > 12 || !text.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    text.parse().ok()
}

fn is_valid_request_id(text: &str) -> bool {
    (1..=128).contains(&text.len()) && text.bytes().all(|b| b.is_ascii_graphic())
}
