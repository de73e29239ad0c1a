//! The terminal of a room's side in human or hybrid control (`join`/`host` of a room):
//! every line typed on stdin becomes one of the room's actions — a JSON object as it is, any
//! other line the room's text action when it is conversational ([`super::talk`]) — queued like
//! `session action` queues it; a bad line gets one line saying why and nothing is lost (the
//! next line is read as usual). Lines are read within [`MAX_LINE`] bytes. Each new step of the
//! room this side holds (`room.json`, verified by a member, produced by a leader) is shown as
//! readable lines: who joined or left, a change of leader, the step's events (a message's
//! text as `seat N: text`), the room's end; at a table whose hooks draw it
//! ([`crate::session::room::table`]), the table in place of the events: the seats with whose
//! turn it is, this side's hand with suit symbols, the centre, the score and the step in words. Everything that came from the network is printed
//! with its control characters escaped.

use std::io::BufRead;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::Value;

use super::actions::{MAX_ACTION_BYTES, queue};
use super::talk::{Talk, typed_action};
use crate::api::group::MemberStatus;
use crate::control::Target;
use crate::layout::SessionDir;
use crate::room::checkpoint::RoomMember;
use crate::session::room::record::RoomRecord;
use crate::terminal::escape_control;

/// The longest line read from stdin (an action at its largest, with room for spacing).
pub const MAX_LINE: usize = MAX_ACTION_BYTES + 1024;
/// How often `room.json` is looked at.
const LOOK: Duration = Duration::from_millis(20);
/// The most characters of one event shown.
const MAX_SHOWN: usize = 400;

/// The terminal of one room's side.
pub struct Console {
    dir: SessionDir,
    /// The step last shown.
    shown: Mutex<Option<RoomRecord>>,
}

impl Console {
    /// Starts reading actions from stdin and showing the room of `session_root` on stdout,
    /// each on a thread of its own for as long as the process runs.
    pub fn start(dir: SessionDir) -> Arc<Console> {
        let console = Arc::new(Console {
            dir,
            shown: Mutex::new(None),
        });
        let root = console.dir.root().to_path_buf();
        std::thread::spawn(move || {
            read_actions(&mut std::io::stdin().lock(), &root, &mut |line| {
                println!("{line}")
            })
        });
        let watching = console.clone();
        std::thread::spawn(move || {
            while !watching.catch_up() {
                std::thread::sleep(LOOK);
            }
        });
        console
    }

    /// Shows what the room did since the last look (the CLI looks once more when the
    /// session ends, so the room's last step is shown before the process exits); true once
    /// the room's end was shown.
    pub fn catch_up(&self) -> bool {
        let mut shown = self
            .shown
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        let room = std::fs::read(self.dir.room_file())
            .ok()
            .and_then(|bytes| serde_json::from_slice::<RoomRecord>(&bytes).ok());
        if let Some(room) = room.filter(|room| shown.as_ref() != Some(room)) {
            for line in describe(shown.as_ref(), &room) {
                println!("{line}");
            }
            *shown = Some(room);
        }
        shown.as_ref().is_some_and(|room| room.completed)
    }
}

/// One line of input, as read within its bound.
#[derive(Debug, PartialEq, Eq)]
enum Input {
    Text(String),
    TooLong,
    NotText,
}

/// The next line of `reader` (without its newline), never holding more than `max` bytes of
/// it: a longer line is read to its end and dropped. `None` at the end of the input.
fn next_line(reader: &mut impl BufRead, max: usize) -> std::io::Result<Option<Input>> {
    let mut line = Vec::new();
    let mut over = false;
    loop {
        let buffer = reader.fill_buf()?;
        if buffer.is_empty() {
            return Ok((over || !line.is_empty()).then(|| finish(line, over)));
        }
        let (part, used, done) = match buffer.iter().position(|&b| b == b'\n') {
            Some(end) => (&buffer[..end], end + 1, true),
            None => (buffer, buffer.len(), false),
        };
        if !over && line.len() + part.len() <= max {
            line.extend_from_slice(part);
        } else {
            over = true;
            line.clear();
        }
        reader.consume(used);
        if done {
            return Ok(Some(finish(line, over)));
        }
    }
}

fn finish(line: Vec<u8>, over: bool) -> Input {
    if over {
        return Input::TooLong;
    }
    match String::from_utf8(line) {
        Ok(text) => Input::Text(text.trim_end_matches('\r').to_string()),
        Err(_) => Input::NotText,
    }
}

