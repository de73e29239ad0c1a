//! `hooks.py` in the mental_poker flow: the `proto_mp_*` hooks, the table view installed into
//! the hooks' `state` (by the SDK's `install_table`), and the choice of an action through the
//! control mode (the SDK's `select_local_action`), so reference hooks run unchanged.

use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyModule, PyTuple};
use serde_json::Value;

use super::{PythonHooks, describe};
use crate::hooks::convert::{from_python, to_python};
use crate::hooks::mental_poker::{action_from_value, deal_plan_from_value, universe_from_value};
use crate::hooks::{Card, DealPlan, HookError, LocalAction, MentalPokerHooks, TableView, Verdict};
use crate::spec::Role;

/// The SDK's `aigenora.proto.mental_poker`, imported once per process.
fn sdk(py: Python<'_>) -> PyResult<&Bound<'_, PyModule>> {
    static MODULE: PyOnceLock<Py<PyModule>> = PyOnceLock::new();
    MODULE
        .get_or_try_init(py, || {
            Ok(py.import("aigenora.proto.mental_poker")?.unbind())
        })
        .map(|module| module.bind(py))
}

/// A hook's value, converted (the error names the hook and what was wrong with it).
fn typed<T>(
    hook: &str,
    value: Value,
    convert: fn(&Value) -> Result<T, String>,
) -> Result<T, HookError> {
    convert(&value).map_err(|error| HookError::new(hook, error))
}

impl PythonHooks {
    /// Calls the SDK helper `function(hooks?, state, *args)`.
    fn call_sdk(
        &self,
        hook: &str,
        function: &str,
        args: impl for<'py> FnOnce(Python<'py>) -> PyResult<Vec<Bound<'py, PyAny>>>,
    ) -> Result<Value, HookError> {
        Python::attach(|py| {
            let run = || -> PyResult<Value> {
                let mut items = vec![self.state.bind(py).clone().into_any()];
                items.extend(args(py)?);
                let returned = sdk(py)?
                    .getattr(function)?
                    .call1(PyTuple::new(py, items)?)?;
                from_python(&returned)
            };
            run().map_err(|error| describe(py, hook, &error, &self.hooks_file))
        })
    }

    /// Calls `method(state, *args)` on the hooks and converts what it returns.
    fn call_with_state<T>(
        &self,
        method: &str,
        args: impl for<'py> FnOnce(Python<'py>) -> PyResult<Vec<Bound<'py, PyAny>>>,
        convert: impl for<'py> FnOnce(&Bound<'py, PyAny>) -> PyResult<T>,
    ) -> Result<T, HookError> {
        self.call(
            method,
            move |py, state| {
                let mut items = vec![state.clone().into_any()];
                items.extend(args(py)?);
                PyTuple::new(py, items)
            },
            convert,
        )
    }
}

impl MentalPokerHooks for PythonHooks {
    fn mp_deck_universe(&mut self) -> Result<Vec<Card>, HookError> {
        let hook = "proto_mp_deck_universe";
        let value = self.call(hook, |py, _| Ok(PyTuple::empty(py)), from_python)?;
        typed(hook, value, universe_from_value)
    }

    fn mp_initial_deal(&mut self) -> Result<DealPlan, HookError> {
        let hook = "proto_mp_initial_deal";
        let value = self.call_with_state(hook, |_| Ok(vec![]), from_python)?;
        typed(hook, value, deal_plan_from_value)
    }

    fn mp_show_table(&mut self, view: &TableView) -> Result<(), HookError> {
        let hand: Vec<(String, u8, u8)> = view
            .hand
            .iter()
            .map(|(id, card)| (id.clone(), card.rank, card.suit))
            .collect();
        self.call_sdk("the table view", "install_table", |py| {
            Ok(vec![
                view.role.as_str().into_pyobject(py)?.into_any(),
                hand.into_pyobject(py)?.into_any(),
                view.host_hand.clone().into_pyobject(py)?.into_any(),
                view.guest_hand.clone().into_pyobject(py)?.into_any(),
                view.stock.clone().into_pyobject(py)?.into_any(),
                view.played.clone().into_pyobject(py)?.into_any(),
                pyo3::types::PyBool::new(py, view.stalled)
                    .to_owned()
                    .into_any(),
            ])
        })?;
        Ok(())
    }

    fn mp_choose_action(&mut self, action_seq: u64) -> Result<LocalAction, HookError> {
        let hook = "proto_mp_choose_action";
        let value = Python::attach(|py| {
            let run = || -> PyResult<Value> {
                let function = sdk(py)?.getattr("select_local_action")?;
                let args = (self.instance.bind(py), self.state.bind(py), action_seq);
                from_python(&function.call1(args)?)
            };
            run().map_err(|error| describe(py, hook, &error, &self.hooks_file))
        })?;
        typed(hook, value, action_from_value)
    }

    fn mp_validate_play(&mut self, who: Role, play: &Value) -> Result<Verdict, HookError> {
        self.call_with_state(
            "proto_mp_validate_play",
            |py| {
                Ok(vec![
                    who.as_str().into_pyobject(py)?.into_any(),
                    to_python(py, play)?,
                ])
            },
            |verdict| {
                let reason = verdict.getattr("reason")?;
                Ok(Verdict {
                    ok: verdict.getattr("ok")?.is_truthy()?,
                    reason: (!reason.is_none())
                        .then(|| reason.str().map(|r| r.to_string()))
                        .transpose()?,
                })
            },
        )
    }

    fn mp_check_winner(&mut self) -> Result<Option<String>, HookError> {
        let hook = "proto_mp_check_winner";
        let value = self.call_with_state(hook, |_| Ok(vec![]), from_python)?;
        match value {
            Value::Null => Ok(None),
            Value::String(winner) => Ok(Some(winner)),
            other => Err(HookError::new(
                hook,
                format!("expected host, guest, draw or None, got {other}"),
            )),
        }
    }
}
