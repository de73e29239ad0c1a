//! Our `join` and `host` processes against a misbehaving peer built from the library: garbage
//! and oversized frames, tampered and replayed session proofs, skipped handshakes and
//! impersonation. A guest must stop cleanly with the reason on disk and register nothing it
//! should not; a host refuses the bad dialer and keeps its invitation for the real guest.

use aigenora::api::session::{NewSession, SessionStatus};
use aigenora::identity::load_key_file;
use serde_json::{Value, json};

use crate::support::fake::{FakeGuest, FakeHost, Wire};
use crate::support::net::{
    Agent, Net, SESSION_LIMIT, SessionFiles, offered_after, real_guest_plays, wait_until,
};
use crate::support::process::Proc;
use crate::support::server::signed;

fn guess_number() -> String {
    aigenora::protocols::find("guess-number")
        .unwrap()
        .spec()
        .protocol_id()
}

/// Whether the server knows the session this `_session_init` would have opened.
fn server_knows_session(net: &Net, fake: &FakeHost, init: &Value) -> bool {
    let session_id = aigenora::identity::session_id(&fake.canonical(init));
    fake.block_on(signed(
        net.url(),
        &fake.identity,
        "GET",
        &format!("/api/v1/sessions/{session_id}"),
        &Value::Null,
    ))
    .status
        != 404
}

/// Our guest gets a valid proof, registers the session, joins, and then receives `bytes`.
fn guest_receives_after_the_handshake(bytes: &[u8]) -> (SessionFiles, String, Value) {
    let net = Net::start();
    let bob = net.agent("bob");
    let fake = FakeHost::publish(&net, &guess_number());
    let guest = bob.join(&fake.post_id, &[]);
    let mut wire = fake.accept();
    let init = wire.next_frame();
    wire.send(&fake.proof(&init));
    let ready = wire.next_frame();
    assert_eq!(ready["_session_ready"], true, "{ready}");
    assert_eq!(wire.next_frame()["action"], "join");
    wire.write_until_refused(bytes);
    let ended = guest.finish(SESSION_LIMIT);
    assert!(!ended.status.success());
    wire.wait_closed();
    let end = bob.session("guest");
    let record = bob.server_session(ready["session_id"].as_str().unwrap());
    (end, ended.stderr, record)
}

fn assert_guest_crashed_on(end: &SessionFiles, stderr: &str, record: &Value, why: &str) {
    assert_eq!(end.status(), "crashed", "{}", end.info);
    let reason = end.field("end_reason").as_str().unwrap();
    assert!(reason.contains(why), "{reason}");
    assert!(stderr.contains(why), "{stderr}");
    let ended = end.events_of("session_ended");
    assert_eq!(ended.last().unwrap()["reason"], "engine_error", "{ended:?}");
    assert_eq!(
        record["status"], "failed",
        "the guest reports the failure: {record}"
    );
}

#[test]
fn garbage_after_a_valid_proof_crashes_the_guest_cleanly() {
    let (end, stderr, record) = guest_receives_after_the_handshake(b"this is not json\n");
    assert_guest_crashed_on(&end, &stderr, &record, "invalid message from the peer");
}

#[test]
fn an_oversized_frame_after_a_valid_proof_crashes_the_guest_cleanly() {
    let mut huge = vec![b'x'; 8 * 1024 * 1024 + 1];
    huge.push(b'\n');
    let (end, stderr, record) = guest_receives_after_the_handshake(&huge);
    assert_guest_crashed_on(&end, &stderr, &record, "exceeds");
}

