//! The decision files a side keeps in `<engine dir>/decision/`, as types: the open window
//! (`state.json`), the submitted decisions (`decisions.jsonl`, the reference's format, so its
//! `session decide` still feeds us), and what became of each (`outcomes.jsonl`, ours), plus
//! the legal values a window accepts. Whoever submits (CLI, terminal, browser) and the
//! engine that waits read and write these shapes only.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::table_choice::{Free, TableChoice, resolve};
use crate::layout::EngineDir;

/// Fields that name a window in a submitted decision, in the order they are looked for.
/// (`step` is ours: a table seat's window, named by the room step it opened at.)
pub const MATCH_KEYS: [&str; 6] = ["round", "turn", "attempt", "action_seq", "setup", "step"];

/// Who may fill a window: the agent with a person able to override (`hybrid`), or a person
/// only (`human`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum WindowMode {
    Hybrid,
    Human,
}

pub use crate::spec::TimeoutAction;

/// How a window closed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum WindowOutcome {
    /// A decision was played.
    Decided,
    /// Hybrid: nobody overrode; the agent's move was played.
    AgentMove,
    /// The deadline passed (see the timeout action).
    TimedOut,
    /// The session ended first.
    Cancelled,
}

/// The values a window accepts for its value field, from the message schema and the hooks'
/// own choices.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Choices {
    /// Exactly one of these values.
    OneOf { values: Vec<Value> },
    /// An integer within the inclusive bounds that are given.
    Integer {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        min: Option<i64>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        max: Option<i64>,
    },
    /// A string of at most `max_bytes` UTF-8 bytes.
    Text { max_bytes: u64 },
    /// Anything; the hooks check it.
    Any,
    /// One of a table seat's legal actions (`proto_group_choices`), named by its number or
    /// label, or given as `{"index", "amount"}`, `{"index", "pick"}` or `{"action"}`.
    Table { options: Vec<TableChoice> },
}

impl Choices {
    /// Why `value` is not acceptable, naming `field`; `Ok` when it is.
    pub fn check(&self, field: &str, value: Option<&Value>) -> Result<(), String> {
        let Some(value) = value else {
            return Err(format!("{field} is missing"));
        };
        match self {
            Choices::OneOf { values } => {
                let same =
                    |legal: &Value| legal == value && legal.is_boolean() == value.is_boolean();
                if values.iter().any(same) {
                    Ok(())
                } else {
                    Err(format!("{field} must be {}", spoken(values)))
                }
            }
            Choices::Integer { min, max } => {
                let Some(number) = value.as_i64().filter(|_| !value.is_boolean()) else {
                    return Err(format!("{field} must be an integer"));
                };
                match (min, max) {
                    (Some(low), _) if number < *low => Err(range_text(field, *min, *max)),
                    (_, Some(max)) if number > *max => Err(range_text(field, *min, Some(*max))),
                    _ => Ok(()),
                }
            }
            Choices::Text { max_bytes } => match value.as_str() {
                Some(text) if text.len() as u64 <= *max_bytes => Ok(()),
                Some(_) => Err(format!("{field} must be at most {max_bytes} bytes")),
                None => Err(format!("{field} must be text")),
            },
            Choices::Any => Ok(()),
            Choices::Table { options } => resolve(options, value).map(|_| ()),
        }
    }

    /// The values a person can pick by number, when they can be listed.
    pub fn listed(&self) -> Option<Vec<Value>> {
        match self {
            Choices::OneOf { values } => Some(values.clone()),
            Choices::Table { options } => Some(
                options
                    .iter()
                    .map(|choice| Value::String(choice.label.clone()))
                    .collect(),
            ),
            Choices::Integer {
                min: Some(min),
                max: Some(max),
            } if max
                .checked_sub(*min)
                .is_some_and(|span| (0..10).contains(&span)) =>
            {
                Some((*min..=*max).map(Value::from).collect())
            }
            _ => None,
        }
    }

    /// A random legal value, when one can be drawn.
    pub fn random(&self) -> Option<Value> {
        use rand::Rng;
        let mut rng = rand::thread_rng();
        match self {
            Choices::OneOf { values } if !values.is_empty() => {
                Some(values[rng.gen_range(0..values.len())].clone())
            }
            Choices::Integer {
                min: Some(min),
                max: Some(max),
            } if max >= min => Some(Value::from(rng.gen_range(*min..=*max))),
            Choices::Table { options } if !options.is_empty() => {
                let index = rng.gen_range(0..options.len());
                let choice = &options[index];
                let free = choice.free.as_ref().map(|free| match free {
                    Free::Amount(range) => Value::from(range.min),
                    Free::Pick(pick) => Value::Array(
                        pick.from[..pick.min]
                            .iter()
                            .map(|item| item.value.clone())
                            .collect(),
                    ),
                });
                Some(choice.decision(index, free))
            }
            _ => None,
        }
    }

