//! `join` on a room invitation, as a member: the room is found on the server by its
//! invitation and its ticket's binding checked, the member dials the leader, is admitted,
//! and follows the room until it ends — every envelope verified and recorded, its own actions
//! taken from the session directory's `room-actions.jsonl` (what `aigenora session action`
//! appends), a heartbeat to the server every [`HEARTBEAT`] so its seat stays its own. The
//! last verified view and checkpoint are kept in `room.json`. When the leader's channel
//! ends the member finds its way back ([`failover`](super::failover)): it follows the
//! same or a new leader with its action in flight, or, holding the room's hooks, takes the
//! room over and leads it from its newest checkpoint to the end.

use std::collections::VecDeque;
use std::time::{Duration, Instant};

use serde_json::{Map, Value};
use tokio::runtime::Handle;

use super::admission::{member_admit, verify_binding};
use super::failover::{Claimed, Next, Recovery};
use super::fair_deal::{DealVerdict, FairDeals, SeedWait};
use super::lead::{self, Lead, leader_hooks};
use super::member::{ActionSource, FollowEnd, Follower, MemberEvents, Outbox};
use super::record::RoomRecord;
use super::rest::RestControl;
use super::seat::{self, MemberHooks, SeatSetup, SharedSeat};
use crate::api::group::{Group, GroupStatus};
use crate::api::invitation::Invitation;
use crate::client::RestClient;
use crate::decision::WindowTimes;
use crate::engine::{DisplaySink, Outcome};
use crate::hooks::python_hooks::PythonHooks;
use crate::hooks::skeleton;
use crate::identity::Identity;
use crate::layout::SessionDir;
use crate::layout::{Tail, TailLine};
use crate::records::{Event, ReceiptSource, SessionRecord};
use crate::room::Replica;
use crate::room::authority::Start;
use crate::room::replica::Verified;
use crate::session::{PreparedProtocol, Protocol, SessionEnd, SessionError, SessionRecorder};
use crate::spec::flow::group::GroupRules;
use crate::spec::{ControlMode, Flow, Role};
use crate::transport::{IrohChannel, RelayChoice, SessionEndpoint, Ticket};
use crate::wire::group::{Receipt, ReceiptStatus};

/// How long a member waits for its leader's endpoint to answer a dial.
const DIAL_TIMEOUT: Duration = Duration::from_secs(5);
/// How often a member tells the server it is still there.
pub const HEARTBEAT: Duration = Duration::from_secs(5);
/// The longest line of the actions file.
pub const MAX_ACTION_LINE: usize = 1024 * 1024;

/// What `join` needs to take part in a room.
pub struct RoomJoin {
    pub client: RestClient,
    pub invitation: Invitation,
    pub prepared: PreparedProtocol,
    pub control_mode: ControlMode,
    /// How long a table seat's decision windows last (human and hybrid control).
    pub window_times: WindowTimes,
    pub relay: RelayChoice,
    pub display: DisplaySink,
    /// Told the session dir once the room is found (a person's terminal starts on it).
    pub on_room: Option<crate::session::OnRoom>,
    pub session_dir: SessionRecorder,
}

/// Why following a leader on one channel stopped short of the room's end.
enum Stop {
    /// The channel could not be opened or was lost: look for the room's leader again.
    Lost(String),
    /// The leader sent what a member must not believe: this member leaves the room.
    Untrusted(String),
}

/// What a member carries from one channel (and one leader) to the next.
struct MemberState {
    replica: Replica,
    outbox: Outbox,
    actions: SeatActions,
    recorder: Recorder,
    fair_deals: FairDeals,
}