/// Every way of tampering with the proof is refused before anything is registered.
#[test]
fn tampered_session_proofs_are_refused_and_register_nothing() {
    let net = Net::start();
    let bob = net.agent("bob");
    let fake = FakeHost::publish(&net, &guess_number());
    let impostor = aigenora::identity::Identity::generate();
    type Tamper = fn(&FakeHost, &aigenora::identity::Identity, &Value) -> Value;
    let cases: [(Tamper, &str); 4] = [
        (
            |fake, _, init| {
                let mut proof = fake.proof(init);
                let signature = proof["host_signature"].as_str().unwrap();
                let flipped = if signature.starts_with('0') { "1" } else { "0" };
                proof["host_signature"] = json!(format!("{flipped}{}", &signature[1..]));
                proof
            },
            "host session signature",
        ),
        (
            |fake, _, init| {
                let mut proof = fake.proof(init);
                proof["protocol_id"] = json!("ab".repeat(32));
                proof
            },
            "but the invitation is for",
        ),
        (
            |fake, impostor, init| {
                let canonical = fake
                    .canonical(init)
                    .replace(fake.identity.public_key(), impostor.public_key());
                json!({"_session_proof": true, "host_public_key": impostor.public_key(),
                    "host_signature": impostor.sign_hex(canonical.as_bytes()),
                    "protocol_id": fake.protocol_id, "host_control_mode": "hybrid"})
            },
            "but the invitation was created by",
        ),
        (
            |fake, _, init| {
                let mut proof = fake.proof(init);
                proof["_session_proof"] = json!("yes");
                proof
            },
            "did not return a session proof",
        ),
    ];
    for (tamper, why) in cases {
        let guest = bob.join(&fake.post_id, &[]);
        let mut wire = fake.accept();
        let init = wire.next_frame();
        wire.send(&tamper(&fake, &impostor, &init));
        wire.wait_closed();
        let ended = guest.finish(SESSION_LIMIT);
        assert!(!ended.status.success());
        assert_eq!(ended.stderr.lines().count(), 1, "{}", ended.stderr);
        assert!(
            ended.stderr.starts_with("error: handshake failed: ") && ended.stderr.contains(why),
            "{}",
            ended.stderr
        );
        assert!(!server_knows_session(&net, &fake, &init));
    }
    let invitation = fake
        .block_on(fake.client.invitation(&fake.post_id))
        .unwrap();
    assert_eq!(invitation.status, "active");
    let ends = bob.session_dirs("guest");
    assert_eq!(ends.len(), 4);
    for dir in ends {
        let end = SessionFiles::read(&dir);
        assert_eq!(end.status(), "failed", "{}", end.info);
        assert_eq!(end.events_of("handshake_failed").len(), 1);
        assert!(end.events_of("peer_joined").is_empty());
    }
}

/// A proof recorded in one session does not verify in the next (it signs the earlier post
/// and nonce, not the guest's fresh ones), and the server refuses to register the first
/// session twice. (A matched invitation cannot be joined again: the server answers 409.)
#[test]
fn a_replayed_proof_is_refused_and_a_duplicate_registration_too() {
    let net = Net::start();
    let bob = net.agent("bob");
    let mut fake = FakeHost::publish(&net, &guess_number());

    let first_post = fake.post_id.clone();
    let first = bob.join(&first_post, &[]);
    let mut wire: Wire = fake.accept();
    let first_init = wire.next_frame();
    let recorded = fake.proof(&first_init);
    wire.send(&recorded);
    let ready = wire.next_frame();
    assert_eq!(ready["_session_ready"], true);
    drop(wire);
    assert!(!first.finish(SESSION_LIMIT).status.success());

    fake.publish_again();
    let second = bob.join(&fake.post_id, &[]);
    let mut wire = fake.accept();
    let second_init = wire.next_frame();
    assert_ne!(second_init["session_nonce"], first_init["session_nonce"]);
    wire.send(&recorded);
    wire.wait_closed();
    let ended = second.finish(SESSION_LIMIT);
    assert!(
        ended.stderr.contains("host session signature"),
        "{}",
        ended.stderr
    );
    assert!(!server_knows_session(&net, &fake, &second_init));

    let guest = load_key_file(&aigenora::layout::DataDir::new(&bob.dir)).unwrap();
    let register = |post_id: &str, nonce: &Value| {
        let session = NewSession::signed_by_guest(
            &guest,
            post_id,
            fake.identity.public_key(),
            &fake.protocol_id,
            nonce.as_str().unwrap(),
            recorded["host_signature"].as_str().unwrap(),
        );
        let body = serde_json::to_value(&session).unwrap();
        fake.block_on(signed(net.url(), &guest, "POST", "/api/v1/sessions", &body))
    };
    let duplicate = register(&first_post, &first_init["session_nonce"]);
    assert_eq!(duplicate.status, 409, "{:?}", duplicate.body);
    assert_eq!(duplicate.body["error"], "invitation_matched");
    let replayed = register(&fake.post_id, &second_init["session_nonce"]);
    assert_eq!(replayed.status, 400, "{:?}", replayed.body);
    assert_eq!(replayed.body["error"], "invalid_session_signature");
    assert_eq!(
        bob.server_session(ready["session_id"].as_str().unwrap())["status"],
        "failed"
    );
}

