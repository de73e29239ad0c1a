//! Local business logic: the [`Hooks`] interface the engine calls, and its implementation
//! for `hooks.py` files run in an embedded CPython ([`python_hooks`], [`interpreter`]).

mod convert;
pub mod interpreter;
pub mod mental_poker;
mod native;
mod native_decision;
mod output;
pub mod python_hooks;
pub mod skeleton;

use std::path::Path;

use serde_json::{Map, Value};

use crate::spec::Role;

pub use mental_poker::{Card, DealPlan, LocalAction, MentalPokerHooks, TableView, Verdict};

/// What a hook returns: an optional message to send and whether the session ends.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct HookResult {
    pub response: Option<Value>,
    pub completed: bool,
    pub abort: bool,
}

impl HookResult {
    /// A non-empty response (the reference treats `None` and `{}` alike as "nothing to send").
    pub fn message(&self) -> Option<&Value> {
        self.response.as_ref().filter(|r| is_message(r))
    }

    pub fn ends(&self) -> bool {
        self.completed || self.abort
    }
}

/// Whether a hook's message counts as something to send: Python truthiness, where `None`
/// and `{}` both mean "nothing".
pub fn is_message(value: &Value) -> bool {
    match value {
        Value::Null => false,
        Value::Object(map) => !map.is_empty(),
        _ => true,
    }
}

/// Whether a displayed message was sent or received.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, strum::IntoStaticStr, strum::EnumString, strum::Display,
)]
#[strum(serialize_all = "snake_case")]
pub enum Shown {
    Sent,
    Received,
}

impl Shown {
    pub fn as_str(self) -> &'static str {
        self.into()
    }
}

/// The host's invitation metadata (`proto_host_metadata`).
#[derive(Debug, Clone, PartialEq)]
pub struct HostMetadata {
    pub name: String,
    pub tags: Vec<String>,
    /// Invitation type: supply, demand or chat.
    pub invite_type: crate::spec::InvitationType,
    /// Options advertised when the host passes none.
    pub default_options: Map<String, Value>,
}

/// Everything `proto_init` receives.
#[derive(Debug, Clone)]
pub struct InitContext<'a> {
    pub options: &'a Map<String, Value>,
    pub role: Role,
    pub args: &'a [String],
    pub state_dir: &'a Path,
    /// The decision configuration (None in autonomous mode).
    pub decision: Option<Value>,
    /// Whether `proto_init` gets the decision argument at all (free mode calls it without).
    pub pass_decision: bool,
    /// `spec.timing`, assigned to `hooks.timing` after `proto_init`.
    pub timing: Option<Value>,
    /// The side's desk, when a person steers it: handed to the hooks before `proto_init`.
    pub desk: Option<std::sync::Arc<crate::decision::Desk>>,
}

/// A hook that failed: which hook, what happened, and where in hooks.py.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("hook {hook} failed: {message}{}", location.as_ref().map(|l| format!(" ({l})")).unwrap_or_default())]
pub struct HookError {
    pub hook: String,
    pub message: String,
    /// `hooks.py:LINE` of the innermost frame inside the protocol's hooks file.
    pub location: Option<String>,
}

impl HookError {
    pub fn new(hook: &str, message: impl Into<String>) -> HookError {
        HookError {
            hook: hook.to_string(),
            message: message.into(),
            location: None,
        }
    }
}

/// The hooks API as the engine sees it (one implementation per language; `hooks.py` today).
/// Method names follow the Python hook they call.
pub trait Hooks: Send {
    /// `proto_init(options, role, args, state_dir, decision_config)`, then `timing`.
    fn init(&mut self, context: &InitContext) -> Result<(), HookError>;
    fn host_metadata(&mut self) -> Result<HostMetadata, HookError>;
    fn host_handle_join(&mut self, message: &Value) -> Result<HookResult, HookError>;
    fn host_handle(&mut self, message: &Value) -> Result<HookResult, HookError>;
    fn guest_join_message(&mut self) -> Result<Option<Value>, HookError>;
    fn guest_handle_ready(&mut self, message: &Value) -> Result<(), HookError>;
    fn guest_first_action(&mut self) -> Result<Option<Value>, HookError>;
    fn guest_handle(&mut self, message: &Value) -> Result<HookResult, HookError>;
    /// Text to print for a message (None or empty: nothing).
    fn display(&mut self, message: &Value, shown: Shown) -> Result<Option<String>, HookError>;
    /// This side's secret value for a simultaneous round (a string, integer or boolean).
    fn round_value(&mut self, round: u64) -> Result<Value, HookError>;
    fn round_judge(
        &mut self,
        round: u64,
        host: &Value,
        guest: &Value,
    ) -> Result<HookResult, HookError>;
    /// The side-effect-free judge of the shadow-judge protocol; `Ok(None)` when not defined.
    fn round_judge_pure(
        &mut self,
        round: u64,
        host: &Value,
        guest: &Value,
    ) -> Result<Option<Value>, HookError>;
    fn on_message(&mut self, message: &Value) -> Result<(), HookError>;
    fn on_send(&mut self, message: &Value) -> Result<(), HookError>;
    fn on_end(&mut self) -> Result<(), HookError>;
    /// Deep-merges `patch` into snapshot.json (the SDK's `snapshot.update`).
    fn snapshot_update(&mut self, patch: Map<String, Value>) -> Result<(), HookError>;
    /// Sets the snapshot phase with a summary (the SDK's `snapshot.set_phase`).
    fn snapshot_phase(
        &mut self,
        phase: &str,
        summary: &str,
        structured: Map<String, Value>,
    ) -> Result<(), HookError>;
    /// The mental_poker hooks, when this implementation has them.
    fn mental_poker(&mut self) -> Option<&mut dyn MentalPokerHooks> {
        None
    }
    /// Puts every state file written behind on disk and releases this side's (the SDK's
    /// `aigenora.proto.files.flush_all(state_dir)`); the engine calls it when a side ends.
    fn flush_files(&mut self) -> Result<(), HookError> {
        Ok(())
    }
}
