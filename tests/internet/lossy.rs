//! A long, lossy line: the user-space wire between NAT A and the public network, with
//! 50 ms and 2% loss each way (a 100 ms round trip between host and guest, whichever path
//! their packets take). Games complete with every frame delivered in order; a stall longer
//! than the heartbeat timeout ends the session cleanly on both sides.

use std::time::Duration;

use serde_json::Value;

use crate::fixture::{Internet, RelaySetup, start_game};
use crate::support::net::{SessionFiles, assert_clean_end, wait_until};
use crate::support::process::Proc;
use crate::topology::{Options, Shape};

/// The line of these tests: 50 ms and 2% loss each way.
const LONG_AND_LOSSY: Shape = Shape {
    delay: Duration::from_millis(50),
    loss: 0.02,
};
/// A whole game over the long line may take this long (99 rounds of two round trips are
/// 20 s alone).
const GAME_LIMIT: Duration = Duration::from_secs(180);

fn long_line() -> Internet {
    Internet::start(
        Options {
            wire: Some(LONG_AND_LOSSY),
            ..Options::default()
        },
        RelaySetup::Separate,
    )
}

/// Every protocol message one side sent is what the other received, in the same order.
fn every_frame_delivered(host: &SessionFiles, guest: &SessionFiles) {
    let messages = |side: &SessionFiles, direction: &str| -> Vec<Value> {
        side.events_of("protocol_message")
            .into_iter()
            .filter(|event| event["direction"] == direction)
            .map(|event| event["msg"].clone())
            .collect()
    };
    let host_sent = messages(host, "sent");
    let guest_sent = messages(guest, "sent");
    assert!(!host_sent.is_empty() && !guest_sent.is_empty());
    assert_eq!(host_sent, messages(guest, "received"));
    assert_eq!(guest_sent, messages(host, "received"));
}

/// Hosts `protocol` behind NAT A, joins from behind NAT B, plays to the end.
fn play(internet: &Internet, protocol: &str, options: &str) -> (SessionFiles, SessionFiles) {
    let alice = internet.agent("alice", crate::topology::Place::Host);
    let bob = internet.agent("bob", crate::topology::Place::Guest);
    let autonomous = ["--control-mode", "autonomous"];
    let mut flags = vec!["--options", options];
    flags.extend_from_slice(&autonomous);
    let (host, post_id) = alice.host(protocol, &flags);
    let joined = bob.join(&post_id, &autonomous).finish(GAME_LIMIT);
    let hosted = host.finish(GAME_LIMIT);
    let (host, guest) = (alice.session("host"), bob.session("guest"));
    assert!(
        joined.status.success() && hosted.status.success(),
        "host {} / guest {}; wire (carried, dropped) {:?}\n\
         guest:\n{}\n{}\nguest's events:\n{}\nhost's events:\n{}",
        hosted.status,
        joined.status,
        internet.topology.wire().counts(),
        joined.stdout,
        joined.stderr,
        timeline(&guest),
        timeline(&host)
    );
    assert_clean_end(&host, &guest);
    let (carried, dropped) = internet.topology.wire().counts();
    assert!(
        dropped > 0 && carried > 0,
        "the wire lost some: {carried} carried, {dropped} dropped"
    );
    (host, guest)
}

/// One side's events, one line each, protocol messages counted instead of listed (what a
/// failure needs: when each side last heard from the other, its path changes, its end).
fn timeline(side: &SessionFiles) -> String {
    let mut lines = Vec::new();
    let (mut messages, mut last) = (0, "");
    // A final `None` closes a run of messages that ends the log.
    for event in side.events.iter().map(Some).chain([None]) {
        if let Some(message) = event.filter(|event| event.name == "protocol_message") {
            (messages, last) = (messages + 1, message.ts.as_str());
            continue;
        }
        if messages > 0 {
            lines.push(format!(
                "  ... {messages} protocol messages, the last at {last}"
            ));
            messages = 0;
        }
        if let Some(event) = event {
            lines.push(format!("  {} {} {}", event.ts, event.name, event.data));
        }
    }
    lines.join("\n")
}

