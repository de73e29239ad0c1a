//! A table seat of ours — a member's, or the leader's own — played across processes. On
//! every step it holds (verified by a member, produced by the leader), the side's hooks (the
//! leader's own, or the copy a member holds — [`member_hooks`]) list the seat's legal actions
//! from its own view (`proto_group_choices`, recorded in `room.json`);
//! then the seat moves as its control mode says: `autonomous` plays
//! `proto_group_autoplay`; `human` opens a decision window on the side's desk whose legal
//! values are those choices; `hybrid` opens one showing the agent's move, played unless a
//! person overrides it. Windows are waited on by a thread of their own, so following the
//! room never stops while a person thinks. Rooms whose hooks list no choices (the
//! conversational ones) get no seat at all.

use std::sync::mpsc::{self, Receiver, Sender, TryRecvError};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use serde_json::{Map, Value, json};

use crate::decision::{Desk, WindowRequest, WindowResult, WindowTimes};
use crate::hooks::python_hooks::PythonHooks;
use crate::hooks::{Hooks, InitContext};
use crate::layout::EngineDir;
use crate::records::{
    Choices, Event, EventLog, TableChoice, WindowMode, find_table_action, resolve_table_choice,
};
use crate::room::checkpoint::RoomMember;
use crate::session::{Protocol, SessionError, SessionRecorder};
use crate::spec::{ControlMode, Role};

/// The seat a member's follow loop and its recorder share (and a leader it becomes).
pub type SharedSeat = Arc<Mutex<TableSeat>>;

/// A member's own copy of the room's hooks (held so it can take the room over), loaded once
/// and shared by what it does with them: its table seat's moves, its table drawn, its deals
/// checked.
pub type MemberHooks = Arc<PythonHooks>;

/// What a table seat of ours needs to play.
pub struct SeatSetup<'a> {
    pub protocol: &'a Protocol,
    pub options: &'a Map<String, Value>,
    pub recorder: &'a SessionRecorder,
    pub control_mode: ControlMode,
    pub times: WindowTimes,
}

/// A member's hooks, and its table seat when they play one: where they do they get their
/// `proto_init` in the seat's engine dir (a seat's moves read the table's options).
pub fn member_hooks(setup: SeatSetup) -> Result<(MemberHooks, Option<SharedSeat>), SessionError> {
    let mut hooks = PythonHooks::load_for(&setup.protocol.dir, &setup.protocol.spec)?;
    if hooks.plays_table_seats() {
        hooks.init(&InitContext {
            options: setup.options,
            role: Role::Guest,
            args: &[],
            state_dir: seat_dir(&setup)?.root(),
            decision: None,
            pass_decision: true,
            timing: None,
            desk: None,
        })?;
    }
    let seat = TableSeat::open(setup, &hooks)?;
    Ok((Arc::new(hooks), seat))
}

fn seat_dir(setup: &SeatSetup) -> Result<EngineDir, SessionError> {
    setup
        .recorder
        .dir()
        .seat_engine_dir()
        .map_err(|e| SessionError::io("creating the seat's state dir", e))
}

/// One step as the seat saw it.
struct Step {
    seq: u64,
    view: Map<String, Value>,
    me: RoomMember,
    choices: Vec<TableChoice>,
}

/// A window the seat asks a person to answer.
struct Ask {
    step: u64,
    /// Hybrid when the agent has a move to show, else a person's window.
    mode: WindowMode,
    choices: Vec<TableChoice>,
    /// Hybrid: the agent's action.
    intended: Option<Map<String, Value>>,
}

/// What a closed window gives the seat.
enum Answer {
    /// The action decided in the window asked at `step`.
    Play {
        step: u64,
        action: Map<String, Value>,
    },
    /// The window's deadline stopped this seat (`abort` or `forfeit`).
    Stop(String),
}

/// The human and hybrid seat's windows: asked of a thread that opens and waits on them.
struct Windows {
    desk: Arc<Desk>,
    mode: WindowMode,
    asks: Sender<Option<Ask>>,
    answers: Receiver<Answer>,
    /// The choices of the window asked last (a step that keeps them keeps the window).
    asked: Option<Vec<TableChoice>>,
}

/// A table seat of ours; the side's hooks are handed to each step that needs them.
pub struct TableSeat {
    events: EventLog,
    now: Option<Step>,
    /// The step the seat last moved (or declined to move) at: each step is answered once.
    considered: Option<u64>,
    /// The step at which this side last sent an action (the seat's own move or a queued one):
    /// an answer from a window asked at that step or before is stale (the action changes the
    /// table), and is dropped.
    acted_at: Option<u64>,
    /// The step at which an action the leader refused was chosen, when the table has not
    /// moved since: the seat answers that step again, by a person's window only (no automatic
    /// move: the refused one would come back).
    refused_at: Option<u64>,
    windows: Option<Windows>,
    stopped: Option<String>,
}

