//! `protocol test` on a room: a leader's authority on the protocol's hooks and one verifier
//! per member, in one process, through a room's whole life — the first members, their
//! actions (scripted with `--actions`, or chosen by the hooks' `proto_group_autoplay`), a late
//! arrival, a departure, the leader's death and a member taking over from its checkpoint,
//! the old leader coming back as a member, then actions again until the room ends or the
//! step budget runs out. Every envelope must
//! verify in its member's replica; each member's last view and checkpoint are written to the
//! test's directory.

use std::path::{Path, PathBuf};

use serde::Deserialize;
use serde_json::{Map, Value};

use crate::api::group::{MemberStatus, RecoveryMode, StartPolicy};
use crate::hooks::python_hooks::PythonHooks;
use crate::hooks::{Hooks, InitContext};
use crate::identity::Identity;
use crate::room::authority::{Authority, Envelopes, Receipt, Start};
use crate::room::checkpoint::RoomMember;
use crate::room::{Replica, RoomError};
use crate::spec::flow::group::GroupRules;
use crate::spec::{Flow, Role, Spec};

/// The room every test plays in.
const GROUP_ID: &str = "protocol-test";

/// What to play.
pub struct RoomTest {
    pub protocol_dir: PathBuf,
    pub spec: Spec,
    pub options: Map<String, Value>,
    /// Where the test's directory (`room-<ms>/`) goes.
    pub state_base: PathBuf,
    /// Scripted actions, played before any the hooks choose.
    pub script: Vec<ScriptedAction>,
    /// Most actions before the late join, the departure and the failover.
    pub first_actions: usize,
    /// Most actions after the failover.
    pub max_actions: usize,
}

/// One line of `--actions`: the seat that acts and its action.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct ScriptedAction {
    pub seat: u32,
    pub action: Map<String, Value>,
}

/// What happened.
#[derive(Debug, Clone, PartialEq, Default, serde::Serialize)]
pub struct RoomReport {
    pub dir: PathBuf,
    pub members: usize,
    pub steps: u64,
    pub envelopes_verified: usize,
    pub accepted: usize,
    pub rejected: Vec<String>,
    pub late_join: bool,
    pub departure: bool,
    /// The old leader came back as a member after the failover.
    pub rejoined: bool,
    /// The seq the new leader restored from, unless the room's recovery is `abort`.
    pub failover_from: Option<u64>,
    pub completed: bool,
    pub outcome: Option<String>,
}

