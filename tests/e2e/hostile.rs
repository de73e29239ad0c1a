//! Our host under attack on an open network, as real processes on loopback: dialers that
//! stay silent or stall mid-handshake must not keep the real guest out, and an
//! authenticated peer that floods frames costs the host a bounded amount of memory.

use std::path::Path;
use std::time::Duration;

use aigenora::identity::load_key_file;
use serde_json::json;

use crate::support::fake::FakeGuest;
use crate::support::net::{Net, SESSION_LIMIT, SessionFiles, wait_until};

/// Silent dialers (a stream and nothing more) and a stalling one (init, then no ready) hold
/// handshake slots, yet the real guest who dials meanwhile gets its own and plays.
#[test]
fn silent_and_stalling_dialers_do_not_keep_the_real_guest_out() {
    let net = Net::start();
    let (alice, bob) = (net.agent("alice"), net.agent("bob"));
    let (host, post_id) = alice.host("guess-number", &[]);
    let client = net.server.client(&load_key_file(&alice.dir).unwrap());
    let fake = FakeGuest::new();
    let _silent = [fake.dial(&client, &post_id), fake.dial(&client, &post_id)];
    let mut stalling = fake.dial(&client, &post_id);
    stalling.send(
        &json!({"_session_init": true, "guest_public_key": "ab".repeat(32),
        "session_nonce": "0123456789abcdef", "guest_control_mode": "hybrid"}),
    );
    assert_eq!(stalling.next_frame()["_session_proof"], true);

    let guest = bob.join(&post_id, &[]).succeed(SESSION_LIMIT);
    let host = host.succeed(SESSION_LIMIT);
    assert!(guest.stdout.contains("peer_joined: "), "{}", guest.stdout);
    let end = alice.session("host");
    assert_eq!(end.status(), "closed", "{}\n{}", end.info, host.stdout);
    assert_eq!(end.events_of("peer_joined").len(), 1);
    assert_eq!(
        end.events_of("peer_joined")[0]["peer_public_key"],
        bob.public_key()
    );
}

/// Kilobytes of resident memory (`VmRSS` or `VmHWM`) of a live process.
fn memory_kib(pid: u64, field: &str) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    status
        .lines()
        .find_map(|line| line.strip_prefix(field))
        .and_then(|rest| rest.trim_start_matches(':').split_whitespace().next())
        .and_then(|kib| kib.parse().ok())
        .unwrap_or_else(|| panic!("no {field} in /proc/{pid}/status"))
}

/// Guess-number whose host sits in `proto_init` for a while: its engine takes no frame from
/// the queue, so whatever the peer sends piles up in front of it.
fn slow_starting_guess_number(dir: &Path) -> String {
    let builtin = aigenora::protocols::find("guess-number").unwrap();
    let protocol = aigenora::protocols::materialize(builtin, dir).unwrap();
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

/// An authenticated peer floods 64 MiB of frames built to swell when parsed (arrays of
/// zeros take ~16 times their text as JSON values) at a host whose engine is not reading:
/// the queue's byte and frame bounds hold the host's growth to a few tens of MB.
#[test]
fn a_frame_flood_costs_the_host_bounded_memory() {
    let net = Net::start();
    let (alice, mallory) = (net.agent("alice"), net.agent("mallory"));
    let scratch = tempfile::tempdir().unwrap();
    let protocol = slow_starting_guess_number(scratch.path());
    let (host, post_id) = alice.host(&protocol, &[]);
    let client = net.server.client(&load_key_file(&alice.dir).unwrap());
    let fake = FakeGuest::new();
    let mut wire = fake.dial(&client, &post_id);
    wire.authenticate(net.url(), &load_key_file(&mallory.dir).unwrap(), &post_id);
    let pid = wait_until(SESSION_LIMIT, || {
        let files = SessionFiles::read(&alice.session_dirs("host")[0]);
        (!files.events_of("peer_joined").is_empty())
            .then(|| files.field("pid").as_u64())
            .flatten()
    })
    .expect("the host accepts the authenticated peer");
    let before = memory_kib(pid, "VmRSS");

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
    let sent = wire.flood(lines, Duration::from_secs(6));
    assert!(sent > 8 << 20, "the flood got only {sent} bytes out");

    let grown_kib = memory_kib(pid, "VmHWM").saturating_sub(before);
    assert!(
        grown_kib < 64 * 1024,
        "the host grew by {grown_kib} KiB under a flood of {sent} bytes"
    );
    drop(host);
}
