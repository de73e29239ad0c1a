//! The engine's side of decision windows: one [`Desk`] per side that a person may steer.
//! A hook asks for a window (through the SDK), the desk writes it to `decision/state.json`,
//! announces it, and waits — on the engine thread, never on the transport's tasks, so the
//! heartbeat keeps answering — for a decision from `decisions.jsonl` (CLI, browser, the
//! reference's tools) or from this process (the terminal). Every decision is checked against
//! the window's legal values as it arrives; a bad one is refused with a reason and the window
//! stays open. Each window has an absolute deadline; no window opens once the game is over.

use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use serde_json::{Map, Value, json};

use super::files::{append_line, epoch_now, write_atomic};
use super::legal::{HooksChoices, choices_for};
use crate::layout::jsonl::{Tail, TailLine};
use crate::records::{
    Choices, DecisionFiles, DecisionMeta, DecisionOutcome, DecisionRecord, DecisionStatus, Event,
    EventLog, TimeoutAction, Window, WindowMode, WindowOutcome, iso_now,
};
use crate::spec::{Role, Spec};

/// How often a waiting window looks at `decisions.jsonl` (in-process submissions wake it at
/// once).
const POLL: Duration = Duration::from_millis(10);
/// Longest line of decisions.jsonl taken (a decision is a move and a few names).
pub const MAX_DECISION_LINE: usize = 64 * 1024;
/// Decisions held for windows that are not open yet; more are refused.
pub const MAX_QUEUED: usize = 64;

/// How long this side's windows last.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct WindowTimes {
    /// A human window's deadline, from its opening.
    pub human: Duration,
    /// How long a hybrid window waits for an override before the agent's move is played
    /// (zero: only a decision already submitted counts).
    pub hybrid: Duration,
    /// What a human window's deadline does.
    pub timeout_action: TimeoutAction,
}

/// What a hook asks for.
#[derive(Debug, Clone, PartialEq)]
pub struct WindowRequest {
    pub mode: WindowMode,
    pub match_key: String,
    pub match_value: Value,
    pub value_field: String,
    pub choices: Choices,
    /// Hybrid: the agent's move.
    pub intended: Option<Value>,
}

/// How a window ended, for the hook that waited.
#[derive(Debug, Clone, PartialEq)]
pub enum WindowResult {
    /// Play this decision (a person's, or the timeout's fallback).
    Decided(Value),
    /// Hybrid: nobody overrode; play the agent's move.
    AgentMove,
    /// The deadline passed and the side stops (abort or forfeit).
    TimedOut(TimeoutAction),
    /// The session is ending (abort, game over); nothing is played.
    Cancelled,
}

/// Why a window stopped the session (the engine turns it into a clean end).
#[derive(Debug, Clone, PartialEq)]
pub enum WindowStop {
    TimedOut {
        action: TimeoutAction,
        window: Window,
    },
    /// The hooks refused a decision the desk had let through.
    Rejected {
        window: Window,
        reason: String,
    },
    Cancelled(String),
}

/// What an in-process submission got.
#[derive(Debug, Clone, PartialEq)]
pub enum Submitted {
    /// Taken for the open window (its id).
    Accepted(String),
    Refused(String),
    NoWindow,
}

/// One side's decision windows.
pub struct Desk {
    engine_dir: crate::layout::EngineDir,
    files: DecisionFiles,
    /// The contract and side, for the legal values of a window.
    spec: Spec,
    role: Role,
    times: WindowTimes,
    events: EventLog,
    inner: Mutex<Inner>,
    wake: Condvar,
    view: tokio::sync::watch::Sender<Option<Window>>,
}

