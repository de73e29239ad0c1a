//! [`run_side`]: the one path every networked side takes, host or guest. Connect (accept the
//! first guest, or dial a ticket), run this side's half of the handshake async on the link,
//! then hand the link to the engine on its own blocking thread (hooks are blocking Python),
//! and finally report the end. Host and guest differ only in [`Connect`] and [`Handshake`].

use std::time::{Duration, Instant};

use serde_json::{Map, Value};
use tokio::runtime::Handle;
use tokio::task::{AbortHandle, JoinHandle};

use super::handshake::{GuestSide, HostSide, Replay};
use super::reports::{record_end, report_to_server};
use super::{PlaySettings, Protocol, SessionDir, SessionEnd, SessionError, chat_input};
use crate::api::session::NewSession;
use crate::client::RestClient;
use crate::engine::{self, ControlMode, EngineConfig, Outcome};
use crate::hooks::interpreter;
use crate::hooks::python_hooks::PythonHooks;
use crate::identity::{self, Identity, new_session_nonce};
use crate::records::{Event, EventLog, SessionStatus};
use crate::spec::{FlowMode, Role};
use crate::transport::{
    DEFAULT_CONNECT_TIMEOUT, EventSink, IrohChannel, PeerLink, SessionEndpoint, Ticket,
};

/// How this side reaches its peer.
pub(crate) enum Connect {
    /// Wait for the first guest on an endpoint whose ticket is published; `renewal` (the
    /// invitation's keep-alive) stops once one arrives.
    Accept {
        endpoint: SessionEndpoint,
        renewal: Option<AbortHandle>,
    },
    /// Dial the host's ticket from a fresh endpoint.
    Dial(Ticket),
}

/// This side's half of the session-proof handshake.
pub(crate) enum Handshake {
    /// The host of a published invitation: proves itself, then expects `_session_ready`.
    Host {
        identity: Identity,
        post_id: String,
        protocol_id: String,
    },
    /// A guest that joined an invitation: checks the host's proof and registers the session
    /// with the server before it tells the host it is ready.
    Guest {
        client: RestClient,
        post_id: String,
        host_public_key: String,
        protocol_id: String,
        /// What the invitation announced, in case the proof does not say.
        host_control_mode: ControlMode,
    },
    /// A direct guest: no handshake, no server.
    Skip,
}

/// What a handshake leaves for the engine.
struct Handshaken {
    /// The server's session id; empty for a session without one (direct guest).
    session_id: String,
    /// A frame already read that the engine must see first (a direct guest's first frame).
    replay: Option<Value>,
    /// Whether to run the `_sys` heartbeat (never with a peer that does not filter it).
    heartbeat: bool,
}

/// One side of a protocol, its hooks starting to load now (before dialing or accepting, so
/// they are ready when the link is).
pub(crate) struct Play {
    pub role: Role,
    pub protocol: Protocol,
    hooks: PreloadedHooks,
    pub options: Map<String, Value>,
    pub settings: PlaySettings,
    pub session_dir: SessionDir,
}

impl Play {
    /// Call from the runtime.
    pub(crate) fn new(
        role: Role,
        protocol: Protocol,
        options: Map<String, Value>,
        settings: PlaySettings,
        session_dir: &SessionDir,
    ) -> Play {
        Play {
            role,
            hooks: PreloadedHooks::start(&protocol),
            protocol,
            options,
            settings,
            session_dir: session_dir.clone(),
        }
    }
}

