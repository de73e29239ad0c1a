//! A person plays every well-known game against our autonomous hooks, to a completed game
//! whose outcome both sides (and the server) record: through `aigenora session decide` for
//! each of the ten contracts, and at the terminal (a pseudo-terminal) for Connect Four, whose
//! board the prompt draws, and for Human Chat. The specs are the installed reference
//! package's, registered on our server by our agent. The browser is in `human_browser.rs`.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use aigenora::records::{Choices, Window};
use rexpect::session::spawn_command;
use serde_json::Value;

use crate::support::control::{Answer, answer_windows};
use crate::support::net::{Agent, Net, SESSION_LIMIT, SessionFiles, assert_server_session};
use crate::support::process::Proc;
use crate::support::reference::reference_contract;

/// A server, our autonomous agent and a person's agent, with the contract `alias` (the
/// reference package's spec) registered by our agent.
pub struct Table {
    _net: Net,
    pub agent: Agent,
    pub person: Agent,
    alias: &'static str,
}

impl Table {
    pub fn new(alias: &'static str) -> Table {
        let net = Net::start();
        let agent = net.agent("bot");
        let person = net.agent("person");
        let spec = reference_contract(alias).spec;
        agent.ok(&["protocol", "register", spec.to_str().unwrap()]);
        Table {
            _net: net,
            agent,
            person,
            alias,
        }
    }

    /// `who` hosts the contract with `options` and `extra` flags; returns its process and
    /// the post id.
    pub fn host(&self, who: &Agent, options: &str, extra: &[&str]) -> (Proc, String) {
        let mut args = vec!["--protocol", self.alias, "--options", options];
        args.extend_from_slice(extra);
        who.host_with(&args)
    }

    /// Both sides ended `closed` and completed, with the same winner the server recorded;
    /// returns the person's side, the agent's side and that winner.
    pub fn ended(&self, person_role: &str) -> (SessionFiles, SessionFiles, Option<String>) {
        let agent_role = if person_role == "host" {
            "guest"
        } else {
            "host"
        };
        let person = self.person.session(person_role);
        let agent = self.agent.session(agent_role);
        for side in [&person, &agent] {
            assert_eq!(side.status(), "closed", "{}", side.info);
            assert_eq!(side.field("completed"), true, "{}", side.info);
            assert_eq!(side.field("protocol_source"), "well-known", "{}", side.info);
        }
        let winner = person.field("winner").as_str().map(str::to_string);
        assert_eq!(agent.field("winner"), person.field("winner"));
        let server = self
            .agent
            .server_session(person.field("session_id").as_str().unwrap());
        assert_server_session(&server, "closed", winner.as_deref());
        (person, agent, winner)
    }
}

/// The person plays `person_role` in a human-controlled session, answering every window
/// with `session decide` as `answer` says; our agent plays the other side autonomously.
/// Returns the person's side and the winner.
fn person_decides(
    alias: &'static str,
    options: &str,
    person_role: &'static str,
    answer: Box<Answer>,
) -> (SessionFiles, Option<String>) {
    let table = Table::new(alias);
    let human = ["--control-mode", "human", "--no-prompt"];
    let autonomous = ["--control-mode", "autonomous"];
    let stop = Arc::new(AtomicBool::new(false));
    let roles: &'static [&'static str] = if person_role == "host" {
        &["host"]
    } else {
        &["guest"]
    };
    let decider = answer_windows(
        table.person.dir.join("sessions"),
        roles,
        stop.clone(),
        answer,
    );
    let (host, guest) = if person_role == "host" {
        let (host, post_id) = table.host(&table.person, options, &human);
        (host, table.agent.join(&post_id, &autonomous))
    } else {
        let (host, post_id) = table.host(&table.agent, options, &autonomous);
        (host, table.person.join(&post_id, &human))
    };
    let host = host.finish(SESSION_LIMIT);
    let guest = guest.finish(SESSION_LIMIT);
    stop.store(true, Ordering::Relaxed);
    let answers = decider.join().unwrap();
    assert!(host.status.success(), "{alias} host: {host:?}");
    assert!(guest.status.success(), "{alias} guest: {guest:?}");
    let (person, _, winner) = table.ended(person_role);
    assert!(!answers.is_empty(), "{alias}: the person was never asked");
    assert!(
        answers.iter().all(|a| a["status"] == "played"),
        "{alias}: {answers:?}"
    );
    let closed = person.events_of("decision_window_closed");
    assert_eq!(closed.len(), answers.len(), "{alias}: {closed:?}");
    assert!(
        closed
            .iter()
            .all(|c| c["outcome"] == "decided" && c["origin"] == "cli"),
        "{alias}: every move was the person's: {closed:?}"
    );
    (person, winner)
}

