//! Load benchmark of the community server on loopback: the release `aigenora server`
//! process against concurrent signed clients (our REST client, signing like the
//! reference). Phases: signed `GET /api/v1/invitations` (repeated, so answered from the
//! server's list cache), the same reads while one client keeps renewing (every renewal
//! invalidates the cache, so reads go to SQLite), invitation creates, renews. Besides
//! throughput and latency, each phase reports the server process's CPU time per request
//! (from /proc), which stays comparable when other jobs share the machine.
//!
//! Every writing key is registered first (writes need a registered key), with the proof
//! of work and the per-key and per-address rate limits switched off: one load tool on one
//! address is not what those limits are for. `BENCH_SERVER_ARGS` replaces those flags
//! (e.g. `""` to measure with the defaults, or the flags an older build understands).
//!
//! `cargo bench --bench server_load` (or `benches/server_load.sh`); tune with
//! `BENCH_CLIENTS` (default 32), `BENCH_SECONDS` per phase (default 5) and
//! `BENCH_CREATE_KEYS` (registered keys the create phase uses, 3 offers each; default
//! 6000; when they run out the remaining calls count as errors). `BENCH_SERVER` names
//! another `aigenora` binary to serve (to compare two builds on the same load).
//! `BENCH_DATABASE` is the database URL (default: a new SQLite file; a `postgres://` URL
//! for PostgreSQL, see `benches/server_load_postgres.sh`) and `BENCH_INSTANCES` how many
//! server processes share it (default 1; clients are spread over them round robin, and
//! the CPU line sums the servers' CPU, not the database's).

// Each benchmark uses its own part of the shared helpers.
#[allow(dead_code)]
mod common;

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use aigenora::api::invitation::{BrowseFilter, NewInvitation};
use aigenora::api::protocol::NewProtocol;
use aigenora::client::RestClient;
use aigenora::identity::Identity;
use aigenora::spec::Spec;
use common::cpu_seconds;

/// The server flags that lift the limits meant for an open network (see the module docs).
const UNLIMITED: &str = "--pow-difficulty 0 --key-rate 0 --address-rate 0 --challenges-per-address 100000 \
     --max-connections 4096 --connections-per-address 0";

/// Latencies of one phase, in microseconds, and how many calls failed.
struct Samples {
    micros: Vec<u64>,
    errors: u64,
}

fn main() {
    let clients: usize = env_or("BENCH_CLIENTS", 32);
    let seconds: u64 = env_or("BENCH_SECONDS", 5);
    let create_keys: usize = env_or("BENCH_CREATE_KEYS", 6000);
    let instances: usize = env_or("BENCH_INSTANCES", 1);
    let dir = tempfile::tempdir().unwrap();
    let database = std::env::var("BENCH_DATABASE")
        .unwrap_or_else(|_| format!("sqlite://{}", dir.path().join("bench.sqlite3").display()));
    let servers: Vec<(ServerProcess, String)> = (0..instances.max(1))
        .map(|_| start_server(&database))
        .collect();
    let urls: Urls = Arc::new(servers.iter().map(|(_, url)| url.clone()).collect());
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    println!(
        "server_load: {clients} clients, {seconds} s per phase, {} on {}",
        urls.join(" + "),
        aigenora::server::store::redacted(&database)
    );
    runtime.block_on(async {
        let protocol_id = setup(&urls).await;
        let duration = Duration::from_secs(seconds);
        // Background offers so reads return real pages (50 keys x 3 invitations).
        for host in registered_clients(&urls, 50, clients).await {
            for seed in 0..3 {
                host.create_invitation(&offer(host.identity(), &protocol_id, seed))
                    .await
                    .unwrap();
            }
        }
        let cpu = ServerCpu(servers.iter().map(|(server, _)| server.0.id()).collect());
        let mut phase = cpu.start();
        let reads = run(&urls, clients, duration, browse).await;
        phase.report("signed GET /api/v1/invitations?limit=20", duration, [reads]);
        phase = cpu.start();
        let (reads, renewals) = tokio::join!(
            run(&urls, clients - 1, duration, browse),
            renew_phase(&urls, &protocol_id, 1, duration)
        );
        phase.report(
            "the same GETs beside 1 renewing client (reads; renews)",
            duration,
            [reads, renewals],
        );
        let create_protocol = protocol_id.clone();
        let hosts: Arc<Vec<Identity>> = Arc::new(
            registered_clients(&urls, create_keys, clients)
                .await
                .into_iter()
                .map(|c| c.identity().clone())
                .collect(),
        );
        let next_offer = Arc::new(AtomicUsize::new(0));
        phase = cpu.start();
        let created = run(&urls, clients, duration, move |c, _| {
            let protocol_id = create_protocol.clone();
            // Three offers per registered key keeps each key at the active limit.
            let n = next_offer.fetch_add(1, Ordering::Relaxed);
            let host = hosts.get(n / 3).map(|key| c.with_identity(key.clone()));
            Box::pin(async move {
                let Some(c) = host else {
                    // Counted as an error; yield so the exhausted loops cannot starve the timer.
                    tokio::task::yield_now().await;
                    return Err(aigenora::client::ClientError::InvalidId {
                        what: "offer (BENCH_CREATE_KEYS ran out)",
                        value: n.to_string(),
                    });
                };
                c.create_invitation(&offer(c.identity(), &protocol_id, n as u32))
                    .await
                    .map(drop)
            })
        })
        .await;
        phase.report("POST /api/v1/invitations (create)", duration, [created]);
        phase = cpu.start();
        let renewals = renew_phase(&urls, &protocol_id, clients, duration).await;
        phase.report("POST /api/v1/invitations/{id}/renew", duration, [renewals]);
    });
    drop(servers);
}

