//! `--daemon` end to end: host and join each print one JSON line and return while the session
//! runs in the background; `session list`, `session events --follow` and `session abort`
//! observe and control it through the session directory.

use std::path::PathBuf;

use aigenora::records::Event;
use serde_json::Value;

use crate::support::net::{
    Agent, Background, Net, SESSION_LIMIT, SessionFiles, assert_server_session, wait_until,
};
use crate::support::process::Proc;

/// Runs `host`/`join` with `--daemon` and returns its single JSON line and the session
/// running in the background.
fn daemon(agent: &Agent, args: &[&str]) -> (Value, Background) {
    let mut args = args.to_vec();
    args.push("--daemon");
    let stdout = agent.ok(&args);
    assert_eq!(stdout.lines().count(), 1, "one JSON line: {stdout}");
    let line: Value = serde_json::from_str(&stdout).unwrap();
    let state_dir = PathBuf::from(line["state_dir"].as_str().unwrap());
    (line, Background { state_dir })
}

fn listed(agent: &Agent) -> Vec<Value> {
    let rows: Value = serde_json::from_str(&agent.ok(&["session", "list", "--json"])).unwrap();
    rows.as_array().unwrap().clone()
}

/// The session the daemon's pid runs must still be alive, then gone after the end.
fn alive(pid: &Value) -> bool {
    std::process::Command::new("kill")
        .args(["-0", &pid.to_string()])
        .stderr(std::process::Stdio::null())
        .status()
        .unwrap()
        .success()
}

#[test]
fn daemon_host_and_join_finish_in_the_background_and_follow_sees_the_end() {
    let net = Net::start();
    let (alice, bob) = (net.agent("alice"), net.agent("bob"));
    let (hosting, host) = daemon(&alice, &["host", "--protocol-dir", "guess-number"]);
    assert_eq!(hosting["status"], "hosting", "{hosting}");
    let post_id = hosting["post_id"].as_str().unwrap();
    let host_dir = &host.state_dir;
    assert!(alive(&hosting["pid"]));
    let rows = listed(&alice);
    assert_eq!(rows.len(), 1);
    assert_eq!(
        (&rows[0]["status"], &rows[0]["role"], &rows[0]["post_id"]),
        (
            &Value::from("hosting"),
            &Value::from("host"),
            &hosting["post_id"]
        )
    );

    let host_dir_arg = host_dir.to_str().unwrap();
    let follow = Proc::spawn(
        "events --follow",
        alice.command(&[
            "session",
            "events",
            "--state-dir",
            host_dir_arg,
            "--follow",
            "--json",
        ]),
    );
    follow.wait_for_line("\"invite_created\"", SESSION_LIMIT);

    let (joining, guest) = daemon(&bob, &["join", post_id]);
    assert_eq!(joining["status"], "joining", "{joining}");
    let session_id = joining["session_id"].as_str().unwrap();
    assert_eq!(joining["protocol_id"], hosting["protocol_id"]);

    let followed = follow.succeed(SESSION_LIMIT).stdout;
    let types: Vec<String> = followed
        .lines()
        .map(|line| serde_json::from_str::<Value>(line).unwrap()["type"].to_string())
        .collect();
    assert_eq!(
        types.first().map(String::as_str),
        Some("\"invite_created\"")
    );
    assert!(types.contains(&"\"peer_joined\"".to_string()), "{types:?}");
    assert_eq!(types.last().map(String::as_str), Some("\"session_ended\""));

    let host_end = SessionFiles::read(host_dir);
    assert_eq!(
        host_end.status(),
        "closed",
        "follow ended before the end was recorded"
    );
    let guest_dir = &guest.state_dir;
    let guest_end = guest.wait_final();
    assert_eq!(guest_end.status(), "closed", "{}", guest_end.info);
    assert_eq!(guest_end.field("winner"), host_end.field("winner"));
    assert_eq!(host_end.field("session_id"), session_id);
    for (agent, dir) in [(&alice, host_dir), (&bob, guest_dir)] {
        let rows = listed(agent);
        assert_eq!(rows[0]["status"], "closed");
        assert_eq!(rows[0]["session_dir"], dir.to_str().unwrap());
        let log = std::fs::read_to_string(dir.join("daemon.out.log")).unwrap();
        assert_eq!(log.lines().last(), Some("done"), "{log}");
    }
    let winner = host_end.field("winner").as_str();
    assert_server_session(&alice.server_session(session_id), "closed", winner);
}