/// Queues an action for every line of `reader` until it ends; `say` gets one line per
/// refusal.
fn read_actions(reader: &mut impl BufRead, root: &Path, say: &mut dyn FnMut(&str)) {
    while let Ok(Some(input)) = next_line(reader, MAX_LINE) {
        let line = match input {
            Input::Text(line) => line,
            Input::TooLong => {
                say(&format!(
                    "error: the line is longer than {MAX_LINE} bytes (not sent)"
                ));
                continue;
            }
            Input::NotText => {
                say("error: the line is not UTF-8 text (not sent)");
                continue;
            }
        };
        if let Err(reason) = act(&line, root) {
            say(&format!("error: {} (not sent)", escape_control(&reason)));
        }
    }
}

/// Queues what `line` asks for in the session at `root`.
fn act(line: &str, root: &Path) -> Result<(), String> {
    let target = Target::at(root).map_err(|e| e.to_string())?;
    let talk = target.record.protocol_id.as_deref().and_then(Talk::of);
    match typed_action(line, talk)? {
        Some(action) => queue(&target, action).map(drop).map_err(|e| e.to_string()),
        None => Ok(()),
    }
}

/// The lines that tell a person what changed from `before` to `now`.
fn describe(before: Option<&RoomRecord>, now: &RoomRecord) -> Vec<String> {
    let mut lines = Vec::new();
    let seat_of = |key: &str| {
        now.members
            .iter()
            .find(|m| m.public_key == key)
            .map_or_else(|| "?".to_string(), |m| m.seat.to_string())
    };
    match before {
        None => {
            lines.push(format!(
                "[room] {} at step {}, led by seat {}",
                short(&now.group_id),
                now.seq,
                seat_of(&now.leader_public_key)
            ));
            for member in now.members.iter().filter(|m| active(m)) {
                lines.push(format!(
                    "[room] seat {} is here ({})",
                    member.seat,
                    short(&member.public_key)
                ));
            }
        }
        Some(before) => {
            if before.leader_public_key != now.leader_public_key {
                lines.push(format!(
                    "[room] seat {} ({}) now leads the room",
                    seat_of(&now.leader_public_key),
                    short(&now.leader_public_key)
                ));
            }
            lines.extend(member_changes(&before.members, &now.members));
        }
    }
    let new_step = before.is_none_or(|b| (b.leader_epoch, b.seq) != (now.leader_epoch, now.seq));
    if new_step {
        match (&now.drawn.table, &now.drawn.table_error) {
            (Some(table), _) => lines.extend(
                table
                    .lines()
                    .iter()
                    .map(|line| format!("[table] {}", escape_control(&bounded(line)))),
            ),
            (None, error) => {
                if let Some(error) = error {
                    lines.push(format!(
                        "[room] the table could not be drawn: {}",
                        escape_control(&bounded(error))
                    ));
                }
                lines.extend(now.events.iter().map(describe_event));
            }
        }
    }
    if now.completed && before.is_none_or(|b| !b.completed) {
        let outcome = now.outcome.as_deref().unwrap_or("no outcome");
        lines.push(format!(
            "[room] the room ended ({})",
            escape_control(outcome)
        ));
    }
    lines
}

fn active(member: &RoomMember) -> bool {
    member.status == MemberStatus::Active
}

/// Who joined and who left between two member lists.
fn member_changes(before: &[RoomMember], now: &[RoomMember]) -> Vec<String> {
    let was_active = |key: &str| before.iter().any(|m| m.public_key == key && active(m));
    let mut lines = Vec::new();
    for member in now {
        let (was, is) = (was_active(&member.public_key), active(member));
        if is && !was {
            lines.push(format!(
                "[room] seat {} joined ({})",
                member.seat,
                short(&member.public_key)
            ));
        } else if was && !is {
            lines.push(format!(
                "[room] seat {} left ({})",
                member.seat,
                short(&member.public_key)
            ));
        }
    }
    for gone in before.iter().filter(|m| active(m)) {
        if !now.iter().any(|m| m.public_key == gone.public_key) {
            lines.push(format!(
                "[room] seat {} left ({})",
                gone.seat,
                short(&gone.public_key)
            ));
        }
    }
    lines
}

/// One event of a step: a message as `seat N: text`, anything else as its kind and JSON.
fn describe_event(event: &Value) -> String {
    let message = event
        .get("message")
        .filter(|m| m.is_object())
        .unwrap_or(event);
    let kind = event
        .get("kind")
        .or_else(|| event.get("type"))
        .and_then(Value::as_str)
        .unwrap_or("event");
    let line = match (
        message.get("text").and_then(Value::as_str),
        message.get("seat"),
    ) {
        (Some(text), Some(seat)) if seat.as_i64().is_some_and(|s| s >= 0) => {
            format!("seat {seat}: {text}")
        }
        (Some(text), _) => format!("{kind}: {text}"),
        (None, _) => format!("{kind}: {event}"),
    };
    format!("[room] {}", escape_control(&bounded(&line)))
}

