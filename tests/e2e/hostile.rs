//! Our host under attack on an open network, as real processes on loopback: dialers that
//! stay silent, stall mid-handshake or make the host ask the server about sessions nobody
//! registered must not keep the real guest out or cost the invitation, and an
//! authenticated peer that floods frames costs the host a bounded amount of memory.

use std::path::Path;
use std::time::{Duration, Instant};

use aigenora::identity::{Identity, load_key_file, session_canonical, session_id};
use aigenora::transport::Ticket;
use serde_json::json;

use crate::support::fake::{FakeGuest, Wire};
use crate::support::net::{Net, SESSION_LIMIT, SessionFiles, real_guest_plays, wait_until};
use crate::support::process::memory_kib;

/// Silent dialers (a stream and nothing more) and a stalling one (init, then no ready) hold
/// handshake slots, yet the real guest who dials meanwhile gets its own and plays.
#[test]
fn silent_and_stalling_dialers_do_not_keep_the_real_guest_out() {
    let net = Net::start();
    let (alice, bob) = (net.agent("alice"), net.agent("bob"));
    let (host, post_id) = alice.host("guess-number", &[]);
    let client = net
        .server
        .client(&load_key_file(&aigenora::layout::DataDir::new(&alice.dir)).unwrap());
    let fake = FakeGuest::new();
    let _silent = [fake.dial(&client, &post_id), fake.dial(&client, &post_id)];
    let mut stalling = fake.dial(&client, &post_id);
    stalling.send(
        &json!({"_session_init": true, "guest_public_key": "ab".repeat(32),
        "session_nonce": "0123456789abcdef", "guest_control_mode": "hybrid"}),
    );
    assert_eq!(stalling.next_frame()["_session_proof"], true);

    real_guest_plays(host, &alice, &bob, &post_id);
}

