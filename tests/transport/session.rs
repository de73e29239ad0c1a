//! Host and guest over real iroh endpoints on loopback (relays disabled): tickets, frame
//! exchange, clean close under pace and heartbeat, busy host, vanished peers.

use std::sync::Arc;
use std::time::{Duration, Instant};

use aigenora::transport::{
    Bell, Channel, ChannelError, HeartbeatConfig, IrohChannel, Ticket, TransportError,
};
use serde_json::json;

use crate::support::transport::{
    EventLog, connected_pair, offline_endpoint, offline_guest, runtime, start_host,
};

#[test]
fn frames_flow_both_ways_and_report_connect_time_and_rtt() {
    let runtime = runtime();
    let mut pair = connected_pair(&runtime);
    eprintln!(
        "connect (dial + stream) on loopback: {:?}",
        pair.connect_time
    );

    pair.guest
        .send(&json!({"_session_init": true, "text": "héllo ♥ 🎲"}))
        .unwrap();
    assert_eq!(
        pair.host.recv().unwrap(),
        json!({"_session_init": true, "text": "héllo ♥ 🎲"})
    );
    pair.host
        .send(&json!({"_session_proof": true, "n": 12345678901234567890u64, "f": 0.1}))
        .unwrap();
    let proof = pair.guest.recv().unwrap();
    assert_eq!(
        proof.to_string(),
        r#"{"_session_proof":true,"n":12345678901234567890,"f":0.1}"#
    );

    let rounds = 200;
    let started = Instant::now();
    for round in 0..rounds {
        pair.guest
            .send(&json!({"action": "ping", "round": round}))
            .unwrap();
        let echoed = pair.host.recv().unwrap();
        pair.host.send(&echoed).unwrap();
        assert_eq!(
            pair.guest.recv().unwrap(),
            json!({"action": "ping", "round": round})
        );
    }
    eprintln!(
        "message round trip through both channels: {:?}",
        started.elapsed() / rounds
    );
}

#[test]
fn the_ticket_round_trips_and_carries_loopback_addresses() {
    let runtime = runtime();
    runtime.block_on(async {
        let host = offline_endpoint().await;
        let ticket = host.ticket().await.unwrap();
        let text = ticket.to_string();
        assert!(text.starts_with("node"), "{text}");
        let parsed: Ticket = text.parse().unwrap();
        assert_eq!(parsed, ticket);
        assert_eq!(parsed.node_addr().node_id, host.node_id());
        assert!(parsed.node_addr().relay_url().is_none());
        assert!(
            parsed
                .node_addr()
                .direct_addresses()
                .any(|addr| addr.ip().is_loopback()),
            "{:?}",
            parsed.node_addr()
        );
        host.shutdown().await;
    });
}

#[test]
fn a_garbage_ticket_is_a_clear_error() {
    let error = "node-this-is-not-a-ticket".parse::<Ticket>().unwrap_err();
    assert!(error.to_string().starts_with("invalid ticket:"), "{error}");
}

#[test]
fn dialing_a_host_that_is_gone_times_out_within_the_bound() {
    let runtime = runtime();
    runtime.block_on(async {
        let host = offline_endpoint().await;
        let ticket = host.ticket().await.unwrap();
        host.shutdown().await;
        let guest = offline_endpoint().await;
        let started = Instant::now();
        let outcome = guest.dial(&ticket, Duration::from_secs(2)).await;
        assert!(
            matches!(
                outcome,
                Err(TransportError::ConnectTimeout(_)) | Err(TransportError::Connect(_))
            ),
            "{:?}",
            outcome.err()
        );
        assert!(
            started.elapsed() < Duration::from_secs(4),
            "took {:?}",
            started.elapsed()
        );
    });
}

