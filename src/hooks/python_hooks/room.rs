//! `hooks.py` behind a room's leader: the `proto_group_*` hooks, called with copies of the
//! state and the members. An exception raised by `proto_group_handle` refuses that action
//! (its text becomes the receipt's reason); one raised by any other hook stops the room.
//! A step's views share one Python copy of the state, checked unchanged afterwards (a view
//! hook that changed it gets its step's views again, each from a fresh copy), so a room of
//! 32 converts its state into Python once a step rather than 32 times.

use std::collections::HashMap;
use std::sync::Arc;

use pyo3::prelude::*;
use pyo3::types::{PyDict, PyTuple};
use serde_json::{Map, Value};

use super::{PythonHooks, describe};
use crate::hooks::convert::{dict_key, from_python, to_python, to_python_dict};
use crate::records::TableChoice;
use crate::room::checkpoint::RoomMember;
use crate::room::hooks::{HookFailure, HookResult, RoomHooks, not_an_object, views_one_by_one};
use crate::room::view::View;

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
            run().map_err(|error| self.failure(py, method, &error, refusal))
        })
    }

    /// A hook's exception as a failure, with where it was raised.
    fn failure(&self, py: Python<'_>, method: &str, error: &PyErr, refusal: bool) -> HookFailure {
        let error = describe(py, method, error, &self.hooks_file);
        let message = match &error.location {
            Some(location) => format!("{} ({location})", error.message),
            None => error.message,
        };
        HookFailure { message, refusal }
    }
}

/// The top-level parts of a step's Python copy of the state, held (so no other object takes
/// their addresses during the step) and each converted once for every view that returns it.
/// A view hook that changes the copy is caught afterwards, and its step's views are asked
/// again from fresh copies.
struct SharedParts<'py> {
    held: HashMap<usize, (Bound<'py, PyAny>, Option<Arc<Value>>)>,
}

