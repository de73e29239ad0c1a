//! The one error type of the HTTP API: a status, a stable snake_case code and a sentence,
//! always sent as `{"error": code, "message": sentence}`.

use axum::Json;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde::de::DeserializeOwned;

use super::store::StoreError;
use crate::api::ErrorBody;

/// A refused or failed request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApiError {
    pub status: StatusCode,
    pub code: &'static str,
    pub message: String,
}

pub type ApiResult<T> = Result<T, ApiError>;

impl ApiError {
    pub fn new(status: StatusCode, code: &'static str, message: impl Into<String>) -> ApiError {
        ApiError {
            status,
            code,
            message: message.into(),
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
}

impl From<StoreError> for ApiError {
    fn from(error: StoreError) -> ApiError {
        tracing::error!(%error, "storage failure");
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
        (self.status, Json(body)).into_response()
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