/// Why the test could not run or failed.
#[derive(Debug, thiserror::Error)]
pub enum RoomTestError {
    #[error("{0}")]
    Setup(String),
    #[error(transparent)]
    Hooks(#[from] crate::hooks::HookError),
    #[error("the room broke: {0}")]
    Room(#[from] RoomError),
    #[error("seat {seat} refused step {seq}: {error}")]
    Verify {
        seat: u32,
        seq: u64,
        error: RoomError,
    },
    #[error("proto_group_autoplay failed for seat {seat}: {message}")]
    Autoplay { seat: u32, message: String },
}

/// One member of the test room.
struct Seat {
    identity: Identity,
    member: RoomMember,
    replica: Replica,
}

impl RoomTest {
    pub fn run(&self) -> Result<RoomReport, RoomTestError> {
        let Flow::Group(rules) = self
            .spec
            .model()
            .map_err(|e| RoomTestError::Setup(e.to_string()))?
            .flow
            .clone()
        else {
            return Err(RoomTestError::Setup("not a room".into()));
        };
        let dir = crate::layout::claim_dir(&self.state_base, "room")
            .map_err(|e| RoomTestError::Setup(format!("cannot create the test directory: {e}")))?;
        let mut report = RoomReport {
            dir: dir.clone(),
            ..RoomReport::default()
        };
        let first = match rules.start_policy {
            StartPolicy::MinReady => rules.min_participants,
            StartPolicy::Full | StartPolicy::FixedFull => rules.max_participants,
        };
        let leader = Identity::generate();
        let mut seats = vec![new_seat(leader.clone(), 0, leader.public_key(), 0)];
        seats.extend(
            (1..u32::from(first))
                .map(|seat| new_seat(Identity::generate(), seat, leader.public_key(), 0)),
        );
        report.members = seats.len();
        let players = self.hooks(&dir, Role::Guest, "players")?;
        let members: Vec<RoomMember> = seats.iter().map(|s| s.member.clone()).collect();
        let hooks = self.hooks(&dir, Role::Host, "leader-0")?;
        let (mut authority, _) = Authority::new(
            hooks,
            rules.clone(),
            leader,
            GROUP_ID,
            0,
            members.len() as u64,
            members,
            Start::Fresh,
        )?;
        bootstrap_all(&mut authority, &mut seats, &mut report)?;
        let mut script = self.script.iter();
        self.play(
            &mut authority,
            &mut seats,
            &players,
            (&mut script, self.first_actions),
            &mut report,
        )?;
        let mut version = authority.membership_version;
        if rules.allow_late_join
            && seats.len() < usize::from(rules.max_participants)
            && !authority.completed
        {
            version += 1;
            let newcomer = new_seat(
                Identity::generate(),
                next_free_seat(&seats),
                &seats[0].replica.leader.clone(),
                0,
            );
            let envelopes = authority.add_member(newcomer.member.clone(), version)?;
            seats.push(newcomer);
            deliver(&mut seats, envelopes, false, &mut report)?;
            report.late_join = true;
        }
        let departing = seats.len() > usize::from(rules.min_participants)
            && rules.start_policy != StartPolicy::FixedFull;
        if departing && !authority.completed {
            version += 1;
            let gone = seats.pop().expect("more than the minimum");
            let envelopes = authority.remove_member(gone.identity.public_key(), version, "left")?;
            deliver(&mut seats, envelopes, false, &mut report)?;
            report.departure = true;
        }
        if rules.recovery_mode != RecoveryMode::Abort && !authority.completed && seats.len() > 1 {
            let (next, from, old) =
                self.fail_over(&dir, &rules, &mut seats, version, &mut report)?;
            report.failover_from = Some(from);
            authority = next;
            version += 1;
            if rules.allow_late_join && !authority.completed {
                version += 1;
                rejoin(&mut authority, &mut seats, old, version, &mut report)?;
            }
            self.play(
                &mut authority,
                &mut seats,
                &players,
                (&mut script, self.max_actions),
                &mut report,
            )?;
        }
        report.steps = authority.seq;
        report.completed = authority.completed;
        report.outcome = authority.outcome.clone();
        for seat in &seats {
            write_seat(&dir, seat)?;
        }
        Ok(report)
    }

    /// A hooks instance initialised as `role`, with its own state dir under `dir`.
    fn hooks(&self, dir: &Path, role: Role, name: &str) -> Result<PythonHooks, RoomTestError> {
        let mut hooks = PythonHooks::load_for(&self.protocol_dir, &self.spec)?;
        let state_dir = dir.join(name);
        crate::layout::create_private_dir(&state_dir)
            .map_err(|e| RoomTestError::Setup(format!("cannot create a state dir: {e}")))?;
        hooks.init(&InitContext {
            options: &self.options,
            role,
            args: &[],
            state_dir: &state_dir,
            decision: None,
            pass_decision: true,
            timing: None,
            desk: None,
        })?;
        Ok(hooks)
    }

    /// Actions until the room ends, nothing is left to play, or `budget` runs out: the
    /// script first, then each seat in turn as its hooks choose.
    fn play(
        &self,
        authority: &mut Authority<PythonHooks>,
        seats: &mut [Seat],
        players: &PythonHooks,
        (script, budget): (&mut std::slice::Iter<ScriptedAction>, usize),
        report: &mut RoomReport,
    ) -> Result<(), RoomTestError> {
        let mut played = 0;
        let mut idle_rounds = 0;
        while played < budget && !authority.completed && idle_rounds < 2 {
            let next = match script.next() {
                Some(line) => Some(line.clone()),
                None => autoplay(seats, players, played)?,
            };
            let Some(ScriptedAction { seat, action }) = next else {
                idle_rounds += 1;
                continue;
            };
            idle_rounds = 0;
            played += 1;
            let Some(actor) = seats.iter().find(|s| s.member.seat == seat) else {
                report
                    .rejected
                    .push(format!("seat {seat} is not in the room"));
                continue;
            };
            let key = actor.identity.public_key().to_string();
            let client_seq = actor.replica.checkpoint.as_ref().map_or(0, |c| {
                c.state.last_client_seq.get(&key).copied().unwrap_or(0)
            }) + 1;
            let (envelopes, receipt) = authority.apply_input(&key, client_seq, &action);
            match receipt {
                Receipt::Accepted { .. } => report.accepted += 1,
                Receipt::Rejected { reason, .. } => {
                    report.rejected.push(format!("seat {seat}: {reason}"))
                }
                Receipt::Duplicate { .. } => {}
            }
            deliver(seats, envelopes, false, report)?;
        }
        Ok(())
    }
}

/// The next seat (in turn from `played`) whose hooks choose an action.
fn autoplay(
    seats: &[Seat],
    players: &PythonHooks,
    played: usize,
) -> Result<Option<ScriptedAction>, RoomTestError> {
    for offset in 0..seats.len() {
        let seat = &seats[(played + offset) % seats.len()];
        let Some(view) = &seat.replica.view else {
            continue;
        };
        let chosen =
            players
                .room_autoplay(view, &seat.member)
                .map_err(|f| RoomTestError::Autoplay {
                    seat: seat.member.seat,
                    message: f.message,
                })?;
        if let Some(action) = chosen {
            return Ok(Some(ScriptedAction {
                seat: seat.member.seat,
                action,
            }));
        }
    }
    Ok(None)
}

impl RoomTest {
    /// The leader (seat 0) dies; the next seat restores from its own checkpoint, and the
    /// others follow it into the new epoch. Returns the new authority, the seq it restored
    /// from and the old leader's seat.
    fn fail_over(
        &self,
        dir: &Path,
        rules: &GroupRules,
        seats: &mut Vec<Seat>,
        version: u64,
        report: &mut RoomReport,
    ) -> Result<(Authority<PythonHooks>, u64, Seat), RoomTestError> {
        let old = seats.remove(0);
        let successor = seats[0].identity.clone();
        let checkpoint = seats[0]
            .replica
            .checkpoint
            .clone()
            .ok_or_else(|| RoomTestError::Setup("no checkpoint to restore".into()))?;
        let members: Vec<RoomMember> = seats.iter().map(|s| s.member.clone()).collect();
        let hooks = self.hooks(dir, Role::Host, "leader-1")?;
        let (mut authority, _) = Authority::new(
            hooks,
            rules.clone(),
            successor.clone(),
            GROUP_ID,
            1,
            version + 1,
            members,
            Start::Restore(&checkpoint),
        )?;
        for seat in seats.iter_mut() {
            seat.replica.advance_epoch(successor.public_key(), 1)?;
        }
        bootstrap_all(&mut authority, seats, report)?;
        Ok((authority, checkpoint.seq, old))
    }
}

/// The old leader comes back as a member, in its own seat, following the new leader (stable
/// seats survive a leader change).
fn rejoin(
    authority: &mut Authority<PythonHooks>,
    seats: &mut Vec<Seat>,
    old: Seat,
    version: u64,
    report: &mut RoomReport,
) -> Result<(), RoomTestError> {
    let leader = seats[0].identity.public_key().to_string();
    let back = new_seat(old.identity, old.member.seat, &leader, authority.epoch);
    let envelopes = authority.add_member(back.member.clone(), version)?;
    seats.insert(0, back);
    deliver(seats, envelopes, false, report)?;
    report.rejoined = true;
    Ok(())
}

/// A member at `seat` following the leader `leader` of `epoch`.
fn new_seat(identity: Identity, seat: u32, leader: &str, epoch: u64) -> Seat {
    let member = RoomMember {
        member_id: format!("seat-{seat}"),
        public_key: identity.public_key().to_string(),
        seat,
        status: MemberStatus::Active,
    };
    let replica = Replica::new(GROUP_ID, identity.public_key(), leader, epoch);
    Seat {
        identity,
        member,
        replica,
    }
}

fn next_free_seat(seats: &[Seat]) -> u32 {
    (0..)
        .find(|n| seats.iter().all(|s| s.member.seat != *n))
        .expect("a free seat")
}

fn bootstrap_all(
    authority: &mut Authority<PythonHooks>,
    seats: &mut [Seat],
    report: &mut RoomReport,
) -> Result<(), RoomTestError> {
    let mut envelopes = Vec::new();
    for seat in seats.iter() {
        if let Some(envelope) = authority.bootstrap(seat.identity.public_key())? {
            envelopes.push((seat.identity.public_key().to_string(), envelope));
        }
    }
    deliver(seats, envelopes, true, report)
}

/// Every member verifies its envelope of the step (a member that has none, because it
/// just arrived, gets a bootstrap later in `run`).
fn deliver(
    seats: &mut [Seat],
    envelopes: Envelopes,
    bootstrap: bool,
    report: &mut RoomReport,
) -> Result<(), RoomTestError> {
    for (key, envelope) in envelopes {
        let Some(seat) = seats.iter_mut().find(|s| s.identity.public_key() == key) else {
            continue;
        };
        let fresh = seat.replica.head.is_none();
        let seq = envelope["seq"].as_u64().unwrap_or_default();
        seat.replica
            .apply(envelope, bootstrap || fresh)
            .map_err(|error| RoomTestError::Verify {
                seat: seat.member.seat,
                seq,
                error,
            })?;
        report.envelopes_verified += 1;
    }
    Ok(())
}

/// `seat-<n>.json`: the member's last verified view and checkpoint.
fn write_seat(dir: &Path, seat: &Seat) -> Result<(), RoomTestError> {
    let record = serde_json::json!({
        "seat": seat.member.seat,
        "public_key": seat.identity.public_key(),
        "view": seat.replica.view,
        "checkpoint": seat.replica.checkpoint,
    });
    let text = serde_json::to_string_pretty(&record).expect("a record serializes");
    crate::layout::write_atomic(
        &dir.join(format!("seat-{}.json", seat.member.seat)),
        text.as_bytes(),
    )
    .map_err(|e| RoomTestError::Setup(format!("cannot write the seat file: {e}")))
}
