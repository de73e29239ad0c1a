//! Mental poker against the reference client (`aigenora==0.1.4`, never skipped), through our
//! server. With the reference hooks on both sides (our engine running them): the reference
//! hosts its Crazy Eights and our guest joins, and our host deals Briscola to a reference
//! guest. With our own hooks for the two contracts (`src/protocols/well_known/`, installed by
//! `join` and `host --protocol` from the spec on the server) against the reference's hooks,
//! in both roles. Each time both audits pass, both sides end `closed`, they verify each
//! other's receipts over one transcript root, and the server holds the winner both reported.

use crate::support::net::{Agent, Net, SESSION_LIMIT, SessionFiles, assert_server_session};
use crate::support::reference::{ReferenceAgent, install_reference_protocol, library_dir};

const CRAZY_EIGHTS: &str = "3a3c352ac09a83a3c0877a5585fcd8c03fa4b85b873601f2fe3ba734474a64ae";
const BRISCOLA: &str = "f508d605c7dc9c8aeffd7bf1441e283ebe9ed83c768e36c05d02e056cdd51867";

/// As [`setup_ours`], and our agent has the reference's own hooks for the contract.
fn setup(protocol_id: &str) -> (Net, Agent, ReferenceAgent) {
    let (net, bob, carol) = setup_ours(protocol_id);
    install_reference_protocol(&bob, protocol_id);
    (net, bob, carol)
}

/// The transcript root a side verified in its peer's receipt.
fn verified_root(side: &SessionFiles) -> String {
    let verified = side.events_of("mp_terminal_receipt_verified");
    assert_eq!(verified.len(), 1, "{:?}", side.events);
    assert_eq!(verified[0]["peer_signature_ok"], true);
    verified[0]["transcript_hash"].as_str().unwrap().to_string()
}

/// Both sides passed their audits over one root; returns the winner both reported (Crazy
/// Eights has none when it stalls with equal hands).
fn agreed(ours: &SessionFiles, theirs: &SessionFiles) -> Option<String> {
    assert_eq!(ours.status(), "closed", "ours: {}", ours.info);
    assert_eq!(ours.events_of("audit_passed").len(), 1);
    assert_eq!(
        theirs.events_of("audit_passed").len(),
        1,
        "{:?}",
        theirs.events
    );
    assert_eq!(verified_root(ours), verified_root(theirs));
    let ended = theirs.events_of("session_ended");
    assert_eq!(
        ended.last().map(|end| &end["completed"]),
        Some(&true.into())
    );
    ours.field("winner").as_str().map(str::to_string)
}

#[test]
fn reference_host_deals_crazy_eights_to_our_guest() {
    let (_net, bob, carol) = setup(CRAZY_EIGHTS);
    let protocol_dir = carol.protocol_dir(CRAZY_EIGHTS);
    let (hosting, reference) =
        carol.daemon(&["host", "--protocol-dir", protocol_dir.to_str().unwrap()]);
    let post_id = hosting["post_id"].as_str().unwrap();
    let guest = bob.join(post_id, &[]).succeed(SESSION_LIMIT);
    assert_eq!(
        guest.stdout.lines().last(),
        Some("done"),
        "{}",
        guest.stdout
    );
    let ours = bob.session("guest");
    let theirs = reference.wait_reference_end();
    let winner = agreed(&ours, &theirs);
    let server = bob.server_session(ours.field("session_id").as_str().unwrap());
    assert_server_session(&server, "closed", winner.as_deref());
}

#[test]
fn our_host_deals_briscola_to_a_reference_guest() {
    let (_net, bob, carol) = setup(BRISCOLA);
    let protocol_dir = library_dir(&bob.dir, BRISCOLA);
    let (host, post_id) = bob.host(protocol_dir.to_str().unwrap(), &[]);
    let (_joining, reference) = carol.daemon(&["join", &post_id]);
    host.succeed(SESSION_LIMIT);
    let ours = bob.session("host");
    let theirs = reference.wait_reference_end();
    let winner = agreed(&ours, &theirs);
    let server = bob.server_session(ours.field("session_id").as_str().unwrap());
    assert_server_session(&server, "closed", winner.as_deref());
}

/// A server with the contract registered by a reference agent, and our agent with an empty
/// library (so `join` and `host --protocol` bring our hooks).
fn setup_ours(protocol_id: &str) -> (Net, Agent, ReferenceAgent) {
    let net = Net::start();
    let carol = net.reference_agent("carol");
    carol.register_protocol(protocol_id);
    let bob = net.agent("bob");
    (net, bob, carol)
}

/// Our hooks for `alias` against the reference's, the reference hosting and then our host:
/// each game completes with the same winner on both sides and on the server.
fn our_card_hooks_play_the_reference_both_ways(alias: &str, protocol_id: &str) {
    {
        let (_net, bob, carol) = setup_ours(protocol_id);
        let protocol_dir = carol.protocol_dir(protocol_id);
        let (hosting, reference) =
            carol.daemon(&["host", "--protocol-dir", protocol_dir.to_str().unwrap()]);
        let guest = bob
            .join(hosting["post_id"].as_str().unwrap(), &[])
            .succeed(SESSION_LIMIT);
        assert!(guest.stdout.contains("(well-known)"), "{}", guest.stdout);
        let ours = bob.session("guest");
        assert_eq!(ours.field("protocol_source"), "well-known", "{}", ours.info);
        let winner = agreed(&ours, &reference.wait_reference_end());
        let server = bob.server_session(ours.field("session_id").as_str().unwrap());
        assert_server_session(&server, "closed", winner.as_deref());
    }
    {
        let (_net, bob, carol) = setup_ours(protocol_id);
        let (host, post_id) = bob.host_with(&["--protocol", alias]);
        let (joining, reference) = carol.daemon(&["join", &post_id]);
        assert_eq!(joining["protocol_id"], protocol_id);
        host.succeed(SESSION_LIMIT);
        let ours = bob.session("host");
        assert_eq!(ours.field("protocol_source"), "well-known", "{}", ours.info);
        let winner = agreed(&ours, &reference.wait_reference_end());
        let server = bob.server_session(ours.field("session_id").as_str().unwrap());
        assert_server_session(&server, "closed", winner.as_deref());
    }
}

#[test]
fn our_crazy_eights_hooks_play_the_reference_hooks_both_ways() {
    our_card_hooks_play_the_reference_both_ways("crazy-eights-v1", CRAZY_EIGHTS);
}

#[test]
fn our_briscola_hooks_play_the_reference_hooks_both_ways() {
    our_card_hooks_play_the_reference_both_ways("briscola-v1", BRISCOLA);
}
