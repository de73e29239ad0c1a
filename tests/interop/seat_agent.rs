//! The reference has no agent for its table seats: a test drives a reference seat with our
//! hooks' `proto_group_autoplay` (tests/interop/seat_agent.py, one interpreter per seat)
//! computed from the view the reference verified, sent with the reference's `session action`.

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};

use serde_json::{Value, json};

use crate::room_seats::{LIMIT, Seat, json_at};
use crate::support::net::wait_until;
use crate::support::reference::reference_python;

/// Our hooks for one table, answering "what would our agent play from this view".
pub struct SeatAgent {
    child: Child,
    questions: ChildStdin,
    answers: BufReader<ChildStdout>,
}

impl SeatAgent {
    /// Our agent for the well-known table `alias` with the table's `options`.
    pub fn start(alias: &str, options: &str) -> SeatAgent {
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/interop/seat_agent.py");
        let mut child = Command::new(reference_python())
            .arg(script)
            .args([alias, options])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("the seat agent starts");
        let questions = child.stdin.take().unwrap();
        let answers = BufReader::new(child.stdout.take().unwrap());
        SeatAgent {
            child,
            questions,
            answers,
        }
    }

    /// Our agent's action for the seat `member` from its `view`, if the seat has one to take.
    fn autoplay(&mut self, view: &Value, member: &Value) -> Option<Value> {
        let question = json!({"view": view, "member": member});
        writeln!(self.questions, "{question}").expect("the seat agent reads");
        let mut line = String::new();
        self.answers
            .read_line(&mut line)
            .expect("the seat agent answers");
        let answer: Value = serde_json::from_str(&line)
            .unwrap_or_else(|_| panic!("the seat agent answered JSON: {line:?}"));
        Some(answer["action"].clone()).filter(|action| !action.is_null())
    }

    /// Plays the reference's `seat` until its table ends: whenever our agent has an action
    /// for the seat's current view it is sent, and the leader accepts it unless another
    /// seat's action overtook it on its way.
    pub fn play(&mut self, seat: &Seat) {
        loop {
            let (room, (key, view)) =
                wait_until(LIMIT, || Some((json_at(&seat.view())?, seat.seen()?)))
                    .expect("the reference seat holds a view");
            if room["completed"] == true {
                return;
            }
            let member = json!({"member_id": key, "public_key": key, "seat": view["you"]["seat"], "status": "active"});
            if let Some(action) = self.autoplay(&view, &member) {
                let sent = seat.events("group_action_receipt").len();
                seat.act(&action.to_string());
                let receipt = wait_until(LIMIT, || {
                    seat.events("group_action_receipt").into_iter().nth(sent)
                })
                .unwrap_or_else(|| panic!("no receipt for the reference seat's {action}"));
                // (Another seat's action may reach the leader first and make this one stale:
                // Upgrade's declarations have no turns. It is refused; the next view decides.)
                let overtaken = || seat.seen().is_some_and(|(_, now)| now != view);
                assert!(
                    receipt["status"] == "accepted" || overtaken(),
                    "the reference seat's {action} from {view}: {receipt}"
                );
            }
            let moved = wait_until(LIMIT, || {
                let room = json_at(&seat.view())?;
                let moved = room["completed"] == true || seat.seen()?.1 != view;
                moved.then_some(())
            });
            assert!(
                moved.is_some(),
                "the table never moved past {view} (the reference seat's own move: none)"
            );
        }
    }
}

impl Drop for SeatAgent {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
