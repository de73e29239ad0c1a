//! `hooks.py` behind a room's leader: the `proto_group_*` hooks, called with copies of the
//! state and the members. An exception raised by `proto_group_handle` refuses that action
//! (its text becomes the receipt's reason); one raised by any other hook stops the room.

use pyo3::prelude::*;
use pyo3::types::PyTuple;
use serde_json::{Map, Value};

use super::{PythonHooks, describe};
use crate::hooks::convert::{from_python, to_python, to_python_dict};
use crate::room::checkpoint::RoomMember;
use crate::room::hooks::{HookFailure, HookResult, RoomHooks};

/// One argument of a room hook, converted to Python without an intermediate copy.
enum Arg<'a> {
    Map(&'a Map<String, Value>),
    Json(Value),
}

impl Arg<'_> {
    fn to_python<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        match self {
            Arg::Map(map) => to_python_dict(py, map).map(Bound::into_any),
            Arg::Json(value) => to_python(py, value),
        }
    }
}

impl PythonHooks {
    /// Calls `method(*args)` and returns its JSON result.
    fn call_room(&self, method: &str, args: Vec<Arg>, refusal: bool) -> HookResult {
        Python::attach(|py| {
            let run = || -> PyResult<Value> {
                let items = args
                    .iter()
                    .map(|arg| arg.to_python(py))
                    .collect::<PyResult<Vec<_>>>()?;
                let returned = self
                    .instance
                    .bind(py)
                    .call_method1(method, PyTuple::new(py, items)?)?;
                from_python(&returned)
            };
            run().map_err(|error| {
                let error = describe(py, method, &error, &self.hooks_file);
                let text = match &error.location {
                    Some(location) => format!("{} ({location})", error.message),
                    None => error.message,
                };
                HookFailure {
                    message: text,
                    refusal,
                }
            })
        })
    }
}

fn member(member: &RoomMember) -> Arg<'static> {
    Arg::Json(serde_json::to_value(member).expect("a member serializes"))
}

fn members(members: &[RoomMember]) -> Arg<'static> {
    Arg::Json(serde_json::to_value(members).expect("members serialize"))
}

fn state(state: &Map<String, Value>) -> Arg<'_> {
    Arg::Map(state)
}

fn text(text: &str) -> Arg<'static> {
    Arg::Json(Value::String(text.to_string()))
}

impl RoomHooks for PythonHooks {
    fn initial_state(&mut self, list: &[RoomMember]) -> HookResult {
        self.call_room("proto_group_initial_state", vec![members(list)], false)
    }

    fn handle(
        &mut self,
        now: &Map<String, Value>,
        actor: &RoomMember,
        action: &Map<String, Value>,
    ) -> HookResult {
        let args = vec![state(now), member(actor), Arg::Map(action)];
        self.call_room("proto_group_handle", args, true)
    }

    fn view(&mut self, now: &Map<String, Value>, viewer: &RoomMember) -> HookResult {
        self.call_room("proto_group_view", vec![state(now), member(viewer)], false)
    }

    fn member_joined(&mut self, now: &Map<String, Value>, joined: &RoomMember) -> HookResult {
        self.call_room(
            "proto_group_member_joined",
            vec![state(now), member(joined)],
            false,
        )
    }

    fn member_left(
        &mut self,
        now: &Map<String, Value>,
        left: &RoomMember,
        reason: &str,
    ) -> HookResult {
        let args = vec![state(now), member(left), text(reason)];
        self.call_room("proto_group_member_left", args, false)
    }

    fn recovery_snapshot(&mut self, now: &Map<String, Value>) -> HookResult {
        self.call_room("proto_group_recovery_snapshot", vec![state(now)], false)
    }

    fn restore(
        &mut self,
        protocol_state: &Map<String, Value>,
        list: &[RoomMember],
        epoch: u64,
    ) -> HookResult {
        let args = vec![
            state(protocol_state),
            members(list),
            Arg::Json(Value::from(epoch)),
        ];
        self.call_room("proto_group_restore", args, false)
    }

    fn leader_changed(&mut self, now: &Map<String, Value>, old: &str, new: &str) -> HookResult {
        let args = vec![state(now), text(old), text(new)];
        self.call_room("proto_group_on_leader_changed", args, false)
    }
}

impl PythonHooks {
    /// `proto_group_autoplay(view, member)`: the action a seat that plays by itself takes,
    /// or `None`.
    pub fn room_autoplay(
        &self,
        view: &Map<String, Value>,
        seat: &RoomMember,
    ) -> Result<Option<Map<String, Value>>, HookFailure> {
        match self.call_room(
            "proto_group_autoplay",
            vec![state(view), member(seat)],
            false,
        )? {
            Value::Null => Ok(None),
            Value::Object(action) => Ok(Some(action)),
            other => Err(HookFailure::broken(format!(
                "proto_group_autoplay must return a dict or None, not {}",
                crate::spec::json_kind(&other)
            ))),
        }
    }
}