/// Connects, shakes hands, plays and reports the end to `server` (when the session has one):
/// one side of a networked session. `Err` when the game never started (the caller records
/// why, once); the engine's own result, good or bad, is inside the [`SessionEnd`].
pub(crate) async fn run_side(
    play: Play,
    connect: Connect,
    handshake: Handshake,
    server: Option<&RestClient>,
    post_id: String,
) -> Result<SessionEnd, SessionError> {
    let events = play.session_dir.events().clone();
    let (endpoint, mut link) = match connect {
        Connect::Accept { endpoint, renewal } => {
            let mut endpoint = endpoint;
            let accepted = endpoint.accept_first().await;
            if let Some(renewal) = renewal {
                renewal.abort();
            }
            let link = accepted?;
            announce_connection(&events, &endpoint, &link, None);
            (endpoint, link)
        }
        Connect::Dial(ticket) => {
            let endpoint = SessionEndpoint::bind(&play.settings.relay).await?;
            let dialing = Instant::now();
            let link = endpoint.dial(&ticket, DEFAULT_CONNECT_TIMEOUT).await?;
            announce_connection(&events, &endpoint, &link, Some(dialing.elapsed()));
            (endpoint, link)
        }
    };
    let shaken = match handshake.run(&mut link, &play).await {
        Ok(shaken) => shaken,
        Err(error) => {
            drop(link);
            endpoint.shutdown().await;
            return Err(error);
        }
    };
    let session_id = shaken.session_id.clone();
    let display = play.settings.display.clone();
    let (role, session_dir) = (play.role, play.session_dir.clone());
    let result = tokio::task::spawn_blocking(move || play_on_thread(link, shaken, play))
        .await
        .unwrap_or_else(|e| {
            Err(SessionError::Stopped {
                what: "the session thread",
                detail: e.to_string(),
            })
        });
    endpoint.shutdown().await;
    let end = SessionEnd {
        session_dir: session_dir.root().to_path_buf(),
        session_id,
        post_id,
        result,
    };
    Ok(conclude(end, server, &session_dir, role, &display).await)
}

impl Handshake {
    async fn run(&self, link: &mut PeerLink, play: &Play) -> Result<Handshaken, SessionError> {
        let mode = play.settings.control_mode;
        match self {
            Handshake::Host {
                identity,
                post_id,
                protocol_id,
            } => {
                let side = HostSide {
                    identity,
                    post_id,
                    protocol_id,
                    control_mode: mode,
                };
                let shake = side.handshake(link).await?;
                let direct_guest = shake.replay.is_some();
                announce_peer(
                    play,
                    &shake.session_id,
                    &shake.guest_public_key,
                    shake.guest_control_mode,
                    protocol_id,
                );
                Ok(Handshaken {
                    session_id: shake.session_id,
                    replay: shake.replay,
                    heartbeat: !direct_guest,
                })
            }
            Handshake::Guest {
                client,
                post_id,
                host_public_key,
                protocol_id,
                host_control_mode,
            } => {
                let identity = client.identity();
                let side = GuestSide {
                    identity,
                    post_id,
                    host_public_key,
                    protocol_id,
                    control_mode: mode,
                    nonce: new_session_nonce(),
                };
                let proof = side.request_proof(link).await?;
                let canonical = side.canonical();
                let session = NewSession {
                    post_id: post_id.clone(),
                    host_public_key: host_public_key.clone(),
                    guest_public_key: identity.public_key().to_string(),
                    protocol_id: protocol_id.clone(),
                    session_nonce: side.nonce.clone(),
                    host_signature: proof.host_signature,
                    guest_signature: identity.sign_hex(canonical.as_bytes()),
                };
                let session_id = identity::session_id(&canonical);
                let created = client
                    .create_session(&session)
                    .await
                    .map_err(SessionError::SessionRegistration)?;
                if created.session_id != session_id {
                    return Err(SessionError::SessionIdMismatch {
                        named: created.session_id,
                        expected: session_id,
                    });
                }
                side.send_ready(link, &session_id).await?;
                let peer_mode = proof.host_control_mode.unwrap_or(*host_control_mode);
                announce_peer(play, &session_id, host_public_key, peer_mode, protocol_id);
                Ok(Handshaken {
                    session_id,
                    replay: None,
                    heartbeat: true,
                })
            }
            Handshake::Skip => Ok(Handshaken {
                session_id: String::new(),
                replay: None,
                heartbeat: false,
            }),
        }
    }
}

/// The engine's part, on a blocking thread: the link becomes a channel (with the heartbeat
/// where the reference runs one), the hooks finish loading, and the engine plays to the end.
fn play_on_thread(link: PeerLink, shaken: Handshaken, play: Play) -> Result<Outcome, SessionError> {
    let mut channel = IrohChannel::new(link, &Handle::current());
    if shaken.heartbeat
        && heartbeat_applies(&play.protocol)
        && let Some(config) = play.settings.heartbeat
    {
        channel.start_heartbeat(config, heartbeat_events(play.session_dir.events()));
    }
    let mut channel = Replay {
        first: shaken.replay,
        inner: channel,
    };
    let Play {
        role,
        protocol,
        hooks,
        options,
        settings,
        session_dir,
    } = play;
    let state_dir = session_dir
        .engine_state_dir(role)
        .map_err(|e| SessionError::io("cannot create the engine state dir", e))?;
    let recorded_dir = state_dir.clone();
    let _ = session_dir.update(|record| {
        record.state_dir = Some(recorded_dir);
        record.status = Some(SessionStatus::Running);
    });
    let mut hooks = hooks.wait()?;
    let free = protocol.spec.flow_mode() == Ok(FlowMode::Free);
    let config = EngineConfig {
        role,
        options,
        args: Vec::new(),
        local_input: free.then(|| chat_input::start(state_dir.clone(), settings.chat_from_stdin)),
        state_dir,
        events: session_dir.events().clone(),
        control_mode: settings.control_mode,
        pace: settings.pace,
        display: settings.display.clone(),
    };
    let outcome = interpreter::with_thread_state(|| {
        engine::run(&protocol.spec, &mut hooks, &mut channel, config)
    })?;
    Ok(outcome)
}

