//! The terminal that asks: when a person runs a human- or hybrid-controlled side in a
//! terminal, each decision window is shown as it opens — whose turn, the state the hooks
//! publish (score, last event, the board or card table), the time left, the legal moves
//! numbered — and one typed line answers it: a number, a move, or (hybrid) Enter to let the
//! agent's move stand. Answers go through the desk, which checks them at once; a refusal says
//! why and asks again. The time left on the prompt line counts down every second when stdout
//! is a terminal too; otherwise reminders are printed with 30, 10 and 5 seconds left.

use std::io::{BufRead, IsTerminal, Write};
use std::sync::Arc;
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::time::Duration;

use serde_json::Value;

use crate::decision::epoch_now;
use crate::decision::{Desk, Submitted};
use crate::records::{Window, WindowMode, plain_text};
use crate::terminal::escape_display;

/// Reminders of the time left, in seconds.
const REMINDERS: [u64; 3] = [30, 10, 5];
/// Legal moves shown numbered; a longer list (a Gomoku board) shows its size instead.
const NUMBERED: usize = 20;
/// Lines of a hooks' `board_text` shown at most (a 19 x 19 Gomoku board has 20).
const BOARD_LINES: usize = 40;

/// Starts the prompt for `desk` on its own thread (and a stdin reader beside it).
pub fn start(desk: Arc<Desk>) {
    let (lines, typed) = std::sync::mpsc::channel::<String>();
    std::thread::spawn(move || {
        for line in std::io::stdin().lock().lines() {
            let Ok(line) = line else { break };
            if lines.send(line).is_err() {
                break;
            }
        }
    });
    std::thread::spawn(move || prompt_loop(&desk, &typed));
}

fn prompt_loop(desk: &Desk, typed: &Receiver<String>) {
    let mut windows = desk.watch();
    let mut answered: Option<(String, f64)> = None;
    while !desk.is_over() {
        let window = windows.borrow_and_update().clone();
        match window {
            Some(window) if answered != Some((window.key(), window.opened_at)) => {
                answered = Some((window.key(), window.opened_at));
                ask(desk, &window, typed, &mut windows);
            }
            _ => match typed.recv_timeout(Duration::from_millis(50)) {
                Ok(line) if !line.trim().is_empty() => {
                    say("(no decision is waiting for you right now)");
                }
                Err(RecvTimeoutError::Disconnected) => return,
                _ => {}
            },
        }
    }
}

/// Shows one window and answers it from typed lines until it closes.
fn ask(
    desk: &Desk,
    window: &Window,
    typed: &Receiver<String>,
    windows: &mut tokio::sync::watch::Receiver<Option<Window>>,
) {
    show(desk, window);
    let listed = window.choices.listed();
    let mut countdown = Countdown::new(live_countdown(), window.seconds_left(epoch_now()));
    loop {
        if windows.has_changed().unwrap_or(true) {
            if windows.borrow().as_ref() != Some(window) {
                say("(the decision window closed)");
            }
            return;
        }
        let left = window.seconds_left(epoch_now());
        match countdown.due(left) {
            Some(Tick::Redraw(seconds)) => redraw_time(seconds),
            Some(Tick::Reminder(mark)) => {
                say(&format!("  {mark} s left"));
                prompt(window, left);
            }
            None => {}
        }
        let line = match typed.recv_timeout(Duration::from_millis(50)) {
            Ok(line) => line,
            Err(RecvTimeoutError::Timeout) => continue,
            Err(RecvTimeoutError::Disconnected) => return,
        };
        let Some(value) = typed_move(line.trim(), window, listed.as_deref()) else {
            prompt(window, window.seconds_left(epoch_now()));
            continue;
        };
        match desk.submit(window.seq, value.clone(), "terminal") {
            Submitted::Accepted(_) => {
                say(&format!(
                    "  -> {} (waiting for the opponent)",
                    escape_display(&plain_text(&value))
                ));
                return;
            }
            Submitted::Refused(reason) => {
                say(&format!(
                    "  refused: {}; try again",
                    escape_display(&reason)
                ));
                prompt(window, window.seconds_left(epoch_now()));
            }
            Submitted::NoWindow => {
                say("(the decision window closed)");
                return;
            }
        }
    }
}

