//! A member's copy of a room: it checks every envelope its leader sends — the frame and
//! view hashes, the signature, the sequence and the hash chain, the checkpoint and its
//! certificate, the view — and keeps the newest verified checkpoint and view. It runs no
//! hooks; it only trusts what verifies. A bootstrap (the first envelope on a channel, or of
//! a new epoch) may jump ahead but never back.

use serde::Deserialize;
use serde_json::{Map, Value};

use crate::canonical::sha256_hex;

use super::checkpoint::{self, Checkpoint};
use super::delta;
use super::envelope::{
    CORE_FIELDS, Envelope, Form, PRIVATE_FIELDS, WIRE_VERSION, signed_statement,
};
use super::error::RoomError;
use super::json;

/// What a member knows of its room.
#[derive(Debug, Clone, PartialEq)]
pub struct Replica {
    pub group_id: String,
    /// This member's key.
    pub viewer: String,
    pub leader: String,
    pub epoch: u64,
    /// The last verified frame, once there is one.
    pub head: Option<Head>,
    pub membership_version: u64,
    pub checkpoint: Option<Checkpoint>,
    pub view: Option<Map<String, Value>>,
}

/// The last verified frame.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Head {
    pub seq: u64,
    pub frame_hash: String,
}

/// One verified envelope (the view and checkpoint it decoded to are the replica's now,
/// not copied).
#[derive(Debug, Clone, PartialEq)]
pub struct Verified {
    pub envelope: Envelope,
}

impl Replica {
    pub fn new(group_id: &str, viewer: &str, leader: &str, epoch: u64) -> Replica {
        Replica {
            group_id: group_id.to_string(),
            viewer: viewer.to_ascii_lowercase(),
            leader: leader.to_ascii_lowercase(),
            epoch,
            head: None,
            membership_version: 0,
            checkpoint: None,
            view: None,
        }
    }

    /// Checks `raw` and, when it is new, takes it in: `Ok(None)` for a repeat of the last
    /// frame; an error leaves the replica unchanged.
    pub fn apply(&mut self, raw: &Value, bootstrap: bool) -> Result<Option<Verified>, RoomError> {
        let map = raw
            .as_object()
            .ok_or_else(|| RoomError::Malformed("not an object".into()))?;
        let envelope =
            Envelope::deserialize(raw).map_err(|e| RoomError::Malformed(e.to_string()))?;
        self.check_identity(&envelope)?;
        if sha256_hex(json::canonical_part(map, &CORE_FIELDS)?) != envelope.frame_hash {
            return Err(RoomError::FrameHash);
        }
        let events = map.get("events").unwrap_or(&Value::Null);
        if json::hash(events)? != envelope.core.events_hash {
            return Err(RoomError::EventsHash);
        }
        if sha256_hex(json::canonical_part(map, &PRIVATE_FIELDS)?) != envelope.view_hash {
            return Err(RoomError::ViewHash);
        }
        let statement = signed_statement(&envelope.frame_hash, &envelope.view_hash, &self.viewer)?;
        crate::identity::verify_hex(&self.leader, statement.as_bytes(), &envelope.signature)
            .map_err(|_| RoomError::Signature)?;
        let seq = envelope.core.seq;
        match &self.head {
            Some(head) if head.seq == seq && head.frame_hash == envelope.frame_hash => {
                return Ok(None);
            }
            Some(head) if seq <= head.seq => {
                return Err(RoomError::Backwards {
                    have: head.seq,
                    got: seq,
                });
            }
            Some(head) if !bootstrap && seq != head.seq + 1 => {
                return Err(RoomError::Gap {
                    have: head.seq,
                    got: seq,
                });
            }
            Some(head) if !bootstrap && envelope.core.previous_hash != head.frame_hash => {
                return Err(RoomError::Chain(seq));
            }
            None if !bootstrap => return Err(RoomError::NotBootstrap),
            _ => {}
        }
        let mut envelope = envelope;
        let checkpoint = self.decode_checkpoint(&mut envelope, bootstrap)?;
        let view = self.decode_view(&mut envelope, bootstrap)?;
        self.head = Some(Head {
            seq,
            frame_hash: envelope.frame_hash.clone(),
        });
        self.membership_version = envelope.core.membership_version;
        self.checkpoint = Some(checkpoint);
        self.view = Some(view);
        Ok(Some(Verified { envelope }))
    }

    /// Follows a new leader: its envelopes verify with its key from now on.
    pub fn advance_epoch(&mut self, leader: &str, epoch: u64) -> Result<(), RoomError> {
        if epoch <= self.epoch {
            return Err(RoomError::EpochNotNewer {
                have: self.epoch,
                got: epoch,
            });
        }
        self.leader = leader.to_ascii_lowercase();
        self.epoch = epoch;
        Ok(())
    }

