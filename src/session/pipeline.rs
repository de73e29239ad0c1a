//! [`run_side`]: the one path every networked side takes, host or guest. Connect (accept the
//! first guest, or dial a ticket), run this side's half of the handshake async on the link,
//! then hand the link to the engine on its own blocking thread (hooks are blocking Python),
//! and finally report the end. Host and guest differ only in [`Connect`] and [`Handshake`].

use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use tokio::runtime::Handle;
use tokio::task::{JoinHandle, JoinSet};

use super::handshake::{GuestSide, HandshakeError, HostSide, refusal_frame};
use super::lease::Lease;
use super::reports::{announce_end, report_to_server};
use super::{
    EngineStart, PlaySettings, Protocol, SessionEnd, SessionError, SessionRecorder, chat_input,
};
use crate::api::session::NewSession;
use crate::client::RestClient;
use crate::decision::Desk;
use crate::engine::{self, Outcome, SessionBinding};
use crate::hooks::interpreter;
use crate::hooks::python_hooks::PythonHooks;
use crate::identity::{Identity, new_session_nonce};
use crate::records::{Event, EventLog};
use crate::spec::Role;
use crate::spec::{CheckedOptions, ControlMode};
use crate::transport::{
    DEFAULT_CONNECT_TIMEOUT, EventSink, IrohChannel, PeerLink, SessionDriver, SessionEndpoint,
    Ticket,
};

/// How this side reaches its peer.
pub(crate) enum Connect {
    /// Wait for guests on an endpoint whose ticket is published, until one completes the
    /// handshake or the invitation (`lease`, whose keeping stops then) ends.
    Accept {
        endpoint: SessionEndpoint,
        lease: Option<Lease>,
    },
    /// Dial the host's ticket from a fresh endpoint.
    Dial(Ticket),
}

/// This side's half of the session-proof handshake.
#[derive(Clone)]
pub(crate) enum Handshake {
    /// The host of a published invitation: proves itself, expects `_session_ready`, then
    /// confirms the guest with the server.
    Host {
        /// The host's client: it reports the session's end (never paced).
        server: RestClient,
        /// The same client, paced: every dialer's server check goes through it.
        checks: Box<RestClient>,
        post_id: String,
        protocol_id: String,
        control_mode: ControlMode,
    },
    /// A guest that joined an invitation: checks the host's proof and registers the session
    /// with the server before it tells the host it is ready.
    Guest {
        server: RestClient,
        post_id: String,
        host_public_key: String,
        protocol_id: String,
        control_mode: ControlMode,
        /// What the invitation announced, in case the proof does not say.
        host_control_mode: ControlMode,
    },
    /// Direct play without a server, by an explicit choice of both sides.
    Skip,
}

/// Guests whose handshake may run at once while a host waits; later dialers wait in the
/// endpoint's small queue or are turned away as busy.
const MAX_PENDING_GUESTS: usize = 4;
/// Everything one dialer's handshake may take, server confirmation included.
const GUEST_HANDSHAKE_BUDGET: Duration = Duration::from_secs(50);
/// The part of that budget kept back from asking the server (its temporary refusals are
/// retried until then), so that the budget's own deadline never cuts a check short.
const SERVER_CHECK_RESERVE: Duration = Duration::from_secs(5);

/// Who the peer proved to be.
struct Peer {
    session_id: String,
    public_key: String,
    control_mode: ControlMode,
    protocol_id: String,
}

/// What a handshake leaves for the engine.
struct Handshaken {
    /// `None` for direct play (no handshake, no server session).
    peer: Option<Peer>,
}

impl Handshaken {
    fn session_id(&self) -> String {
        self.peer
            .as_ref()
            .map(|peer| peer.session_id.clone())
            .unwrap_or_default()
    }
}

/// One side of a protocol, its hooks starting to load now (before dialing or accepting, so
/// they are ready when the link is).
pub(crate) struct Play {
    pub role: Role,
    pub protocol: Protocol,
    hooks: PreloadedHooks,
    pub options: CheckedOptions,
    pub settings: PlaySettings,
    pub session_dir: SessionRecorder,
}

