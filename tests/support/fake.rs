//! Misbehaving peers for fault tests, built from the library (identity, invitation, session
//! canonical, REST client, ticket) over a bare iroh stream so they can put any bytes on the
//! wire: a fake host with a real, signed invitation, and a fake guest that dials our host.

use std::time::Duration;

use aigenora::api::invitation::NewInvitation;
use aigenora::api::session::NewSession;
use aigenora::client::RestClient;
use aigenora::identity::{Identity, session_canonical};
use aigenora::transport::Ticket;
use serde_json::{Value, json};
use tokio::runtime::Runtime;

use super::net::{Net, SESSION_LIMIT};
use super::server::signed;
use super::transport::{RawHost, RawPeer, raw_guest, raw_host, runtime};

/// One side of a raw session stream, reading whole lines.
pub struct Wire<'a> {
    runtime: &'a Runtime,
    peer: RawPeer,
    buffered: Vec<u8>,
}

impl Wire<'_> {
    /// The next non-blank line as JSON (the guest opens with a blank line).
    pub fn next_frame(&mut self) -> Value {
        loop {
            if let Some(end) = self.buffered.iter().position(|&b| b == b'\n') {
                let line: Vec<u8> = self.buffered.drain(..=end).collect();
                if line.iter().all(u8::is_ascii_whitespace) {
                    continue;
                }
                return serde_json::from_slice(&line).expect("the peer sends JSON lines");
            }
            let mut chunk = [0u8; 4096];
            let read = self.runtime.block_on(async {
                tokio::time::timeout(SESSION_LIMIT, self.peer.recv.read(&mut chunk)).await
            });
            match read {
                Ok(Ok(Some(n))) => self.buffered.extend_from_slice(&chunk[..n]),
                other => panic!("the peer's stream ended early: {other:?}"),
            }
        }
    }

    /// Writes exact bytes.
    fn write(&mut self, bytes: &[u8]) {
        self.runtime
            .block_on(self.peer.send.write_all(bytes))
            .expect("write to the peer");
    }

    /// Writes bytes the peer may refuse halfway (it can hang up before reading them all).
    pub fn write_until_refused(&mut self, bytes: &[u8]) {
        let _ = self.runtime.block_on(self.peer.send.write_all(bytes));
    }

    pub fn send(&mut self, frame: &Value) {
        let mut line = serde_json::to_vec(frame).unwrap();
        line.push(b'\n');
        self.write(&line);
    }

    /// Completes the guest's half of the handshake honestly as `guest` (a registered
    /// identity): init, check nothing, register the session with the server at `server`,
    /// ready. Returns the session id.
    pub fn authenticate(&mut self, server: &str, guest: &Identity, post_id: &str) -> String {
        let session_id = self.register(server, guest, post_id);
        self.send(&json!({"_session_ready": true, "session_id": session_id}));
        session_id
    }

    /// The guest's half up to its registration with the server (which matches the
    /// invitation), without telling the host: init, proof, `POST /sessions`. Returns the
    /// session id.
    pub fn register(&mut self, server: &str, guest: &Identity, post_id: &str) -> String {
        let nonce = "00112233445566778899aabbccddeeff";
        self.send(
            &json!({"_session_init": true, "guest_public_key": guest.public_key(),
            "session_nonce": nonce, "guest_control_mode": "autonomous"}),
        );
        let proof = self.next_frame();
        assert_eq!(proof["_session_proof"], true, "{proof}");
        let text = |key: &str| proof[key].as_str().unwrap().to_string();
        let session = NewSession::signed_by_guest(
            guest,
            post_id,
            &text("host_public_key"),
            &text("protocol_id"),
            nonce,
            &text("host_signature"),
        );
        let body = serde_json::to_value(&session).unwrap();
        let created =
            self.runtime
                .block_on(signed(server, guest, "POST", "/api/v1/sessions", &body));
        assert_eq!(created.status, 201, "{:?}", created.body);
        session.session_id()
    }

    /// Sends `_session_init` for `key` and returns the host's answer.
    pub fn init(&mut self, key: &str, nonce: &str) -> Value {
        self.send(&json!({"_session_init": true, "guest_public_key": key,
            "session_nonce": nonce, "guest_control_mode": "autonomous"}));
        self.next_frame()
    }

    /// Writes `lines` one after another for at most `budget` (a peer that stops reading
    /// holds us back); returns how many bytes went out.
    pub fn flood(&mut self, lines: impl Iterator<Item = Vec<u8>>, budget: Duration) -> usize {
        let deadline = std::time::Instant::now() + budget;
        let mut written = 0;
        for line in lines {
            let left = deadline.saturating_duration_since(std::time::Instant::now());
            let wrote = self.runtime.block_on(async {
                tokio::time::timeout(left, self.peer.send.write_all(&line)).await
            });
            match wrote {
                Ok(Ok(())) => written += line.len(),
                _ => break,
            }
        }
        written
    }

    /// The application close code, if the peer closes the connection within `limit`.
    pub fn closed_within(&self, limit: Duration) -> Option<u64> {
        let closed = self
            .runtime
            .block_on(async { tokio::time::timeout(limit, self.peer.connection.closed()).await });
        match closed {
            Ok(iroh::endpoint::ConnectionError::ApplicationClosed(close)) => {
                Some(close.error_code.into_inner())
            }
            _ => None,
        }
    }

    /// Waits until the peer closes the connection (it gave up on us).
    pub fn wait_closed(&self) {
        let closed = self.runtime.block_on(async {
            tokio::time::timeout(SESSION_LIMIT, self.peer.connection.closed()).await
        });
        assert!(closed.is_ok(), "the peer never closed the connection");
    }
}