impl RoomJoin {
    pub async fn run(self) -> Result<SessionEnd, SessionError> {
        let post_id = self.invitation.post_id.clone();
        let group = self
            .client
            .group_by_post(&post_id)
            .await
            .map_err(|e| self.refusal(format!("no room on the server for it ({e})")))?;
        if group.protocol_id != self.invitation.protocol_id {
            return Err(self.refusal("its room plays another protocol".into()));
        }
        verify_binding(&group).map_err(|reason| self.refusal(reason))?;
        group
            .iroh_ticket
            .parse::<Ticket>()
            .map_err(|error| SessionError::Ticket {
                post_id: post_id.clone(),
                error,
            })?;
        self.session_dir.record_start(
            Role::Guest,
            SessionRecord {
                post_id: Some(post_id.clone()),
                protocol_id: Some(group.protocol_id.clone()),
                protocol_dir: Some(self.prepared.dir.clone()),
                protocol_source: Some(self.prepared.source.as_str().to_string()),
                local_control_mode: Some(self.control_mode),
                ..SessionRecord::default()
            },
        );
        (self.display)(
            Role::Guest,
            &format!("[join] room {} of invitation {post_id}", group.group_id),
        );
        if let Some(on_room) = &self.on_room {
            on_room(self.session_dir.dir());
        }
        let heartbeats = {
            let client = self.client.clone();
            let group_id = group.group_id.clone();
            let events = self.session_dir.events().clone();
            tokio::spawn(async move {
                // The first beat once the member has had time to be admitted.
                let mut every =
                    tokio::time::interval_at(tokio::time::Instant::now() + HEARTBEAT, HEARTBEAT);
                loop {
                    every.tick().await;
                    if let Err(error) = client.heartbeat_member(&group_id).await {
                        events.emit(Event::GroupMemberHeartbeatFailed {
                            reason: error.to_string(),
                        });
                    }
                }
            })
        };
        let leave = LeaveOnDrop {
            client: self.client.clone(),
            group_id: Some(group.group_id.clone()),
        };
        let result = self.take_part(group).await;
        leave.disarm();
        heartbeats.abort();
        let end = SessionEnd {
            session_dir: self.session_dir.root().to_path_buf(),
            session_id: self.invitation.post_id.clone(),
            post_id,
            result,
        };
        crate::session::reports::record_end(&end, &self.session_dir);
        Ok(end)
    }

    fn refusal(&self, reason: String) -> SessionError {
        SessionError::Invitation {
            post_id: self.invitation.post_id.clone(),
            reason,
        }
    }

    /// Follows the room's leader, and its successors, until the room ends — or leads it,
    /// when this member takes it over.
    async fn take_part(&self, group: Group) -> Result<Outcome, SessionError> {
        let identity = self.client.identity().clone();
        let outbox = Outbox::durable(self.session_dir.dir());
        let queue = QueuedActions::resuming(self.session_dir.dir(), outbox.resume_offset());
        let own = self.own_hooks().await?;
        let seat = own.as_ref().and_then(|own| own.seat.clone());
        let actions = SeatActions {
            queue,
            own: own.clone(),
        };
        let state = MemberState {
            replica: Replica::new(
                &group.group_id,
                identity.public_key(),
                &group.leader_public_key,
                group.leader_epoch,
            ),
            outbox,
            actions,
            recorder: Recorder {
                dir: self.session_dir.clone(),
                group_id: group.group_id.clone(),
                deal_verdicts: Vec::new(),
                own: own.clone(),
            },
            fair_deals: FairDeals::new(own.map(|own| own.hooks), self.session_dir.events().clone()),
        };
        let ended = self.take_part_as(group, state).await;
        if let Some(seat) = &seat {
            seat::lock(seat).finish();
        }
        ended
    }

    /// The member's own copy of the room's hooks and its table seat, when it holds hooks
    /// (loaded once, on a blocking thread).
    async fn own_hooks(&self) -> Result<Option<OwnHooks>, SessionError> {
        if !self.can_lead() {
            return Ok(None);
        }
        let protocol = Protocol {
            dir: self.prepared.dir.clone(),
            spec: self.prepared.spec.clone(),
        };
        let (options, recorder) = (self.invitation.options.clone(), self.session_dir.clone());
        let (control_mode, times) = (self.control_mode, self.window_times);
        let (hooks, seat) = tokio::task::spawn_blocking(move || {
            seat::member_hooks(SeatSetup {
                protocol: &protocol,
                options: &options,
                recorder: &recorder,
                control_mode,
                times,
            })
        })
        .await
        .map_err(|panic| SessionError::Stopped {
            what: "loading the room's hooks",
            detail: panic.to_string(),
        })??;
        Ok(Some(OwnHooks { hooks, seat }))
    }