    /// A short description of what is accepted ("rock, paper or scissors", "an integer from 1
    /// to 100").
    pub fn describe(&self) -> String {
        match self {
            Choices::OneOf { values } => spoken(values),
            Choices::Integer { min, max } => match (min, max) {
                (Some(min), Some(max)) => format!("an integer from {min} to {max}"),
                (Some(min), None) => format!("an integer of at least {min}"),
                (None, Some(max)) => format!("an integer of at most {max}"),
                (None, None) => "an integer".into(),
            },
            Choices::Text { max_bytes } => format!("text of at most {max_bytes} bytes"),
            Choices::Any => "any value".into(),
            Choices::Table { options } => {
                let labels: Vec<Value> = options
                    .iter()
                    .map(|choice| Value::String(choice.label.clone()))
                    .collect();
                let picks: Vec<String> = options
                    .iter()
                    .enumerate()
                    .filter_map(|(index, choice)| {
                        let Some(Free::Pick(pick)) = &choice.free else {
                            return None;
                        };
                        Some(format!("; {index} {}", pick.spoken()))
                    })
                    .collect();
                let picking = if options.iter().all(|choice| choice.free.is_none()) {
                    ""
                } else {
                    "; a choice that leaves an amount or cards free takes its number then the \
                     amount or the values picked (2 60, 5 c3 c17)"
                };
                format!(
                    "one of these choices (by number from 0, or label): {}{picking}{}",
                    spoken(&labels),
                    picks.concat()
                )
            }
        }
    }
}

fn range_text(field: &str, min: Option<i64>, max: Option<i64>) -> String {
    format!(
        "{field} must be {}",
        Choices::Integer { min, max }.describe()
    )
}

/// Values as prose: `rock, paper or scissors`.
fn spoken(values: &[Value]) -> String {
    let words: Vec<String> = values.iter().map(plain_text).collect();
    match words.split_last() {
        None => "nothing (no legal value)".into(),
        Some((last, [])) => last.clone(),
        Some((last, rest)) => format!("{} or {last}", rest.join(", ")),
    }
}

/// A value as a person reads it: strings without quotes, everything else as JSON.
pub fn plain_text(value: &Value) -> String {
    match value {
        Value::String(text) => text.clone(),
        other => other.to_string(),
    }
}

/// `decision/state.json`: the window this side has open (or had last, with `open: false`).
/// `match_key`/`match_value` are where the reference's `session decide` looks for the window
/// a keyless decision belongs to. Times are Unix seconds.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Window {
    /// This window's number among the side's windows (1, 2, ...): what a person's answer
    /// names, so an answer meant for a window that has closed is never taken for the next
    /// one. 0 in files written by other tools.
    #[serde(default)]
    pub seq: u64,
    pub match_key: String,
    pub match_value: Value,
    pub mode: WindowMode,
    /// The field of a decision that carries the move (`choice`, `number`, ...).
    pub value_field: String,
    pub choices: Choices,
    /// Whether the window still takes decisions.
    pub open: bool,
    /// Always `decision` (the reference's marker).
    pub waiting_for: String,
    pub opened_at: f64,
    pub deadline_at: f64,
    /// Hybrid: the move the agent will play unless overridden.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub intended: Option<Value>,
    /// What the deadline does (human windows).
    pub timeout_action: TimeoutAction,
}

impl Window {
    /// The window's name as the reference's finalized.json keys it: `round:3`.
    pub fn key(&self) -> String {
        window_key(&self.match_key, &self.match_value)
    }

    /// Whether a decision (its body) names this window.
    pub fn names(&self, body: &Map<String, Value>) -> bool {
        body.get(&self.match_key) == Some(&self.match_value)
    }

    /// Seconds left before the deadline (0 when past).
    pub fn seconds_left(&self, now: f64) -> f64 {
        (self.deadline_at - now).max(0.0)
    }
}

/// `"<key>:<value>"`, the reference's name for a window (Python `str()` of the value).
pub fn window_key(key: &str, value: &Value) -> String {
    format!("{key}:{}", crate::spec::pyrepr::py_str(value))
}

/// The `_meta` the reference's decide gateway attaches to a submitted decision.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct DecisionMeta {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decision_id: Option<String>,
    /// `cli`, `web`, `terminal`, `runtime`, `policy_runner`, ...
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub origin: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub idempotency_key: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_ts: Option<String>,
    /// The window ([`Window::seq`]) the decision answers, when the submitter saw it: the
    /// decision counts for that window only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub window_seq: Option<u64>,
    #[serde(flatten)]
    pub other: Map<String, Value>,
}

/// One line of `decisions.jsonl`: the decision's own fields and its `_meta`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DecisionRecord {
    #[serde(default, rename = "_meta")]
    pub meta: DecisionMeta,
    #[serde(flatten)]
    pub body: Map<String, Value>,
}

impl DecisionRecord {
    /// Explicit submissions beat generated ones, which beat records without an origin (the
    /// reference's priorities).
    pub fn priority(&self) -> u8 {
        match self.meta.origin.as_deref() {
            Some("policy_runner" | "script_runner") => 50,
            Some(_) => 100,
            None => 0,
        }
    }