/// A dialer whose first frame is not a session init (garbage, or a line over the
/// handshake's size limit) is refused with a reason and recorded; the host keeps its
/// invitation, and the real guest that joins next plays it to the end.
fn host_refuses_first_frame_and_keeps_hosting(bytes: &[u8], why: &str) {
    let net = Net::start();
    let (alice, bob) = (net.agent("alice"), net.agent("bob"));
    let (host, post_id) = alice.host("guess-number", &[]);
    let client = net
        .server
        .client(&load_key_file(&aigenora::layout::DataDir::new(&alice.dir)).unwrap());
    let fake = FakeGuest::new();
    let mut wire = fake.dial(&client, &post_id);
    wire.write_until_refused(bytes);
    wire.wait_closed();
    let refused = wait_until(SESSION_LIMIT, || {
        let files = SessionFiles::read(&alice.session_dirs("host")[0]);
        files
            .events_of("guest_refused")
            .first()
            .map(|refused| refused["reason"].as_str().unwrap().to_string())
    })
    .expect("the host records the refused dialer");
    assert!(refused.contains(why), "{refused}");
    let invitation: Value =
        serde_json::from_str(&alice.ok(&["browse", "--post-id", &post_id, "--json"])).unwrap();
    assert_eq!(invitation["status"], "active", "{invitation}");

    let guest = bob.join(&post_id, &[]).succeed(SESSION_LIMIT);
    let host = host.succeed(SESSION_LIMIT);
    assert!(guest.stdout.contains("peer_joined: "), "{}", guest.stdout);
    let end = alice.session("host");
    assert_eq!(end.status(), "closed", "{}", end.info);
    assert_eq!(end.events_of("guest_refused").len(), 1, "{}", host.stdout);
    assert_eq!(end.events_of("peer_joined").len(), 1);
}

#[test]
fn garbage_instead_of_a_session_init_is_refused_and_the_host_keeps_hosting() {
    host_refuses_first_frame_and_keeps_hosting(
        b"\x00\xffnot json at all\n",
        "malformed _session_init",
    );
}

#[test]
fn an_oversized_session_init_is_refused_and_the_host_keeps_hosting() {
    let mut huge = b"{\"_session_init\":true,\"pad\":\"".to_vec();
    huge.resize(9 * 1024 * 1024, b'a');
    huge.extend_from_slice(b"\"}\n");
    host_refuses_first_frame_and_keeps_hosting(&huge, "exceeds the 16384-byte limit");
}

/// A dialer that skips the handshake (a direct guest) gets the reason in a refusal frame,
/// not a game: a published invitation is only played after the session handshake. The
/// real guest plays next.
#[test]
fn a_direct_guest_is_refused_by_a_published_invitation_and_the_real_guest_plays() {
    let net = Net::start();
    let alice = net.agent("alice");
    let (host, post_id) = alice.host("guess-number", &[]);
    let client = net
        .server
        .client(&load_key_file(&aigenora::layout::DataDir::new(&alice.dir)).unwrap());
    let fake = FakeGuest::new();
    let mut wire = fake.dial(&client, &post_id);
    wire.send(&json!({"action": "guess", "value": 50}));
    let refusal = wire.next_frame();
    assert_eq!(refusal["_session_error"], true, "{refusal}");
    assert!(
        refusal["reason"]
            .as_str()
            .unwrap()
            .contains("is not a _session_init"),
        "{refusal}"
    );
    wire.wait_closed();
    let end = SessionFiles::read(&alice.session_dirs("host")[0]);
    assert_eq!(end.status(), "hosting", "{}", end.info);
    assert!(end.events_of("protocol_message").is_empty());
    real_guest_plays_after_one_refusal(&net, host, &alice, &post_id);
}

/// After a refused dialer, the real guest joins the same invitation and plays it to the
/// end; the host recorded exactly one refusal.
fn real_guest_plays_after_one_refusal(net: &Net, host: Proc, alice: &Agent, post_id: &str) {
    let end = real_guest_plays(host, alice, &net.agent("bob"), post_id);
    assert_eq!(end.events_of("guest_refused").len(), 1, "{}", end.info);
}

