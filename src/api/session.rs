//! Sessions: the guest's registration of a matched pair, status changes and results.

use serde::{Deserialize, Serialize};

use crate::identity::{self, Identity};
pub use crate::spec::Winner;

/// A session's lifecycle: `matched` until a participant ends it.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Serialize,
    Deserialize,
    clap::ValueEnum,
    strum::IntoStaticStr,
    strum::EnumString,
    strum::Display,
)]
#[strum(serialize_all = "snake_case")]
#[serde(rename_all = "lowercase")]
pub enum SessionStatus {
    #[value(skip)]
    Matched,
    Closed,
    Failed,
    Cancelled,
}

impl SessionStatus {
    pub fn as_str(self) -> &'static str {
        self.into()
    }

    pub fn parse(text: &str) -> Option<SessionStatus> {
        text.parse().ok()
    }
}

/// `POST /sessions` (sent and signed by the guest).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NewSession {
    pub post_id: String,
    pub host_public_key: String,
    pub guest_public_key: String,
    pub protocol_id: String,
    pub session_nonce: String,
    pub host_signature: String,
    pub guest_signature: String,
}

impl NewSession {
    /// The canonical string both parties sign.
    pub fn canonical(&self) -> String {
        identity::session_canonical(
            &self.post_id,
            &self.host_public_key,
            &self.guest_public_key,
            &self.protocol_id,
            &self.session_nonce,
        )
    }

    /// The id the server must answer with.
    pub fn session_id(&self) -> String {
        identity::session_id(&self.canonical())
    }

    /// The guest's side of the proof: adds the guest key and signature to the host's proof.
    pub fn signed_by_guest(
        guest: &Identity,
        post_id: &str,
        host_public_key: &str,
        protocol_id: &str,
        session_nonce: &str,
        host_signature: &str,
    ) -> NewSession {
        let mut session = NewSession {
            post_id: post_id.to_string(),
            host_public_key: host_public_key.to_string(),
            guest_public_key: guest.public_key().to_string(),
            protocol_id: protocol_id.to_string(),
            session_nonce: session_nonce.to_string(),
            host_signature: host_signature.to_string(),
            guest_signature: String::new(),
        };
        session.guest_signature = guest.sign_hex(session.canonical().as_bytes());
        session
    }
}

/// `POST /sessions` → 201.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SessionCreated {
    pub session_id: String,
    #[serde(default)]
    pub status: Option<SessionStatus>,
}

/// `POST /sessions/{id}/status`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StatusUpdate {
    pub status: SessionStatus,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub winner: Option<Winner>,
}

/// `POST /sessions/{id}/result`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ResultReport {
    pub winner: Winner,
}

/// Both parties' result reports and what they add up to.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SessionResult {
    pub host_report: Option<Winner>,
    pub guest_report: Option<Winner>,
    /// `pending` (a report is missing), `agreed` or `disputed`.
    pub outcome: String,
    /// Set when both reports agree.
    pub winner: Option<Winner>,
}

/// `GET /sessions/{id}` (also the body of status and result answers).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Session {
    pub session_id: String,
    pub status: SessionStatus,
    pub protocol_id: String,
    pub post_id: String,
    pub host_public_key: String,
    pub guest_public_key: String,
    /// The guest's nonce and signature over the session canonical, so a host can check the
    /// guest's proof itself (our server includes them; a host refuses a session without them).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_nonce: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub guest_signature: Option<String>,
    #[serde(default)]
    pub created_at: Option<String>,
    #[serde(default)]
    pub updated_at: Option<String>,
    #[serde(default)]
    pub result: Option<SessionResult>,
    #[serde(default)]
    pub rating_count: u64,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_guest_proof_matches_the_canonical() {
        let host = Identity::generate();
        let guest = Identity::generate();
        let canonical =
            identity::session_canonical("p", host.public_key(), guest.public_key(), "x", "n");
        let host_signature = host.sign_hex(canonical.as_bytes());
        let session =
            NewSession::signed_by_guest(&guest, "p", host.public_key(), "x", "n", &host_signature);
        assert_eq!(session.canonical(), canonical);
        assert_eq!(session.session_id(), identity::session_id(&canonical));
        assert!(
            identity::verify_hex(
                guest.public_key(),
                canonical.as_bytes(),
                &session.guest_signature
            )
            .is_ok()
        );
        assert_eq!(
            serde_json::to_string(&StatusUpdate {
                status: SessionStatus::Closed,
                winner: None
            })
            .unwrap(),
            r#"{"status":"closed"}"#
        );
    }
}
