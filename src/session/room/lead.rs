//! A room's leader at work, whether it opened the room (`host`) or took it over when the
//! previous leader died (a member's claim): the accept loop that admits arrivals, the lease
//! heartbeat that keeps the epoch (and stops this leader once the server fences it or the
//! lease cannot be renewed), a claimant's wait for its members to come back with the
//! checkpoints they hold (its epoch starts from the newest), and the hub loop — members' and the leader's own actions
//! applied in order, late arrivals and reconnects attached, members the server no longer
//! lists as active taken out of the room, and the room closed when its hooks end it.

use std::collections::HashSet;
use std::num::NonZeroU32;
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use governor::{Quota, RateLimiter};
use serde_json::{Map, Value};
use tokio::runtime::Handle;
use tokio::task::JoinHandle;

use super::RoomControl;
use super::admission::{MAX_ADMITTING, leader_admit};
use super::fair_deal::{SEED_TIMEOUT, SeedWait};
use super::join::QueuedActions;
use super::leader::{Hub, MEMBER_FRAME_BYTES};
use super::member::ActionSource;
use super::record::RoomRecord;
use super::rest::RestControl;
use super::seat::{self, SharedSeat};
use crate::api::group::{EMPTY_CHECKPOINT_HASH, Group, GroupStatus, LeaderHeartbeat, MemberStatus};
use crate::client::RestClient;
use crate::hooks::python_hooks::PythonHooks;
use crate::hooks::{Hooks, InitContext};
use crate::identity::Identity;
use crate::records::{Event, EventLog};
use crate::room::authority::{Authority, Receipt, Start};
use crate::room::checkpoint::{self, Checkpoint, RoomMember};
use crate::session::{Protocol, SessionError, SessionRecorder};
use crate::spec::Role;
use crate::spec::flow::group::GroupRules;
use crate::transport::{IrohChannel, SessionEndpoint};

/// How long the hub goes on reading its members after the room ended.
const END_DRAIN: Duration = Duration::from_millis(400);
/// How often the leader compares its members with the server's list.
const MEMBERSHIP_CHECK: Duration = Duration::from_secs(2);

/// How long a leader that claimed the room waits, at most, for the members the server lists
/// to come back before it takes its first step.
const HANDOVER_WAIT: Duration = Duration::from_secs(5);

/// A member admitted on the leader's endpoint, with its channel, the checkpoint it
/// handed over (unverified), if any, and whether it takes part in fair deals.
pub struct Arrival {
    pub member: RoomMember,
    pub channel: IrohChannel,
    pub checkpoint: Option<Map<String, Value>>,
    pub fair_deal: bool,
}

/// Members admitted on the leader's endpoint.
pub type Arrivals = mpsc::Receiver<Arrival>;

/// What the lease heartbeat and the hub share: the checkpoint floor the heartbeat reports
/// (seq, checkpoint hash), and why the lease was lost, once it is.
#[derive(Clone)]
pub struct Lease {
    floor: Arc<Mutex<(u64, String)>>,
    lost: Arc<Mutex<Option<String>>>,
}

impl Lease {
    fn new(seq: u64, hash: &str) -> Lease {
        Lease {
            floor: Arc::new(Mutex::new((seq, hash.to_string()))),
            lost: Arc::new(Mutex::new(None)),
        }
    }

    fn lost(&self) -> Option<String> {
        self.lost.lock().expect("the lease lock").clone()
    }
}

/// The leader's background work on the runtime (accepting, heartbeating), stopped when
/// this value is dropped.
pub struct LeaderTasks {
    accepting: JoinHandle<()>,
    heartbeats: JoinHandle<()>,
}

impl Drop for LeaderTasks {
    fn drop(&mut self) {
        self.accepting.abort();
        self.heartbeats.abort();
    }
}

/// Refused admissions recorded in `events.jsonl`: a burst of this many, then one a second,
/// so strangers dialing in a loop cost the leader's disk a bounded trickle of lines.
const REFUSALS_RECORDED_BURST: u32 = 32;

