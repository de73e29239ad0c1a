//! A host whose invitation ends without a game does not wait forever. A dialer that
//! registered a session for it (so the server offers it to nobody else) and then failed the
//! handshake costs the host that invitation: it offers a fresh one, and the real guest plays
//! (up to `MAX_REOFFERS` times). An invitation that expired, or that someone matched behind
//! the host's back, ends the host with one clear line, a non-zero exit and a final `failed`
//! session.

use std::time::{Duration, Instant};

use aigenora::identity::load_key_file;
use aigenora::session::host::MAX_REOFFERS;
use serde_json::Value;

use crate::support::fake::{FakeGuest, Wire};
use crate::support::net::{
    Agent, Net, SESSION_LIMIT, SessionFiles, offered_after, real_guest_plays, wait_until,
};
use crate::support::process::Proc;
use crate::support::server::TestServer;

/// How the host ended: its one error line, and what it left on disk.
fn host_failed(host: Proc, alice: &Agent) -> (String, SessionFiles) {
    let ended = host.finish(SESSION_LIMIT);
    assert!(!ended.status.success(), "{}", ended.stdout);
    assert_eq!(ended.stderr.lines().count(), 1, "{}", ended.stderr);
    let end = alice.session("host");
    assert_eq!(end.status(), "failed", "{}", end.info);
    assert!(end.field("ended_at").is_string(), "{}", end.info);
    (ended.stderr.trim().to_string(), end)
}

/// The invitation as its creator reads it (others are refused one no longer offered).
fn server_invitation(net: &Net, creator: &Agent, post_id: &str) -> Value {
    let reader = net
        .server
        .client(&load_key_file(&aigenora::layout::DataDir::new(&creator.dir)).unwrap());
    let fake = FakeGuest::new();
    let invitation = fake.block_on(reader.invitation(post_id));
    serde_json::to_value(invitation.expect("the invitation")).unwrap()
}

/// A registered dialer gets the proof, registers its session (the invitation is matched
/// now) and then, instead of `_session_ready`, does `misbehave`. The host refuses it,
/// reports that session failed (which closes the invitation on the server), offers a fresh
/// invitation, and the real guest joins that one and plays.
fn registered_dialer_then(misbehave: impl FnOnce(&mut Wire), why: &str) {
    let net = Net::start();
    let (alice, bob, mallory) = (net.agent("alice"), net.agent("bob"), net.agent("mallory"));
    let (host, post_id) = alice.host("guess-number", &[]);
    let client = net
        .server
        .client(&load_key_file(&aigenora::layout::DataDir::new(&alice.dir)).unwrap());
    let fake = FakeGuest::new();
    let mut wire = fake.dial(&client, &post_id);
    let mallory_key = load_key_file(&aigenora::layout::DataDir::new(&mallory.dir)).unwrap();
    let session_id = wire.register(net.url(), &mallory_key, &post_id);
    misbehave(&mut wire);
    let refusal = wire.next_frame();
    assert_eq!(refusal["_session_error"], true, "{refusal}");

    let taken = host.wait_for_line("invitation_taken: ", SESSION_LIMIT);
    assert!(
        taken.contains(&format!(
            "invitation {post_id}: taken by session {session_id}, whose guest then failed the \
             handshake"
        )) && taken.contains(why),
        "{taken}"
    );
    let fresh = offered_after(&host, &post_id);
    assert_eq!(mallory.server_session(&session_id)["status"], "failed");
    assert_eq!(
        server_invitation(&net, &alice, &post_id)["status"],
        "closed"
    );
    let end = real_guest_plays(host, &alice, &bob, &fresh);
    assert_eq!(end.field("post_id"), fresh.as_str(), "{}", end.info);
    assert_eq!(end.events_of("guest_refused").len(), 1, "{}", end.info);
    assert_eq!(end.events_of("invite_created").len(), 2, "{}", end.info);
}

#[test]
fn a_registered_dialer_sending_garbage_instead_of_ready_costs_one_invitation() {
    registered_dialer_then(
        |wire| wire.write_until_refused(b"not json\n"),
        "malformed _session_ready",
    );
}

#[test]
fn a_registered_dialer_that_goes_silent_costs_one_invitation_after_the_handshake_timeout() {
    let started = Instant::now();
    registered_dialer_then(|_| {}, "no _session_ready within 30 s");
    assert!(started.elapsed() >= Duration::from_secs(30));
}