fn bounded(text: &str) -> String {
    match text.char_indices().nth(MAX_SHOWN) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text.to_string(),
    }
}

/// The first 8 characters of a key or id, for reading.
fn short(text: &str) -> String {
    escape_control(&text.chars().take(8).collect::<String>()).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::session::room::table::{Drawn, Table};
    use serde_json::json;

    #[test]
    fn lines_are_read_within_their_bound() {
        let mut input: &[u8] = b"short\nfar too long a line\n\xff\xfe\nlast";
        let mut lines = Vec::new();
        while let Some(line) = next_line(&mut input, 8).unwrap() {
            lines.push(line);
        }
        assert_eq!(
            lines,
            [
                Input::Text("short".into()),
                Input::TooLong,
                Input::NotText,
                Input::Text("last".into())
            ]
        );
    }

    fn member(key: &str, seat: u32, status: MemberStatus) -> RoomMember {
        RoomMember {
            member_id: format!("m{seat}"),
            public_key: key.into(),
            seat,
            status,
        }
    }

    /// Step 1 of a room with its leader in seat 0.
    fn first_step() -> RoomRecord {
        RoomRecord {
            group_id: "group-1234567".into(),
            leader_public_key: "aaaa".repeat(16),
            leader_epoch: 0,
            seq: 1,
            members: vec![member(&"aaaa".repeat(16), 0, MemberStatus::Active)],
            view: None,
            events: Vec::new(),
            completed: false,
            outcome: None,
            deal_verdicts: Vec::new(),
            choices: None,
            drawn: Drawn::default(),
        }
    }

    #[test]
    fn a_step_reads_as_lines_with_network_text_escaped() {
        let before = first_step();
        let mut now = before.clone();
        now.seq = 2;
        now.members
            .push(member(&"bbbb".repeat(16), 1, MemberStatus::Active));
        now.events = vec![
            json!({"kind": "message", "message": {"seat": 1, "text": "hi\u{1b}[2J"}}),
            json!({"kind": "topic_changed", "topic": "x"}),
        ];
        let lines = describe(Some(&before), &now);
        assert_eq!(lines[0], "[room] seat 1 joined (bbbbbbbb)");
        assert_eq!(lines[1], "[room] seat 1: hi\\x1b[2J");
        assert!(lines[2].starts_with("[room] topic_changed: {"), "{lines:?}");
        now.completed = true;
        now.outcome = Some("closed".into());
        let again = describe(Some(&now.clone()), &now);
        assert!(
            again.is_empty(),
            "an unchanged step shows nothing: {again:?}"
        );
        let mut ended = now.clone();
        ended.completed = false;
        assert_eq!(
            describe(Some(&ended), &now).last().unwrap(),
            "[room] the room ended (closed)"
        );
    }

    #[test]
    fn a_table_step_prints_the_table_in_place_of_its_events_escaped() {
        let before = first_step();
        let mut now = before.clone();
        now.seq = 2;
        now.events = vec![json!({"kind": "holdem_action", "action": {"kind": "call"}})];
        let table = json!({
            "title": "Texas Hold'em", "phase": "hand 1, flop", "turn": "Your turn: check or bet",
            "seats": [{"seat": 0, "name": "Seat 0 \u{1b}[2J", "you": true, "to_act": true,
                       "facts": [], "cards": [{"suit": "diamonds", "face": "A"}], "hidden": 0}],
            "centre": [], "facts": [], "score": [], "log": ["Seat 1 call"]
        });
        now.drawn.table = Some(Table::checked(table).unwrap());
        assert_eq!(
            describe(Some(&before), &now),
            [
                "[table] Texas Hold'em — hand 1, flop",
                "[table]   Your turn: check or bet",
                "[table] ▶ Seat 0 \\x1b[2J (you) · A♦",
                "[table]   · Seat 1 call",
            ]
        );
        now.drawn = Drawn {
            table: None,
            table_error: Some("no table".into()),
        };
        let lines = describe(Some(&before), &now);
        assert_eq!(lines[0], "[room] the table could not be drawn: no table");
        assert!(lines[1].starts_with("[room] holdem_action: {"), "{lines:?}");
    }
}