/// Starts accepting members on `endpoint` (each admitted on its own blocking thread) and
/// renewing the lease of `group`'s epoch with `ticket`. A dialer that is not admitted is
/// recorded in `events` (`group_admission_refused`, rate-limited).
pub fn open(
    endpoint: &mut SessionEndpoint,
    client: &RestClient,
    group: &Group,
    ticket: &str,
    seats: usize,
    events: EventLog,
) -> Result<(LeaderTasks, Arrivals, Lease), SessionError> {
    let lease = Lease::new(group.checkpoint_seq, floor_hash(group));
    let heartbeats = tokio::spawn(renew(
        client.clone(),
        group.clone(),
        ticket.to_string(),
        lease.clone(),
    ));
    let (admitted_tx, admitted_rx) = mpsc::channel();
    let mut knocks = endpoint.knocks(seats)?;
    let control = Arc::new(RestControl::new(client.clone(), Handle::current()));
    let identity = client.identity().clone();
    let group = group.clone();
    let admitting = Arc::new(tokio::sync::Semaphore::new(MAX_ADMITTING));
    let recorded = Arc::new(RateLimiter::direct(
        Quota::per_second(NonZeroU32::MIN)
            .allow_burst(NonZeroU32::new(REFUSALS_RECORDED_BURST).expect("not zero")),
    ));
    let accepting = tokio::spawn(async move {
        while let Ok(slot) = admitting.clone().acquire_owned().await
            && let Ok(link) = knocks.next().await
        {
            let node_id = link
                .remote_node_id()
                .map(|id| id.to_string())
                .unwrap_or_default();
            let (events, recorded) = (events.clone(), recorded.clone());
            let mut channel =
                IrohChannel::with_frame_limit(link, &Handle::current(), MEMBER_FRAME_BYTES);
            let (control, identity, group, admitted) = (
                control.clone(),
                identity.clone(),
                group.clone(),
                admitted_tx.clone(),
            );
            tokio::task::spawn_blocking(move || {
                let _slot = slot;
                match leader_admit(
                    &mut channel,
                    control.as_ref(),
                    &identity,
                    &group.group_id,
                    &group.protocol_id,
                    group.leader_epoch,
                ) {
                    Ok((member, ready)) => {
                        let _ = admitted.send(Arrival {
                            member,
                            channel,
                            checkpoint: ready.checkpoint,
                            fair_deal: ready.fair_deal,
                        });
                    }
                    Err(reason) if recorded.check().is_ok() => {
                        events.emit(Event::GroupAdmissionRefused { node_id, reason });
                    }
                    Err(_) => {}
                }
            });
        }
    });
    Ok((
        LeaderTasks {
            accepting,
            heartbeats,
        },
        admitted_rx,
        lease,
    ))
}

fn floor_hash(group: &Group) -> &str {
    if group.checkpoint_hash.is_empty() {
        EMPTY_CHECKPOINT_HASH
    } else {
        &group.checkpoint_hash
    }
}

/// The lease, renewed every third of its length with the floor. The server refusing this
/// epoch (another leader, a closed room), or a whole lease without one renewal, loses it.
async fn renew(client: RestClient, group: Group, ticket: String, lease: Lease) {
    let length = Duration::from_secs(group.leader_lease_seconds.max(1));
    let mut ticks = tokio::time::interval((length / 3).max(Duration::from_secs(1)));
    let mut renewed = Instant::now();
    loop {
        ticks.tick().await;
        let (seq, hash) = lease.floor.lock().expect("the lease lock").clone();
        let beat = LeaderHeartbeat::signed(client.identity(), &group, seq, &hash, &ticket);
        let lost = match client.renew_leader(&group.group_id, &beat).await {
            Ok(_) => {
                renewed = Instant::now();
                None
            }
            Err(error) if matches!(error.status(), Some(403 | 404 | 409)) => {
                Some(error.to_string())
            }
            Err(error) if renewed.elapsed() > length => Some(format!(
                "no renewal for {} s (last: {error})",
                length.as_secs()
            )),
            Err(_) => None,
        };
        if let Some(reason) = lost {
            *lease.lost.lock().expect("the lease lock") = Some(reason);
            return;
        }
    }
}

/// The hooks a leader runs, loaded and initialized with its own state directory.
pub fn leader_hooks(
    protocol: &Protocol,
    options: &Map<String, Value>,
    dir: &SessionRecorder,
) -> Result<PythonHooks, SessionError> {
    let mut hooks = PythonHooks::load_for(&protocol.dir, &protocol.spec)?;
    let state_dir = dir
        .dir()
        .leader_engine_dir()
        .map_err(|e| SessionError::io("creating the leader's state dir", e))?;
    hooks.init(&InitContext {
        options,
        role: Role::Host,
        args: &[],
        state_dir: state_dir.root(),
        decision: None,
        pass_decision: true,
        timing: None,
        desk: None,
    })?;
    Ok(hooks)
}

