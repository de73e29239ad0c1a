//! A room's checkpoint: everything a new leader needs to carry on after the old one died —
//! the members, each member's last accepted action number, the recovery mode, the hooks'
//! recovery state, and whether the room ended — tied to one frame (group, leader, epoch,
//! sequence number, frame hash, membership version) and certified by the leader that made
//! it. Every envelope carries the checkpoint of its frame, so every member holds one.

use std::collections::{BTreeMap, HashSet};

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::delta::Lent;
use super::error::RoomError;
use super::json;
use super::kept::KeptText;
use crate::api::group::{MemberStatus, RecoveryMode, checkpoint_canonical};

/// The checkpoint format this build speaks.
pub const VERSION: u64 = 1;
/// The six fields of a checkpoint's state (what a delta changes).
pub const STATE_FIELDS: [&str; 6] = [
    "members",
    "last_client_seq",
    "recovery_mode",
    "protocol_state",
    "completed",
    "outcome",
];
/// The highest seat a room has (32 seats).
pub const MAX_SEAT: u32 = 31;

/// A member as a room's state and its hooks see it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RoomMember {
    pub member_id: String,
    pub public_key: String,
    pub seat: u32,
    pub status: MemberStatus,
}

impl From<&crate::api::group::GroupMember> for RoomMember {
    /// A member as the server lists it.
    fn from(member: &crate::api::group::GroupMember) -> RoomMember {
        RoomMember {
            member_id: member.member_id.clone(),
            public_key: member.public_key.clone(),
            seat: member.seat,
            status: member.status,
        }
    }
}

/// What a checkpoint records.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CheckpointState {
    /// Sorted by seat.
    pub members: Vec<RoomMember>,
    pub last_client_seq: BTreeMap<String, u64>,
    pub recovery_mode: RecoveryMode,
    pub protocol_state: Map<String, Value>,
    pub completed: bool,
    pub outcome: Option<String>,
}

/// A checkpoint and the frame it is tied to.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Checkpoint {
    pub version: u64,
    pub group_id: String,
    pub leader_public_key: String,
    pub leader_epoch: u64,
    pub seq: u64,
    pub frame_hash: String,
    pub membership_version: u64,
    #[serde(flatten)]
    pub state: CheckpointState,
    pub checkpoint_hash: String,
    pub checkpoint_signature: String,
}

impl Checkpoint {
    /// What its leader signed.
    pub fn certificate(&self) -> String {
        checkpoint_canonical(
            &self.group_id,
            &self.leader_public_key,
            self.leader_epoch,
            self.seq,
            &self.frame_hash,
            self.membership_version,
            &self.checkpoint_hash,
        )
    }

    /// Checks a received checkpoint: its hash over its content (which checks the room's
    /// limits on it), its state, and its leader's certificate. Also returns the hash of its
    /// state (the six fields), which a frame's `recovery_state_hash` covers.
    pub fn verify(raw: Map<String, Value>) -> Result<(Checkpoint, String), RoomError> {
        let (mut checkpoint, recovery_state_hash, state) = verify_whole(raw)?;
        checkpoint.state.protocol_state = take_protocol_state(&mut object(state.keep().0));
        Ok((checkpoint, recovery_state_hash))
    }
}

/// [`Checkpoint::verify`], giving back the checkpoint's state as JSON with its texts, lent
/// (and the hooks' recovery state still in it, not in the checkpoint).
pub fn verify_whole(mut raw: Map<String, Value>) -> Result<(Checkpoint, String, Lent), RoomError> {
    let state: Map<String, Value> = STATE_FIELDS
        .iter()
        .filter_map(|key| Some((key.to_string(), raw.remove(*key)?)))
        .collect();
    let mut state = Lent::new(Value::Object(state), KeptText::default());
    let frame: Vec<(&str, &Value)> = raw.iter().map(|(k, v)| (k.as_str(), v)).collect();
    let (checkpoint, recovery_state_hash) = verify_lent(&frame, &mut state)?;
    Ok((checkpoint, recovery_state_hash, state))
}

/// [`Checkpoint::verify`] of the checkpoint made of the fields of `frame` (its frame and
/// certificate, and anything else it holds) and of the state lent to a delta (whose fields
/// win over the frame's; the certificate's over both), without building it: the state is
/// hashed from its kept texts, which renders only what the delta changed, and the checkpoint
/// it returns has an empty `protocol_state` for the caller to move in from the state (with
/// [`take_protocol_state`]), so the hooks' recovery state, a room's largest part, is never
/// copied.
pub fn verify_lent(
    frame: &[(&str, &Value)],
    state: &mut Lent,
) -> Result<(Checkpoint, String), RoomError> {
    let not_an_object = || RoomError::CheckpointState("its state is not an object".into());
    // Checked before the refresh, which would render it.
    if !state.value().is_object() {
        return Err(not_an_object());
    }
    let (Value::Object(state), texts) = state.refreshed()? else {
        return Err(not_an_object());
    };
    let is_certificate = |key: &str| matches!(key, "checkpoint_hash" | "checkpoint_signature");
    let rendered: Vec<(&str, String)> = frame
        .iter()
        .filter(|(key, _)| !is_certificate(key))
        .map(|(key, value)| Ok((*key, json::canonical(value)?)))
        .collect::<Result<_, RoomError>>()?;
    let hash = texts.hash_object(&rendered, |key| !is_certificate(key));
    let mut fields: BTreeMap<&str, &Value> = frame.iter().copied().collect();
    let state_fields = state.iter().filter(|(key, _)| !is_certificate(key));
    fields.extend(state_fields.map(|(key, value)| (key.as_str(), value)));
    if fields.get("checkpoint_hash").and_then(|v| v.as_str()) != Some(hash.as_str()) {
        return Err(RoomError::CheckpointHash);
    }
    if let Some(key) = STATE_FIELDS.iter().find(|key| !fields.contains_key(*key)) {
        return Err(RoomError::CheckpointState(format!("{key} is missing")));
    }
    let recovery_state_hash = texts.hash_object(&[], |key| STATE_FIELDS.contains(&key));
    let checkpoint = read_fields(&fields).map_err(RoomError::CheckpointState)?;
    check_members(&checkpoint.state.members).map_err(RoomError::CheckpointState)?;
    if checkpoint.version != VERSION {
        return Err(RoomError::CheckpointState(format!(
            "version {} is not 1",
            checkpoint.version
        )));
    }
    crate::identity::verify_hex(
        &checkpoint.leader_public_key,
        checkpoint.certificate().as_bytes(),
        &checkpoint.checkpoint_signature,
    )
    .map_err(|_| RoomError::Certificate)?;
    Ok((checkpoint, recovery_state_hash))
}