/// The listed value at `index` (wrapping), as `session decide` takes it.
fn listed(window: &Window, index: usize) -> String {
    let Choices::OneOf { values } = &window.choices else {
        panic!("a list of moves: {window:?}")
    };
    let value = &values[index % values.len()];
    value
        .as_str()
        .map_or_else(|| value.to_string(), str::to_string)
}

/// The round a window is for, as a number.
fn round_of(window: &Window) -> usize {
    window.match_value.as_u64().unwrap_or(0) as usize
}

/// A number in the snapshot's `legal` range, `share` of the way from its minimum.
fn in_range(snapshot: &Value, share: f64) -> String {
    let min = snapshot["legal"]["min"].as_i64().expect("legal.min");
    let max = snapshot["legal"]["max"].as_i64().expect("legal.max");
    (min + ((max - min) as f64 * share) as i64).to_string()
}

const WINNER: &[Option<&str>] = &[Some("host"), Some("guest")];
const WINNER_OR_DRAW: &[Option<&str>] = &[Some("host"), Some("guest"), Some("draw")];

#[test]
fn a_person_plays_rock_paper_scissors_as_the_guest() {
    let (_, winner) = person_decides(
        "rps-v1",
        r#"{"best_of": 3}"#,
        "guest",
        Box::new(|_, window, _| listed(window, round_of(window))),
    );
    assert!(WINNER_OR_DRAW.contains(&winner.as_deref()), "{winner:?}");
}

#[test]
fn a_person_plays_coin_flip_as_the_host() {
    let (_, winner) = person_decides(
        "coin-flip-v1",
        r#"{"best_of": 3}"#,
        "host",
        Box::new(|_, window, _| listed(window, 0)),
    );
    assert!(WINNER.contains(&winner.as_deref()), "{winner:?}");
}

#[test]
fn a_person_plays_guess_number_as_the_guest_by_bisecting() {
    let (person, winner) = person_decides(
        "guess-number-v1",
        r#"{"max_attempts": 7}"#,
        "guest",
        Box::new(|_, _, snapshot| {
            let bound = |name: &str, default: i64| snapshot[name].as_i64().unwrap_or(default);
            ((bound("low", 1) + bound("high", 100)) / 2).to_string()
        }),
    );
    assert_eq!(winner.as_deref(), Some("guest"), "{}", person.info);
}

#[test]
fn a_person_plays_weak_wins_all_as_the_guest() {
    let (_, winner) = person_decides(
        "weak-wins-all",
        r#"{"total_points": 50, "total_rounds": 4}"#,
        "guest",
        Box::new(|_, _, snapshot| in_range(snapshot, 0.25)),
    );
    assert!(WINNER_OR_DRAW.contains(&winner.as_deref()), "{winner:?}");
}

#[test]
fn a_person_plays_hero_duel_as_the_host() {
    let (_, winner) = person_decides(
        "hero-duel-v1",
        r#"{"max_rounds": 6}"#,
        "host",
        Box::new(|_, window, _| listed(window, round_of(window))),
    );
    assert!(WINNER_OR_DRAW.contains(&winner.as_deref()), "{winner:?}");
}

#[test]
fn a_person_plays_connect_four_as_the_guest() {
    let (person, winner) = person_decides(
        "connect4-v1",
        r#"{"cols": 5, "rows": 4, "think_ms": 20}"#,
        "guest",
        Box::new(|_, window, _| listed(window, 0)),
    );
    assert_eq!(winner, person.board_verdict());
    assert!(
        !person.events_of("decision_window_closed").is_empty(),
        "{}",
        person.info
    );
}

