//! A member's copy of a room: it checks every envelope its leader sends — the frame and
//! view hashes, the signature, the sequence and the hash chain, the checkpoint and its
//! certificate, the view — and keeps the newest verified checkpoint and view. It runs no
//! hooks; it only trusts what verifies. A bootstrap (the first envelope on a channel, or of
//! a new epoch) may jump ahead but never back. A delta envelope's deltas apply in place to
//! the view and checkpoint state it holds, with their canonical texts kept in parts, undone
//! when a check fails, so verifying one copies and renders only what it changed.

use serde_json::{Map, Value};

use super::checkpoint::{self, Checkpoint, object, take_protocol_state};
use super::delta::Lent;
use super::envelope::{
    CORE_FIELDS, Envelope, Form, PRIVATE_FIELDS, Private, WIRE_VERSION, signed_statement,
};
use super::error::RoomError;
use super::json;
use super::kept::KeptText;

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
    /// The canonical text of `view`, kept in parts for the next delta.
    view_text: KeptText,
    /// The checkpoint's state as the next delta applies to it.
    state: KeptState,
}

/// A checkpoint's state as the JSON its deltas apply to, with its canonical text kept in
/// parts. Between envelopes the hooks' recovery state, its largest part, is the checkpoint's
/// (`null` keeps its place here); a delta has it moved in, not copied.
#[derive(Debug, Clone, PartialEq, Default)]
struct KeptState {
    json: Map<String, Value>,
    text: KeptText,
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
            view_text: KeptText::default(),
            state: KeptState::default(),
        }
    }

    /// Checks `raw` and, when it is new, takes it in (moved into the typed envelope, not
    /// copied): `Ok(None)` for a repeat of the last frame; an error leaves the replica
    /// unchanged.
    pub fn apply(&mut self, raw: Value, bootstrap: bool) -> Result<Option<Verified>, RoomError> {
        let map = raw
            .as_object()
            .ok_or_else(|| RoomError::Malformed("not an object".into()))?;
        // Hashed before the envelope takes the parts, reported after it proves well formed.
        let hashes = (|| -> Result<[String; 3], RoomError> {
            Ok([
                json::hash_part(map, &CORE_FIELDS)?,
                json::hash(map.get("events").unwrap_or(&Value::Null))?,
                json::hash_part(map, &PRIVATE_FIELDS)?,
            ])
        })();
        let envelope = Envelope::from_json(raw).map_err(|e| RoomError::Malformed(e.to_string()))?;
        self.check_identity(&envelope)?;
        let [frame_hash, events_hash, view_hash] = hashes?;
        if frame_hash != envelope.frame_hash {
            return Err(RoomError::FrameHash);
        }
        if events_hash != envelope.core.events_hash {
            return Err(RoomError::EventsHash);
        }
        if view_hash != envelope.view_hash {
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
                self.give_back_state(checkpoint);
                return Err(error);
            }
        };
        self.head = Some(Head {
            seq,
            frame_hash: envelope.frame_hash.clone(),
        });
        self.membership_version = envelope.core.membership_version;
        let (view, view_text) = view.keep();
        self.view = Some(object(view));
        self.view_text = view_text;
        let NextCheckpoint {
            mut checkpoint,
            state,
            ..
        } = checkpoint;
        let (json, text) = state.keep();
        let mut json = object(json);
        checkpoint.state.protocol_state = take_protocol_state(&mut json);
        self.checkpoint = Some(checkpoint);
        self.state = KeptState { json, text };
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
        let next = match (private.checkpoint_mode, private.checkpoint.take()) {
            (Form::Full, Some(full)) if private.checkpoint_delta.is_empty() => {
                let (checkpoint, recovery_state_hash, state) = checkpoint::verify_whole(full)?;
                NextCheckpoint {
                    checkpoint,
                    recovery_state_hash,
                    state,
                    form: Form::Full,
                }
            }
            (Form::Delta, None) if bootstrap => {
                return Err(RoomError::BootstrapDelta("checkpoint"));
            }
            (Form::Delta, None) => self.checkpoint_delta(envelope)?,
            _ => return Err(RoomError::Form("checkpoint")),
        };
        match self.check_tied(&next, envelope) {
            Ok(()) => Ok(next),
            Err(error) => {
                self.give_back_state(next);
                Err(error)
            }
        }
    }

    /// The checkpoint a delta makes of this replica's: its state is lent to the delta (the
    /// hooks' recovery state moved, not copied), and its frame is the envelope's.
    fn checkpoint_delta(&mut self, envelope: &Envelope) -> Result<NextCheckpoint, RoomError> {
        let (core, private) = (&envelope.core, &envelope.private);
        let fields: [(&str, Value); 9] = [
            ("version", checkpoint::VERSION.into()),
            ("group_id", self.group_id.clone().into()),
            ("leader_public_key", self.leader.clone().into()),
            ("leader_epoch", self.epoch.into()),
            ("seq", core.seq.into()),
            ("frame_hash", envelope.frame_hash.clone().into()),
            ("membership_version", core.membership_version.into()),
            ("checkpoint_hash", private.checkpoint_hash.clone().into()),
            (
                "checkpoint_signature",
                private.checkpoint_signature.clone().into(),
            ),
        ];
        let frame: Vec<(&str, &Value)> = fields.iter().map(|(key, value)| (*key, value)).collect();
        let base = self
            .checkpoint
            .as_mut()
            .ok_or(RoomError::NoBase("checkpoint"))?;
        let mut json = std::mem::take(&mut self.state.json);
        let protocol_state = std::mem::take(&mut base.state.protocol_state);
        json.insert("protocol_state".into(), Value::Object(protocol_state));
        let mut state = Lent::new(Value::Object(json), std::mem::take(&mut self.state.text));
        let checked = state
            .apply(&private.checkpoint_delta)
            .map_err(|error| RoomError::Delta {
                what: "checkpoint",
                error,
            })
            .and_then(|()| checkpoint::verify_lent(&frame, &mut state));
        match checked {
            Ok((checkpoint, recovery_state_hash)) => Ok(NextCheckpoint {
                checkpoint,
                recovery_state_hash,
                state,
                form: Form::Delta,
            }),
            Err(error) => {
                self.take_back_state(state);
                Err(error)
            }
        }
    }

    /// Gives the replica back what a checkpoint that is not kept was lent.
    fn give_back_state(&mut self, next: NextCheckpoint) {
        if next.form == Form::Delta {
            self.take_back_state(next.state);
        }
    }

    /// Takes back the state this replica lent to a delta, as it was.
    fn take_back_state(&mut self, state: Lent) {
        let (json, text) = state.roll_back();
        let mut json = object(json);
        if let Some(held) = self.checkpoint.as_mut() {
            held.state.protocol_state = take_protocol_state(&mut json);
        }
        self.state = KeptState { json, text };
    }

    /// Checks that a verified checkpoint is the one the envelope certifies and is tied to its
    /// frame.
    fn check_tied(&self, next: &NextCheckpoint, envelope: &Envelope) -> Result<(), RoomError> {
        let (core, private) = (&envelope.core, &envelope.private);
        let checkpoint = &next.checkpoint;
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
        if next.recovery_state_hash != core.recovery_state_hash {
            return Err(RoomError::RecoveryHash);
        }
        Ok(())
    }

    /// The envelope's view, checked: sent whole, or a delta applied in place to this
    /// replica's (given back as it was when a check fails).
    fn next_view(&mut self, private: &mut Private, bootstrap: bool) -> Result<Lent, RoomError> {
        let mut view = match (private.view_mode, private.view.take()) {
            (Form::Full, Some(full)) if private.view_delta.is_empty() => {
                Lent::new(Value::Object(full), KeptText::default())
            }
            (Form::Delta, None) if bootstrap => return Err(RoomError::BootstrapDelta("view")),
            (Form::Delta, None) => {
                let base = self.view.take().ok_or(RoomError::NoBase("view"))?;
                let text = std::mem::take(&mut self.view_text);
                let mut view = Lent::new(Value::Object(base), text);
                if let Err(error) = view.apply(&private.view_delta) {
                    self.take_back_view(view);
                    return Err(RoomError::Delta {
                        what: "view",
                        error,
                    });
                }
                if !view.value().is_object() {
                    self.take_back_view(view);
                    return Err(RoomError::Form("view"));
                }
                view
            }
            _ => return Err(RoomError::Form("view")),
        };
        match view.refreshed().map(|(_, text)| text.hash()) {
            Ok(hash) if hash == private.view_state_hash => Ok(view),
            failed => {
                if private.view_mode == Form::Delta {
                    self.take_back_view(view);
                }
                Err(failed.map_or_else(RoomError::from, |_| RoomError::ViewState))
            }
        }
    }

    /// Takes back the view this replica lent to a delta, as it was.
    fn take_back_view(&mut self, view: Lent) {
        let (view, text) = view.roll_back();
        self.view = Some(object(view));
        self.view_text = text;
    }
}

/// A checkpoint an envelope brings, checked but not yet kept: `checkpoint` is the new one but
/// for its hooks' recovery state, which is still in `state`, the state's JSON and texts lent
/// to it — by the replica, for a delta.
struct NextCheckpoint {
    checkpoint: Checkpoint,
    recovery_state_hash: String,
    state: Lent,
    form: Form,
}
