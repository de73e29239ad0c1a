//! The envelopes of one step: the parts every member shares rendered once (core, events,
//! checkpoint), each member's private part assembled from rendered texts and hashed, the
//! checkpoint sent as a delta when that is allowed and saves enough, and the signature.

use std::cell::OnceCell;
use std::sync::Arc;

use serde_json::{Map, Value};

use super::{Authority, CHECKPOINT_DELTA_SAVING, state};
use crate::canonical::sha256_hex;
use crate::room::checkpoint::{Checkpoint, CheckpointState};
use crate::room::envelope::{FrameKind, signed_statement};
use crate::room::error::RoomError;
use crate::room::hooks::RoomHooks;
use crate::room::json;
use crate::room::view::{Rendered, View};

/// What every member's envelope of one step shares, rendered once.
pub(super) struct Step {
    pub(super) core: Value,
    pub(super) frame_hash: String,
    pub(super) events: Vec<Value>,
    pub(super) checkpoint: Arc<Checkpoint>,
    pub(super) checkpoint_text: String,
    /// The checkpoint as a delta and its text, when it travels so.
    pub(super) checkpoint_delta: Option<(Vec<Value>, String)>,
    /// The checkpoint as JSON, built for the first envelope that carries it whole.
    pub(super) checkpoint_json: OnceCell<Value>,
}

impl Step {
    /// The checkpoint as JSON, built once a step.
    fn checkpoint_json(&self) -> Value {
        self.checkpoint_json
            .get_or_init(|| {
                serde_json::to_value(&*self.checkpoint).expect("a checkpoint serializes")
            })
            .clone()
    }
}

/// One member's part of a step.
pub(super) struct MemberView {
    /// The whole view (always hashed; sent whole unless `delta`).
    pub(super) view: View,
    pub(super) rendered: Rendered,
    pub(super) delta: Option<(Vec<Value>, String)>,
    pub(super) direct: Value,
}

impl<H: RoomHooks> Authority<H> {
    /// The checkpoint as a delta against the previous step's, when that is allowed (a
    /// frame step, not every `checkpoint_every_events`, not the end) and saves enough.
    pub(super) fn checkpoint_delta(
        &self,
        kind: FrameKind,
        state: &CheckpointState,
        full_len: usize,
    ) -> Result<Option<(Vec<Value>, String)>, RoomError> {
        let Some(previous) = &self.last_step else {
            return Ok(None);
        };
        if kind != FrameKind::Frame
            || self.completed
            || self
                .seq
                .is_multiple_of(u64::from(self.rules.checkpoint_every_events))
        {
            return Ok(None);
        }
        let ops = state::diff(&previous.checkpoint.state, state);
        let text = json::canonical(&Value::Array(ops.clone()))?;
        Ok((text.len() + CHECKPOINT_DELTA_SAVING < full_len).then_some((ops, text)))
    }

    /// One member's envelope of `step`; `delta_checkpoint: false` sends it whole (a
    /// bootstrap).
    pub(super) fn envelope(
        &self,
        step: &Step,
        viewer: &str,
        member: MemberView,
        delta_checkpoint: bool,
    ) -> Result<Value, RoomError> {
        self.build_envelope(step, viewer, member, delta_checkpoint)
            .map(|(envelope, _)| envelope)
    }

    /// [`Authority::envelope`] of a step, giving the member's whole view back for the next
    /// step's delta.
    pub(super) fn envelope_keeping_view(
        &self,
        step: &Step,
        viewer: &str,
        member: MemberView,
    ) -> Result<(Value, View), RoomError> {
        self.build_envelope(step, viewer, member, true)
    }

