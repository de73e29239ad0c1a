//! The envelope a room's leader sends each member at every step: a core every member shares
//! (kind, epoch, sequence number, the hash chain, the hashes of the authority's state, the
//! recovery state and the events), the public events, and a private part for this member
//! alone (its view, full or as a delta; what the hooks sent it directly; the checkpoint,
//! full or as a delta, with its certificate). The frame hash covers the core, the view hash
//! the private part, and the leader signs both together with the viewer's key, so a member
//! can check everything it receives and prove what it was sent.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

use super::json::{self, JsonLimit};

/// The envelope format this build speaks (the reference's too).
pub const WIRE_VERSION: u64 = 2;
/// `previous_hash` of the first frame.
pub const ZERO_HASH: &str = crate::api::group::EMPTY_CHECKPOINT_HASH;

/// The fields the frame hash covers; a missing one counts as `null`.
pub const CORE_FIELDS: [&str; 13] = [
    "_group",
    "wire_version",
    "group_id",
    "leader_public_key",
    "leader_epoch",
    "seq",
    "previous_hash",
    "membership_version",
    "authority_state_hash",
    "recovery_state_hash",
    "events_hash",
    "completed",
    "outcome",
];

/// The fields the view hash covers; a missing one counts as `null`.
pub const PRIVATE_FIELDS: [&str; 11] = [
    "viewer_public_key",
    "view_mode",
    "view",
    "view_delta",
    "view_state_hash",
    "direct",
    "checkpoint_mode",
    "checkpoint",
    "checkpoint_delta",
    "checkpoint_hash",
    "checkpoint_signature",
];

/// Why the authority took a step.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, strum::IntoStaticStr, strum::Display,
)]
#[serde(rename_all = "snake_case")]
#[strum(serialize_all = "snake_case")]
pub enum FrameKind {
    /// A new room's first step (seq 0).
    Snapshot,
    /// An accepted action.
    Frame,
    /// A member joined or left.
    Membership,
    /// A new leader's first step, restored from a checkpoint.
    EpochStart,
}

/// Whether a view or a checkpoint travels whole or as a delta.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Form {
    Full,
    Delta,
}

/// The core every member of a step receives.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Core {
    #[serde(rename = "_group")]
    pub kind: FrameKind,
    pub wire_version: u64,
    pub group_id: String,
    pub leader_public_key: String,
    pub leader_epoch: u64,
    pub seq: u64,
    pub previous_hash: String,
    pub membership_version: u64,
    pub authority_state_hash: String,
    pub recovery_state_hash: String,
    pub events_hash: String,
    pub completed: bool,
    pub outcome: Option<String>,
}

/// The part of an envelope for one member only.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Private {
    pub viewer_public_key: String,
    pub view_mode: Form,
    /// The whole view (`None` with a delta).
    pub view: Option<Map<String, Value>>,
    pub view_delta: Vec<Value>,
    /// The hash of the whole view, however it travelled.
    pub view_state_hash: String,
    /// What the hooks addressed to this member alone (`[]` when nothing).
    pub direct: Value,
    pub checkpoint_mode: Form,
    pub checkpoint: Option<Map<String, Value>>,
    pub checkpoint_delta: Vec<Value>,
    pub checkpoint_hash: String,
    pub checkpoint_signature: String,
}

/// A whole envelope, as it travels.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Envelope {
    #[serde(flatten)]
    pub core: Core,
    pub frame_hash: String,
    pub events: Vec<Value>,
    #[serde(flatten)]
    pub private: Private,
    pub view_hash: String,
    pub signature: String,
}

impl Envelope {
    /// The envelope a frame is, its parts moved out of the frame's JSON, not copied: the
    /// large fields (the events, the view, the checkpoint, their deltas, what was sent
    /// directly) are taken out first and empty ones of the same kind left for serde to check,
    /// which would otherwise rebuild them value by value (and buffer every field once more,
    /// reading the flattened parts).
    pub fn from_json(frame: Value) -> Result<Envelope, serde_json::Error> {
        let Value::Object(mut fields) = frame else {
            return Err(serde::de::Error::custom("not an object"));
        };
        let mut large: Vec<(&str, Value)> = Vec::with_capacity(LARGE_FIELDS.len());
        for key in LARGE_FIELDS {
            if let Some(value) = fields.get_mut(key).and_then(hollow) {
                large.push((key, value));
            }
        }
        let mut part = |keys: &[&str]| -> Value {
            let mut taken = Map::with_capacity(keys.len());
            for key in keys {
                if let Some(value) = fields.remove(*key) {
                    taken.insert(key.to_string(), value);
                }
            }
            Value::Object(taken)
        };
        let core = Core::deserialize(part(&CORE_FIELDS))?;
        let private = Private::deserialize(part(&PRIVATE_FIELDS))?;
        /// The fields of an envelope beside its core and private part.
        #[derive(Deserialize)]
        struct Rest {
            frame_hash: String,
            events: Vec<Value>,
            view_hash: String,
            signature: String,
        }
        let rest = Rest::deserialize(Value::Object(fields))?;
        let mut envelope = Envelope {
            core,
            frame_hash: rest.frame_hash,
            events: rest.events,
            private,
            view_hash: rest.view_hash,
            signature: rest.signature,
        };
        for (key, value) in large {
            envelope.put_back(key, value);
        }
        Ok(envelope)
    }

