//! Sessions across the simulated internet of `tests/internet` (root only) at a 50 ms round
//! trip (the user-space wire between NAT A and the public network, 25 ms each way, no
//! loss): the handshake and the per-round latency of a 99-round Rock-Paper-Scissors game,
//! side by side in one run —
//! - ours relayed: NAT A symmetric, so the session stays on our relay;
//! - ours direct: both NATs endpoint-independent, direct after the upgrade;
//! - the reference, host on the public network and guest behind NAT A (it cannot use our
//!   relay, so this is the one placement it plays in), and ours in the same placement.
//!
//! A commit-reveal round played in the contract's order one frame at a time needs two round
//! trips (100 ms); ours needs one (50 ms: our guest reveals with its commitment, and the
//! host's reveal, result and next commitment travel together), which no commit-reveal round
//! can beat. Goals: direct within 2 ms of the flow's minimum, and the relay adding at most
//! 1 ms per crossing (a round of ours crosses it twice). Then the relay's memory per idle
//! client connection.
//!
//! `cargo bench --bench internet_paths`; `BENCH_RUNS` sessions per case (default 3);
//! `BENCH_RELAY_CLIENTS` idle clients for the memory figure (default 1000); `BENCH_KEEP=1`
//! keeps the session directories for a closer look; `BENCH_OURS=/path/to/aigenora` plays
//! that build instead of the one cargo built; `BENCH_BEFORE=/path/to/aigenora` adds the
//! direct case played by that (older) build, interleaved, for a before/after comparison.
//! The reference comes from `AIGENORA_REFERENCE_PYTHON`, else `target/reference-venv` (run
//! the interop tests once to create it).

#[path = "../tests/support/cli.rs"]
#[allow(dead_code)]
mod cli;
#[allow(dead_code)]
mod common;
#[path = "../tests/support/control.rs"]
#[allow(dead_code)]
mod control;
#[path = "../tests/support/process.rs"]
#[allow(dead_code)]
mod process;
#[path = "../tests/support/system.rs"]
mod system;
#[path = "../tests/internet/topology.rs"]
#[allow(dead_code)]
mod topology;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use process::{Proc, memory_kib};
use serde_json::Value;
use topology::{Nat, Options, Place, RELAY_IP, SERVER_IP, Shape, Topology};

const ROUNDS: usize = 99;
const OURS_OPTIONS: &str =
    r#"{"best_of":99,"termination":"fixed_rounds","moves":"rock,paper,scissors"}"#;
const REFERENCE_OPTIONS: &str = r#"{"best_of":99,"termination":"fixed_rounds"}"#;
const REFERENCE_RPS: &str = "43a806481a8e8cd00bc89f4676756c9be9081c0dd8392bee8e3534da41daa55f";
const SESSION_LIMIT: Duration = Duration::from_secs(120);
/// UDP echoes that measure the line's own round trip.
const ECHOES: usize = 200;
/// Half the round trip, on the wire each way.
const ONE_WAY: Duration = Duration::from_millis(25);

