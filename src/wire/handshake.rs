//! The session handshake's frames: guest `_session_init` → host `_session_proof` → guest
//! `_session_ready`, and a host's `_session_error` to a dialer it refuses.

use serde::{Deserialize, Deserializer, Serialize};
use serde_json::Value;

use super::{FrameError, Marker, parse, to_value};
use crate::spec::ControlMode;

/// Longest refusal reason a host sends (and a guest shows).
pub const REASON_CHARS: usize = 200;

/// `{"_session_init": true, guest_public_key, session_nonce, guest_control_mode}`: the
/// guest's first frame.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SessionInit {
    #[serde(rename = "_session_init")]
    pub marker: Marker,
    pub guest_public_key: String,
    pub session_nonce: String,
    /// Informational; a missing or unknown mode reads as the default, as the reference does.
    #[serde(default, deserialize_with = "lenient_mode")]
    pub guest_control_mode: ControlMode,
}

/// `{"_session_proof": true, host_public_key, host_signature, protocol_id,
/// host_control_mode}`: the host's signed answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SessionProof {
    #[serde(rename = "_session_proof")]
    pub marker: Marker,
    /// Absent: the invitation's creator (the reference's reading).
    #[serde(default)]
    pub host_public_key: Option<String>,
    pub host_signature: String,
    /// Absent: the invitation's protocol.
    #[serde(default)]
    pub protocol_id: Option<String>,
    /// Informational; an unknown mode reads as none.
    #[serde(default, deserialize_with = "lenient_optional_mode")]
    pub host_control_mode: Option<ControlMode>,
}

/// `{"_session_ready": true, session_id}`: the guest registered the session.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SessionReady {
    #[serde(rename = "_session_ready")]
    pub marker: Marker,
    pub session_id: String,
}

/// `{"_session_error": true, reason}`: a host refusing a dialer, in one line.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SessionRefusal {
    #[serde(rename = "_session_error")]
    pub marker: Marker,
    #[serde(default)]
    pub reason: String,
}

/// What a guest may get back for its `_session_init`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ProofAnswer {
    Proof(SessionProof),
    Refused(SessionRefusal),
}

impl SessionInit {
    pub fn new(guest_public_key: &str, session_nonce: &str, mode: ControlMode) -> SessionInit {
        SessionInit {
            marker: Marker,
            guest_public_key: guest_public_key.to_string(),
            session_nonce: session_nonce.to_string(),
            guest_control_mode: mode,
        }
    }

    /// Whether `frame` claims to be a `_session_init` at all (a dialer that skipped the
    /// handshake sends something else).
    pub fn claimed_by(frame: &Value) -> bool {
        frame.get("_session_init") == Some(&Value::Bool(true))
    }

    pub fn parse(frame: &Value) -> Result<SessionInit, FrameError> {
        parse("_session_init", frame)
    }

    pub fn to_value(&self) -> Value {
        to_value(self)
    }
}

impl SessionProof {
    pub fn to_value(&self) -> Value {
        to_value(self)
    }
}

impl ProofAnswer {
    /// A proof, or a refusal; anything else is malformed.
    pub fn parse(frame: &Value) -> Result<ProofAnswer, FrameError> {
        if frame.get("_session_error") == Some(&Value::Bool(true)) {
            let mut refusal: SessionRefusal = parse("_session_error", frame)?;
            refusal.reason = refusal.reason.chars().take(REASON_CHARS).collect();
            return Ok(ProofAnswer::Refused(refusal));
        }
        if frame.get("_session_proof") != Some(&Value::Bool(true)) {
            return Err(FrameError {
                frame: "_session_proof",
                reason: "the host did not return a session proof".into(),
            });
        }
        parse("_session_proof", frame).map(ProofAnswer::Proof)
    }
}

impl SessionReady {
    pub fn new(session_id: &str) -> SessionReady {
        SessionReady {
            marker: Marker,
            session_id: session_id.to_string(),
        }
    }

    pub fn parse(frame: &Value) -> Result<SessionReady, FrameError> {
        parse("_session_ready", frame)
    }

    pub fn to_value(&self) -> Value {
        to_value(self)
    }
}

impl SessionRefusal {
    /// The refusal of a dialer, its reason cut to one short line.
    pub fn new(reason: &str) -> SessionRefusal {
        SessionRefusal {
            marker: Marker,
            reason: reason.chars().take(REASON_CHARS).collect(),
        }
    }

    pub fn to_value(&self) -> Value {
        to_value(self)
    }
}

fn lenient_mode<'de, D: Deserializer<'de>>(deserializer: D) -> Result<ControlMode, D::Error> {
    Ok(lenient_optional_mode(deserializer)?.unwrap_or_default())
}

fn lenient_optional_mode<'de, D: Deserializer<'de>>(
    deserializer: D,
) -> Result<Option<ControlMode>, D::Error> {
    let value = Value::deserialize(deserializer)?;
    Ok(value.as_str().and_then(ControlMode::parse))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn frames_are_written_as_the_reference_writes_them() {
        let init = SessionInit::new(&"a".repeat(64), "0123456789abcdef", ControlMode::Human);
        assert_eq!(
            init.to_value().to_string(),
            format!(
                r#"{{"_session_init":true,"guest_public_key":"{}","session_nonce":"0123456789abcdef","guest_control_mode":"human"}}"#,
                "a".repeat(64)
            )
        );
        assert_eq!(
            SessionReady::new("s").to_value(),
            json!({"_session_ready": true, "session_id": "s"})
        );
        assert_eq!(
            SessionRefusal::new(&"x".repeat(1000)).to_value()["reason"]
                .as_str()
                .unwrap()
                .len(),
            REASON_CHARS
        );
    }

    #[test]
    fn what_the_reference_leaves_out_reads_as_it_does() {
        let init = SessionInit::parse(&json!({"_session_init": true, "guest_public_key": "k",
            "session_nonce": "n", "guest_control_mode": "robot", "ui_capabilities": {}}))
        .unwrap();
        assert_eq!(init.guest_control_mode, ControlMode::Hybrid);
        let ProofAnswer::Proof(proof) =
            ProofAnswer::parse(&json!({"_session_proof": true, "host_signature": "s"})).unwrap()
        else {
            panic!("a proof")
        };
        assert_eq!((proof.host_public_key, proof.protocol_id), (None, None));
    }

    #[test]
    fn a_malformed_frame_is_refused_with_its_reason() {
        let error =
            SessionInit::parse(&json!({"_session_init": true, "guest_public_key": 7})).unwrap_err();
        assert!(
            error
                .to_string()
                .starts_with("malformed _session_init: invalid type"),
            "{error}"
        );
        let error =
            SessionReady::parse(&json!({"_session_ready": false, "session_id": "s"})).unwrap_err();
        assert!(
            error.to_string().contains("the marker must be true"),
            "{error}"
        );
        let missing = ProofAnswer::parse(&json!({"_session_proof": true})).unwrap_err();
        assert!(missing.reason.contains("host_signature"), "{missing}");
        assert!(matches!(
            ProofAnswer::parse(&json!({"_session_error": true, "reason": "busy"})),
            Ok(ProofAnswer::Refused(refusal)) if refusal.reason == "busy"
        ));
        assert!(ProofAnswer::parse(&json!({"action": "join"})).is_err());
    }
}
