//! Decision windows from the engine's side: how long this side's windows last (local
//! settings first, then the options, then the spec, then humane defaults), the desk a
//! steerable side gets for its run, and the clean end of a window that stops the session
//! (a deadline with `abort`/`forfeit`, a decision the hooks refused, an abort).

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Map, Value};

use super::{EngineConfig, Outcome};
use crate::decision::{Desk, WindowStop, WindowTimes};
use crate::records::{Event, TimeoutAction};
use crate::spec::ControlMode;
use crate::spec::{DecisionRules, Role, Spec, Winner};

/// How long a hybrid window waits for an override when a person watches (terminal or
/// browser) and nothing else sets it.
const HYBRID_GRACE_ATTENDED: Duration = Duration::from_secs(10);

/// How long this side waits for the peer's next frame at most unless `--peer-timeout` says
/// otherwise: however long the spec or the options let the peer think, a silent peer costs
/// at most this.
pub const DEFAULT_PEER_TIMEOUT: Duration = Duration::from_secs(300);
/// What the peer's think time gets on top before its silence ends the session (the network,
/// its engine, its hooks).
const PEER_MARGIN: Duration = Duration::from_secs(30);

/// How long this side waits for the peer's next frame: the longest the contract lets a
/// person on the other side think — the spec's `decision.timeout_seconds` (120 s when it
/// sets none), its `timing.max_think_seconds`, the options' `max_think_seconds` — plus a
/// margin, never more than `cap`. Nothing the peer announces (its control mode, its own
/// think time) moves it. A chat (free mode) has no turns: it waits `cap` for the next line
/// either side says.
pub fn peer_wait(spec: &Spec, options: &Map<String, Value>, cap: Duration) -> Duration {
    if !spec
        .flow_mode()
        .is_ok_and(|mode| mode.capabilities().turn_based)
    {
        return cap;
    }
    let timing = spec.value().get("timing").and_then(Value::as_object);
    let think = [
        Some(spec.decision_rules().timeout),
        seconds(timing.and_then(|t| t.get("max_think_seconds"))),
        seconds(options.get("max_think_seconds")),
    ]
    .into_iter()
    .flatten()
    .max()
    .unwrap_or(DecisionRules::DEFAULT_TIMEOUT);
    (think + PEER_MARGIN).min(cap)
}

/// A positive number of seconds (at most a day), when `value` is one.
fn seconds(value: Option<&Value>) -> Option<Duration> {
    value
        .and_then(Value::as_f64)
        .filter(|s| s.is_finite() && *s > 0.0)
        .and_then(|s| Duration::try_from_secs_f64(s.min(86_400.0)).ok())
}

/// How this side's windows behave, chosen locally.
#[derive(Default)]
pub struct DecisionSettings {
    /// `--think-seconds`: every window of this side lasts this long.
    pub think: Option<Duration>,
    /// A person watches this side (a terminal that asks, a browser controller): hybrid
    /// windows wait for an override.
    pub attended: bool,
    /// Called with the side's desk once it exists (to start a terminal prompt).
    pub on_desk: Option<Box<dyn FnOnce(Arc<Desk>) + Send>>,
}

/// The desk of a side whose moves a person makes or may override; none for autonomous
/// sides and free chat.
pub(super) fn desk_for(spec: &Spec, config: &EngineConfig) -> Option<Arc<Desk>> {
    let windows = spec
        .flow_mode()
        .is_ok_and(|mode| mode.capabilities().decision_windows);
    if config.control_mode == ControlMode::Autonomous || !windows {
        return None;
    }
    let times = window_times(spec, &config.options, &config.decisions);
    Some(Desk::new(
        &config.state_dir,
        (spec.clone(), config.role),
        times,
        config.events.clone(),
    ))
}

/// Window lengths: `--think-seconds`; else for a person the options' `max_think_seconds`,
/// else the spec's `decision.timeout_seconds` (120 s when it sets none); for hybrid the options'
/// `min_think_seconds` (the reference's), or 10 s when a person watches, else no wait. A
/// table seat's windows in a room last the same.
pub fn window_times(
    spec: &Spec,
    options: &Map<String, Value>,
    settings: &DecisionSettings,
) -> WindowTimes {
    let rules = spec.decision_rules();
    let human = settings
        .think
        .unwrap_or_else(|| seconds(options.get("max_think_seconds")).unwrap_or(rules.timeout));
    let hybrid = settings.think.unwrap_or_else(|| {
        seconds(options.get("min_think_seconds")).unwrap_or(if settings.attended {
            HYBRID_GRACE_ATTENDED
        } else {
            Duration::ZERO
        })
    });
    let timeout_action = rules.timeout_action.unwrap_or_default();
    WindowTimes {
        human,
        hybrid,
        timeout_action,
    }
}