fn main() {
    let runs: usize = env_or("BENCH_RUNS", 3);
    let clients: usize = env_or("BENCH_RELAY_CLIENTS", 1000);
    println!(
        "internet_paths: {runs} sessions per case, {} ms round trip, load {}",
        ONE_WAY.as_millis() * 2,
        common::load_average()
    );
    let relayed = Community::start(Nat::Symmetric);
    let direct = Community::start(Nat::EndpointIndependent);
    let mut cases: Vec<(&str, &Community, Case)> = vec![
        (
            "ours, relayed (NAT A symmetric)",
            &relayed,
            Case::OursBehindNats,
        ),
        (
            "ours, direct after the upgrade",
            &direct,
            Case::OursBehindNats,
        ),
        (
            "ours, host public, guest behind NAT A",
            &direct,
            Case::OursPublicHost,
        ),
        (
            "reference, host public, guest behind NAT A",
            &direct,
            Case::ReferencePublicHost,
        ),
    ];
    if before().is_some() {
        cases.push((
            "BENCH_BEFORE, direct after the upgrade",
            &direct,
            Case::BeforeBehindNats,
        ));
    }
    let mut results: Vec<Vec<Measured>> = vec![Vec::new(); cases.len()];
    for _ in 0..runs {
        for (index, (name, community, case)) in cases.iter().enumerate() {
            let measured = community.play(*case);
            println!("  {name}: {measured:?}");
            results[index].push(measured);
        }
    }
    println!("\nmedians over {runs} sessions (ms):");
    println!(
        "{:<46} {:>8} {:>10} {:>14} {:>10} {:>10}",
        "case", "dial", "handshake", "join→joined", "per round", "path"
    );
    for ((name, _, _), measured) in cases.iter().zip(&results) {
        let column = |pick: fn(&Measured) -> Option<f64>| {
            median(measured.iter().filter_map(pick).collect())
                .map_or("-".to_string(), |value| format!("{value:.1}"))
        };
        println!(
            "{:<46} {:>8} {:>10} {:>14} {:>10} {:>10}",
            name,
            column(|m| m.dial_ms),
            column(|m| m.handshake_ms),
            column(|m| Some(m.join_to_joined_ms)),
            column(|m| Some(m.per_round_ms)),
            measured.last().map_or("-", |m| m.path.as_str()),
        );
    }
    let line = direct.line_round_trip();
    println!(
        "the line itself: a UDP echo from behind NAT A to the public network takes {line:.2} ms \
         (median of {ECHOES}; the wire's nominal {} ms plus the namespaces' stack and the \
         user-space wire's own hops)",
        ONE_WAY.as_millis() * 2
    );
    // A round of ours is one round trip: two crossings of the path.
    let minimum = 2.0 * ONE_WAY.as_secs_f64() * 1000.0;
    let per_round = |index: usize| {
        median(results[index].iter().map(|m| m.per_round_ms).collect()).unwrap_or(f64::NAN)
    };
    let (relayed_round, direct_round) = (per_round(0), per_round(1));
    println!(
        "flow minimum {minimum:.1} ms a round (one nominal round trip; {line:.2} ms on the line \
         as measured; two, {:.1} ms, played one frame at a time); direct {direct_round:.2} ms = \
         minimum + {:.2} ms (goal ≤ 2), measured line + {:.2} ms; relayed {relayed_round:.2} ms \
         = direct + {:.2} ms over 2 crossings = {:.2} ms a crossing (goal ≤ 1)",
        2.0 * minimum,
        direct_round - minimum,
        direct_round - line,
        relayed_round - direct_round,
        (relayed_round - direct_round) / 2.0
    );
    if cases.len() > 4 {
        let before_round = per_round(4);
        println!(
            "BENCH_BEFORE direct {before_round:.2} ms = minimum + {:.2} ms, measured line + {:.2} ms",
            before_round - minimum,
            before_round - line,
        );
    }
    drop((relayed, direct));
    relay_memory(clients);
    println!("load after: {}", common::load_average());
}

#[derive(Debug, Clone, Copy)]
enum Case {
    OursBehindNats,
    /// As `OursBehindNats`, host and guest being the `BENCH_BEFORE` build.
    BeforeBehindNats,
    OursPublicHost,
    ReferencePublicHost,
}

#[derive(Debug, Clone)]
struct Measured {
    /// The guest's dial (ours only: the reference records no peer_connected).
    dial_ms: Option<f64>,
    /// The guest's connection open → its handshake done (ours only).
    handshake_ms: Option<f64>,
    /// The guest's `join` started → its handshake done.
    join_to_joined_ms: f64,
    /// Median time between the host's messages of one kind, one a round.
    per_round_ms: f64,
    /// The guest's last recorded path (ours), or "direct" (the reference has no relay).
    path: String,
}

/// A topology with the community server and our relay on its public network.
struct Community {
    topology: Topology,
    work: tempfile::TempDir,
    _server: Proc,
    _relay: Proc,
}

impl Community {
    fn start(nat_a: Nat) -> Community {
        let topology = Topology::build(Options {
            nat_a,
            nat_b: Nat::EndpointIndependent,
            wire: Some(Shape {
                delay: ONE_WAY,
                loss: 0.0,
            }),
        });
        let keep = std::env::var_os("BENCH_KEEP").is_some();
        let work = tempfile::Builder::new()
            .disable_cleanup(keep)
            .tempdir()
            .unwrap();
        if keep {
            println!("  (keeping {})", work.path().display());
        }
        let relay_url = format!("http://{RELAY_IP}:3340/");
        let mut relay = topology.command(Place::Public, ours());
        relay
            .args(["relay", "--listen", &format!("{RELAY_IP}:3340")])
            .env("RUST_LOG", "warn");
        let relay = Proc::spawn("relay", relay);
        relay.wait_for_line("listening", SESSION_LIMIT);
        let database = format!("sqlite://{}", work.path().join("server.sqlite3").display());
        let mut server = topology.command(Place::Public, ours());
        server
            .args(["server", "--listen", &format!("{SERVER_IP}:41000")])
            .args(["--database", &database, "--pow-difficulty", "1"])
            .args(["--relay-url", &relay_url])
            .env("RUST_LOG", "warn");
        let server = Proc::spawn("server", server);
        server.wait_for_line("recommending relay", SESSION_LIMIT);
        let community = Community {
            topology,
            work,
            _server: server,
            _relay: relay,
        };
        for (name, place) in [
            ("alice", Place::Host),
            ("bob", Place::Guest),
            ("pat", Place::Public),
            ("nat", Place::Host),
        ] {
            community.ours_ok(name, place, &["init"]);
            community.ours_ok(name, place, &["register", "--nickname", name]);
        }
        for (name, place) in [("carol", Place::Public), ("dave", Place::Host)] {
            community.reference_ok(name, place, &["init"]);
            community.reference_ok(name, place, &["register", "--nickname", name]);
        }
        let spec = community.reference_rps("carol").join("spec.json");
        community.reference_ok(
            "carol",
            Place::Public,
            &["protocol", "register", spec.to_str().unwrap()],
        );
        community
    }

