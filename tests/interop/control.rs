//! The reference's own hooks that call the human and hybrid helpers (its Rock-Paper-Scissors
//! and Guess Number) under our engine in all three control modes, human windows answered
//! with `session decide`, and a hybrid window of its RPS overridden the same way; and a
//! reference guest in hybrid control playing our host, whose moves a person makes.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use aigenora::records::Window;
use serde_json::Value;

use crate::support::cli::aigenora;
use crate::support::control::{answer_windows, decide_in, newest_dir, window_of};
use crate::support::net::{SESSION_LIMIT, SessionFiles, wait_until};
use crate::support::process::Proc;
use crate::support::reference::{
    REFERENCE_GUESS_NUMBER, REFERENCE_RPS, install_reference_protocol, library_dir,
    reference_package_dir,
};

/// What a person answers: RPS hosts rock and guests paper; Guess Number's host picks 37 as
/// its secret and its guest bisects the range its snapshot shows.
fn answer(role: &str, window: &Window, snapshot: &Value) -> String {
    match (window.match_key.as_str(), role) {
        ("round", "host") => "rock".into(),
        ("round", _) => "paper".into(),
        ("setup", _) => "37".into(),
        _ => {
            let bound = |name: &str, default: i64| snapshot[name].as_i64().unwrap_or(default);
            ((bound("lo", 1) + bound("hi", 100)) / 2).to_string()
        }
    }
}

fn self_play(protocol_id: &str, mode: &str) {
    let dir = library_dir(&reference_package_dir(), protocol_id);
    let base = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    let decider = answer_windows(
        base.path().to_path_buf(),
        &["host", "guest"],
        stop.clone(),
        Box::new(answer),
    );
    let mut command = aigenora();
    command
        .args(["--data-dir"])
        .arg(data.path())
        .args(["protocol", "test"])
        .arg(&dir);
    command
        .args(["--control-mode", mode, "--json", "--state-base"])
        .arg(base.path());
    let run = Proc::spawn("protocol test", command).finish(SESSION_LIMIT);
    stop.store(true, Ordering::Relaxed);
    let answers = decider.join().unwrap();
    assert!(run.status.success(), "{protocol_id} {mode}: {run:?}");
    let report: Value = serde_json::from_str(run.stdout.lines().last().unwrap()).unwrap();
    assert_eq!(report["host"]["completed"], true, "{mode}: {report}");
    if mode == "human" {
        assert!(!answers.is_empty(), "{mode}: a person was asked");
        assert!(
            answers.iter().all(|a| a["status"] == "played"),
            "{mode}: {answers:?}"
        );
    } else {
        assert!(answers.is_empty(), "{mode}: nobody was asked: {answers:?}");
    }
    for role in ["host", "guest"] {
        let side = SessionFiles::read(&newest_dir(base.path(), role).unwrap());
        let crashed = side
            .events_of("session_ended")
            .iter()
            .any(|e| e["reason"] == "engine_error");
        assert!(!crashed, "{mode} {role}: {:?}", side.events);
    }
}

#[test]
fn reference_rock_paper_scissors_hooks_run_in_every_control_mode() {
    for mode in ["autonomous", "hybrid", "human"] {
        self_play(REFERENCE_RPS, mode);
    }
}

#[test]
fn reference_guess_number_hooks_run_in_every_control_mode() {
    for mode in ["autonomous", "hybrid", "human"] {
        self_play(REFERENCE_GUESS_NUMBER, mode);
    }
}

