//! `aigenora._native.decision_*`: how the SDK's window helpers (`_await_human_decision`,
//! `_consume_hybrid`) reach the engine's desk for their side. Each takes the hooks' state dir;
//! with no desk registered for it (a plain interpreter, a side the engine does not steer)
//! `decision_open` returns None and the SDK keeps its own file-based window.

use std::path::PathBuf;

use pyo3::prelude::*;
use pyo3::types::{PyDict, PyModule};
use serde_json::{Value, json};

use super::convert::{from_python, to_python};
use crate::control::{HooksChoices, WindowResult, registry};
use crate::records::WindowMode;

/// Adds the decision functions to the `_native` module.
pub fn add_to(module: &Bound<'_, PyModule>) -> PyResult<()> {
    module.add_function(wrap_pyfunction!(decision_open, module)?)?;
    module.add_function(wrap_pyfunction!(decision_wait, module)?)?;
    module.add_function(wrap_pyfunction!(decision_rejected, module)?)?;
    Ok(())
}

/// Opens a window: `request` has `mode` (hybrid|human), `match_key`, `match_value`,
/// `value_field`, `listed` (the hooks' choices or None), `bounds` ({min, max} or None),
/// `numeric` and `intended`. Returns the window (state.json's shape), `{"closed": True}` when
/// no window may open (the game is over, the session is ending), or None without a desk.
/// A request `{"probe": True}` only asks whether there is a desk.
#[pyfunction]
fn decision_open<'py>(
    py: Python<'py>,
    state_dir: PathBuf,
    request: &Bound<'py, PyDict>,
) -> PyResult<Option<Bound<'py, PyAny>>> {
    let Some(desk) = registry::lookup(&state_dir) else {
        return Ok(None);
    };
    let request = from_python(request.as_any())?;
    if request.get("probe").is_some() {
        return to_python(py, &json!({"desk": true})).map(Some);
    }
    let text = |key: &str| {
        request
            .get(key)
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string()
    };
    let mode = match text("mode").as_str() {
        "human" => WindowMode::Human,
        _ => WindowMode::Hybrid,
    };
    let listed = request.get("listed").and_then(Value::as_array).cloned();
    let hooks = HooksChoices {
        listed,
        numeric: request
            .get("numeric")
            .and_then(Value::as_bool)
            .unwrap_or(false),
    };
    let bounds = request
        .get("bounds")
        .filter(|b| b.is_object())
        .map(|bounds| {
            (
                bounds.get("min").and_then(Value::as_i64),
                bounds.get("max").and_then(Value::as_i64),
            )
        });
    let opened = desk.open_for_hooks(
        mode,
        (
            text("match_key"),
            request.get("match_value").cloned().unwrap_or(Value::Null),
        ),
        &text("value_field"),
        &hooks,
        bounds,
        request.get("intended").cloned().filter(|v| !v.is_null()),
    );
    let window = match opened {
        Some(window) => serde_json::to_value(window).unwrap_or(Value::Null),
        None => json!({"closed": true}),
    };
    to_python(py, &window).map(Some)
}

/// Waits (without the GIL) for the open window to close: `{"status": "decided", "decision":
/// {...}}`, `{"status": "agent"}` (hybrid: play the agent's move), `{"status": "timeout",
/// "action": ...}` or `{"status": "cancelled"}`.
#[pyfunction]
fn decision_wait<'py>(py: Python<'py>, state_dir: PathBuf) -> PyResult<Bound<'py, PyAny>> {
    let desk = registry::lookup(&state_dir);
    let result = match desk {
        Some(desk) => py.detach(move || desk.wait()),
        None => WindowResult::Cancelled,
    };
    let answer = match result {
        WindowResult::Decided(decision) => json!({"status": "decided", "decision": decision}),
        WindowResult::AgentMove => json!({"status": "agent"}),
        WindowResult::TimedOut(action) => json!({"status": "timeout", "action": action.as_str()}),
        WindowResult::Cancelled => json!({"status": "cancelled"}),
    };
    to_python(py, &answer)
}

/// The hooks refused a decision for `match_key = match_value` (`reason`); True when a desk
/// recorded it.
#[pyfunction]
fn decision_rejected(
    state_dir: PathBuf,
    match_key: &str,
    match_value: &Bound<'_, PyAny>,
    reason: &str,
) -> PyResult<bool> {
    let Some(desk) = registry::lookup(&state_dir) else {
        return Ok(false);
    };
    desk.rejected(match_key, &from_python(match_value)?, reason);
    Ok(true)
}