/// Whether the reference runs its `_sys` heartbeat in this flow mode (free mode never does).
fn heartbeat_applies(protocol: &Protocol) -> bool {
    matches!(
        protocol.spec.flow_mode(),
        Ok(FlowMode::SessionLoop
            | FlowMode::RequestResponse
            | FlowMode::SimultaneousRound
            | FlowMode::MentalPoker)
    )
}

/// A protocol's hooks loading on a blocking thread. Started before dialing or while waiting
/// for a guest, it takes the embedded interpreter's start and the SDK and hooks.py imports
/// (tens of milliseconds when cold) off the way to the first engine frame.
struct PreloadedHooks {
    loading: JoinHandle<Result<PythonHooks, SessionError>>,
    runtime: Handle,
}

impl PreloadedHooks {
    /// Starts loading `protocol`'s hooks; call from the runtime.
    fn start(protocol: &Protocol) -> PreloadedHooks {
        let dir = protocol.dir.clone();
        PreloadedHooks {
            loading: tokio::task::spawn_blocking(move || Ok(PythonHooks::load(&dir)?)),
            runtime: Handle::current(),
        }
    }

    /// The loaded hooks; blocks a non-runtime thread (the session thread) until they are.
    fn wait(self) -> Result<PythonHooks, SessionError> {
        self.runtime
            .block_on(self.loading)
            .map_err(|e| SessionError::Stopped {
                what: "loading the hooks",
                detail: e.to_string(),
            })?
    }
}

/// The end of a played session: reported to the server (when there is one), written to
/// session.json, and announced.
async fn conclude(
    end: SessionEnd,
    client: Option<&RestClient>,
    dir: &SessionDir,
    role: Role,
    display: &engine::DisplaySink,
) -> SessionEnd {
    if let Some(client) = client {
        report_to_server(client, &end, dir).await;
    }
    record_end(&end, dir);
    display(role, "done");
    end
}

/// Heartbeat events (`peer_unresponsive`, `peer_resumed`) into the session's event log.
fn heartbeat_events(events: &EventLog) -> EventSink {
    let events = events.clone();
    std::sync::Arc::new(move |event| events.emit(event))
}

/// Records that the peer's connection and stream are open (before the handshake): how
/// packets travel and, for the guest, how long the dial took.
fn announce_connection(
    events: &EventLog,
    endpoint: &SessionEndpoint,
    link: &PeerLink,
    dial: Option<Duration>,
) {
    let micros = |dial: Duration| u64::try_from(dial.as_micros()).unwrap_or(u64::MAX);
    events.emit(Event::PeerConnected {
        connection: link
            .remote_node_id()
            .map(|peer| endpoint.connection_type(peer)),
        dial_ms: dial.map(|dial| micros(dial) as f64 / 1000.0),
    });
}

/// Records (session.json first, so whoever sees the event finds the ids) and prints that
/// the handshake completed and who the peer is.
fn announce_peer(
    play: &Play,
    session_id: &str,
    peer_key: &str,
    peer_mode: ControlMode,
    protocol_id: &str,
) {
    let _ = play.session_dir.update(|record| {
        record.session_id = Some(session_id.to_string());
        record.peer_public_key = Some(peer_key.to_string());
        record.peer_control_mode = Some(peer_mode);
    });
    play.session_dir.events().emit(Event::PeerJoined {
        session_id: session_id.to_string(),
        peer_public_key: peer_key.to_string(),
        peer_control_mode: peer_mode,
        protocol_id: protocol_id.to_string(),
    });
    let display = &play.settings.display;
    display(play.role, &format!("session_id: {session_id}"));
    display(
        play.role,
        &format!("peer_joined: {}...", peer_key.get(..16).unwrap_or(peer_key)),
    );
}