    /// [`RoomJoin::take_part`] with the member's state in place.
    async fn take_part_as(
        &self,
        mut group: Group,
        mut state: MemberState,
    ) -> Result<Outcome, SessionError> {
        let rules = self.rules()?;
        let group_id = group.group_id.clone();
        let recovery = Recovery {
            client: &self.client,
            group_id: &group_id,
            relay: &self.relay,
            can_lead: self.can_lead(),
            recovery_mode: rules.recovery_mode,
        };
        let limit = Duration::from_secs(60 + 3 * group.leader_lease_seconds);
        let mut lost_since: Option<Instant> = None;
        loop {
            let (back, ended) = self.follow_leader(&group, state).await;
            state = back;
            let reason = match ended {
                Ok(FollowEnd::Completed(outcome)) => return Ok(completed(outcome)),
                Ok(FollowEnd::Stopped(reason)) => {
                    let _ = self.client.leave_group(&group.group_id).await;
                    return Ok(Outcome {
                        completed: false,
                        winner: None,
                        reason: Some(reason),
                        metadata: None,
                    });
                }
                Ok(FollowEnd::LeaderGone(reason)) => {
                    lost_since = None;
                    reason
                }
                Err(Stop::Lost(reason)) => reason,
                Err(Stop::Untrusted(reason)) => return Err(self.refusal(reason)),
            };
            let since = *lost_since.get_or_insert_with(Instant::now);
            if since.elapsed() > limit {
                return Err(self.refusal(format!(
                    "no way back to the room's leader for {} s (last: {reason})",
                    limit.as_secs()
                )));
            }
            self.session_dir
                .events()
                .emit(Event::GroupLeaderDisconnected {
                    group_id: group.group_id.clone(),
                    leader_epoch: state.replica.epoch,
                    seq: state.replica.head.as_ref().map_or(0, |h| h.seq),
                });
            match recovery
                .next(&state.replica, limit.saturating_sub(since.elapsed()))
                .await
                .map_err(|reason| self.refusal(reason))?
            {
                Next::Follow(next) => {
                    if next.leader_epoch > state.replica.epoch {
                        state
                            .replica
                            .advance_epoch(&next.leader_public_key, next.leader_epoch)
                            .map_err(|e| self.refusal(e.to_string()))?;
                        self.session_dir.events().emit(Event::GroupLeaderChanged {
                            group_id: next.group_id.clone(),
                            leader_public_key: next.leader_public_key.clone(),
                            leader_epoch: next.leader_epoch,
                        });
                    }
                    group = next;
                }
                Next::Lead(claimed) => return self.lead(claimed, rules, state).await,
                Next::Ended(status) => {
                    return Ok(Outcome {
                        completed: status == GroupStatus::Closed,
                        winner: None,
                        reason: Some(format!("room_{status}")),
                        metadata: None,
                    });
                }
            }
        }
    }

    /// Dials the room's leader and follows it on that channel (on a blocking thread).
    async fn follow_leader(
        &self,
        group: &Group,
        mut state: MemberState,
    ) -> (MemberState, Result<FollowEnd, Stop>) {
        let ticket: Ticket = match group.iroh_ticket.parse() {
            Ok(ticket) => ticket,
            Err(error) => {
                return (
                    state,
                    Err(Stop::Lost(format!("the room's ticket: {error}"))),
                );
            }
        };
        let endpoint = match SessionEndpoint::bind(&self.relay).await {
            Ok(endpoint) => endpoint,
            Err(error) => return (state, Err(Stop::Lost(error.to_string()))),
        };
        let link = match endpoint.dial(&ticket, DIAL_TIMEOUT).await {
            Ok(link) => link,
            Err(error) => {
                endpoint.shutdown().await;
                return (state, Err(Stop::Lost(error.to_string())));
            }
        };
        let channel = IrohChannel::new(link, &Handle::current());
        let control = RestControl::new(self.client.clone(), Handle::current());
        let identity = self.client.identity().clone();
        let (group, dir, mode) = (group.clone(), self.session_dir.clone(), self.control_mode);
        let followed = tokio::task::spawn_blocking(move || {
            let ended = follow(channel, &control, &identity, &group, &dir, mode, &mut state);
            (state, ended)
        })
        .await;
        endpoint.shutdown().await;
        match followed {
            Ok(followed) => followed,
            Err(panic) => panic!("the room member's thread failed: {panic}"),
        }
    }

