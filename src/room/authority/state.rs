//! A step's checkpoint state as the leader renders it and diffs it against the previous
//! step's, field by field, reading the hooks' recovery state (a room's largest part) where it
//! lies instead of copying the whole state into one JSON value first.

use serde_json::{Map, Value};

use crate::room::checkpoint::{CheckpointState, STATE_FIELDS};
use crate::room::delta;
use crate::room::error::RoomError;
use crate::room::json;

/// One field of a checkpoint state as JSON.
enum Field<'a> {
    /// The hooks' recovery state, borrowed.
    Map(&'a Map<String, Value>),
    /// Any other field (small), built.
    Small(Value),
}

fn field<'a>(state: &'a CheckpointState, key: &str) -> Field<'a> {
    let small = |value: Result<Value, serde_json::Error>| {
        Field::Small(value.expect("a checkpoint state's field serializes"))
    };
    match key {
        "protocol_state" => Field::Map(&state.protocol_state),
        "members" => small(serde_json::to_value(&state.members)),
        "last_client_seq" => small(serde_json::to_value(&state.last_client_seq)),
        "recovery_mode" => small(serde_json::to_value(state.recovery_mode)),
        "completed" => Field::Small(state.completed.into()),
        "outcome" => small(serde_json::to_value(&state.outcome)),
        other => unreachable!("{other} is not a checkpoint state field"),
    }
}

/// The canonical text of each of the state's fields, in [`STATE_FIELDS`] order.
pub(super) fn texts(state: &CheckpointState) -> Result<Vec<(&'static str, String)>, RoomError> {
    STATE_FIELDS
        .iter()
        .map(|key| {
            let text = match field(state, key) {
                Field::Map(map) => json::canonical_map(map)?,
                Field::Small(value) => json::canonical(&value)?,
            };
            Ok((*key, text))
        })
        .collect()
}

/// The delta that turns `previous` into `current`: what [`delta::diff`] of the two states as
/// JSON gives.
pub(super) fn diff(previous: &CheckpointState, current: &CheckpointState) -> Vec<Value> {
    let mut keys = STATE_FIELDS;
    keys.sort_unstable();
    let mut ops = Vec::new();
    for key in keys {
        match (field(previous, key), field(current, key)) {
            (Field::Map(before), Field::Map(after)) => {
                ops.extend(delta::diff_maps_under(before, after, key))
            }
            (Field::Small(before), Field::Small(after)) => {
                ops.extend(delta::diff_under(&before, &after, key))
            }
            _ => unreachable!("a field has one form"),
        }
    }
    delta::limited(ops, || {
        serde_json::to_value(current).expect("a checkpoint state serializes")
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::group::{MemberStatus, RecoveryMode};
    use crate::room::checkpoint::RoomMember;
    use serde_json::json;

    fn state(log: Vec<Value>, seq: u64, completed: bool) -> CheckpointState {
        CheckpointState {
            members: vec![RoomMember {
                member_id: "m0".into(),
                public_key: "ab".repeat(32),
                seat: 0,
                status: MemberStatus::Active,
            }],
            last_client_seq: [("ab".repeat(32), seq)].into_iter().collect(),
            recovery_mode: RecoveryMode::Exact,
            protocol_state: json!({"log": log, "topic": "t"})
                .as_object()
                .unwrap()
                .clone(),
            completed,
            outcome: completed.then(|| "done".to_string()),
        }
    }

    #[test]
    fn fields_render_and_diff_as_the_whole_state_does() {
        let before = state(vec![json!(1), json!(2)], 1, false);
        let after = state(vec![json!(2), json!(3)], 2, true);
        let whole = |s: &CheckpointState| serde_json::to_value(s).unwrap();
        for one in [&before, &after] {
            let rendered = texts(one).unwrap();
            let map = whole(one);
            for (key, text) in rendered {
                assert_eq!(text, json::canonical(&map[key]).unwrap(), "{key}");
            }
        }
        assert_eq!(
            diff(&before, &after),
            delta::diff(&whole(&before), &whole(&after))
        );
        assert_eq!(diff(&before, &before), Vec::<Value>::new());
        let mut huge = after.clone();
        huge.protocol_state = (0..delta::MAX_OPS + 1)
            .map(|n| (format!("k{n}"), json!(n)))
            .collect();
        assert_eq!(
            diff(&before, &huge),
            delta::diff(&whole(&before), &whole(&huge))
        );
    }
}
