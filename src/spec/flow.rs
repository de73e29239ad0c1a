//! Flow modes: how the engine moves messages for a protocol.

use std::fmt;

use serde_json::Value;

/// A `flow.mode` this project knows about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FlowMode {
    SessionLoop,
    RequestResponse,
    SimultaneousRound,
    Free,
    MentalPoker,
    AuthoritativeRealtime,
    AuthoritativeGroup,
}

impl FlowMode {
    pub const ALL: [FlowMode; 7] = [
        FlowMode::SessionLoop,
        FlowMode::RequestResponse,
        FlowMode::SimultaneousRound,
        FlowMode::Free,
        FlowMode::MentalPoker,
        FlowMode::AuthoritativeRealtime,
        FlowMode::AuthoritativeGroup,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            FlowMode::SessionLoop => "session_loop",
            FlowMode::RequestResponse => "request_response",
            FlowMode::SimultaneousRound => "simultaneous_round",
            FlowMode::Free => "free",
            FlowMode::MentalPoker => "mental_poker",
            FlowMode::AuthoritativeRealtime => "authoritative_realtime",
            FlowMode::AuthoritativeGroup => "authoritative_group",
        }
    }

    pub fn parse(text: &str) -> Option<FlowMode> {
        FlowMode::ALL.into_iter().find(|mode| mode.as_str() == text)
    }

    /// Modes the reference implements but this build does not run yet.
    pub fn is_supported(self) -> bool {
        !matches!(
            self,
            FlowMode::AuthoritativeRealtime | FlowMode::AuthoritativeGroup
        )
    }
}

impl fmt::Display for FlowMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The raw `flow.mode` of a spec: `Ok(None)` means the default (absent, null or "").
pub fn declared_mode(spec: &Value) -> Result<Option<&str>, &Value> {
    let Some(Value::Object(flow)) = spec.get("flow") else {
        return Ok(None);
    };
    match flow.get("mode") {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(mode)) if mode.is_empty() => Ok(None),
        Some(Value::String(mode)) => Ok(Some(mode)),
        Some(other) => Err(other),
    }
}