/// Twelve dialers that start a `_session_init` and never finish the line: four take the
/// handshake slots, four wait in the queue, and the rest are turned away at once as busy
/// (close code 1). Once they are gone, the real guest gets in and plays.
#[test]
fn dialers_beyond_the_handshake_cap_are_turned_away_and_the_real_guest_plays() {
    let net = Net::start();
    let (alice, bob) = (net.agent("alice"), net.agent("bob"));
    let (host, post_id) = alice.host("guess-number", &[]);
    let reader = net.server.client(&Identity::generate());
    let fake = FakeGuest::new();
    let ticket = fake.ticket(&reader, &post_id);
    let stalling: Vec<Wire> = (0..12)
        .map(|_| {
            let mut wire = fake.dial_ticket(&ticket);
            wire.write_until_refused(br#"{"_session_init": true, "guest_public_key": "#);
            wire
        })
        .collect();
    // A bounded poll of the dialers themselves: the host turns the last four away as busy.
    let mut closed: Vec<Option<u64>> = vec![None; stalling.len()];
    let deadline = Instant::now() + Duration::from_secs(15);
    while closed.iter().flatten().count() < 4 && Instant::now() < deadline {
        for (wire, code) in stalling.iter().zip(closed.iter_mut()) {
            if code.is_none() {
                *code = wire.closed_within(Duration::from_millis(10));
            }
        }
    }
    let busy = closed.iter().filter(|code| **code == Some(1)).count();
    assert_eq!(busy, 4, "12 dialers, 4 handshaking, 4 queued: {closed:?}");
    let still_open = stalling
        .iter()
        .filter(|wire| wire.closed_within(Duration::ZERO).is_none())
        .count();
    assert_eq!(
        still_open, 8,
        "the handshaking and the queued are still served"
    );
    drop(stalling);

    real_guest_plays(host, &alice, &bob, &post_id);
}

/// One dialer that completes the handshake with a `_session_ready` for a session it never
/// registered (a fresh key, so nobody can): the host must ask the server, which has no such
/// session. Returns the host's refusal reason.
fn forged_ready(ticket: &Ticket, post_id: &str) -> String {
    let fake = FakeGuest::new();
    let mut wire = fake.dial_ticket(ticket);
    let key = Identity::generate().public_key().to_string();
    let nonce = "00112233445566778899aabbccddeeff";
    let proof = wire.init(&key, nonce);
    assert_eq!(proof["_session_proof"], true, "{proof}");
    let text = |field: &str| proof[field].as_str().unwrap().to_string();
    let canonical = session_canonical(
        post_id,
        &text("host_public_key"),
        &key,
        &text("protocol_id"),
        nonce,
    );
    wire.send(&json!({"_session_ready": true, "session_id": session_id(&canonical)}));
    let refusal = wire.next_frame();
    assert_eq!(refusal["_session_error"], true, "{refusal}");
    refusal["reason"].as_str().unwrap().to_string()
}

/// Thirty dialers with forged `_session_ready`s, three at a time, would make the host check
/// thirty sessions with the server faster than the server's per-key rate (10/s, bursts of
/// 20) allows. The host paces its checks and retries the server's 429s, so every forged
/// dialer is refused for what it is (no such session), the invitation's renewals (every
/// second here) go on meanwhile, and the real guest who joins next is confirmed and plays
/// to the end.
#[test]
fn forged_ready_dialers_cost_neither_the_real_guest_nor_the_renewals() {
    let net = Net::start();
    let (alice, bob) = (net.agent("alice"), net.agent("bob"));
    let (host, post_id) = alice.host("guess-number", &["--renew-interval-seconds", "1"]);
    let reader = net.server.client(&Identity::generate());
    let ticket = FakeGuest::new().ticket(&reader, &post_id);
    let attackers: Vec<_> = (0..3)
        .map(|_| {
            let (ticket, post_id) = (ticket.clone(), post_id.clone());
            std::thread::spawn(move || {
                (0..10)
                    .map(|_| forged_ready(&ticket, &post_id))
                    .collect::<Vec<_>>()
            })
        })
        .collect();
    let reasons: Vec<String> = attackers
        .into_iter()
        .flat_map(|attacker| attacker.join().unwrap())
        .collect();
    assert_eq!(reasons.len(), 30);
    for reason in &reasons {
        assert!(reason.contains("has no session"), "{reason}");
    }
    let end = real_guest_plays(host, &alice, &bob, &post_id);
    assert_eq!(end.events_of("guest_refused").len(), 30);
    assert!(
        end.events_of("invitation_renewed").len() >= 3,
        "{:?}",
        end.events_of("invitation_renewed")
    );
    for failed in end.events_of("invitation_renew_failed") {
        // Only the end of the offer (the real guest matched it) may stop a renewal.
        assert!(
            failed["error"].as_str().unwrap().contains("matched"),
            "{failed}"
        );
    }
}

/// Guess-number whose host sits in `proto_init` for a while: its engine takes no frame from
/// the queue, so whatever the peer sends piles up in front of it.
fn slow_starting_guess_number(dir: &Path) -> String {
    let builtin = aigenora::protocols::find("guess-number").unwrap();
    let protocol =
        aigenora::protocols::materialize(builtin, &aigenora::layout::DataDir::new(dir)).unwrap();
    let hooks = protocol.join("hooks.py");
    let mut text = std::fs::read_to_string(&hooks).unwrap();
    // Only the session's engine waits: the metadata probe before publishing (a scratch
    // state dir outside `sessions/`) starts at once.
    text.push_str(
        "\nimport time as _time\n_init = Hooks.proto_init\n\
         def _slow_init(self, options, role, args, state_dir, *rest):\n\
         \x20   if 'sessions' in str(state_dir):\n\
         \x20       _time.sleep(12)\n\
         \x20   return _init(self, options, role, args, state_dir, *rest)\n\
         Hooks.proto_init = _slow_init\n",
    );
    std::fs::write(&hooks, text).unwrap();
    protocol.to_str().unwrap().to_string()
}

/// Runs `attack` from an authenticated peer against a host whose engine sits in
/// `proto_init` (it reads nothing meanwhile) and returns how many KiB the host's peak
/// resident memory grew by.
fn host_growth_under(attack: impl FnOnce(&mut Wire)) -> u64 {
    let net = Net::start();
    let (alice, mallory) = (net.agent("alice"), net.agent("mallory"));
    let scratch = tempfile::tempdir().unwrap();
    let protocol = slow_starting_guess_number(scratch.path());
    let (host, post_id) = alice.host(&protocol, &[]);
    let client = net
        .server
        .client(&load_key_file(&aigenora::layout::DataDir::new(&alice.dir)).unwrap());
    let fake = FakeGuest::new();
    let mut wire = fake.dial(&client, &post_id);
    wire.authenticate(
        net.url(),
        &load_key_file(&aigenora::layout::DataDir::new(&mallory.dir)).unwrap(),
        &post_id,
    );
    let pid = wait_until(SESSION_LIMIT, || {
        let files = SessionFiles::read(&alice.session_dirs("host")[0]);
        (!files.events_of("peer_joined").is_empty())
            .then(|| files.field("pid").as_u64())
            .flatten()
    })
    .expect("the host accepts the authenticated peer");
    let before = memory_kib(pid, "VmRSS");
    attack(&mut wire);
    let grown = memory_kib(pid, "VmHWM").saturating_sub(before);
    drop(host);
    grown
}

/// An authenticated peer floods 64 MiB of frames built to swell when parsed (arrays of
/// zeros take ~16 times their text as JSON values) at a host whose engine is not reading:
/// the queue's byte and frame bounds hold the host's growth to a few tens of MB.
#[test]
fn a_frame_flood_costs_the_host_bounded_memory() {
    let zeros = |values: usize| {
        let mut line = br#"{"action":"guess","pad":["#.to_vec();
        line.extend(b"0,".repeat(values - 1));
        line.extend(b"0]}\n");
        line
    };
    let strings = |bytes: usize| {
        format!(
            "{{\"action\":\"guess\",\"pad\":\"{}\"}}\n",
            "x".repeat(bytes)
        )
        .into_bytes()
    };
    let lines = (0..64).map(|i| {
        if i % 2 == 0 {
            zeros(190_000)
        } else {
            strings(1 << 20)
        }
    });
    let mut sent = 0;
    let grown_kib = host_growth_under(|wire| sent = wire.flood(lines, Duration::from_secs(6)));
    assert!(sent > 8 << 20, "the flood got only {sent} bytes out");
    assert!(
        grown_kib < 64 * 1024,
        "the host grew by {grown_kib} KiB under a flood of {sent} bytes"
    );
}

/// An authenticated peer pings as fast as it can and never reads the pongs: the host keeps
/// at most one unsent pong (the answer to the latest ping), so its memory stays flat
/// however long the pings go on. (Queued, each ping's pong would cost the host more than
/// the ping cost the peer: probe ids of non-ASCII characters come back escaped.)
#[test]
fn pings_that_are_never_read_cost_the_host_bounded_memory() {
    let probe = "é".repeat(64);
    let ping = format!("{{\"_sys\":\"ping\",\"probe_id\":\"{probe}\"}}\n").into_bytes();
    let batch: Vec<u8> = ping.repeat(4096);
    let mut sent = 0;
    let grown_kib = host_growth_under(|wire| {
        sent = wire.flood(std::iter::repeat_n(batch, 1 << 20), Duration::from_secs(8));
    });
    assert!(sent > 16 << 20, "the pings got only {sent} bytes out");
    assert!(
        grown_kib < 24 * 1024,
        "the host grew by {grown_kib} KiB answering {} pings",
        sent / ping.len()
    );
}
