//! Interop: our seats play to the end at a reference leader's four-seat tables. For each of
//! the six tables the reference leads on its own hooks and our three members fill the other
//! seats in `autonomous` control, playing by themselves (no action of theirs scripted); the
//! reference's own seat is played by our seat agent from its verified view. The table ends
//! with the same outcome and score in every seat's view, every action our seats sent was
//! accepted (but an Upgrade declaration overtaken by a stronger one, which has no turn to
//! wait for), and each of our seats drew the reference's views as its table. At a Hold'em
//! table the three seats of ours are a mix: one autonomous, one a person answering its
//! windows with `session decide` by choice number, one an MCP client (`session_wait`,
//! `session_decide`).

use std::path::Path;

use serde_json::Value;

use crate::room_seats::{LIMIT, Seat, json_at, our_follower_in, reference_leader};
use crate::seat_agent::SeatAgent;
use crate::support::control::{check_or_call, decide_in, window_of};
use crate::support::mcp::{McpClient, answer_through_mcp, join_in_human_control, register};
use crate::support::net::{Net, SessionFiles, wait_until};

const AUTONOMOUS: [&str; 2] = ["--control-mode", "autonomous"];

/// The reference leads `alias` with `options` and our three autonomous members play the rest
/// of the table by themselves, to its end, its final score the view's field `score`.
fn our_autonomous_seats_play_to_the_end(alias: &str, options: &str, score: &str) {
    let net = Net::start();
    let (leader, post_id) = reference_leader(&net, alias, options);
    let ours: Vec<Seat> = ["west", "north", "east"]
        .into_iter()
        .map(|name| our_follower_in(&net, name, &post_id, &AUTONOMOUS))
        .collect();
    SeatAgent::start(alias, options).play(&leader);
    let sessions: Vec<&Path> = ours.iter().map(Seat::dir).collect();
    let outcome = ended_alike(&leader, &sessions, score);
    for session in sessions {
        played_only_accepted_actions(session, &outcome);
    }
}

/// Waits until every seat saw the table end (the reference's leader and our seats' sessions
/// `ours`); checks that they all saw the same outcome and final score (the views' field
/// `score`), and returns the outcome.
fn ended_alike(leader: &Seat, ours: &[&Path], score: &str) -> Value {
    let (outcome, shown) = ending(&leader.view(), "group_view", score);
    assert!(
        !shown.is_null(),
        "the reference's last view has its {score}"
    );
    for session in ours {
        let seen = ending(&session.join("room.json"), "view", score);
        assert_eq!(
            seen,
            (outcome.clone(), shown.clone()),
            "{}",
            session.display()
        );
    }
    outcome
}

/// The outcome and final score (the view's field `score`) in the room file at `path` (its
/// view under `view`), once the table ended there.
fn ending(path: &Path, view: &str, score: &str) -> (Value, Value) {
    let room = wait_until(LIMIT, || {
        let room = json_at(path)?;
        (room["completed"] == true).then_some(room)
    })
    .unwrap_or_else(|| panic!("{} never showed the table's end", path.display()));
    assert_eq!(room[view]["phase"], "completed", "{room}");
    (room["outcome"].clone(), room[view][score].clone())
}

/// Our seat (its session) ended the table with `outcome`, every action it sent accepted, its
/// hooks never failed, its table drawn from the reference's views, and no frame refused.
fn played_only_accepted_actions(session: &Path, outcome: &Value) {
    let events = SessionFiles::read(session);
    let receipts = events.events_of("group_action_receipt");
    // On failure, what the seat went through, in order (a rare failure left no receipts at
    // all: this says what happened instead).
    let story = || {
        let names: Vec<&str> = events.events.iter().map(|e| e.name.as_str()).collect();
        names.join(" ")
    };
    assert!(
        receipts.iter().any(|r| r["status"] == "accepted"),
        "{} played: {receipts:?}; its events: {}",
        session.display(),
        story()
    );
    // (Upgrade's declarations have no turns: a declaration overtaken by another seat's
    // stronger one is refused, and the seat declares again at the new step.)
    assert!(
        receipts
            .iter()
            .all(|r| r["status"] == "accepted" || overtaken(r)),
        "{} played only legal actions: {receipts:?}",
        session.display()
    );
    assert!(events.events_of("group_seat_hook_failed").is_empty());
    let log = std::fs::read_to_string(session.join("events.jsonl")).unwrap();
    assert!(!log.contains("frame_rejected"), "{log}");
    let room = json_at(&session.join("room.json")).unwrap();
    assert_eq!(&room["outcome"], outcome);
    assert!(room["table"].is_object(), "our seat drew the table: {room}");
    assert!(room["table_error"].is_null(), "{room}");
}

