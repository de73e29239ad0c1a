//! How one side's engine starts inside its session dir, written once for a networked side
//! and for each side of `protocol test`: claim the engine dir, record that the engine runs
//! there, and build the engine's configuration from the side's settings.

use std::time::Duration;

use super::SessionRecorder;
use crate::engine::{DecisionSettings, DisplaySink, EngineConfig, LocalInput, SessionBinding};
use crate::layout::EngineDir;
use crate::records::SessionStatus;
use crate::spec::{CheckedOptions, ControlMode, Role, Spec};

/// Where a free-mode side's local lines come from, given its engine dir.
pub type LocalInputSource = Box<dyn FnOnce(&EngineDir) -> Box<dyn LocalInput> + Send>;

/// Everything a side's engine needs besides its hooks and its channel.
pub struct EngineStart {
    pub role: Role,
    pub options: CheckedOptions,
    pub control_mode: ControlMode,
    pub pace: Duration,
    pub display: DisplaySink,
    pub decisions: DecisionSettings,
    pub binding: SessionBinding,
    pub peer_timeout: Duration,
    /// Used only where the flow mode takes local input (free mode).
    pub local_input: LocalInputSource,
}

impl SessionRecorder {
    /// Claims this side's engine dir, records it (`state_dir`, status `running`) and returns
    /// the engine's configuration.
    pub fn start_engine(&self, spec: &Spec, start: EngineStart) -> std::io::Result<EngineConfig> {
        let claimed = self.claim_engine_dir(start.role)?;
        // Absolute for the hooks: the SDK would otherwise resolve a relative data dir's
        // paths against the working directory (a getcwd) at every file it touches.
        let engine_dir = EngineDir::open(std::path::absolute(claimed.root())?);
        let recorded = engine_dir.root().to_path_buf();
        let _ = self.update(|record| {
            record.state_dir = Some(recorded);
            record.status = Some(SessionStatus::Running);
        });
        let local_input = spec
            .capabilities()
            .local_input
            .then(|| (start.local_input)(&engine_dir));
        Ok(EngineConfig {
            role: start.role,
            options: start.options.into_map(),
            args: Vec::new(),
            state_dir: engine_dir,
            events: self.events().clone(),
            control_mode: start.control_mode,
            pace: start.pace,
            display: start.display,
            local_input,
            decisions: start.decisions,
            binding: start.binding,
            peer_timeout: start.peer_timeout,
        })
    }
}