    /// The median round trip of a UDP echo from the host's place to the public network,
    /// across the same wire the sessions cross.
    fn line_round_trip(&self) -> f64 {
        use std::net::UdpSocket;
        let echo = self.topology.within(Place::Public, || {
            UdpSocket::bind((SERVER_IP, 5999)).unwrap()
        });
        let server = std::thread::spawn(move || {
            let mut buffer = [0u8; 64];
            for _ in 0..ECHOES {
                let (n, from) = echo.recv_from(&mut buffer).unwrap();
                echo.send_to(&buffer[..n], from).unwrap();
            }
        });
        let client = self
            .topology
            .within(Place::Host, || UdpSocket::bind("0.0.0.0:0").unwrap());
        client
            .set_read_timeout(Some(Duration::from_secs(5)))
            .unwrap();
        let mut trips = Vec::with_capacity(ECHOES);
        for i in 0..ECHOES {
            let sent = Instant::now();
            client
                .send_to(&(i as u32).to_be_bytes(), (SERVER_IP, 5999))
                .unwrap();
            let mut buffer = [0u8; 64];
            client.recv_from(&mut buffer).unwrap();
            trips.push(sent.elapsed().as_secs_f64() * 1000.0);
        }
        server.join().unwrap();
        median(trips).unwrap()
    }

    fn dir(&self, name: &str) -> PathBuf {
        self.work.path().join(name)
    }

    fn ours_command(&self, name: &str, place: Place, args: &[&str]) -> Command {
        self.build_command(&ours(), name, place, args)
    }

    /// `binary` (ours or the `BENCH_BEFORE` build) as `name` at `place`.
    fn build_command(&self, binary: &str, name: &str, place: Place, args: &[&str]) -> Command {
        let mut command = self.topology.command(place, binary);
        command
            .arg("--data-dir")
            .arg(self.dir(name))
            .args(["--server", &format!("http://{SERVER_IP}:41000")])
            .args(args)
            .env_remove("AIGENORA_RELAY")
            .env("RUST_LOG", "warn");
        command
    }

    fn ours_ok(&self, name: &str, place: Place, args: &[&str]) -> String {
        ok(self.ours_command(name, place, args))
    }

    /// `python -m aigenora SUB... --data-dir D REST...` (its `--data-dir` goes after the
    /// innermost subcommand).
    fn reference_command(&self, name: &str, place: Place, args: &[&str]) -> Command {
        let depth = if args[0] == "protocol" { 2 } else { 1 };
        let mut command = self.topology.command(place, reference_python());
        command
            .args(["-m", "aigenora"])
            .args(&args[..depth])
            .arg("--data-dir")
            .arg(self.dir(name))
            .args(&args[depth..])
            .env("P2P_SERVER", format!("http://{SERVER_IP}:41000"))
            .env("PYTHONUNBUFFERED", "1");
        command
    }

    fn reference_ok(&self, name: &str, place: Place, args: &[&str]) -> String {
        ok(self.reference_command(name, place, args))
    }

    fn reference_rps(&self, name: &str) -> PathBuf {
        self.dir(name)
            .join("protocols")
            .join(&REFERENCE_RPS[..8])
            .join(&REFERENCE_RPS[8..])
    }