impl Play {
    /// Call from the runtime.
    pub(crate) fn new(
        role: Role,
        protocol: Protocol,
        options: CheckedOptions,
        settings: PlaySettings,
        session_dir: &SessionRecorder,
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

impl Play {
    /// Waits until the hooks are loaded and checked (concurrently with other set-up): hooks
    /// that cannot play are refused before a side shows a ticket or dials.
    pub(crate) async fn hooks_ready(&mut self) -> Result<(), SessionError> {
        self.hooks.finish().await
    }
}

/// Connects, shakes hands, plays and reports the end to `server` (when the session has one):
/// one side of a networked session. `Err` when the game never started (the caller records
/// why, once); the engine's own result, good or bad, is inside the [`SessionEnd`].
pub(crate) async fn run_side(
    mut play: Play,
    connect: Connect,
    handshake: Handshake,
) -> Result<SessionEnd, SessionError> {
    let server = handshake.server().cloned();
    let post_id = handshake.post_id().to_string();
    let events = play.session_dir.events().clone();
    let identity = handshake.identity();
    let (endpoint, link, shaken) = match connect {
        Connect::Accept {
            mut endpoint,
            lease,
        } => {
            let accepted = accept_guest(&mut endpoint, handshake, lease, &events).await;
            match accepted {
                Ok((link, shaken)) => (endpoint, link, shaken),
                Err(error) => {
                    endpoint.shutdown().await;
                    return Err(error);
                }
            }
        }
        Connect::Dial(ticket) => {
            // Hooks that cannot play are refused before the host is dialed.
            let relay = play.settings.relay.clone();
            let (endpoint, loaded) =
                tokio::join!(SessionEndpoint::bind(&relay), play.hooks_ready());
            let mut endpoint = endpoint?;
            endpoint.record_paths(heartbeat_events(&events));
            if let Err(error) = loaded {
                endpoint.shutdown().await;
                return Err(error);
            }
            let dialing = Instant::now();
            let mut link = endpoint.dial(&ticket, DEFAULT_CONNECT_TIMEOUT).await?;
            announce_connection(&events, &endpoint, &link, Some(dialing.elapsed()));
            match handshake.run(&mut link, Instant::now()).await {
                Ok(shaken) => (endpoint, link, shaken),
                Err(error) => {
                    drop(link);
                    endpoint.shutdown().await;
                    return Err(error);
                }
            }
        }
    };
    if let Some(peer) = &shaken.peer {
        announce_peer(&play, peer);
    }
    let session_id = shaken.session_id();
    let heartbeat = shaken.peer.is_some();
    let binding = SessionBinding {
        session_id: session_id.clone(),
        identity: identity.unwrap_or_else(Identity::generate),
        peer_public_key: shaken.peer.as_ref().map(|peer| peer.public_key.clone()),
    };
    let display = play.settings.display.clone();
    let (role, session_dir) = (play.role, play.session_dir.clone());
    let driver = SessionDriver::current();
    let result =
        tokio::task::spawn_blocking(move || play_on_thread(link, heartbeat, binding, play, driver))
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
    Ok(conclude(end, server.as_ref(), &session_dir, role, &display).await)
}

/// Serves dialers until one completes the handshake: each gets its own bounded handshake
/// (a few at once), and one that fails is told why, recorded, and dropped, while the host
/// keeps waiting. The wait ends without a guest when the endpoint closes, or when the
/// invitation ends: at once when a dialer took it and failed, else (it expired, was
/// cancelled or matched) once the handshakes under way have finished.
async fn accept_guest(
    endpoint: &mut SessionEndpoint,
    handshake: Handshake,
    mut lease: Option<Lease>,
    events: &EventLog,
) -> Result<(PeerLink, Handshaken), SessionError> {
    endpoint.record_paths(heartbeat_events(events));
    let mut knocks = endpoint.knocks(MAX_PENDING_GUESTS)?;
    let mut pending = JoinSet::new();
    let mut ended: Option<SessionError> = None;
    loop {
        if let Some(error) = ended.take_if(|_| pending.is_empty()) {
            return Err(error);
        }
        tokio::select! {
            knock = knocks.next(), if ended.is_none() && pending.len() < MAX_PENDING_GUESTS => {
                let mut link = knock?;
                announce_connection(events, endpoint, &link, None);
                let handshake = handshake.clone();
                pending.spawn(async move {
                    let deadline = Instant::now() + GUEST_HANDSHAKE_BUDGET - SERVER_CHECK_RESERVE;
                    let shaken = tokio::time::timeout(GUEST_HANDSHAKE_BUDGET, handshake.run(&mut link, deadline))
                        .await
                        .unwrap_or(Err(SessionError::Handshake(HandshakeError::Timeout {
                            what: "completed handshake",
                            within: GUEST_HANDSHAKE_BUDGET,
                        })));
                    (link, shaken)
                });
            }
            reason = async { lease.as_mut()?.ended().await }, if ended.is_none() && lease.is_some() => {
                lease = None;
                knocks.close();
                ended = Some(SessionError::Invitation {
                    post_id: handshake.post_id().to_string(),
                    reason: reason.unwrap_or_else(|| "the invitation's keeper stopped".into()),
                });
            }
            Some(done) = pending.join_next() => {
                let Ok((link, shaken)) = done else { continue };
                match shaken {
                    Ok(shaken) => {
                        knocks.close();
                        pending.abort_all();
                        return Ok((link, shaken));
                    }
                    Err(error) => {
                        // The dialer is told why it is refused, not what it cost the host.
                        let reason = match &error {
                            SessionError::InvitationTaken { reason, .. } => reason.clone(),
                            other => other.to_string(),
                        };
                        events.emit(Event::GuestRefused { reason: reason.clone() });
                        if matches!(error, SessionError::InvitationTaken { .. }) {
                            knocks.close();
                            pending.abort_all();
                            link.refuse_and_wait(&refusal_frame(&reason)).await;
                            return Err(error);
                        }
                        link.refuse(&refusal_frame(&reason));
                    }
                }
            }
        }
    }
}

impl Handshake {
    /// The identity this side proves itself with (none in direct play).
    fn identity(&self) -> Option<Identity> {
        match self {
            Handshake::Host { server, .. } | Handshake::Guest { server, .. } => {
                Some(server.identity().clone())
            }
            Handshake::Skip => None,
        }
    }

    /// The client that registers and reports the session (none in direct play).
    fn server(&self) -> Option<&RestClient> {
        match self {
            Handshake::Host { server, .. } | Handshake::Guest { server, .. } => Some(server),
            Handshake::Skip => None,
        }
    }

    /// The invitation this session plays (empty in direct play).
    fn post_id(&self) -> &str {
        match self {
            Handshake::Host { post_id, .. } | Handshake::Guest { post_id, .. } => post_id,
            Handshake::Skip => "",
        }
    }

    /// Runs this side's half; a host asks the server about its dialer until `deadline`.
    async fn run(
        &self,
        link: &mut PeerLink,
        deadline: Instant,
    ) -> Result<Handshaken, SessionError> {
        match self {
            Handshake::Host {
                checks: server,
                post_id,
                protocol_id,
                control_mode,
                ..
            } => {
                let side = HostSide {
                    identity: server.identity(),
                    post_id,
                    protocol_id,
                    control_mode: *control_mode,
                };
                let shake = side.prove(link).await?;
                let ready = side.await_ready(link, &shake).await;
                // One look at the server whether the dialer said ready or failed: it
                // confirms a guest, and shows whether a failed dialer registered its
                // session (and so took the invitation).
                match side.lookup(server, &shake, deadline).await {
                    Ok(session) => {
                        if let Err(error) = ready.and_then(|()| side.check(&shake, &session)) {
                            if session.post_id != *post_id {
                                return Err(error.into());
                            }
                            side.release_taken(server, &shake, &session, deadline).await;
                            return Err(SessionError::InvitationTaken {
                                post_id: post_id.clone(),
                                session_id: shake.session_id,
                                reason: error.to_string(),
                            });
                        }
                    }
                    Err(unknown) => return Err(ready.err().unwrap_or(unknown).into()),
                }
                Ok(Handshaken {
                    peer: Some(Peer {
                        session_id: shake.session_id,
                        public_key: shake.guest_public_key,
                        control_mode: shake.guest_control_mode,
                        protocol_id: protocol_id.clone(),
                    }),
                })
            }
            Handshake::Guest {
                server,
                post_id,
                host_public_key,
                protocol_id,
                control_mode,
                host_control_mode,
            } => {
                let identity = server.identity();
                let side = GuestSide {
                    identity,
                    post_id,
                    host_public_key,
                    protocol_id,
                    control_mode: *control_mode,
                    nonce: new_session_nonce(),
                };
                let proof = side.request_proof(link).await?;
                let session = NewSession::signed_by_guest(
                    identity,
                    post_id,
                    host_public_key,
                    protocol_id,
                    &side.nonce,
                    &proof.host_signature,
                );
                // The client refuses an answer that names another session id.
                server
                    .create_session(&session)
                    .await
                    .map_err(SessionError::SessionRegistration)?;
                let session_id = session.session_id();
                side.send_ready(link, &session_id).await?;
                Ok(Handshaken {
                    peer: Some(Peer {
                        session_id,
                        public_key: host_public_key.clone(),
                        control_mode: proof.host_control_mode.unwrap_or(*host_control_mode),
                        protocol_id: protocol_id.clone(),
                    }),
                })
            }
            Handshake::Skip => Ok(Handshaken { peer: None }),
        }
    }
}

/// The engine's part, on a blocking thread: the link becomes a channel (with the heartbeat
/// where the reference runs one), the hooks finish loading, and the engine plays to the end.
/// Under a [`SessionDriver`] the thread drives the session's runtime while it waits.
fn play_on_thread(
    link: PeerLink,
    heartbeat: bool,
    binding: SessionBinding,
    play: Play,
    driver: Option<SessionDriver>,
) -> Result<Outcome, SessionError> {
    let mut channel = match &driver {
        Some(driver) => IrohChannel::driven(link, driver),
        None => IrohChannel::new(link, &Handle::current()),
    };
    let desk = Arc::new(OnceLock::<Arc<Desk>>::new());
    let peer_left = desk.clone();
    channel.when_peer_gone(move || {
        if let Some(desk) = peer_left.get() {
            desk.cancel("peer_disconnected");
        }
    });
    if heartbeat
        && play.protocol.spec.capabilities().heartbeat
        && let Some(config) = play.settings.heartbeat
    {
        channel.start_heartbeat(config, heartbeat_events(play.session_dir.events()));
    }
    let Play {
        role,
        protocol,
        hooks,
        options,
        settings,
        session_dir,
    } = play;
    let from_stdin = settings.chat_from_stdin;
    let start = EngineStart {
        role,
        options,
        control_mode: settings.control_mode,
        pace: settings.pace,
        display: settings.display.clone(),
        decisions: settings.decisions(desk),
        binding,
        peer_timeout: settings.peer_timeout,
        local_input: Box::new(move |engine_dir| chat_input::start(engine_dir, from_stdin)),
    };
    let config = session_dir
        .start_engine(&protocol.spec, start)
        .map_err(|e| SessionError::io("cannot create the engine state dir", e))?;
    let mut hooks = hooks.wait()?;
    let outcome = interpreter::with_thread_state(|| {
        engine::run(&protocol.spec, &mut hooks, &mut channel, config)
    })?;
    Ok(outcome)
}

/// A protocol's hooks loading on a blocking thread. Started before dialing or while waiting
/// for a guest, it takes the embedded interpreter's start and the SDK and hooks.py imports
/// (tens of milliseconds when cold) off the way to the first engine frame.
enum PreloadedHooks {
    Loading {
        task: JoinHandle<Result<PythonHooks, SessionError>>,
        runtime: Handle,
    },
    Loaded(PythonHooks),
}

impl PreloadedHooks {
    /// Starts loading `protocol`'s hooks (checked for the hooks its flow mode needs); call
    /// from the runtime.
    fn start(protocol: &Protocol) -> PreloadedHooks {
        let protocol = protocol.clone();
        PreloadedHooks::Loading {
            task: tokio::task::spawn_blocking(move || {
                Ok(PythonHooks::load_for(&protocol.dir, &protocol.spec)?)
            }),
            runtime: Handle::current(),
        }
    }

    /// Waits on the runtime until the hooks are loaded, or why they cannot be.
    async fn finish(&mut self) -> Result<(), SessionError> {
        if let PreloadedHooks::Loading { task, .. } = self {
            let hooks = task.await.map_err(loading_stopped)??;
            *self = PreloadedHooks::Loaded(hooks);
        }
        Ok(())
    }

    /// The loaded hooks; blocks a non-runtime thread (the session thread) until they are.
    fn wait(self) -> Result<PythonHooks, SessionError> {
        match self {
            PreloadedHooks::Loading { task, runtime } => {
                runtime.block_on(task).map_err(loading_stopped)?
            }
            PreloadedHooks::Loaded(hooks) => Ok(hooks),
        }
    }
}

fn loading_stopped(error: tokio::task::JoinError) -> SessionError {
    SessionError::Stopped {
        what: "loading the hooks",
        detail: error.to_string(),
    }
}

/// The end of a played session: the closing event, the report to the server (when there is
/// one), session.json, and `done` shown.
async fn conclude(
    end: SessionEnd,
    client: Option<&RestClient>,
    dir: &SessionRecorder,
    role: Role,
    display: &engine::DisplaySink,
) -> SessionEnd {
    announce_end(&end, dir);
    if let Some(client) = client {
        report_to_server(client, &end, dir).await;
    }
    dir.record_outcome(&end.result);
    display(role, "done");
    end
}

/// Transport events (the heartbeat's `peer_unresponsive` and `peer_resumed`, the
/// connection's `path_changed`) into the session's event log.
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
fn announce_peer(play: &Play, peer: &Peer) {
    let _ = play.session_dir.update(|record| {
        record.session_id = Some(peer.session_id.clone());
        record.peer_public_key = Some(peer.public_key.clone());
        record.peer_control_mode = Some(peer.control_mode);
    });
    play.session_dir.events().emit(Event::PeerJoined {
        session_id: peer.session_id.clone(),
        peer_public_key: peer.public_key.clone(),
        peer_control_mode: peer.control_mode,
        protocol_id: peer.protocol_id.clone(),
    });
    let display = &play.settings.display;
    display(play.role, &format!("session_id: {}", peer.session_id));
    let key = &peer.public_key;
    display(
        play.role,
        &format!("peer_joined: {}...", key.get(..16).unwrap_or(key)),
    );
}
