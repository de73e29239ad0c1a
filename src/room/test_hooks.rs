//! Hooks for tests of rooms: a chat room whose every action `{"say": text}` is appended to a
//! log everyone sees; each member also sees its own count; `{"say": ""}` is refused and
//! `{"say": "bye"}` ends the room. Also the seat every such test gives its members.

use serde_json::{Map, Value, json};

use super::checkpoint::RoomMember;
use super::hooks::{HookFailure, HookResult, RoomHooks};
use crate::api::group::{MemberStatus, RecoveryMode, StartPolicy};
use crate::identity::Identity;
use crate::spec::flow::group::GroupRules;

pub struct ChatHooks;

fn result(state: &Map<String, Value>) -> HookResult {
    Ok(json!({"state": state}))
}

impl RoomHooks for ChatHooks {
    fn initial_state(&mut self, members: &[RoomMember]) -> HookResult {
        Ok(json!({"log": [], "count": {}, "seats": members.len()}))
    }
    fn handle(
        &mut self,
        state: &Map<String, Value>,
        actor: &RoomMember,
        action: &Map<String, Value>,
    ) -> HookResult {
        let text = action
            .get("say")
            .and_then(Value::as_str)
            .unwrap_or_default();
        if text.is_empty() {
            return Err(HookFailure::refused("say something"));
        }
        let mut state = state.clone();
        state["log"]
            .as_array_mut()
            .unwrap()
            .push(json!([actor.seat, text]));
        let count = state["count"][&actor.public_key].as_u64().unwrap_or(0) + 1;
        state["count"][&actor.public_key] = json!(count);
        let done = text == "bye";
        Ok(
            json!({"state": state, "events": [{"kind": "said", "seat": actor.seat}],
                  "direct": {actor.public_key.clone(): {"you_said": text}},
                  "completed": done, "outcome": if done { json!("ended") } else { json!(null) }}),
        )
    }
    fn view(&mut self, state: &Map<String, Value>, viewer: &RoomMember) -> HookResult {
        Ok(
            json!({"log": state["log"], "mine": state["count"].get(&viewer.public_key).cloned().unwrap_or(json!(0))}),
        )
    }
    fn member_joined(&mut self, state: &Map<String, Value>, _member: &RoomMember) -> HookResult {
        result(state)
    }
    fn member_left(
        &mut self,
        state: &Map<String, Value>,
        _member: &RoomMember,
        _reason: &str,
    ) -> HookResult {
        result(state)
    }
    fn recovery_snapshot(&mut self, state: &Map<String, Value>) -> HookResult {
        Ok(Value::Object(state.clone()))
    }
    fn restore(
        &mut self,
        protocol_state: &Map<String, Value>,
        _members: &[RoomMember],
        _epoch: u64,
    ) -> HookResult {
        Ok(Value::Object(protocol_state.clone()))
    }
    fn leader_changed(&mut self, state: &Map<String, Value>, _old: &str, _new: &str) -> HookResult {
        result(state)
    }
}

/// The rules of the test room.
pub fn rules() -> GroupRules {
    GroupRules {
        min_participants: 2,
        max_participants: 8,
        allow_late_join: true,
        recovery_mode: RecoveryMode::Exact,
        start_policy: StartPolicy::MinReady,
        checkpoint_every_events: 4,
        max_action_bytes: 512,
        max_events_per_action: 4,
        peer_channels: None,
    }
}

/// `identity` seated at `seat`, active.
pub fn seated(identity: &Identity, seat: u32) -> RoomMember {
    RoomMember {
        member_id: format!("member-{seat}"),
        public_key: identity.public_key().into(),
        seat,
        status: MemberStatus::Active,
    }
}