    /// Puts a large field back in its place, read as serde read its hollow copy.
    fn put_back(&mut self, key: &str, value: Value) {
        let private = &mut self.private;
        match (key, value) {
            ("events", Value::Array(items)) => self.events = items,
            ("view", Value::Object(map)) => private.view = Some(map),
            ("view_delta", Value::Array(ops)) => private.view_delta = ops,
            ("direct", direct) => private.direct = direct,
            ("checkpoint", Value::Object(map)) => private.checkpoint = Some(map),
            ("checkpoint_delta", Value::Array(ops)) => private.checkpoint_delta = ops,
            // Serde refused any other kind.
            _ => {}
        }
    }
}

/// The fields of an envelope that may be large.
const LARGE_FIELDS: [&str; 6] = [
    "events",
    "view",
    "view_delta",
    "direct",
    "checkpoint",
    "checkpoint_delta",
];

/// Takes an array or object out of `value`, leaving an empty one of its kind (a scalar is
/// left in place).
fn hollow(value: &mut Value) -> Option<Value> {
    match value {
        Value::Array(_) => Some(std::mem::replace(value, Value::Array(Vec::new()))),
        Value::Object(_) => Some(std::mem::replace(value, Value::Object(Map::new()))),
        _ => None,
    }
}

/// The object of `fields` taken from `envelope` (a missing field is `null`), as the hashes
/// are computed over it.
pub fn part_of(envelope: &Map<String, Value>, fields: &[&str]) -> Value {
    Value::Object(
        fields
            .iter()
            .map(|key| {
                (
                    key.to_string(),
                    envelope.get(*key).cloned().unwrap_or(Value::Null),
                )
            })
            .collect(),
    )
}

/// What the leader signs for one viewer.
pub fn signed_statement(
    frame_hash: &str,
    view_hash: &str,
    viewer: &str,
) -> Result<String, JsonLimit> {
    json::canonical(&json!({
        "frame_hash": frame_hash,
        "view_hash": view_hash,
        "viewer_public_key": viewer,
    }))
}

impl Core {
    /// The frame hash: the hash of the core.
    pub fn hash(&self) -> Result<String, JsonLimit> {
        json::hash(&serde_json::to_value(self).expect("a core serializes"))
    }
}

impl Private {
    /// The view hash: the hash of the private part.
    pub fn hash(&self) -> Result<String, JsonLimit> {
        json::hash(&serde_json::to_value(self).expect("a private part serializes"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_envelope_read_by_parts_is_the_one_serde_reads() {
        let envelope = json!({
            "_group": "frame", "wire_version": 2, "group_id": "g", "leader_public_key": "k",
            "leader_epoch": 1, "seq": 2, "previous_hash": "p", "membership_version": 3,
            "authority_state_hash": "a", "recovery_state_hash": "r", "events_hash": "e",
            "completed": false, "outcome": null, "frame_hash": "f", "events": [{"x": 1}],
            "viewer_public_key": "v", "view_mode": "delta", "view": null,
            "view_delta": [{"op": "set", "path": ["a"], "value": 1}], "view_state_hash": "s",
            "direct": [], "checkpoint_mode": "full", "checkpoint": {"seq": 2},
            "checkpoint_delta": [], "checkpoint_hash": "c", "checkpoint_signature": "cs",
            "view_hash": "vh", "signature": "sig", "unknown": "ignored"
        });
        assert_eq!(
            Envelope::from_json(envelope.clone()).unwrap(),
            Envelope::deserialize(&envelope).unwrap()
        );
        let mut scalars = envelope.clone();
        scalars["direct"] = json!("a note");
        scalars["checkpoint"] = Value::Null;
        assert_eq!(
            Envelope::from_json(scalars.clone()).unwrap(),
            Envelope::deserialize(&scalars).unwrap()
        );
        scalars["view_delta"] = json!({"not": "a list"});
        assert!(Envelope::from_json(scalars).is_err());
        let mut missing = envelope;
        missing.as_object_mut().unwrap().remove("view_mode");
        let error = Envelope::from_json(missing).unwrap_err().to_string();
        assert!(error.contains("view_mode"), "{error}");
        assert!(Envelope::from_json(json!([1])).is_err());
    }

    #[test]
    fn a_missing_field_counts_as_null_and_the_kinds_travel_in_snake_case() {
        let envelope = json!({"_group": "epoch_start", "seq": 3});
        let core = part_of(envelope.as_object().unwrap(), &CORE_FIELDS);
        assert_eq!(core["_group"], "epoch_start");
        assert_eq!(core["outcome"], Value::Null);
        assert_eq!(core.as_object().unwrap().len(), CORE_FIELDS.len());
        assert_eq!(FrameKind::EpochStart.to_string(), "epoch_start");
    }
}
