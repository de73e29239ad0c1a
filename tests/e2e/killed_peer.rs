//! A peer process killed (SIGKILL) in the middle of a session: the survivor notices within
//! the transport's idle timeout, ends `aborted` with `peer_disconnected`, exits non-zero, and
//! reports the session `failed` to the server. Following the dead side's events ends too, and
//! joining a host that was killed while waiting fails cleanly.

use crate::support::net::{Agent, Net, SESSION_LIMIT, assert_server_session};
use crate::support::process::Proc;

/// A long, paced game, so the kill lands mid-session.
const LONG_GAME: [&str; 6] = [
    "--pace",
    "0.5",
    "--heartbeat-interval",
    "0.5",
    "--options",
    r#"{"best_of": 999, "termination": "fixed_rounds"}"#,
];

fn assert_survivor_disconnected(agent: &Agent, role: &str, survivor: Proc) {
    let ended = survivor.finish(SESSION_LIMIT);
    assert!(!ended.status.success(), "{ended:?}");
    assert!(
        ended.stderr.contains("peer_disconnected"),
        "{}",
        ended.stderr
    );
    let end = agent.session(role);
    assert_eq!(end.status(), "aborted", "{}", end.info);
    assert_eq!(end.field("end_reason"), "peer_disconnected");
    assert_eq!(end.field("completed"), false);
    assert_eq!(
        end.events_of("session_ended").last().unwrap()["reason"],
        "peer_disconnected"
    );
    let session_id = end.field("session_id").as_str().unwrap();
    assert_server_session(&agent.server_session(session_id), "failed", None);
}

#[test]
fn killing_the_guest_mid_session_ends_the_host_with_peer_disconnected() {
    let net = Net::start();
    let (alice, bob) = (net.agent("alice"), net.agent("bob"));
    let (host, post_id) = alice.host("rock-paper-scissors", &LONG_GAME);
    let mut guest = bob.join(&post_id, &LONG_GAME[..4]);
    guest.wait_for_line("Round 2:", SESSION_LIMIT);
    guest.kill_and_reap();
    assert_survivor_disconnected(&alice, "host", host);
    let killed = bob.session("guest");
    assert_eq!(
        killed.status(),
        "running",
        "the killed guest never wrote an end"
    );
    let dir = killed.dir.to_str().unwrap();
    let follow = bob.command(&[
        "session",
        "events",
        "--state-dir",
        dir,
        "--follow",
        "--json",
    ]);
    let followed = Proc::spawn("events --follow", follow).succeed(SESSION_LIMIT);
    assert_eq!(followed.stdout.lines().count(), killed.events.len());
    assert!(
        followed
            .stderr
            .contains("is gone without recording an end (killed?); stopped following"),
        "{}",
        followed.stderr
    );
}

#[test]
fn killing_the_host_mid_session_ends_the_guest_with_peer_disconnected() {
    let net = Net::start();
    let (alice, bob) = (net.agent("alice"), net.agent("bob"));
    let (mut host, post_id) = alice.host("rock-paper-scissors", &LONG_GAME);
    let guest = bob.join(&post_id, &LONG_GAME[..4]);
    host.wait_for_line("Round 2:", SESSION_LIMIT);
    host.kill_and_reap();
    assert_survivor_disconnected(&bob, "guest", guest);
}

/// A host killed while waiting leaves its invitation behind: a guest that joins it cannot
/// connect, says so, records the failure in its session dir and registers nothing.
#[test]
fn joining_a_killed_host_fails_cleanly_and_registers_nothing() {
    let net = Net::start();
    let (alice, bob) = (net.agent("alice"), net.agent("bob"));
    let (mut host, post_id) = alice.host("guess-number", &[]);
    host.kill_and_reap();
    let ended = bob.join(&post_id, &[]).finish(SESSION_LIMIT);
    assert!(!ended.status.success());
    assert!(
        ended
            .stderr
            .starts_with("error: cannot connect to the host"),
        "{}",
        ended.stderr
    );
    let end = bob.session("guest");
    assert_eq!(end.status(), "failed", "{}", end.info);
    let failed = end.events_of("start_failed");
    assert!(
        failed[0]["error"]
            .as_str()
            .unwrap()
            .contains("cannot connect")
    );
    let invitation = alice.ok(&["browse", "--post-id", &post_id, "--json"]);
    let invitation: serde_json::Value = serde_json::from_str(&invitation).unwrap();
    assert_eq!(invitation["status"], "active", "no session was registered");
}