/// The leader's blocking side of one epoch.
pub struct Lead {
    pub control: RestControl,
    pub client: RestClient,
    pub runtime: Handle,
    pub identity: Identity,
    /// The room as of this leader's epoch.
    pub group: Group,
    pub rules: GroupRules,
    pub dir: SessionRecorder,
    pub lease: Lease,
    /// The leader's own actions (the session's queue).
    pub own: QueuedActions,
    /// The leader's own table seat, when its hooks play one.
    pub seat: Option<SharedSeat>,
    /// The deadline on a deal waiting for its seats' seeds.
    pub seeds: SeedWait,
}

impl Lead {
    /// Waits until the start policy has enough members in (the leader counts itself); a
    /// slow lobby costs its early members nothing (they dial again and keep their seats).
    pub fn lobby(&self, arrivals: &Arrivals) -> Result<Vec<Arrival>, SessionError> {
        let needed = usize::from(self.rules.members_to_start());
        self.wait_for(arrivals, None, |lobby| lobby.len() + 1 >= needed)
    }

    /// A claimant's wait before its first step: until every other member the server listed
    /// when the claim was won is back, but the leaders it replaces (or [`HANDOVER_WAIT`]
    /// passed). Returns where the new
    /// epoch starts — the newest of `own` and the checkpoints the members handed over that
    /// verify and were certified by a leader in `trusted` — and the members that came back.
    pub fn gather(
        &self,
        arrivals: &Arrivals,
        own: Checkpoint,
        trusted: &[(String, u64)],
    ) -> Result<(Checkpoint, Vec<Arrival>), SessionError> {
        let me = self.identity.public_key();
        let expected: HashSet<&str> = self
            .group
            .members
            .iter()
            .filter(|m| m.status == MemberStatus::Active && m.public_key != me)
            .filter(|m| trusted.iter().all(|(leader, _)| *leader != m.public_key))
            .map(|m| m.public_key.as_str())
            .collect();
        let back = self.wait_for(arrivals, Some(Instant::now() + HANDOVER_WAIT), |back| {
            expected
                .iter()
                .all(|key| back.iter().any(|a| a.member.public_key == *key))
        })?;
        let handed: Vec<Checkpoint> = back
            .iter()
            .filter_map(|arrival| {
                let raw = arrival.checkpoint.as_ref()?;
                checkpoint::handed_over(raw, &self.group.group_id, trusted)
                    .inspect_err(|error| {
                        self.dir.events().emit(Event::GroupCheckpointRefused {
                            public_key: arrival.member.public_key.clone(),
                            reason: error.to_string(),
                        });
                    })
                    .ok()
            })
            .collect();
        let claimed_seq = own.seq;
        let start = checkpoint::newest(own, handed);
        if start.seq != claimed_seq {
            self.dir.events().emit(Event::GroupCheckpointHandedOver {
                seq: start.seq,
                claimed_seq,
            });
        }
        Ok((start, back))
    }

    /// Collects arrivals until `enough` holds for them or `deadline` passes; a member that
    /// dials again while it waits counts once, on its newest channel.
    fn wait_for(
        &self,
        arrivals: &Arrivals,
        deadline: Option<Instant>,
        enough: impl Fn(&[Arrival]) -> bool,
    ) -> Result<Vec<Arrival>, SessionError> {
        let mut waiting: Vec<Arrival> = Vec::new();
        while !enough(&waiting) && deadline.is_none_or(|at| Instant::now() < at) {
            match arrivals.recv_timeout(Duration::from_millis(200)) {
                Ok(arrived) => {
                    waiting.retain(|a| a.member.public_key != arrived.member.public_key);
                    waiting.push(arrived);
                }
                Err(mpsc::RecvTimeoutError::Timeout) => self.check_lease()?,
                Err(mpsc::RecvTimeoutError::Disconnected) => {
                    return Err(self.stopped("no more arrivals".into()));
                }
            }
        }
        Ok(waiting)
    }