    fn play(&self, case: Case) -> Measured {
        let autonomous = ["--control-mode", "autonomous"];
        let (host_dir, guest_dir, launch) = match case {
            Case::OursBehindNats | Case::BeforeBehindNats | Case::OursPublicHost => {
                let (host, host_place, guest, guest_place) = match case {
                    Case::OursPublicHost => ("pat", Place::Public, "nat", Place::Host),
                    _ => ("alice", Place::Host, "bob", Place::Guest),
                };
                let binary = match case {
                    Case::BeforeBehindNats => before().expect("BENCH_BEFORE"),
                    _ => ours(),
                };
                let mut args = vec!["host", "--protocol-dir", "rock-paper-scissors"];
                args.extend(["--options", OURS_OPTIONS]);
                args.extend(autonomous);
                let hosting =
                    Proc::spawn("host", self.build_command(&binary, host, host_place, &args));
                let post_id = hosting.wait_for_line("post_id: ", SESSION_LIMIT)
                    ["post_id: ".len()..]
                    .trim()
                    .to_string();
                let launch = Instant::now();
                let mut args = vec!["join", post_id.as_str()];
                args.extend(autonomous);
                Proc::spawn(
                    "join",
                    self.build_command(&binary, guest, guest_place, &args),
                )
                .succeed(SESSION_LIMIT);
                hosting.succeed(SESSION_LIMIT);
                (
                    newest(&self.dir(host), "host"),
                    newest(&self.dir(guest), "guest"),
                    launch,
                )
            }
            Case::ReferencePublicHost => {
                let rps = self.reference_rps("carol");
                let mut args = vec!["host", "--protocol-dir", rps.to_str().unwrap()];
                args.extend(["--options", REFERENCE_OPTIONS]);
                args.extend(autonomous);
                args.push("--daemon");
                let hosting = daemon_line(&self.reference_ok("carol", Place::Public, &args));
                let launch = Instant::now();
                let post_id = hosting["post_id"].as_str().unwrap();
                let mut args = vec!["join", post_id];
                args.extend(autonomous);
                args.push("--daemon");
                let joining = daemon_line(&self.reference_ok("dave", Place::Host, &args));
                let state = |line: &Value| PathBuf::from(line["state_dir"].as_str().unwrap());
                let (host_dir, guest_dir) = (state(&hosting), state(&joining));
                wait_ended(&[&host_dir, &guest_dir]);
                // Let both daemons report to the server and exit.
                std::thread::sleep(Duration::from_secs(1));
                (host_dir, guest_dir, launch)
            }
        };
        measure(&host_dir, &guest_dir, launch)
    }
}

fn measure(host_dir: &Path, guest_dir: &Path, launch: Instant) -> Measured {
    let (host, guest) = (events(host_dir), events(guest_dir));
    let launched = launch_wall_time(launch);
    let at = |event: &Value| event["t"].as_f64().unwrap();
    let find = |log: &[Value], kind: &str| log.iter().find(|e| e["type"] == kind).cloned();
    let joined = find(&guest, "peer_joined").expect("the guest's peer_joined");
    let connected = find(&guest, "peer_connected");
    let per_round_ms = per_round(&host);
    let path = guest
        .iter()
        .rfind(|event| event["type"] == "path_changed")
        .map_or("direct".to_string(), |event| {
            event["data"]["path"].as_str().unwrap_or("?").to_string()
        });
    Measured {
        dial_ms: connected
            .as_ref()
            .and_then(|c| c["data"]["dial_ms"].as_f64()),
        handshake_ms: connected.map(|c| (at(&joined) - at(&c)) * 1000.0),
        join_to_joined_ms: (at(&joined) - launched) * 1000.0,
        per_round_ms,
        path,
    }
}

/// The median interval between the host's sent messages of the first action it sends once
/// a round.
fn per_round(host: &[Value]) -> f64 {
    let sent: Vec<&Value> = host
        .iter()
        .filter(|e| e["type"] == "protocol_message" && e["data"]["direction"] == "sent")
        .collect();
    let action_of = |e: &Value| {
        e["data"]["msg"]["action"]
            .as_str()
            .unwrap_or("")
            .to_string()
    };
    let once_a_round = sent
        .iter()
        .map(|e| action_of(e))
        .find(|action| sent.iter().filter(|e| action_of(e) == *action).count() == ROUNDS)
        .expect("a message the host sends once a round");
    let times: Vec<f64> = sent
        .iter()
        .filter(|e| action_of(e) == once_a_round)
        .map(|e| e["t"].as_f64().unwrap())
        .collect();
    let intervals = times.windows(2).map(|w| (w[1] - w[0]) * 1000.0).collect();
    median(intervals).unwrap()
}