    /// Leads the room's new epoch from the member's checkpoint, until the room ends.
    async fn lead(
        &self,
        claimed: Claimed,
        rules: GroupRules,
        state: MemberState,
    ) -> Result<Outcome, SessionError> {
        let Claimed {
            group,
            mut endpoint,
            ticket,
        } = claimed;
        self.session_dir
            .events()
            .emit(Event::GroupLeadershipClaimed {
                group_id: group.group_id.clone(),
                leader_epoch: group.leader_epoch,
                seq: group.checkpoint_seq,
            });
        (self.display)(
            Role::Guest,
            &format!(
                "[join] the leader is gone; this member leads room {} from step {}",
                group.group_id, group.checkpoint_seq
            ),
        );
        let (tasks, arrivals, lease) = lead::open(
            &mut endpoint,
            &self.client,
            &group,
            &ticket,
            usize::from(rules.max_participants),
            self.session_dir.events().clone(),
        )?;
        let MemberState {
            replica,
            mut outbox,
            actions: SeatActions { queue, own: held },
            ..
        } = state;
        let own = replica
            .checkpoint
            .ok_or_else(|| self.refusal("no checkpoint to lead from".into()))?;
        // The leaders whose checkpoints this one trusts: the one it followed last, and the
        // one that certified its own checkpoint.
        let trusted = [
            (replica.leader, replica.epoch),
            (own.leader_public_key.clone(), own.leader_epoch),
        ];
        let protocol = Protocol {
            dir: self.prepared.dir.clone(),
            spec: self.prepared.spec.clone(),
        };
        let options = self.invitation.options.clone();
        let mut lead = Lead {
            control: RestControl::new(self.client.clone(), Handle::current()),
            client: self.client.clone(),
            runtime: Handle::current(),
            identity: self.client.identity().clone(),
            group,
            rules,
            dir: self.session_dir.clone(),
            lease,
            own: queue,
            // (the seat goes on under the room's hooks this side now leads with)
            seat: held.and_then(|held| held.seat),
            seeds: SeedWait::default(),
        };
        let led = tokio::task::spawn_blocking(move || {
            let hooks = leader_hooks(&protocol, &options, &lead.dir)?;
            let (start, back) = lead.gather(&arrivals, own, &trusted)?;
            super::fair_deal::announce(&hooks, &back);
            let mut hub = lead.hub(hooks, Start::Restore(&start))?;
            for arrival in back {
                lead.arrived(&mut hub, arrival);
            }
            if let Some((client_seq, action)) = outbox.take() {
                lead.act(&mut hub, Some(client_seq), &action);
            }
            lead.serve(&mut hub, &arrivals)
        })
        .await;
        drop(tasks);
        endpoint.shutdown().await;
        match led {
            Ok(Ok(outcome)) => Ok(completed(outcome)),
            Ok(Err(error)) => Err(error),
            Err(panic) => Err(SessionError::Stopped {
                what: "the room leader",
                detail: panic.to_string(),
            }),
        }
    }

    fn rules(&self) -> Result<GroupRules, SessionError> {
        let model = self
            .prepared
            .spec
            .model()
            .map_err(|error| crate::spec::SpecFileError {
                path: self.prepared.dir.join("spec.json"),
                error,
            })?;
        match &model.flow {
            Flow::Group(rules) => Ok(rules.clone()),
            _ => Err(self.refusal("its contract is not a room".into())),
        }
    }

