//! The end of a session is clean even when both sides pace their moves and ping every half
//! second: our host's final frame reaches our guest, which ends `closed`, not
//! `peer_disconnected`. (The same against the reference: tests/interop/clean_end.rs.)

use crate::support::net::{
    Net, PACE_AND_HEARTBEAT, SESSION_LIMIT, assert_clean_end, assert_server_session,
};

#[test]
fn our_guest_gets_the_last_frame_with_pace_and_heartbeat() {
    let net = Net::start();
    let (alice, bob) = (net.agent("alice"), net.agent("bob"));
    let mut host_args = PACE_AND_HEARTBEAT.to_vec();
    host_args.extend(["--options", r#"{"best_of": 3}"#]);
    let (host, post_id) = alice.host("rock-paper-scissors", &host_args);
    bob.join(&post_id, &PACE_AND_HEARTBEAT)
        .succeed(SESSION_LIMIT);
    host.succeed(SESSION_LIMIT);
    let (host_end, guest_end) = (alice.session("host"), bob.session("guest"));
    assert_clean_end(&host_end, &guest_end);
    assert_eq!(guest_end.last_message("received")["game_over"], true);
    let session_id = host_end.field("session_id").as_str().unwrap();
    let winner = host_end.field("winner").as_str();
    assert_server_session(&alice.server_session(session_id), "closed", winner);
}