/// Our shutdown's promise (docs/p2p-wire.md#clean-shutdown): the sender sends N frames and closes at
/// once; the receiver, reading slowly (like `--pace`) with heartbeat on, still gets all N, then
/// `Closed`.
#[test]
fn closing_right_after_the_last_frame_loses_nothing_under_pace_and_heartbeat() {
    let runtime = runtime();
    let pair = connected_pair(&runtime);
    let (mut sender, mut receiver) = (pair.host, pair.guest);
    let heartbeat = HeartbeatConfig {
        interval: Duration::from_millis(100),
        timeout: Duration::from_secs(5),
    };
    let events = EventLog::default();
    sender.start_heartbeat(heartbeat, events.sink());
    receiver.start_heartbeat(heartbeat, events.sink());
    let frames = 40;

    let sending = std::thread::spawn(move || {
        for seq in 0..frames {
            sender.send(&json!({"action": "move", "seq": seq})).unwrap();
        }
        sender.send(&json!({"action": "end"})).unwrap();
        let started = Instant::now();
        let closed = sender.close();
        (closed, started.elapsed())
    });

    std::thread::sleep(Duration::from_millis(1500));
    for seq in 0..frames {
        assert_eq!(
            receiver.recv().unwrap(),
            json!({"action": "move", "seq": seq})
        );
        std::thread::sleep(Duration::from_millis(60));
    }
    assert_eq!(receiver.recv().unwrap(), json!({"action": "end"}));
    assert!(matches!(receiver.recv(), Err(ChannelError::Closed(_))));
    assert!(
        matches!(receiver.recv(), Err(ChannelError::Closed(_))),
        "Closed is sticky"
    );

    let (closed, close_time) = sending.join().unwrap();
    assert_eq!(closed, Ok(()));
    eprintln!("close waited {close_time:?} for a peer that never closed");
    assert!(
        events.names().is_empty(),
        "no silence expected: {:?}",
        events.names()
    );
}

#[test]
fn two_of_our_peers_close_each_other_quickly() {
    let runtime = runtime();
    let pair = connected_pair(&runtime);
    let (mut host, mut guest) = (pair.host, pair.guest);
    host.send(&json!({"action": "end"})).unwrap();
    let host_closing = std::thread::spawn(move || {
        let started = Instant::now();
        (host.close(), started.elapsed())
    });
    std::thread::sleep(Duration::from_millis(300));
    assert_eq!(guest.recv().unwrap(), json!({"action": "end"}));
    let started = Instant::now();
    assert_eq!(guest.close(), Ok(()));
    let guest_close = started.elapsed();
    let (host_closed, host_close) = host_closing.join().unwrap();
    assert_eq!(host_closed, Ok(()));
    eprintln!("close: host {host_close:?} (waited for the guest), guest {guest_close:?}");
    assert!(
        guest_close < Duration::from_secs(1),
        "guest close took {guest_close:?}"
    );
    assert!(
        host_close < Duration::from_secs(2),
        "host close took {host_close:?}"
    );
}

#[test]
fn a_second_guest_is_turned_away_without_disturbing_the_first() {
    let runtime = runtime();
    let (mut host, mut first, _endpoints, second_outcome) = runtime.block_on(async {
        let host = start_host().await;
        let first_endpoint = offline_endpoint().await;
        let first_link = first_endpoint
            .dial(&host.ticket, Duration::from_secs(10))
            .await
            .unwrap();
        let (host_endpoint, host_link) = host.link.await.unwrap();

        let second_endpoint = offline_endpoint().await;
        let started = Instant::now();
        let second = match second_endpoint
            .dial(&host.ticket, Duration::from_secs(5))
            .await
        {
            Ok(link) => {
                let mut channel = IrohChannel::new(link, &tokio::runtime::Handle::current())
                    .with_recv_timeout(Duration::from_secs(5));
                tokio::task::spawn_blocking(move || channel.recv())
                    .await
                    .unwrap()
                    .map(|_| ())
            }
            Err(error) => Err(ChannelError::Closed(error.to_string())),
        };
        let second_outcome = (second, started.elapsed());
        let handle = tokio::runtime::Handle::current();
        (
            IrohChannel::new(host_link, &handle),
            IrohChannel::new(first_link, &handle),
            (host_endpoint, first_endpoint, second_endpoint),
            second_outcome,
        )
    });
    let (second, elapsed) = second_outcome;
    assert!(
        matches!(second, Err(ChannelError::Closed(_))),
        "second guest got {second:?}"
    );
    assert!(
        elapsed < Duration::from_secs(3),
        "second guest waited {elapsed:?}"
    );

    first.send(&json!({"action": "join"})).unwrap();
    assert_eq!(host.recv().unwrap(), json!({"action": "join"}));
    host.send(&json!({"action": "ready"})).unwrap();
    assert_eq!(first.recv().unwrap(), json!({"action": "ready"}));
}

