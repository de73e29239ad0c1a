//! The session-proof handshake on the P2P stream, before any protocol message:
//! guest `_session_init` → host `_session_proof` (signed) → guest registers the session with
//! the server → guest `_session_ready` → the host confirms the session with the server.
//! Each side checks what it can; a host refuses a dialer with a `_session_error` frame, and
//! nothing else is sent. It runs async, on the link itself, before an engine thread exists;
//! frames are held to the small pre-authentication size limit until it succeeds (see
//! `docs/p2p-wire.md#handshake` and `docs/SECURITY.md`).

use std::time::{Duration, Instant};

use serde_json::Value;

use crate::api::session::{Session, SessionStatus};
use crate::client::{RestClient, retrying};
use crate::identity::{self, Identity, session_canonical};
use crate::spec::ControlMode;
use crate::spec::fields::is_lower_hex;
use crate::transport::{ChannelError, PeerLink};
use crate::wire::handshake::{
    ProofAnswer, SessionInit, SessionProof, SessionReady, SessionRefusal,
};
use crate::wire::{FrameError, Marker};

/// How long a dialer may take to send `_session_init` (the reference sends it at once).
pub const INIT_TIMEOUT: Duration = Duration::from_secs(10);
/// How long either side waits for the other's next handshake frame after that (the guest
/// registers the session with the server in between).
pub const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(30);

/// Why the handshake failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HandshakeError {
    #[error("handshake failed: the peer left ({0})")]
    PeerLeft(String),
    #[error("handshake failed: no {what} within {} s", .within.as_secs())]
    Timeout {
        what: &'static str,
        within: Duration,
    },
    #[error("handshake failed: {0}")]
    Refused(String),
    /// The host could not ask the server about the session before the handshake's time ran
    /// out (it retried the server's temporary refusals until then).
    #[error("handshake failed: cannot confirm the session with the server: {0}")]
    ServerUnavailable(String),
    /// The server has no session by the id the dialer's `_session_ready` named.
    #[error("handshake failed: the server has no session {0}: the guest did not register it")]
    Unregistered(String),
}

/// What the host learned from a dialer's `_session_init`, and (once `_session_ready` came
/// and the server confirmed it) from a completed handshake.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HostHandshake {
    /// The id of the only session this dialer can register: the hash of the canonical.
    pub session_id: String,
    pub guest_public_key: String,
    pub guest_control_mode: ControlMode,
    /// The session canonical both parties signed.
    pub canonical: String,
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

async fn receive(
    link: &mut PeerLink,
    what: &'static str,
    within: Duration,
) -> Result<Value, HandshakeError> {
    match link.recv_frame(within).await {
        Ok(frame) => Ok(frame),
        Err(ChannelError::Timeout) => Err(HandshakeError::Timeout { what, within }),
        Err(ChannelError::Closed(reason)) => Err(HandshakeError::PeerLeft(reason)),
        Err(ChannelError::Malformed(reason)) => Err(HandshakeError::Refused(format!(
            "malformed {what}: {reason}"
        ))),
        Err(error @ ChannelError::Backlog { .. }) => {
            Err(HandshakeError::PeerLeft(error.to_string()))
        }
    }
}

async fn send(link: &mut PeerLink, frame: &Value) -> Result<(), HandshakeError> {
    link.send_frame(frame)
        .await
        .map_err(|error| HandshakeError::PeerLeft(error.to_string()))
}

/// The frame a refused dialer gets: why, in one line.
pub fn refusal_frame(reason: &str) -> Value {
    SessionRefusal::new(reason).to_value()
}

fn malformed(error: FrameError) -> HandshakeError {
    HandshakeError::Refused(error.to_string())
}