struct Inner {
    /// decisions.jsonl, read so far.
    decisions: Tail,
    /// Decisions read and not used yet, in file order.
    pending: Vec<DecisionRecord>,
    open: Option<Window>,
    /// Windows opened so far (the open one's, or the last one's, `seq`).
    opened: u64,
    stop: Option<WindowStop>,
    cancelled: Option<String>,
    /// The window (its `seq`) whose question went stale (a table's step moved on): it closes
    /// as cancelled, and the desk stays open for the next.
    withdrawn: Option<u64>,
    /// The game is over: no more windows.
    finished: bool,
    /// The open window was written and announced (a quiet hybrid window is not).
    announced: bool,
}

impl std::fmt::Debug for Desk {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Desk")
            .field("role", &self.role)
            .field("dir", &self.files.dir())
            .finish_non_exhaustive()
    }
}

impl Desk {
    pub fn new(
        engine_dir: &crate::layout::EngineDir,
        (spec, role): (Spec, Role),
        times: WindowTimes,
        events: EventLog,
    ) -> Arc<Desk> {
        let files = DecisionFiles::of(engine_dir);
        let _ = crate::layout::create_private_dir(files.dir());
        let inner = Inner {
            decisions: Tail::new(files.decisions(), MAX_DECISION_LINE),
            pending: Vec::new(),
            open: None,
            opened: 0,
            stop: None,
            cancelled: None,
            withdrawn: None,
            finished: false,
            announced: false,
        };
        Arc::new(Desk {
            engine_dir: engine_dir.clone(),
            files,
            spec,
            role,
            times,
            events,
            inner: Mutex::new(inner),
            wake: Condvar::new(),
            view: tokio::sync::watch::Sender::new(None),
        })
    }