/// The move a typed line means: a listed number, Enter for the agent's move (hybrid), or
/// the move itself (a JSON number or boolean, else the text).
fn typed_move(line: &str, window: &Window, listed: Option<&[Value]>) -> Option<Value> {
    if line.is_empty() {
        return window
            .intended
            .clone()
            .filter(|_| window.mode == WindowMode::Hybrid);
    }
    if let (Ok(number), Some(listed)) = (line.parse::<usize>(), listed)
        && (1..=listed.len()).contains(&number)
        && !listed.iter().any(|v| v.as_u64() == Some(number as u64))
    {
        return Some(listed[number - 1].clone());
    }
    Some(match serde_json::from_str::<Value>(line) {
        Ok(value @ (Value::Number(_) | Value::Bool(_))) => value,
        _ => Value::String(line.to_string()),
    })
}

/// The window as a person sees it: whose turn, the state, the moves, the time.
fn show(desk: &Desk, window: &Window) {
    let who = match window.mode {
        WindowMode::Human => "Your move",
        WindowMode::Hybrid => "Your agent is about to move",
    };
    let mut text = format!(
        "\n== {who} ({} {}, you are the {}) ==\n",
        escape_display(&window.match_key),
        escape_display(&plain_text(&window.match_value)),
        desk.role()
    );
    for line in state_lines(desk) {
        text.push_str(&format!("  {line}\n"));
    }
    match window.choices.listed() {
        Some(listed) => {
            let mut moves: Vec<String> = listed
                .iter()
                .take(NUMBERED)
                .enumerate()
                .map(|(i, v)| format!("{}) {}", i + 1, escape_display(&plain_text(v))))
                .collect();
            if listed.len() > NUMBERED {
                moves.push(format!("… ({} in all: type the move)", listed.len()));
            }
            text.push_str(&format!("  Legal moves: {}\n", moves.join("   ")));
        }
        None => text.push_str(&format!(
            "  Legal: {} ({})\n",
            escape_display(&window.value_field),
            window.choices.describe()
        )),
    }
    if let (WindowMode::Hybrid, Some(intended)) = (window.mode, &window.intended) {
        text.push_str(&format!(
            "  Agent's move: {} (Enter or the timeout plays it; type another to override)\n",
            escape_display(&plain_text(intended))
        ));
    }
    print!("{text}");
    prompt(window, window.seconds_left(epoch_now()));
}

fn prompt(window: &Window, left: f64) {
    print!(
        "{} {} > ",
        time_left(whole_seconds(left)),
        escape_display(&window.value_field)
    );
    let _ = std::io::stdout().flush();
}

/// The prompt line's clock, always 12 columns wide so a redraw covers the last one
/// (minutes, then hours, for long think times).
fn time_left(seconds: u64) -> String {
    match seconds {
        0..1000 => format!("[{seconds:>3} s left]"),
        1000..=59_940 => format!("[{:>3} m left]", seconds.div_ceil(60)),
        _ => format!("[{:>3} h left]", seconds.div_ceil(3600)),
    }
}

/// Rewrites the clock at the start of the prompt line in place: the cursor is saved, moved
/// to the line's start and restored (DECSC/DECRC), so whatever the person has typed stays.
fn redraw_time(seconds: u64) {
    print!("\x1b7\r{}\x1b8", time_left(seconds));
    let _ = std::io::stdout().flush();
}

/// Whether the clock can tick in place: stdout is a terminal that understands cursor moves.
fn live_countdown() -> bool {
    std::io::stdout().is_terminal() && std::env::var("TERM").map_or(true, |term| term != "dumb")
}

