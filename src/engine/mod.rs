//! The flow engine: runs one side of a session for a spec's flow mode, over any
//! [`Channel`] and any [`Hooks`]. Every frame in and out is validated against the spec;
//! hooks only ever see validated messages. One file per flow mode.

mod free;
mod mental_poker;
mod request_response;
mod session;
mod session_loop;
mod simultaneous_round;
mod windows;

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Map, Value, json};

pub use free::{InputPoll, LineInput, LocalInput, ScriptStep, ScriptedInput};
pub use simultaneous_round::commit_hash;
pub use windows::{DEFAULT_PEER_TIMEOUT, DecisionSettings, peer_wait, window_times};

use crate::hooks::{HookError, HookResult, Hooks, HostMetadata, InitContext};
use crate::identity::Identity;
use crate::layout::EngineDir;
use crate::records::EventLog;
use crate::spec::{ControlMode, Direction, Flow, MessageError, Role, Spec, TimeoutAction, Winner};
use crate::transport::{Channel, ChannelError};
use session::Session;

/// Where display text goes (stdout for a real session; interleaved for `protocol test`).
pub type DisplaySink = Arc<dyn Fn(Role, &str) + Send + Sync>;

/// How one side runs.
pub struct EngineConfig {
    pub role: Role,
    pub options: Map<String, Value>,
    /// Extra positional arguments for `proto_init` (manual-decision protocols only).
    pub args: Vec<String>,
    /// This side's engine dir (snapshot.json, decision/, ...); must exist.
    pub state_dir: EngineDir,
    /// Where engine events go (events.jsonl).
    pub events: EventLog,
    pub control_mode: ControlMode,
    /// Sleep between steps (session_loop sends and simultaneous rounds).
    pub pace: Duration,
    pub display: DisplaySink,
    /// Local lines to send in free mode (stdin, inbox, or a script).
    pub local_input: Option<Box<dyn LocalInput>>,
    /// How this side's decision windows behave (human and hybrid control).
    pub decisions: DecisionSettings,
    /// The longest this side waits for the peer's next frame, whatever the spec lets the
    /// peer think (see [`peer_wait`]); `--peer-timeout`.
    pub peer_timeout: Duration,
    /// Who this side is to its peer.
    pub binding: SessionBinding,
}

/// What binds a session beyond its frames: the server's session id, this agent's identity,
/// and the key the peer proved in the handshake. Mental poker binds its transfers to the
/// session id and signs its transcript with the identity; a receipt must come from the peer's
/// key.
#[derive(Debug, Clone)]
pub struct SessionBinding {
    /// Empty for direct play and self-play.
    pub session_id: String,
    pub identity: Identity,
    /// None when no handshake proved one (direct play, self-play).
    pub peer_public_key: Option<String>,
}

impl SessionBinding {
    /// A session with no server and no proved peer, under a throwaway identity.
    pub fn unbound() -> SessionBinding {
        SessionBinding {
            session_id: String::new(),
            identity: Identity::generate(),
            peer_public_key: None,
        }
    }
}

/// How a session ended for this side.
#[derive(Debug, Clone, PartialEq)]
pub struct Outcome {
    pub completed: bool,
    /// Who won, when the game declared it.
    pub winner: Option<Winner>,
    /// Why it ended when that is not plain completion (`peer_disconnected`, `abort`,
    /// `commit_mismatch`, `balance_mismatch`, ...).
    pub reason: Option<String>,
    /// The host's invitation metadata (host side only).
    pub metadata: Option<HostMetadata>,
}

impl Outcome {
    fn ended(completed: bool, reason: Option<&str>) -> Outcome {
        Outcome {
            completed,
            winner: None,
            reason: reason.map(str::to_string),
            metadata: None,
        }
    }

    fn with_winner(mut self, candidates: &[Option<&Value>]) -> Outcome {
        self.winner = winner_of(candidates);
        self
    }
}

/// Why a side stopped with an error (the peer sees a disconnect).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum EngineError {
    #[error("invalid message from the peer ({direction}): {error}")]
    InvalidInbound {
        direction: Direction,
        error: MessageError,
        frame: Value,
    },
    #[error("{source_name} produced an invalid message ({direction}): {error}; it was not sent")]
    InvalidOutbound {
        source_name: String,
        direction: Direction,
        error: MessageError,
        frame: Value,
    },
    #[error(transparent)]
    Hook(#[from] HookError),
    #[error("{0}")]
    Protocol(String),
    #[error("{0}")]
    Channel(ChannelError),
    #[error("{0}")]
    Spec(String),
    /// No frame came from the peer within this side's deadline (the connection may still
    /// be up: a silent peer).
    #[error("the peer sent nothing for {} s", .0.as_secs())]
    PeerTimeout(Duration),
}

