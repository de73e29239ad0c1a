//! Our channel against a bare iroh peer writing exact bytes: framing limits, bad JSON, the
//! `_sys` layer (filtering, pongs, pings, RTT, silence events) and the guest's first write.

use std::time::Duration;

use aigenora::transport::{
    Channel, ChannelError, HeartbeatConfig, IrohChannel, MAX_FRAME_BYTES, SessionEndpoint, Ticket,
};
use serde_json::{Value, json};
use tokio::runtime::Runtime;

use crate::support::transport::{
    EventLog, RawPeer, eventually, offline_endpoint, raw_guest, runtime, start_host,
};

/// Our host channel and a raw guest connected to it. The raw guest has written `first` so
/// that its stream becomes visible to the host.
fn host_with_raw_guest(runtime: &Runtime, first: &[u8]) -> (IrohChannel, RawPeer, SessionEndpoint) {
    runtime.block_on(async {
        let host = start_host().await;
        let mut raw = raw_guest(&host.ticket).await;
        raw.send.write_all(first).await.unwrap();
        let (endpoint, link) = host.link.await.unwrap();
        (
            IrohChannel::new(link, &tokio::runtime::Handle::current()),
            raw,
            endpoint,
        )
    })
}

#[test]
fn an_oversized_line_is_malformed_and_reading_goes_on() {
    let runtime = runtime();
    let (mut host, mut raw, _endpoint) =
        host_with_raw_guest(&runtime, b"{\"action\":\"before\"}\n");
    let writer = runtime.spawn(async move {
        let filler = vec![b'x'; 1024 * 1024];
        raw.send.write_all(b"{\"blob\":\"").await.unwrap();
        for _ in 0..9 {
            raw.send.write_all(&filler).await.unwrap();
        }
        raw.send
            .write_all(b"\"}\n{\"action\":\"after\"}\n")
            .await
            .unwrap();
        raw
    });
    assert_eq!(host.recv().unwrap(), json!({"action": "before"}));
    match host.recv() {
        Err(ChannelError::Malformed(reason)) => assert!(reason.contains("exceeds"), "{reason}"),
        other => panic!("expected Malformed, got {other:?}"),
    }
    assert_eq!(host.recv().unwrap(), json!({"action": "after"}));
    let _raw = runtime.block_on(writer).unwrap();
}

#[test]
fn an_unterminated_oversized_line_then_end_is_malformed_then_closed() {
    let runtime = runtime();
    let (mut host, mut raw, _endpoint) = host_with_raw_guest(&runtime, b"\n");
    runtime.spawn(async move {
        raw.send
            .write_all(&vec![b'7'; MAX_FRAME_BYTES + 10])
            .await
            .unwrap();
        raw.send.finish().unwrap();
        let _ = raw.send.stopped().await;
        raw
    });
    assert!(matches!(host.recv(), Err(ChannelError::Malformed(_))));
    assert!(matches!(host.recv(), Err(ChannelError::Closed(_))));
}

#[test]
fn invalid_json_and_truncated_lines_are_malformed_blank_lines_skipped() {
    let runtime = runtime();
    let (mut host, mut raw, _endpoint) = host_with_raw_guest(
        &runtime,
        b"\n\n{nope\n  \n[1,2]\n\xff\n{\"ok\":true}\n{\"cut",
    );
    runtime.block_on(async {
        raw.send.finish().unwrap();
    });
    assert!(matches!(host.recv(), Err(ChannelError::Malformed(_))));
    assert_eq!(
        host.recv().unwrap(),
        json!([1, 2]),
        "non-objects are the engine's business"
    );
    assert!(matches!(host.recv(), Err(ChannelError::Malformed(_))));
    assert_eq!(host.recv().unwrap(), json!({"ok": true}));
    assert!(
        matches!(host.recv(), Err(ChannelError::Malformed(reason)) if reason.contains("unterminated"))
    );
    assert!(matches!(host.recv(), Err(ChannelError::Closed(_))));
}