/// What the time left calls for on the prompt line.
#[derive(Debug, PartialEq)]
enum Tick {
    /// The clock shows a new whole second.
    Redraw(u64),
    /// A reminder line with this many seconds left (output that is not a live terminal).
    Reminder(u64),
}

/// The prompt's clock for one window: a live countdown redrawn every second, or reminders
/// at [`REMINDERS`] for output that cannot be redrawn.
struct Countdown {
    live: bool,
    shown: u64,
    reminders: Vec<u64>,
}

impl Countdown {
    fn new(live: bool, left: f64) -> Countdown {
        Countdown {
            live,
            shown: whole_seconds(left),
            reminders: REMINDERS
                .into_iter()
                .filter(|mark| (*mark as f64) < left)
                .collect(),
        }
    }

    /// What to do now that `left` seconds are left, if anything.
    fn due(&mut self, left: f64) -> Option<Tick> {
        if self.live {
            let seconds = whole_seconds(left);
            return (seconds != self.shown).then(|| {
                self.shown = seconds;
                Tick::Redraw(seconds)
            });
        }
        let mark = *self.reminders.first()?;
        (left <= mark as f64).then(|| {
            self.reminders.remove(0);
            Tick::Reminder(mark)
        })
    }
}

fn whole_seconds(left: f64) -> u64 {
    left.ceil().max(0.0) as u64
}

fn say(text: &str) {
    println!("\n{text}");
}

/// What the hooks publish in snapshot.json that a player wants to see: the score, the
/// round, the last event, the board or table (`board_text`).
fn state_lines(desk: &Desk) -> Vec<String> {
    let snapshot: Value = std::fs::read_to_string(desk.engine_dir().snapshot_file())
        .ok()
        .and_then(|text| serde_json::from_str(&text).ok())
        .unwrap_or(Value::Null);
    let mut lines = Vec::new();
    if let Some(score) = snapshot.get("score").and_then(Value::as_object) {
        let parts: Vec<String> = score
            .iter()
            .map(|(who, n)| format!("{} {}", escape_display(who), escape_display(&plain_text(n))))
            .collect();
        lines.push(format!("Score: {}", parts.join(" - ")));
    }
    if let Some(summary) = snapshot
        .pointer("/last_event/summary")
        .and_then(Value::as_str)
    {
        lines.push(format!("Last: {}", escape_display(summary)));
    }
    if let Some(board) = snapshot.get("board_text").and_then(Value::as_str) {
        lines.extend(
            board
                .lines()
                .take(BOARD_LINES)
                .map(|line| format!("  {}", escape_display(line))),
        );
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_live_clock_ticks_every_second_and_a_plain_one_reminds() {
        let mut live = Countdown::new(true, 31.5);
        assert_eq!(live.due(31.2), None);
        assert_eq!(live.due(30.9), Some(Tick::Redraw(31)));
        assert_eq!(live.due(30.5), None);
        assert_eq!(live.due(29.99), Some(Tick::Redraw(30)));
        assert_eq!(live.due(-1.0), Some(Tick::Redraw(0)));
        let mut plain = Countdown::new(false, 31.5);
        let ticks: Vec<Tick> = (0..=64)
            .rev()
            .filter_map(|half| plain.due(half as f64 / 2.0))
            .collect();
        assert_eq!(
            ticks,
            [Tick::Reminder(30), Tick::Reminder(10), Tick::Reminder(5)]
        );
        let mut short = Countdown::new(false, 8.0);
        assert_eq!(short.due(5.0), Some(Tick::Reminder(5)));
    }

    #[test]
    fn the_clock_keeps_its_width() {
        assert_eq!(time_left(60), "[ 60 s left]");
        assert_eq!(time_left(1000), "[ 17 m left]");
        assert_eq!(time_left(86_400), "[ 24 h left]");
        for seconds in [0, 5, 999, 1000, 59_940, 59_941, 86_400] {
            assert_eq!(time_left(seconds).len(), 12, "{seconds}");
        }
    }
}
