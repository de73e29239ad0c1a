//! The engine's desk as the SDK sees it: a `DeskHandle` object that the engine sets on the
//! hooks instance (`self._aigenora_desk`) before `proto_init`, through which the SDK's window
//! helpers (`_await_human_decision`, `_consume_hybrid`) open and wait on their side's
//! windows. Hooks without one (a plain interpreter, a side nobody steers) keep the SDK's own
//! file-based windows.

use std::sync::Arc;

use pyo3::prelude::*;
use pyo3::types::PyDict;
use serde_json::{Value, json};

use super::convert::{from_python, to_python};
use crate::decision::{Desk, HooksChoices, WindowResult};
use crate::records::WindowMode;

/// One side's desk, handed to its hooks.
#[pyclass(name = "DeskHandle", module = "aigenora._native", frozen)]
pub struct DeskHandle {
    desk: Arc<Desk>,
}

impl DeskHandle {
    pub fn new(desk: Arc<Desk>) -> DeskHandle {
        DeskHandle { desk }
    }
}

#[pymethods]
impl DeskHandle {
    /// Opens a window: `request` has `mode` (hybrid|human), `match_key`, `match_value`,
    /// `value_field`, `listed` (the hooks' choices or None), `bounds` ({min, max} or None),
    /// `numeric` and `intended`. Returns the window (state.json's shape), or `{"closed":
    /// True}` when no window may open (the game is over, the session is ending).
    fn open<'py>(
        &self,
        py: Python<'py>,
        request: &Bound<'py, PyDict>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let request = from_python(request.as_any())?;
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
        let hooks = HooksChoices {
            listed: request.get("listed").and_then(Value::as_array).cloned(),
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
        let opened = self.desk.open_for_hooks(
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
        to_python(py, &window)
    }

    /// Waits (without the GIL) for the open window to close: `{"status": "decided",
    /// "decision": {...}}`, `{"status": "agent"}` (hybrid: play the agent's move),
    /// `{"status": "timeout", "action": ...}` or `{"status": "cancelled"}`.
    fn wait<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let desk = self.desk.clone();
        let answer = match py.detach(move || desk.wait()) {
            WindowResult::Decided(decision) => json!({"status": "decided", "decision": decision}),
            WindowResult::AgentMove => json!({"status": "agent"}),
            WindowResult::TimedOut(action) => {
                json!({"status": "timeout", "action": action.as_str()})
            }
            WindowResult::Cancelled => json!({"status": "cancelled"}),
        };
        to_python(py, &answer)
    }

    /// The hooks refused a decision for `match_key = match_value` (`reason`).
    fn rejected(
        &self,
        match_key: &str,
        match_value: &Bound<'_, PyAny>,
        reason: &str,
    ) -> PyResult<()> {
        self.desk
            .rejected(match_key, &from_python(match_value)?, reason);
        Ok(())
    }
}