/// A host with a registered identity and a valid invitation for `protocol_id` whose ticket
/// points at a bare iroh endpoint this test drives by hand.
pub struct FakeHost {
    runtime: Runtime,
    raw: RawHost,
    pub identity: Identity,
    pub client: RestClient,
    pub post_id: String,
    pub protocol_id: String,
    /// What the invitations advertise.
    pub options: serde_json::Map<String, Value>,
}

impl FakeHost {
    pub fn publish(net: &Net, protocol_id: &str) -> FakeHost {
        FakeHost::publish_with_options(net, protocol_id, serde_json::Map::new())
    }

    pub fn publish_with_options(
        net: &Net,
        protocol_id: &str,
        options: serde_json::Map<String, Value>,
    ) -> FakeHost {
        let runtime = runtime();
        let (identity, client) = runtime.block_on(net.server.registered("mallory"));
        let raw = runtime.block_on(raw_host());
        let mut host = FakeHost {
            runtime,
            raw,
            identity,
            client,
            post_id: String::new(),
            protocol_id: protocol_id.to_string(),
            options,
        };
        host.publish_again();
        host
    }

    /// Posts a new invitation for the same endpoint; later proofs are for this one.
    pub fn publish_again(&mut self) {
        let ticket = self.raw.ticket.to_string();
        let mut invitation = NewInvitation::signed(&self.identity, &self.protocol_id, &ticket);
        invitation.options = self.options.clone();
        let lease = self
            .runtime
            .block_on(self.client.create_invitation(&invitation))
            .expect("the server takes the fake host's invitation");
        self.post_id = lease.post_id;
    }

    /// Waits for the next guest to connect and open its stream.
    pub fn accept(&self) -> Wire<'_> {
        let peer = self
            .runtime
            .block_on(async { tokio::time::timeout(SESSION_LIMIT, self.raw.accept()).await })
            .expect("a guest connects");
        Wire {
            runtime: &self.runtime,
            peer,
            buffered: Vec::new(),
        }
    }

    /// The session canonical for a guest's `_session_init`.
    pub fn canonical(&self, init: &Value) -> String {
        session_canonical(
            &self.post_id,
            self.identity.public_key(),
            init["guest_public_key"].as_str().unwrap(),
            &self.protocol_id,
            init["session_nonce"].as_str().unwrap(),
        )
    }

    /// The proof an honest host would send for this `_session_init`.
    pub fn proof(&self, init: &Value) -> Value {
        json!({
            "_session_proof": true,
            "host_public_key": self.identity.public_key(),
            "host_signature": self.identity.sign_hex(self.canonical(init).as_bytes()),
            "protocol_id": self.protocol_id,
            "host_control_mode": "hybrid",
        })
    }

    /// Runs a future on this host's runtime (REST calls from the test body).
    pub fn block_on<F: std::future::Future>(&self, future: F) -> F::Output {
        self.runtime.block_on(future)
    }
}

/// A guest that dials our host's ticket (from its invitation) and writes whatever it likes.
pub struct FakeGuest {
    runtime: Runtime,
}

impl FakeGuest {
    pub fn new() -> FakeGuest {
        FakeGuest { runtime: runtime() }
    }

    /// Runs a future on this guest's runtime (REST calls from the test body).
    pub fn block_on<F: std::future::Future>(&self, future: F) -> F::Output {
        self.runtime.block_on(future)
    }

    /// Dials the host of `post_id` as published on the server.
    pub fn dial(&self, client: &RestClient, post_id: &str) -> Wire<'_> {
        let ticket = self.ticket(client, post_id);
        self.dial_ticket(&ticket)
    }

    /// The ticket of `post_id`, read from the server.
    pub fn ticket(&self, client: &RestClient, post_id: &str) -> Ticket {
        let invitation = self
            .runtime
            .block_on(client.invitation(post_id))
            .expect("the invitation");
        invitation.verified_ticket().unwrap().parse().unwrap()
    }

    /// Dials a host's ticket.
    pub fn dial_ticket(&self, ticket: &Ticket) -> Wire<'_> {
        let peer = self.runtime.block_on(async {
            tokio::time::timeout(Duration::from_secs(30), raw_guest(ticket))
                .await
                .expect("the host answers")
        });
        Wire {
            runtime: &self.runtime,
            peer,
            buffered: Vec::new(),
        }
    }
}
