//! `session.json`: one side's status and identifiers, rewritten as the session moves on.
//! Field names and values are the reference's, so either implementation's `session` commands
//! read the other's; keys this build does not know are kept as they are.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::spec::ControlMode;
use crate::spec::Role;

/// Where a side's session stands.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Serialize,
    Deserialize,
    strum::IntoStaticStr,
    strum::EnumString,
    strum::Display,
)]
#[strum(serialize_all = "snake_case")]
#[serde(rename_all = "snake_case")]
pub enum SessionStatus {
    /// The process started; nothing published or dialed yet.
    Starting,
    /// The host's invitation is published; waiting for a guest.
    Hosting,
    /// A daemon parent's view of a guest still connecting (the reference writes it).
    Joining,
    /// The engine runs.
    Running,
    /// Completed.
    Closed,
    /// Ended without completing (the peer left, an abort, a mismatch).
    Aborted,
    /// An error stopped this side mid-game.
    Crashed,
    /// Never got to play (options, server, protocol, connection or handshake).
    Failed,
    /// The reference's daemon parent: its session process never got under way.
    StartupFailed,
    /// The reference's daemon parent: its session process did not get under way in time.
    StartupTimeout,
    /// The reference's `session status`: the process is gone without a final status.
    Stopped,
    /// A status another implementation wrote that this build does not know.
    #[serde(other)]
    Unknown,
}

impl SessionStatus {
    /// Whether the session is over (nothing more will be written).
    pub fn is_final(self) -> bool {
        matches!(
            self,
            SessionStatus::Closed
                | SessionStatus::Aborted
                | SessionStatus::Crashed
                | SessionStatus::Failed
                | SessionStatus::StartupFailed
                | SessionStatus::StartupTimeout
                | SessionStatus::Stopped
        )
    }

    pub fn as_str(self) -> &'static str {
        self.into()
    }
}

/// The content of `session.json`. Every field is optional: the file grows as the session
/// goes on, and a file written by another implementation may lack any of them.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SessionRecord {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub role: Option<Role>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<SessionStatus>,
    /// `direct` for a guest that dialed a ticket without a server.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub post_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub protocol_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub protocol_dir: Option<PathBuf>,
    /// Where a guest found the protocol: `builtin`, `library` or `fetched`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub protocol_source: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub local_control_mode: Option<ControlMode>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub peer_control_mode: Option<ControlMode>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub started_at: Option<String>,
    /// The process that runs (or ran) the session.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pid: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub peer_public_key: Option<String>,
    /// The engine's state dir (snapshot.json, the hooks' files).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub state_dir: Option<PathBuf>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub completed: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub winner: Option<crate::spec::Winner>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ended_at: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub end_reason: Option<String>,
    /// Keys written by someone else (the reference's daemon), kept on rewrite.
    #[serde(flatten)]
    pub other: Map<String, Value>,
}

impl SessionRecord {
    /// Parses `session.json` text; a file that is not a JSON object reads as empty.
    pub fn parse(text: &str) -> SessionRecord {
        let Ok(Value::Object(mut map)) = serde_json::from_str::<Value>(text) else {
            return SessionRecord::default();
        };
        // A known key holding a value of the wrong type would reject the whole record:
        // such a key is kept among the foreign ones instead (and written back unchanged).
        let mut misfits = Map::new();
        for key in KNOWN_KEYS {
            if let Some(value) = map.get(key) {
                let alone = Value::Object(Map::from_iter([(key.to_string(), value.clone())]));
                if serde_json::from_value::<SessionRecord>(alone).is_err() {
                    misfits.insert(key.to_string(), map.remove(key).unwrap_or_default());
                }
            }
        }
        let mut record: SessionRecord =
            serde_json::from_value(Value::Object(map)).unwrap_or_default();
        record.other.extend(misfits);
        record
    }

    /// Whether the session is over.
    pub fn is_final(&self) -> bool {
        self.status.is_some_and(SessionStatus::is_final)
    }

    /// The record as `session.json` text (indented, as the reference writes it).
    pub fn to_json_pretty(&self) -> String {
        serde_json::to_string_pretty(self).expect("session records serialize")
    }

    /// The record as a JSON object (for `session list --json`).
    pub fn to_object(&self) -> Map<String, Value> {
        match serde_json::to_value(self) {
            Ok(Value::Object(map)) => map,
            _ => Map::new(),
        }
    }
}

const KNOWN_KEYS: [&str; 18] = [
    "role",
    "status",
    "mode",
    "post_id",
    "protocol_id",
    "protocol_dir",
    "protocol_source",
    "local_control_mode",
    "peer_control_mode",
    "started_at",
    "pid",
    "session_id",
    "peer_public_key",
    "state_dir",
    "completed",
    "winner",
    "ended_at",
    "end_reason",
];

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn records_round_trip_and_keep_foreign_keys() {
        let text = json!({
            "role": "guest", "status": "closed", "post_id": "p", "pid": 7,
            "local_control_mode": "human", "completed": true, "winner": "host",
            "daemon_pid": 9, "status_detail": "x"
        })
        .to_string();
        let record = SessionRecord::parse(&text);
        assert_eq!(record.role, Some(Role::Guest));
        assert_eq!(record.status, Some(SessionStatus::Closed));
        assert!(record.is_final());
        assert_eq!(record.local_control_mode, Some(ControlMode::Human));
        assert_eq!(record.other["daemon_pid"], 9);
        let again: Value = serde_json::from_str(&record.to_json_pretty()).unwrap();
        assert_eq!(again, serde_json::from_str::<Value>(&text).unwrap());
    }

    #[test]
    fn unknown_statuses_and_wrong_types_do_not_lose_the_record() {
        let record = SessionRecord::parse(r#"{"status": "paused", "post_id": "p"}"#);
        assert_eq!(record.status, Some(SessionStatus::Unknown));
        assert!(!record.is_final());
        let record = SessionRecord::parse(r#"{"status": "startup_timeout"}"#);
        assert_eq!(record.status, Some(SessionStatus::StartupTimeout));
        assert!(record.is_final());
        let record = SessionRecord::parse(r#"{"pid": "seven", "post_id": "p"}"#);
        assert_eq!((record.pid, record.post_id.as_deref()), (None, Some("p")));
        assert_eq!(record.other["pid"], "seven");
        assert_eq!(SessionRecord::parse("[1]"), SessionRecord::default());
        assert_eq!(SessionRecord::parse("{"), SessionRecord::default());
    }
}
