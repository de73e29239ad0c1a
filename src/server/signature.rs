//! The gate in front of every signed endpoint. Cheap checks come before the body is read:
//! the signature headers are present and well-formed, the timestamp is fresh, the declared
//! body length is within the request's limit (none for reads and deletes, a few KiB for
//! registration), and a write's key is registered. Only then is the body
//! read (size-limited, with a deadline), the signature verified over the canonical bytes
//! rebuilt from the raw request target and body, the key's rate limit counted and the
//! request id checked against the (persistent) replay guard. The handler gets the caller's
//! key and, for a write, the receipt that stores the request id with the write; a write
//! that stored nothing has its id stored before it is answered.

use std::sync::Arc;

use axum::body::{Body, Bytes};
use axum::extract::{FromRequestParts, Request, State};
use axum::http::request::Parts;
use axum::http::{Method, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use http_body_util::{BodyExt, LengthLimitError, Limited};

use super::AppState;
use super::clock::now_ms;
use super::config::MAX_AUTH_BODY_BYTES;
use super::error::ApiError;
use super::page_cache::AdmittedVersion;
use super::rate_limit::{AddressKey, ClientAddr};
use super::replay::{ReplayError, WriteReceipt};
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

impl<S: Send + Sync> FromRequestParts<S> for WriteReceipt {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, _state: &S) -> Result<WriteReceipt, ApiError> {
        parts
            .extensions
            .get::<WriteReceipt>()
            .cloned()
            .ok_or_else(|| {
                ApiError::new(
                    StatusCode::INTERNAL_SERVER_ERROR,
                    "internal_error",
                    "a write reached its handler without a request id receipt",
                )
            })
    }
}

/// Middleware: check, then pass the request on (body intact) with [`Caller`] attached (and
/// a write's [`WriteReceipt`]); a write's request id is stored before it is answered.
pub async fn require_signature(
    State(state): State<Arc<AppState>>,
    request: Request,
    next: Next,
) -> Response {
    let (request, receipt) = match admit(&state, request).await {
        Ok(admitted) => admitted,
        Err(error) => return error.into_response(),
    };
    let response = next.run(request).await;
    if let Some(receipt) = receipt
        && let Err(error) = state.replay.settle(&receipt).await
    {
        tracing::error!(%error, "a write's request id was not stored");
        return not_stored().into_response();
    }
    response
}

fn not_stored() -> ApiError {
    ApiError::new(
        StatusCode::SERVICE_UNAVAILABLE,
        "replay_guard_unavailable",
        "the request id could not be recorded",
    )
}

/// Middleware for every request: the per-address rate limit.
pub async fn limit_address(
    State(state): State<Arc<AppState>>,
    request: Request,
    next: Next,
) -> Response {
    if let Some(ClientAddr(addr)) = request.extensions().get::<ClientAddr>()
        && let Err(refused) = state
            .rate_limits
            .check_address(AddressKey::of(addr.ip()))
            .await
    {
        return refused.closing().into_response();
    }
    next.run(request).await
}

/// The signature headers, checked for form and freshness (no signature check yet).
struct Claimed<'a> {
    public_key: String,
    signature: &'a str,
    timestamp: &'a str,
    seconds: i64,
    request_id: &'a str,
}

async fn admit(
    state: &AppState,
    request: Request,
) -> Result<(Request, Option<WriteReceipt>), ApiError> {
    let (mut parts, body) = request.into_parts();
    let now = now_ms();
    let claimed = claimed_headers(&parts, state.limits.signature_window_secs, now)
        .map_err(ApiError::closing)?;
    let limit = body_limit(&parts, state.limits.max_body_bytes);
    if declared_length(&parts).is_some_and(|length| length > limit) {
        return Err(too_large(limit).closing());
    }
    let write = is_write(&parts);
    if write.needs_registration && !state.store.is_registered(&claimed.public_key).await? {
        return Err(ApiError::not_registered("this key").closing());
    }
    let bytes = read_body(body, limit, state.limits.body_timeout).await?;
    let target = parts
        .uri
        .path_and_query()
        .map(|target| target.as_str())
        .unwrap_or_else(|| parts.uri.path());
    let canonical = request_canonical(
        claimed.timestamp,
        parts.method.as_str(),
        target,
        claimed.request_id,
        &bytes,
    );
    identity::verify_hex(&claimed.public_key, &canonical, claimed.signature).map_err(|error| {
        let message = match error {
            SignatureError::Mismatch => "the signature does not match this request".to_string(),
            other => format!("X-Signature: {other}"),
        };
        ApiError::unauthorized("invalid_signature", message)
    })?;
    let mut key = [0u8; 32];
    hex::decode_to_slice(&claimed.public_key, &mut key).expect("checked: 64 hex characters");
    state.rate_limits.check_key(key).await?;
    let window = state.limits.signature_window_secs;
    let forget_at = (claimed.seconds + window + 1) * 1000;
    let replayed = |error: ReplayError| match error {
        ReplayError::Replayed => ApiError::unauthorized("replayed_request", error.to_string()),
        ReplayError::NotStored => not_stored(),
    };
    let mut admitted = None;
    let receipt = if write.is_write {
        Some(
            state
                .replay
                .first_write(&claimed.public_key, claimed.request_id, forget_at, now)
                .await
                .map_err(replayed)?,
        )
    } else {
        admitted = state
            .replay
            .first_read(&claimed.public_key, claimed.request_id, forget_at, now)
            .await
            .map_err(replayed)?
            .map(AdmittedVersion);
        None
    };
    let caller = Caller(claimed.public_key);
    parts.extensions.insert(caller);
    if let Some(admitted) = admitted {
        parts.extensions.insert(admitted);
    }
    if let Some(receipt) = &receipt {
        parts.extensions.insert(receipt.clone());
    }
    Ok((Request::from_parts(parts, Body::from(bytes)), receipt))
}

