//! The end of a session is clean even when both sides pace their moves and ping every half
//! second (the reference loses its last frame in this setting, interop/p2p-wire.md §10): our
//! host's final frame reaches the guest, ours or the reference's, which ends `closed`, not
//! `peer_disconnected`; and our guest gets the reference host's last frame too.

mod e2e;

use e2e::reference::*;
use e2e::*;
use serde_json::Value;

const SLOW: [&str; 4] = ["--pace", "1", "--heartbeat-interval", "0.5"];

/// The last protocol message a side sent or received, per its events.jsonl.
fn last_message(end: &SessionFiles, direction: &str) -> Value {
    end.events_of("protocol_message")
        .into_iter()
        .rev()
        .find(|m| m["direction"] == direction)
        .map(|m| m["msg"].clone())
        .unwrap_or_else(|| panic!("no {direction} message in {}", end.dir.display()))
}

fn assert_clean(host: &SessionFiles, guest: &SessionFiles) {
    for end in [host, guest] {
        assert_eq!(end.status(), "closed", "{}", end.info);
        assert_eq!(end.field("end_reason"), &Value::Null, "{}", end.info);
        assert!(
            end.events_of("session_ended")
                .iter()
                .all(|e| e["completed"] == true),
            "{:?}",
            end.events
        );
    }
    assert_eq!(last_message(guest, "received"), last_message(host, "sent"));
}

#[test]
fn our_guest_gets_the_last_frame_with_pace_and_heartbeat() {
    let net = Net::start();
    let (alice, bob) = (net.agent("alice"), net.agent("bob"));
    let mut host_args = SLOW.to_vec();
    host_args.extend(["--options", r#"{"best_of": 3}"#]);
    let (host, post_id) = alice.host("rock-paper-scissors", &host_args);
    bob.join(&post_id, &SLOW).succeed(SESSION_LIMIT);
    host.succeed(SESSION_LIMIT);
    let (host_end, guest_end) = (alice.session("host"), bob.session("guest"));
    assert_clean(&host_end, &guest_end);
    assert_eq!(last_message(&guest_end, "received")["game_over"], true);
    let session_id = host_end.field("session_id").as_str().unwrap();
    let winner = host_end.field("winner").as_str();
    assert_server_session(&alice.server_session(session_id), "closed", winner);
}

#[test]
fn the_reference_guest_gets_the_last_frame_with_pace_and_heartbeat() {
    let net = Net::start();
    let carol = net.reference_agent("carol");
    carol.register_protocol(REFERENCE_RPS);
    let bob = net.agent("bob");
    let protocol_dir = install_reference_protocol(&bob, REFERENCE_RPS);
    let mut host_args = SLOW.to_vec();
    host_args.extend(["--options", r#"{"best_of": 3}"#]);
    let (host, post_id) = bob.host(protocol_dir.to_str().unwrap(), &host_args);
    let mut join_args = vec!["join", post_id.as_str()];
    join_args.extend(SLOW);
    let (_, reference) = carol.daemon(&join_args);
    host.succeed(SESSION_LIMIT);
    let (host_end, guest_end) = (bob.session("host"), reference.wait_final());
    assert_clean(&host_end, &guest_end);
    let session_id = host_end.field("session_id").as_str().unwrap();
    let winner = host_end.field("winner").as_str();
    assert_server_session(&bob.server_session(session_id), "closed", winner);
}

/// The other direction: the reference host shuts its node down right after its bookkeeping,
/// and our guest still hands every frame it received to the engine before the disconnect.
#[test]
fn our_guest_gets_the_reference_hosts_last_frame_with_pace_and_heartbeat() {
    let net = Net::start();
    let carol = net.reference_agent("carol");
    carol.register_protocol(REFERENCE_RPS);
    let bob = net.agent("bob");
    install_reference_protocol(&bob, REFERENCE_RPS);
    let protocol_dir = carol.protocol_dir(REFERENCE_RPS);
    let mut host_args = vec!["host", "--protocol-dir", protocol_dir.to_str().unwrap()];
    host_args.extend(SLOW);
    host_args.extend(["--options", r#"{"best_of": 3}"#]);
    let (hosting, reference) = carol.daemon(&host_args);
    bob.join(hosting["post_id"].as_str().unwrap(), &SLOW)
        .succeed(SESSION_LIMIT);
    let (host_end, guest_end) = (reference.wait_final(), bob.session("guest"));
    assert_clean(&host_end, &guest_end);
    let session_id = guest_end.field("session_id").as_str().unwrap();
    let winner = guest_end.field("winner").as_str();
    assert_server_session(&bob.server_session(session_id), "closed", winner);
}