impl TableSeat {
    /// The seat of a side in `setup`, when its `hooks` play table seats (`None` otherwise):
    /// its windows live in the engine dir `seat/`, which `session.json` names so `session
    /// decide` finds them.
    pub fn open(setup: SeatSetup, hooks: &PythonHooks) -> Result<Option<SharedSeat>, SessionError> {
        if !hooks.plays_table_seats() {
            return Ok(None);
        }
        let engine_dir = seat_dir(&setup)?;
        let _ = setup
            .recorder
            .update(|record| record.state_dir = Some(engine_dir.root().to_path_buf()));
        let events = setup.recorder.events();
        let windows = match setup.control_mode {
            ControlMode::Autonomous => None,
            steered => {
                let desk = Desk::new(
                    &engine_dir,
                    (setup.protocol.spec.clone(), Role::Guest),
                    setup.times,
                    events.clone(),
                );
                let mode = match steered {
                    ControlMode::Human => WindowMode::Human,
                    _ => WindowMode::Hybrid,
                };
                Some(Windows::start(desk, mode))
            }
        };
        Ok(Some(Arc::new(Mutex::new(TableSeat {
            events: events.clone(),
            now: None,
            considered: None,
            acted_at: None,
            refused_at: None,
            windows,
            stopped: None,
        }))))
    }

    /// A new step: the seat's choices from its view (`None` when its hooks failed, recorded
    /// as `group_seat_hook_failed`), which `room.json` shows.
    pub fn observe(
        &mut self,
        hooks: &PythonHooks,
        seq: u64,
        view: &Map<String, Value>,
        me: &RoomMember,
    ) -> Option<Vec<TableChoice>> {
        let choices = hooks
            .room_choices(view, me)
            .map_err(|failure| self.failed("proto_group_choices", seq, &failure.message))
            .ok();
        self.now = Some(Step {
            seq,
            view: view.clone(),
            me: me.clone(),
            choices: choices.clone().unwrap_or_default(),
        });
        choices
    }

    /// The seat's next action, asked when nothing of this side is in flight: a window's
    /// answer, or (autonomous) what `proto_group_autoplay` plays at a step not answered yet.
    pub fn next_move(&mut self, hooks: &PythonHooks) -> Option<Map<String, Value>> {
        if self.stopped.is_some() {
            return None;
        }
        if let Some(windows) = &mut self.windows {
            while let Ok(answer) = windows.answers.try_recv() {
                match answer {
                    Answer::Play { step, .. } if self.acted_at.is_some_and(|at| step <= at) => {}
                    Answer::Play { action, .. } => {
                        self.acted();
                        return Some(action);
                    }
                    Answer::Stop(reason) => {
                        self.stopped = Some(reason);
                        return None;
                    }
                }
            }
        }
        let step = self.now.as_ref()?;
        if self.considered == Some(step.seq) {
            return None;
        }
        self.considered = Some(step.seq);
        let (seq, choices) = (step.seq, step.choices.clone());
        let refused = self.refused_at == Some(seq);
        if self.windows.is_none() {
            if refused {
                return None;
            }
            let action = self.autoplay(hooks);
            if action.is_some() {
                self.acted_at = Some(seq);
            }
            return action;
        }
        let intended = match self.windows.as_ref().map(|w| w.mode) {
            Some(WindowMode::Hybrid) if !choices.is_empty() && !refused => self.autoplay(hooks),
            _ => None,
        };
        if let Some(windows) = &mut self.windows {
            windows.ask(seq, choices, intended);
        }
        None
    }

    /// An action of this side goes out (a window's answer, or one queued with `session
    /// action`, the terminal or the page): an answer from a window asked at this step or
    /// before is stale from now on, and the open window closes.
    pub fn acted(&mut self) {
        self.acted_at = self.now.as_ref().map(|now| now.seq);
        if let Some(windows) = &mut self.windows {
            windows.withdraw();
        }
    }

    /// The leader refused an action of this side (a rejected receipt): the step the seat holds
    /// is answered again — by a person's window when the action was chosen at this very step,
    /// else (the table moved on meanwhile, e.g. a stronger declaration came first) as any new
    /// step is. Without this a seat whose move was refused would wait for a step that only its
    /// own move could bring.
    pub fn refused(&mut self) {
        // The refused action left the table as it was: a window asked at its step again is
        // answered, not dropped as stale. Answers still queued were to windows asked before
        // it, and are.
        self.refused_at = self.acted_at.take();
        self.considered = None;
        if let Some(windows) = &mut self.windows {
            while let Ok(answer) = windows.answers.try_recv() {
                if let Answer::Stop(reason) = answer {
                    self.stopped = Some(reason);
                }
            }
            windows.asked = None;
        }
    }

    /// Why a window's deadline stopped this seat, once it has.
    pub fn stopped(&self) -> Option<String> {
        self.stopped.clone()
    }

