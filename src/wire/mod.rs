//! The fixed frames of the peer-to-peer wire, as types (as `api/` is for REST): the session
//! handshake (`_session_init`, `_session_proof`, `_session_ready`, `_session_error`) and the
//! `_sys` heartbeat layer (`ping`, `pong`). Each serialises exactly as the reference writes
//! it and parses what the reference sends, refusing a malformed frame with its reason. The
//! protocol's own frames are validated against the spec instead (`spec::validate_message`).

pub mod group;
pub mod handshake;
pub mod sys;

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;

/// A frame's marker key (`"_session_init": true`): written as `true`, and only `true` reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Marker;

impl Serialize for Marker {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_bool(true)
    }
}

impl<'de> Deserialize<'de> for Marker {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Marker, D::Error> {
        match bool::deserialize(deserializer)? {
            true => Ok(Marker),
            false => Err(serde::de::Error::custom("the marker must be true")),
        }
    }
}

/// Why a frame is not the one expected: what it should have been and what is wrong.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("malformed {frame}: {reason}")]
pub struct FrameError {
    pub frame: &'static str,
    pub reason: String,
}

/// Parses `value` as the frame `T` (named `frame` in errors).
fn parse<T: for<'de> Deserialize<'de>>(
    frame: &'static str,
    value: &Value,
) -> Result<T, FrameError> {
    T::deserialize(value).map_err(|error| FrameError {
        frame,
        reason: error.to_string(),
    })
}

/// A frame as the JSON object it travels as.
fn to_value(frame: &impl Serialize) -> Value {
    serde_json::to_value(frame).expect("a frame always serialises")
}
