//! The leader's side of a room, without I/O: it holds the state, feeds each member's action
//! to the hooks in one order, and turns every step into one signed envelope per active
//! member (its own view, full or as a delta; the step's certified checkpoint, full or as a
//! delta against the previous one). It also keeps the recent checkpoints, so a member's
//! acknowledgement can say which one reached a successor (the floor a failover restores
//! from). Deltas tell `1` from `true`, so no member is ever sent a stale view.

use std::cell::OnceCell;
use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use serde_json::{Map, Value, json};

use super::checkpoint::{self, Checkpoint, CheckpointState, RoomMember};
use super::envelope::{Core, FrameKind, WIRE_VERSION, ZERO_HASH};
use super::error::RoomError;
use super::hooks::{HookFailure, RoomHooks, not_an_object};
use super::json;
use super::view::{StepWork, View};
use crate::api::group::MemberStatus;
use crate::canonical::sha256_hex;
use crate::identity::Identity;
use crate::spec::flow::group::GroupRules;
use envelopes::{MemberView, Step, hash_map};

mod envelopes;
mod state;

/// Checkpoints kept for acknowledgements.
pub const HISTORY: usize = 256;
/// A view travels as a delta only when that saves more than this many bytes.
const VIEW_DELTA_SAVING: usize = 96;
/// A checkpoint travels as a delta only when that saves more than this many bytes.
const CHECKPOINT_DELTA_SAVING: usize = 256;

/// Why an input was refused (its receipt says so; nothing changed).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Refusal {
    #[error("the room has ended")]
    Completed,
    #[error("the actor is not an active member")]
    NotMember,
    #[error("client_seq gap: expected {expected}, got {got}")]
    Gap { expected: u64, got: u64 },
    #[error("the action is {0} bytes, above the room's max_action_bytes")]
    TooLarge(usize),
    #[error("the hooks refused the action: {0}")]
    Hooks(String),
    #[error("{0}")]
    Json(#[from] json::JsonLimit),
}

/// What became of an input.
#[derive(Debug, Clone, PartialEq)]
pub enum Receipt {
    /// Applied as step `authority_seq` (frame `frame_hash`).
    Accepted {
        client_seq: u64,
        authority_seq: u64,
        frame_hash: String,
        completed: bool,
    },
    /// Already applied earlier; nothing changed.
    Duplicate {
        client_seq: u64,
        authority_seq: u64,
    },
    Rejected {
        client_seq: u64,
        reason: String,
    },
}

impl Receipt {
    /// The receipt as the room's wire writes it (`action_id` is added by the channel).
    pub fn to_wire(&self) -> Value {
        match self {
            Receipt::Accepted {
                client_seq,
                authority_seq,
                frame_hash,
                completed,
            } => json!({
                "_group": "receipt", "status": "accepted", "client_seq": client_seq,
                "authority_seq": authority_seq, "frame_hash": frame_hash, "completed": completed,
            }),
            Receipt::Duplicate {
                client_seq,
                authority_seq,
            } => json!({
                "_group": "receipt", "status": "duplicate", "client_seq": client_seq,
                "authority_seq": authority_seq,
            }),
            Receipt::Rejected { client_seq, reason } => json!({
                "_group": "receipt", "status": "rejected", "client_seq": client_seq, "reason": reason,
            }),
        }
    }
}

/// One envelope per active member, by key.
pub type Envelopes = Vec<(String, Value)>;

/// A checked hook result.
struct Outcome {
    state: Map<String, Value>,
    events: Vec<Value>,
    direct: Map<String, Value>,
    completed: bool,
    outcome: Option<String>,
}

/// The leader of one epoch of one room.
pub struct Authority<H: RoomHooks> {
    hooks: H,
    rules: GroupRules,
    identity: Identity,
    pub group_id: String,
    pub epoch: u64,
    pub membership_version: u64,
    members: Vec<RoomMember>,
    pub seq: u64,
    previous_hash: String,
    last_client_seq: BTreeMap<String, u64>,
    pub completed: bool,
    pub outcome: Option<String>,
    state: Map<String, Value>,
    last_views: HashMap<String, View>,
    /// The leader's own view of the last step, whole, built when first asked for.
    own_view: OnceCell<Option<Value>>,
    last_step: Option<Step>,
    /// The checkpoints of the last [`HISTORY`] steps (shared with `last_step`, not copied).
    history: BTreeMap<u64, Arc<Checkpoint>>,
    acknowledged: HashMap<String, u64>,
    replicated: Option<Arc<Checkpoint>>,
}

