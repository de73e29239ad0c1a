//! Queueing one room action: checked (a JSON object that can travel in a room, at most
//! [`MAX_ACTION_BYTES`] in canonical form) and appended to the session directory's
//! `room-actions.jsonl`, which the side sends on — a member to its leader, a leader into its
//! own room. `session action`, the terminal and the browser controller all queue through
//! [`queue`].

use serde_json::{Value, json};

use crate::control::Target;

/// The largest action, in canonical bytes.
pub const MAX_ACTION_BYTES: usize = 64 * 1024;

/// Why an action was not queued.
#[derive(Debug, thiserror::Error)]
pub enum ActionError {
    #[error("the action must be a JSON object, not {0}")]
    NotAnObject(&'static str),
    #[error("the action cannot travel in a room: {0}")]
    Untravelled(String),
    #[error("the action is {0} bytes; at most {MAX_ACTION_BYTES}")]
    TooLarge(usize),
    #[error("{0} is not a session directory")]
    NoSession(String),
    #[error("queueing the action in {0}: {1}")]
    Io(String, std::io::Error),
}

impl ActionError {
    /// Whether the action itself was at fault (not the session it was meant for).
    pub fn is_bad_action(&self) -> bool {
        matches!(
            self,
            ActionError::NotAnObject(_) | ActionError::Untravelled(_) | ActionError::TooLarge(_)
        )
    }
}

/// Checks `action` and appends it to `target`'s queue; returns the queued line
/// (`{"action", "ts"}`).
pub fn queue(target: &Target, action: Value) -> Result<Value, ActionError> {
    if !action.is_object() {
        return Err(ActionError::NotAnObject(crate::spec::json_kind(&action)));
    }
    let size = crate::room::json::canonical(&action)
        .map_err(|e| ActionError::Untravelled(e.to_string()))?
        .len();
    if size > MAX_ACTION_BYTES {
        return Err(ActionError::TooLarge(size));
    }
    if target.record.protocol_id.is_none() {
        return Err(ActionError::NoSession(
            target.dir.root().display().to_string(),
        ));
    }
    let line = json!({"action": action, "ts": crate::records::iso_now()});
    crate::layout::append_json_line(&target.dir.room_actions_file(), &line)
        .map_err(|e| ActionError::Io(target.dir.root().display().to_string(), e))?;
    Ok(line)
}
