//! The reference client in the simulated internet. Its iroh node always uses n0's relays
//! (its `Iroh.memory()` node takes no relay setting, n0's relay URLs are built into its
//! iroh 0.35 and its TLS trusts only the public web PKI), which do not exist here. So:
//! - as guest it still goes through our relay: the host's ticket names it, and the
//!   reference's iroh sends to a peer through the relay its address names;
//! - as host it can name no relay but n0's (its iroh falls back to one it cannot reach), so
//!   it is reachable only where it has a public address (here: on the public network);
//!   behind a NAT nobody can reach it.

use crate::fixture::{Internet, RelaySetup, path_ip, paths, relay_url, relayed};
use crate::support::net::{SESSION_LIMIT, SessionFiles};
use crate::support::reference::{REFERENCE_RPS, install_reference_protocol, library_dir};
use crate::topology::{Options, PUBLIC_TOWARDS_A_IP, PUBLIC_TOWARDS_B_IP, Place};

/// Both ends completed the same session.
fn both_completed(ours: &SessionFiles, theirs: &SessionFiles) {
    assert_eq!(ours.status(), "closed", "ours: {}", ours.info);
    let ended = theirs.events_of("session_ended");
    assert_eq!(
        ended.last().map(|end| end["completed"].clone()),
        Some(serde_json::Value::Bool(true)),
        "reference: {:?}",
        theirs.events
    );
    let joined = theirs.events_of("peer_joined");
    assert_eq!(ours.field("session_id"), &joined[0]["session_id"]);
}

#[test]
fn a_reference_guest_behind_nat_joins_our_host_through_our_relay() {
    let internet = Internet::start(Options::default(), RelaySetup::Separate);
    let carol = internet.reference_agent("carol", Place::Guest);
    carol.register_protocol(REFERENCE_RPS);
    let alice = internet.agent("alice", Place::Host);
    install_reference_protocol(&alice, REFERENCE_RPS);
    let protocol_dir = library_dir(&alice.dir, REFERENCE_RPS);
    let (host, post_id) = alice.host(protocol_dir.to_str().unwrap(), &[]);
    let (joining, reference) = carol.daemon(&["join", &post_id]);
    assert_eq!(joining["protocol_id"], REFERENCE_RPS);
    host.succeed(SESSION_LIMIT);
    let ours = alice.session("host");
    both_completed(&ours, &reference.wait_reference_end());
    // The reference guest has no relay of its own here: it came in through ours.
    let paths = paths(&ours);
    assert!(paths.iter().any(relayed), "{paths:?}");
    assert!(
        paths
            .iter()
            .any(|path| path["relay_url"] == relay_url().as_str()),
        "{paths:?}"
    );
}

#[test]
fn our_guest_behind_nat_joins_a_reference_host_with_a_public_address() {
    let internet = Internet::start(Options::default(), RelaySetup::Separate);
    let carol = internet.reference_agent("carol", Place::Public);
    carol.register_protocol(REFERENCE_RPS);
    let bob = internet.agent("bob", Place::Guest);
    install_reference_protocol(&bob, REFERENCE_RPS);
    let protocol_dir = carol.protocol_dir(REFERENCE_RPS);
    let (hosting, reference) =
        carol.daemon(&["host", "--protocol-dir", protocol_dir.to_str().unwrap()]);
    let post_id = hosting["post_id"].as_str().unwrap();
    bob.join(post_id, &[]).succeed(SESSION_LIMIT);
    let ours = bob.session("guest");
    both_completed(&ours, &reference.wait_reference_end());
    // Its ticket names n0's relay (the one its iroh falls back to, unreachable here), never
    // ours: our guest reached it directly, at one of its public addresses (its ticket lists
    // both, and router B routes to both).
    let paths = paths(&ours);
    assert!(
        paths.iter().all(|path| path["relay_url"].is_null()
            || path["relay_url"]
                .as_str()
                .is_some_and(|url| url.ends_with(".relay.iroh.network./"))),
        "{paths:?}"
    );
    let last = paths.last().unwrap();
    assert_eq!(last["path"], "direct", "{paths:?}");
    let public = [PUBLIC_TOWARDS_B_IP, PUBLIC_TOWARDS_A_IP].map(|ip| ip.to_string());
    assert!(public.contains(&path_ip(last)), "{paths:?}");
}