/// Where a new authority starts.
pub enum Start<'a> {
    /// A new room: the hooks' initial state, step 0.
    Fresh,
    /// A failover: the checkpoint of the previous epoch.
    Restore(&'a Checkpoint),
}

impl<H: RoomHooks> Authority<H> {
    /// An authority for `members` (the leader among them), which takes its first step
    /// (`snapshot`, or `epoch_start` after a restore).
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        hooks: H,
        rules: GroupRules,
        identity: Identity,
        group_id: &str,
        epoch: u64,
        membership_version: u64,
        mut members: Vec<RoomMember>,
        start: Start,
    ) -> Result<(Authority<H>, Envelopes), RoomError> {
        checkpoint::check_members(&members).map_err(RoomError::CheckpointState)?;
        members.sort_by_key(|m| m.seat);
        let mut authority = Authority {
            hooks,
            rules,
            identity,
            group_id: group_id.to_string(),
            epoch,
            membership_version,
            members,
            seq: 0,
            previous_hash: ZERO_HASH.to_string(),
            last_client_seq: BTreeMap::new(),
            completed: false,
            outcome: None,
            state: Map::new(),
            last_views: HashMap::new(),
            own_view: OnceCell::new(),
            last_step: None,
            history: BTreeMap::new(),
            acknowledged: HashMap::new(),
            replicated: None,
        };
        let envelopes = match start {
            Start::Fresh => {
                let initial = authority
                    .hooks
                    .initial_state(&authority.members)
                    .map_err(broken)?;
                authority.state = as_object(initial, "proto_group_initial_state")?;
                authority.step(FrameKind::Snapshot, Vec::new(), Map::new(), false)?
            }
            Start::Restore(checkpoint) => authority.restore(checkpoint)?,
        };
        Ok((authority, envelopes))
    }

    fn restore(&mut self, checkpoint: &Checkpoint) -> Result<Envelopes, RoomError> {
        if checkpoint.group_id != self.group_id {
            return Err(RoomError::CheckpointFrame("group_id"));
        }
        self.seq = checkpoint.seq;
        self.previous_hash = checkpoint.frame_hash.clone();
        self.last_client_seq = checkpoint.state.last_client_seq.clone();
        self.completed = checkpoint.state.completed;
        self.outcome = checkpoint.state.outcome.clone();
        let restored = self
            .hooks
            .restore(&checkpoint.state.protocol_state, &self.members, self.epoch)
            .map_err(broken)?;
        self.state = as_object(restored, "proto_group_restore")?;
        let mut events = Vec::new();
        let previous: HashMap<&str, &RoomMember> = checkpoint
            .state
            .members
            .iter()
            .map(|m| (m.public_key.as_str(), m))
            .collect();
        let gone: Vec<RoomMember> = checkpoint
            .state
            .members
            .iter()
            .filter(|old| {
                old.status == MemberStatus::Active && self.member(&old.public_key).is_none()
            })
            .cloned()
            .collect();
        for old in &gone {
            let result =
                self.hooks
                    .member_left(&self.state, old, "membership_changed_during_failover");
            events.extend(self.absorb(result)?);
        }
        let arrived: Vec<RoomMember> = self
            .members
            .iter()
            .filter(|m| {
                previous
                    .get(m.public_key.as_str())
                    .is_none_or(|old| old.status != MemberStatus::Active)
            })
            .cloned()
            .collect();
        for member in &arrived {
            let result = self.hooks.member_joined(&self.state, member);
            events.extend(self.absorb(result)?);
        }
        let old_leader = checkpoint.leader_public_key.clone();
        let new_leader = self.identity.public_key().to_string();
        let result = self
            .hooks
            .leader_changed(&self.state, &old_leader, &new_leader);
        events.extend(self.absorb(result)?);
        self.step(FrameKind::EpochStart, events, Map::new(), true)
    }

    /// Takes a hook result into the state; returns its events.
    fn absorb(&mut self, result: Result<Value, HookFailure>) -> Result<Vec<Value>, RoomError> {
        let outcome = self.normalize(result.map_err(broken)?)?;
        self.state = outcome.state;
        self.completed = outcome.completed;
        self.outcome = outcome.outcome;
        Ok(outcome.events)
    }

    /// The hooks the authority runs (a leader hands them the seats of fair deals, and draws
    /// its own table with them).
    pub fn hooks(&self) -> &H {
        &self.hooks
    }

    /// The leader's own view of the last step.
    pub fn own_view(&self) -> Option<&Value> {
        self.own_view
            .get_or_init(|| {
                let own = self.last_views.get(self.identity.public_key());
                own.map(View::to_value)
            })
            .as_ref()
    }

    /// The events of the last step.
    pub fn last_events(&self) -> &[Value] {
        self.last_step.as_ref().map_or(&[], |step| &step.events)
    }

    /// The member with this key.
    pub fn member(&self, public_key: &str) -> Option<&RoomMember> {
        self.members.iter().find(|m| m.public_key == public_key)
    }

    pub fn members(&self) -> &[RoomMember] {
        &self.members
    }

    /// The checkpoint of the last step.
    pub fn checkpoint(&self) -> Option<&Checkpoint> {
        self.last_step.as_ref().map(|step| &*step.checkpoint)
    }

    /// The newest checkpoint a member other than the leader acknowledged.
    pub fn replicated_checkpoint(&self) -> Option<&Checkpoint> {
        self.replicated.as_deref()
    }

    /// Applies one member's action.
    pub fn apply_input(
        &mut self,
        actor: &str,
        client_seq: u64,
        action: &Map<String, Value>,
    ) -> (Envelopes, Receipt) {
        match self.try_input(actor, client_seq, action) {
            Ok(done) => done,
            Err(refusal) => (
                Vec::new(),
                Receipt::Rejected {
                    client_seq,
                    reason: refusal.to_string(),
                },
            ),
        }
    }

    fn try_input(
        &mut self,
        actor: &str,
        client_seq: u64,
        action: &Map<String, Value>,
    ) -> Result<(Envelopes, Receipt), Refusal> {
        if self.completed {
            return Err(Refusal::Completed);
        }
        let actor = self
            .member(actor)
            .filter(|m| m.status == MemberStatus::Active)
            .cloned()
            .ok_or(Refusal::NotMember)?;
        let last = self
            .last_client_seq
            .get(&actor.public_key)
            .copied()
            .unwrap_or(0);
        if client_seq <= last {
            return Ok((
                Vec::new(),
                Receipt::Duplicate {
                    client_seq,
                    authority_seq: self.seq,
                },
            ));
        }
        if client_seq != last + 1 {
            return Err(Refusal::Gap {
                expected: last + 1,
                got: client_seq,
            });
        }
        let size = json::canonical(&Value::Object(action.clone()))?.len();
        if size > self.rules.max_action_bytes as usize {
            return Err(Refusal::TooLarge(size));
        }
        let result = match self.hooks.handle(&self.state, &actor, action) {
            Err(failure) if failure.refusal => return Err(Refusal::Hooks(failure.message)),
            other => other.map_err(|failure| Refusal::Hooks(failure.message))?,
        };
        let outcome = self
            .normalize(result)
            .map_err(|e| Refusal::Hooks(e.to_string()))?;
        let saved = (
            std::mem::replace(&mut self.state, outcome.state),
            std::mem::replace(&mut self.completed, outcome.completed),
            std::mem::replace(&mut self.outcome, outcome.outcome),
            self.seq,
        );
        self.last_client_seq
            .insert(actor.public_key.clone(), client_seq);
        match self.step(FrameKind::Frame, outcome.events, outcome.direct, true) {
            Ok(envelopes) => {
                let receipt = Receipt::Accepted {
                    client_seq,
                    authority_seq: self.seq,
                    frame_hash: self.previous_hash.clone(),
                    completed: self.completed,
                };
                Ok((envelopes, receipt))
            }
            Err(error) => {
                (self.state, self.completed, self.outcome, self.seq) = saved;
                self.last_client_seq.insert(actor.public_key.clone(), last);
                Err(Refusal::Hooks(error.to_string()))
            }
        }
    }

    /// A member joins (or comes back): a `membership` step.
    pub fn add_member(
        &mut self,
        member: RoomMember,
        membership_version: u64,
    ) -> Result<Envelopes, RoomError> {
        match self
            .members
            .iter_mut()
            .find(|m| m.public_key == member.public_key)
        {
            Some(existing) => *existing = member.clone(),
            None => {
                if self.members.len() >= self.rules.max_participants as usize {
                    return Err(RoomError::CheckpointState("the room is full".into()));
                }
                let mut members = self.members.clone();
                members.push(member.clone());
                checkpoint::check_members(&members).map_err(RoomError::CheckpointState)?;
                members.sort_by_key(|m| m.seat);
                self.members = members;
            }
        }
        self.membership_version = membership_version;
        let result = self.hooks.member_joined(&self.state, &member);
        let events = self.absorb(result)?;
        self.step(FrameKind::Membership, events, Map::new(), true)
    }

    /// A member left (or stopped answering): a `membership` step, and its seat is free.
    pub fn remove_member(
        &mut self,
        public_key: &str,
        membership_version: u64,
        reason: &str,
    ) -> Result<Envelopes, RoomError> {
        let Some(member) = self.members.iter_mut().find(|m| m.public_key == public_key) else {
            return Ok(Vec::new());
        };
        member.status = MemberStatus::Left;
        let member = member.clone();
        self.last_views.remove(public_key);
        self.own_view = OnceCell::new();
        self.membership_version = membership_version;
        let result = self.hooks.member_left(&self.state, &member, reason);
        let events = self.absorb(result)?;
        self.step(FrameKind::Membership, events, Map::new(), true)
    }

    /// A member's acknowledgement of step `seq`; `true` when it matches a kept checkpoint.
    pub fn acknowledge(
        &mut self,
        public_key: &str,
        seq: u64,
        frame_hash: &str,
        checkpoint_hash: Option<&str>,
    ) -> bool {
        let is_successor = public_key != self.identity.public_key()
            && self
                .member(public_key)
                .is_some_and(|m| m.status == MemberStatus::Active);
        let Some(checkpoint) = self.history.get(&seq).filter(|_| is_successor) else {
            return false;
        };
        if checkpoint.frame_hash != frame_hash
            || checkpoint_hash.is_some_and(|hash| hash != checkpoint.checkpoint_hash)
            || self
                .acknowledged
                .get(public_key)
                .is_some_and(|acked| *acked > seq)
        {
            return false;
        }
        self.acknowledged.insert(public_key.to_string(), seq);
        if self
            .replicated
            .as_ref()
            .is_none_or(|newest| newest.seq < seq)
        {
            self.replicated = Some(Arc::clone(checkpoint));
        }
        true
    }

    /// A self-contained envelope of the current step for one member (on its channel's
    /// first frame, or when it comes back): the whole view and checkpoint, nothing direct.
    pub fn bootstrap(&mut self, public_key: &str) -> Result<Option<Value>, RoomError> {
        let Some(member) = self
            .member(public_key)
            .filter(|m| m.status == MemberStatus::Active)
            .cloned()
        else {
            return Ok(None);
        };
        let Some(step) = self.last_step.take() else {
            return Ok(None);
        };
        let built = self.view_of(&member).and_then(|view| {
            let rendered = StepWork::default().render(&view)?;
            let member_view = MemberView {
                view,
                rendered,
                delta: None,
                direct: Value::Array(Vec::new()),
            };
            self.envelope(&step, &member.public_key, member_view, false)
        });
        self.last_step = Some(step);
        built.map(Some)
    }

    fn normalize(&self, result: Value) -> Result<Outcome, RoomError> {
        let hook = |what: &str| RoomError::Malformed(format!("a hook result's {what}"));
        let Value::Object(mut result) = result else {
            return Err(hook("top level must be an object"));
        };
        let state = match result.remove("state") {
            Some(Value::Object(state)) => state,
            _ => return Err(hook("state must be an object")),
        };
        let events = match result.remove("events") {
            None => Vec::new(),
            Some(Value::Array(events))
                if events.len() <= self.rules.max_events_per_action as usize =>
            {
                events
            }
            Some(Value::Array(_)) => return Err(hook("events exceed max_events_per_action")),
            Some(_) => return Err(hook("events must be an array")),
        };
        let direct = match result.remove("direct") {
            None => Map::new(),
            Some(Value::Object(direct)) => direct,
            Some(_) => return Err(hook("direct must be an object")),
        };
        let completed = match result.remove("completed") {
            None => false,
            Some(Value::Bool(flag)) => flag,
            Some(_) => return Err(hook("completed must be true or false")),
        };
        let outcome = match result.remove("outcome") {
            None | Some(Value::Null) => None,
            Some(Value::String(text)) => Some(text),
            Some(_) => return Err(hook("outcome must be a string or null")),
        };
        json::check_map(&state)?;
        json::check_items(&events)?;
        json::check_map(&direct)?;
        Ok(Outcome {
            state,
            events,
            direct,
            completed,
            outcome,
        })
    }

    /// A member's view from the hooks.
    fn view_of(&mut self, member: &RoomMember) -> Result<View, RoomError> {
        let view = self.hooks.view(&self.state, member).map_err(broken)?;
        View::of_value(view).ok_or_else(|| broken(not_an_object()))
    }

    fn checkpoint_state(&mut self) -> Result<CheckpointState, RoomError> {
        let snapshot = self.hooks.recovery_snapshot(&self.state).map_err(broken)?;
        Ok(CheckpointState {
            members: self.members.clone(),
            last_client_seq: self.last_client_seq.clone(),
            recovery_mode: self.rules.recovery_mode,
            protocol_state: as_object(snapshot, "proto_group_recovery_snapshot")?,
            completed: self.completed,
            outcome: self.outcome.clone(),
        })
    }

    /// The step's checkpoint, certified: its hash over the header and the state's fields
    /// (rendered once), and the leader's signature; and its canonical text, assembled from
    /// the same rendered fields.
    fn certify(
        &self,
        state: CheckpointState,
        state_texts: &[(&'static str, String)],
        frame_hash: &str,
    ) -> Result<(Checkpoint, String), RoomError> {
        let mut checkpoint = Checkpoint {
            version: checkpoint::VERSION,
            group_id: self.group_id.clone(),
            leader_public_key: self.identity.public_key().to_string(),
            leader_epoch: self.epoch,
            seq: self.seq,
            frame_hash: frame_hash.to_string(),
            membership_version: self.membership_version,
            state,
            checkpoint_hash: String::new(),
            checkpoint_signature: String::new(),
        };
        let header = [
            ("version", checkpoint.version.to_string()),
            (
                "group_id",
                json::canonical(&Value::String(checkpoint.group_id.clone()))?,
            ),
            (
                "leader_public_key",
                json::canonical(&Value::String(checkpoint.leader_public_key.clone()))?,
            ),
            ("leader_epoch", checkpoint.leader_epoch.to_string()),
            ("seq", checkpoint.seq.to_string()),
            (
                "frame_hash",
                json::canonical(&Value::String(checkpoint.frame_hash.clone()))?,
            ),
            (
                "membership_version",
                checkpoint.membership_version.to_string(),
            ),
        ];
        let mut fields: Vec<(&str, &str)> = header
            .iter()
            .chain(state_texts)
            .map(|(k, v)| (*k, v.as_str()))
            .collect();
        checkpoint.checkpoint_hash = sha256_hex(json::canonical_object(&mut fields));
        checkpoint.checkpoint_signature =
            self.identity.sign_hex(checkpoint.certificate().as_bytes());
        let certificate = [
            json::canonical(&Value::String(checkpoint.checkpoint_hash.clone()))?,
            json::canonical(&Value::String(checkpoint.checkpoint_signature.clone()))?,
        ];
        fields.extend([
            ("checkpoint_hash", certificate[0].as_str()),
            ("checkpoint_signature", certificate[1].as_str()),
        ]);
        let text = json::canonical_object(&mut fields);
        Ok((checkpoint, text))
    }

    /// One step: the core, its certified checkpoint, and one envelope per active member.
    fn step(
        &mut self,
        kind: FrameKind,
        events: Vec<Value>,
        direct: Map<String, Value>,
        advance: bool,
    ) -> Result<Envelopes, RoomError> {
        if advance {
            self.seq += 1;
        }
        let state = self.checkpoint_state()?;
        let state_texts = state::texts(&state)?;
        let mut state_fields: Vec<(&str, &str)> =
            state_texts.iter().map(|(k, v)| (*k, v.as_str())).collect();
        let core = Core {
            kind,
            wire_version: WIRE_VERSION,
            group_id: self.group_id.clone(),
            leader_public_key: self.identity.public_key().to_string(),
            leader_epoch: self.epoch,
            seq: self.seq,
            previous_hash: self.previous_hash.clone(),
            membership_version: self.membership_version,
            authority_state_hash: hash_map(&self.state)?,
            recovery_state_hash: sha256_hex(json::canonical_object(&mut state_fields)),
            events_hash: json::hash(&Value::Array(events.clone()))?,
            completed: self.completed,
            outcome: self.outcome.clone(),
        };
        let frame_hash = core.hash()?;
        let (checkpoint, checkpoint_text) = self.certify(state, &state_texts, &frame_hash)?;
        let checkpoint_delta =
            self.checkpoint_delta(kind, &checkpoint.state, checkpoint_text.len())?;
        let step = Step {
            core: serde_json::to_value(&core).expect("a core serializes"),
            frame_hash: frame_hash.clone(),
            events,
            checkpoint: Arc::new(checkpoint),
            checkpoint_text,
            checkpoint_delta,
            checkpoint_json: OnceCell::new(),
        };
        let mut envelopes = Vec::new();
        let mut views = HashMap::new();
        let active: Vec<RoomMember> = self
            .members
            .iter()
            .filter(|m| m.status == MemberStatus::Active)
            .cloned()
            .collect();
        let hook_views = self.hooks.views(&self.state, &active).map_err(broken)?;
        let mut work = StepWork::default();
        for (member, view) in active.iter().zip(hook_views) {
            let rendered = work.render(&view)?;
            let delta = match self.last_views.get(&member.public_key) {
                Some(previous) if kind == FrameKind::Frame => {
                    let ops = work.diff(previous, &view);
                    let ops_text = json::canonical(&Value::Array(ops.clone()))?;
                    (ops_text.len() + VIEW_DELTA_SAVING < rendered.text.len())
                        .then_some((ops, ops_text))
                }
                _ => None,
            };
            let sent_direct = direct
                .get(&member.public_key)
                .cloned()
                .unwrap_or_else(|| Value::Array(Vec::new()));
            let member_view = MemberView {
                view,
                rendered,
                delta,
                direct: sent_direct,
            };
            let (envelope, view) =
                self.envelope_keeping_view(&step, &member.public_key, member_view)?;
            envelopes.push((member.public_key.clone(), envelope));
            views.insert(member.public_key.clone(), view);
        }
        self.history.insert(self.seq, Arc::clone(&step.checkpoint));
        while self.history.len() > HISTORY {
            self.history.pop_first();
        }
        self.previous_hash = frame_hash;
        self.own_view = OnceCell::new();
        self.last_views = views;
        self.last_step = Some(step);
        Ok(envelopes)
    }
}

fn broken(failure: HookFailure) -> RoomError {
    RoomError::Malformed(format!("a hook failed: {}", failure.message))
}

fn as_object(value: Value, hook: &str) -> Result<Map<String, Value>, RoomError> {
    match value {
        Value::Object(map) => Ok(map),
        _ => Err(RoomError::Malformed(format!(
            "{hook} must return an object"
        ))),
    }
}
