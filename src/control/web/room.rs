//! A room's actions from the page: `POST /api/sessions/{id}/action` with `{"action": {...}}`
//! (any action, as `session action --action` takes it) or `{"text": "..."}` (said with the
//! room's text action, for a conversational room), queued through the same
//! [`crate::control::room::queue`] as `session action`. 200 `{"status": "ok", "action"}`
//! once queued; 422 `{"status": "refused", "reason"}` for an action the queue or the room's
//! text action refuses; 409 before this side holds a room.

use std::sync::Arc;

use axum::Json;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

use super::Controller;
use super::guard::refuse;
use super::routes::authorized_json;
use crate::control::room::{Talk, queue};

/// Largest action body (an action at its largest, wrapped).
const MAX_ACTION_BODY: usize = crate::control::room::actions::MAX_ACTION_BYTES + 1024;

pub async fn action(
    State(controller): State<Arc<Controller>>,
    Path(id): Path<String>,
    headers: HeaderMap,
    body: axum::body::Body,
) -> Response {
    let (target, body) =
        match authorized_json(&controller, &id, &headers, body, MAX_ACTION_BODY).await {
            Ok(found) => found,
            Err(refusal) => return refusal,
        };
    if !target.dir.room_file().is_file() {
        return refuse(StatusCode::CONFLICT, "no_room");
    }
    let talk = target.record.protocol_id.as_deref().and_then(Talk::of);
    let action = match (body.get("action"), body.get("text")) {
        (Some(action), _) => action.clone(),
        (None, Some(Value::String(text))) => match talk.map(|talk| talk.action(text)) {
            Some(Ok(action)) => action,
            Some(Err(reason)) => return refused(&reason),
            None => return refused("this room takes JSON actions only"),
        },
        _ => return refuse(StatusCode::BAD_REQUEST, "action_or_text_required"),
    };
    let queued = tokio::task::spawn_blocking(move || queue(&target, action)).await;
    match queued {
        Ok(Ok(line)) => Json(json!({"status": "ok", "action": line["action"]})).into_response(),
        Ok(Err(error)) if error.is_bad_action() => refused(&error.to_string()),
        Ok(Err(_)) | Err(_) => refuse(StatusCode::INTERNAL_SERVER_ERROR, "queue_failed"),
    }
}

fn refused(reason: &str) -> Response {
    let body = json!({"status": "refused", "reason": reason});
    (StatusCode::UNPROCESSABLE_ENTITY, Json(body)).into_response()
}
