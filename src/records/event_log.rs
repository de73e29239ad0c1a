//! events.jsonl: one compact JSON event per line (`ts`, `type`, `data`, `summary`), the
//! durable record of what a side did and why it stopped. Appends are shared by the engine
//! thread, the heartbeat and the session's async tasks, and go through
//! [`super::write_behind`]: while a session driver runs, a step's events reach the file just
//! after its frames left.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use serde_json::{Map, Value};

use super::write_behind::{self, Appender, Line};
use super::{Event, iso_now};

/// An append-only event file, shareable between threads (engine, heartbeat, renewal).
/// The file is opened once, on the first event.
#[derive(Clone, Debug)]
pub struct EventLog {
    path: Option<Arc<PathBuf>>,
    sink: Arc<Mutex<Sink>>,
}

#[derive(Debug, Default)]
struct Sink {
    file: Option<Arc<Appender>>,
    /// A last event was written ([`EventLog::emit_last`]); later ones are dropped.
    sealed: bool,
}

impl EventLog {
    /// Events appended to `path` (its directory is created on first write).
    pub fn to_file(path: impl Into<PathBuf>) -> EventLog {
        EventLog {
            path: Some(Arc::new(path.into())),
            sink: Arc::default(),
        }
    }

    /// An event log that records nothing.
    pub fn discard() -> EventLog {
        EventLog {
            path: None,
            sink: Arc::default(),
        }
    }

    pub fn path(&self) -> Option<&Path> {
        self.path.as_deref().map(PathBuf::as_path)
    }

    /// Appends one event. Write failures are reported on stderr once per event and never
    /// stop a session.
    pub fn emit(&self, event: Event) {
        self.append(event, None, false);
    }

    /// Appends one event with a human-readable `summary` (kept only when non-empty).
    pub fn emit_with_summary(&self, event: Event, summary: Option<&str>) {
        self.append(event, summary, false);
    }

    /// Appends the log's last event, written at once with everything held before it:
    /// whatever other threads emit afterwards (an engine still winding down after a local
    /// abort) is dropped, so the log ends with this one.
    pub fn emit_last(&self, event: Event) {
        self.append(event, None, true);
        write_behind::flush();
    }

    fn append(&self, event: Event, summary: Option<&str>, last: bool) {
        let Some(path) = &self.path else { return };
        let (event, data) = event.into_parts();
        let mut entry = Map::new();
        entry.insert("ts".into(), Value::String(iso_now()));
        entry.insert("type".into(), Value::String(event.clone()));
        if !data.is_empty() {
            entry.insert("data".into(), Value::Object(data));
        }
        if let Some(summary) = summary.filter(|s| !s.is_empty()) {
            entry.insert("summary".into(), Value::String(summary.to_string()));
        }
        let mut sink = self
            .sink
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        if sink.sealed {
            return;
        }
        sink.sealed = last;
        let file = match &sink.file {
            Some(file) => file,
            None => match Appender::open(path) {
                Ok(file) => sink.file.insert(file),
                Err(error) => return warn(&event, path, &error),
            },
        };
        write_behind::append(file, Line::Json(entry));
    }
}

fn warn(event: &str, path: &Path, error: &std::io::Error) {
    eprintln!(
        "warning: cannot write event {event} to {}: {error}",
        path.display()
    );
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn events_have_the_reference_shape() {
        let dir = tempfile::tempdir().unwrap();
        let log = EventLog::to_file(dir.path().join("sub/events.jsonl"));
        log.emit(Event::SessionEnded {
            completed: Some(true),
            reason: None,
            peer_reason: None,
            error: None,
            detail: None,
        });
        log.emit_with_summary(Event::PeerResumed {}, Some(""));
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

    #[test]
    fn nothing_follows_the_last_event() {
        let dir = tempfile::tempdir().unwrap();
        let log = EventLog::to_file(dir.path().join("events.jsonl"));
        let engine = log.clone();
        log.emit_last(Event::ended(false, "aborted"));
        engine.emit(Event::ended(false, "peer_disconnected"));
        let text = std::fs::read_to_string(dir.path().join("events.jsonl")).unwrap();
        assert_eq!(text.lines().count(), 1);
        assert!(text.contains("aborted"));
    }
}