/// Dialers that keep taking invitations and failing end the host after
/// `MAX_REOFFERS` fresh ones, with the last one's reason.
#[test]
fn a_host_gives_up_after_its_fresh_invitations_are_taken_too() {
    let net = Net::start();
    let (alice, mallory) = (net.agent("alice"), net.agent("mallory"));
    let (host, mut post_id) = alice.host("guess-number", &[]);
    let client = net
        .server
        .client(&load_key_file(&aigenora::layout::DataDir::new(&alice.dir)).unwrap());
    let mallory_key = load_key_file(&aigenora::layout::DataDir::new(&mallory.dir)).unwrap();
    let fake = FakeGuest::new();
    let offers = MAX_REOFFERS + 1;
    for offer in 1..=offers {
        let mut wire = fake.dial(&client, &post_id);
        wire.register(net.url(), &mallory_key, &post_id);
        wire.write_until_refused(b"not json\n");
        if offer < offers {
            post_id = offered_after(&host, &post_id);
        }
    }
    let (error, end) = host_failed(host, &alice);
    assert!(
        error.starts_with(&format!("error: invitation {post_id}: taken by session ")),
        "{error}"
    );
    assert_eq!(
        end.events_of("invite_created").len(),
        offers as usize,
        "{}",
        end.info
    );
    assert_eq!(
        server_invitation(&net, &alice, &post_id)["status"],
        "closed"
    );
}

/// An invitation that is not renewed ends when the server stops offering it.
#[test]
fn a_host_whose_invitation_expires_ends_with_the_reason() {
    let net = Net {
        server: TestServer::start(&["--pow-difficulty", "1", "--invitation-ttl-seconds", "3"]),
        work: tempfile::tempdir().unwrap(),
    };
    let alice = net.agent("alice");
    let started = Instant::now();
    let (host, post_id) = alice.host("guess-number", &["--no-invitation-renew"]);
    let (error, _) = host_failed(host, &alice);
    assert_eq!(
        error,
        format!("error: invitation {post_id}: expired before a guest joined")
    );
    assert!(started.elapsed() < Duration::from_secs(30));
}

/// A dialer gets the proof and leaves; only afterwards is its session registered, so the
/// host's check of the dialer found nothing. The next renewal finds the invitation matched
/// and the host, with no handshake under way, ends.
#[test]
fn an_invitation_matched_behind_the_hosts_back_ends_the_host_at_the_next_renewal() {
    let net = Net::start();
    let (alice, mallory) = (net.agent("alice"), net.agent("mallory"));
    let (host, post_id) = alice.host("guess-number", &["--renew-interval-seconds", "1"]);
    let client = net
        .server
        .client(&load_key_file(&aigenora::layout::DataDir::new(&alice.dir)).unwrap());
    let fake = FakeGuest::new();
    let mut wire = fake.dial(&client, &post_id);
    let mallory_key = load_key_file(&aigenora::layout::DataDir::new(&mallory.dir)).unwrap();
    let proof = wire.init(mallory_key.public_key(), "00112233445566778899aabbccddeeff");
    assert_eq!(proof["_session_proof"], true, "{proof}");
    drop(wire);
    wait_until(SESSION_LIMIT, || {
        let files = SessionFiles::read(&alice.session_dirs("host")[0]);
        (!files.events_of("guest_refused").is_empty()).then_some(())
    })
    .expect("the host refuses the dialer that left");
    let session = aigenora::api::session::NewSession::signed_by_guest(
        &mallory_key,
        &post_id,
        proof["host_public_key"].as_str().unwrap(),
        proof["protocol_id"].as_str().unwrap(),
        "00112233445566778899aabbccddeeff",
        proof["host_signature"].as_str().unwrap(),
    );
    let mallory_client = net.server.client(&mallory_key);
    fake.block_on(mallory_client.create_session(&session))
        .expect("the late registration");

    let (error, end) = host_failed(host, &alice);
    assert!(
        error.starts_with(&format!("error: invitation {post_id}: no longer offered: "))
            && error.contains("already matched"),
        "{error}"
    );
    assert_eq!(end.events_of("invitation_renew_failed").len(), 1);
}
