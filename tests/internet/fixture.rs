//! What every test of this crate starts from: a [`Topology`], the community server and our
//! relay on its public network (in one process, or the relay as a process of its own that a
//! test can stop), agents of ours and of the reference in the places of the topology, and
//! readers for how a session's packets travelled.

use std::time::Duration;

use serde_json::Value;

use crate::support::net::{Agent, SESSION_LIMIT, SessionFiles, assert_clean_end, wait_until};
use crate::support::process::Proc;
use crate::support::reference::{ReferenceAgent, reference_python};
use crate::support::relay::RelayProc;
use crate::topology::{Options, Place, RELAY_IP, SECOND_RELAY_IP, SERVER_IP, Topology};

/// The relay's port on its public address.
pub const RELAY_PORT: u16 = 3340;
/// Where a relay of ours serves its metrics, on its own address.
pub const METRICS_PORT: u16 = 9090;
/// How long a test waits for a path to become direct once both sides are connected (in a
/// quiet topology it takes a round trip or two; the rest is slack for a loaded machine).
pub const DIRECT_WAIT: Duration = Duration::from_secs(20);

/// Whether the server runs the relay itself or next to a relay process.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RelaySetup {
    /// `aigenora server --relay-listen`: one process for a small community.
    Embedded,
    /// `aigenora relay` on its own, which the test may stop; the server recommends it.
    Separate,
}

/// A running simulated internet with its community. Fields drop in order: the processes
/// first, then the namespaces.
pub struct Internet {
    /// The community server, running until the internet is dropped.
    _server: Proc,
    relay: Option<RelayProc>,
    pub work: tempfile::TempDir,
    pub topology: Topology,
}

/// The URL of the relay at `ip`, as iroh writes it.
pub fn relay_url_at(ip: std::net::Ipv4Addr) -> String {
    format!("http://{ip}:{RELAY_PORT}/")
}

/// Our relay's URL, the one the server recommends.
pub fn relay_url() -> String {
    relay_url_at(RELAY_IP)
}

pub fn server_url() -> String {
    format!("http://{SERVER_IP}:41000")
}

impl Internet {
    pub fn start(options: Options, setup: RelaySetup) -> Internet {
        let topology = Topology::build(options);
        let work = tempfile::tempdir().unwrap();
        let database = format!("sqlite://{}", work.path().join("server.sqlite3").display());
        let relay_listen = format!("{RELAY_IP}:{RELAY_PORT}");
        let mut command = topology.command(Place::Public, env!("CARGO_BIN_EXE_aigenora"));
        command
            .args(["server", "--listen", &format!("{SERVER_IP}:41000")])
            .args(["--database", &database, "--pow-difficulty", "1"])
            .env("RUST_LOG", "warn");
        let relay = match setup {
            RelaySetup::Embedded => {
                command.args(["--relay-listen", &relay_listen]);
                None
            }
            RelaySetup::Separate => {
                command.args(["--relay-url", &relay_url()]);
                Some(start_relay(&topology, RELAY_IP))
            }
        };
        let server = Proc::spawn("server", command);
        server.wait_for_line("recommending relay", Duration::from_secs(30));
        Internet {
            topology,
            work,
            _server: server,
            relay,
        }
    }

    /// Stops the separate relay (SIGTERM; it exits 0).
    pub fn stop_relay(&mut self) {
        self.relay
            .take()
            .expect("a separate relay is running")
            .stop();
    }

    /// Starts the second relay (its own process, at its own public address).
    pub fn second_relay(&self) -> RelayProc {
        start_relay(&self.topology, SECOND_RELAY_IP)
    }

    /// One of our agents in `place`, initialised and registered.
    pub fn agent(&self, name: &str, place: Place) -> Agent {
        let agent = Agent {
            dir: self.work.path().join(name),
            server: server_url(),
            netns: Some(self.topology.ns(place)),
        };
        agent.ok(&["init"]);
        agent.ok(&["register", "--nickname", name]);
        agent
    }

    /// A reference agent in `place`: its own `init` and `register`.
    pub fn reference_agent(&self, name: &str, place: Place) -> ReferenceAgent {
        reference_python();
        let agent = ReferenceAgent {
            dir: self.work.path().join(name),
            server: server_url(),
            netns: Some(self.topology.ns(place)),
        };
        agent.ok(&["init"]);
        agent.ok(&["register", "--nickname", name]);
        agent
    }

    /// The Prometheus text of the relay at `ip`.
    pub fn relay_metrics(&self, ip: std::net::Ipv4Addr) -> String {
        self.topology.within(Place::Public, move || {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .unwrap();
            runtime.block_on(async {
                reqwest::get(format!("http://{ip}:{METRICS_PORT}/metrics"))
                    .await
                    .unwrap()
                    .text()
                    .await
                    .unwrap()
            })
        })
    }
}

