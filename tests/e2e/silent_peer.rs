//! Nothing waits forever: a peer that stays connected but never moves — a person in human
//! control who never answers, with `--think-seconds 86400` — holds our autonomous host only
//! for the host's own deadline (`--peer-timeout`), after which both sides end cleanly and the
//! host says why (`peer_timeout`).

use std::time::{Duration, Instant};

use crate::support::control::window_of;
use crate::support::net::{Net, SESSION_LIMIT, wait_until};

#[test]
fn a_peer_that_thinks_for_a_day_holds_our_host_only_until_its_own_deadline() {
    let net = Net::start();
    let (alice, bob) = (net.agent("alice"), net.agent("bob"));
    let (host, post_id) = alice.host(
        "rock-paper-scissors",
        &["--control-mode", "autonomous", "--peer-timeout", "3"],
    );
    let guest = bob.join(
        &post_id,
        &[
            "--control-mode",
            "human",
            "--think-seconds",
            "86400",
            "--no-prompt",
        ],
    );
    let guest_dir = wait_until(SESSION_LIMIT, || bob.session_dirs("guest").pop()).unwrap();
    wait_until(SESSION_LIMIT, || window_of(&guest_dir)).expect("the person's window opens");
    let waiting = Instant::now();
    let hosted = host.finish(SESSION_LIMIT);
    assert!(
        waiting.elapsed() < Duration::from_secs(30),
        "the host stopped waiting after {:?}",
        waiting.elapsed()
    );
    assert!(!hosted.status.success(), "{}", hosted.stdout);
    let host_files = alice.session("host");
    assert_eq!(host_files.status(), "aborted", "{}", host_files.info);
    assert_eq!(host_files.field("end_reason"), "peer_timeout");
    let ended = host_files.events_of("session_ended");
    assert_eq!(ended.last().unwrap()["reason"], "peer_timeout");
    // The person's side learns the host left and ends too, its window closed.
    let joined = guest.finish(SESSION_LIMIT);
    assert!(!joined.status.success());
    let guest_files = bob.session("guest");
    assert!(guest_files.is_final(), "{}", guest_files.info);
    assert!(window_of(&guest_dir).is_none());
}
