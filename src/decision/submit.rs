//! Submitting a decision from outside the engine (the `session decide` command, the browser
//! controller): checked against the open window first — a refusal says why and leaves the
//! window open — then appended to `decisions.jsonl` as the reference's gateway would, and
//! answered with what the engine did with it (played, refused, too late).

use std::time::{Duration, Instant};

use serde::Serialize;
use serde_json::{Map, Value};

use super::files::append_line;
use crate::layout::EngineDir;
use crate::records::{
    DecisionFiles, DecisionMeta, DecisionRecord, DecisionStatus, MATCH_KEYS, Window, iso_now,
    read_lines, window_key,
};
use crate::spec::ControlMode;

/// How long a submitter waits for the engine to take its decision.
pub const ANSWER_WAIT: Duration = Duration::from_secs(5);

/// A new decision id, as the reference's gateway makes them: `dec_` and 16 hex digits.
pub fn new_decision_id() -> String {
    format!("dec_{}", hex::encode(rand::random::<[u8; 8]>()))
}

/// What is being submitted.
#[derive(Debug, Clone, PartialEq)]
pub enum DecisionInput {
    /// A whole decision object (`{"round": 0, "choice": "rock"}`); a missing window key is
    /// filled in from the open window.
    Object(Map<String, Value>),
    /// Just the move, for the open window's value field.
    Move(Value),
}

impl DecisionInput {
    /// `--decision` text: a JSON object, else a JSON scalar, else the bare word.
    pub fn parse(text: &str) -> DecisionInput {
        match serde_json::from_str::<Value>(text) {
            Ok(Value::Object(object)) => DecisionInput::Object(object),
            Ok(scalar @ (Value::Number(_) | Value::Bool(_) | Value::String(_))) => {
                DecisionInput::Move(scalar)
            }
            _ => DecisionInput::Move(Value::String(text.trim().to_string())),
        }
    }
}

/// Who submits (kept in the decision's `_meta`), and which window they answer.
#[derive(Debug, Clone, Default)]
pub struct Submitter {
    /// `cli`, `web`, ...
    pub origin: String,
    pub agent_id: Option<String>,
    pub idempotency_key: Option<String>,
    /// The window ([`Window::seq`]) the person answered, when they say: refused as too late
    /// unless it is the open one. Without it, the decision is for the window open now.
    pub answering: Option<u64>,
}

/// What happened to a submission.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum Answer {
    /// The engine played it.
    Played {
        decision_id: String,
        match_key: String,
        match_value: Value,
        decision: Value,
    },
    /// Written for a window that is not open yet (or the engine has not answered in time);
    /// it is checked when the window opens.
    Queued {
        decision_id: String,
        match_key: String,
        match_value: Value,
    },
    /// Not taken; `reason` says why. An open window stays open.
    Refused {
        reason: String,
        #[serde(skip_serializing_if = "Option::is_none")]
        match_key: Option<String>,
        #[serde(skip_serializing_if = "Option::is_none")]
        match_value: Option<Value>,
    },
    /// The window was already closed (or closed with another move).
    Closed {
        reason: String,
        match_key: String,
        match_value: Value,
    },
}

impl Answer {
    pub fn refused(reason: impl Into<String>) -> Answer {
        Answer::Refused {
            reason: reason.into(),
            match_key: None,
            match_value: None,
        }
    }

    /// Whether the decision was taken (played or queued).
    pub fn taken(&self) -> bool {
        matches!(self, Answer::Played { .. } | Answer::Queued { .. })
    }
}