#[test]
fn a_person_plays_gomoku_as_the_guest() {
    let (person, winner) = person_decides(
        "gomoku-v1",
        r#"{"board_size": 6, "think_ms": 20}"#,
        "guest",
        Box::new(|_, window, _| listed(window, 0)),
    );
    assert_eq!(winner, person.board_verdict());
}

#[test]
fn a_person_plays_reversi_as_the_guest() {
    let (person, winner) = person_decides(
        "reversi-v1",
        r#"{"board_size": 6, "think_ms": 20}"#,
        "guest",
        Box::new(|_, _, snapshot| {
            let legal = snapshot["legal_cells"].as_array().expect("legal_cells");
            legal[0]["move"].as_str().unwrap().to_string()
        }),
    );
    assert_eq!(winner, person.board_verdict());
}

#[test]
fn a_person_answers_a_trusted_agent_task_as_the_host() {
    let (person, winner) = person_decides(
        "trusted-agent-task-v1",
        r#"{"task_goal": "say hello"}"#,
        "host",
        Box::new(|_, window, _| {
            assert_eq!(window.value_field, "summary");
            "hello from a person".to_string()
        }),
    );
    assert_eq!(winner, None);
    let status = person
        .events_of("protocol_message")
        .into_iter()
        .find(|m| m["direction"] == "sent" && m["msg"]["action"] == "task_status")
        .map(|m| m["msg"].clone())
        .expect("a task_status");
    assert_eq!(status["state"], "completed", "{status}");
    assert_eq!(
        status["result_manifest"]["summary"], "hello from a person",
        "{status}"
    );
}

/// Human Chat has no decision windows: the person types lines at a terminal.
#[test]
fn a_person_chats_at_a_terminal_with_our_agent() {
    let table = Table::new("human-chat-v1");
    let (mut host, post_id) = table.host(&table.agent, "{}", &["--control-mode", "autonomous"]);
    let join = table
        .person
        .command(&["join", &post_id, "--control-mode", "human"]);
    let mut pty = spawn_command(join, Some(SESSION_LIMIT.as_millis() as u64)).unwrap();
    host.wait_for_line("peer_joined", SESSION_LIMIT);
    pty.send_line("hello from a person ✓").unwrap();
    host.wait_for_line("[guest] hello from a person ✓", SESSION_LIMIT);
    host.say("hi from the agent");
    pty.exp_string("[host] hi from the agent").unwrap();
    pty.send_line("/quit").unwrap();
    pty.exp_eof().unwrap();
    host.succeed(SESSION_LIMIT);
    let (_, _, winner) = table.ended("guest");
    assert_eq!(winner, None);
}

/// Connect Four at the terminal: each window shows the board and the legal columns; the
/// person types a column (the leftmost legal one) until the game ends.
#[test]
fn a_person_plays_connect_four_at_a_terminal() {
    let table = Table::new("connect4-v1");
    let (host, post_id) = table.host(
        &table.agent,
        r#"{"cols": 4, "rows": 4, "think_ms": 20}"#,
        &["--control-mode", "autonomous"],
    );
    let join = table
        .person
        .command(&["join", &post_id, "--control-mode", "human"]);
    let mut pty = spawn_command(join, Some(SESSION_LIMIT.as_millis() as u64)).unwrap();
    let mut moves = 0;
    loop {
        let (_, found) = pty.exp_regex(r"== Your move|done").unwrap();
        if found == "done" {
            break;
        }
        pty.exp_string("  0 1 2 3").unwrap();
        let (_, legal) = pty.exp_regex(r"Legal moves: 1\) \d+").unwrap();
        pty.exp_string("col > ").unwrap();
        let column = legal.rsplit(' ').next().unwrap().to_string();
        pty.send_line(&column).unwrap();
        pty.exp_string(&format!("-> {column}")).unwrap();
        moves += 1;
    }
    pty.exp_eof().unwrap();
    host.succeed(SESSION_LIMIT);
    let (person, _, winner) = table.ended("guest");
    assert_eq!(winner, person.board_verdict());
    let closed = person.events_of("decision_window_closed");
    assert_eq!(closed.len(), moves, "{closed:?}");
    assert!(
        closed.iter().all(|c| c["origin"] == "terminal"),
        "{closed:?}"
    );
}
