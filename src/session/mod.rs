//! Networked sessions: a host publishing an invitation and serving one guest over iroh, a
//! guest joining it, and the direct guest that dials a ticket without a server. All three
//! prepare what differs (`host`, `join`, `direct`) and then take the one path in
//! [`pipeline`]: connect, handshake, engine thread, report — recording everything in the
//! session directory.

mod chat_input;
mod dir;
pub mod direct;
mod engine_start;
mod error;
pub mod handshake;
pub mod host;
pub mod join;
mod lease;
mod pipeline;
mod prepare;
pub mod process;
mod reports;
pub mod room;

use std::path::PathBuf;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

pub use dir::{SessionRecorder, list_sessions, read_record};
pub use engine_start::{EngineStart, LocalInputSource};
pub use error::SessionError;
pub use prepare::{PreparedProtocol, ProtocolSource, RoomPart, prepare_protocol};

use crate::decision::Desk;
use crate::engine::{DecisionSettings, DisplaySink, Outcome};
use crate::spec::ControlMode;
use crate::spec::Spec;
use crate::transport::{HeartbeatConfig, RelayChoice};

/// How this side plays: the same settings for host, join and the direct guest.
#[derive(Clone)]
pub struct PlaySettings {
    pub control_mode: ControlMode,
    pub pace: Duration,
    /// `None` disables the `_sys` heartbeat (pings are still answered and filtered).
    pub heartbeat: Option<HeartbeatConfig>,
    pub relay: RelayChoice,
    /// Where hook display text goes.
    pub display: DisplaySink,
    /// Free mode reads local lines from stdin (plus the engine dir's inbox.jsonl).
    pub chat_from_stdin: bool,
    /// `--think-seconds`: how long this side's decision windows last.
    pub think: Option<Duration>,
    /// A person watches this side (a terminal that asks, a browser controller): its hybrid
    /// windows wait for an override.
    pub attended: bool,
    /// What the front end does with the side's desk once the engine has made one (the CLI
    /// starts a terminal prompt on it, and keeps it to close its windows on an abort).
    pub on_desk: Option<OnDesk>,
    /// The longest this side waits for the peer's next frame (`--peer-timeout`).
    pub peer_timeout: Duration,
    /// What the front end does once a room's side is under way, given its session dir (the
    /// CLI starts the room's terminal on it in human or hybrid control).
    pub on_room: Option<OnRoom>,
}

impl PlaySettings {
    /// How long this side's decision windows last, by the contract and `options`.
    pub fn window_times(
        &self,
        spec: &crate::spec::Spec,
        options: &serde_json::Map<String, serde_json::Value>,
    ) -> crate::decision::WindowTimes {
        crate::engine::window_times(
            spec,
            options,
            &crate::engine::DecisionSettings {
                think: self.think,
                attended: self.attended,
                on_desk: None,
            },
        )
    }
}

/// See [`PlaySettings::on_desk`].
pub type OnDesk = Arc<dyn Fn(Arc<Desk>) + Send + Sync>;

/// See [`PlaySettings::on_room`].
pub type OnRoom = Arc<dyn Fn(&crate::layout::SessionDir) + Send + Sync>;

impl PlaySettings {
    /// The engine's decision settings for these play settings.
    /// `desk` receives the side's desk once the engine has made one (so that the peer
    /// leaving can close its windows).
    pub(crate) fn decisions(&self, desk: Arc<OnceLock<Arc<Desk>>>) -> DecisionSettings {
        let front_end = self.on_desk.clone();
        DecisionSettings {
            think: self.think,
            attended: self.attended,
            on_desk: Some(Box::new(move |made: Arc<Desk>| {
                let _ = desk.set(made.clone());
                if let Some(front_end) = front_end {
                    front_end(made);
                }
            })),
        }
    }
}

/// A protocol ready to run: its directory and checked spec.
#[derive(Debug, Clone)]
pub struct Protocol {
    pub dir: PathBuf,
    pub spec: Spec,
}

/// How a networked session ended for this side.
#[derive(Debug)]
pub struct SessionEnd {
    pub session_dir: PathBuf,
    pub session_id: String,
    pub post_id: String,
    /// The engine's outcome, or what stopped this side mid-game.
    pub result: Result<Outcome, SessionError>,
}

impl SessionEnd {
    pub fn completed(&self) -> bool {
        matches!(&self.result, Ok(outcome) if outcome.completed)
    }
}
