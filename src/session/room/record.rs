//! `room.json` in a room's session directory: the room as this side last saw it (verified
//! by a member, produced by a leader) — one shape for both, since a member may become the
//! leader mid-session. `session snapshot`, the browser controller and agents read it.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::fair_deal::DealVerdict;
use super::seat::SharedSeat;
use super::table::Drawn;
use crate::hooks::python_hooks::PythonHooks;
use crate::layout::SessionDir;
use crate::records::TableChoice;
use crate::room::checkpoint::{Checkpoint, RoomMember};

/// One step of the room as this side holds it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RoomRecord {
    pub group_id: String,
    pub leader_public_key: String,
    pub leader_epoch: u64,
    pub seq: u64,
    pub members: Vec<RoomMember>,
    /// This side's own view (what the room's hooks show it).
    pub view: Option<Value>,
    /// The events of the step.
    pub events: Vec<Value>,
    pub completed: bool,
    pub outcome: Option<String>,
    /// A member's verdicts on the hands it was dealt, the newest last
    /// ([`fair_deal`](super::fair_deal)).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub deal_verdicts: Vec<DealVerdict>,
    /// A table seat of ours: its legal actions at this step (`[]` when it is not its move),
    /// from its own hooks on its own view. Absent where no hooks run for the seat, or they
    /// failed at this step.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub choices: Option<Vec<TableChoice>>,
    /// The table this side's hooks draw of its view, when they draw one (or why not).
    #[serde(flatten)]
    pub drawn: Drawn,
}

impl RoomRecord {
    /// The step a checkpoint certifies, with this side's view and the step's events.
    pub fn of_checkpoint(
        checkpoint: &Checkpoint,
        view: Option<Value>,
        events: Vec<Value>,
    ) -> RoomRecord {
        RoomRecord {
            group_id: checkpoint.group_id.clone(),
            leader_public_key: checkpoint.leader_public_key.clone(),
            leader_epoch: checkpoint.leader_epoch,
            seq: checkpoint.seq,
            members: checkpoint.state.members.clone(),
            view,
            events,
            completed: checkpoint.state.completed,
            outcome: checkpoint.state.outcome.clone(),
            deal_verdicts: Vec::new(),
            choices: None,
            drawn: Drawn::default(),
        }
    }

    /// The record with what this side's `hooks` make of its view, when it sits in the room
    /// (`viewer`): its table seat's choices (where it plays one) and the table they draw.
    pub fn seen_by(
        mut self,
        hooks: &PythonHooks,
        seat: Option<&SharedSeat>,
        viewer: Option<&RoomMember>,
    ) -> RoomRecord {
        if let (Some(Value::Object(view)), Some(viewer)) = (&self.view, viewer) {
            if let Some(seat) = seat {
                self.choices = super::seat::lock(seat).observe(hooks, self.seq, view, viewer);
            }
            self.drawn = Drawn::of(super::table::draw(hooks, view, viewer, &self.events));
        }
        self
    }

    /// Replaces the session's `room.json` (atomically; a failed write only loses this view
    /// of the room, never the session).
    pub fn write(&self, session: &SessionDir) {
        if let Ok(text) = serde_json::to_vec(self) {
            let _ = crate::layout::write_atomic(&session.room_file(), &text);
        }
    }
}
