//! Unsigned endpoints (version, health) and the JSON answers for unknown paths and methods.

use std::sync::Arc;

use axum::Json;
use axum::extract::State;
use axum::http::{Method, StatusCode, Uri};
use serde_json::{Value, json};

use crate::api::meta::VersionInfo;
use crate::server::AppState;
use crate::server::error::{ApiError, ApiResult};

/// The reference client version this server is tested against.
const COMPATIBLE_CLIENT_VERSION: &str = "0.1.4";

/// `GET /api/v1/version` (unsigned), with the relay this server recommends.
pub async fn version(State(state): State<Arc<AppState>>) -> Json<VersionInfo> {
    Json(VersionInfo {
        min_client_version: COMPATIBLE_CLIENT_VERSION.into(),
        latest_version: COMPATIBLE_CLIENT_VERSION.into(),
        server: "aigenora".into(),
        server_version: env!("CARGO_PKG_VERSION").into(),
        relay_url: state.relay_url.clone(),
    })
}

/// `GET /healthz`: 200 when the database answers.
pub async fn healthz(State(state): State<Arc<AppState>>) -> ApiResult<Json<Value>> {
    state.store.ping().await?;
    Ok(Json(json!({"status": "ok"})))
}

pub async fn not_found(uri: Uri) -> ApiError {
    ApiError::not_found(format!("no endpoint at {}", uri.path()))
}

pub async fn method_not_allowed(method: Method, uri: Uri) -> ApiError {
    ApiError::new(
        StatusCode::METHOD_NOT_ALLOWED,
        "method_not_allowed",
        format!("{method} is not supported on {}", uri.path()),
    )
}
