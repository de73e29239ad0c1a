//! One side's engine over an established channel: a fresh engine state dir inside the
//! session dir, the protocol's hooks (loaded ahead, while the network works), free-mode
//! input, and events into the session's log.

use serde_json::{Map, Value, json};
use tokio::runtime::Handle;
use tokio::task::JoinHandle;

use super::{PlaySettings, Protocol, SessionDir, chat_input, patch};
use crate::engine::{self, EngineConfig, Outcome};
use crate::hooks::python_hooks::PythonHooks;
use crate::spec::{FlowMode, Role};
use crate::transport::Channel;

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
pub(crate) struct PreloadedHooks {
    loading: JoinHandle<Result<PythonHooks, String>>,
    runtime: Handle,
}

impl PreloadedHooks {
    /// Starts loading `protocol`'s hooks; call from the runtime.
    pub(crate) fn start(protocol: &Protocol) -> PreloadedHooks {
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
pub(crate) fn run_engine(
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
    engine::run(&protocol.spec, &mut hooks, channel, config).map_err(|e| e.to_string())
}
