//! People in the loop, end to end: every pairing of host and guest control modes playing
//! rock-paper-scissors as real processes, with the human sides answered through
//! `aigenora session decide`; hybrid overrides and fallbacks; refused, late and valid
//! input; a thinking human keeping the heartbeat; a human deadline ending cleanly.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::Duration;

use aigenora::records::Window;
use serde_json::Value;

use crate::support::control::{run_decide, window_of};
use crate::support::net::{Agent, Net, SESSION_LIMIT, SessionFiles, session_dirs, wait_until};

const MODES: [&str; 3] = ["autonomous", "hybrid", "human"];

/// The open decision window of `agent`'s newest `role` session, with its session dir.
pub fn open_window(agent_dir: &Path, role: &str) -> Option<(PathBuf, Window)> {
    let dir = session_dirs(agent_dir, role).pop()?;
    window_of(&dir).map(|window| (dir, window))
}

/// `session decide MOVE --json` for a session dir: (exit success, answer).
pub fn decide(agent: &Agent, dir: &Path, value: &str) -> (bool, Value) {
    run_decide(agent.command(&[
        "session",
        "decide",
        value,
        "--state-dir",
        dir.to_str().unwrap(),
        "--json",
    ]))
}

/// A person at `agent`'s `role` side: answers every window it sees with `pick(round)`,
/// after `delay`, until told to stop.
struct Decider {
    stop: Arc<AtomicBool>,
    thread: JoinHandle<Vec<Value>>,
}

impl Decider {
    fn start(agent: &Agent, role: &str, delay: Duration, pick: fn(u64) -> &'static str) -> Decider {
        let agent = Agent {
            dir: agent.dir.clone(),
            server: agent.server.clone(),
            netns: agent.netns.clone(),
        };
        let role = role.to_string();
        let stop = Arc::new(AtomicBool::new(false));
        let stopping = stop.clone();
        let thread = std::thread::spawn(move || {
            let mut answers = Vec::new();
            let mut answered = Vec::new();
            while !stopping.load(Ordering::Relaxed) {
                if let Some((dir, window)) = open_window(&agent.dir, &role)
                    && !answered.contains(&window.key())
                {
                    std::thread::sleep(delay);
                    let round = window.match_value.as_u64().unwrap();
                    let (_, answer) = decide(&agent, &dir, pick(round));
                    answered.push(window.key());
                    answers.push(answer);
                }
                std::thread::sleep(Duration::from_millis(30));
            }
            answers
        });
        Decider { stop, thread }
    }

    fn answers(self) -> Vec<Value> {
        self.stop.store(true, Ordering::Relaxed);
        self.thread.join().unwrap()
    }
}

fn paper(_: u64) -> &'static str {
    "paper"
}

fn rock(_: u64) -> &'static str {
    "rock"
}

fn closed_windows(files: &SessionFiles) -> Vec<&Value> {
    files.events_of("decision_window_closed")
}

/// Every host × guest control-mode pairing plays a whole match on loopback; human sides
/// play what `session decide` sends, hybrid and autonomous sides play alone, and an
/// autonomous side refuses a decision.
#[test]
fn all_nine_control_mode_pairings_play_to_the_end() {
    let net = Net::start();
    let (alice, bob) = (net.agent("alice"), net.agent("bob"));
    for host_mode in MODES {
        for guest_mode in MODES {
            let pairing = format!("{host_mode} host, {guest_mode} guest");
            let host_moves = r#"{"best_of": 3, "termination": "first_to_win", "moves": "rock"}"#;
            let (host, post_id) = alice.host(
                "rock-paper-scissors",
                &["--control-mode", host_mode, "--options", host_moves],
            );
            let deciders: Vec<(&str, Decider)> =
                [("host", host_mode, &alice), ("guest", guest_mode, &bob)]
                    .into_iter()
                    .filter(|(_, mode, _)| *mode == "human")
                    .map(|(role, _, agent)| {
                        let pick = if role == "host" { rock } else { paper };
                        (role, Decider::start(agent, role, Duration::ZERO, pick))
                    })
                    .collect();
            let guest = bob.join(&post_id, &["--control-mode", guest_mode]);
            let (host_out, guest_out) = (host.finish(SESSION_LIMIT), guest.finish(SESSION_LIMIT));
            let answers: Vec<(&str, Vec<Value>)> = deciders
                .into_iter()
                .map(|(role, d)| (role, d.answers()))
                .collect();
            let host_files = SessionFiles::read(alice.session_dirs("host").last().unwrap());
            let guest_files = SessionFiles::read(bob.session_dirs("guest").last().unwrap());
            for (files, out) in [(&host_files, &host_out), (&guest_files, &guest_out)] {
                assert!(out.status.success(), "{pairing}: {out:?}");
                assert_eq!(files.status(), "closed", "{pairing}: {}", files.info);
            }
            assert_eq!(
                host_files.field("winner"),
                guest_files.field("winner"),
                "{pairing}"
            );
            for (role, answers) in answers {
                assert!(!answers.is_empty(), "{pairing}: the {role} was asked");
                assert!(
                    answers.iter().all(|a| a["status"] == "played"),
                    "{pairing}: {answers:?}"
                );
            }
            for (files, mode) in [(&host_files, host_mode), (&guest_files, guest_mode)] {
                let closed = closed_windows(files);
                match mode {
                    "human" => assert!(
                        !closed.is_empty()
                            && closed
                                .iter()
                                .all(|w| w["origin"] == "cli" && w["outcome"] == "decided"),
                        "{pairing}: {closed:?}"
                    ),
                    _ => assert!(closed.is_empty(), "{pairing}: nobody watched: {closed:?}"),
                }
            }
            if host_mode == "autonomous" {
                let dir = alice.session_dirs("host").pop().unwrap();
                let (taken, answer) = decide(&alice, &dir, "rock");
                assert!(!taken, "{answer}");
                assert!(
                    answer["reason"]
                        .as_str()
                        .unwrap()
                        .starts_with("control_mode_autonomous"),
                    "{answer}"
                );
            }
        }
    }
}