impl<'py> SharedParts<'py> {
    fn of(copy: &Bound<'py, PyDict>) -> SharedParts<'py> {
        let held = copy
            .values()
            .iter()
            .map(|part| (part.as_ptr() as usize, (part, None)))
            .collect();
        SharedParts { held }
    }

    /// A returned view, its shared parts converted once a step; `None` when it is not a dict.
    fn view(&mut self, returned: &Bound<'py, PyAny>) -> PyResult<Option<View>> {
        let Ok(dict) = returned.cast::<PyDict>() else {
            return Ok(None);
        };
        let fields = dict
            .iter()
            .map(|(key, item)| {
                let value = match self.held.get_mut(&(item.as_ptr() as usize)) {
                    Some((_, Some(converted))) => Arc::clone(converted),
                    Some((_, slot)) => Arc::clone(slot.insert(Arc::new(from_python(&item)?))),
                    None => Arc::new(from_python(&item)?),
                };
                Ok((dict_key(&key)?, value))
            })
            .collect::<PyResult<_>>()?;
        Ok(Some(View::of_fields(fields)))
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

    fn views(
        &mut self,
        now: &Map<String, Value>,
        viewers: &[RoomMember],
    ) -> Result<Vec<View>, HookFailure> {
        let shared = Python::attach(|py| -> Result<Option<Vec<View>>, HookFailure> {
            let broken = |error: PyErr| self.failure(py, "proto_group_view", &error, false);
            let copy = to_python_dict(py, now).map_err(broken)?;
            let mut parts = SharedParts::of(&copy);
            let views = viewers
                .iter()
                .map(|viewer| {
                    let viewer = member(viewer).to_python(py)?;
                    let returned = self
                        .instance
                        .bind(py)
                        .call_method1("proto_group_view", (copy.clone(), viewer))?;
                    parts.view(&returned)
                })
                .collect::<PyResult<Option<Vec<View>>>>()
                .map_err(broken)?
                .ok_or_else(not_an_object)?;
            let untouched = from_python(copy.as_any()).map_err(broken)?;
            Ok(matches!(&untouched, Value::Object(map) if map == now).then_some(views))
        })?;
        match shared {
            Some(views) => Ok(views),
            None => views_one_by_one(self, now, viewers),
        }
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

    /// Tells a table with fair deals (`aigenora.proto.fair_deal`) that these seats take part
    /// in them; hooks without fair deals are left alone.
    pub fn announce_fair_deal_seats(&self, keys: &[String]) -> Result<(), HookFailure> {
        let fair = Python::attach(|py| {
            self.instance
                .bind(py)
                .hasattr("fair_deal_announced")
                .unwrap_or(false)
        });
        if fair {
            let keys = Arg::Json(Value::from(keys.to_vec()));
            self.call_room("fair_deal_announced", vec![keys], false)?;
        }
        Ok(())
    }

    /// `proto_group_check_deal(first_view, opening, viewer, own_seed)`: a member's verdict on
    /// the hand it was dealt (`first_view`, its first view after the deal), once `opening`
    /// opened the leader's seed.
    pub fn check_deal(
        &self,
        first_view: &Map<String, Value>,
        opening: &Map<String, Value>,
        viewer: &RoomMember,
        own_seed: &str,
    ) -> HookResult {
        let args = vec![
            state(first_view),
            state(opening),
            member(viewer),
            text(own_seed),
        ];
        self.call_room("proto_group_check_deal", args, false)
    }
}

impl PythonHooks {
    /// Whether these hooks play a table seat (they define `proto_group_choices`); a
    /// conversational room's hooks do not.
    pub fn plays_table_seats(&self) -> bool {
        Python::attach(|py| {
            self.instance
                .bind(py)
                .hasattr("proto_group_choices")
                .unwrap_or(false)
        })
    }

    /// `proto_group_choices(view, member)`: every legal action of this seat now, checked
    /// ([`TableChoice::list_from_hook`]); `[]` when it is not this seat's move.
    pub fn room_choices(
        &self,
        view: &Map<String, Value>,
        seat: &RoomMember,
    ) -> Result<Vec<TableChoice>, HookFailure> {
        let returned = self.call_room(
            "proto_group_choices",
            vec![state(view), member(seat)],
            false,
        )?;
        TableChoice::list_from_hook(returned).map_err(HookFailure::broken)
    }
}

impl PythonHooks {
    /// `proto_group_table(view, member, events)`: the display model of a seat's view after a
    /// step (`aigenora.proto.table_view`), or `None` when the hooks draw no table.
    pub fn room_table(
        &self,
        view: &Map<String, Value>,
        seat: &RoomMember,
        events: &[Value],
    ) -> Result<Option<Value>, HookFailure> {
        let defined = Python::attach(|py| {
            self.instance
                .bind(py)
                .hasattr("proto_group_table")
                .unwrap_or(false)
        });
        if !defined {
            return Ok(None);
        }
        let events = Arg::Json(Value::Array(events.to_vec()));
        self.call_room(
            "proto_group_table",
            vec![state(view), member(seat), events],
            false,
        )
        .map(Some)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::group::MemberStatus;
    use serde_json::json;

    /// The views of a step as whole objects.
    fn values(views: &[View]) -> Vec<Value> {
        views.iter().map(View::to_value).collect()
    }

    fn seated(seat: u32) -> RoomMember {
        RoomMember {
            member_id: format!("m{seat}"),
            public_key: format!("{seat:064x}"),
            seat,
            status: MemberStatus::Active,
        }
    }

    fn hooks_with_view(body: &str) -> (tempfile::TempDir, PythonHooks) {
        let dir = tempfile::tempdir().unwrap();
        let source = format!(
            "from aigenora.proto.hooks import ProtocolHooks\n\
             class Hooks(ProtocolHooks):\n\
             \x20   def proto_group_view(self, state, viewer):\n\
             \x20       {body}\n"
        );
        std::fs::write(dir.path().join("hooks.py"), source).unwrap();
        let hooks = PythonHooks::load(dir.path()).unwrap();
        (dir, hooks)
    }

    /// A step's views share one copy of the state, yet each view is what the hook returns
    /// on a copy of its own: a hook that changes the state it was given gets the step's
    /// views again from fresh copies.
    #[test]
    fn a_steps_views_are_as_if_each_had_its_own_copy_of_the_state() {
        let state = json!({"log": ["a", "b"], "seen": 0});
        let state = state.as_object().unwrap();
        let viewers: Vec<RoomMember> = (0..3).map(seated).collect();
        let (_dir, mut reading) =
            hooks_with_view("return {'log': state['log'], 'me': viewer['seat']}");
        let views = reading.views(state, &viewers).unwrap();
        assert_eq!(
            values(&views),
            (0..3)
                .map(|seat| json!({"log": ["a", "b"], "me": seat}))
                .collect::<Vec<_>>()
        );
        let log = |view: &View| Arc::as_ptr(view.field("log").unwrap());
        assert!(
            views.iter().all(|view| log(view) == log(&views[0])),
            "the state's log is converted once and shared by the step's views"
        );
        let (_dir, mut changing) = hooks_with_view(
            "state['seen'] += 1; return {'seen': state['seen'], 'me': viewer['seat']}",
        );
        let views = changing.views(state, &viewers).unwrap();
        assert_eq!(
            values(&views),
            (0..3)
                .map(|seat| json!({"seen": 1, "me": seat}))
                .collect::<Vec<_>>()
        );
        let (_dir, mut appending) =
            hooks_with_view("state['log'].append(viewer['seat']); return {'log': state['log']}");
        let views = appending.views(state, &viewers).unwrap();
        assert_eq!(
            values(&views),
            (0..3)
                .map(|seat| json!({"log": ["a", "b", seat]}))
                .collect::<Vec<_>>(),
            "a shared part a view changed is not shared"
        );
        let (_dir, mut listing) = hooks_with_view("return [viewer['seat']]");
        let failure = listing.views(state, &viewers).unwrap_err();
        assert_eq!(failure.message, "proto_group_view must return an object");
        let (_dir, mut failing) = hooks_with_view("raise RuntimeError('no view')");
        let failure = failing.views(state, &viewers).unwrap_err();
        assert!(failure.message.contains("no view"), "{failure:?}");
        assert!(!failure.refusal);
    }
}
