//! A clean end against the reference when both sides pace their moves and ping every half
//! second, the setting where the reference loses its last frame (docs/p2p-wire.md#clean-shutdown):
//! our host's final frame reaches the reference guest, which ends `closed`, not
//! `peer_disconnected`; and our guest gets the reference host's last frame too.

use crate::support::net::{
    Net, PACE_AND_HEARTBEAT, SESSION_LIMIT, assert_clean_end, assert_server_session,
};
use crate::support::reference::{REFERENCE_RPS, install_reference_protocol};

#[test]
fn the_reference_guest_gets_the_last_frame_with_pace_and_heartbeat() {
    let net = Net::start();
    let carol = net.reference_agent("carol");
    carol.register_protocol(REFERENCE_RPS);
    let bob = net.agent("bob");
    let protocol_dir = install_reference_protocol(&bob, REFERENCE_RPS);
    let mut host_args = PACE_AND_HEARTBEAT.to_vec();
    host_args.extend(["--options", r#"{"best_of": 3}"#]);
    let (host, post_id) = bob.host(protocol_dir.to_str().unwrap(), &host_args);
    let mut join_args = vec!["join", post_id.as_str()];
    join_args.extend(PACE_AND_HEARTBEAT);
    let (_, reference) = carol.daemon(&join_args);
    host.succeed(SESSION_LIMIT);
    let (host_end, guest_end) = (bob.session("host"), reference.wait_final());
    assert_clean_end(&host_end, &guest_end);
    let session_id = host_end.field("session_id").as_str().unwrap();
    let winner = host_end.field("winner").as_str();
    assert_server_session(&bob.server_session(session_id), "closed", winner);
}

/// The other direction: the reference host shuts its node down right after its bookkeeping,
/// and our guest still hands every frame it received to the engine before the disconnect.
#[test]
fn our_guest_gets_the_reference_hosts_last_frame_with_pace_and_heartbeat() {
    let net = Net::start();
    let carol = net.reference_agent("carol");
    carol.register_protocol(REFERENCE_RPS);
    let bob = net.agent("bob");
    install_reference_protocol(&bob, REFERENCE_RPS);
    let protocol_dir = carol.protocol_dir(REFERENCE_RPS);
    let mut host_args = vec!["host", "--protocol-dir", protocol_dir.to_str().unwrap()];
    host_args.extend(PACE_AND_HEARTBEAT);
    host_args.extend(["--options", r#"{"best_of": 3}"#]);
    let (hosting, reference) = carol.daemon(&host_args);
    bob.join(hosting["post_id"].as_str().unwrap(), &PACE_AND_HEARTBEAT)
        .succeed(SESSION_LIMIT);
    let (host_end, guest_end) = (reference.wait_final(), bob.session("guest"));
    assert_clean_end(&host_end, &guest_end);
    let session_id = guest_end.field("session_id").as_str().unwrap();
    let winner = guest_end.field("winner").as_str();
    assert_server_session(&bob.server_session(session_id), "closed", winner);
}
