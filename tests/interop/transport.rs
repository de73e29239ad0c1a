//! Interop with the reference client's own iroh transport (aigenora 0.1.4 + iroh 0.35 Python
//! binding), offline on this machine: the reference dials our host ticket, and our guest dials
//! the reference's ticket. Both sides run their heartbeat; the reference must get our final
//! frame even though it pauses before reading it (the end-of-session race of
//! docs/p2p-wire.md#clean-shutdown), and we must get its last frame although it just shuts down.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{Receiver, channel};
use std::time::{Duration, Instant};

use aigenora::transport::{Channel, ChannelError, HeartbeatConfig, IrohChannel, Ticket};
use serde_json::{Value, json};

use crate::support::reference::reference_python;
use crate::support::transport::{EventLog, offline_endpoint, runtime, start_host};

const ECHOES: u64 = 5;
const HEARTBEAT_SECONDS: &str = "0.3";
const REPORT_WAIT: Duration = Duration::from_secs(90);

/// The reference peer process; killed if the test fails half-way.
struct ReferencePeer {
    child: Child,
    lines: Receiver<Value>,
    stderr: std::thread::JoinHandle<String>,
}

impl ReferencePeer {
    fn start(args: &[&str]) -> ReferencePeer {
        let script =
            Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/interop/reference_iroh_peer.py");
        let mut child = Command::new(reference_python())
            .arg(script)
            .args(args)
            .env("PYTHONUNBUFFERED", "1")
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start the reference peer");
        let stdout = child.stdout.take().unwrap();
        let mut stderr = child.stderr.take().unwrap();
        let (sender, lines) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                let value = serde_json::from_str(&line).unwrap_or_else(|_| json!({"stray": line}));
                if sender.send(value).is_err() {
                    return;
                }
            }
        });
        let stderr = std::thread::spawn(move || {
            let mut text = String::new();
            let _ = std::io::Read::read_to_string(&mut stderr, &mut text);
            text
        });
        ReferencePeer {
            child,
            lines,
            stderr,
        }
    }

    /// The next JSON line the reference printed (stray output is skipped).
    fn next_report(&mut self, key: &str) -> Value {
        let deadline = Instant::now() + REPORT_WAIT;
        while let Some(left) = deadline.checked_duration_since(Instant::now()) {
            match self.lines.recv_timeout(left) {
                Ok(value) if value.get(key).is_some() => return value,
                Ok(value) if value.get("error").is_some() => {
                    panic!("reference peer failed: {}", value["trace"])
                }
                Ok(_) => continue,
                Err(_) => break,
            }
        }
        panic!("reference peer printed no `{key}` within {REPORT_WAIT:?}");
    }

    fn finish(mut self) -> String {
        let status = self.child.wait().expect("wait for the reference peer");
        let stderr = std::mem::replace(&mut self.stderr, std::thread::spawn(String::new))
            .join()
            .unwrap_or_default();
        assert!(
            status.success(),
            "reference peer exited with {status}: {stderr}"
        );
        stderr
    }
}

impl Drop for ReferencePeer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Our side of the conversation in tests/interop/reference_iroh_peer.py, with our heartbeat
/// running: the reference must answer our pings.
fn converse(channel: &mut IrohChannel, role: &str) {
    let events = EventLog::default();
    channel.start_heartbeat(
        HeartbeatConfig::from_seconds(0.3, 0.0).unwrap(),
        events.sink(),
    );
    let hello = json!({"hello": role, "text": "héllo ♥ 🎲"});
    let peer_hello = if role == "guest" {
        channel.send(&hello).unwrap();
        channel.recv().unwrap()
    } else {
        let first = channel.recv().unwrap();
        channel.send(&hello).unwrap();
        first
    };
    assert_eq!(peer_hello["text"], "héllo ♥ 🎲");
    std::thread::sleep(Duration::from_millis(800));
    for seq in 0..ECHOES {
        channel
            .send(&json!({"action": "echo", "seq": seq}))
            .unwrap();
        assert_eq!(
            channel.recv().unwrap(),
            json!({"action": "echoed", "seq": seq})
        );
    }
    channel
        .send(&json!({"action": "result", "winner": "draw"}))
        .unwrap();
    channel.send(&json!({"action": "end"})).unwrap();
    let started = Instant::now();
    assert_eq!(channel.close(), Ok(()));
    eprintln!("[{role}] close returned after {:?}", started.elapsed());
    assert_eq!(channel.recv().unwrap(), json!({"action": "bye"}));
    assert!(matches!(channel.recv(), Err(ChannelError::Closed(_))));
    assert!(
        channel.rtt().samples >= 1,
        "the reference answers our pings"
    );
    eprintln!("[{role}] RTT with the reference: {:?}", channel.rtt());
}

fn check_reference_report(report: &Value) {
    let received = report["received"].as_array().unwrap();
    assert_eq!(
        received.last(),
        Some(&json!({"action": "end"})),
        "the reference must get our final frame"
    );
    assert!(received.iter().all(|frame| frame.get("_sys").is_none()));
    assert!(
        report["rtt"]["samples"].as_u64().unwrap() >= 1,
        "our pongs reach the reference: {report}"
    );
}

#[test]
fn the_reference_dials_our_host() {
    let runtime = runtime();
    let host = runtime.block_on(start_host());
    let mut reference =
        ReferencePeer::start(&["guest", HEARTBEAT_SECONDS, &host.ticket.to_string()]);
    let (mut channel, _host_endpoint) = runtime.block_on(async {
        let accepted = tokio::time::timeout(REPORT_WAIT, host.link).await;
        let (endpoint, link) = accepted
            .expect("the reference dials within the wait")
            .unwrap();
        (
            IrohChannel::new(link, &tokio::runtime::Handle::current()),
            endpoint,
        )
    });
    converse(&mut channel, "host");
    check_reference_report(&reference.next_report("received"));
    reference.finish();
}

#[test]
fn our_guest_dials_the_reference_host() {
    let runtime = runtime();
    let mut reference = ReferencePeer::start(&["host", HEARTBEAT_SECONDS]);
    let ticket: Ticket = reference.next_report("ticket")["ticket"]
        .as_str()
        .unwrap()
        .parse()
        .expect("reference ticket parses");
    let (mut channel, _guest_endpoint) = runtime.block_on(async {
        let endpoint = offline_endpoint().await;
        let started = Instant::now();
        let link = endpoint
            .dial(&ticket, Duration::from_secs(30))
            .await
            .expect("dial the reference host");
        eprintln!("connected to the reference host in {:?}", started.elapsed());
        (
            IrohChannel::new(link, &tokio::runtime::Handle::current()),
            endpoint,
        )
    });
    converse(&mut channel, "guest");
    check_reference_report(&reference.next_report("received"));
    reference.finish();
}