/// The most body bytes a request may carry: none for reads and deletes (nothing the API
/// reads or deletes takes a body), a few KiB for registration (which needs no registered
/// key, so anyone may send it), `writes` for every other write.
fn body_limit(parts: &Parts, writes: usize) -> usize {
    match parts.method {
        Method::GET | Method::HEAD | Method::DELETE => 0,
        _ if parts.uri.path().starts_with("/api/v1/auth/") => MAX_AUTH_BODY_BYTES.min(writes),
        _ => writes,
    }
}

/// Whether a request changes data, and whether that needs a registered key (everything
/// but registration itself).
struct WriteKind {
    is_write: bool,
    needs_registration: bool,
}

fn is_write(parts: &Parts) -> WriteKind {
    let is_write = !matches!(parts.method, Method::GET | Method::HEAD);
    WriteKind {
        is_write,
        needs_registration: is_write && !parts.uri.path().starts_with("/api/v1/auth/"),
    }
}

fn claimed_headers(parts: &Parts, window: i64, now: i64) -> Result<Claimed<'_>, ApiError> {
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
    if signature.len() != 128 || !signature.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err(ApiError::unauthorized(
            "invalid_signature",
            "X-Signature must be 128 hex characters",
        ));
    }
    Ok(Claimed {
        public_key,
        signature,
        timestamp,
        seconds,
        request_id,
    })
}

/// The `Content-Length` the client declared (an unparsable one counts as too large).
fn declared_length(parts: &Parts) -> Option<usize> {
    parts
        .headers
        .get(axum::http::header::CONTENT_LENGTH)
        .map(|value| {
            value
                .to_str()
                .ok()
                .and_then(|text| text.parse::<usize>().ok())
                .unwrap_or(usize::MAX)
        })
}

/// The whole body, at most `limit` bytes, within `deadline`.
async fn read_body(
    body: Body,
    limit: usize,
    deadline: std::time::Duration,
) -> Result<Bytes, ApiError> {
    let read = tokio::time::timeout(deadline, Limited::new(body, limit).collect()).await;
    match read {
        Ok(Ok(collected)) => Ok(collected.to_bytes()),
        Ok(Err(error)) if error.is::<LengthLimitError>() => Err(too_large(limit).closing()),
        Ok(Err(error)) => Err(ApiError::bad_request(
            "unreadable_body",
            format!("the request body could not be read: {error}"),
        )
        .closing()),
        Err(_) => Err(ApiError::new(
            StatusCode::REQUEST_TIMEOUT,
            "body_timeout",
            format!(
                "the request body did not arrive within {} s",
                deadline.as_secs_f64()
            ),
        )
        .closing()),
    }
}

fn too_large(limit: usize) -> ApiError {
    let message = match limit {
        0 => "this request takes no body".to_string(),
        _ => format!("the request body exceeds {limit} bytes"),
    };
    ApiError::new(StatusCode::PAYLOAD_TOO_LARGE, "body_too_large", message)
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

#[cfg(test)]
mod tests {
    use super::*;

    /// What the gate makes of a request signed at `seconds` when the server's clock says
    /// `now_seconds`: `Ok(())` or the refusal's code.
    fn freshness(seconds: i64, now_seconds: i64) -> Result<(), &'static str> {
        let request = axum::http::Request::builder()
            .uri("/api/v1/invitations")
            .header(HEADER_PUBLIC_KEY, "ab".repeat(32))
            .header(HEADER_SIGNATURE, "cd".repeat(64))
            .header(HEADER_TIMESTAMP, seconds.to_string())
            .header(HEADER_REQUEST_ID, "r1")
            .body(())
            .unwrap();
        let (parts, ()) = request.into_parts();
        claimed_headers(&parts, 300, now_seconds * 1000 + 999)
            .map(|_| ())
            .map_err(|error| error.code)
    }

    #[test]
    fn a_timestamp_is_fresh_up_to_the_window_either_way_and_stale_one_second_beyond() {
        let now = 1_800_000_000;
        assert_eq!(freshness(now, now), Ok(()));
        assert_eq!(freshness(now - 300, now), Ok(()));
        assert_eq!(freshness(now + 300, now), Ok(()));
        assert_eq!(freshness(now - 301, now), Err("stale_timestamp"));
        assert_eq!(freshness(now + 301, now), Err("stale_timestamp"));
    }
}
