//! Our host and our guest as separate processes (each with its own data dir, registered on a
//! real server process) play every built-in flow mode over iroh on loopback: both sides end
//! `closed` with the same winner, and the server records the session closed with the result.

use serde_json::Value;

use crate::support::net::{Net, SESSION_LIMIT, SessionFiles, assert_server_session};
use crate::support::process::Proc;

/// Hosts `protocol`, joins it from another agent, and checks both ends and the server.
/// Returns the winner both sides agreed on.
fn play(protocol: &str, options: &str) -> Option<String> {
    let net = Net::start();
    let (alice, bob) = (net.agent("alice"), net.agent("bob"));
    let (host, post_id) = alice.host(protocol, &["--options", options]);
    let guest = bob.join(&post_id, &[]).succeed(SESSION_LIMIT);
    let host = host.succeed(SESSION_LIMIT);
    for output in [&host.stdout, &guest.stdout] {
        assert!(output.contains("peer_joined: "), "{output}");
        assert_eq!(output.lines().last(), Some("done"), "{output}");
    }
    let (host_end, guest_end) = (alice.session("host"), bob.session("guest"));
    for end in [&host_end, &guest_end] {
        assert_eq!(end.status(), "closed", "{}", end.info);
        assert_eq!(end.field("completed"), true);
        assert_eq!(end.field("post_id"), post_id.as_str());
        let ended = end.events_of("session_ended");
        assert_eq!(
            ended.last().map(|e| &e["completed"]),
            Some(&Value::Bool(true))
        );
        assert!(ended.iter().all(|e| e["completed"] == true), "{ended:?}");
    }
    let session_id = host_end.field("session_id").as_str().unwrap().to_string();
    assert_eq!(guest_end.field("session_id"), session_id.as_str());
    assert_eq!(host_end.field("peer_public_key"), bob.public_key().as_str());
    assert_eq!(
        guest_end.field("peer_public_key"),
        alice.public_key().as_str()
    );
    let winner = host_end.field("winner").as_str().map(str::to_string);
    assert_eq!(guest_end.field("winner"), host_end.field("winner"));
    if end_roots(&host_end, &guest_end) {
        // mental poker: both audits passed and each verified the other's receipt.
        assert_eq!(host_end.events_of("audit_passed").len(), 1);
    }
    let record = alice.server_session(&session_id);
    assert_server_session(&record, "closed", winner.as_deref());
    assert_eq!(record["post_id"], post_id.as_str());
    winner
}

/// Whether both ends verified a receipt (mental poker), and then over the same root.
fn end_roots(host: &SessionFiles, guest: &SessionFiles) -> bool {
    let root = |end: &SessionFiles| {
        end.events_of("mp_terminal_receipt_verified")
            .first()
            .map(|event| event["transcript_hash"].clone())
    };
    let (host_root, guest_root) = (root(host), root(guest));
    assert_eq!(host_root, guest_root);
    host_root.is_some()
}

