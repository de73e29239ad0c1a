//! The checks every request passes before a handler sees it: one Host header, naming this
//! server (no DNS rebinding), an Origin header, when sent, is this server's own (no
//! cross-site requests), and a POST carries `application/json` (no form or `text/plain`
//! "simple requests"). Tokens are compared in constant time.

use axum::extract::{Request, State};
use axum::http::{HeaderMap, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use std::sync::Arc;

use super::Controller;

/// Refuses requests from anywhere but this server's own page.
pub async fn same_origin(
    State(controller): State<Arc<Controller>>,
    request: Request,
    next: Next,
) -> Response {
    let port = controller.addr.port();
    let ours =
        |value: &str| value == format!("127.0.0.1:{port}") || value == format!("localhost:{port}");
    let headers = request.headers();
    if headers.get_all(header::HOST).iter().count() > 1 {
        return refuse(StatusCode::BAD_REQUEST, "one_host_header");
    }
    let host = headers.get(header::HOST).and_then(|h| h.to_str().ok());
    if !host.is_some_and(ours) {
        return refuse(StatusCode::MISDIRECTED_REQUEST, "wrong_host");
    }
    if let Some(origin) = headers.get(header::ORIGIN) {
        let origin = origin.to_str().unwrap_or_default();
        if !origin.strip_prefix("http://").is_some_and(ours) {
            return refuse(StatusCode::FORBIDDEN, "wrong_origin");
        }
    }
    if request.method() == Method::POST && !is_json(headers) {
        return refuse(StatusCode::UNSUPPORTED_MEDIA_TYPE, "json_required");
    }
    next.run(request).await
}

fn is_json(headers: &HeaderMap) -> bool {
    headers
        .get(header::CONTENT_TYPE)
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.split(';').next())
        .is_some_and(|kind| kind.trim().eq_ignore_ascii_case("application/json"))
}

/// A request turned away: its status and `{"error": code}`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Refusal {
    pub status: StatusCode,
    pub code: &'static str,
}

impl IntoResponse for Refusal {
    fn into_response(self) -> Response {
        refuse(self.status, self.code)
    }
}

/// Checks a presented token against the expected one: 401 when none, 403 when wrong.
pub fn check_token(presented: Option<&str>, expected: &str) -> Result<(), Refusal> {
    let refusal = |status, code| Err(Refusal { status, code });
    match presented {
        None | Some("") => refusal(StatusCode::UNAUTHORIZED, "token_required"),
        Some(token) if same(token.as_bytes(), expected.as_bytes()) => Ok(()),
        Some(_) => refusal(StatusCode::FORBIDDEN, "wrong_token"),
    }
}

/// The token sent in the `X-Aigenora-Token` header.
pub fn header_token(headers: &HeaderMap) -> Option<&str> {
    headers
        .get("x-aigenora-token")
        .and_then(|value| value.to_str().ok())
}

fn same(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// A JSON refusal `{"error": code}`.
pub fn refuse(status: StatusCode, code: &str) -> Response {
    (status, axum::Json(serde_json::json!({"error": code}))).into_response()
}
