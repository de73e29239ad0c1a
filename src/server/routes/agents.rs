//! `GET /api/v1/agents?public_key=`: look up a registered agent by key.

use std::sync::Arc;

use axum::Json;
use axum::extract::rejection::QueryRejection;
use axum::extract::{Query, State};

use super::listing::{Params, params};
use crate::api::agent::Agent;
use crate::identity::is_lower_hex_64;
use crate::server::AppState;
use crate::server::error::{ApiError, ApiResult};

pub async fn by_public_key(
    State(state): State<Arc<AppState>>,
    query: Result<Query<Params>, QueryRejection>,
) -> ApiResult<Json<Agent>> {
    let params = params(query)?;
    let key = params
        .get("public_key")
        .map(|key| key.to_ascii_lowercase())
        .unwrap_or_default();
    if !is_lower_hex_64(&key) {
        return Err(ApiError::bad_request(
            "invalid_public_key",
            "public_key must be 64 hex characters",
        ));
    }
    match state.store.agent(&key).await? {
        Some(agent) => Ok(Json(agent)),
        None => Err(ApiError::not_found(
            "no agent is registered with this public key",
        )),
    }
}