/// Submits `input` to the side whose engine dir is `engine_dir`, and waits up to `wait` for
/// the engine's answer.
pub fn submit(
    engine_dir: &EngineDir,
    control_mode: Option<ControlMode>,
    input: DecisionInput,
    submitter: &Submitter,
    wait: Duration,
) -> Answer {
    if control_mode == Some(ControlMode::Autonomous) {
        return Answer::refused(
            "control_mode_autonomous: this side plays autonomously and takes no decisions",
        );
    }
    let files = DecisionFiles::of(engine_dir);
    let open = files.window().filter(|window| window.open);
    if let Some(seq) = submitter.answering
        && open.as_ref().is_none_or(|window| window.seq != seq)
    {
        let (match_key, match_value) = open
            .as_ref()
            .map(|w| (w.match_key.clone(), w.match_value.clone()))
            .unwrap_or_default();
        return Answer::Closed {
            reason: format!("window_closed: window {seq} is no longer open; nothing was played"),
            match_key,
            match_value,
        };
    }
    let body = match body_for(input, open.as_ref()) {
        Ok(body) => body,
        Err(reason) => return Answer::refused(reason),
    };
    let Some((match_key, match_value)) = named_window(&body, open.as_ref()) else {
        return Answer::refused(
            "no_open_window: no decision window is open; name one (e.g. \"round\": 0)",
        );
    };
    let refused = |reason: String| Answer::Refused {
        reason,
        match_key: Some(match_key.clone()),
        match_value: Some(match_value.clone()),
    };
    let for_open = open.as_ref().filter(|window| window.names(&body));
    if let Some(window) = for_open
        && let Err(reason) = window
            .choices
            .check(&window.value_field, body.get(&window.value_field))
    {
        return refused(reason);
    }
    if for_open.is_none() && files.is_finalized(&window_key(&match_key, &match_value)) {
        return Answer::Closed {
            reason: "decision_finalized: that window is already closed".into(),
            match_key,
            match_value,
        };
    }
    if let (Some(agent), Some(key)) = (&submitter.agent_id, &submitter.idempotency_key)
        && let Some(earlier) = earlier_submission(&files, agent, key)
    {
        return wait_for_answer(&files, &earlier, body, (match_key, match_value), wait);
    }
    let decision_id = new_decision_id();
    let record = DecisionRecord {
        meta: DecisionMeta {
            decision_id: Some(decision_id.clone()),
            origin: Some(submitter.origin.clone()),
            agent_id: submitter.agent_id.clone(),
            idempotency_key: submitter.idempotency_key.clone(),
            request_ts: Some(iso_now()),
            // Bound to the open window it was checked against: it can never count for the next.
            window_seq: for_open.map(|window| window.seq).filter(|&seq| seq > 0),
            other: Map::new(),
        },
        body: body.clone(),
    };
    let _ = std::fs::create_dir_all(files.dir());
    append_line(&files.decisions(), &record.to_value());
    if for_open.is_none() {
        return Answer::Queued {
            decision_id,
            match_key,
            match_value,
        };
    }
    wait_for_answer(&files, &decision_id, body, (match_key, match_value), wait)
}

/// The decision object: the given one (with the open window's key filled in when it names
/// none), or the bare move for the open window.
fn body_for(
    input: DecisionInput,
    open: Option<&Window>,
) -> Result<Map<String, Value>, &'static str> {
    let mut body = match input {
        DecisionInput::Object(body) => body,
        DecisionInput::Move(value) => {
            let Some(window) = open else {
                return Err("no_open_window: no decision window is open for a bare move");
            };
            let mut body = Map::new();
            body.insert(window.value_field.clone(), value);
            body
        }
    };
    body.remove("_meta");
    if named_window(&body, open).is_none()
        && let Some(window) = open
    {
        body.insert(window.match_key.clone(), window.match_value.clone());
    }
    Ok(body)
}

/// The window a decision names: the open one when it carries that window's key and value
/// (hooks may key windows by any field, e.g. a task's `task_id`), else the first of the
/// usual match keys it carries.
fn named_window(body: &Map<String, Value>, open: Option<&Window>) -> Option<(String, Value)> {
    if let Some(window) = open.filter(|window| window.names(body)) {
        return Some((window.match_key.clone(), window.match_value.clone()));
    }
    MATCH_KEYS.iter().find_map(|key| {
        body.get(*key)
            .filter(|value| !value.is_null())
            .map(|value| (key.to_string(), value.clone()))
    })
}

fn earlier_submission(files: &DecisionFiles, agent: &str, key: &str) -> Option<String> {
    read_lines::<DecisionRecord>(&files.decisions())
        .into_iter()
        .rev()
        .find(|record| {
            record.meta.agent_id.as_deref() == Some(agent)
                && record.meta.idempotency_key.as_deref() == Some(key)
        })
        .and_then(|record| record.meta.decision_id)
}

/// Polls outcomes.jsonl for the engine's answer to `decision_id`.
fn wait_for_answer(
    files: &DecisionFiles,
    decision_id: &str,
    body: Map<String, Value>,
    (match_key, match_value): (String, Value),
    wait: Duration,
) -> Answer {
    let until = Instant::now() + wait;
    loop {
        let outcome = files
            .outcomes_list()
            .into_iter()
            .find(|outcome| outcome.decision_id == decision_id);
        if let Some(outcome) = outcome {
            let reason = outcome.reason.unwrap_or_default();
            return match outcome.status {
                DecisionStatus::Played => Answer::Played {
                    decision_id: decision_id.to_string(),
                    match_key,
                    match_value,
                    decision: Value::Object(body),
                },
                DecisionStatus::Refused => Answer::Refused {
                    reason,
                    match_key: Some(match_key),
                    match_value: Some(match_value),
                },
                DecisionStatus::Superseded => Answer::Closed {
                    reason: "superseded: another decision for this window was played".into(),
                    match_key,
                    match_value,
                },
                DecisionStatus::Late => Answer::Closed {
                    reason: "window_closed: the window closed before the decision arrived".into(),
                    match_key,
                    match_value,
                },
            };
        }
        if Instant::now() >= until {
            return Answer::Queued {
                decision_id: decision_id.to_string(),
                match_key,
                match_value,
            };
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}