    /// Whether this member has hooks of its own for the room (so it can take it over).
    fn can_lead(&self) -> bool {
        self.prepared.dir.join("hooks.py").is_file()
            && !skeleton::detect(&self.prepared.dir).pristine
    }
}

/// Gives up the member's seat when its session is stopped midway (`session abort`, Ctrl-C
/// drop the session's future), so the room does not wait on it until its heartbeats lapse.
struct LeaveOnDrop {
    client: RestClient,
    group_id: Option<String>,
}

impl LeaveOnDrop {
    /// The session ended by itself: nothing to give up.
    fn disarm(mut self) {
        self.group_id = None;
    }
}

impl Drop for LeaveOnDrop {
    fn drop(&mut self) {
        if let Some(group_id) = self.group_id.take()
            && let Ok(runtime) = Handle::try_current()
        {
            let client = self.client.clone();
            runtime.spawn(async move {
                let _ = client.leave_group(&group_id).await;
            });
        }
    }
}

fn completed(outcome: Option<String>) -> Outcome {
    Outcome {
        completed: true,
        winner: None,
        reason: outcome,
        metadata: None,
    }
}

/// Admission, then the follow loop, on the blocking thread.
fn follow(
    mut channel: IrohChannel,
    control: &RestControl,
    identity: &Identity,
    group: &Group,
    dir: &SessionRecorder,
    control_mode: ControlMode,
    state: &mut MemberState,
) -> Result<FollowEnd, Stop> {
    let seat = member_admit(
        &mut channel,
        control,
        identity,
        group,
        control_mode.as_str(),
        state.replica.checkpoint.as_ref(),
        state.fair_deals.takes_part(),
    )
    .map_err(Stop::Lost)?;
    let _ = dir.update(|record| record.session_id = Some(group.group_id.clone()));
    dir.events().emit(Event::GroupMemberAdmitted {
        group_id: group.group_id.clone(),
        leader_public_key: group.leader_public_key.clone(),
        member_id: seat.member_id.clone(),
        seat: seat.seat,
    });
    let (mut actions, mut events) = state
        .fair_deals
        .around(&mut state.actions, &mut state.recorder);
    let end = Follower::new(
        &mut channel,
        &mut state.replica,
        identity,
        &mut actions,
        &mut events,
        &mut state.outbox,
    )
    .run()
    .map_err(Stop::Untrusted);
    let _ = crate::transport::Channel::close(&mut channel);
    end
}

/// Actions appended to a session's `room-actions.jsonl`, read as they arrive and handed out
/// one at a time (several appended at once all wait their turn), each with the file offset
/// just past it.
pub struct QueuedActions {
    tail: Tail,
    waiting: VecDeque<(Map<String, Value>, u64)>,
    handed_out: u64,
}

impl QueuedActions {
    /// The queue of a session directory, from its start.
    pub fn of(dir: &SessionDir) -> QueuedActions {
        QueuedActions::resuming(dir, 0)
    }

    /// The queue from byte `offset` of its file (where an earlier process stopped).
    pub fn resuming(dir: &SessionDir, offset: u64) -> QueuedActions {
        QueuedActions {
            tail: Tail::from_offset(dir.room_actions_file(), MAX_ACTION_LINE, offset),
            waiting: VecDeque::new(),
            handed_out: offset,
        }
    }
}

impl ActionSource for QueuedActions {
    fn next_action(&mut self) -> Option<Map<String, Value>> {
        if self.waiting.is_empty() {
            self.waiting
                .extend(self.tail.read().into_iter().filter_map(|line| {
                    match line {
                        TailLine::Text { text, end } => serde_json::from_str::<Value>(&text)
                            .ok()
                            .and_then(|line| line.get("action").and_then(Value::as_object).cloned())
                            .map(|action| (action, end)),
                        TailLine::Skipped { .. } => None,
                    }
                }));
        }
        let (action, end) = self.waiting.pop_front()?;
        self.handed_out = end;
        Some(action)
    }

