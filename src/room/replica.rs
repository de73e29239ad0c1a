//! A member's copy of a room: it checks every envelope its leader sends — the frame and
//! view hashes, the signature, the sequence and the hash chain, the checkpoint and its
//! certificate, the view — and keeps the newest verified checkpoint and view. It runs no
//! hooks; it only trusts what verifies. A bootstrap (the first envelope on a channel, or of
//! a new epoch) may jump ahead but never back. A delta envelope's deltas apply in place to
//! the view and checkpoint state it holds, undone when a check fails, so verifying one
//! copies only what it changed.

use serde::Deserialize;
use serde_json::{Map, Value};

use crate::canonical::sha256_hex;

use super::checkpoint::{self, Checkpoint};
use super::delta::Lent;
use super::envelope::{
    CORE_FIELDS, Envelope, Form, PRIVATE_FIELDS, Private, WIRE_VERSION, signed_statement,
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
        let checkpoint = self.next_checkpoint(&mut envelope, bootstrap)?;
        let view = match self.next_view(&mut envelope.private, bootstrap) {
            Ok(view) => view,
            Err(error) => {
                checkpoint.roll_back(&mut self.checkpoint);
                return Err(error);
            }
        };
        self.head = Some(Head {
            seq,
            frame_hash: envelope.frame_hash.clone(),
        });
        self.membership_version = envelope.core.membership_version;
        self.checkpoint = Some(checkpoint.keep());
        self.view = Some(object(view.keep()));
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

    /// The envelope's checkpoint, checked: sent whole, or a delta applied in place to this
    /// replica's (given back as it was when a check fails).
    fn next_checkpoint(
        &mut self,
        envelope: &mut Envelope,
        bootstrap: bool,
    ) -> Result<NextCheckpoint, RoomError> {
        let private = &mut envelope.private;
        let (next, state_text) = match (private.checkpoint_mode, private.checkpoint.take()) {
            (Form::Full, Some(full)) if private.checkpoint_delta.is_empty() => {
                let (checkpoint, state_text) = Checkpoint::verify(full)?;
                (NextCheckpoint::Full(checkpoint), state_text)
            }
            (Form::Delta, None) if bootstrap => {
                return Err(RoomError::BootstrapDelta("checkpoint"));
            }
            (Form::Delta, None) => self.checkpoint_delta(envelope)?,
            _ => return Err(RoomError::Form("checkpoint")),
        };
        match self.check_tied(next.checkpoint(), &state_text, envelope) {
            Ok(()) => Ok(next),
            Err(error) => {
                next.roll_back(&mut self.checkpoint);
                Err(error)
            }
        }
    }

    /// The checkpoint a delta makes of this replica's: its state is lent to the delta (the
    /// hooks' recovery state moved, not copied), and its frame is the envelope's.
    fn checkpoint_delta(
        &mut self,
        envelope: &Envelope,
    ) -> Result<(NextCheckpoint, String), RoomError> {
        let (core, private) = (&envelope.core, &envelope.private);
        let frame: [(&str, Value); 7] = [
            ("version", checkpoint::VERSION.into()),
            ("group_id", self.group_id.clone().into()),
            ("leader_public_key", self.leader.clone().into()),
            ("leader_epoch", self.epoch.into()),
            ("seq", core.seq.into()),
            ("frame_hash", envelope.frame_hash.clone().into()),
            ("membership_version", core.membership_version.into()),
        ];
        let certificate: [(&str, Value); 2] = [
            ("checkpoint_hash", private.checkpoint_hash.clone().into()),
            (
                "checkpoint_signature",
                private.checkpoint_signature.clone().into(),
            ),
        ];
        let base = self
            .checkpoint
            .as_mut()
            .ok_or(RoomError::NoBase("checkpoint"))?;
        let mut state = Lent::new(Value::Object(base.state.lend_json()));
        let checked = state
            .apply(&private.checkpoint_delta)
            .map_err(|error| RoomError::Delta {
                what: "checkpoint",
                error,
            })
            .and_then(|()| {
                let Value::Object(fields) = state.value() else {
                    return Err(RoomError::CheckpointState(
                        "the delta made a non-object".into(),
                    ));
                };
                // As one object, state fields over frame fields, the certificate over both.
                let fields: Vec<(&str, &Value)> = frame
                    .iter()
                    .map(|(key, value)| (*key, value))
                    .chain(fields.iter().map(|(key, value)| (key.as_str(), value)))
                    .chain(certificate.iter().map(|(key, value)| (*key, value)))
                    .collect();
                Checkpoint::verify_fields(&fields)
            });
        match checked {
            Ok((checkpoint, state_text)) => {
                Ok((NextCheckpoint::Delta { state, checkpoint }, state_text))
            }
            Err(error) => {
                base.state.protocol_state =
                    checkpoint::take_protocol_state(&mut object(state.roll_back()));
                Err(error)
            }
        }
    }

    /// Checks that a verified checkpoint is the one the envelope certifies and is tied to its
    /// frame.
    fn check_tied(
        &self,
        checkpoint: &Checkpoint,
        state_text: &str,
        envelope: &Envelope,
    ) -> Result<(), RoomError> {
        let (core, private) = (&envelope.core, &envelope.private);
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
            ("frame_hash", checkpoint.frame_hash == envelope.frame_hash),
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
        Ok(())
    }

    /// The envelope's view, checked: sent whole, or a delta applied in place to this
    /// replica's (given back as it was when a check fails).
    fn next_view(&mut self, private: &mut Private, bootstrap: bool) -> Result<Lent, RoomError> {
        let view = match (private.view_mode, private.view.take()) {
            (Form::Full, Some(full)) if private.view_delta.is_empty() => {
                Lent::new(Value::Object(full))
            }
            (Form::Delta, None) if bootstrap => return Err(RoomError::BootstrapDelta("view")),
            (Form::Delta, None) => {
                let base = self.view.take().ok_or(RoomError::NoBase("view"))?;
                let mut view = Lent::new(Value::Object(base));
                if let Err(error) = view.apply(&private.view_delta) {
                    self.view = Some(object(view.roll_back()));
                    return Err(RoomError::Delta {
                        what: "view",
                        error,
                    });
                }
                if !view.value().is_object() {
                    self.view = Some(object(view.roll_back()));
                    return Err(RoomError::Form("view"));
                }
                view
            }
            _ => return Err(RoomError::Form("view")),
        };
        match json::hash(view.value()) {
            Ok(hash) if hash == private.view_state_hash => Ok(view),
            failed => {
                if private.view_mode == Form::Delta {
                    self.view = Some(object(view.roll_back()));
                }
                Err(failed.map_or_else(RoomError::from, |_| RoomError::ViewState))
            }
        }
    }
}

