//! `hooks.py` behind a room's leader: the `proto_group_*` hooks, called with copies of the
//! state and the members. An exception raised by `proto_group_handle` refuses that action
//! (its text becomes the receipt's reason); one raised by any other hook stops the room.

use pyo3::prelude::*;
use pyo3::types::PyTuple;
use serde_json::{Map, Value};

use super::{PythonHooks, describe};
use crate::hooks::convert::{from_python, to_python};
use crate::room::checkpoint::RoomMember;
use crate::room::hooks::{HookFailure, HookResult, RoomHooks};

impl PythonHooks {
    /// Calls `method(*args)` with JSON arguments and returns its JSON result.
    fn call_room(&self, method: &str, args: Vec<Value>, refusal: bool) -> HookResult {
        Python::attach(|py| {
            let run = || -> PyResult<Value> {
                let items = args
                    .iter()
                    .map(|arg| to_python(py, arg))
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

fn member(member: &RoomMember) -> Value {
    serde_json::to_value(member).expect("a member serializes")
}

fn members(members: &[RoomMember]) -> Value {
    Value::Array(members.iter().map(member).collect())
}

fn state(state: &Map<String, Value>) -> Value {
    Value::Object(state.clone())
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
        let args = vec![state(now), member(actor), Value::Object(action.clone())];
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
        let args = vec![state(now), member(left), Value::String(reason.to_string())];
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
        let args = vec![state(protocol_state), members(list), Value::from(epoch)];
        self.call_room("proto_group_restore", args, false)
    }

    fn leader_changed(&mut self, now: &Map<String, Value>, old: &str, new: &str) -> HookResult {
        let args = vec![
            state(now),
            Value::String(old.to_string()),
            Value::String(new.to_string()),
        ];
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