    /// The body with `_meta` (what a hook receives).
    pub fn to_value(&self) -> Value {
        serde_json::to_value(self).unwrap_or(Value::Null)
    }
}

/// What became of a submitted decision.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DecisionStatus {
    /// Taken: the move is played.
    Played,
    /// Refused by the engine (`reason` says why); the window stays open.
    Refused,
    /// Another decision for the same window was played instead.
    Superseded,
    /// It arrived after its window closed.
    Late,
}

/// One line of `outcomes.jsonl`: the engine's answer to one decision.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DecisionOutcome {
    pub decision_id: String,
    pub match_key: String,
    pub match_value: Value,
    pub status: DecisionStatus,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    pub ts: String,
}

/// The paths of one side's `decision/` directory.
#[derive(Debug, Clone)]
pub struct DecisionFiles {
    dir: PathBuf,
}

impl DecisionFiles {
    /// The decision dir of an engine dir.
    pub fn of(engine_dir: &EngineDir) -> DecisionFiles {
        DecisionFiles {
            dir: engine_dir.decision_dir(),
        }
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    pub fn state(&self) -> PathBuf {
        self.dir.join("state.json")
    }

    pub fn decisions(&self) -> PathBuf {
        self.dir.join("decisions.jsonl")
    }

    pub fn outcomes(&self) -> PathBuf {
        self.dir.join("outcomes.jsonl")
    }

    pub fn consumed(&self) -> PathBuf {
        self.dir.join("consumed.jsonl")
    }

    pub fn finalized(&self) -> PathBuf {
        self.dir.join("finalized.json")
    }

    /// The window in state.json, when there is a readable one.
    pub fn window(&self) -> Option<Window> {
        let text = std::fs::read_to_string(self.state()).ok()?;
        serde_json::from_str(&text).ok()
    }

    /// Whether finalized.json lists the window `key` (`round:3`) as closed.
    pub fn is_finalized(&self, key: &str) -> bool {
        std::fs::read_to_string(self.finalized())
            .ok()
            .and_then(|text| serde_json::from_str::<Map<String, Value>>(&text).ok())
            .is_some_and(|closed| closed.contains_key(key))
    }

    /// Every outcome recorded so far.
    pub fn outcomes_list(&self) -> Vec<DecisionOutcome> {
        read_lines(&self.outcomes())
    }
}

/// Longest line of a decision file that is read.
const MAX_LINE: usize = 1 << 20;

/// Every parseable line of a JSON-lines file (nothing when it does not exist); lines that
/// are not UTF-8, not JSON of this shape, or over 1 MiB are left out.
pub fn read_lines<T: serde::de::DeserializeOwned>(path: &Path) -> Vec<T> {
    crate::layout::jsonl::read_lines(path, MAX_LINE)
        .iter()
        .filter_map(|line| serde_json::from_str(line).ok())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn choices_explain_refusals() {
        let rps = Choices::OneOf {
            values: vec![json!("rock"), json!("paper"), json!("scissors")],
        };
        assert_eq!(rps.check("choice", Some(&json!("rock"))), Ok(()));
        assert_eq!(
            rps.check("choice", Some(&json!("banana"))),
            Err("choice must be rock, paper or scissors".into())
        );
        assert_eq!(rps.check("choice", None), Err("choice is missing".into()));
        let range = Choices::Integer {
            min: Some(1),
            max: Some(100),
        };
        assert_eq!(range.check("number", Some(&json!(50))), Ok(()));
        assert_eq!(
            range.check("number", Some(&json!(0))),
            Err("number must be an integer from 1 to 100".into())
        );
        assert_eq!(
            range.check("number", Some(&json!(true))),
            Err("number must be an integer".into())
        );
        let bits = Choices::OneOf {
            values: vec![json!(0), json!(1)],
        };
        assert!(bits.check("bit", Some(&json!(false))).is_err());
        let huge = Choices::Integer {
            min: Some(i64::MIN),
            max: Some(i64::MAX),
        };
        assert_eq!(huge.listed(), None);
        assert!(huge.random().is_some());
    }

    #[test]
    fn records_keep_the_reference_shape() {
        let line = r#"{"round":0,"choice":"rock","_meta":{"decision_id":"dec_1","origin":"cli","caused_by_whisper_id":null}}"#;
        let record: DecisionRecord = serde_json::from_str(line).unwrap();
        assert_eq!(record.body["choice"], "rock");
        assert_eq!(record.meta.origin.as_deref(), Some("cli"));
        assert_eq!(record.priority(), 100);
        let back = record.to_value();
        assert_eq!(back["_meta"]["caused_by_whisper_id"], Value::Null);
        assert_eq!(window_key("round", &json!(3)), "round:3");
        assert_eq!(window_key("setup", &json!(true)), "setup:True");
    }
}
