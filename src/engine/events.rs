//! events.jsonl: one compact JSON event per line (`ts`, `type`, `data`, `summary`), the
//! durable record of what a side did and why it stopped.

use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use serde_json::{Map, Value};

/// An append-only event file, shareable between threads (engine, heartbeat, renewal).
/// The file is opened once, on the first event, and every event is one `write` call.
#[derive(Clone, Debug)]
pub struct EventLog {
    path: Option<Arc<PathBuf>>,
    sink: Arc<Mutex<Sink>>,
}

#[derive(Debug, Default)]
struct Sink {
    file: Option<File>,
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

    /// Appends one event; `data` is kept only when it is a non-empty object, `summary` only
    /// when non-empty (the reference's shape). Write failures are reported on stderr once
    /// per event and never stop a session.
    pub fn emit(&self, event: &str, data: Value, summary: Option<&str>) {
        self.append(event, data, summary, false);
    }

    /// Appends the log's last event: whatever other threads emit afterwards (an engine still
    /// winding down after a local abort) is dropped, so the log ends with this one.
    pub fn emit_last(&self, event: &str, data: Value) {
        self.append(event, data, None, true);
    }

    fn append(&self, event: &str, data: Value, summary: Option<&str>, last: bool) {
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
        let mut line = serde_json::to_vec(&entry).expect("a JSON map always serializes");
        line.push(b'\n');
        let mut sink = self
            .sink
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        if sink.sealed {
            return;
        }
        sink.sealed = last;
        if sink.file.is_none() {
            match open_append(path) {
                Ok(opened) => sink.file = Some(opened),
                Err(error) => return warn(event, path, &error),
            }
        }
        if let Some(Err(error)) = sink.file.as_mut().map(|f| f.write_all(&line)) {
            warn(event, path, &error);
        }
    }
}

fn open_append(path: &Path) -> std::io::Result<File> {
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent)?;
    }
    std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
}

fn warn(event: &str, path: &Path, error: &std::io::Error) {
    eprintln!(
        "warning: cannot write event {event} to {}: {error}",
        path.display()
    );
}

/// UTC now as Python's `datetime.now(timezone.utc).isoformat()` prints it.
pub fn iso_now() -> String {
    iso_format(chrono::Utc::now())
}

/// Python's `isoformat()` of a UTC datetime: microseconds only when not zero.
fn iso_format(time: chrono::DateTime<chrono::Utc>) -> String {
    use chrono::{Datelike, Timelike};
    // A leap second shows as :59.999999 rather than a 7-digit fraction.
    let micros = time.timestamp_subsec_micros().min(999_999);
    let fraction = if micros == 0 {
        String::new()
    } else {
        format!(".{micros:06}")
    };
    format!(
        "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}{fraction}+00:00",
        time.year(),
        time.month(),
        time.day(),
        time.hour(),
        time.minute(),
        time.second(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn timestamps_are_written_as_python_isoformat_writes_them() {
        use chrono::TimeZone;
        let at = |micros: i64| chrono::Utc.timestamp_micros(micros).unwrap();
        assert_eq!(
            iso_format(at(1_796_010_432_123_456)),
            "2026-11-30T03:47:12.123456+00:00"
        );
        assert_eq!(
            iso_format(at(1_796_010_432_000_000)),
            "2026-11-30T03:47:12+00:00"
        );
        assert_eq!(
            iso_format(at(1_000_001)),
            "1970-01-01T00:00:01.000001+00:00"
        );
    }

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

    #[test]
    fn nothing_follows_the_last_event() {
        let dir = tempfile::tempdir().unwrap();
        let log = EventLog::to_file(dir.path().join("events.jsonl"));
        let engine = log.clone();
        log.emit_last("session_ended", json!({"reason": "aborted"}));
        engine.emit(
            "session_ended",
            json!({"reason": "peer_disconnected"}),
            None,
        );
        let text = std::fs::read_to_string(dir.path().join("events.jsonl")).unwrap();
        assert_eq!(text.lines().count(), 1);
        assert!(text.contains("aborted"));
    }
}