/// The typed checkpoint of `fields`, read in place field by field (the derived reader's
/// `flatten` would buffer every field of the state and read it twice), but for the hooks'
/// recovery state, which must be an object and is left for the caller to move in.
fn read_fields(fields: &BTreeMap<&str, &Value>) -> Result<Checkpoint, String> {
    fn field<T: DeserializeOwned>(fields: &BTreeMap<&str, &Value>, key: &str) -> Result<T, String> {
        match fields.get(key) {
            Some(value) => T::deserialize(*value).map_err(|e| format!("{key}: {e}")),
            None => T::deserialize(&Value::Null).map_err(|_| format!("missing field `{key}`")),
        }
    }
    if !fields.get("protocol_state").is_some_and(|v| v.is_object()) {
        return Err("protocol_state: not an object".into());
    }
    Ok(Checkpoint {
        version: field(fields, "version")?,
        group_id: field(fields, "group_id")?,
        leader_public_key: field(fields, "leader_public_key")?,
        leader_epoch: field(fields, "leader_epoch")?,
        seq: field(fields, "seq")?,
        frame_hash: field(fields, "frame_hash")?,
        membership_version: field(fields, "membership_version")?,
        state: CheckpointState {
            members: field(fields, "members")?,
            last_client_seq: field(fields, "last_client_seq")?,
            recovery_mode: field(fields, "recovery_mode")?,
            protocol_state: Map::new(),
            completed: field(fields, "completed")?,
            outcome: field(fields, "outcome")?,
        },
        checkpoint_hash: field(fields, "checkpoint_hash")?,
        checkpoint_signature: field(fields, "checkpoint_signature")?,
    })
}

/// Moves the hooks' recovery state out of a checkpoint state's JSON that [`verify_lent`]
/// accepted, where it is an object; `null` keeps its place.
pub fn take_protocol_state(json: &mut Map<String, Value>) -> Map<String, Value> {
    match json.get_mut("protocol_state").map(Value::take) {
        Some(Value::Object(state)) => state,
        _ => Map::new(),
    }
}

/// The object a checked value is (every other kind was refused before it is taken).
pub fn object(value: Value) -> Map<String, Value> {
    match value {
        Value::Object(map) => map,
        _ => Map::new(),
    }
}

/// A checkpoint a member handed its new leader: verified like any other, of this room, and
/// certified by one of the leaders the new one knows (`trusted`) — a checkpoint signed by
/// any other key proves nothing about the room's history. A leader is its key and epoch.
pub fn handed_over(
    raw: &Map<String, Value>,
    group_id: &str,
    trusted: &[(String, u64)],
) -> Result<Checkpoint, RoomError> {
    let (checkpoint, _) = Checkpoint::verify(raw.clone())?;
    if checkpoint.group_id != group_id {
        return Err(RoomError::CheckpointFrame("group_id"));
    }
    let certified_by = |(key, epoch): &(String, u64)| {
        *key == checkpoint.leader_public_key && *epoch == checkpoint.leader_epoch
    };
    if !trusted.iter().any(certified_by) {
        return Err(RoomError::Certificate);
    }
    Ok(checkpoint)
}

/// Where a new leader's epoch starts: the newest of the checkpoints it holds — the latest
/// epoch, then the highest sequence number — so no member that verified more of the old
/// epoch than the claimant is sent back to an earlier step.
pub fn newest(own: Checkpoint, handed: impl IntoIterator<Item = Checkpoint>) -> Checkpoint {
    handed.into_iter().fold(own, |best, other| {
        if (other.leader_epoch, other.seq) > (best.leader_epoch, best.seq) {
            other
        } else {
            best
        }
    })
}

/// Members have 64-hex keys, seats up to 31, and no key or seat twice.
pub fn check_members(members: &[RoomMember]) -> Result<(), String> {
    let mut keys = HashSet::new();
    let mut seats = HashSet::new();
    for member in members {
        if !crate::identity::is_lower_hex_64(&member.public_key) {
            return Err(format!(
                "member key {:?} is not 64 lowercase hex",
                member.public_key
            ));
        }
        if member.seat > MAX_SEAT {
            return Err(format!("seat {} is above {MAX_SEAT}", member.seat));
        }
        if !keys.insert(&member.public_key) || !seats.insert(member.seat) {
            return Err("two members share a key or a seat".into());
        }
    }
    Ok(())
}