/// A dialer that presents another agent's key and computes `_session_ready` itself gets a
/// valid proof but no game: the server has no such session, so the host refuses it and
/// keeps the invitation for the real guest.
#[test]
fn an_impersonated_guest_is_refused_after_the_server_check_and_the_real_guest_plays() {
    let net = Net::start();
    let (alice, victim) = (net.agent("alice"), net.agent("victim"));
    let (host, post_id) = alice.host("guess-number", &[]);
    let client = net
        .server
        .client(&load_key_file(&aigenora::layout::DataDir::new(&alice.dir)).unwrap());
    let fake = FakeGuest::new();
    let mut wire = fake.dial(&client, &post_id);
    wire.send(
        &json!({"_session_init": true, "guest_public_key": victim.public_key(),
        "session_nonce": "0123456789abcdef", "guest_control_mode": "autonomous"}),
    );
    let proof = wire.next_frame();
    assert_eq!(proof["_session_proof"], true, "{proof}");
    let canonical = aigenora::identity::session_canonical(
        &post_id,
        proof["host_public_key"].as_str().unwrap(),
        &victim.public_key(),
        proof["protocol_id"].as_str().unwrap(),
        "0123456789abcdef",
    );
    let session_id = aigenora::identity::session_id(&canonical);
    wire.send(&json!({"_session_ready": true, "session_id": session_id}));
    let refusal = wire.next_frame();
    assert_eq!(refusal["_session_error"], true, "{refusal}");
    assert!(
        refusal["reason"]
            .as_str()
            .unwrap()
            .contains("has no session"),
        "{refusal}"
    );
    wire.wait_closed();
    let end = SessionFiles::read(&alice.session_dirs("host")[0]);
    assert_eq!(end.status(), "hosting", "{}", end.info);
    assert!(end.events_of("peer_joined").is_empty(), "{}", end.info);
    assert_eq!(end.events_of("guest_refused").len(), 1);
    real_guest_plays_after_one_refusal(&net, host, &alice, &post_id);
}

/// A `_session_ready` that names another session than the one both signatures cover is
/// refused with its reason, without asking the server; the real guest plays next.
#[test]
fn a_ready_naming_another_session_is_refused() {
    let net = Net::start();
    let alice = net.agent("alice");
    let (host, post_id) = alice.host("guess-number", &[]);
    let client = net
        .server
        .client(&load_key_file(&aigenora::layout::DataDir::new(&alice.dir)).unwrap());
    let fake = FakeGuest::new();
    let mut wire = fake.dial(&client, &post_id);
    let key = aigenora::identity::Identity::generate();
    let proof = wire.init(key.public_key(), "0123456789abcdef");
    assert_eq!(proof["_session_proof"], true, "{proof}");
    wire.send(&json!({"_session_ready": true, "session_id": "f".repeat(64)}));
    let refusal = wire.next_frame();
    let reason = refusal["reason"].as_str().unwrap();
    assert!(
        reason.contains(&format!(
            "_session_ready names session \"{}\", expected",
            "f".repeat(64)
        )),
        "{refusal}"
    );
    wire.wait_closed();
    real_guest_plays_after_one_refusal(&net, host, &alice, &post_id);
}

/// A registered dialer whose session has already ended by the time it says ready (it ended
/// the session itself) is refused: the server's session is not `matched`. The session
/// closed the invitation, so the host offers a fresh one, on which the real guest plays.
#[test]
fn a_session_ended_before_ready_is_refused_and_costs_one_invitation() {
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
    let mallory_client = net.server.client(&mallory_key);
    fake.block_on(mallory_client.set_session_status(&session_id, SessionStatus::Failed, None))
        .unwrap();
    wire.send(&json!({"_session_ready": true, "session_id": session_id}));
    let refusal = wire.next_frame();
    assert!(
        refusal["reason"]
            .as_str()
            .unwrap()
            .contains("is failed, not matched"),
        "{refusal}"
    );
    let taken = host.wait_for_line("invitation_taken: ", SESSION_LIMIT);
    assert!(
        taken.contains(&format!(
            "invitation {post_id}: taken by session {session_id}"
        )),
        "{taken}"
    );
    let fresh = offered_after(&host, &post_id);
    real_guest_plays(host, &alice, &bob, &fresh);
}