/// A checkpoint an envelope brings, checked but not yet kept.
enum NextCheckpoint {
    /// Sent whole; the replica's own is untouched until it is kept.
    Full(Checkpoint),
    /// A delta applied to the replica's state, lent to it: `checkpoint` is the new one but
    /// for its hooks' recovery state, which is still in `state`.
    Delta { state: Lent, checkpoint: Checkpoint },
}

impl NextCheckpoint {
    fn checkpoint(&self) -> &Checkpoint {
        match self {
            NextCheckpoint::Full(checkpoint) | NextCheckpoint::Delta { checkpoint, .. } => {
                checkpoint
            }
        }
    }

    /// The new checkpoint, whole.
    fn keep(self) -> Checkpoint {
        match self {
            NextCheckpoint::Full(checkpoint) => checkpoint,
            NextCheckpoint::Delta {
                state,
                mut checkpoint,
            } => {
                checkpoint.state.protocol_state =
                    checkpoint::take_protocol_state(&mut object(state.keep()));
                checkpoint
            }
        }
    }

    /// Gives the replica's checkpoint (`held`) back its state as it was.
    fn roll_back(self, held: &mut Option<Checkpoint>) {
        if let (NextCheckpoint::Delta { state, .. }, Some(held)) = (self, held) {
            held.state.protocol_state =
                checkpoint::take_protocol_state(&mut object(state.roll_back()));
        }
    }
}

/// The object a checked value is (every other kind was refused before it is taken).
fn object(value: Value) -> Map<String, Value> {
    match value {
        Value::Object(map) => map,
        _ => Map::new(),
    }
}