/// A human guest: a move outside the legal ones is refused with the reason and the window
/// stays open; a legal one is played; after the end a move is refused (no window).
#[test]
fn a_human_gets_refusals_for_bad_and_late_input_and_plays_good_input() {
    let net = Net::start();
    let (alice, bob) = (net.agent("alice"), net.agent("bob"));
    let options = r#"{"best_of": 1, "termination": "first_to_win", "moves": "rock"}"#;
    let (host, post_id) = alice.host(
        "rock-paper-scissors",
        &["--control-mode", "autonomous", "--options", options],
    );
    let guest = bob.join(&post_id, &["--control-mode", "human"]);
    let (dir, window) =
        wait_until(SESSION_LIMIT, || open_window(&bob.dir, "guest")).expect("a window");
    assert_eq!(
        (window.match_key.as_str(), window.value_field.as_str()),
        ("round", "choice")
    );
    let (taken, refused) = decide(&bob, &dir, "banana");
    assert!(!taken);
    assert_eq!(refused["status"], "refused");
    assert_eq!(refused["reason"], "choice must be rock, paper or scissors");
    assert!(
        open_window(&bob.dir, "guest").is_some(),
        "the window stays open"
    );
    let (taken, played) = decide(&bob, &dir, "paper");
    assert!(taken, "{played}");
    assert_eq!(played["status"], "played");
    assert!(guest.finish(SESSION_LIMIT).status.success());
    assert!(host.finish(SESSION_LIMIT).status.success());
    let (taken, late) = decide(&bob, &dir, "rock");
    assert!(!taken);
    assert_eq!(late["status"], "refused", "{late}");
    let files = SessionFiles::read(&dir);
    assert_eq!(files.field("winner"), "guest");
    let late_by_key = bob
        .command(&[
            "session",
            "decide",
            r#"{"round": 0, "choice": "rock"}"#,
            "--state-dir",
            dir.to_str().unwrap(),
            "--json",
        ])
        .output()
        .unwrap();
    let late_by_key: Value = serde_json::from_slice(&late_by_key.stdout).unwrap();
    assert_eq!(late_by_key["status"], "closed", "{late_by_key}");
}

/// Hybrid with a person watching (`--think-seconds`): a move submitted in the window
/// replaces the agent's; a window nobody answers plays the agent's move at its deadline.
#[test]
fn hybrid_plays_an_override_or_the_agents_move() {
    let net = Net::start();
    let (alice, bob) = (net.agent("alice"), net.agent("bob"));
    let options = r#"{"best_of": 2, "termination": "fixed_rounds", "moves": "rock"}"#;
    let (host, post_id) = alice.host(
        "rock-paper-scissors",
        &["--control-mode", "autonomous", "--options", options],
    );
    let guest = bob.join(
        &post_id,
        &["--control-mode", "hybrid", "--think-seconds", "2"],
    );
    let (dir, window) =
        wait_until(SESSION_LIMIT, || open_window(&bob.dir, "guest")).expect("a window");
    assert_eq!(window.match_value, 0);
    assert!(
        window.intended.is_some(),
        "the agent's move is shown: {window:?}"
    );
    let (taken, played) = decide(&bob, &dir, "scissors");
    assert!(taken, "{played}");
    assert!(guest.finish(SESSION_LIMIT).status.success());
    assert!(host.finish(SESSION_LIMIT).status.success());
    let files = SessionFiles::read(&dir);
    let closed = closed_windows(&files);
    assert_eq!(closed.len(), 2, "{closed:?}");
    assert_eq!(
        (&closed[0]["outcome"], &closed[0]["decision"]["choice"]),
        (&Value::from("decided"), &Value::from("scissors"))
    );
    assert_eq!(closed[1]["outcome"], "agent_move");
    let reveals: Vec<&Value> = files
        .events_of("protocol_message")
        .into_iter()
        .filter(|m| m["direction"] == "sent" && m["msg"]["action"] == "reveal")
        .collect();
    assert_eq!(reveals[0]["msg"]["choice"], "scissors");
}

