//! The terminal that asks: when a person runs a human- or hybrid-controlled side in a
//! terminal, each decision window is shown as it opens — whose turn, the state the hooks
//! publish (score, last event, the board or card table), the time left, the legal moves
//! numbered — and one typed line answers it: a number, a move, or (hybrid) Enter to let the
//! agent's move stand. Answers go through the desk, which checks them at once; a refusal says
//! why and asks again.

use std::io::{BufRead, Write};
use std::sync::Arc;
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::time::Duration;

use serde_json::Value;

use super::desk::{Desk, Submitted};
use super::files::epoch_now;
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
    let mut reminders: Vec<u64> = REMINDERS
        .into_iter()
        .filter(|s| (*s as f64) < window.seconds_left(epoch_now()))
        .collect();
    loop {
        if windows.has_changed().unwrap_or(true) {
            if windows.borrow().as_ref() != Some(window) {
                say("(the decision window closed)");
            }
            return;
        }
        let left = window.seconds_left(epoch_now());
        if let Some(&mark) = reminders.first()
            && left <= mark as f64
        {
            reminders.remove(0);
            say(&format!("  {mark} s left"));
            prompt(window, left);
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
        match desk.submit(value.clone(), "terminal") {
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
        "[{:>3.0} s left] {} > ",
        left.ceil(),
        escape_display(&window.value_field)
    );
    let _ = std::io::stdout().flush();
}

fn say(text: &str) {
    println!("\n{text}");
}

/// What the hooks publish in snapshot.json that a player wants to see: the score, the
/// round, the last event, the board or table (`board_text`).
fn state_lines(desk: &Desk) -> Vec<String> {
    let path = desk
        .files()
        .dir()
        .parent()
        .map(|dir| dir.join("snapshot.json"));
    let snapshot: Value = path
        .and_then(|path| std::fs::read_to_string(path).ok())
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
