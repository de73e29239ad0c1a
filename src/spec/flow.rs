//! Flow modes: how the engine moves messages for a protocol, which modes the linter knows
//! and which this build runs, and the simultaneous-round rule for what a shadow judge
//! compares (shared by the linter and the model, so both always agree).

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

    /// Whether the linter knows this mode's contract shape, so a spec using it can validate
    /// and register. The authoritative modes are only recognised by name.
    pub fn lints(self) -> bool {
        !matches!(
            self,
            FlowMode::AuthoritativeRealtime | FlowMode::AuthoritativeGroup
        )
    }

    /// Whether this build's engine can play this mode (see `Spec::ensure_runnable`).
    pub fn runs(self) -> bool {
        matches!(
            self,
            FlowMode::SessionLoop
                | FlowMode::RequestResponse
                | FlowMode::SimultaneousRound
                | FlowMode::Free
                | FlowMode::MentalPoker
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

/// `flow.round.<JUDGED_FIELDS_KEY>`: the round-result fields a shadow judge compares, when
/// the spec lists them itself.
pub const JUDGED_FIELDS_KEY: &str = "judged_fields";

/// Actions the engine or the handshake own in a simultaneous round: a message carrying one
/// of them is never the round result.
pub const ROUND_MACHINERY_ACTIONS: [&str; 6] =
    ["join", "ready", "commit", "reveal", "error", "end"];

/// Round-result fields that are commit machinery rather than a verdict (the revealed value
/// field is left out too).
pub const UNJUDGED_FIELDS: [&str; 4] = ["action", "round", "hash", "nonce"];

/// What the round-result rule needs to know about a declared message.
pub trait MessageShape {
    /// Whether the host may send it (declared `host_to_guest` or `both`).
    fn host_sends(&self) -> bool;
    /// Its `action` enum values.
    fn actions(&self) -> Vec<&str>;
    /// Its field names, in declaration order.
    fn field_names(&self) -> Vec<&str>;
}

/// The round-result message of a simultaneous round: the only message the host can send
/// that carries none of the [`ROUND_MACHINERY_ACTIONS`]. `None` when there is none, or more
/// than one to choose from.
pub fn round_result<M: MessageShape>(messages: &[M]) -> Option<&M> {
    let mut candidates = messages.iter().filter(|message| {
        message.host_sends()
            && !message
                .actions()
                .iter()
                .any(|action| ROUND_MACHINERY_ACTIONS.contains(action))
    });
    match (candidates.next(), candidates.next()) {
        (Some(only), None) => Some(only),
        _ => None,
    }
}

/// The fields a shadow judge compares when the spec lists none: every field of the round
/// result except [`UNJUDGED_FIELDS`] and the revealed value field.
pub fn derived_judged_fields<M: MessageShape>(result: &M, value_field: &str) -> Vec<String> {
    result
        .field_names()
        .into_iter()
        .filter(|field| *field != value_field && !UNJUDGED_FIELDS.contains(field))
        .map(str::to_string)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Shape(bool, &'static str, &'static [&'static str]);

    impl MessageShape for Shape {
        fn host_sends(&self) -> bool {
            self.0
        }
        fn actions(&self) -> Vec<&str> {
            vec![self.1]
        }
        fn field_names(&self) -> Vec<&str> {
            self.2.to_vec()
        }
    }

    #[test]
    fn modes_lint_and_run_separately() {
        let linting: Vec<&str> = FlowMode::ALL
            .into_iter()
            .filter(|m| m.lints())
            .map(FlowMode::as_str)
            .collect();
        assert_eq!(
            linting,
            [
                "session_loop",
                "request_response",
                "simultaneous_round",
                "free",
                "mental_poker"
            ]
        );
        assert!(FlowMode::MentalPoker.lints() && FlowMode::MentalPoker.runs());
        assert!(!FlowMode::AuthoritativeGroup.runs());
        assert!(FlowMode::ALL.into_iter().all(|m| !m.runs() || m.lints()));
    }

    #[test]
    fn the_round_result_is_the_one_message_no_engine_step_owns() {
        let messages = [
            Shape(false, "join", &["action"]),
            Shape(true, "ready", &["action"]),
            Shape(true, "commit", &["action", "round", "hash"]),
            Shape(true, "reveal", &["action", "round", "die", "nonce"]),
            Shape(true, "result", &["action", "round", "die", "sum", "winner"]),
            Shape(true, "error", &["action", "reason"]),
            Shape(true, "end", &["action"]),
        ];
        let result = round_result(&messages).unwrap();
        assert_eq!(result.1, "result");
        assert_eq!(derived_judged_fields(result, "die"), ["sum", "winner"]);
        let two = [
            Shape(true, "result", &["action"]),
            Shape(true, "aside", &["action"]),
        ];
        assert!(round_result(&two).is_none());
    }
}
