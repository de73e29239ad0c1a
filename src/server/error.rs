//! The one error type of the HTTP API: a status, a stable snake_case code and a sentence,
//! always sent as `{"error": code, "message": sentence}` (plus `Retry-After` on a 429 from
//! a rate limit, and `Connection: close` when the request body was left unread).

use std::time::Duration;

use axum::Json;
use axum::http::header::{CONNECTION, RETRY_AFTER};
use axum::http::{HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use serde::de::DeserializeOwned;

use super::rate_limit::retry_after_secs;
use super::store::StoreError;
use crate::api::ErrorBody;

/// A refused or failed request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApiError {
    pub status: StatusCode,
    pub code: &'static str,
    pub message: String,
    /// Seconds to announce in `Retry-After`.
    pub retry_after: Option<u64>,
    /// The connection is closed after this answer (its request body was not read).
    pub close: bool,
}

pub type ApiResult<T> = Result<T, ApiError>;

impl ApiError {
    pub fn new(status: StatusCode, code: &'static str, message: impl Into<String>) -> ApiError {
        ApiError {
            status,
            code,
            message: message.into(),
            retry_after: None,
            close: false,
        }
    }

    pub fn bad_request(code: &'static str, message: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::BAD_REQUEST, code, message)
    }

    pub fn unauthorized(code: &'static str, message: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::UNAUTHORIZED, code, message)
    }

    pub fn forbidden(code: &'static str, message: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::FORBIDDEN, code, message)
    }

    pub fn not_found(message: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::NOT_FOUND, "not_found", message)
    }

    pub fn conflict(code: &'static str, message: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::CONFLICT, code, message)
    }

    pub fn gone(code: &'static str, message: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::GONE, code, message)
    }

    /// 429 from a rate limit: retry after `wait` (announced in whole seconds).
    pub fn rate_limited(
        code: &'static str,
        message: impl Into<String>,
        wait: Duration,
    ) -> ApiError {
        let seconds = retry_after_secs(wait);
        ApiError {
            retry_after: Some(seconds),
            ..ApiError::new(
                StatusCode::TOO_MANY_REQUESTS,
                code,
                format!("{}; retry in {seconds} s", message.into()),
            )
        }
    }

    /// This answer is sent before the request body was read: close the connection after it.
    pub fn closing(self) -> ApiError {
        ApiError {
            close: true,
            ..self
        }
    }

    /// The 403 for a key that must be registered to do this.
    pub fn not_registered(who: &str) -> ApiError {
        ApiError::forbidden(
            "not_registered",
            format!("{who} is not a registered agent (run `aigenora register`)"),
        )
    }
}

impl From<StoreError> for ApiError {
    fn from(error: StoreError) -> ApiError {
        tracing::error!(%error, "storage failure");
        if error.is_unavailable() {
            return ApiError::new(
                StatusCode::SERVICE_UNAVAILABLE,
                "database_unavailable",
                "the database is unavailable; retry later",
            );
        }
        ApiError::new(
            StatusCode::INTERNAL_SERVER_ERROR,
            "internal_error",
            "the server could not complete the request",
        )
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let body = ErrorBody {
            error: self.code.to_string(),
            message: self.message,
        };
        let mut response = (self.status, Json(body)).into_response();
        let headers = response.headers_mut();
        if let Some(seconds) = self.retry_after {
            headers.insert(RETRY_AFTER, HeaderValue::from(seconds));
        }
        if self.close {
            headers.insert(CONNECTION, HeaderValue::from_static("close"));
        }
        response
    }
}

/// Parses a JSON request body (already buffered and signature-checked).
pub fn parse_body<T: DeserializeOwned>(bytes: &[u8]) -> ApiResult<T> {
    if bytes.is_empty() {
        return Err(ApiError::bad_request(
            "invalid_body",
            "the request needs a JSON body",
        ));
    }
    serde_json::from_slice(bytes)
        .map_err(|e| ApiError::bad_request("invalid_body", format!("invalid JSON body: {e}")))
}
