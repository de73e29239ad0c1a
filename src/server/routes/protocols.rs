//! Protocols: register (the server recomputes protocol_id, applies the run gate and the
//! registrant's storage quota), read
//! one, list the directory. Bundles (UI/hooks) are not served: `/bundle` is always 404, and
//! clients fall back to the plain record.

use std::sync::Arc;

use axum::Json;
use axum::body::Bytes;
use axum::extract::rejection::QueryRejection;
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use serde_json::Value;

use super::listing::{self, Params};
use crate::api::protocol::{
    MAX_DESCRIPTION_CHARS, MAX_NAME_CHARS, NewProtocol, ProtocolList, ProtocolRecord,
};
use crate::identity::is_lower_hex_64;
use crate::server::AppState;
use crate::server::clock::now_ms;
use crate::server::error::{ApiError, ApiResult, parse_body};
use crate::server::replay::WriteReceipt;
use crate::server::signature::Caller;
use crate::server::store::{InsertProtocol, NewProtocolRow, ProtocolQuota};
use crate::spec::Spec;

/// Longest directory search text.
const MAX_QUERY_CHARS: usize = 100;

pub async fn register(
    State(state): State<Arc<AppState>>,
    Caller(caller): Caller,
    receipt: WriteReceipt,
    body: Bytes,
) -> ApiResult<(StatusCode, Json<ProtocolRecord>)> {
    let new: NewProtocol = parse_body(&body)?;
    if !is_lower_hex_64(&new.protocol_id) {
        return Err(invalid_id());
    }
    let spec_value = match new.spec_json {
        Value::String(text) => serde_json::from_str(&text).map_err(|e| {
            ApiError::bad_request("invalid_spec", format!("spec_json is not JSON: {e}"))
        })?,
        other => other,
    };
    let spec = Spec::from_value(spec_value)
        .map_err(|e| ApiError::bad_request("invalid_spec", e.to_string()))?;
    let computed = spec.protocol_id();
    if computed != new.protocol_id {
        return Err(ApiError::bad_request(
            "protocol_id_mismatch",
            format!(
                "protocol_id mismatch: the body says {}, the spec hashes to {computed}",
                new.protocol_id
            ),
        ));
    }
    spec.check()
        .map_err(|e| ApiError::bad_request("invalid_spec", e.to_string()))?;
    let name = if new.name.is_empty() {
        computed.clone()
    } else {
        new.name
    };
    check_text("name", &name, MAX_NAME_CHARS)?;
    check_text("description", &new.description, MAX_DESCRIPTION_CHARS)?;
    check_text("type", &new.protocol_type, 64)?;
    let compact = serde_json::to_string(spec.value()).expect("a JSON value always serializes");
    let row = NewProtocolRow {
        protocol_id: &computed,
        name: &name,
        description: &new.description,
        protocol_type: &new.protocol_type,
        spec_json: &compact,
        registrant_key: Some(&caller),
    };
    let quotas = state.limits.quotas;
    let quota = ProtocolQuota {
        count: quotas.protocols_per_key,
        bytes: quotas.protocol_bytes_per_key,
    };
    match state
        .store
        .insert_protocol(&row, Some(quota), Some(&receipt), now_ms())
        .await?
    {
        InsertProtocol::Inserted => {}
        InsertProtocol::Exists => {
            return Err(ApiError::conflict(
                "protocol_exists",
                format!("protocol {computed} is already registered"),
            ));
        }
        InsertProtocol::OverQuota => {
            return Err(ApiError::new(
                StatusCode::PAYLOAD_TOO_LARGE,
                "protocol_quota_exceeded",
                format!(
                    "a key may register at most {} protocols of {} bytes of specs in total",
                    quota.count, quota.bytes
                ),
            ));
        }
    }
    let stored = state
        .store
        .protocol(&computed)
        .await?
        .ok_or_else(|| ApiError::not_found("protocol not found"))?;
    Ok((StatusCode::CREATED, Json(stored)))
}

pub async fn get_one(
    State(state): State<Arc<AppState>>,
    Path(protocol_id): Path<String>,
) -> ApiResult<Json<ProtocolRecord>> {
    if !is_lower_hex_64(&protocol_id) {
        return Err(invalid_id());
    }
    match state.store.protocol(&protocol_id).await? {
        Some(record) => Ok(Json(record)),
        None => Err(ApiError::not_found("protocol_id not found")),
    }
}

/// Always 404: this server distributes specs only (see the module docs).
pub async fn bundle(Path(protocol_id): Path<String>) -> ApiError {
    ApiError::not_found(format!(
        "protocol bundles are not served; use GET /api/v1/protocols/{protocol_id}"
    ))
}

pub async fn list(
    State(state): State<Arc<AppState>>,
    query: Result<Query<Params>, QueryRejection>,
) -> ApiResult<Json<ProtocolList>> {
    let params = listing::params(query)?;
    let search = params.get("q").map(|q| q.trim()).filter(|q| !q.is_empty());
    if search.is_some_and(|q| q.chars().count() > MAX_QUERY_CHARS) {
        return Err(ApiError::bad_request(
            "invalid_query",
            format!("q must be at most {MAX_QUERY_CHARS} characters"),
        ));
    }
    let filter = format!("protocols|q={}", search.unwrap_or_default());
    let page = listing::page(&params, &filter)?;
    let items = state
        .store
        .list_protocols(search, page.after.as_ref(), page.limit + 1)
        .await?;
    let (results, next_cursor) = listing::split_page(items, page.limit, &filter);
    Ok(Json(ProtocolList {
        results,
        next_cursor,
    }))
}

fn invalid_id() -> ApiError {
    ApiError::bad_request(
        "invalid_protocol_id",
        "protocol_id must be 64 lowercase hex characters",
    )
}

fn check_text(field: &str, value: &str, max_chars: usize) -> ApiResult<()> {
    if value.chars().count() > max_chars {
        return Err(ApiError::bad_request(
            "invalid_field",
            format!("{field} must be at most {max_chars} characters"),
        ));
    }
    Ok(())
}