#[test]
fn accepting_twice_on_one_endpoint_is_refused() {
    let runtime = runtime();
    runtime.block_on(async {
        let host = start_host().await;
        let guest = offline_endpoint().await;
        let _link = guest
            .dial(&host.ticket, Duration::from_secs(10))
            .await
            .unwrap();
        let (mut host_endpoint, _host_link) = host.link.await.unwrap();
        assert!(matches!(
            host_endpoint.accept_first().await,
            Err(TransportError::AlreadyHosting)
        ));
    });
}

#[test]
fn a_dropped_peer_is_reported_closed_promptly() {
    let runtime = runtime();
    let mut pair = connected_pair(&runtime);
    pair.guest.send(&json!({"action": "last words"})).unwrap();
    drop(pair.guest);
    let started = Instant::now();
    assert_eq!(pair.host.recv().unwrap(), json!({"action": "last words"}));
    assert!(matches!(pair.host.recv(), Err(ChannelError::Closed(_))));
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "took {:?}",
        started.elapsed()
    );
    assert!(matches!(
        pair.host.send(&json!({"action": "anyone?"})),
        Err(ChannelError::Closed(_))
    ));
}

/// A peer whose process dies sends nothing more; the idle timeout (10 s) ends the session.
#[test]
fn a_killed_peer_is_reported_closed_after_the_idle_timeout() {
    let host_runtime = runtime();
    let guest_runtime = runtime();
    let (mut host, _host_endpoint, guest) = host_runtime.block_on(async {
        let host = start_host().await;
        let ticket = host.ticket.clone();
        let guest = guest_runtime.spawn(async move { offline_guest(&ticket).await });
        let (host_endpoint, host_link) = host.link.await.unwrap();
        let guest = guest.await.unwrap();
        let channel = IrohChannel::new(host_link, &tokio::runtime::Handle::current());
        (channel, host_endpoint, guest)
    });
    // Freeze the guest like a killed process: no close frames, no more packets.
    std::mem::forget(guest);
    guest_runtime.shutdown_background();
    let started = Instant::now();
    assert!(matches!(host.recv(), Err(ChannelError::Closed(_))));
    let elapsed = started.elapsed();
    eprintln!("killed peer noticed after {elapsed:?}");
    assert!(elapsed < Duration::from_secs(15), "took {elapsed:?}");
}

/// A peer that stops reading never blocks a poster: once its stream's window and our
/// bounded backlog are full, `post` says so at once (a blocking `send` would wait forever).
#[test]
fn posting_to_a_peer_that_never_reads_ends_in_a_backlog_error_never_a_wait() {
    let runtime = runtime();
    let mut pair = connected_pair(&runtime);
    let frame = json!({"blob": "x".repeat(64 * 1024)});
    let started = Instant::now();
    let refused = (0..4096).find_map(|_| pair.host.post(&frame).err());
    match refused {
        Some(ChannelError::Backlog { frames, bytes }) => {
            assert!(
                frames >= 1 && bytes <= 8 * 1024 * 1024,
                "{frames} frames, {bytes} bytes"
            );
        }
        other => panic!("expected a backlog error, got {other:?}"),
    }
    assert!(
        started.elapsed() < Duration::from_secs(30),
        "took {:?}",
        started.elapsed()
    );
    // The guest was never disturbed: what reached it is intact and in order.
    assert_eq!(pair.guest.recv().unwrap(), frame);
}

/// A channel rings the bell it was given for each frame and for the end of the stream, so
/// a leader serving many members waits once for any of them (and a bell set after frames
/// arrived rings at once: they are waiting too).
#[test]
fn a_channel_rings_its_bell_on_each_arrival_and_at_the_end() {
    let runtime = runtime();
    let pair = connected_pair(&runtime);
    let (mut sender, mut receiver) = (pair.host, pair.guest);
    let bell = Arc::new(Bell::default());
    receiver.ring_on_arrival(Arc::clone(&bell));
    assert!(bell.wait(Duration::ZERO), "set: rung at once");
    assert!(!bell.wait(Duration::from_millis(50)), "nothing arrived");
    for n in 0..3 {
        sender.send(&json!({"n": n})).unwrap();
        assert!(bell.wait(Duration::from_secs(10)), "frame {n} rang");
        assert_eq!(
            receiver.recv_timeout(Duration::ZERO).unwrap(),
            Some(json!({"n": n}))
        );
    }
    sender.close().unwrap();
    assert!(bell.wait(Duration::from_secs(10)), "the end rang");
    assert!(matches!(
        receiver.recv_timeout(Duration::ZERO),
        Err(ChannelError::Closed(_))
    ));
}
