//! The session-proof handshake on the P2P stream, before any protocol message:
//! guest `_session_init` → host `_session_proof` (signed) → guest registers the session with
//! the server → guest `_session_ready`. Each side checks what it can; a failure ends the
//! handshake with a reason and nothing else is sent. It runs async, on the link itself,
//! before an engine thread exists (see `docs/p2p-wire.md#handshake`).

use std::time::Duration;

use serde_json::{Value, json};

use crate::engine::ControlMode;
use crate::identity::{self, Identity, session_canonical};
use crate::spec::fields::is_lower_hex;
use crate::transport::{Channel, ChannelError, PeerLink};

/// How long either side waits for the other's next handshake frame.
pub const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(30);

/// Why the handshake failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HandshakeError {
    #[error("handshake failed: the peer left ({0})")]
    PeerLeft(String),
    #[error("handshake failed: no {0} within {seconds} s", seconds = HANDSHAKE_TIMEOUT.as_secs())]
    Timeout(&'static str),
    #[error("handshake failed: {0}")]
    Refused(String),
}

/// What the host learned from a completed handshake.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HostHandshake {
    /// Empty for a direct (legacy) guest that skipped the handshake.
    pub session_id: String,
    pub guest_public_key: String,
    pub guest_control_mode: ControlMode,
    /// The first frame of a direct guest, to be handed to the engine first.
    pub replay: Option<Value>,
}

/// What the guest learned from the host's proof.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AcceptedProof {
    pub host_signature: String,
    pub host_control_mode: Option<ControlMode>,
}

/// The host's identity and what the invitation it serves says.
pub struct HostSide<'a> {
    pub identity: &'a Identity,
    pub post_id: &'a str,
    pub protocol_id: &'a str,
    pub control_mode: ControlMode,
}

async fn receive(link: &mut PeerLink, what: &'static str) -> Result<Value, HandshakeError> {
    match link.recv_frame(HANDSHAKE_TIMEOUT).await {
        Ok(frame) => Ok(frame),
        Err(ChannelError::Timeout) => Err(HandshakeError::Timeout(what)),
        Err(ChannelError::Closed(reason)) => Err(HandshakeError::PeerLeft(reason)),
        Err(ChannelError::Malformed(reason)) => Err(HandshakeError::Refused(format!(
            "malformed {what}: {reason}"
        ))),
    }
}

async fn send(link: &mut PeerLink, frame: &Value) -> Result<(), HandshakeError> {
    link.send_frame(frame)
        .await
        .map_err(|error| HandshakeError::PeerLeft(error.to_string()))
}

fn flag(frame: &Value, key: &str) -> bool {
    frame.get(key) == Some(&Value::Bool(true))
}

impl HostSide<'_> {
    /// Runs the host's half: proof for a valid `_session_init`, then `_session_ready` whose
    /// session id must be the one both signatures cover. A first frame that is not a
    /// session init (a direct guest) is returned for replay instead.
    pub async fn handshake(&self, link: &mut PeerLink) -> Result<HostHandshake, HandshakeError> {
        let init = receive(link, "_session_init").await?;
        if !init.is_object() {
            return Err(HandshakeError::Refused(
                "the first frame is not a JSON object".into(),
            ));
        }
        if !flag(&init, "_session_init") {
            return Ok(HostHandshake {
                session_id: String::new(),
                guest_public_key: String::new(),
                guest_control_mode: ControlMode::Hybrid,
                replay: Some(init),
            });
        }
        let text = |key: &str| {
            init.get(key)
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string()
        };
        let (guest_key, nonce) = (text("guest_public_key"), text("session_nonce"));
        if !is_lower_hex(&guest_key, 64, 64) {
            return Err(HandshakeError::Refused(
                "guest_public_key is not 64 lowercase hex characters".into(),
            ));
        }
        if !is_lower_hex(&nonce, 16, 64) {
            return Err(HandshakeError::Refused(
                "session_nonce is not 16-64 lowercase hex characters".into(),
            ));
        }
        if guest_key == self.identity.public_key() {
            return Err(HandshakeError::Refused(
                "the guest presented the host's own key".into(),
            ));
        }
        let canonical = session_canonical(
            self.post_id,
            self.identity.public_key(),
            &guest_key,
            self.protocol_id,
            &nonce,
        );
        let proof = json!({
            "_session_proof": true,
            "host_public_key": self.identity.public_key(),
            "host_signature": self.identity.sign_hex(canonical.as_bytes()),
            "protocol_id": self.protocol_id,
            "host_control_mode": self.control_mode.as_str(),
        });
        send(link, &proof).await?;
        let ready = receive(link, "_session_ready").await?;
        if !flag(&ready, "_session_ready") {
            return Err(HandshakeError::Refused(
                "expected _session_ready (artifact transfer is not offered)".into(),
            ));
        }
        let session_id = ready
            .get("session_id")
            .and_then(Value::as_str)
            .unwrap_or("");
        let expected = identity::session_id(&canonical);
        if session_id != expected {
            return Err(HandshakeError::Refused(format!(
                "_session_ready names session {session_id:?}, expected {expected}"
            )));
        }
        Ok(HostHandshake {
            session_id: expected,
            guest_public_key: guest_key,
            guest_control_mode: text("guest_control_mode").parse().unwrap_or_default(),
            replay: None,
        })
    }
}

