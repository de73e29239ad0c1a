//! events.jsonl: one compact JSON event per line (`ts`, `type`, `data`, `summary`), the
//! durable record of what a side did and why it stopped.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use serde_json::{Map, Value};

/// An append-only event file, shareable between threads (engine, heartbeat, renewal).
#[derive(Clone, Debug)]
pub struct EventLog {
    path: Option<Arc<PathBuf>>,
    lock: Arc<Mutex<()>>,
}

impl EventLog {
    /// Events appended to `path` (its directory is created on first write).
    pub fn to_file(path: impl Into<PathBuf>) -> EventLog {
        EventLog {
            path: Some(Arc::new(path.into())),
            lock: Arc::default(),
        }
    }

    /// An event log that records nothing.
    pub fn discard() -> EventLog {
        EventLog {
            path: None,
            lock: Arc::default(),
        }
    }

    pub fn path(&self) -> Option<&Path> {
        self.path.as_deref().map(PathBuf::as_path)
    }

    /// Appends one event; `data` is kept only when it is a non-empty object, `summary` only
    /// when non-empty (the reference's shape). Write failures are reported on stderr once
    /// per event and never stop a session.
    pub fn emit(&self, event: &str, data: Value, summary: Option<&str>) {
        let Some(path) = &self.path else { return };
        let mut entry = Map::new();
        entry.insert("ts".into(), Value::String(iso_now()));
        entry.insert("type".into(), Value::String(event.to_string()));
        if data.as_object().is_some_and(|d| !d.is_empty()) {
            entry.insert("data".into(), data);
        }
        if let Some(summary) = summary.filter(|s| !s.is_empty()) {
            entry.insert("summary".into(), Value::String(summary.to_string()));
        }
        let line = format!("{}\n", Value::Object(entry));
        let _guard = self
            .lock
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        let written = path
            .parent()
            .map_or(Ok(()), std::fs::create_dir_all)
            .and_then(|()| {
                std::fs::OpenOptions::new()
                    .create(true)
                    .append(true)
                    .open(path.as_path())
            })
            .and_then(|mut file| file.write_all(line.as_bytes()));
        if let Err(error) = written {
            eprintln!(
                "warning: cannot write event {event} to {}: {error}",
                path.display()
            );
        }
    }
}

/// UTC now as Python's `datetime.now(timezone.utc).isoformat()` prints it.
pub fn iso_now() -> String {
    chrono::Utc::now()
        .format("%Y-%m-%dT%H:%M:%S%.6f+00:00")
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn events_have_the_reference_shape() {
        let dir = tempfile::tempdir().unwrap();
        let log = EventLog::to_file(dir.path().join("sub/events.jsonl"));
        log.emit("session_ended", json!({"completed": true}), None);
        log.emit("peer_resumed", json!({}), Some(""));
        let text = std::fs::read_to_string(dir.path().join("sub/events.jsonl")).unwrap();
        let lines: Vec<Value> = text
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(lines[0]["type"], "session_ended");
        assert_eq!(lines[0]["data"], json!({"completed": true}));
        assert_eq!(
            lines[1].as_object().unwrap().keys().collect::<Vec<_>>(),
            ["ts", "type"]
        );
        let ts = lines[0]["ts"].as_str().unwrap();
        assert!(ts.ends_with("+00:00") && ts.len() == 32, "{ts}");
    }
}
