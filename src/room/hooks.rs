//! What a room's leader asks its hooks, as a trait: the Python `proto_group_*` hooks behind
//! it in real rooms, plain Rust in tests. Every hook gets copies; a result is
//! `{state, events?, direct?, completed?, outcome?}`, checked by the authority.

use serde_json::{Map, Value};

use super::checkpoint::RoomMember;
use super::view::View;

/// A hook that failed: `refusal` when it refused the input (the reference's ValueError,
/// KeyError, TypeError), which becomes a rejected receipt; otherwise the room cannot go on.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct HookFailure {
    pub message: String,
    pub refusal: bool,
}

impl HookFailure {
    pub fn refused(message: impl Into<String>) -> HookFailure {
        HookFailure {
            message: message.into(),
            refusal: true,
        }
    }

    pub fn broken(message: impl Into<String>) -> HookFailure {
        HookFailure {
            message: message.into(),
            refusal: false,
        }
    }
}

pub type HookResult = Result<Value, HookFailure>;

/// The leader's hooks.
pub trait RoomHooks {
    /// The state of a new room with these members.
    fn initial_state(&mut self, members: &[RoomMember]) -> HookResult;
    /// One member's action: a result.
    fn handle(
        &mut self,
        state: &Map<String, Value>,
        actor: &RoomMember,
        action: &Map<String, Value>,
    ) -> HookResult;
    /// What `viewer` may see of the state (default: all of it).
    fn view(&mut self, state: &Map<String, Value>, viewer: &RoomMember) -> HookResult;
    /// The views of one step, one per viewer, in order: [`RoomHooks::view`] for each, unless
    /// an implementation can share work between them (each view is still as if the hook
    /// had its own copy of the state; a part of the state given to several viewers may be
    /// one shared field of their views).
    fn views(
        &mut self,
        state: &Map<String, Value>,
        viewers: &[RoomMember],
    ) -> Result<Vec<View>, HookFailure> {
        views_one_by_one(self, state, viewers)
    }
    /// A member joined a running room: a result.
    fn member_joined(&mut self, state: &Map<String, Value>, member: &RoomMember) -> HookResult;
    /// A member left: a result.
    fn member_left(
        &mut self,
        state: &Map<String, Value>,
        member: &RoomMember,
        reason: &str,
    ) -> HookResult;
    /// The part of the state a checkpoint keeps (default: all of it).
    fn recovery_snapshot(&mut self, state: &Map<String, Value>) -> HookResult;
    /// A new leader's state from a checkpoint's `protocol_state`.
    fn restore(
        &mut self,
        protocol_state: &Map<String, Value>,
        members: &[RoomMember],
        epoch: u64,
    ) -> HookResult;
    /// The leader changed: a result.
    fn leader_changed(&mut self, state: &Map<String, Value>, old: &str, new: &str) -> HookResult;
}

/// A view hook returned something other than an object.
pub fn not_an_object() -> HookFailure {
    HookFailure::broken("proto_group_view must return an object")
}

/// The views of one step, each from its own [`RoomHooks::view`] call.
pub fn views_one_by_one<H: RoomHooks + ?Sized>(
    hooks: &mut H,
    state: &Map<String, Value>,
    viewers: &[RoomMember],
) -> Result<Vec<View>, HookFailure> {
    viewers
        .iter()
        .map(|v| View::of_value(hooks.view(state, v)?).ok_or_else(not_an_object))
        .collect()
}
