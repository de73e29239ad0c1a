//! Session transport on loopback, relays disabled: how long a guest takes to dial a host
//! (connect + stream), the session-proof handshake on the wire (without the guest's server
//! registration, which `session_vs_reference.sh` includes; async on the link, as sessions
//! run it), and the round-trip time of one
//! frame between two engine threads through the real blocking `IrohChannel` (an echo on the
//! host side, a frame the size of an RPS round result).
//!
//! Each side has its own multi-thread runtime, as a room's or `demo`'s sides do. Then the
//! same round trips as two `host`/`join` processes run them: each side under its own
//! `SessionDriver`, its engine thread driving its runtime while it waits. The CPU the round
//! trips cost (all threads of both sides) shows the price of thread hand-offs.
//! `cargo bench --bench channel_rtt`; `BENCH_ROUND_TRIPS` (default 5000) and `BENCH_PAIRS`
//! (sessions set up and measured one after another, default 5).

// Each benchmark uses its own part of the shared helpers.
#[allow(dead_code)]
mod common;
#[path = "../tests/support/transport.rs"]
#[allow(dead_code)]
mod transport_support;

use std::time::{Duration, Instant};

use aigenora::identity::{Identity, new_session_nonce, session_id};
use aigenora::session::handshake::{GuestSide, HostSide};
use aigenora::spec::ControlMode;
use aigenora::transport::{Channel, IrohChannel, PeerLink, RelayChoice, SessionEndpoint, Ticket};
use common::cpu_seconds;
use serde_json::{Value, json};
use tokio::runtime::Runtime;
use transport_support::driven_side;

const WARM_UP: usize = 200;
const POST_ID: &str = "0123456789abcdef";
const PROTOCOL_ID: &str = "827d037b3c601faf59536ed7f509bdfa88e4ece6490ef478f1e22b10899818ef";

fn main() {
    let round_trips: usize = env_or("BENCH_ROUND_TRIPS", 5000);
    let pairs: usize = env_or("BENCH_PAIRS", 5);
    println!(
        "channel_rtt: {pairs} sessions, {round_trips} round trips each, load {}",
        common::load_average()
    );
    let (host_runtime, guest_runtime) = (runtime(), runtime());
    let (mut dials, mut handshakes, mut rtts) = (Vec::new(), Vec::new(), Vec::new());
    let mut cpu = 0.0;
    for _ in 0..pairs {
        let session = connect(&host_runtime, &guest_runtime);
        dials.push(session.dial);
        let (mut host_link, mut guest_link) = (session.host, session.guest);
        let (host_key, guest_key) = (Identity::generate(), Identity::generate());
        let host_public = host_key.public_key().to_string();
        let shaking = Instant::now();
        let host_shake = host_runtime.spawn(async move {
            let side = HostSide {
                identity: &host_key,
                post_id: POST_ID,
                protocol_id: PROTOCOL_ID,
                control_mode: ControlMode::Autonomous,
            };
            let shake = side.prove(&mut host_link).await.expect("host proof");
            side.await_ready(&mut host_link, &shake)
                .await
                .expect("host handshake");
            host_link
        });
        guest_runtime.block_on(async {
            let side = GuestSide {
                identity: &guest_key,
                post_id: POST_ID,
                host_public_key: &host_public,
                protocol_id: PROTOCOL_ID,
                control_mode: ControlMode::Autonomous,
                nonce: new_session_nonce(),
            };
            side.request_proof(&mut guest_link)
                .await
                .expect("host proof");
            side.send_ready(&mut guest_link, &session_id(&side.canonical()))
                .await
                .expect("send ready");
        });
        let host_link = host_runtime.block_on(host_shake).unwrap();
        handshakes.push(shaking.elapsed());
        let mut guest = IrohChannel::new(guest_link, guest_runtime.handle());
        let host_handle = host_runtime.handle().clone();
        let host_thread = std::thread::spawn(move || {
            let mut host = IrohChannel::new(host_link, &host_handle);
            echo(&mut host);
            host
        });
        let cpu_before = cpu_seconds("self");
        rtts.extend(ping(&mut guest, round_trips));
        cpu += cpu_seconds("self") - cpu_before;
        guest.send(&json!({"action": "end"})).unwrap();
        let mut host = host_thread.join().unwrap();
        let _ = guest.close();
        let _ = host.close();
        drop((host, guest));
        host_runtime.block_on(session.host_endpoint.shutdown());
        guest_runtime.block_on(session.guest_endpoint.shutdown());
    }
    report("dial (connect + stream)", &mut dials);
    report(
        "handshake on the wire (init, proof, ready)",
        &mut handshakes,
    );
    report("round trip, engine thread to engine thread", &mut rtts);
    println!(
        "CPU per round trip (both sides, all threads): {:.1} us",
        cpu * 1e6 / (pairs * (WARM_UP + round_trips)) as f64
    );
    let (mut driven_rtts, mut driven_cpu) = (Vec::new(), 0.0);
    for _ in 0..pairs {
        let (times, cpu) = driven_round_trips(round_trips);
        driven_rtts.extend(times);
        driven_cpu += cpu;
    }
    report(
        "round trip, engine threads driving their runtimes",
        &mut driven_rtts,
    );
    println!(
        "CPU per round trip, driven (both sides, all threads): {:.1} us",
        driven_cpu * 1e6 / (pairs * (WARM_UP + round_trips)) as f64
    );
    println!("load after: {}", common::load_average());
}