#[test]
fn ninety_nine_rounds_of_rock_paper_scissors_over_a_long_lossy_line() {
    let internet = long_line();
    let options =
        r#"{"best_of": 99, "termination": "fixed_rounds", "moves": "rock,paper,scissors"}"#;
    let (host, guest) = play(&internet, "rock-paper-scissors", options);
    every_frame_delivered(&host, &guest);
    let results = host
        .events_of("protocol_message")
        .into_iter()
        .filter(|event| event["direction"] == "sent" && event["msg"]["action"] == "round_result")
        .count();
    assert_eq!(results, 99, "every round was played");
}

#[test]
fn a_game_of_thirty_one_over_a_long_lossy_line() {
    let internet = long_line();
    let (host, guest) = play(&internet, "thirty-one", r#"{"hand_size": 4}"#);
    every_frame_delivered(&host, &guest);
    // Both audits passed and each side verified the other's receipt of the same game.
    for side in [&host, &guest] {
        assert_eq!(side.events_of("audit_passed").len(), 1, "{}", side.info);
    }
    let root = |side: &SessionFiles| {
        side.events_of("mp_terminal_receipt_verified")[0]["transcript_hash"].clone()
    };
    assert_eq!(root(&host), root(&guest));
}

#[test]
fn a_stall_past_the_heartbeat_timeout_ends_both_sides_cleanly() {
    let internet = Internet::start(
        Options {
            wire: Some(Shape {
                delay: Duration::from_millis(5),
                loss: 0.0,
            }),
            ..Options::default()
        },
        RelaySetup::Separate,
    );
    let heartbeat = ["--heartbeat-interval", "1", "--heartbeat-timeout", "3"];
    let game = start_game(&internet, &heartbeat, &heartbeat);
    // The line to the host goes dead, for longer than the heartbeat timeout (and iroh's
    // idle timeout, after which the connection is gone).
    internet.topology.wire().stall(true);
    let ended = |agent: &crate::support::net::Agent, role: &str, process: &Proc| {
        let dir = agent.session_dirs(role).pop().unwrap();
        wait_until(Duration::from_secs(60), || {
            Some(SessionFiles::read(&dir))
                .filter(|files| !files.events_of("session_ended").is_empty())
        })
        .unwrap_or_else(|| {
            panic!(
                "the {role} never ended; its threads:\n{}\nits events:\n{}",
                process.threads(),
                timeline(&SessionFiles::read(&dir))
            )
        })
    };
    let (host_ended, guest_ended) = (
        ended(&game.alice, "host", &game.host),
        ended(&game.bob, "guest", &game.guest),
    );
    for side in [&host_ended, &guest_ended] {
        assert!(
            !side.events_of("peer_unresponsive").is_empty(),
            "{:?}",
            side.events
        );
    }
    // The line comes back: the host can tell the server how its session ended.
    internet.topology.wire().stall(false);
    for (process, name) in [(game.host, "host"), (game.guest, "guest")] {
        let finished = process.finish(Duration::from_secs(90));
        assert_eq!(
            finished.status.code(),
            Some(1),
            "{name}: {}",
            finished.stdout
        );
        let error = finished.stderr.trim();
        assert_eq!(error.lines().count(), 1, "{name}: {error}");
        assert!(error.contains("without completing"), "{name}: {error}");
    }
    for (agent, role) in [(&game.alice, "host"), (&game.bob, "guest")] {
        let end = agent.session(role);
        assert_eq!(end.status(), "aborted", "{}", end.info);
        let last = end.events_of("session_ended").pop().cloned().unwrap();
        assert_eq!(last["completed"], false, "{last}");
        assert!(
            end.events_of("session_close_failed").is_empty(),
            "{:?}",
            end.events
        );
    }
}