/// A person who takes longer than the peer's heartbeat timeout to move is not taken for a
/// lost connection: our side keeps answering pings while the window is open.
#[test]
fn a_thinking_human_keeps_the_heartbeat_alive() {
    let net = Net::start();
    let (alice, bob) = (net.agent("alice"), net.agent("bob"));
    let options = r#"{"best_of": 1, "termination": "first_to_win", "moves": "rock"}"#;
    let beat = ["--heartbeat-interval", "0.3", "--heartbeat-timeout", "1"];
    let mut host_args = vec!["--control-mode", "autonomous", "--options", options];
    host_args.extend(beat);
    let (host, post_id) = alice.host("rock-paper-scissors", &host_args);
    let mut guest_args = vec!["--control-mode", "human"];
    guest_args.extend(beat);
    let decider = Decider::start(&bob, "guest", Duration::from_millis(2500), paper);
    let guest = bob.join(&post_id, &guest_args);
    assert!(guest.finish(SESSION_LIMIT).status.success());
    assert!(host.finish(SESSION_LIMIT).status.success());
    assert_eq!(decider.answers()[0]["status"], "played");
    let host_files = alice.session("host");
    assert!(
        host_files.events_of("peer_unresponsive").is_empty(),
        "{:?}",
        host_files.events
    );
    assert_eq!(host_files.status(), "closed");
}

/// A human deadline with `timeout_action: forfeit` (the decision section is not part of
/// the protocol id, so the guest plays the built-in): the host stops cleanly, tells the
/// guest why, and the guest is recorded as the winner — no crash on either side.
#[test]
fn a_human_deadline_forfeits_cleanly() {
    let net = Net::start();
    let (alice, bob) = (net.agent("alice"), net.agent("bob"));
    let protocol = net.work.path().join("rps-forfeit");
    std::fs::create_dir_all(&protocol).unwrap();
    let builtin = aigenora::protocols::find("rock-paper-scissors").unwrap();
    let mut spec: Value = serde_json::from_str(builtin.spec_json).unwrap();
    spec["decision"]["timeout_action"] = "forfeit".into();
    std::fs::write(protocol.join("spec.json"), spec.to_string()).unwrap();
    std::fs::write(protocol.join("hooks.py"), builtin.hooks_py).unwrap();
    let (host, post_id) = alice.host(
        protocol.to_str().unwrap(),
        &["--control-mode", "human", "--think-seconds", "1"],
    );
    let guest = bob.join(&post_id, &["--control-mode", "autonomous"]);
    let host_out = host.finish(SESSION_LIMIT);
    let guest_out = guest.finish(SESSION_LIMIT);
    assert!(!host_out.status.success());
    assert!(!guest_out.status.success());
    let host_files = alice.session("host");
    assert_eq!(host_files.status(), "aborted", "{}", host_files.info);
    assert_eq!(host_files.field("end_reason"), "forfeit");
    assert_eq!(host_files.field("winner"), "guest");
    let closed = closed_windows(&host_files);
    assert_eq!(
        (&closed[0]["outcome"], &closed[0]["action"]),
        (&Value::from("timed_out"), &Value::from("forfeit"))
    );
    let guest_files = bob.session("guest");
    assert_eq!(guest_files.status(), "aborted", "{}", guest_files.info);
    assert_eq!(guest_files.events_of("peer_error")[0]["reason"], "aborted");
}

/// A peer that leaves while our person thinks closes the window at once: the side ends
/// `peer_disconnected` within seconds, not at the window's 60 s deadline.
#[test]
fn a_peer_leaving_closes_an_open_window_at_once() {
    let net = Net::start();
    let (alice, bob) = (net.agent("alice"), net.agent("bob"));
    let (host, post_id) = alice.host("rock-paper-scissors", &["--control-mode", "autonomous"]);
    let guest = bob.join(&post_id, &["--control-mode", "human"]);
    let (dir, _) = wait_until(SESSION_LIMIT, || open_window(&bob.dir, "guest")).expect("a window");
    let host_dir = alice.session_dirs("host").pop().unwrap();
    let started = std::time::Instant::now();
    alice.ok(&[
        "session",
        "abort",
        "--state-dir",
        host_dir.to_str().unwrap(),
    ]);
    let _ = host.finish(SESSION_LIMIT);
    let ended = SessionFiles::wait_final(&dir, Duration::from_secs(20));
    assert!(started.elapsed() < Duration::from_secs(20));
    assert_eq!(ended.status(), "aborted", "{}", ended.info);
    assert_eq!(ended.field("end_reason"), "peer_disconnected");
    assert_eq!(closed_windows(&ended)[0]["outcome"], "cancelled");
    let _ = guest.finish(SESSION_LIMIT);
}
