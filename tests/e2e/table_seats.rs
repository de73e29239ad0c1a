//! Table seats of ours across processes (our server, iroh on loopback, our hooks on every
//! seat): four autonomous seats — our leader's own and three `join`s — play each of the six
//! four-seat tables to its end with no action scripted; a person plays a Hold'em seat through
//! `session decide` by choice (an illegal decision refused with its sentence, the window kept
//! open); a person's Landlord seat, human or hybrid, whose picked cards the leader refuses,
//! asked again for the same turn; a hybrid seat where a person overrides one move and the agent plays the rest;
//! an LLM-like client filling a seat through the MCP tools (`session_wait`, `session_decide`).

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::Value;

use crate::support::control::check_or_call;
use crate::support::mcp::{McpClient, join_in_human_control, register};
use crate::support::net::{Agent, Net, wait_until};
use crate::support::process::Proc;
use crate::support::reference::reference_contract;

const LIMIT: Duration = Duration::from_secs(240);

/// A table of ours: the leader (seat 0) and three members, each with its process and the
/// session directory that holds its `room.json`.
struct Table {
    seats: Vec<(Agent, Proc, PathBuf)>,
}

fn json_at(path: &Path) -> Option<Value> {
    serde_json::from_str(&std::fs::read_to_string(path).ok()?).ok()
}

/// The table `alias` with `options`, its seats in the control modes given (with their own
/// flags), the leader's first.
fn table(net: &Net, alias: &str, options: &str, seats: [&[&str]; 4]) -> Table {
    let contract = reference_contract(alias);
    let leader = net.agent("leader");
    leader.ok(&["protocol", "register", contract.spec.to_str().unwrap()]);
    let mut args = vec!["--protocol", alias, "--options", options];
    args.extend_from_slice(seats[0]);
    let (hosting, post_id) = leader.host_with(&args);
    let mut joined = Vec::new();
    for (name, flags) in ["west", "north", "east"].into_iter().zip(&seats[1..]) {
        let agent = net.agent(name);
        let process = agent.join(&post_id, flags);
        joined.push((agent, process));
    }
    let mut table = Table { seats: Vec::new() };
    let session = leader.room_session();
    table.seats.push((leader, hosting, session));
    for (agent, process) in joined {
        let session = agent.room_session();
        table.seats.push((agent, process, session));
    }
    table
}

const AUTONOMOUS: &[&str] = &["--control-mode", "autonomous"];

impl Table {
    /// Waits until every seat saw the table end; returns the leader's `room.json`.
    fn ended(&self) -> Value {
        for (_, _, session) in &self.seats {
            let done = wait_until(LIMIT, || {
                let room = json_at(&session.join("room.json"))?;
                (room["completed"] == true).then_some(room)
            });
            assert!(
                done.is_some(),
                "{} never saw the table end: {}",
                session.display(),
                std::fs::read_to_string(session.join("room.json")).unwrap_or_default()
            );
        }
        json_at(&self.seats[0].2.join("room.json")).unwrap()
    }

    fn session(&self, seat: usize) -> &Path {
        &self.seats[seat].2
    }
}

/// The receipts a seat's session recorded for its own actions.
fn receipts(session: &Path) -> Vec<Value> {
    events_of(session, "group_action_receipt")
}

/// The data of a seat's events of one kind.
fn events_of(session: &Path, kind: &str) -> Vec<Value> {
    std::fs::read_to_string(session.join("events.jsonl"))
        .unwrap_or_default()
        .lines()
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
        .filter(|event| event["type"] == kind)
        .map(|event| event["data"].clone())
        .collect()
}

/// Four autonomous seats play `alias` to its end: every seat moved, nothing was refused, and
/// each member recorded its choices step by step.
fn plays_by_itself(alias: &str, options: &str) {
    let net = Net::start();
    let table = table(&net, alias, options, [AUTONOMOUS; 4]);
    let room = table.ended();
    assert_eq!(room["view"]["phase"], "completed", "{room}");
    for seat in 0..4 {
        let session = table.session(seat);
        let taken = receipts(session);
        assert!(
            taken.iter().any(|r| r["status"] == "accepted"),
            "seat {seat} played: {taken:?}"
        );
        // (In a phase without turns — Upgrade's declarations — a seat's action may be
        // overtaken by another seat's stronger one, refused, and chosen again at the next step.)
        assert!(
            taken.iter().all(|r| r["status"] != "rejected"
                || r["reason"]
                    .as_str()
                    .unwrap_or_default()
                    .contains("must outrank")),
            "seat {seat} played only legal actions: {taken:?}"
        );
        assert!(
            events_of(session, "group_seat_hook_failed").is_empty(),
            "seat {seat}'s hooks never failed"
        );
        let last = json_at(&session.join("room.json")).unwrap();
        assert_eq!(
            last["choices"],
            serde_json::json!([]),
            "no move once it ended"
        );
    }
}