/// Two connected links, each driven by its own runtime, and how long the dial took.
struct Session {
    host: PeerLink,
    guest: PeerLink,
    host_endpoint: SessionEndpoint,
    guest_endpoint: SessionEndpoint,
    dial: Duration,
}

fn connect(host_runtime: &Runtime, guest_runtime: &Runtime) -> Session {
    let (mut host_endpoint, ticket) = host_runtime.block_on(async {
        let endpoint = SessionEndpoint::bind(&RelayChoice::Disabled).await.unwrap();
        let ticket: Ticket = endpoint
            .ticket()
            .await
            .unwrap()
            .to_string()
            .parse()
            .unwrap();
        (endpoint, ticket)
    });
    let accepted = host_runtime.spawn(async move {
        let link = host_endpoint.accept_first().await.unwrap();
        (host_endpoint, link)
    });
    let guest_endpoint = guest_runtime
        .block_on(SessionEndpoint::bind(&RelayChoice::Disabled))
        .unwrap();
    let started = Instant::now();
    let guest_link = guest_runtime
        .block_on(guest_endpoint.dial(&ticket, Duration::from_secs(10)))
        .unwrap();
    let dial = started.elapsed();
    let (host_endpoint, host_link) = host_runtime.block_on(accepted).unwrap();
    Session {
        host: host_link,
        guest: guest_link,
        host_endpoint,
        guest_endpoint,
        dial,
    }
}

/// One session whose two sides each run under their own [`SessionDriver`] on a thread of
/// their own (the process's main thread, as in `host` and `join`), the engine threads driving
/// the runtimes while they wait: the round trips and the CPU they took.
fn driven_round_trips(count: usize) -> (Vec<Duration>, f64) {
    let (ticket_to_guest, ticket) = std::sync::mpsc::channel::<Ticket>();
    let host = std::thread::spawn(move || {
        let connect = async move {
            let mut endpoint = SessionEndpoint::bind(&RelayChoice::Disabled).await.unwrap();
            ticket_to_guest
                .send(endpoint.ticket().await.unwrap())
                .unwrap();
            let link = endpoint.accept_first().await.unwrap();
            (endpoint, link)
        };
        driven_side(connect, |mut channel| {
            echo(&mut channel);
            let _ = channel.close();
        })
    });
    let connect = async move {
        let ticket = ticket.recv().unwrap();
        let endpoint = SessionEndpoint::bind(&RelayChoice::Disabled).await.unwrap();
        let link = endpoint
            .dial(&ticket, Duration::from_secs(10))
            .await
            .unwrap();
        (endpoint, link)
    };
    let measured = driven_side(connect, move |mut channel| {
        let cpu_before = cpu_seconds("self");
        let times = ping(&mut channel, count);
        let cpu = cpu_seconds("self") - cpu_before;
        channel.send(&json!({"action": "end"})).unwrap();
        let _ = channel.close();
        (times, cpu)
    });
    host.join().unwrap();
    measured
}

/// Sends every frame back until `{"action": "end"}`.
fn echo(channel: &mut IrohChannel) {
    loop {
        let frame = channel.recv().expect("echo recv");
        if frame == json!({"action": "end"}) {
            return;
        }
        channel.send(&frame).expect("echo send");
    }
}

/// Round trips of a round-result-sized frame, after a warm-up.
fn ping(channel: &mut IrohChannel, count: usize) -> Vec<Duration> {
    let mut times = Vec::with_capacity(count);
    for round in 0..WARM_UP + count {
        let frame = round_result(round);
        let started = Instant::now();
        channel.send(&frame).expect("ping send");
        let back = channel.recv().expect("ping recv");
        let elapsed = started.elapsed();
        assert_eq!(back, frame);
        if round >= WARM_UP {
            times.push(elapsed);
        }
    }
    times
}

fn round_result(round: usize) -> Value {
    json!({
        "action": "round_result", "round": round, "host_choice": "rock",
        "guest_choice": "paper", "round_winner": "guest", "host_wins": round / 3,
        "guest_wins": round / 2, "game_over": false, "game_winner": "none",
    })
}

fn report(name: &str, samples: &mut [Duration]) {
    samples.sort_unstable();
    let at = |p: f64| {
        let index = ((samples.len() as f64 * p).ceil() as usize).saturating_sub(1);
        samples.get(index).map_or(0.0, |d| d.as_secs_f64() * 1000.0)
    };
    println!(
        "{name}: n={}, p50 {:.3} ms, p90 {:.3} ms, p99 {:.3} ms, max {:.3} ms",
        samples.len(),
        at(0.5),
        at(0.9),
        at(0.99),
        at(1.0)
    );
}

fn runtime() -> Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap()
}

fn env_or<T: std::str::FromStr>(name: &str, default: T) -> T {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}
