//! The spec's `decision` section as a type, with its one default: how long the contract lets
//! a person think over a move, and what their deadline does. Read by the decision windows
//! (this side's person), by the peer deadline (the other side's), and handed to the hooks in
//! `proto_init`'s decision config.

use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// What a human window does when its deadline passes (`decision.timeout_action`).
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Default,
    Serialize,
    Deserialize,
    strum::EnumString,
    strum::IntoStaticStr,
)]
#[serde(rename_all = "lowercase")]
#[strum(serialize_all = "lowercase")]
pub enum TimeoutAction {
    /// Play an automatic move (the agent's intended one, else a random legal value).
    Fallback,
    /// Stop the session without a winner.
    #[default]
    Abort,
    /// Stop the session and give the game to the peer.
    Forfeit,
}

impl TimeoutAction {
    pub fn parse(text: &str) -> Option<TimeoutAction> {
        text.parse().ok()
    }

    pub fn as_str(self) -> &'static str {
        self.into()
    }
}

/// `decision`: the contract's rules for a person's moves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DecisionRules {
    /// How long a person may think over one move (`timeout_seconds`).
    pub timeout: Duration,
    /// What the deadline does, when the spec says (`timeout_action`).
    pub timeout_action: Option<TimeoutAction>,
}

impl DecisionRules {
    /// A person's think time when the spec sets none: the reference's own default.
    pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(120);

    /// Reads `decision` (which the linter has checked: a positive integer of seconds, one of
    /// the three actions).
    pub fn build(spec: &Value) -> DecisionRules {
        let section = spec.get("decision").and_then(Value::as_object);
        let timeout = section
            .and_then(|d| d.get("timeout_seconds"))
            .and_then(Value::as_f64)
            .filter(|s| s.is_finite() && *s > 0.0)
            .and_then(|s| Duration::try_from_secs_f64(s.min(86_400.0)).ok())
            .unwrap_or(DecisionRules::DEFAULT_TIMEOUT);
        let timeout_action = section
            .and_then(|d| d.get("timeout_action"))
            .and_then(Value::as_str)
            .and_then(TimeoutAction::parse);
        DecisionRules {
            timeout,
            timeout_action,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_section_reads_with_one_default() {
        let none = DecisionRules::build(&json!({}));
        assert_eq!(none.timeout, DecisionRules::DEFAULT_TIMEOUT);
        assert_eq!(none.timeout_action, None);
        let set = DecisionRules::build(
            &json!({"decision": {"timeout_seconds": 30, "timeout_action": "forfeit"}}),
        );
        assert_eq!(
            (set.timeout, set.timeout_action),
            (Duration::from_secs(30), Some(TimeoutAction::Forfeit))
        );
        assert_eq!(
            TimeoutAction::parse("fallback"),
            Some(TimeoutAction::Fallback)
        );
        assert_eq!(TimeoutAction::Abort.as_str(), "abort");
    }
}