    fn check_identity(&self, envelope: &Envelope) -> Result<(), RoomError> {
        let core = &envelope.core;
        let mismatch = |what: &'static str, expected: &str, got: &str| {
            Err(RoomError::Mismatch {
                what,
                expected: expected.to_string(),
                got: got.to_string(),
            })
        };
        if core.group_id != self.group_id {
            return mismatch("room", &self.group_id, &core.group_id);
        }
        if core.leader_public_key != self.leader {
            return mismatch("leader", &self.leader, &core.leader_public_key);
        }
        if core.leader_epoch != self.epoch {
            return mismatch(
                "epoch",
                &self.epoch.to_string(),
                &core.leader_epoch.to_string(),
            );
        }
        if envelope.private.viewer_public_key != self.viewer {
            return mismatch("viewer", &self.viewer, &envelope.private.viewer_public_key);
        }
        if core.wire_version != WIRE_VERSION {
            return Err(RoomError::WireVersion(core.wire_version));
        }
        Ok(())
    }

    fn decode_checkpoint(
        &self,
        envelope: &mut Envelope,
        bootstrap: bool,
    ) -> Result<Checkpoint, RoomError> {
        let frame_hash = envelope.frame_hash.clone();
        let core = &envelope.core;
        let private = &mut envelope.private;
        let raw = match (private.checkpoint_mode, private.checkpoint.take()) {
            (Form::Full, Some(full)) if private.checkpoint_delta.is_empty() => full,
            (Form::Delta, None) if bootstrap => {
                return Err(RoomError::BootstrapDelta("checkpoint"));
            }
            (Form::Delta, None) => {
                let base = self
                    .checkpoint
                    .as_ref()
                    .ok_or(RoomError::NoBase("checkpoint"))?;
                let base_state = serde_json::to_value(&base.state).expect("a state serializes");
                let state =
                    delta::apply_to(base_state, &private.checkpoint_delta).map_err(|error| {
                        RoomError::Delta {
                            what: "checkpoint",
                            error,
                        }
                    })?;
                let Value::Object(state) = state else {
                    return Err(RoomError::CheckpointState(
                        "the delta made a non-object".into(),
                    ));
                };
                let mut raw = Map::new();
                raw.insert("version".into(), checkpoint::VERSION.into());
                raw.insert("group_id".into(), self.group_id.clone().into());
                raw.insert("leader_public_key".into(), self.leader.clone().into());
                raw.insert("leader_epoch".into(), self.epoch.into());
                raw.insert("seq".into(), core.seq.into());
                raw.insert("frame_hash".into(), frame_hash.clone().into());
                raw.insert("membership_version".into(), core.membership_version.into());
                raw.extend(state);
                raw.insert(
                    "checkpoint_hash".into(),
                    private.checkpoint_hash.clone().into(),
                );
                raw.insert(
                    "checkpoint_signature".into(),
                    private.checkpoint_signature.clone().into(),
                );
                raw
            }
            _ => return Err(RoomError::Form("checkpoint")),
        };
        let (checkpoint, state_text) = Checkpoint::verify(raw)?;
        if checkpoint.checkpoint_hash != private.checkpoint_hash
            || checkpoint.checkpoint_signature != private.checkpoint_signature
        {
            return Err(RoomError::CheckpointHash);
        }
        let differs = [
            ("group_id", checkpoint.group_id == self.group_id),
            ("leader", checkpoint.leader_public_key == self.leader),
            ("epoch", checkpoint.leader_epoch == self.epoch),
            ("seq", checkpoint.seq == core.seq),
            ("frame_hash", checkpoint.frame_hash == frame_hash),
            (
                "membership_version",
                checkpoint.membership_version == core.membership_version,
            ),
            ("completed", checkpoint.state.completed == core.completed),
            ("outcome", checkpoint.state.outcome == core.outcome),
        ];
        if let Some((what, _)) = differs.iter().find(|(_, same)| !same) {
            return Err(RoomError::CheckpointFrame(what));
        }
        if sha256_hex(state_text) != core.recovery_state_hash {
            return Err(RoomError::RecoveryHash);
        }
        Ok(checkpoint)
    }

    fn decode_view(
        &self,
        envelope: &mut Envelope,
        bootstrap: bool,
    ) -> Result<Map<String, Value>, RoomError> {
        let private = &mut envelope.private;
        let view = match (private.view_mode, private.view.take()) {
            (Form::Full, Some(full)) if private.view_delta.is_empty() => full,
            (Form::Delta, None) if bootstrap => return Err(RoomError::BootstrapDelta("view")),
            (Form::Delta, None) => {
                let base = self.view.as_ref().ok_or(RoomError::NoBase("view"))?;
                match delta::apply_to(Value::Object(base.clone()), &private.view_delta).map_err(
                    |error| RoomError::Delta {
                        what: "view",
                        error,
                    },
                )? {
                    Value::Object(view) => view,
                    _ => return Err(RoomError::Form("view")),
                }
            }
            _ => return Err(RoomError::Form("view")),
        };
        let view = Value::Object(view);
        if json::hash(&view)? != private.view_state_hash {
            return Err(RoomError::ViewState);
        }
        let Value::Object(view) = view else {
            unreachable!("built as an object above")
        };
        Ok(view)
    }
}