    fn build_envelope(
        &self,
        step: &Step,
        viewer: &str,
        member: MemberView,
        delta_checkpoint: bool,
    ) -> Result<(Value, View), RoomError> {
        let viewer_text = json::canonical(&Value::String(viewer.to_string()))?;
        let view_state_hash = member.rendered.hash;
        let (view_mode, view_text, view_delta, view_delta_text) = match &member.delta {
            Some((ops, text)) => (
                "\"delta\"",
                "null",
                Value::Array(ops.clone()),
                text.as_str(),
            ),
            None => (
                "\"full\"",
                member.rendered.text.as_str(),
                Value::Array(Vec::new()),
                "[]",
            ),
        };
        let checkpoint_delta = step.checkpoint_delta.as_ref().filter(|_| delta_checkpoint);
        let (checkpoint_mode, checkpoint_text, checkpoint_ops, checkpoint_ops_text) =
            match checkpoint_delta {
                Some((ops, text)) => (
                    "\"delta\"",
                    "null",
                    Value::Array(ops.clone()),
                    text.as_str(),
                ),
                None => (
                    "\"full\"",
                    step.checkpoint_text.as_str(),
                    Value::Array(Vec::new()),
                    "[]",
                ),
            };
        let direct_text = json::canonical(&member.direct)?;
        let quoted = |text: &str| json::canonical(&Value::String(text.to_string()));
        let (state_hash_text, hash_text, signature_text) = (
            quoted(&view_state_hash)?,
            quoted(&step.checkpoint.checkpoint_hash)?,
            quoted(&step.checkpoint.checkpoint_signature)?,
        );
        let mut private = [
            ("viewer_public_key", viewer_text.as_str()),
            ("view_mode", view_mode),
            ("view", view_text),
            ("view_delta", view_delta_text),
            ("view_state_hash", state_hash_text.as_str()),
            ("direct", direct_text.as_str()),
            ("checkpoint_mode", checkpoint_mode),
            ("checkpoint", checkpoint_text),
            ("checkpoint_delta", checkpoint_ops_text),
            ("checkpoint_hash", hash_text.as_str()),
            ("checkpoint_signature", signature_text.as_str()),
        ];
        let view_hash = sha256_hex(json::canonical_object(&mut private));
        let signature = self
            .identity
            .sign_hex(signed_statement(&step.frame_hash, &view_hash, viewer)?.as_bytes());
        let Value::Object(mut envelope) = step.core.clone() else {
            unreachable!("a core is an object")
        };
        let full = |mode: &str| mode == "\"full\"";
        envelope.insert("frame_hash".into(), step.frame_hash.clone().into());
        envelope.insert("events".into(), Value::Array(step.events.clone()));
        envelope.insert("viewer_public_key".into(), viewer.into());
        envelope.insert(
            "view_mode".into(),
            if full(view_mode) { "full" } else { "delta" }.into(),
        );
        let view = member.view;
        envelope.insert(
            "view".into(),
            if full(view_mode) {
                view.to_value()
            } else {
                Value::Null
            },
        );
        envelope.insert("view_delta".into(), view_delta);
        envelope.insert("view_state_hash".into(), view_state_hash.into());
        envelope.insert("direct".into(), member.direct);
        envelope.insert(
            "checkpoint_mode".into(),
            if full(checkpoint_mode) {
                "full"
            } else {
                "delta"
            }
            .into(),
        );
        envelope.insert(
            "checkpoint".into(),
            if full(checkpoint_mode) {
                step.checkpoint_json()
            } else {
                Value::Null
            },
        );
        envelope.insert("checkpoint_delta".into(), checkpoint_ops);
        envelope.insert(
            "checkpoint_hash".into(),
            step.checkpoint.checkpoint_hash.clone().into(),
        );
        envelope.insert(
            "checkpoint_signature".into(),
            step.checkpoint.checkpoint_signature.clone().into(),
        );
        envelope.insert("view_hash".into(), view_hash.into());
        envelope.insert("signature".into(), signature.into());
        Ok((Value::Object(envelope), view))
    }
}

/// The hash of a state map, without copying it.
pub(super) fn hash_map(map: &Map<String, Value>) -> Result<String, RoomError> {
    let keys: Vec<&str> = map.keys().map(String::as_str).collect();
    Ok(sha256_hex(json::canonical_part(map, &keys)?))
}
