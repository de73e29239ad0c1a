//! `aigenora session decide|snapshot|strategy`: a person or a script steering a local
//! session through its files — submitting a move to the open decision window (answered with
//! what happened to it), reading the state the hooks publish with the open window, and
//! reading or changing the hooks' strategy.

use std::path::Path;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::{Context, bail};
use serde_json::{Map, Value, json};

use super::session_local::FollowEnd;
use crate::control::Target;
use crate::decision::epoch_now;
use crate::decision::submit::{self, Answer, DecisionInput, Submitter};
use crate::layout::{EngineDir, SessionDir};
use crate::records::{RecordedEvent, Window, iso_now, plain_text};

/// The session's engine state dir, or why there is none yet.
fn started_engine_dir(target: &Target) -> anyhow::Result<EngineDir> {
    match target.engine_dir() {
        Some(dir) => Ok(dir),
        None => bail!(
            "the session in {} has no engine state yet (not started)",
            target.dir.root().display()
        ),
    }
}

/// `session decide`: submits `decision` (a JSON object or a bare move) and prints the
/// engine's answer; exit 0 when the move was played or queued, 1 when refused or too late.
pub fn decide(
    target: &Target,
    decision: &str,
    submitter: Submitter,
    wait: Duration,
    as_json: bool,
) -> anyhow::Result<ExitCode> {
    let engine_dir = started_engine_dir(target)?;
    let answer = submit::submit(
        &engine_dir,
        target.record.local_control_mode,
        DecisionInput::parse(decision),
        &submitter,
        wait,
    );
    if as_json {
        println!("{}", crate::terminal::json_line(&answer));
    } else {
        println!("{}", describe(&answer));
    }
    Ok(if answer.taken() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

fn describe(answer: &Answer) -> String {
    let window = |key: &str, value: &Value| format!("{key} {}", plain_text(value));
    match answer {
        Answer::Played {
            match_key,
            match_value,
            decision,
            ..
        } => format!("played for {}: {decision}", window(match_key, match_value)),
        Answer::Queued {
            match_key,
            match_value,
            ..
        } => format!(
            "queued for {} (checked when that window opens)",
            window(match_key, match_value)
        ),
        Answer::Refused { reason, .. } => format!("refused: {reason}"),
        Answer::Closed { reason, .. } => format!("not played: {reason}"),
    }
}

/// `session snapshot`: the hooks' snapshot.json and the open decision window; `follow`
/// prints again on every change (the clock in `now` aside) until the session ends or its
/// process is gone.
pub fn snapshot(target: &Target, as_json: bool, follow: bool) -> anyhow::Result<ExitCode> {
    let mut last = None;
    loop {
        // Looked at before reading, so the view printed last is the one after the end.
        let over = FollowEnd::of(&target.dir);
        let mut view = snapshot_view(target);
        let now = view.as_object_mut().and_then(|view| view.remove("now"));
        if last.as_ref() != Some(&view) {
            last = Some(view.clone());
            if let (Some(now), Some(object)) = (now, view.as_object_mut()) {
                object.insert("now".into(), now);
            }
            if as_json {
                println!("{}", crate::terminal::json_line(&view));
            } else {
                print_snapshot(&view);
            }
        }
        if !follow {
            return Ok(ExitCode::SUCCESS);
        }
        if let Some(end) = over {
            end.report();
            return Ok(ExitCode::SUCCESS);
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// What `session snapshot --json` prints once: the session's view and its current path.
pub fn snapshot_view(target: &Target) -> Value {
    let mut view = crate::control::view::session_view(target);
    if let Some(object) = view.as_object_mut() {
        object.insert("path".into(), current_path(&target.dir));
    }
    view
}

/// How packets to the peer travel now: the data of the session's latest `path_changed`
/// event (`null` before the connection opened).
fn current_path(session: &SessionDir) -> Value {
    let Ok(text) = std::fs::read_to_string(session.events_file()) else {
        return Value::Null;
    };
    text.lines()
        .rev()
        .filter(|line| line.contains("\"path_changed\""))
        .filter_map(RecordedEvent::parse)
        .find(|event| event.name == "path_changed")
        .map_or(Value::Null, |event| event.data)
}

fn print_snapshot(view: &Value) {
    let text = |value: &Value| crate::terminal::escape_display(&plain_text(value)).into_owned();
    let snapshot = &view["snapshot"];
    println!(
        "status {}  role {}  control {}  phase {}",
        text(&view["status"]),
        text(&view["role"]),
        text(&view["control_mode"]),
        text(&snapshot["phase"])
    );
    if !snapshot["score"].is_null() {
        println!(
            "score {}  round {}",
            text(&snapshot["score"]),
            text(&snapshot["round"])
        );
    }
    if let Some(summary) = snapshot.pointer("/last_event/summary") {
        println!("last: {}", text(summary));
    }
    let room = &view["room"];
    if !room.is_null() {
        let members = room["members"].as_array().map(Vec::len).unwrap_or(0);
        let active = room["members"]
            .as_array()
            .map(|m| m.iter().filter(|m| m["status"] == "active").count())
            .unwrap_or(0);
        let end = match (room["completed"].as_bool(), room["outcome"].as_str()) {
            (Some(true), Some(outcome)) => {
                format!("  ended: {}", text(&Value::String(outcome.into())))
            }
            (Some(true), None) => "  ended".to_string(),
            _ => String::new(),
        };
        println!(
            "room {}  step {}  members {active} active of {members}{end}",
            text(&room["group_id"]),
            text(&room["seq"])
        );
        if let Some(events) = room["events"].as_array().filter(|e| !e.is_empty()) {
            println!("last step: {}", text(&Value::Array(events.clone())));
        }
    }
    let path = &view["path"];
    if !path.is_null() {
        let via = [&path["addr"], &path["relay_url"]]
            .into_iter()
            .filter(|part| !part.is_null())
            .map(text)
            .collect::<Vec<_>>()
            .join(" via ");
        println!("path {} {via}", text(&path["path"]));
    }
    if let Ok(window) = serde_json::from_value::<Window>(view["window"].clone()) {
        let left = window.seconds_left(epoch_now()).ceil();
        let intended = window
            .intended
            .as_ref()
            .map(|move_| format!("; the agent plays {} unless overridden", text(move_)))
            .unwrap_or_default();
        println!(
            "waiting for a decision: {} {} ({} {}, {left} s left{intended})",
            window.match_key,
            text(&window.match_value),
            window.value_field,
            window.choices.describe()
        );
    }
}

/// How `session strategy` changes strategy.json.
pub enum StrategyChange {
    Show,
    Set(Map<String, Value>),
    Merge(Map<String, Value>),
}

/// `session strategy`: prints strategy.json, after overwriting or deep-merging it; every
/// change is logged to strategy_events.jsonl as `{ts, op, before, after}`.
pub fn strategy(
    target: &Target,
    change: StrategyChange,
    as_json: bool,
) -> anyhow::Result<ExitCode> {
    let after = change_strategy(target, change)?;
    if as_json {
        println!("{}", Value::Object(after));
    } else if after.is_empty() {
        println!("(strategy is empty)");
    } else {
        println!("{}", serde_json::to_string_pretty(&Value::Object(after))?);
    }
    Ok(ExitCode::SUCCESS)
}

/// Applies `change` to the session's strategy.json (logged) and returns the strategy now.
pub fn change_strategy(
    target: &Target,
    change: StrategyChange,
) -> anyhow::Result<Map<String, Value>> {
    let engine_dir = started_engine_dir(target)?;
    let path = engine_dir.strategy_file();
    // One change at a time: concurrent merges each see the one before.
    let _lock =
        crate::layout::lock_beside(&path).with_context(|| format!("locking {}", path.display()))?;
    let before: Map<String, Value> = std::fs::read_to_string(&path)
        .ok()
        .and_then(|text| serde_json::from_str(&text).ok())
        .unwrap_or_default();
    let (op, after) = match change {
        StrategyChange::Show => (None, before.clone()),
        StrategyChange::Set(new) => (Some("set"), new),
        StrategyChange::Merge(patch) => {
            let mut merged = Value::Object(before.clone());
            deep_merge(&mut merged, Value::Object(patch));
            (
                Some("merge"),
                merged.as_object().cloned().unwrap_or_default(),
            )
        }
    };
    if let Some(op) = op {
        write_json(&path, &Value::Object(after.clone()))?;
        let line = json!({"ts": iso_now(), "op": op, "before": before, "after": after});
        crate::decision::append_jsonl(&engine_dir.strategy_events_file(), &line);
    }
    Ok(after)
}

fn write_json(path: &Path, value: &Value) -> anyhow::Result<()> {
    let text = serde_json::to_string_pretty(value)?;
    crate::layout::write_atomic(path, text.as_bytes()).with_context(|| path.display().to_string())
}

/// Merges `patch` into `base`: objects key by key, anything else replaced.
fn deep_merge(base: &mut Value, patch: Value) {
    match (base, patch) {
        (Value::Object(base), Value::Object(patch)) => {
            for (key, value) in patch {
                deep_merge(base.entry(key).or_insert(Value::Null), value);
            }
        }
        (base, patch) => *base = patch,
    }
}

/// `session web`: serves the controller until interrupted.
pub fn web(
    scope: crate::control::web::Scope,
    port: u16,
    as_json: bool,
) -> anyhow::Result<ExitCode> {
    let runtime = tokio::runtime::Runtime::new()?;
    runtime.block_on(async {
        let (controller, serving) = crate::control::web::bind(scope, port)
            .await
            .context("binding 127.0.0.1")?;
        if as_json {
            println!("{}", json!({"url": controller.url()}));
        } else {
            println!("controller: {}  (Ctrl+C to stop)", controller.url());
        }
        tokio::select! {
            served = serving => served.context("serving the controller")?,
            _ = tokio::signal::ctrl_c() => {}
        }
        Ok(ExitCode::SUCCESS)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn merges_are_deep() {
        let mut base = json!({"mode": "fixed", "nested": {"a": 1, "b": 2}});
        deep_merge(&mut base, json!({"nested": {"b": 3}, "fixed": "rock"}));
        assert_eq!(
            base,
            json!({"mode": "fixed", "nested": {"a": 1, "b": 3}, "fixed": "rock"})
        );
    }
}