/// What a stopped window means for the session: the reason, a sentence, and a winner.
pub(super) fn stop_outcome(stop: &WindowStop, peer: Role) -> (String, String, Option<Winner>, u64) {
    let round = |value: &Value| value.as_u64().unwrap_or(0);
    match stop {
        WindowStop::TimedOut { action, window } => {
            let text = format!(
                "no decision for {} before its deadline ({})",
                window.key(),
                action.as_str()
            );
            let forfeit = *action == TimeoutAction::Forfeit;
            let reason = if forfeit {
                "forfeit"
            } else {
                "decision_timeout"
            };
            let winner = forfeit.then(|| Winner::of(peer));
            (reason.into(), text, winner, round(&window.match_value))
        }
        WindowStop::Rejected { window, reason } => (
            "invalid_decision".into(),
            format!(
                "the hooks refused the decision for {}: {reason}",
                window.key()
            ),
            None,
            round(&window.match_value),
        ),
        WindowStop::Cancelled(reason) => (
            reason.clone(),
            format!("a decision window was open when the session ended ({reason})"),
            None,
            0,
        ),
    }
}

/// The `session_ended` event of a stopped window.
pub(super) fn stop_event(reason: &str, detail: &str) -> Event {
    Event::SessionEnded {
        completed: Some(false),
        reason: Some(reason.to_string()),
        peer_reason: None,
        error: None,
        detail: Some(detail.to_string()),
    }
}

/// The outcome of a stopped window.
pub(super) fn stopped(reason: String, winner: Option<Winner>) -> Outcome {
    Outcome {
        completed: false,
        winner,
        reason: Some(reason),
        metadata: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn spec_with(decision: Value) -> Spec {
        let mut value: Value = serde_json::from_str(
            crate::protocols::find("rock-paper-scissors")
                .unwrap()
                .spec_json,
        )
        .unwrap();
        value["decision"] = decision;
        Spec::from_bytes(value.to_string().as_bytes()).unwrap()
    }

    #[test]
    fn the_peer_gets_the_contracts_think_time_and_a_margin_within_our_cap() {
        let cap = DEFAULT_PEER_TIMEOUT;
        let bare = spec_with(json!({"mode": "auto"}));
        assert_eq!(peer_wait(&bare, &Map::new(), cap), Duration::from_secs(150));
        let quick = spec_with(json!({"timeout_seconds": 10}));
        assert_eq!(peer_wait(&quick, &Map::new(), cap), Duration::from_secs(40));
        // A host's options may ask for a day per move: our cap still holds.
        let day = json!({"max_think_seconds": 86_400});
        assert_eq!(peer_wait(&quick, day.as_object().unwrap(), cap), cap);
        assert_eq!(
            peer_wait(&quick, day.as_object().unwrap(), Duration::from_secs(60)),
            Duration::from_secs(60)
        );
    }

    #[test]
    fn a_person_gets_humane_time_unless_told_otherwise() {
        let none = DecisionSettings::default();
        let bare = spec_with(json!({"mode": "auto"}));
        let times = window_times(&bare, &Map::new(), &none);
        assert_eq!(times.human, DecisionRules::DEFAULT_TIMEOUT);
        assert_eq!(times.hybrid, Duration::ZERO);
        assert_eq!(times.timeout_action, TimeoutAction::Abort);
        let declared = spec_with(json!({"timeout_seconds": 90, "timeout_action": "forfeit"}));
        let times = window_times(&declared, &Map::new(), &none);
        assert_eq!(
            (times.human, times.timeout_action),
            (Duration::from_secs(90), TimeoutAction::Forfeit)
        );
        let options = json!({"max_think_seconds": 30, "min_think_seconds": 2});
        let times = window_times(&declared, options.as_object().unwrap(), &none);
        assert_eq!(
            (times.human, times.hybrid),
            (Duration::from_secs(30), Duration::from_secs(2))
        );
        let watched = DecisionSettings {
            attended: true,
            ..DecisionSettings::default()
        };
        assert_eq!(
            window_times(&bare, &Map::new(), &watched).hybrid,
            HYBRID_GRACE_ATTENDED
        );
        let local = DecisionSettings {
            think: Some(Duration::from_secs(5)),
            ..DecisionSettings::default()
        };
        let times = window_times(&declared, options.as_object().unwrap(), &local);
        assert_eq!(
            (times.human, times.hybrid),
            (Duration::from_secs(5), Duration::from_secs(5))
        );
    }
}