#[test]
fn sys_frames_never_reach_the_engine_and_pings_get_exact_pongs() {
    let runtime = runtime();
    let frames = concat!(
        "{\"_sys\":\"ping\",\"probe_id\":\"7f3fb9e21110-1\",\"ts\":1732000000.25}\n",
        "{\"_sys\":\"ping\",\"ts\":1.0}\n",
        "{\"_sys\":\"pong\",\"probe_id\":\"nobody-asked\"}\n",
        "{\"_sys\":\"something-new\"}\n",
        "{\"action\":\"move\",\"_note\":\"ü\"}\n",
    );
    let (mut host, mut raw, _endpoint) = host_with_raw_guest(&runtime, frames.as_bytes());
    assert_eq!(
        host.recv().unwrap(),
        json!({"action": "move", "_note": "ü"})
    );
    let replies = runtime.block_on(raw.read_lines(1));
    assert_eq!(
        replies,
        vec![r#"{"_sys":"pong","probe_id":"7f3fb9e21110-1"}"#.to_string()]
    );
}

#[test]
fn our_pings_go_out_after_one_interval_and_pongs_give_rtt() {
    let runtime = runtime();
    let (mut host, mut raw, _endpoint) = host_with_raw_guest(&runtime, b"\n");
    let events = EventLog::default();
    host.start_heartbeat(
        HeartbeatConfig {
            interval: Duration::from_millis(300),
            timeout: Duration::from_secs(30),
        },
        events.sink(),
    );
    let lines = runtime.block_on(raw.read_lines(2));
    let pings: Vec<Value> = lines
        .iter()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    for ping in &pings {
        let object = ping.as_object().unwrap();
        assert_eq!(
            object.keys().collect::<Vec<_>>(),
            ["_sys", "probe_id", "ts"]
        );
        assert_eq!(ping["_sys"], "ping");
        assert!(ping["probe_id"].as_str().unwrap().len() <= 64);
        assert!(ping["ts"].as_f64().unwrap() > 1.7e9);
    }
    assert_ne!(pings[0]["probe_id"], pings[1]["probe_id"]);
    let pong = format!(
        "{{\"_sys\":\"pong\",\"probe_id\":{}}}\n",
        pings[1]["probe_id"]
    );
    runtime
        .block_on(raw.send.write_all(pong.as_bytes()))
        .unwrap();
    assert!(eventually(Duration::from_secs(2), || host.rtt().samples == 1));
    let rtt = host.rtt();
    assert!(rtt.last.is_some() && rtt.smoothed.is_some());
    host.send(&json!({"action": "still here"})).unwrap();
}

#[test]
fn silence_is_reported_and_resumption_too_without_ending_the_session() {
    let runtime = runtime();
    let (mut host, mut raw, _endpoint) = host_with_raw_guest(&runtime, b"\n");
    let events = EventLog::default();
    host.start_heartbeat(
        HeartbeatConfig {
            interval: Duration::from_millis(500),
            timeout: Duration::from_secs(1),
        },
        events.sink(),
    );
    assert!(eventually(Duration::from_secs(4), || events
        .names()
        .contains(&"peer_unresponsive".to_string())));
    let elapsed = events.first("peer_unresponsive").unwrap()["elapsed"]
        .as_f64()
        .unwrap();
    assert!(elapsed >= 1.0, "elapsed {elapsed}");
    runtime
        .block_on(raw.send.write_all(b"{\"action\":\"back\"}\n"))
        .unwrap();
    assert_eq!(host.recv().unwrap(), json!({"action": "back"}));
    assert_eq!(events.names(), ["peer_unresponsive", "peer_resumed"]);
    assert_eq!(events.first("peer_resumed"), Some(json!({})));
}

#[test]
fn our_guest_makes_its_stream_visible_before_the_engine_writes() {
    let runtime = runtime();
    runtime.block_on(async {
        let raw_host = iroh::Endpoint::builder()
            .relay_mode(iroh::RelayMode::Disabled)
            .alpns(vec![aigenora::transport::ALPN.to_vec()])
            .bind()
            .await
            .unwrap();
        let addr = raw_host.node_addr().await.unwrap();
        let ticket = Ticket::new(addr);
        let accepting = tokio::spawn(async move {
            let connection = raw_host.accept().await.unwrap().await.unwrap();
            let (_send, mut recv) = connection.accept_bi().await.unwrap();
            let mut first = [0u8; 1];
            recv.read_exact(&mut first).await.unwrap();
            (raw_host, connection, first)
        });
        let guest = offline_endpoint().await;
        let _link = guest.dial(&ticket, Duration::from_secs(10)).await.unwrap();
        let (_raw_host, _connection, first) =
            tokio::time::timeout(Duration::from_secs(5), accepting)
                .await
                .unwrap()
                .unwrap();
        assert_eq!(
            &first, b"\n",
            "the guest announces its stream with a blank line"
        );
    });
}