/// Runs one side to the end; a spec this build cannot run ([`Spec::ensure_runnable`]) is
/// refused before any hook is called. Peer disconnects and commit/balance mismatches are
/// outcomes (`completed: false` with a reason); everything else that stops the side is an
/// error, recorded in events.jsonl and the snapshot before it is returned. Either way the
/// hooks' state files are complete on disk when it returns.
pub fn run(
    spec: &Spec,
    hooks: &mut dyn Hooks,
    channel: &mut dyn Channel,
    mut config: EngineConfig,
) -> Result<Outcome, EngineError> {
    let unusable = |error: crate::spec::SpecError| EngineError::Spec(error.to_string());
    spec.ensure_runnable().map_err(unusable)?;
    let flow = &spec.model().map_err(unusable)?.flow;
    let local_input = config.local_input.take();
    let desk = windows::desk_for(spec, &config);
    if let Some(desk) = &desk
        && let Some(start) = config.decisions.on_desk.take()
    {
        start(desk.clone());
    }
    let mut session = Session::new(spec, hooks, channel, &config);
    session.desk = desk.clone();
    let result = session.start(flow.mode()).and_then(|metadata| {
        let outcome = match flow {
            Flow::SessionLoop => session_loop::run(&mut session),
            Flow::RequestResponse => request_response::run(&mut session),
            Flow::SimultaneousRound(round) => simultaneous_round::run(&mut session, round),
            Flow::Free => free::run(&mut session, local_input),
            Flow::MentalPoker => mental_poker::run(&mut session),
            // Refused by `ensure_runnable` above: these are not one-to-one sessions.
            Flow::Group(_) | Flow::Realtime(_) => {
                Err(unusable(crate::spec::SpecError::NotRunnable(flow.mode())))
            }
        };
        outcome.map(|outcome| Outcome {
            metadata,
            ..outcome
        })
    });
    let stop = desk.as_ref().and_then(|desk| desk.take_stop());
    let result = match (result, stop) {
        (Err(EngineError::Hook(_)), Some(stop)) => Ok(session.stopped_by_window(&stop)),
        (result, _) => result,
    };
    if let Some(desk) = &desk {
        desk.finish();
    }
    let result = match result {
        Err(EngineError::Channel(ChannelError::Closed(_))) => Ok(session.peer_disconnected()),
        Err(EngineError::PeerTimeout(waited)) => Ok(session.peer_timed_out(waited)),
        Err(error) => {
            session.record_failure(&error);
            Err(error)
        }
        Ok(outcome) => Ok(outcome),
    };
    session.close();
    let flushed = session.hooks.flush_files();
    result.and_then(|outcome| flushed.map(|()| outcome).map_err(EngineError::from))
}

/// The decision configuration handed to `proto_init` for a control mode.
fn decision_config(spec: &Spec, mode: ControlMode) -> Option<Value> {
    let rules = spec.decision_rules();
    let seconds = rules.timeout.as_secs();
    match mode {
        ControlMode::Autonomous => None,
        ControlMode::Human => Some(json!({
            "mode": "manual",
            "control_mode": "human",
            "timeout_seconds": seconds,
            "timeout_action": "abort",
            "require_explicit": true,
        })),
        ControlMode::Hybrid => Some(json!({
            "mode": "auto",
            "control_mode": "hybrid",
            "timeout_seconds": seconds,
            "timeout_action": rules.timeout_action.unwrap_or(TimeoutAction::Fallback).as_str(),
        })),
    }
}

/// The first `winner`/`game_winner` equal to host, guest or draw among the candidates.
fn winner_of(candidates: &[Option<&Value>]) -> Option<Winner> {
    candidates.iter().flatten().find_map(|message| {
        ["winner", "game_winner"].iter().find_map(|key| {
            message
                .get(key)
                .and_then(Value::as_str)
                .and_then(Winner::parse)
        })
    })
}

/// Builds the [`InitContext`] for this side (its desk, when a person steers it); `decisions`
/// says whether the mode has decision windows at all (a chat's `proto_init` gets no decision
/// argument).
fn init_context<'a>(
    spec: &Spec,
    config: &'a EngineConfig,
    decisions: bool,
    desk: Option<Arc<crate::decision::Desk>>,
) -> InitContext<'a> {
    InitContext {
        options: &config.options,
        role: config.role,
        args: &config.args,
        state_dir: config.state_dir.root(),
        decision: if decisions {
            decision_config(spec, config.control_mode)
        } else {
            None
        },
        pass_decision: decisions,
        timing: spec.value().get("timing").cloned(),
        desk,
    }
}

/// A hook result's termination reason, as the events name it.
fn end_reason(result: &HookResult) -> &'static str {
    if result.abort { "abort" } else { "completed" }
}

#[cfg(test)]
mod tests;