/// The guest's half, split around the server registration the guest does in between.
pub struct GuestSide<'a> {
    pub identity: &'a Identity,
    pub post_id: &'a str,
    /// The invitation's creator: the only key whose proof is accepted.
    pub host_public_key: &'a str,
    pub protocol_id: &'a str,
    pub control_mode: ControlMode,
    pub nonce: String,
}

impl GuestSide<'_> {
    /// The session canonical both parties sign.
    pub fn canonical(&self) -> String {
        session_canonical(
            self.post_id,
            self.host_public_key,
            self.identity.public_key(),
            self.protocol_id,
            &self.nonce,
        )
    }

    /// Sends `_session_init` and checks the host's `_session_proof`.
    pub async fn request_proof(
        &self,
        link: &mut PeerLink,
    ) -> Result<AcceptedProof, HandshakeError> {
        let init = json!({
            "_session_init": true,
            "guest_public_key": self.identity.public_key(),
            "session_nonce": self.nonce,
            "guest_control_mode": self.control_mode.as_str(),
        });
        send(link, &init).await?;
        let proof = receive(link, "_session_proof").await?;
        self.check_proof(&proof)
    }

    fn check_proof(&self, proof: &Value) -> Result<AcceptedProof, HandshakeError> {
        let refused = |why: String| Err(HandshakeError::Refused(why));
        if !flag(proof, "_session_proof") {
            return refused("the host did not return a session proof".into());
        }
        let text = |key: &str, default: &str| {
            proof
                .get(key)
                .and_then(Value::as_str)
                .unwrap_or(default)
                .to_string()
        };
        let host_key = text("host_public_key", self.host_public_key);
        if host_key != self.host_public_key {
            return refused(format!(
                "the host proved key {host_key}, but the invitation was created by {}",
                self.host_public_key
            ));
        }
        let protocol_id = text("protocol_id", self.protocol_id);
        if protocol_id != self.protocol_id {
            return refused(format!(
                "the host runs protocol {protocol_id}, but the invitation is for {}",
                self.protocol_id
            ));
        }
        let signature = text("host_signature", "");
        identity::verify_hex(
            self.host_public_key,
            self.canonical().as_bytes(),
            &signature,
        )
        .map_err(|error| HandshakeError::Refused(format!("host session signature: {error}")))?;
        Ok(AcceptedProof {
            host_signature: signature,
            host_control_mode: proof
                .get("host_control_mode")
                .and_then(Value::as_str)
                .and_then(|m| m.parse().ok()),
        })
    }

    /// Tells the host the server registered the session.
    pub async fn send_ready(
        &self,
        link: &mut PeerLink,
        session_id: &str,
    ) -> Result<(), HandshakeError> {
        let ready = json!({"_session_ready": true, "session_id": session_id});
        send(link, &ready).await
    }
}

/// A channel that hands out one frame it already received before reading on (the first
/// frame of a direct guest, read while looking for `_session_init`).
pub struct Replay<C> {
    pub first: Option<Value>,
    pub inner: C,
}

impl<C: Channel> Channel for Replay<C> {
    fn send(&mut self, frame: &Value) -> Result<(), ChannelError> {
        self.inner.send(frame)
    }

    fn recv(&mut self) -> Result<Value, ChannelError> {
        match self.first.take() {
            Some(frame) => Ok(frame),
            None => self.inner.recv(),
        }
    }

    fn recv_timeout(&mut self, timeout: Duration) -> Result<Option<Value>, ChannelError> {
        match self.first.take() {
            Some(frame) => Ok(Some(frame)),
            None => self.inner.recv_timeout(timeout),
        }
    }

    fn close(&mut self) -> Result<(), ChannelError> {
        self.inner.close()
    }
}