#[test]
fn session_abort_ends_a_waiting_host_and_withdraws_its_invitation() {
    let net = Net::start();
    let alice = net.agent("alice");
    let (hosting, host) = daemon(&alice, &["host", "--protocol-dir", "rock-paper-scissors"]);
    let dir_arg = host.state_dir.to_str().unwrap();
    let aborting: Value =
        serde_json::from_str(&alice.ok(&["session", "abort", "--state-dir", dir_arg, "--json"]))
            .unwrap();
    assert_eq!(aborting["status"], "aborting");
    assert_eq!(aborting["pid"], hosting["pid"]);

    let end = host.wait_final();
    assert_eq!(end.status(), "aborted", "{}", end.info);
    assert_eq!(end.field("completed"), false);
    assert_eq!(
        end.events_of("session_ended").last().unwrap()["reason"],
        "aborted"
    );
    let gone = wait_until(SESSION_LIMIT, || (!alive(&hosting["pid"])).then_some(()));
    assert!(gone.is_some(), "the host process exits after the abort");
    let invitation: Value = serde_json::from_str(&alice.ok(&[
        "browse",
        "--post-id",
        hosting["post_id"].as_str().unwrap(),
        "--json",
    ]))
    .unwrap();
    assert_eq!(invitation["status"], "cancelled", "{invitation}");

    let again = alice
        .command(&["session", "abort", "--state-dir", dir_arg])
        .output()
        .unwrap();
    assert!(!again.status.success());
    assert!(
        String::from_utf8_lossy(&again.stderr).contains("already ended (aborted)"),
        "{again:?}"
    );
}

/// Aborting a running session closes its connection at once: the aborted side's log ends
/// with the abort (the engine winding down adds nothing), and the peer ends
/// `peer_disconnected` well before the transport's 10 s idle timeout could have told it.
#[test]
fn session_abort_mid_game_tells_the_peer_at_once() {
    let net = Net::start();
    let (alice, bob) = (net.agent("alice"), net.agent("bob"));
    let long_game = r#"{"best_of": 999, "termination": "fixed_rounds"}"#;
    let (hosting, host) = daemon(
        &alice,
        &[
            "host",
            "--protocol-dir",
            "rock-paper-scissors",
            "--pace",
            "0.2",
            "--options",
            long_game,
        ],
    );
    let (joining, guest) = daemon(&bob, &["join", hosting["post_id"].as_str().unwrap()]);
    let playing = wait_until(SESSION_LIMIT, || {
        let files = SessionFiles::read(&host.state_dir);
        (files.events_of("protocol_message").len() > 6).then_some(())
    });
    assert!(playing.is_some(), "the game got under way");

    alice.ok(&[
        "session",
        "abort",
        "--state-dir",
        host.state_dir.to_str().unwrap(),
    ]);
    let guest_end = SessionFiles::wait_final(&guest.state_dir, std::time::Duration::from_secs(8));
    assert_eq!(guest_end.status(), "aborted", "{}", guest_end.info);
    assert_eq!(guest_end.field("end_reason"), "peer_disconnected");

    let gone = wait_until(SESSION_LIMIT, || (!alive(&hosting["pid"])).then_some(()));
    assert!(gone.is_some(), "the host process exits after the abort");
    let host_end = SessionFiles::read(&host.state_dir);
    assert_eq!(host_end.status(), "aborted");
    let last = host_end.events.last().unwrap();
    assert!(
        matches!(&last.event, Some(Event::SessionEnded { reason: Some(reason), .. }) if reason == "aborted"),
        "{last:?}"
    );
    let session_id = joining["session_id"].as_str().unwrap();
    assert_server_session(&bob.server_session(session_id), "failed", None);
}