impl HostSide<'_> {
    /// The host's first half: a valid `_session_init` gets the signed proof. A dialer that
    /// skips the handshake is refused: a published invitation is only played after it.
    pub async fn prove(&self, link: &mut PeerLink) -> Result<HostHandshake, HandshakeError> {
        let init = receive(link, "_session_init", INIT_TIMEOUT).await?;
        if !SessionInit::claimed_by(&init) {
            return Err(HandshakeError::Refused(
                "the first frame is not a _session_init (this host serves a published \
                 invitation: dial it with `aigenora join`)"
                    .into(),
            ));
        }
        let init = SessionInit::parse(&init).map_err(malformed)?;
        let (guest_key, nonce) = (init.guest_public_key, init.session_nonce);
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
        let proof = SessionProof {
            marker: Marker,
            host_public_key: Some(self.identity.public_key().to_string()),
            host_signature: self.identity.sign_hex(canonical.as_bytes()),
            protocol_id: Some(self.protocol_id.to_string()),
            host_control_mode: Some(self.control_mode),
        };
        send(link, &proof.to_value()).await?;
        Ok(HostHandshake {
            session_id: identity::session_id(&canonical),
            guest_public_key: guest_key,
            guest_control_mode: init.guest_control_mode,
            canonical,
        })
    }

    /// The second half on the link: `_session_ready` must name exactly the session id both
    /// signatures cover.
    pub async fn await_ready(
        &self,
        link: &mut PeerLink,
        shake: &HostHandshake,
    ) -> Result<(), HandshakeError> {
        let ready = receive(link, "_session_ready", HANDSHAKE_TIMEOUT).await?;
        if ready.get("_session_ready") != Some(&Value::Bool(true)) {
            return Err(HandshakeError::Refused(
                "expected _session_ready (artifact transfer is not offered)".into(),
            ));
        }
        let session_id = SessionReady::parse(&ready).map_err(malformed)?.session_id;
        if session_id != shake.session_id {
            return Err(HandshakeError::Refused(format!(
                "_session_ready names session {session_id:?}, expected {}",
                shake.session_id
            )));
        }
        Ok(())
    }

    /// The server's record of the session the dialer's handshake covers. The server's
    /// temporary refusals (429, 503, unreachable) are retried until `deadline`: a guest is
    /// not refused for the host's own trouble with the server while time is left.
    pub async fn lookup(
        &self,
        server: &RestClient,
        shake: &HostHandshake,
        deadline: Instant,
    ) -> Result<Session, HandshakeError> {
        match retrying(deadline, || server.session(&shake.session_id)).await {
            Ok(session) => Ok(session),
            Err(error) if error.status() == Some(404) => {
                Err(HandshakeError::Unregistered(shake.session_id.clone()))
            }
            Err(error) => Err(HandshakeError::ServerUnavailable(error.to_string())),
        }
    }

    /// Confirms from the server's record what the guest claimed: the session exists, is
    /// still matched, names this post, this host, this protocol and the key the guest
    /// presented, and the guest's signature over the canonical verifies (a record without
    /// it confirms nothing). Only then is the guest who it says it is.
    pub fn check(&self, shake: &HostHandshake, session: &Session) -> Result<(), HandshakeError> {
        let refused = |why: String| Err(HandshakeError::Refused(why));
        let checks = [
            ("post", session.post_id.as_str(), self.post_id),
            (
                "host",
                session.host_public_key.as_str(),
                self.identity.public_key(),
            ),
            (
                "guest key",
                session.guest_public_key.as_str(),
                shake.guest_public_key.as_str(),
            ),
            ("protocol", session.protocol_id.as_str(), self.protocol_id),
        ];
        for (what, recorded, expected) in checks {
            if recorded != expected {
                return refused(format!(
                    "the server's session {} names {what} {recorded:?}, expected {expected}",
                    shake.session_id
                ));
            }
        }
        if session.status != SessionStatus::Matched {
            return refused(format!(
                "the server's session {} is {}, not matched",
                shake.session_id,
                session.status.as_str()
            ));
        }
        let Some(signature) = &session.guest_signature else {
            return refused(format!(
                "the server's session {} shows no guest signature to verify",
                shake.session_id
            ));
        };
        identity::verify_hex(
            &shake.guest_public_key,
            shake.canonical.as_bytes(),
            signature,
        )
        .map_err(|error| {
            HandshakeError::Refused(format!("the guest's session signature: {error}"))
        })?;
        Ok(())
    }

    /// A dialer that failed past its proof but registered its session (`session`, a record
    /// for this post) took the invitation: the server offers it to nobody else. A session
    /// still `matched` is reported failed, which closes it and the invitation.
    pub async fn release_taken(
        &self,
        server: &RestClient,
        shake: &HostHandshake,
        session: &Session,
        deadline: Instant,
    ) {
        if session.status == SessionStatus::Matched {
            let failed =
                || server.set_session_status(&shake.session_id, SessionStatus::Failed, None);
            let _ = retrying(deadline, failed).await;
        }
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
        let init = SessionInit::new(self.identity.public_key(), &self.nonce, self.control_mode);
        send(link, &init.to_value()).await?;
        let proof = receive(link, "_session_proof", HANDSHAKE_TIMEOUT).await?;
        self.check_proof(&proof)
    }

    fn check_proof(&self, proof: &Value) -> Result<AcceptedProof, HandshakeError> {
        let refused = |why: String| Err(HandshakeError::Refused(why));
        let proof = match ProofAnswer::parse(proof).map_err(malformed)? {
            ProofAnswer::Proof(proof) => proof,
            ProofAnswer::Refused(refusal) => {
                return refused(format!(
                    "the host refused the session: {:?}",
                    refusal.reason
                ));
            }
        };
        let host_key = proof
            .host_public_key
            .as_deref()
            .unwrap_or(self.host_public_key);
        if host_key != self.host_public_key {
            return refused(format!(
                "the host proved key {host_key:?}, but the invitation was created by {}",
                self.host_public_key
            ));
        }
        let protocol_id = proof.protocol_id.as_deref().unwrap_or(self.protocol_id);
        if protocol_id != self.protocol_id {
            return refused(format!(
                "the host runs protocol {protocol_id:?}, but the invitation is for {}",
                self.protocol_id
            ));
        }
        identity::verify_hex(
            self.host_public_key,
            self.canonical().as_bytes(),
            &proof.host_signature,
        )
        .map_err(|error| HandshakeError::Refused(format!("host session signature: {error}")))?;
        Ok(AcceptedProof {
            host_signature: proof.host_signature,
            host_control_mode: proof.host_control_mode,
        })
    }

    /// Tells the host the server registered the session.
    pub async fn send_ready(
        &self,
        link: &mut PeerLink,
        session_id: &str,
    ) -> Result<(), HandshakeError> {
        send(link, &SessionReady::new(session_id).to_value()).await
    }
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::*;
    use crate::client::stub::{Answer, Stub};

    const POST: &str = "post1";
    const NONCE: &str = "00112233445566778899aabbccddeeff";

    fn protocol_id() -> String {
        "ab".repeat(32)
    }

    /// The host, the guest, and the handshake the host holds once `_session_ready` came.
    fn parties() -> (Identity, Identity, HostHandshake) {
        let (host, guest) = (Identity::generate(), Identity::generate());
        let canonical = session_canonical(
            POST,
            host.public_key(),
            guest.public_key(),
            &protocol_id(),
            NONCE,
        );
        let shake = HostHandshake {
            session_id: identity::session_id(&canonical),
            guest_public_key: guest.public_key().to_string(),
            guest_control_mode: ControlMode::default(),
            canonical,
        };
        (host, guest, shake)
    }

    /// The server's record of the handshake's session, as our server answers it.
    fn record(host: &Identity, shake: &HostHandshake, status: &str, signature: Value) -> Value {
        json!({"session_id": shake.session_id, "status": status, "protocol_id": protocol_id(),
            "post_id": POST, "host_public_key": host.public_key(),
            "guest_public_key": shake.guest_public_key, "session_nonce": NONCE,
            "guest_signature": signature})
    }

    /// Runs the host's server check against a stub answering `answer`, with `budget`.
    async fn confirm_with(
        host: &Identity,
        shake: &HostHandshake,
        budget: Duration,
        answer: impl Fn(usize) -> Answer + Send + Sync + 'static,
    ) -> (Result<(), HandshakeError>, usize) {
        let stub = Stub::start(move |_, before| answer(before)).await;
        let server = RestClient::new(&stub.url, host.clone()).unwrap();
        let protocol = protocol_id();
        let side = HostSide {
            identity: host,
            post_id: POST,
            protocol_id: &protocol,
            control_mode: ControlMode::default(),
        };
        let deadline = Instant::now() + budget;
        let confirmed = match side.lookup(&server, shake, deadline).await {
            Ok(session) => side.check(shake, &session),
            Err(error) => Err(error),
        };
        (confirmed, stub.seen().len())
    }

    fn refusal(result: Result<(), HandshakeError>) -> String {
        match result {
            Err(HandshakeError::Refused(why)) => why,
            other => panic!("expected a refusal, got {other:?}"),
        }
    }

    #[tokio::test]
    async fn a_matched_session_signed_by_the_guest_is_confirmed() {
        let (host, guest, shake) = parties();
        let signed = json!(guest.sign_hex(shake.canonical.as_bytes()));
        let answer = record(&host, &shake, "matched", signed);
        let (confirmed, _) = confirm_with(&host, &shake, Duration::from_secs(5), move |_| {
            (200, None, answer.clone())
        })
        .await;
        confirmed.unwrap();
    }

    #[tokio::test]
    async fn a_signature_by_another_key_or_none_at_all_is_refused() {
        let (host, _, shake) = parties();
        let forged = json!(Identity::generate().sign_hex(shake.canonical.as_bytes()));
        for (signature, why) in [
            (forged, "the guest's session signature"),
            (Value::Null, "shows no guest signature"),
        ] {
            let answer = record(&host, &shake, "matched", signature);
            let (confirmed, _) = confirm_with(&host, &shake, Duration::from_secs(5), move |_| {
                (200, None, answer.clone())
            })
            .await;
            let refused = refusal(confirmed);
            assert!(refused.contains(why), "{refused}");
        }
    }

    #[tokio::test]
    async fn a_session_that_is_no_longer_matched_is_refused() {
        let (host, guest, shake) = parties();
        let signed = json!(guest.sign_hex(shake.canonical.as_bytes()));
        let answer = record(&host, &shake, "failed", signed);
        let (confirmed, _) = confirm_with(&host, &shake, Duration::from_secs(5), move |_| {
            (200, None, answer.clone())
        })
        .await;
        let refused = refusal(confirmed);
        assert!(refused.contains("is failed, not matched"), "{refused}");
    }

    #[tokio::test]
    async fn an_unknown_session_is_unregistered() {
        let (host, _, shake) = parties();
        let missing = json!({"error": "not_found", "message": "session not found"});
        let (confirmed, asked) = confirm_with(&host, &shake, Duration::from_secs(5), move |_| {
            (404, None, missing.clone())
        })
        .await;
        assert_eq!(
            confirmed,
            Err(HandshakeError::Unregistered(shake.session_id.clone()))
        );
        assert_eq!(asked, 1);
    }

    /// The server's "later" is not the guest's fault: 429s are waited out as the server asks.
    #[tokio::test]
    async fn rate_limited_checks_are_retried_until_the_server_answers() {
        let (host, guest, shake) = parties();
        let signed = json!(guest.sign_hex(shake.canonical.as_bytes()));
        let answer = record(&host, &shake, "matched", signed);
        let limited = json!({"error": "rate_limited_key", "message": "too many requests"});
        let (confirmed, asked) = confirm_with(&host, &shake, Duration::from_secs(10), move |n| {
            if n < 2 {
                (429, Some(1), limited.clone())
            } else {
                (200, None, answer.clone())
            }
        })
        .await;
        confirmed.unwrap();
        assert_eq!(asked, 3);
    }

    #[tokio::test]
    async fn a_server_unavailable_past_the_budget_is_the_hosts_trouble() {
        let (host, _, shake) = parties();
        let down = json!({"error": "unavailable", "message": "down"});
        let started = Instant::now();
        let (confirmed, asked) = confirm_with(&host, &shake, Duration::from_secs(2), move |_| {
            (503, None, down.clone())
        })
        .await;
        assert!(
            matches!(confirmed, Err(HandshakeError::ServerUnavailable(_))),
            "{confirmed:?}"
        );
        assert!(asked > 1, "retried");
        assert!(started.elapsed() < Duration::from_secs(3));
    }
}