fn start_relay(topology: &Topology, ip: std::net::Ipv4Addr) -> RelayProc {
    let mut command = topology.command(Place::Public, env!("CARGO_BIN_EXE_aigenora"));
    command
        .args(["relay", "--listen", &format!("{ip}:{RELAY_PORT}")])
        .args(["--metrics-listen", &format!("{ip}:{METRICS_PORT}")])
        .env("RUST_LOG", "warn");
    RelayProc::start(command)
}

/// Exactly one round of Rock-Paper-Scissors (a draw too ends it): the host plays by itself,
/// the guest waits for a person (the test) to decide, so the session stays open until the
/// test has seen what it waits for.
const ONE_ROUND: &str = r#"{"best_of": 1, "termination": "fixed_rounds"}"#;

pub struct Game {
    pub host: Proc,
    pub guest: Proc,
    pub alice: Agent,
    pub bob: Agent,
}

/// Alice hosts behind NAT A, Bob joins from behind NAT B and waits for his decision (the
/// window is open when this returns).
pub fn start_game(internet: &Internet, host_flags: &[&str], guest_flags: &[&str]) -> Game {
    let alice = internet.agent("alice", Place::Host);
    let bob = internet.agent("bob", Place::Guest);
    let mut flags = vec!["--options", ONE_ROUND, "--control-mode", "autonomous"];
    flags.extend_from_slice(host_flags);
    let (host, post_id) = alice.host("rock-paper-scissors", &flags);
    let mut flags = vec![
        "--control-mode",
        "human",
        "--think-seconds",
        "300",
        "--no-prompt",
    ];
    flags.extend_from_slice(guest_flags);
    let guest = bob.join(&post_id, &flags);
    wait_until(SESSION_LIMIT, || {
        bob.session_dirs("guest")
            .last()
            .map(|dir| SessionFiles::read(dir))
            .filter(|files| !files.events_of("decision_window_opened").is_empty())
    })
    .expect("the guest's decision window opens");
    Game {
        host,
        guest,
        alice,
        bob,
    }
}

impl Game {
    /// Bob plays his move; both sides finish and end cleanly.
    pub fn finish(self) -> (SessionFiles, SessionFiles) {
        self.bob.ok(&["session", "decide", "rock"]);
        self.guest.succeed(SESSION_LIMIT);
        self.host.succeed(SESSION_LIMIT);
        let (host, guest) = (self.alice.session("host"), self.bob.session("guest"));
        assert_clean_end(&host, &guest);
        (host, guest)
    }

    /// `session snapshot --json` of one side's running session.
    pub fn snapshot(&self, agent: &Agent, role: &str) -> Value {
        let dir = agent.session_dirs(role).pop().unwrap();
        serde_json::from_str(&agent.ok(&[
            "session",
            "snapshot",
            "--json",
            "--state-dir",
            dir.to_str().unwrap(),
        ]))
        .unwrap()
    }
}

/// One side's `path_changed` events, in order.
pub fn paths(side: &SessionFiles) -> Vec<Value> {
    side.events_of("path_changed")
        .into_iter()
        .cloned()
        .collect()
}

/// The `path_changed` events in the newest session dir of `agent` in `role`, as written so
/// far.
pub fn live_paths(agent: &Agent, role: &str) -> Vec<Value> {
    match agent.session_dirs(role).last() {
        Some(dir) => paths(&SessionFiles::read(dir)),
        None => Vec::new(),
    }
}

/// Waits until the newest `role` session of `agent` records a direct path; its event.
pub fn wait_direct(agent: &Agent, role: &str) -> Value {
    wait_until(DIRECT_WAIT, || {
        live_paths(agent, role)
            .into_iter()
            .find(|path| path["path"] == "direct")
    })
    .unwrap_or_else(|| {
        panic!(
            "no direct path for the {role} within {DIRECT_WAIT:?}: {:?}",
            live_paths(agent, role)
        )
    })
}

/// Whether a path event went through a relay (`relay`, or `mixed` with it).
pub fn relayed(path: &Value) -> bool {
    matches!(path["path"].as_str(), Some("relay" | "mixed")) && path["relay_url"].is_string()
}

/// The address part of a path event's `addr` (`IP:PORT`).
pub fn path_ip(path: &Value) -> String {
    let addr = path["addr"].as_str().unwrap_or_default();
    addr.rsplit_once(':').map_or(addr, |(ip, _)| ip).to_string()
}
