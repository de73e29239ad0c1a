//! One side's engine over an established channel: a fresh engine state dir inside the
//! session dir, the protocol's hooks (loaded ahead, while the network works), free-mode
//! input, and events into the session's log.

use std::time::{Duration, Instant};

use serde_json::{Map, Value, json};
use tokio::runtime::Handle;
use tokio::task::JoinHandle;

use super::handshake::Replay;
use super::reports::{record_end, report_to_server};
use super::{PlaySettings, Protocol, SessionDir, SessionEnd, chat_input, patch};
use crate::client::RestClient;
use crate::engine::{self, DisplaySink, EngineConfig, EventLog, Outcome};
use crate::hooks::interpreter;
use crate::hooks::python_hooks::PythonHooks;
use crate::spec::{FlowMode, Role};
use crate::transport::{
    Channel, DEFAULT_CONNECT_TIMEOUT, EventSink, IrohChannel, PeerLink, SessionEndpoint, Ticket,
};

/// Whether the reference runs its `_sys` heartbeat in this flow mode (free mode never does).
pub(crate) fn heartbeat_applies(protocol: &Protocol) -> bool {
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
    loading: JoinHandle<Result<PythonHooks, String>>,
    runtime: Handle,
}

impl PreloadedHooks {
    /// Starts loading `protocol`'s hooks; call from the runtime.
    fn start(protocol: &Protocol) -> PreloadedHooks {
        let dir = protocol.dir.clone();
        PreloadedHooks {
            loading: tokio::task::spawn_blocking(move || {
                PythonHooks::load(&dir).map_err(|e| e.to_string())
            }),
            runtime: Handle::current(),
        }
    }

    /// The loaded hooks; blocks a non-runtime thread (the session thread) until they are.
    fn wait(self) -> Result<PythonHooks, String> {
        self.runtime
            .block_on(self.loading)
            .map_err(|e| format!("loading the hooks stopped: {e}"))?
    }
}

/// Runs the engine to the end; `Err` carries what stopped this side, in one line.
fn run_engine(
    role: Role,
    protocol: &Protocol,
    hooks: PreloadedHooks,
    options: Map<String, Value>,
    settings: &PlaySettings,
    session_dir: &SessionDir,
    channel: &mut dyn Channel,
) -> Result<Outcome, String> {
    let state_dir = session_dir
        .engine_state_dir(role)
        .map_err(|e| format!("cannot create the engine state dir: {e}"))?;
    let _ = session_dir.update(patch(json!({"state_dir": state_dir, "status": "running"})));
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
    interpreter::with_thread_state(|| engine::run(&protocol.spec, &mut hooks, channel, config))
        .map_err(|e| e.to_string())
}

/// What a handshake leaves for the engine.
pub(crate) struct Handshaken {
    /// The server's session id; empty for a session without one (direct guest).
    pub session_id: String,
    /// A frame already read that the engine must see first (a direct guest's first frame).
    pub replay: Option<Value>,
    /// Whether to run the `_sys` heartbeat (never with a peer that does not filter it).
    pub heartbeat: bool,
}

/// Everything one side needs to play over a connected link.
pub(crate) struct Play {
    pub role: Role,
    pub protocol: Protocol,
    hooks: PreloadedHooks,
    pub options: Map<String, Value>,
    pub settings: PlaySettings,
    pub session_dir: SessionDir,
}

impl Play {
    /// One side of `protocol`, its hooks starting to load now (before dialing or accepting,
    /// so they are ready when the link is). Call from the runtime.
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

/// Runs the handshake and then the engine on a blocking thread, then shuts the endpoint.
/// `Err` is a handshake failure; the engine's own result is inside `Ok`.
pub(crate) async fn play_over(
    endpoint: SessionEndpoint,
    link: PeerLink,
    play: Play,
    handshake: impl FnOnce(&mut IrohChannel, &Play) -> Result<Handshaken, String> + Send + 'static,
) -> Result<(String, Result<Outcome, String>), String> {
    let runtime = tokio::runtime::Handle::current();
    let played = tokio::task::spawn_blocking(move || {
        let mut channel = IrohChannel::new(link, &runtime);
        let shaken = handshake(&mut channel, &play)?;
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
        let result = run_engine(
            role,
            &protocol,
            hooks,
            options,
            &settings,
            &session_dir,
            &mut channel,
        );
        Ok((shaken.session_id, result))
    })
    .await
    .map_err(|e| format!("session thread stopped: {e}"))?;
    endpoint.shutdown().await;
    played
}

/// The end of a played session: reported to the server (when there is one), written to
/// session.json, and announced.
pub(crate) async fn conclude(
    end: SessionEnd,
    client: Option<&RestClient>,
    dir: &SessionDir,
    display: &DisplaySink,
    role: Role,
) -> SessionEnd {
    if let Some(client) = client {
        report_to_server(client, &end, dir).await;
    }
    record_end(&end, dir);
    display(role, "done");
    end
}

/// Heartbeat events (`peer_unresponsive`, `peer_resumed`) into the session's event log.
pub(crate) fn heartbeat_events(events: &EventLog) -> EventSink {
    let events = events.clone();
    std::sync::Arc::new(move |kind: &str, data: Value| events.emit(kind, data, None))
}

/// Records that the peer's connection and stream are open (before the handshake): how
/// packets travel and, for the guest, how long the dial took.
pub(crate) fn announce_connection(
    events: &EventLog,
    endpoint: &SessionEndpoint,
    link: &PeerLink,
    dial: Option<Duration>,
) {
    let mut data = Map::new();
    if let Some(peer) = link.remote_node_id() {
        data.insert("connection".into(), endpoint.connection_type(peer).into());
    }
    if let Some(dial) = dial {
        let micros = u64::try_from(dial.as_micros()).unwrap_or(u64::MAX);
        data.insert("dial_ms".into(), json!(micros as f64 / 1000.0));
    }
    events.emit("peer_connected", Value::Object(data), None);
}

/// A guest's connection: a fresh endpoint dialing the host's ticket, the connection path
/// and dial time recorded as `peer_connected`.
pub(crate) async fn dial(
    settings: &PlaySettings,
    ticket: &Ticket,
    events: &EventLog,
) -> Result<(SessionEndpoint, PeerLink), String> {
    let endpoint = SessionEndpoint::bind(&settings.relay)
        .await
        .map_err(|e| e.to_string())?;
    let dialing = Instant::now();
    let link = endpoint
        .dial(ticket, DEFAULT_CONNECT_TIMEOUT)
        .await
        .map_err(|e| e.to_string())?;
    announce_connection(events, &endpoint, &link, Some(dialing.elapsed()));
    Ok((endpoint, link))
}
