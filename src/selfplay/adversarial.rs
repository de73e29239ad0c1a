//! `protocol test --adversarial`: replays the session with one guest frame at a time — the
//! first of each action — replaced by a malformed variant (unknown field, missing required
//! field, bad enum, out-of-range or mistyped integer, oversized text, bad hex, mistyped
//! boolean) and checks that the host rejects each before any hook sees it. A replay of a
//! dealt game (mental poker) plays out differently, so the frame is found by its action,
//! not by its position.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Number, Value, json};

use super::{SelfPlay, SelfPlayError};
use crate::engine::EngineError;
use crate::spec::fields::DEFAULT_TEXT_MAX_LENGTH;
use crate::spec::model::{FieldSchema, FieldType};
use crate::spec::number::number_as_integer;
use crate::spec::{Direction, Flow};

/// One malformed frame and whether the host refused it.
#[derive(Debug, Clone)]
pub struct CaseResult {
    /// `<message>/<case>`, e.g. `join/integer_out_of_range_best_of`.
    pub label: String,
    pub rejected: bool,
    /// The host's verdict (its error, or what it did instead).
    pub detail: String,
}

/// Runs the suite. An empty result means the guest never sent anything to mutate.
pub fn run_suite(play: &SelfPlay) -> Result<Vec<CaseResult>, SelfPlayError> {
    // Nobody decides for the suite's runs: their windows do not wait for a person.
    let quiet = SelfPlay {
        display: Arc::new(|_, _| {}),
        think: None,
        ..play.clone()
    };
    let sent = Arc::new(Mutex::new(Vec::new()));
    let recorder = sent.clone();
    quiet.run_with(Box::new(move |channel| {
        Box::new(channel.rewriting_sends(move |frame| {
            recorder.lock().expect("recorder lock").push(frame.clone());
        }))
    }))?;
    let frames = sent.lock().expect("recorder lock").clone();
    let mut results = Vec::new();
    let mut seen_actions = Vec::new();
    for (index, frame) in frames.iter().enumerate() {
        let action = frame.get("action").cloned().unwrap_or(Value::Null);
        if seen_actions.contains(&action) {
            continue;
        }
        seen_actions.push(action);
        // The same frame of the replay: the first with this action (a dealt game's length
        // varies, so its position may not repeat; its first occurrence does).
        let target = Target {
            action: frame.get("action").cloned().unwrap_or(Value::Null),
            index,
        };
        for (case, malformed) in variants(play, frame) {
            let label = format!(
                "{}/{case}",
                frame.get("action").and_then(Value::as_str).unwrap_or("?")
            );
            results.push(run_case(&quiet, &target, label, malformed)?);
        }
    }
    Ok(results)
}

/// Which guest frame a case replaces: the first with `action`, found at `index` when it was
/// recorded.
struct Target {
    action: Value,
    index: usize,
}

fn run_case(
    play: &SelfPlay,
    target: &Target,
    label: String,
    malformed: Value,
) -> Result<CaseResult, SelfPlayError> {
    let injected = malformed.clone();
    let play = SelfPlay {
        timeout: play.timeout.min(Duration::from_secs(30)),
        think: None,
        ..play.clone()
    };
    let (action, index) = (target.action.clone(), target.index);
    let mut sent = 0;
    let mut done = false;
    let [host, _guest] = play.run_with(Box::new(move |channel| {
        Box::new(channel.rewriting_sends(move |frame| {
            let due = frame.get("action") == Some(&action) && !done;
            if due || (sent == index && !done && action.is_null()) {
                *frame = injected.clone();
                done = true;
            }
            sent += 1;
        }))
    }))?;
    let rejected_in_log = std::fs::read_to_string(host.events_file())
        .unwrap_or_default()
        .lines()
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
        .any(|event| {
            event["type"] == "message_rejected"
                && event["data"]["msg"] == crate::records::kept_frame(&malformed)
        });
    let detail = match &host.result {
        Err(error @ EngineError::InvalidInbound { .. }) => error.to_string(),
        Err(other) => format!("host failed for another reason: {other}"),
        Ok(outcome) if rejected_in_log && !outcome.completed => format!(
            "refused the frame and stopped ({})",
            outcome.reason.as_deref().unwrap_or("no reason")
        ),
        Ok(outcome) if rejected_in_log => format!(
            "dropped the frame and went on (completed: {})",
            outcome.completed
        ),
        Ok(outcome) => format!("host accepted it (completed: {})", outcome.completed),
    };
    let rejected = rejected_in_log
        && !matches!(&host.result, Err(e) if !matches!(e, EngineError::InvalidInbound { .. }));
    Ok(CaseResult {
        label,
        rejected,
        detail,
    })
}

/// The malformed variants of one real guest frame, derived from its schema.
fn variants(play: &SelfPlay, frame: &Value) -> Vec<(String, Value)> {
    let (Some(base), Ok(model)) = (frame.as_object(), play.spec.model()) else {
        return Vec::new();
    };
    let action = base.get("action").and_then(Value::as_str).unwrap_or("");
    let direction = if model.flow == Flow::Free && action != "join" {
        Direction::Both
    } else {
        Direction::GuestToHost
    };
    let Some(schema) = model.find(action, direction) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    let with = |key: &str, value: Value| {
        let mut changed = base.clone();
        changed.insert(key.to_string(), value);
        Value::Object(changed)
    };
    out.push((
        "unknown_field".to_string(),
        with("__evil_unknown_field__", json!(1)),
    ));
    let first = |wanted: &dyn Fn(&FieldSchema) -> bool| {
        schema
            .fields
            .iter()
            .find(|(key, field)| key != "action" && wanted(field))
    };
    let typed = |t: FieldType| move |field: &FieldSchema| field.field_type == t;
    if let Some((key, _)) = first(&|field| field.required).filter(|(k, _)| base.contains_key(k)) {
        let mut missing = base.clone();
        missing.remove(key);
        out.push((format!("missing_required_{key}"), Value::Object(missing)));
    }
    if let Some((key, _)) = first(&typed(FieldType::Enum)) {
        out.push((
            format!("enum_out_of_range_{key}"),
            with(key, json!("__not_in_enum__")),
        ));
    }
    if let Some((key, field)) = first(&typed(FieldType::Integer)) {
        let bound = |bound: &Option<Number>| bound.as_ref().and_then(number_as_integer);
        let outside = bound(&field.max)
            .map(|max| max + 1)
            .or_else(|| bound(&field.min).map(|min| min - 1));
        if let Some(outside) = outside.and_then(|v| i64::try_from(v).ok()) {
            out.push((
                format!("integer_out_of_range_{key}"),
                with(key, json!(outside)),
            ));
        }
        out.push((
            format!("integer_wrong_type_{key}"),
            with(key, json!("not_an_integer")),
        ));
    }
    if let Some((key, field)) = first(&typed(FieldType::Text)) {
        let limit = field
            .max_length
            .as_ref()
            .and_then(number_as_integer)
            .unwrap_or(DEFAULT_TEXT_MAX_LENGTH);
        out.push((
            format!("text_too_long_{key}"),
            with(key, json!("x".repeat(limit as usize + 1))),
        ));
    }
    if let Some((key, _)) = first(&typed(FieldType::Boolean)) {
        out.push((format!("boolean_wrong_type_{key}"), with(key, json!("yes"))));
    }
    if let Some((key, _)) = first(&|field| field.field_type.is_hex()) {
        out.push((format!("hex_malformed_{key}"), with(key, json!("NOT-HEX"))));
    }
    out
}