/// One signed browse of the first page.
fn browse(c: RestClient, _: u64) -> Call {
    Box::pin(async move {
        let filter = BrowseFilter {
            limit: Some(20),
            ..Default::default()
        };
        c.browse(&filter).await.map(drop)
    })
}

/// The servers' URLs; client `n` uses `urls[n % len]`.
type Urls = Arc<Vec<String>>;

fn url_of(urls: &Urls, n: usize) -> &str {
    &urls[n % urls.len()]
}

/// Measures the servers' and this process's CPU use over phases.
struct ServerCpu(Vec<u32>);

/// CPU seconds used so far, at the start of a phase.
struct PhaseCpu {
    pids: Vec<String>,
    server: f64,
    load_tool: f64,
}

fn servers_cpu(pids: &[String]) -> f64 {
    pids.iter().map(|pid| cpu_seconds(pid)).sum()
}

impl ServerCpu {
    fn start(&self) -> PhaseCpu {
        let pids: Vec<String> = self.0.iter().map(u32::to_string).collect();
        PhaseCpu {
            server: servers_cpu(&pids),
            load_tool: cpu_seconds("self"),
            pids,
        }
    }
}

impl PhaseCpu {
    /// Prints one line per kind of request of the phase, then the CPU the phase took.
    fn report<const N: usize>(&self, name: &str, duration: Duration, kinds: [Samples; N]) {
        let server = servers_cpu(&self.pids) - self.server;
        let load_tool = cpu_seconds("self") - self.load_tool;
        let mut requests = 0;
        let lines: Vec<String> = kinds
            .into_iter()
            .map(|samples| {
                requests += samples.micros.len();
                latencies(duration, samples)
            })
            .collect();
        println!("{name}: {}", lines.join("; "));
        println!(
            "  CPU: server {server:.2} s ({:.0} us/request), load tool {load_tool:.2} s",
            server * 1e6 / requests.max(1) as f64
        );
    }
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
async fn setup(url: &Urls) -> String {
    let spec = Spec::from_value(serde_json::json!({
        "name": "Bench", "messages": [
            {"name": "ping", "direction": "guest_to_host",
             "fields": {"action": {"type": "enum", "values": ["ping"], "required": true}}},
            {"name": "pong", "direction": "host_to_guest",
             "fields": {"action": {"type": "enum", "values": ["pong"], "required": true}}}]
    }))
    .unwrap();
    let body = NewProtocol::for_spec(&spec);
    registered_clients(url, 1, 1).await[0]
        .register_protocol(&body)
        .await
        .unwrap();
    body.protocol_id
}

/// `count` clients of fresh keys, registered by `parallel` tasks (not timed); the keys of
/// one task share its connections.
async fn registered_clients(urls: &Urls, count: usize, parallel: usize) -> Vec<RestClient> {
    let mut tasks = tokio::task::JoinSet::new();
    let parallel = parallel.clamp(1, count.max(1));
    for task in 0..parallel {
        let url = url_of(urls, task).to_string();
        let share = count / parallel + usize::from(task < count % parallel);
        tasks.spawn(async move {
            let mut registered = Vec::with_capacity(share);
            let base = client(&url, Identity::generate());
            for _ in 0..share {
                let c = base.with_identity(Identity::generate());
                c.register("bench", "").await.unwrap();
                registered.push(c);
            }
            registered
        });
    }
    let mut all = Vec::with_capacity(count);
    while let Some(registered) = tasks.join_next().await {
        all.extend(registered.unwrap());
    }
    all
}

/// Each client owns one invitation and renews it in a loop.
async fn renew_phase(url: &Urls, protocol_id: &str, clients: usize, duration: Duration) -> Samples {
    let mut owned = Vec::new();
    for (seed, c) in registered_clients(url, clients, clients)
        .await
        .into_iter()
        .enumerate()
    {
        let post_id = c
            .create_invitation(&offer(c.identity(), protocol_id, seed as u32))
            .await
            .unwrap()
            .post_id;
        owned.push((c, post_id));
    }
    let owned = Arc::new(owned);
    let next = Arc::new(AtomicUsize::new(0));
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
    urls: &Urls,
    clients: usize,
    duration: Duration,
    call: impl Fn(RestClient, u64) -> Call + Send + Sync + Clone + 'static,
) -> Samples {
    let stop = Arc::new(AtomicBool::new(false));
    let mut tasks = Vec::new();
    for n in 0..clients {
        let (stop, call, c) = (
            stop.clone(),
            call.clone(),
            client(url_of(urls, n), Identity::generate()),
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

/// Throughput and latency percentiles of one kind of request.
fn latencies(duration: Duration, mut samples: Samples) -> String {
    samples.micros.sort_unstable();
    let percentile = |p: f64| {
        let index = ((samples.micros.len() as f64 * p).ceil() as usize).saturating_sub(1);
        samples.micros.get(index).copied().unwrap_or(0) as f64 / 1000.0
    };
    format!(
        "{:.0} req/s ({} ok, {} errors), p50 {:.2} ms, p99 {:.2} ms, max {:.2} ms",
        samples.micros.len() as f64 / duration.as_secs_f64(),
        samples.micros.len(),
        samples.errors,
        percentile(0.50),
        percentile(0.99),
        percentile(1.0),
    )
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

fn start_server(database: &str) -> (ServerProcess, String) {
    let binary = std::env::var("BENCH_SERVER").unwrap_or(env!("CARGO_BIN_EXE_aigenora").into());
    let limits = std::env::var("BENCH_SERVER_ARGS").unwrap_or(UNLIMITED.into());
    let mut child = Command::new(binary)
        .args(["server", "--listen", "127.0.0.1:0", "--database", database])
        .args(limits.split_whitespace())
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
