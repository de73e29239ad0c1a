//! The `_sys` layer's frames: `{"_sys": "ping", probe_id, ts}` and `{"_sys": "pong",
//! probe_id}`. Any frame with a `_sys` key belongs to this layer and never reaches the
//! engine; only a well-formed ping (a probe id of 1–64 characters) gets an answer.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::to_value;

/// Longest `probe_id` that gets a pong.
pub const MAX_PROBE_ID_CHARS: usize = 64;

/// A `_sys` frame this project reads or writes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "_sys", rename_all = "lowercase")]
pub enum Sys {
    Ping {
        probe_id: String,
        /// The sender's Unix time in seconds.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        ts: Option<f64>,
    },
    Pong {
        probe_id: String,
    },
}

impl Sys {
    /// Whether `frame` belongs to the `_sys` layer (whatever it says).
    pub fn claimed_by(frame: &Value) -> bool {
        frame
            .as_object()
            .is_some_and(|object| object.contains_key("_sys"))
    }

    /// A ping or pong with a usable probe id; None for any other `_sys` frame (absorbed
    /// without an answer).
    pub fn parse(frame: &Value) -> Option<Sys> {
        let sys = Sys::deserialize(frame).ok()?;
        let id = match &sys {
            Sys::Ping { probe_id, .. } | Sys::Pong { probe_id } => probe_id,
        };
        let length = id.chars().count();
        (1..=MAX_PROBE_ID_CHARS).contains(&length).then_some(sys)
    }

    pub fn to_value(&self) -> Value {
        to_value(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn pings_and_pongs_read_and_write_as_the_reference() {
        let ping = Sys::Ping {
            probe_id: "abc-1".into(),
            ts: Some(1.5),
        };
        assert_eq!(
            ping.to_value(),
            json!({"_sys": "ping", "probe_id": "abc-1", "ts": 1.5})
        );
        assert_eq!(Sys::parse(&ping.to_value()), Some(ping));
        assert_eq!(
            Sys::Pong {
                probe_id: "p".into()
            }
            .to_value(),
            json!({"_sys": "pong", "probe_id": "p"})
        );
        for unusable in [
            json!({"_sys": "ping"}),
            json!({"_sys": "ping", "probe_id": ""}),
            json!({"_sys": "ping", "probe_id": 7}),
            json!({"_sys": "ping", "probe_id": "é".repeat(65)}),
            json!({"_sys": "whatever"}),
        ] {
            assert!(Sys::claimed_by(&unusable));
            assert_eq!(Sys::parse(&unusable), None, "{unusable}");
        }
        assert!(!Sys::claimed_by(&json!({"action": "move"})));
    }
}