    /// The room ended or this side is leaving: an open window closes, no other opens.
    pub fn finish(&self) {
        if let Some(windows) = &self.windows {
            windows.desk.finish();
            windows.desk.cancel("the room ended");
        }
    }

    fn autoplay(&mut self, hooks: &PythonHooks) -> Option<Map<String, Value>> {
        let step = self.now.as_ref()?;
        let seq = step.seq;
        hooks
            .room_autoplay(&step.view, &step.me)
            .map_err(|failure| self.failed("proto_group_autoplay", seq, &failure.message))
            .ok()
            .flatten()
    }

    fn failed(&self, hook: &str, seq: u64, reason: &str) {
        self.events.emit(Event::GroupSeatHookFailed {
            hook: hook.into(),
            seq,
            reason: reason.into(),
        });
    }
}

/// Locks a shared seat (a panic elsewhere leaves it usable).
pub fn lock(seat: &SharedSeat) -> MutexGuard<'_, TableSeat> {
    seat.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Windows {
    fn start(desk: Arc<Desk>, mode: WindowMode) -> Windows {
        let (asks, asked) = mpsc::channel();
        let (answered, answers) = mpsc::channel();
        let waiting = desk.clone();
        std::thread::spawn(move || answer_windows(&waiting, &asked, &answered));
        Windows {
            desk,
            mode,
            asks,
            answers,
            asked: None,
        }
    }

    /// The open window's question no longer stands (the seat acted, or the step moved on): it
    /// closes, and the next step asks again.
    fn withdraw(&mut self) {
        // (the seq is copied out first: the desk publishes a window to this watch while it
        // holds its own lock, so holding the watch's borrow into `withdraw` could deadlock)
        let open = self.desk.watch().borrow().as_ref().map(|window| window.seq);
        if let Some(seq) = open {
            self.desk.withdraw(seq);
        }
        self.asked = None;
    }

    /// A step's choices: a window for them, unless the window asked last has the same
    /// (it stays open); a window whose choices no longer stand is withdrawn.
    fn ask(&mut self, step: u64, choices: Vec<TableChoice>, intended: Option<Map<String, Value>>) {
        if self.asked.as_ref() == Some(&choices) {
            return;
        }
        self.withdraw();
        self.asked = Some(choices.clone()).filter(|c| !c.is_empty());
        let mode = match intended {
            Some(_) => WindowMode::Hybrid,
            None => WindowMode::Human,
        };
        let ask = (!choices.is_empty()).then_some(Ask {
            step,
            mode,
            choices,
            intended,
        });
        let _ = self.asks.send(ask);
    }
}

/// The windows' thread: each newest ask opens a window (an ask superseded before it opened
/// never does) and its answer goes back, until the desk closes.
fn answer_windows(desk: &Desk, asks: &Receiver<Option<Ask>>, answers: &Sender<Answer>) {
    let mut next: Option<Option<Ask>> = None;
    loop {
        let mut ask = match next.take() {
            Some(ask) => ask,
            None => match asks.recv() {
                Ok(ask) => ask,
                Err(_) => return,
            },
        };
        loop {
            match asks.try_recv() {
                Ok(newer) => ask = newer,
                Err(TryRecvError::Empty) => break,
                Err(TryRecvError::Disconnected) => return,
            }
        }
        let Some(ask) = ask else { continue };
        let Some(window) = desk.open(WindowRequest {
            mode: ask.mode,
            match_key: "step".into(),
            match_value: Value::from(ask.step),
            value_field: "choice".into(),
            choices: Choices::Table {
                options: ask.choices.clone(),
            },
            intended: ask
                .intended
                .as_ref()
                .map(|action| shown(&ask.choices, action)),
        }) else {
            return;
        };
        // A newer step that arrived while the window opened may already have replaced it.
        if let Ok(newer) = asks.try_recv() {
            desk.withdraw(window.seq);
            next = Some(newer);
        }
        let answer = match desk.wait() {
            WindowResult::Decided(decision) => decision
                .get("choice")
                .and_then(|choice| resolve_table_choice(&ask.choices, choice).ok())
                .map(|action| Answer::Play {
                    step: ask.step,
                    action,
                }),
            WindowResult::AgentMove => ask.intended.map(|action| Answer::Play {
                step: ask.step,
                action,
            }),
            WindowResult::TimedOut(action) => Some(Answer::Stop(format!(
                "decision_timeout: no decision for step {} before its deadline ({})",
                ask.step,
                action.as_str()
            ))),
            WindowResult::Cancelled if desk.is_over() => return,
            WindowResult::Cancelled => None,
        };
        if let Some(answer) = answer
            && answers.send(answer).is_err()
        {
            return;
        }
    }
}

/// The agent's action as a window shows it: its choice's number (with its amount or pick),
/// else the action itself.
fn shown(choices: &[TableChoice], action: &Map<String, Value>) -> Value {
    match find_table_action(choices, action) {
        Some((index, free)) => choices[index].decision(index, free),
        None => json!({"action": action}),
    }
}
