//! One session as a person steering it sees it: its status, the state the hooks publish
//! (snapshot.json), the open decision window, and for a room the room as this side holds it
//! (room.json) with its text action when it is conversational, as one JSON object — what `session
//! snapshot` prints and what the browser controller pushes.

use std::path::PathBuf;
use std::time::SystemTime;

use serde_json::{Value, json};

use super::Target;
use crate::layout::SessionDir;
use crate::records::{DecisionFiles, Window};

/// The size and modification time of one file (`None` while it is missing): a cheap sign
/// that what a view read from it may have changed.
pub type Stamp = Option<(u64, SystemTime)>;

/// The files a session's view is read from: session.json and room.json, and once its engine
/// has started, the snapshot and the decision window's state.
pub fn view_files(session: &SessionDir) -> Vec<PathBuf> {
    let mut files = vec![session.session_file(), session.room_file()];
    if let Some(engine) = Target::at(session.root())
        .ok()
        .and_then(|target| target.engine_dir())
    {
        files.push(engine.snapshot_file());
        files.push(DecisionFiles::of(&engine).state());
    }
    files
}

/// The stamp of each of `files`, in order.
pub fn stamps(files: &[PathBuf]) -> Vec<Stamp> {
    files
        .iter()
        .map(|file| {
            let meta = std::fs::metadata(file).ok()?;
            Some((meta.len(), meta.modified().ok()?))
        })
        .collect()
}

/// `{status, role, control_mode, peer_control_mode, winner, end_reason, snapshot, window,
/// room, room_talk, now}` of a session, read afresh (`now` in Unix seconds, for countdowns).
pub fn session_view(target: &Target) -> Value {
    let target = Target::at(target.dir.root()).unwrap_or_else(|_| target.clone());
    let record = &target.record;
    let engine = target.engine_dir();
    let snapshot = engine
        .as_ref()
        .and_then(|dir| std::fs::read_to_string(dir.snapshot_file()).ok())
        .and_then(|text| serde_json::from_str::<Value>(&text).ok())
        .unwrap_or(Value::Null);
    let window: Option<Window> = engine
        .as_ref()
        .and_then(|dir| DecisionFiles::of(dir).window())
        .filter(|window| window.open);
    let room = std::fs::read_to_string(target.dir.room_file())
        .ok()
        .and_then(|text| serde_json::from_str::<Value>(&text).ok())
        .unwrap_or(Value::Null);
    json!({
        "status": record.status,
        "role": record.role,
        "control_mode": record.local_control_mode,
        "peer_control_mode": record.peer_control_mode,
        "winner": record.winner,
        "end_reason": record.end_reason,
        "snapshot": snapshot,
        "window": window,
        "room": room,
        "room_talk": crate::control::room::Talk::of(record.protocol_id.as_deref().unwrap_or_default()),
        "now": crate::decision::epoch_now(),
    })
}