#[test]
fn four_autonomous_seats_play_holdem_to_the_end() {
    plays_by_itself("texas-holdem-v1", r#"{"max_hands": 1}"#);
}

#[test]
fn four_autonomous_seats_play_bridge_to_the_end() {
    plays_by_itself("contract-bridge-v1", r#"{"board_number": 1}"#);
}

#[test]
fn four_autonomous_seats_play_landlord_to_the_end() {
    plays_by_itself("four-player-landlord-v1", "{}");
}

#[test]
fn four_autonomous_seats_play_upgrade_to_the_end() {
    plays_by_itself("upgrade-tractor-v1", r#"{"max_hands": 1}"#);
}

#[test]
fn four_autonomous_seats_play_aether_sigil_to_the_end() {
    plays_by_itself("aether-sigil-v1", r#"{"starting_life": 10}"#);
}

#[test]
fn four_autonomous_seats_play_mahjong_to_the_end() {
    plays_by_itself("classical-mahjong-v1", r#"{"max_hands": 1}"#);
}

/// `session decide` for the seat in `session`, as JSON.
fn decide(agent: &Agent, session: &Path, decision: &str) -> Value {
    let output = agent
        .command(&[
            "session",
            "decide",
            decision,
            "--state-dir",
            session.to_str().unwrap(),
            "--json",
        ])
        .output()
        .unwrap();
    serde_json::from_slice(&output.stdout).unwrap_or_else(|_| {
        panic!(
            "decide answered JSON: {}{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        )
    })
}

/// A person's seat that waits for each move as long as a test needs.
const HUMAN: &[&str] = &["--control-mode", "human", "--think-seconds", "120"];

/// The seat's next open window, or `None` once its table ended.
fn next_window(session: &Path) -> Option<Value> {
    wait_until(LIMIT, || {
        if let Some(window) = open_window(session) {
            return Some(Some(window));
        }
        let room = json_at(&session.join("room.json"))?;
        (room["completed"] == true).then_some(None)
    })
    .unwrap_or_else(|| {
        panic!(
            "no window opened and the table did not end: {}\n{:?}",
            std::fs::read_to_string(session.join("room.json")).unwrap_or_default(),
            receipts(session)
        )
    })
}

/// The seat's open window (its `decision/state.json`), once one is open.
fn open_window(session: &Path) -> Option<Value> {
    let window = json_at(&session.join("seat/decision/state.json"))?;
    (window["open"] == true).then_some(window)
}

#[test]
fn a_person_plays_a_holdem_seat_by_choice_and_an_illegal_decision_is_refused() {
    let net = Net::start();
    let table = table(
        &net,
        "texas-holdem-v1",
        r#"{"max_hands": 1}"#,
        [AUTONOMOUS, HUMAN, AUTONOMOUS, AUTONOMOUS],
    );
    let (person, session) = (&table.seats[1].0, table.session(1));
    let mut decided = 0;
    let mut refused_once = false;
    loop {
        let Some(window) = next_window(session) else {
            break;
        };
        let options = window["choices"]["options"].as_array().unwrap().len();
        let room = json_at(&session.join("room.json")).unwrap();
        if room["seq"] == window["match_value"] {
            assert_eq!(
                room["choices"], window["choices"]["options"],
                "the window offers the choices room.json records"
            );
        }
        if !refused_once {
            refused_once = true;
            let answer = decide(person, session, &options.to_string());
            assert_eq!(answer["status"], "refused", "{answer}");
            assert_eq!(
                answer["reason"],
                format!("the choice must be a number from 0 to {}", options - 1)
            );
            let still = open_window(session).expect("the window stays open");
            assert_eq!(still["seq"], window["seq"]);
        }
        let answer = decide(
            person,
            session,
            &check_or_call(&window["choices"]["options"]).to_string(),
        );
        // (A window whose step moved on before the answer came is withdrawn: no move then.)
        if answer["status"] == "closed" {
            continue;
        }
        assert_eq!(answer["status"], "played", "{answer}");
        decided += 1;
        wait_until(LIMIT, || {
            (open_window(session).is_none_or(|w| w["seq"] != window["seq"])).then_some(())
        })
        .expect("the window closed once its decision was played");
    }
    assert!(decided >= 1, "the person moved at least once");
    table.ended();
    // Each decision became one accepted action, beside the seat's seed for each fair deal
    // it checked (the table's last step may reach the seat before the receipt of the action
    // that ended it).
    let taken = receipts(session);
    let accepted = taken.iter().filter(|r| r["status"] == "accepted").count();
    let seeds = json_at(&session.join("room.json")).unwrap()["deal_verdicts"]
        .as_array()
        .map_or(0, Vec::len);
    assert!(
        accepted == decided + seeds || accepted + 1 == decided + seeds,
        "{decided} decisions, {taken:?}: {:?}",
        events_of(session, "decision_window_closed")
    );
    assert!(taken.iter().all(|r| r["status"] == "accepted"), "{taken:?}");
}

/// Two items of a pick that make no Landlord combination: cards of two different ranks (by
/// their labels, rank then suit symbol), jokers left out.
fn no_combination(pick: &Value) -> Value {
    let cards: Vec<(&str, &Value)> = pick["from"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|item| {
            let label = item["label"].as_str()?;
            let rank = label.strip_suffix(['♠', '♥', '♦', '♣'])?;
            Some((rank, &item["value"]))
        })
        .collect();
    let (rank, first) = cards[0];
    let (_, second) = cards
        .iter()
        .find(|(other, _)| *other != rank)
        .expect("a hand of two ranks at least");
    serde_json::json!([first, second])
}

#[test]
fn a_move_the_leader_refuses_is_asked_again_for_the_same_turn_and_the_game_goes_on() {
    refused_and_asked_again(HUMAN);
}

#[test]
fn a_hybrid_seat_whose_override_the_leader_refuses_is_asked_again() {
    refused_and_asked_again(&["--control-mode", "hybrid", "--think-seconds", "120"]);
}

/// A person at a Landlord seat in `control` picks cards that make no combination: the
/// member-side check passes them, the leader refuses them (a rejected receipt with its
/// reason), a new window asks a person (never the agent) for the same turn with the same
/// choices, a legal answer is taken and the table plays to its end.
fn refused_and_asked_again(control: &[&str]) {
    let net = Net::start();
    let table = table(
        &net,
        "four-player-landlord-v1",
        "{}",
        [AUTONOMOUS, control, AUTONOMOUS, AUTONOMOUS],
    );
    let (person, session) = (&table.seats[1].0, table.session(1));
    let mut asked_again = false;
    loop {
        let Some(window) = next_window(session) else {
            break;
        };
        let options = window["choices"]["options"].as_array().unwrap();
        let picking = options
            .iter()
            .position(|c| c["label"] == "Play cards you pick");
        if let (false, Some(index)) = (asked_again, picking) {
            // Cards the seat holds, of a count the pick allows: the member-side check passes,
            // the leader refuses them.
            let pick = no_combination(&options[index]["pick"]);
            // The whole decision as JSON, or (hybrid) as a person types it at a terminal:
            // the choice's number, then the values picked.
            let decision = if control == HUMAN {
                serde_json::json!({"choice": {"index": index, "pick": pick}}).to_string()
            } else {
                let values: Vec<&str> = pick
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|v| v.as_str().unwrap())
                    .collect();
                format!("{index} {}", values.join(" "))
            };
            let answer = decide(person, session, &decision);
            if answer["status"] == "closed" {
                continue;
            }
            assert_eq!(answer["status"], "played", "{answer}");
            let again = wait_until(LIMIT, || {
                open_window(session).filter(|w| w["seq"] != window["seq"])
            })
            .expect("a new window after the leader refused the move");
            assert_eq!(
                again["match_value"], window["match_value"],
                "the new window asks for the same turn"
            );
            assert_eq!(again["choices"], window["choices"], "with the same choices");
            assert_eq!(
                again["mode"], "human",
                "a person's: the agent's move is not played"
            );
            asked_again = true;
            continue;
        }
        // A legal move: a pass in the bidding or the trick, else the smallest play.
        let answer = decide(person, session, "0");
        if answer["status"] == "closed" {
            continue;
        }
        assert_eq!(answer["status"], "played", "{answer}");
        wait_until(LIMIT, || {
            (open_window(session).is_none_or(|w| w["seq"] != window["seq"])).then_some(())
        })
        .expect("the window closed once its decision was played");
    }
    assert!(
        asked_again,
        "the person's picked cards were refused and asked again"
    );
    let room = table.ended();
    assert_eq!(room["view"]["phase"], "completed", "{room}");
    let taken = receipts(session);
    let rejected: Vec<&Value> = taken.iter().filter(|r| r["status"] == "rejected").collect();
    assert_eq!(rejected.len(), 1, "{taken:?}");
    assert!(
        rejected[0]["reason"]
            .as_str()
            .unwrap()
            .contains("not a combination"),
        "the receipt names the leader's reason: {rejected:?}"
    );
    let at = taken
        .iter()
        .position(|r| r["status"] == "rejected")
        .unwrap();
    assert!(
        taken[at + 1..].iter().any(|r| r["status"] == "accepted"),
        "the seat's next answer was taken: {taken:?}"
    );
}

#[test]
fn a_person_overrides_one_hybrid_move_and_the_agent_plays_the_rest() {
    let net = Net::start();
    let hybrid: &[&str] = &["--control-mode", "hybrid", "--think-seconds", "5"];
    let table = table(
        &net,
        "texas-holdem-v1",
        r#"{"max_hands": 3}"#,
        [AUTONOMOUS, hybrid, AUTONOMOUS, AUTONOMOUS],
    );
    let (person, session) = (&table.seats[1].0, table.session(1));
    let window = wait_until(LIMIT, || open_window(session)).expect("a hybrid window opened");
    assert_eq!(window["mode"], "hybrid");
    let intended = &window["intended"];
    assert!(!intended.is_null(), "the window shows the agent's move");
    let other = if intended.as_u64() == Some(0) { 1 } else { 0 };
    let answer = decide(person, session, &other.to_string());
    assert_eq!(answer["status"], "played", "{answer}");
    table.ended();
    let closed = events_of(session, "decision_window_closed");
    assert_eq!(
        closed.iter().filter(|c| c["outcome"] == "decided").count(),
        1,
        "{closed:?}"
    );
    assert!(
        closed.iter().any(|c| c["outcome"] == "agent_move"),
        "the agent played the other windows: {closed:?}"
    );
    assert!(
        receipts(session).iter().all(|r| r["status"] != "rejected"),
        "{:?}",
        receipts(session)
    );
}

#[test]
fn an_mcp_client_fills_a_holdem_seat_through_session_wait_and_session_decide() {
    let net = Net::start();
    let contract = reference_contract("texas-holdem-v1");
    let leader = net.agent("leader");
    leader.ok(&["protocol", "register", contract.spec.to_str().unwrap()]);
    let (_hosting, post_id) = leader.host_with(&[
        "--protocol",
        "texas-holdem-v1",
        "--options",
        r#"{"max_hands": 1}"#,
        "--control-mode",
        "autonomous",
    ]);
    let mut mcp = McpClient::start(&net.work.path().join("llm"), net.url());
    register(&mut mcp, "llm");
    let state_dir = join_in_human_control(&mut mcp, &post_id);
    let _others: Vec<(Agent, Proc)> = ["north", "east"]
        .into_iter()
        .map(|name| {
            let agent = net.agent(name);
            let process = agent.join(&post_id, AUTONOMOUS);
            (agent, process)
        })
        .collect();
    let (mut answered, mut last) = (0, 0);
    loop {
        let waited = mcp
            .call(
                "session_wait",
                serde_json::json!({"state_dir": state_dir, "timeout_seconds": LIMIT.as_secs(), "after_window": last}),
            )
            .ok();
        match waited["reason"].as_str().unwrap() {
            "ended" => break,
            "decision" => {}
            other => panic!("session_wait: {other}: {waited}"),
        }
        let window = &waited["view"]["window"];
        assert_eq!(window["choices"]["kind"], "table", "{window}");
        assert_eq!(window["match_key"], "step", "{window}");
        let seq = window["seq"].as_u64().unwrap();
        let decided = mcp
            .call(
                "session_decide",
                serde_json::json!({"state_dir": state_dir, "decision": check_or_call(&window["choices"]["options"]).to_string(), "window": seq}),
            )
            .ok();
        assert_eq!(decided["status"], "played", "{decided}");
        answered += 1;
        last = seq;
    }
    assert!(answered >= 1, "the client moved at least once");
    let room = json_at(&Path::new(state_dir.as_str().unwrap()).join("room.json")).unwrap();
    assert_eq!(room["completed"], true, "{room}");
}

#[test]
fn a_person_who_lets_a_window_run_out_leaves_the_table_and_the_others_play_on() {
    let net = Net::start();
    let human: &[&str] = &["--control-mode", "human", "--think-seconds", "1"];
    let table = table(
        &net,
        "texas-holdem-v1",
        r#"{"max_hands": 1}"#,
        [AUTONOMOUS, human, AUTONOMOUS, AUTONOMOUS],
    );
    let session = table.session(1);
    let record = wait_until(LIMIT, || {
        let record = json_at(&session.join("session.json"))?;
        (record["status"] == "aborted").then_some(record)
    })
    .expect("the seat stopped when its window ran out");
    assert!(
        record["end_reason"]
            .as_str()
            .unwrap()
            .starts_with("decision_timeout"),
        "{record}"
    );
    let closed = events_of(session, "decision_window_closed");
    assert_eq!(closed[0]["outcome"], "timed_out", "{closed:?}");
    let leader = &table.seats[0].2;
    let ended = wait_until(LIMIT, || {
        let room = json_at(&leader.join("room.json"))?;
        (room["completed"] == true).then_some(room)
    });
    assert!(
        ended.is_some(),
        "the other seats played the table to its end"
    );
}