    /// The server's active members of the room now.
    pub fn active_members(&self) -> Result<(Vec<RoomMember>, u64), SessionError> {
        let listed = self
            .control
            .group(&self.group.group_id)
            .map_err(|e| self.stopped(e))?;
        let members = listed
            .members
            .iter()
            .filter(|m| m.status == MemberStatus::Active)
            .map(RoomMember::from)
            .collect();
        Ok((members, listed.membership_version))
    }

    /// The hub of this epoch: the authority over the server's active members now, fresh or
    /// restored from a checkpoint.
    pub fn hub(&self, hooks: PythonHooks, start: Start) -> Result<Hub<PythonHooks>, SessionError> {
        let (members, version) = self.active_members()?;
        let (authority, _) = Authority::new(
            hooks,
            self.rules.clone(),
            self.identity.clone(),
            &self.group.group_id,
            self.group.leader_epoch,
            version,
            members,
            start,
        )
        .map_err(|e| self.stopped(e.to_string()))?;
        Ok(Hub::new(authority))
    }

    /// Marks the room with `status` for this epoch (best effort: the lease keeps it alive).
    pub fn set_status(&self, status: GroupStatus) {
        let _ = self.runtime.block_on(self.client.set_group_status(
            &self.group.group_id,
            self.group.leader_epoch,
            status,
        ));
    }

    /// Runs the room until its hooks end it (or this leader loses its lease), then closes
    /// it; returns its outcome.
    pub fn serve(
        &mut self,
        hub: &mut Hub<PythonHooks>,
        arrivals: &Arrivals,
    ) -> Result<Option<String>, SessionError> {
        let mut recorded = None;
        let mut checked = Instant::now();
        while !hub.authority.completed {
            self.check_lease()?;
            hub.poll();
            self.expel_overdue(hub);
            self.record_detached(hub);
            while let Ok(arrival) = arrivals.try_recv() {
                self.arrived(hub, arrival);
            }
            while let Some(action) = self.own.next_action() {
                if let Some(seat) = &self.seat {
                    seat::lock(seat).acted();
                }
                self.act(hub, None, &action);
            }
            if checked.elapsed() > MEMBERSHIP_CHECK {
                checked = Instant::now();
                self.reconcile(hub);
            }
            if recorded != Some(hub.authority.seq) {
                recorded = Some(hub.authority.seq);
                self.record_step(hub);
            }
            if let Some(seat) = &self.seat {
                let (action, stopped) = {
                    let mut seat = seat::lock(seat);
                    (seat.next_move(hub.authority.hooks()), seat.stopped())
                };
                if let Some(reason) = stopped {
                    return Err(self.stopped(reason));
                }
                if let Some(action) = action {
                    self.act(hub, None, &action);
                }
            }
        }
        self.record_step(hub);
        if let Some(seat) = &self.seat {
            seat::lock(seat).finish();
        }
        // What the members still send about the last step (acknowledgements, receipts) is
        // read for a moment before the hub closes.
        let draining = Instant::now();
        while draining.elapsed() < END_DRAIN {
            hub.poll();
        }
        hub.close();
        self.set_status(GroupStatus::Closed);
        Ok(hub.authority.outcome.clone())
    }

    /// Applies one of the leader's own actions (`client_seq` when it is a resent one).
    pub fn act(
        &self,
        hub: &mut Hub<PythonHooks>,
        client_seq: Option<u64>,
        action: &Map<String, Value>,
    ) {
        let key = self.identity.public_key().to_string();
        let seq = client_seq.unwrap_or_else(|| {
            hub.authority
                .checkpoint()
                .and_then(|c| c.state.last_client_seq.get(&key).copied())
                .unwrap_or(0)
                + 1
        });
        let (envelopes, receipt) = hub.authority.apply_input(&key, seq, action);
        hub.broadcast(&envelopes);
        self.record_receipt(&receipt);
    }

    fn check_lease(&self) -> Result<(), SessionError> {
        match self.lease.lost() {
            Some(reason) => {
                self.dir.events().emit(Event::GroupLeaderFenced {
                    reason: reason.clone(),
                });
                Err(self.stopped(format!("leader_lease_lost: {reason}")))
            }
            None => Ok(()),
        }
    }