    fn position(&self) -> Option<u64> {
        Some(self.handed_out)
    }
}

/// A member's own copy of the room's hooks, and its table seat when they play one.
#[derive(Clone)]
struct OwnHooks {
    hooks: MemberHooks,
    seat: Option<SharedSeat>,
}

impl OwnHooks {
    /// The seat with the hooks that play it.
    fn seat(&self) -> Option<(&SharedSeat, &PythonHooks)> {
        self.seat.as_ref().map(|seat| (seat, &*self.hooks))
    }
}

/// A member's actions: those queued in its session directory first, then its table seat's.
struct SeatActions {
    queue: QueuedActions,
    own: Option<OwnHooks>,
}

impl ActionSource for SeatActions {
    fn next_action(&mut self) -> Option<Map<String, Value>> {
        let Some((seat, hooks)) = self.own.as_ref().and_then(OwnHooks::seat) else {
            return self.queue.next_action();
        };
        match self.queue.next_action() {
            Some(queued) => {
                seat::lock(seat).acted();
                Some(queued)
            }
            None => seat::lock(seat).next_move(hooks),
        }
    }

    fn position(&self) -> Option<u64> {
        self.queue.position()
    }

    fn stopped(&self) -> Option<String> {
        let (seat, _) = self.own.as_ref().and_then(OwnHooks::seat)?;
        seat::lock(seat).stopped()
    }
}

/// What the member records: events, the last verified view and checkpoint (with its table
/// seat's choices and the table its hooks draw of the view), and its verdicts on the hands
/// it was dealt.
struct Recorder {
    dir: SessionRecorder,
    group_id: String,
    deal_verdicts: Vec<DealVerdict>,
    own: Option<OwnHooks>,
}

impl MemberEvents for Recorder {
    fn step(&mut self, verified: &Verified, replica: &Replica) {
        self.dir.events().emit(Event::GroupFrameReceived {
            group_id: self.group_id.clone(),
            leader_epoch: verified.envelope.core.leader_epoch,
            seq: verified.envelope.core.seq,
            frame_hash: verified.envelope.frame_hash.clone(),
        });
        write_room(
            self.dir.dir(),
            verified,
            replica,
            self.own.as_ref(),
            &self.deal_verdicts,
        );
    }

    fn deal_checked(&mut self, verdict: &DealVerdict) {
        verdict.keep_in(&mut self.deal_verdicts);
    }

    fn receipt(&mut self, receipt: &Receipt, source: ReceiptSource, _action: &Map<String, Value>) {
        if receipt.status == ReceiptStatus::Rejected
            && let Some((seat, _)) = self.own.as_ref().and_then(OwnHooks::seat)
        {
            seat::lock(seat).refused();
        }
        let status = serde_json::to_value(receipt.status)
            .ok()
            .and_then(|s| s.as_str().map(str::to_string));
        self.dir.events().emit(Event::GroupActionReceipt {
            status: status.unwrap_or_default(),
            client_seq: receipt.client_seq,
            reason: receipt.reason.clone(),
            source: (source == ReceiptSource::TerminalCheckpoint).then_some(source),
        });
    }
}

/// Writes `room.json` for a verified step: with the member's own hooks, its seat's choices
/// and its table.
fn write_room(
    dir: &SessionDir,
    verified: &Verified,
    replica: &Replica,
    own: Option<&OwnHooks>,
    verdicts: &[DealVerdict],
) {
    let Some(checkpoint) = &replica.checkpoint else {
        return;
    };
    let mut record = RoomRecord::of_checkpoint(
        checkpoint,
        replica.view.clone().map(Value::Object),
        verified.envelope.events.clone(),
    );
    record.deal_verdicts = verdicts.to_vec();
    let me = checkpoint
        .state
        .members
        .iter()
        .find(|m| m.public_key == replica.viewer);
    match own {
        Some(own) => record.seen_by(&own.hooks, own.seat.as_ref(), me).write(dir),
        None => record.write(dir),
    }
}
