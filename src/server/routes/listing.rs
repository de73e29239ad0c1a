//! What every list endpoint shares: query parsing, `limit` (default 20, at most 100),
//! `offset=0` for compatibility, and filter-bound keyset cursors.

use std::collections::HashMap;

use axum::extract::Query;
use axum::extract::rejection::QueryRejection;

use crate::api::{DEFAULT_LIST_LIMIT, MAX_LIST_LIMIT};
use crate::server::cursor::{self, Position};
use crate::server::error::{ApiError, ApiResult};

pub type Params = HashMap<String, String>;

/// The decoded query string, or a JSON 400.
pub fn params(query: Result<Query<Params>, QueryRejection>) -> ApiResult<Params> {
    query
        .map(|Query(params)| params)
        .map_err(|e| ApiError::bad_request("invalid_query", format!("invalid query string: {e}")))
}

/// Which page to serve.
#[derive(Debug)]
pub struct Page {
    pub limit: u32,
    pub after: Option<Position>,
}

/// Reads `limit`, `offset` and `cursor`; the cursor must come from the same `filter`.
pub fn page(params: &Params, filter: &str) -> ApiResult<Page> {
    let limit = match params.get("limit") {
        None => DEFAULT_LIST_LIMIT,
        Some(text) => match text.parse::<u32>() {
            Ok(limit) if limit >= 1 => limit.min(MAX_LIST_LIMIT),
            _ => {
                return Err(ApiError::bad_request(
                    "invalid_limit",
                    "limit must be a positive integer",
                ));
            }
        },
    };
    if params.get("offset").is_some_and(|offset| offset != "0") {
        return Err(ApiError::bad_request(
            "invalid_offset",
            "only offset=0 is supported; page with cursor",
        ));
    }
    let after = match params.get("cursor").filter(|cursor| !cursor.is_empty()) {
        None => None,
        Some(text) => Some(
            cursor::decode(text, filter)
                .map_err(|e| ApiError::bad_request("invalid_cursor", e.to_string()))?,
        ),
    };
    Ok(Page { limit, after })
}

/// Keeps the first `limit` items (the store is asked for one more) and returns the cursor
/// of the next page when there is one.
pub fn split_page<T>(
    items: Vec<(T, Position)>,
    limit: u32,
    filter: &str,
) -> (Vec<T>, Option<String>) {
    let limit = limit as usize;
    let more = items.len() > limit;
    let mut kept: Vec<(T, Position)> = items;
    kept.truncate(limit);
    let next = more
        .then(|| {
            kept.last()
                .map(|(_, position)| cursor::encode(position, filter))
        })
        .flatten();
    (kept.into_iter().map(|(item, _)| item).collect(), next)
}