#[test]
fn rock_paper_scissors_completes_between_two_processes() {
    let winner = play("rock-paper-scissors", r#"{"best_of": 3}"#);
    assert!(matches!(winner.as_deref(), Some("host" | "guest" | "draw")));
}

#[test]
fn guess_number_completes_between_two_processes() {
    let winner = play("guess-number", "{}");
    assert!(matches!(winner.as_deref(), Some("host" | "guest")));
}

#[test]
fn thirty_one_is_dealt_and_audited_between_two_processes() {
    let winner = play("thirty-one", r#"{"hand_size": 4}"#);
    assert!(matches!(winner.as_deref(), Some("host" | "guest" | "draw")));
}

#[test]
fn text_transform_completes_between_two_processes() {
    assert_eq!(play("text-transform", "{}"), None);
}

/// Free mode driven through stdin: the host says a line, the guest answers and quits.
#[test]
fn chat_lines_typed_on_stdin_reach_the_peer_and_quit_ends_both() {
    let net = Net::start();
    let (alice, bob) = (net.agent("alice"), net.agent("bob"));
    let (mut host, post_id) = alice.host("chat", &[]);
    let mut guest = bob.join(&post_id, &[]);
    host.wait_for_line("peer_joined", SESSION_LIMIT);
    guest.wait_for_line("peer_joined", SESSION_LIMIT);
    host.say("hello from the host ✓");
    guest.wait_for_line("hello from the host ✓", SESSION_LIMIT);
    guest.say("hi host, the guest here");
    host.wait_for_line("hi host, the guest here", SESSION_LIMIT);
    // A peer's escape sequence (here: retitle the terminal) is shown, not obeyed.
    host.say("\u{1b}]0;owned\u{7} and \u{1b}[2J");
    guest.wait_for_line("\\x1b]0;owned\\x07 and \\x1b[2J", SESSION_LIMIT);
    guest.say("/quit");
    let guest = guest.succeed(SESSION_LIMIT);
    assert!(!guest.stdout.contains('\u{1b}'), "{}", guest.stdout);
    host.succeed(SESSION_LIMIT);
    let (host_end, guest_end) = (alice.session("host"), bob.session("guest"));
    for end in [&host_end, &guest_end] {
        assert_eq!(end.status(), "closed", "{}", end.info);
    }
    let sent_by = |end: &SessionFiles, direction: &str| -> Vec<Value> {
        end.events_of("protocol_message")
            .into_iter()
            .filter(|m| m["direction"] == direction)
            .map(|m| m["msg"].clone())
            .collect()
    };
    let guest_received = sent_by(&guest_end, "received");
    assert!(
        guest_received
            .iter()
            .any(|m| m["text"] == "hello from the host ✓"),
        "{guest_received:?}"
    );
    assert_eq!(
        sent_by(&host_end, "received").last(),
        Some(&serde_json::json!({"action": "end"}))
    );
    let session_id = host_end.field("session_id").as_str().unwrap();
    assert_server_session(&alice.server_session(session_id), "closed", None);
}

/// `aigenora host --direct` + `aigenora guest --iroh-ticket`: no server, no invitation, no
/// handshake, both by explicit choice; the sides skip the server reports.
#[test]
fn a_direct_guest_plays_a_direct_host_by_its_ticket() {
    let net = Net::start();
    let (alice, bob) = (net.agent("alice"), net.agent("bob"));
    let host = Proc::spawn(
        "host",
        alice.command(&[
            "host",
            "--direct",
            "--protocol-dir",
            "guess-number",
            "--options",
            r#"{"secret": 42, "max_attempts": 10}"#,
        ]),
    );
    let line = host.wait_for_line("ticket: ", SESSION_LIMIT);
    let ticket = line.trim_start_matches("ticket: ").trim().to_string();
    let guest = Proc::spawn(
        "guest",
        bob.command(&[
            "guest",
            "--protocol-dir",
            "guess-number",
            "--iroh-ticket",
            &ticket,
        ]),
    );
    let (host, guest) = (host.finish(SESSION_LIMIT), guest.finish(SESSION_LIMIT));
    assert!(
        host.status.success() && guest.status.success(),
        "{}\n{}",
        host.stderr,
        guest.stderr
    );
    assert!(
        guest.stdout.contains("the secret was 42"),
        "{}",
        guest.stdout
    );
    let (host_end, guest_end) = (alice.session("host"), bob.session("guest"));
    assert_eq!(
        (host_end.status(), guest_end.status()),
        ("closed", "closed")
    );
    assert_eq!(host_end.field("winner"), guest_end.field("winner"));
    assert!(
        host_end.field("session_id").is_null() && host_end.field("post_id").is_null(),
        "a direct session has no invitation and no server session: {}",
        host_end.info
    );
    assert_eq!(host_end.field("mode"), "direct");
}
