//! Load benchmark of the community server on loopback: the release `aigenora server`
//! process against concurrent signed clients (our REST client, signing like the
//! reference). Phases: signed `GET /api/v1/invitations`, invitation creates, renews.
//!
//! `cargo bench --bench server_load` (or `benches/server_load.sh`); tune with
//! `BENCH_CLIENTS` (default 32) and `BENCH_SECONDS` per phase (default 5).

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use aigenora::api::invitation::{BrowseFilter, NewInvitation};
use aigenora::api::protocol::NewProtocol;
use aigenora::client::RestClient;
use aigenora::identity::Identity;
use aigenora::spec::Spec;

/// Latencies of one phase, in microseconds, and how many calls failed.
struct Samples {
    micros: Vec<u64>,
    errors: u64,
}

fn main() {
    let clients: usize = env_or("BENCH_CLIENTS", 32);
    let seconds: u64 = env_or("BENCH_SECONDS", 5);
    let dir = tempfile::tempdir().unwrap();
    let (server, url) = start_server(dir.path());
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    println!("server_load: {clients} clients, {seconds} s per phase, {url}");
    runtime.block_on(async {
        let protocol_id = setup(&url).await;
        let duration = Duration::from_secs(seconds);
        // Background offers so reads return real pages (50 keys x 3 invitations).
        for _ in 0..50 {
            let host = client(&url, Identity::generate());
            for seed in 0..3 {
                host.create_invitation(&offer(host.identity(), &protocol_id, seed))
                    .await
                    .unwrap();
            }
        }
        report(
            "signed GET /api/v1/invitations?limit=20",
            duration,
            run(&url, clients, duration, |c, _| {
                Box::pin(async move {
                    let filter = BrowseFilter {
                        limit: Some(20),
                        ..Default::default()
                    };
                    c.browse(&filter).await.map(drop)
                })
            })
            .await,
        );
        let create_protocol = protocol_id.clone();
        let created = run(&url, clients, duration, move |c, n| {
            let protocol_id = create_protocol.clone();
            Box::pin(async move {
                // A fresh key for every offer keeps each key under the active limit.
                let c = c.with_identity(Identity::generate());
                c.create_invitation(&offer(c.identity(), &protocol_id, n as u32))
                    .await
                    .map(drop)
            })
        })
        .await;
        report("POST /api/v1/invitations (create)", duration, created);
        let renewals = renew_phase(&url, &protocol_id, clients, duration).await;
        report("POST /api/v1/invitations/{id}/renew", duration, renewals);
    });
    drop(server);
}

/// The server process, stopped (SIGTERM) when dropped, also on a panic.
struct ServerProcess(Child);

impl Drop for ServerProcess {
    fn drop(&mut self) {
        let _ = Command::new("kill")
            .arg("-TERM")
            .arg(self.0.id().to_string())
            .status();
        let _ = self.0.wait();
    }
}

/// Registers the benchmark protocol and returns its id.
async fn setup(url: &str) -> String {
    let spec = Spec::from_value(serde_json::json!({
        "name": "Bench", "messages": [
            {"name": "ping", "direction": "guest_to_host",
             "fields": {"action": {"type": "enum", "values": ["ping"], "required": true}}},
            {"name": "pong", "direction": "host_to_guest",
             "fields": {"action": {"type": "enum", "values": ["pong"], "required": true}}}]
    }))
    .unwrap();
    let body = NewProtocol::for_spec(&spec);
    client(url, Identity::generate())
        .register_protocol(&body)
        .await
        .unwrap();
    body.protocol_id
}

/// Each client owns one invitation and renews it in a loop.
async fn renew_phase(url: &str, protocol_id: &str, clients: usize, duration: Duration) -> Samples {
    let mut owned = Vec::new();
    for seed in 0..clients {
        let c = client(url, Identity::generate());
        let post_id = c
            .create_invitation(&offer(c.identity(), protocol_id, seed as u32))
            .await
            .unwrap()
            .post_id;
        owned.push((c, post_id));
    }
    let owned = Arc::new(owned);
    let next = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    run(url, clients, duration, move |_, _| {
        let owned = owned.clone();
        let index = next.fetch_add(1, Ordering::Relaxed) % owned.len();
        Box::pin(async move {
            let (c, post_id) = &owned[index];
            c.renew_invitation(post_id).await.map(drop)
        })
    })
    .await
}

type Call = std::pin::Pin<
    Box<dyn std::future::Future<Output = Result<(), aigenora::client::ClientError>> + Send>,
>;

/// Runs `clients` loops of `call` for `duration` and gathers their latencies.
async fn run(
    url: &str,
    clients: usize,
    duration: Duration,
    call: impl Fn(RestClient, u64) -> Call + Send + Sync + Clone + 'static,
) -> Samples {
    let stop = Arc::new(AtomicBool::new(false));
    let mut tasks = Vec::new();
    for _ in 0..clients {
        let (stop, call, c) = (
            stop.clone(),
            call.clone(),
            client(url, Identity::generate()),
        );
        tasks.push(tokio::spawn(async move {
            let mut samples = Samples {
                micros: Vec::new(),
                errors: 0,
            };
            let mut n = 0u64;
            while !stop.load(Ordering::Relaxed) {
                let started = Instant::now();
                match call(c.clone(), n).await {
                    Ok(()) => samples.micros.push(started.elapsed().as_micros() as u64),
                    Err(_) => samples.errors += 1,
                }
                n += 1;
            }
            samples
        }));
    }
    tokio::time::sleep(duration).await;
    stop.store(true, Ordering::Relaxed);
    let mut all = Samples {
        micros: Vec::new(),
        errors: 0,
    };
    for task in tasks {
        let samples = task.await.unwrap();
        all.micros.extend(samples.micros);
        all.errors += samples.errors;
    }
    all
}

fn report(name: &str, duration: Duration, mut samples: Samples) {
    samples.micros.sort_unstable();
    let percentile = |p: f64| {
        let index = ((samples.micros.len() as f64 * p).ceil() as usize).saturating_sub(1);
        samples.micros.get(index).copied().unwrap_or(0) as f64 / 1000.0
    };
    println!(
        "{name}: {:.0} req/s ({} ok, {} errors), p50 {:.2} ms, p99 {:.2} ms, max {:.2} ms",
        samples.micros.len() as f64 / duration.as_secs_f64(),
        samples.micros.len(),
        samples.errors,
        percentile(0.50),
        percentile(0.99),
        percentile(1.0),
    );
}

fn offer(host: &Identity, protocol_id: &str, seed: u32) -> NewInvitation {
    let mut new = NewInvitation::signed(
        host,
        protocol_id,
        &format!("nodebench{seed:08x}{}", &host.public_key()[..16]),
    );
    new.message = "bench".into();
    new.tags = vec!["bench".into()];
    new
}

fn client(url: &str, identity: Identity) -> RestClient {
    RestClient::new(url, identity).unwrap()
}

fn start_server(dir: &std::path::Path) -> (ServerProcess, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_aigenora"))
        .args(["server", "--listen", "127.0.0.1:0", "--database"])
        .arg(format!("sqlite://{}", dir.join("bench.sqlite3").display()))
        .env("RUST_LOG", "warn")
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let url = line
        .split_whitespace()
        .find(|w| w.starts_with("http://"))
        .unwrap()
        .to_string();
    (ServerProcess(child), url)
}

fn env_or<T: std::str::FromStr>(name: &str, default: T) -> T {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}