    fn lock(&self) -> MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }

    pub fn files(&self) -> &DecisionFiles {
        &self.files
    }

    /// The engine dir of the side this desk decides for.
    pub fn engine_dir(&self) -> &crate::layout::EngineDir {
        &self.engine_dir
    }

    /// The open window as it changes (`None` between windows), for a terminal or a page.
    pub fn watch(&self) -> tokio::sync::watch::Receiver<Option<Window>> {
        self.view.subscribe()
    }

    pub fn role(&self) -> Role {
        self.role
    }

    /// Opens the window a hook asks for: its legal values are the contract's for
    /// `value_field`, narrowed to the hooks' choices and `bounds` (an integer range).
    pub fn open_for_hooks(
        &self,
        mode: WindowMode,
        (match_key, match_value): (String, Value),
        value_field: &str,
        hooks: &HooksChoices,
        bounds: Option<(Option<i64>, Option<i64>)>,
        intended: Option<Value>,
    ) -> Option<Window> {
        let mut choices = choices_for(&self.spec, self.role, &match_key, value_field, hooks);
        if let Some((low, high)) = bounds {
            choices = match choices {
                Choices::Integer { min, max } => Choices::Integer {
                    min: low.max(min),
                    max: match (max, high) {
                        (Some(a), Some(b)) => Some(a.min(b)),
                        (a, b) => a.or(b),
                    },
                },
                Choices::Any => Choices::Integer {
                    min: low,
                    max: high,
                },
                other => other,
            };
        }
        self.open(WindowRequest {
            mode,
            match_key,
            match_value,
            value_field: value_field.to_string(),
            choices,
            intended,
        })
    }

    /// Opens a window; `None` once the game is over or the session is ending (no phantom
    /// turns). A hybrid window with no time to wait and nothing submitted for it is not
    /// written anywhere: nobody could act on it.
    pub fn open(&self, request: WindowRequest) -> Option<Window> {
        let mut inner = self.lock();
        if inner.finished || inner.cancelled.is_some() {
            return None;
        }
        let length = match request.mode {
            WindowMode::Human => self.times.human,
            WindowMode::Hybrid => self.times.hybrid,
        };
        let now = epoch_now();
        inner.opened += 1;
        let window = Window {
            seq: inner.opened,
            match_key: request.match_key,
            match_value: request.match_value,
            mode: request.mode,
            value_field: request.value_field,
            choices: request.choices,
            open: true,
            waiting_for: "decision".into(),
            opened_at: now,
            deadline_at: now + length.as_secs_f64(),
            intended: request.intended,
            timeout_action: self.times.timeout_action,
        };
        self.ingest(&mut inner);
        let quiet = request.mode == WindowMode::Hybrid
            && length.is_zero()
            && !inner.pending.iter().any(|d| window.names(&d.body));
        if !quiet {
            self.publish(&window);
            self.events.emit(Event::DecisionWindowOpened {
                match_key: window.match_key.clone(),
                match_value: window.match_value.clone(),
                mode: window.mode,
                value_field: window.value_field.clone(),
                choices: window.choices.clone(),
                deadline_at: iso_at(window.deadline_at),
                intended: window.intended.clone(),
            });
        }
        inner.open = Some(window.clone());
        inner.announced = !quiet;
        if !quiet {
            self.view.send_replace(Some(window.clone()));
        }
        Some(window)
    }

    /// Waits for the open window to close and says what to play.
    pub fn wait(&self) -> WindowResult {
        let started = Instant::now();
        let mut inner = self.lock();
        let Some(window) = inner.open.clone() else {
            return WindowResult::Cancelled;
        };
        let length = Duration::from_secs_f64((window.deadline_at - window.opened_at).max(0.0));
        loop {
            self.ingest(&mut inner);
            if let Some(chosen) = self.choose(&mut inner, &window) {
                let played = chosen.to_value();
                self.close(
                    &mut inner,
                    &window,
                    WindowOutcome::Decided,
                    Some(&chosen),
                    None,
                );
                return WindowResult::Decided(played);
            }
            if let Some(reason) = inner.cancelled.clone() {
                self.close(&mut inner, &window, WindowOutcome::Cancelled, None, None);
                inner.stop.get_or_insert(WindowStop::Cancelled(reason));
                return WindowResult::Cancelled;
            }
            if inner.withdrawn.take() == Some(window.seq) {
                self.close(&mut inner, &window, WindowOutcome::Cancelled, None, None);
                return WindowResult::Cancelled;
            }
            if started.elapsed() >= length {
                return self.expire(&mut inner, &window);
            }
            let left = length.saturating_sub(started.elapsed()).min(POLL);
            inner = self
                .wake
                .wait_timeout(inner, left)
                .unwrap_or_else(PoisonError::into_inner)
                .0;
        }
    }

    /// The deadline passed: hybrid plays the agent's move; human applies the timeout action.
    fn expire(&self, inner: &mut Inner, window: &Window) -> WindowResult {
        if window.mode == WindowMode::Hybrid {
            if !inner.announced {
                inner.open = None;
            } else {
                self.close(inner, window, WindowOutcome::AgentMove, None, None);
            }
            return WindowResult::AgentMove;
        }
        let action = window.timeout_action;
        if action == TimeoutAction::Fallback
            && let Some(value) = window.intended.clone().or_else(|| window.choices.random())
        {
            let mut body = Map::new();
            body.insert(window.match_key.clone(), window.match_value.clone());
            body.insert(window.value_field.clone(), value);
            let record = DecisionRecord {
                meta: DecisionMeta {
                    origin: Some("timeout_fallback".into()),
                    ..DecisionMeta::default()
                },
                body,
            };
            let played = record.to_value();
            self.close(
                inner,
                window,
                WindowOutcome::TimedOut,
                Some(&record),
                Some(action),
            );
            return WindowResult::Decided(played);
        }
        let action = if action == TimeoutAction::Fallback {
            TimeoutAction::Abort
        } else {
            action
        };
        self.close(inner, window, WindowOutcome::TimedOut, None, Some(action));
        inner.stop = Some(WindowStop::TimedOut {
            action,
            window: window.clone(),
        });
        WindowResult::TimedOut(action)
    }

    /// Reads what was appended to decisions.jsonl since the last look. A line that cannot
    /// be read is skipped with an event saying why; the lines after it count as usual.
    fn ingest(&self, inner: &mut Inner) {
        for line in inner.decisions.read() {
            let text = match line {
                TailLine::Text { text, .. } => text,
                TailLine::Skipped { reason, .. } => {
                    self.skipped(reason.to_string());
                    continue;
                }
            };
            if text.trim().is_empty() {
                continue;
            }
            let Ok(mut record) = serde_json::from_str::<DecisionRecord>(&text) else {
                self.skipped("a line is not a decision (a JSON object)".into());
                continue;
            };
            if record_window(&record).0.is_empty() {
                // No window named (the reference's gateway leaves the key it inferred out
                // of the record): it answers the window open now, or none.
                match &inner.open {
                    Some(open) => {
                        record
                            .body
                            .insert(open.match_key.clone(), open.match_value.clone());
                    }
                    None => {
                        self.answer(
                            &record,
                            &(String::new(), Value::Null),
                            DecisionStatus::Late,
                            None,
                        );
                        continue;
                    }
                }
            }
            if self.is_closed_for(inner, &record) {
                self.answer(&record, &record_window(&record), DecisionStatus::Late, None);
            } else if inner.pending.len() >= MAX_QUEUED {
                let reason = format!(
                    "too_many_queued: {MAX_QUEUED} decisions already wait for windows that are not open"
                );
                self.answer(
                    &record,
                    &record_window(&record),
                    DecisionStatus::Refused,
                    Some(&reason),
                );
                let (match_key, match_value) = record_window(&record);
                self.events.emit(Event::DecisionRefused {
                    match_key,
                    match_value,
                    decision_id: record.meta.decision_id.clone(),
                    reason,
                });
            } else {
                inner.pending.push(record);
            }
        }
    }

    fn skipped(&self, reason: String) {
        self.events.emit(Event::DecisionLineSkipped { reason });
    }

    /// Whether a decision names a window that is already over (by its number, or by its
    /// key in finalized.json).
    fn is_closed_for(&self, inner: &Inner, record: &DecisionRecord) -> bool {
        let open_seq = inner.open.as_ref().map(|w| w.seq);
        if let Some(seq) = record.meta.window_seq
            && (seq < open_seq.unwrap_or(inner.opened + 1)
                || (open_seq.is_none() && seq <= inner.opened))
        {
            return true;
        }
        let (key, value) = record_window(record);
        let open = inner.open.as_ref().is_some_and(|w| w.names(&record.body));
        !open
            && !key.is_empty()
            && self
                .files
                .is_finalized(&crate::records::window_key(&key, &value))
    }

    /// The best valid pending decision for `window` (explicit before generated, then the
    /// latest); invalid ones are refused, the others superseded.
    fn choose(&self, inner: &mut Inner, window: &Window) -> Option<DecisionRecord> {
        let mut candidates = Vec::new();
        inner.pending.retain(|record| {
            if !window.names(&record.body) {
                return true;
            }
            candidates.push(record.clone());
            false
        });
        // An answer to another window of the same name (one that closed before) is late.
        candidates.retain(|record| match record.meta.window_seq {
            Some(seq) if seq != window.seq => {
                self.answer(record, &window_of(window), DecisionStatus::Late, None);
                false
            }
            _ => true,
        });
        let mut best: Option<DecisionRecord> = None;
        for record in candidates {
            let value = record.body.get(&window.value_field);
            if let Err(reason) = window.choices.check(&window.value_field, value) {
                self.refuse(window, &record, &reason);
                continue;
            }
            if let Some(previous) = best.take() {
                let (keep, drop) = if record.priority() >= previous.priority() {
                    (record, previous)
                } else {
                    (previous, record)
                };
                self.answer(&drop, &window_of(window), DecisionStatus::Superseded, None);
                self.consumed(window, &drop, "superseded");
                best = Some(keep);
            } else {
                best = Some(record);
            }
        }
        best
    }

    fn refuse(&self, window: &Window, record: &DecisionRecord, reason: &str) {
        self.answer(
            record,
            &window_of(window),
            DecisionStatus::Refused,
            Some(reason),
        );
        self.events.emit(Event::DecisionRefused {
            match_key: window.match_key.clone(),
            match_value: window.match_value.clone(),
            decision_id: record.meta.decision_id.clone(),
            reason: reason.to_string(),
        });
    }

    /// Closes the window: state.json says so, finalized.json lists it, the event says what
    /// was played, the decision's submitter gets its answer.
    fn close(
        &self,
        inner: &mut Inner,
        window: &Window,
        outcome: WindowOutcome,
        decision: Option<&DecisionRecord>,
        action: Option<TimeoutAction>,
    ) {
        inner.open = None;
        let closed = Window {
            open: false,
            ..window.clone()
        };
        self.publish(&closed);
        self.finalize(window, outcome);
        if let Some(record) = decision {
            self.answer(record, &window_of(window), DecisionStatus::Played, None);
            if window.mode == WindowMode::Hybrid {
                self.consumed(window, record, "consumed");
            }
        }
        self.events.emit(Event::DecisionWindowClosed {
            match_key: window.match_key.clone(),
            match_value: window.match_value.clone(),
            outcome,
            decision: decision.map(|record| Value::Object(record.body.clone())),
            origin: decision.and_then(|record| record.meta.origin.clone()),
            action,
        });
        self.view.send_replace(None);
    }

    fn publish(&self, window: &Window) {
        if let Ok(text) = serde_json::to_vec_pretty(window) {
            let _ = write_atomic(&self.files.state(), &text);
        }
    }

    /// finalized.json: `{"round:3": {reason, ts, match_key, match_value}}` (the reference's
    /// file; `ts` is Unix seconds).
    fn finalize(&self, window: &Window, outcome: WindowOutcome) {
        let path = self.files.finalized();
        let mut closed: Map<String, Value> = std::fs::read_to_string(&path)
            .ok()
            .and_then(|text| serde_json::from_str(&text).ok())
            .unwrap_or_default();
        let reason = match outcome {
            WindowOutcome::Decided => "consumed",
            WindowOutcome::AgentMove => "fallback",
            WindowOutcome::TimedOut => "timeout",
            WindowOutcome::Cancelled => "cancelled",
        };
        closed.insert(
            window.key(),
            json!({"reason": reason, "ts": epoch_now(), "match_key": window.match_key, "match_value": window.match_value}),
        );
        if let Ok(text) = serde_json::to_vec(&closed) {
            let _ = write_atomic(&path, &text);
        }
    }

    /// consumed.jsonl, the reference's record of what a hybrid window took.
    fn consumed(&self, window: &Window, record: &DecisionRecord, reason: &str) {
        let Some(id) = &record.meta.decision_id else {
            return;
        };
        let line = json!({
            "decision_id": id, "match_key": window.match_key, "match_value": window.match_value,
            "consumer_id": "hybrid:engine", "reason": reason, "ts": iso_now(),
        });
        append_line(&self.files.consumed(), &line);
    }

    /// outcomes.jsonl: the answer a submitter waits for (only decisions with an id).
    fn answer(
        &self,
        record: &DecisionRecord,
        (match_key, match_value): &(String, Value),
        status: DecisionStatus,
        reason: Option<&str>,
    ) {
        let Some(id) = &record.meta.decision_id else {
            return;
        };
        let outcome = DecisionOutcome {
            decision_id: id.clone(),
            match_key: match_key.clone(),
            match_value: match_value.clone(),
            status,
            reason: reason.map(str::to_string),
            ts: iso_now(),
        };
        if let Ok(line) = serde_json::to_value(&outcome) {
            append_line(&self.files.outcomes(), &line);
        }
    }

    /// An in-process submission (the terminal) for window `seq`: checked against the open
    /// window now (`NoWindow` when `seq` is not the open one any more), then appended to
    /// decisions.jsonl like any other, and the waiting window woken.
    pub fn submit(&self, seq: u64, value: Value, origin: &str) -> Submitted {
        let window = { self.lock().open.clone() };
        let Some(window) = window.filter(|window| window.seq == seq) else {
            return Submitted::NoWindow;
        };
        if let Err(reason) = window.choices.check(&window.value_field, Some(&value)) {
            return Submitted::Refused(reason);
        }
        let id = super::submit::new_decision_id();
        let mut body = Map::new();
        body.insert(window.match_key.clone(), window.match_value.clone());
        body.insert(window.value_field.clone(), value);
        let record = DecisionRecord {
            meta: DecisionMeta {
                decision_id: Some(id.clone()),
                origin: Some(origin.to_string()),
                request_ts: Some(iso_now()),
                window_seq: Some(seq),
                ..DecisionMeta::default()
            },
            body,
        };
        append_line(&self.files.decisions(), &record.to_value());
        self.wake.notify_all();
        Submitted::Accepted(id)
    }

    /// The hooks refused a decision the desk let through (their own rules are stricter than
    /// the contract): remembered so the engine ends cleanly.
    pub fn rejected(&self, match_key: &str, match_value: &Value, reason: &str) {
        let window = Window {
            seq: self.lock().opened,
            match_key: match_key.to_string(),
            match_value: match_value.clone(),
            mode: WindowMode::Human,
            value_field: String::new(),
            choices: Choices::Any,
            open: false,
            waiting_for: "decision".into(),
            opened_at: epoch_now(),
            deadline_at: epoch_now(),
            intended: None,
            timeout_action: self.times.timeout_action,
        };
        self.events.emit(Event::DecisionRefused {
            match_key: match_key.to_string(),
            match_value: match_value.clone(),
            decision_id: None,
            reason: reason.to_string(),
        });
        self.lock().stop = Some(WindowStop::Rejected {
            window,
            reason: reason.to_string(),
        });
    }

    /// What made a window stop the session, once.
    pub fn take_stop(&self) -> Option<WindowStop> {
        self.lock().stop.take()
    }

    /// The session is ending (abort, peer gone): an open window closes now and no other opens.
    pub fn cancel(&self, reason: &str) {
        self.lock()
            .cancelled
            .get_or_insert_with(|| reason.to_string());
        self.wake.notify_all();
    }

    /// Window `seq` asks a question that no longer stands: it closes as cancelled (a decision
    /// already chosen for it still wins), and later windows open as usual.
    pub fn withdraw(&self, seq: u64) {
        self.lock().withdrawn = Some(seq);
        self.wake.notify_all();
    }

    /// Whether no window will open any more (the game is over or the session ending).
    pub fn is_over(&self) -> bool {
        let inner = self.lock();
        inner.finished || inner.cancelled.is_some()
    }

    /// The game is over: no window opens after this.
    pub fn finish(&self) {
        self.lock().finished = true;
        self.wake.notify_all();
    }
}

/// The window a decision names: its first match key and value (empty when none).
fn record_window(record: &DecisionRecord) -> (String, Value) {
    crate::records::MATCH_KEYS
        .iter()
        .find_map(|key| {
            record
                .body
                .get(*key)
                .filter(|v| !v.is_null())
                .map(|v| (key.to_string(), v.clone()))
        })
        .unwrap_or((String::new(), Value::Null))
}

fn window_of(window: &Window) -> (String, Value) {
    (window.match_key.clone(), window.match_value.clone())
}

/// Unix seconds as an RFC 3339 time.
fn iso_at(epoch: f64) -> String {
    chrono::DateTime::from_timestamp_micros((epoch * 1e6) as i64)
        .map(|time| time.to_rfc3339_opts(chrono::SecondsFormat::Millis, true))
        .unwrap_or_default()
}

#[cfg(test)]
mod tests;