fn events(dir: &Path) -> Vec<Value> {
    let text = std::fs::read_to_string(dir.join("events.jsonl"))
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
    text.lines()
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
        .map(|mut event| {
            let ts = event["ts"].as_str().unwrap_or_default();
            let t = chrono::DateTime::parse_from_rfc3339(ts)
                .map(|t| t.timestamp_micros() as f64 / 1e6)
                .unwrap_or(f64::NAN);
            event["t"] = t.into();
            event
        })
        .collect()
}

/// The wall-clock time of a moment measured with `Instant`.
fn launch_wall_time(launch: Instant) -> f64 {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs_f64();
    now - launch.elapsed().as_secs_f64()
}

fn newest(data_dir: &Path, role: &str) -> PathBuf {
    control::newest_dir(&data_dir.join("sessions"), role).expect("a session dir")
}

fn wait_ended(dirs: &[&Path]) {
    let started = Instant::now();
    for dir in dirs {
        while !std::fs::read_to_string(dir.join("events.jsonl"))
            .unwrap_or_default()
            .contains("\"session_ended\"")
        {
            assert!(
                started.elapsed() < SESSION_LIMIT,
                "{} never ended",
                dir.display()
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

fn daemon_line(stdout: &str) -> Value {
    let line = stdout
        .lines()
        .rfind(|line| line.starts_with('{'))
        .unwrap_or("");
    serde_json::from_str(line).unwrap_or_else(|_| panic!("no JSON line: {stdout}"))
}

fn ok(mut command: Command) -> String {
    let output = command.output().unwrap();
    assert!(
        output.status.success(),
        "{command:?} failed: {}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout).unwrap()
}

/// Our binary: the one cargo built with this benchmark, or the one `BENCH_OURS` names (a
/// release build driven by a harness built without optimisation, say).
fn ours() -> String {
    std::env::var("BENCH_OURS")
        .ok()
        .filter(|path| !path.is_empty())
        .unwrap_or_else(|| env!("CARGO_BIN_EXE_aigenora").to_string())
}

/// The older build named by `BENCH_BEFORE`, if any.
fn before() -> Option<String> {
    std::env::var("BENCH_BEFORE")
        .ok()
        .filter(|path| !path.is_empty())
}

fn reference_python() -> PathBuf {
    let python = std::env::var_os("AIGENORA_REFERENCE_PYTHON")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            Path::new(env!("CARGO_MANIFEST_DIR")).join("target/reference-venv/bin/python")
        });
    assert!(
        python.exists(),
        "no reference client at {} (run the interop tests once, or set AIGENORA_REFERENCE_PYTHON)",
        python.display()
    );
    python
}

/// Resident memory of one relay process before and after `clients` idle client connections.
fn relay_memory(clients: usize) {
    let mut command = Command::new(ours());
    command
        .args(["relay", "--listen", "127.0.0.1:0", "--stun-listen", "off"])
        .env("RUST_LOG", "error");
    let relay = Proc::spawn("relay", command);
    let line = relay.wait_for_line("listening on", SESSION_LIMIT);
    let url: iroh::RelayUrl = line
        .split_whitespace()
        .find(|word| word.starts_with("http://"))
        .unwrap()
        .parse()
        .unwrap();
    let pid = u64::from(relay.pid());
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let connect = |count: usize| {
        runtime.block_on(async {
            let mut connected = Vec::with_capacity(count);
            for _ in 0..count {
                let key = iroh::SecretKey::generate(rand::rngs::OsRng);
                let builder = iroh_relay::client::ClientBuilder::new(
                    url.clone(),
                    key,
                    iroh_relay::dns::DnsResolver::new(),
                );
                connected.push(builder.connect().await.expect("a relay client connects"));
            }
            connected
        })
    };
    let settle = || std::thread::sleep(Duration::from_secs(2));
    let warm = connect(10);
    settle();
    let before = memory_kib(pid, "VmRSS");
    let idle = connect(clients);
    settle();
    let after = memory_kib(pid, "VmRSS");
    println!(
        "relay memory: {before} KiB with 10 clients, {after} KiB with {} ({:.1} KiB per idle client connection)",
        clients + 10,
        (after.saturating_sub(before)) as f64 / clients as f64
    );
    drop((warm, idle));
    relay.terminate(Duration::from_secs(10));
}

fn median(mut values: Vec<f64>) -> Option<f64> {
    if values.is_empty() {
        return None;
    }
    values.sort_by(|a, b| a.total_cmp(b));
    Some(values[values.len() / 2])
}

fn env_or<T: std::str::FromStr>(name: &str, default: T) -> T {
    std::env::var(name)
        .ok()
        .and_then(|value| value.parse().ok())
        .unwrap_or(default)
}