/// The reference RPS hooks in hybrid control with a person watching (`--think-seconds`):
/// a move other than the agent's, sent with `session decide` while the guest's round-1
/// window is open, is what the guest plays that round, and the decision is recorded as
/// consumed in the reference's `consumed.jsonl`; the windows nobody answered play the
/// agent's move when their time is up.
#[test]
fn reference_rock_paper_scissors_hybrid_takes_an_override() {
    let dir = library_dir(&reference_package_dir(), REFERENCE_RPS);
    let base = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    let mut command = aigenora();
    command
        .args(["--data-dir"])
        .arg(data.path())
        .args(["protocol", "test"])
        .arg(&dir)
        .args([
            "--options",
            r#"{"best_of": 2, "termination": "fixed_rounds"}"#,
        ])
        .args(["--control-mode", "hybrid", "--think-seconds", "3", "--json"])
        .arg("--state-base")
        .arg(base.path());
    let run = Proc::spawn("protocol test", command);
    let (guest_dir, window) = wait_until(SESSION_LIMIT, || {
        let dir = newest_dir(base.path(), "guest")?;
        window_of(&dir)
            .filter(|window| window.match_value == 1)
            .map(|window| (dir, window))
    })
    .expect("the guest's round-1 window");
    assert_eq!(window.mode, aigenora::records::WindowMode::Hybrid);
    let intended = window.intended.clone().expect("the agent's move is shown");
    let other = ["rock", "paper", "scissors"]
        .into_iter()
        .find(|value| intended != *value)
        .unwrap();
    let (taken, answer) = decide_in(&guest_dir, other);
    assert!(taken, "{answer}");
    assert_eq!(
        (&answer["status"], &answer["match_value"]),
        (&Value::from("played"), &Value::from(1))
    );
    let run = run.finish(SESSION_LIMIT);
    assert!(run.status.success(), "{run:?}");
    let guest = SessionFiles::read(&guest_dir);
    let closed = guest.events_of("decision_window_closed");
    assert_eq!(closed.len(), 2, "{closed:?}");
    assert_eq!(closed[0]["outcome"], "agent_move", "{closed:?}");
    assert_eq!(
        (
            &closed[1]["outcome"],
            &closed[1]["origin"],
            &closed[1]["decision"]["choice"]
        ),
        (
            &Value::from("decided"),
            &Value::from("cli"),
            &Value::from(other)
        ),
        "{closed:?}"
    );
    let reveals: Vec<&Value> = guest
        .events_of("protocol_message")
        .into_iter()
        .filter(|m| m["direction"] == "sent" && m["msg"]["action"] == "reveal")
        .map(|m| &m["msg"]["choice"])
        .collect();
    assert_eq!(reveals[1], other, "{reveals:?}");
    let engine = aigenora::control::Target::at(&guest_dir)
        .unwrap()
        .engine_dir()
        .unwrap();
    let consumed: Vec<Value> =
        std::fs::read_to_string(aigenora::records::DecisionFiles::of(&engine).consumed())
            .unwrap()
            .lines()
            .map(|line| serde_json::from_str(line).unwrap())
            .collect();
    assert_eq!(consumed.len(), 1, "{consumed:?}");
    assert_eq!(
        (
            &consumed[0]["decision_id"],
            &consumed[0]["match_value"],
            &consumed[0]["reason"]
        ),
        (
            &answer["decision_id"],
            &Value::from(1),
            &Value::from("consumed")
        )
    );
}

/// Our host under human control (moves from `session decide`) against a reference guest in
/// hybrid control, over our server.
#[test]
fn a_reference_hybrid_guest_plays_our_human_host() {
    let net = crate::support::net::Net::start();
    let carol = net.reference_agent("carol");
    carol.register_protocol(REFERENCE_RPS);
    let bob = net.agent("bob");
    install_reference_protocol(&bob, REFERENCE_RPS);
    let protocol_dir = library_dir(&bob.dir, REFERENCE_RPS);
    let (host, post_id) = bob.host(protocol_dir.to_str().unwrap(), &["--control-mode", "human"]);
    let stop = Arc::new(AtomicBool::new(false));
    let decider = answer_windows(
        bob.dir.join("sessions"),
        &["host"],
        stop.clone(),
        Box::new(answer),
    );
    let (joining, reference) = carol.daemon(&["join", &post_id, "--control-mode", "hybrid"]);
    assert_eq!(joining["protocol_id"], REFERENCE_RPS);
    host.succeed(SESSION_LIMIT);
    stop.store(true, Ordering::Relaxed);
    let answers = decider.join().unwrap();
    assert!(
        !answers.is_empty() && answers.iter().all(|a| a["status"] == "played"),
        "{answers:?}"
    );
    let ours = bob.session("host");
    assert_eq!(ours.status(), "closed", "{}", ours.info);
    let theirs = reference.wait_reference_end();
    let ended = theirs.events_of("session_ended");
    assert_eq!(
        ended.last().map(|e| &e["completed"]),
        Some(&Value::Bool(true)),
        "{:?}",
        theirs.events
    );
}

/// The reference's own `session decide`, keyless as its docs use it, answers our human
/// guest's window: its gateway leaves the key out of the record, and our engine takes such a
/// decision for the window open when it arrives.
#[test]
fn the_reference_session_decide_answers_our_human_window() {
    let net = crate::support::net::Net::start();
    let (alice, bob) = (net.agent("alice"), net.agent("bob"));
    let options = r#"{"best_of": 1, "termination": "fixed_rounds", "moves": "rock"}"#;
    let (host, post_id) = alice.host(
        "rock-paper-scissors",
        &["--control-mode", "autonomous", "--options", options],
    );
    let guest = bob.join(&post_id, &["--control-mode", "human", "--no-prompt"]);
    let sessions = bob.dir.join("sessions");
    let dir = crate::support::net::wait_until(SESSION_LIMIT, || {
        newest_dir(&sessions, "guest").filter(|dir| window_of(dir).is_some())
    })
    .expect("the guest's window opens");
    let output = crate::support::reference::reference_cli()
        .args(["session", "decide", "--state-dir"])
        .arg(&dir)
        .args(["--decision", r#"{"choice": "paper"}"#])
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    assert!(guest.finish(SESSION_LIMIT).status.success());
    assert!(host.finish(SESSION_LIMIT).status.success());
    let ours = bob.session("guest");
    assert_eq!(ours.field("winner"), "guest", "{}", ours.info);
    let closed = ours.events_of("decision_window_closed");
    assert_eq!(closed[0]["decision"]["choice"], "paper");
    assert_eq!(closed[0]["origin"], "cli");
}
