//! Interop through OUR server with the reference client (`aigenora==0.1.4`, never skipped):
//! reference host ↔ our guest and our host ↔ reference guest, for the reference's own
//! Rock-Paper-Scissors and Guess Number, each side running its own copy of the reference
//! hooks. Each side must accept the other's invitation and session signatures, both must end
//! `closed`, and the server must hold the same winner reported by both.

use crate::support::net::{Agent, Net, SESSION_LIMIT, SessionFiles, assert_server_session};
use crate::support::reference::{
    REFERENCE_GUESS_NUMBER, REFERENCE_RPS, ReferenceAgent, install_reference_protocol, library_dir,
};

/// A server with the reference's spec registered, our agent with the protocol in its
/// library, and a reference agent with its own `init` library.
fn setup(protocol_id: &str) -> (Net, Agent, ReferenceAgent) {
    let net = Net::start();
    let carol = net.reference_agent("carol");
    carol.register_protocol(protocol_id);
    let bob = net.agent("bob");
    install_reference_protocol(&bob, protocol_id);
    (net, bob, carol)
}

/// Checks both ends and the server; returns the agreed winner.
fn agreed(ours: &SessionFiles, theirs: &SessionFiles, server: &serde_json::Value) -> String {
    assert_eq!(ours.status(), "closed", "ours: {}", ours.info);
    if theirs.is_final() {
        assert_eq!(theirs.status(), "closed", "reference: {}", theirs.info);
        assert_eq!(theirs.field("completed"), true);
    }
    let ended = theirs.events_of("session_ended");
    assert_eq!(
        ended.last().map(|end| &end["completed"]),
        Some(&serde_json::Value::Bool(true)),
        "reference: {:?}",
        theirs.events
    );
    // The reference host records the session id only in its peer_joined event.
    let joined = theirs.events_of("peer_joined");
    assert_eq!(ours.field("session_id"), &joined[0]["session_id"]);
    let winner = ours.field("winner").as_str().expect("a winner").to_string();
    assert_server_session(server, "closed", Some(&winner));
    winner
}

fn reference_hosts_our_guest_joins(protocol_id: &str) -> String {
    let (_net, bob, carol) = setup(protocol_id);
    let protocol_dir = carol.protocol_dir(protocol_id);
    let (hosting, reference) =
        carol.daemon(&["host", "--protocol-dir", protocol_dir.to_str().unwrap()]);
    assert_eq!(hosting["protocol_id"], protocol_id);
    let post_id = hosting["post_id"].as_str().unwrap();
    let guest = bob.join(post_id, &[]).succeed(SESSION_LIMIT);
    assert_eq!(
        guest.stdout.lines().last(),
        Some("done"),
        "{}",
        guest.stdout
    );
    let ours = bob.session("guest");
    assert_eq!(ours.field("protocol_source"), "library");
    let theirs = reference.wait_reference_end();
    let server = bob.server_session(ours.field("session_id").as_str().unwrap());
    agreed(&ours, &theirs, &server)
}

fn our_host_reference_guest_joins(protocol_id: &str) -> String {
    let (_net, bob, carol) = setup(protocol_id);
    let protocol_dir = library_dir(&bob.dir, protocol_id);
    let (host, post_id) = bob.host(protocol_dir.to_str().unwrap(), &[]);
    let (joining, reference) = carol.daemon(&["join", &post_id]);
    assert_eq!(joining["protocol_id"], protocol_id);
    host.succeed(SESSION_LIMIT);
    let ours = bob.session("host");
    let theirs = reference.wait_reference_end();
    assert_eq!(ours.field("session_id"), &joining["session_id"]);
    let server = bob.server_session(ours.field("session_id").as_str().unwrap());
    agreed(&ours, &theirs, &server)
}

#[test]
fn reference_host_and_our_guest_play_rock_paper_scissors() {
    let winner = reference_hosts_our_guest_joins(REFERENCE_RPS);
    assert!(["host", "guest", "draw"].contains(&winner.as_str()));
}

#[test]
fn reference_host_and_our_guest_play_guess_number() {
    let winner = reference_hosts_our_guest_joins(REFERENCE_GUESS_NUMBER);
    assert!(["host", "guest"].contains(&winner.as_str()));
}

#[test]
fn our_host_and_reference_guest_play_rock_paper_scissors() {
    let winner = our_host_reference_guest_joins(REFERENCE_RPS);
    assert!(["host", "guest", "draw"].contains(&winner.as_str()));
}

#[test]
fn our_host_and_reference_guest_play_guess_number() {
    let winner = our_host_reference_guest_joins(REFERENCE_GUESS_NUMBER);
    assert!(["host", "guest"].contains(&winner.as_str()));
}