    /// A member admitted while the room runs: added (when new, or back after it was taken
    /// out) and attached; one that reconnects keeps its place and gets a bootstrap.
    pub fn arrived(&self, hub: &mut Hub<PythonHooks>, arrival: Arrival) {
        super::fair_deal::announce(hub.authority.hooks(), [&arrival]);
        let Arrival {
            member, channel, ..
        } = arrival;
        let seated = hub
            .authority
            .member(&member.public_key)
            .is_some_and(|m| m.status == MemberStatus::Active);
        if !seated {
            let version = self
                .control
                .group(&self.group.group_id)
                .map(|g| g.membership_version)
                .unwrap_or(0);
            match hub.authority.add_member(member.clone(), version) {
                Ok(envelopes) => hub.broadcast(&envelopes),
                Err(error) => {
                    hub.refuse(Box::new(channel), &error.to_string());
                    return;
                }
            }
        }
        if let Err(reason) = hub.attach(&member.public_key, Box::new(channel)) {
            self.dir.events().emit(Event::GroupMemberDisconnected {
                public_key: member.public_key,
                reason,
            });
        }
    }

    /// Members the server no longer lists as active (they left, or stopped heartbeating)
    /// leave the room, so it never waits on an absent seat.
    fn reconcile(&self, hub: &mut Hub<PythonHooks>) {
        let Ok(listed) = self.control.group(&self.group.group_id) else {
            return;
        };
        let gone: Vec<String> = hub
            .authority
            .members()
            .iter()
            .filter(|m| {
                m.status == MemberStatus::Active && m.public_key != self.identity.public_key()
            })
            .filter(|m| {
                listed
                    .member(&m.public_key)
                    .is_none_or(|s| s.status != MemberStatus::Active)
            })
            .map(|m| m.public_key.clone())
            .collect();
        for key in gone {
            if let Ok(envelopes) =
                hub.authority
                    .remove_member(&key, listed.membership_version, "left")
            {
                hub.broadcast(&envelopes);
                self.dir.events().emit(Event::GroupMemberLeft {
                    public_key: key.clone(),
                });
            }
        }
    }

    /// Seats whose seed a deal waited out its time for leave the room (their seat is away, so
    /// the deal goes on from the seeds that came) and lose their channel, with the reason.
    fn expel_overdue(&mut self, hub: &mut Hub<PythonHooks>) {
        for overdue in self.seeds.overdue(hub.authority.own_view()) {
            let version = hub.authority.membership_version;
            if let Ok(envelopes) =
                hub.authority
                    .remove_member(&overdue.public_key, version, SEED_TIMEOUT)
            {
                hub.broadcast(&envelopes);
            }
            hub.detach(&overdue.public_key, overdue.reason);
        }
    }

    /// After a new step: the floor the lease reports, and `room.json`.
    fn record_step(&self, hub: &Hub<PythonHooks>) {
        if let Some(checkpoint) = hub.authority.replicated_checkpoint() {
            *self.lease.floor.lock().expect("the lease lock") =
                (checkpoint.seq, checkpoint.checkpoint_hash.clone());
        }
        if let Some(checkpoint) = hub.authority.checkpoint() {
            let events = hub.authority.last_events().to_vec();
            let me = hub.authority.member(self.identity.public_key());
            RoomRecord::of_checkpoint(checkpoint, hub.authority.own_view().cloned(), events)
                .seen_by(hub.authority.hooks(), self.seat.as_ref(), me)
                .write(self.dir.dir());
        }
    }

    /// Each member the hub let go, once, as an event.
    fn record_detached(&self, hub: &mut Hub<PythonHooks>) {
        for detached in hub.detached.drain(..) {
            self.dir.events().emit(Event::GroupMemberDisconnected {
                public_key: detached.public_key,
                reason: detached.reason,
            });
        }
    }

    fn record_receipt(&self, receipt: &Receipt) {
        let (status, client_seq, reason) = match receipt {
            Receipt::Accepted { client_seq, .. } => ("accepted", *client_seq, None),
            Receipt::Duplicate { client_seq, .. } => ("duplicate", *client_seq, None),
            Receipt::Rejected { client_seq, reason } => {
                if let Some(seat) = &self.seat {
                    seat::lock(seat).refused();
                }
                ("rejected", *client_seq, Some(reason.clone()))
            }
        };
        self.dir.events().emit(Event::GroupActionReceipt {
            status: status.into(),
            client_seq: Some(client_seq),
            reason,
            source: None,
        });
    }

    pub fn stopped(&self, detail: String) -> SessionError {
        SessionError::Stopped {
            what: "the room leader",
            detail,
        }
    }
}
