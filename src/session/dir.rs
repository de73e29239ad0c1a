//! A networked session's directory, `<data>/sessions/<role>-<ms>/`: `session.json` (status
//! and identifiers, rewritten atomically), `events.jsonl` (what happened, in order), the
//! daemon's logs, and the engine's own state dir inside.

use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use serde_json::{Map, Value};

use crate::engine::{EventLog, iso_now};
use crate::spec::Role;

pub const SESSION_FILE: &str = "session.json";
pub const EVENTS_FILE: &str = "events.jsonl";

/// One session directory.
#[derive(Debug, Clone)]
pub struct SessionDir {
    root: PathBuf,
    events: EventLog,
}

/// Claims a fresh `<base>/<role>-<unix ms>/` (suffixed `-N` when that name is taken):
/// `create_dir` is atomic, so two sides or processes starting in the same millisecond never
/// share a directory.
pub fn claim_role_dir(base: &Path, role: Role) -> std::io::Result<PathBuf> {
    std::fs::create_dir_all(base)?;
    let stamp = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default()
        .as_millis();
    for attempt in 0u32.. {
        let name = if attempt == 0 {
            format!("{role}-{stamp}")
        } else {
            format!("{role}-{stamp}-{attempt}")
        };
        let dir = base.join(name);
        match std::fs::create_dir(&dir) {
            Ok(()) => return Ok(dir),
            Err(error) if error.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(error) => return Err(error),
        }
    }
    unreachable!("some suffix is free")
}

impl SessionDir {
    /// Creates a fresh `<data>/sessions/<role>-<ms>/`.
    pub fn create(data_dir: &Path, role: Role) -> std::io::Result<SessionDir> {
        claim_role_dir(&data_dir.join("sessions"), role).map(SessionDir::open)
    }

    /// An existing session directory.
    pub fn open(root: impl Into<PathBuf>) -> SessionDir {
        let root = root.into();
        SessionDir {
            events: EventLog::to_file(root.join(EVENTS_FILE)),
            root,
        }
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Where the session's events are written (engine, heartbeat, renewal, handshake).
    pub fn events(&self) -> &EventLog {
        &self.events
    }

    /// A fresh engine state dir inside this session (`<role>-<ms>/`).
    pub fn engine_state_dir(&self, role: Role) -> std::io::Result<PathBuf> {
        claim_role_dir(&self.root, role)
    }

    /// `session.json` as an object (empty when missing or unreadable).
    pub fn read(&self) -> Map<String, Value> {
        read_session_file(&self.root)
    }

    /// Records that this process starts playing `role`: `status: starting`, the start time
    /// and the pid, with `details` (a JSON object) merged in. A write failure is not fatal:
    /// the session can still be played.
    pub fn record_start(&self, role: Role, details: Value) {
        let mut record = Map::new();
        record.insert("role".into(), role.as_str().into());
        record.insert("status".into(), "starting".into());
        if let Value::Object(details) = details {
            record.extend(details);
        }
        record.insert("started_at".into(), iso_now().into());
        record.insert("pid".into(), std::process::id().into());
        let _ = self.update(record);
    }

    /// Merges `patch` into `session.json` (top-level keys replaced), atomically.
    pub fn update(&self, patch: Map<String, Value>) -> std::io::Result<()> {
        let mut current = self.read();
        current.extend(patch);
        let text =
            serde_json::to_string_pretty(&Value::Object(current)).expect("JSON values serialize");
        let temporary = self.root.join(".session.json.tmp");
        std::fs::write(&temporary, text)?;
        std::fs::rename(temporary, self.root.join(SESSION_FILE))
    }
}

fn read_session_file(root: &Path) -> Map<String, Value> {
    std::fs::read_to_string(root.join(SESSION_FILE))
        .ok()
        .and_then(|text| serde_json::from_str::<Value>(&text).ok())
        .and_then(|value| value.as_object().cloned())
        .unwrap_or_default()
}

/// Every session under a data dir, newest first, with its `session.json`.
pub fn list_sessions(data_dir: &Path) -> Vec<(PathBuf, Map<String, Value>)> {
    let Ok(entries) = std::fs::read_dir(data_dir.join("sessions")) else {
        return Vec::new();
    };
    let mut sessions: Vec<(PathBuf, Map<String, Value>)> = entries
        .flatten()
        .map(|entry| entry.path())
        .filter(|path| path.join(SESSION_FILE).is_file())
        .map(|path| {
            let info = read_session_file(&path);
            (path, info)
        })
        .collect();
    sessions.sort_by(|a, b| b.0.cmp(&a.0));
    sessions
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn session_files_merge_and_list() {
        let data = tempfile::tempdir().unwrap();
        let dir = SessionDir::create(data.path(), Role::Host).unwrap();
        dir.update(
            json!({"status": "starting", "role": "host"})
                .as_object()
                .unwrap()
                .clone(),
        )
        .unwrap();
        dir.update(json!({"status": "closed"}).as_object().unwrap().clone())
            .unwrap();
        assert_eq!(
            Value::Object(dir.read()),
            json!({"status": "closed", "role": "host"})
        );
        let listed = list_sessions(data.path());
        assert_eq!(listed.len(), 1);
        assert!(
            listed[0]
                .0
                .file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with("host-")
        );
    }
}