/// Whether a refused receipt's reason is the reference's for an Upgrade declaration that
/// another seat's stronger one overtook on its way.
fn overtaken(receipt: &Value) -> bool {
    receipt["reason"] == "the declaration must be stronger than the current one"
}

/// Answers each window the person's seat opens with `session decide` by the number of its
/// Check or Call choice, until the table ends; the windows decided.
fn decide_every_window(seat: &Seat) -> usize {
    let session = seat.dir();
    let mut decided = 0;
    loop {
        let next = wait_until(LIMIT, || {
            if let Some(window) = window_of(session) {
                return Some(Some(window));
            }
            let room = json_at(&session.join("room.json"))?;
            (room["completed"] == true).then_some(None)
        })
        .expect("a window opened or the table ended");
        let Some(window) = next else {
            return decided;
        };
        let choices = serde_json::to_value(&window.choices).unwrap();
        let choice = check_or_call(&choices["options"]).to_string();
        let (_, answer) = decide_in(session, &choice);
        // (A window whose step moved on before the answer came is withdrawn: no move then.)
        if answer["status"] == "closed" {
            continue;
        }
        assert_eq!(answer["status"], "played", "{answer}");
        decided += 1;
        wait_until(LIMIT, || {
            (window_of(session).is_none_or(|w| w.seq != window.seq)).then_some(())
        })
        .expect("the window closed once its decision was played");
    }
}

#[test]
fn our_autonomous_seats_play_holdem_at_a_reference_leaders_table() {
    our_autonomous_seats_play_to_the_end("texas-holdem-v1", r#"{"max_hands": 1}"#, "players");
}

#[test]
fn our_autonomous_seats_play_bridge_at_a_reference_leaders_table() {
    our_autonomous_seats_play_to_the_end("contract-bridge-v1", r#"{"board_number": 1}"#, "scores");
}

#[test]
fn our_autonomous_seats_play_landlord_at_a_reference_leaders_table() {
    our_autonomous_seats_play_to_the_end("four-player-landlord-v1", "{}", "scores");
}

#[test]
fn our_autonomous_seats_play_upgrade_at_a_reference_leaders_table() {
    our_autonomous_seats_play_to_the_end("upgrade-tractor-v1", r#"{"max_hands": 1}"#, "levels");
}

#[test]
fn our_autonomous_seats_play_aether_sigil_at_a_reference_leaders_table() {
    our_autonomous_seats_play_to_the_end("aether-sigil-v1", r#"{"starting_life": 10}"#, "players");
}

#[test]
fn our_autonomous_seats_play_mahjong_at_a_reference_leaders_table() {
    our_autonomous_seats_play_to_the_end("classical-mahjong-v1", r#"{"max_hands": 1}"#, "scores");
}

/// An autonomous seat, a person's seat and an MCP client's seat, all ours, play a hand of
/// Hold'em to its end at a reference leader's table.
#[test]
fn an_autonomous_a_person_and_an_mcp_seat_of_ours_play_holdem_at_a_reference_leaders_table() {
    let (alias, options) = ("texas-holdem-v1", r#"{"max_hands": 1}"#);
    let net = Net::start();
    let (leader, post_id) = reference_leader(&net, alias, options);
    let agent = our_follower_in(&net, "agent", &post_id, &AUTONOMOUS);
    let human = ["--control-mode", "human", "--think-seconds", "120"];
    let person = our_follower_in(&net, "person", &post_id, &human);
    let mut mcp = McpClient::start(&net.work.path().join("llm"), net.url());
    register(&mut mcp, "llm");
    let state_dir = join_in_human_control(&mut mcp, &post_id);
    let (decided, answered) = std::thread::scope(|scope| {
        let person = scope.spawn(|| decide_every_window(&person));
        let llm = scope.spawn(|| {
            answer_through_mcp(&mut mcp, &state_dir, |window| {
                assert_eq!(window["choices"]["kind"], "table", "{window}");
                check_or_call(&window["choices"]["options"]).to_string()
            })
        });
        SeatAgent::start(alias, options).play(&leader);
        (person.join().unwrap(), llm.join().unwrap())
    });
    assert!(decided >= 1, "the person moved at least once");
    let played = answered.iter().filter(|a| a["status"] == "played").count();
    assert!(
        played >= 1,
        "the MCP client moved at least once: {answered:?}"
    );
    let sessions = [
        agent.dir(),
        person.dir(),
        Path::new(state_dir.as_str().unwrap()),
    ];
    let outcome = ended_alike(&leader, &sessions, "players");
    for session in sessions {
        played_only_accepted_actions(session, &outcome);
    }
}
