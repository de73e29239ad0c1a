//! A room over the real parts: our community server (SQLite, in process) as the control
//! plane, iroh on loopback, the reference's Community Room hooks, and `ROOM_MEMBERS`
//! (default 31) of our members, each on its own endpoint and thread. The leader is ours
//! (our hub, in this process) or, with `ROOM_LEADER=reference`, the reference client's
//! `host` process on the same hooks — the same members, the same server, the same
//! workload, so the two leaders compare side by side. One action at a time, from the
//! members in turn: the time from handing the action to its member until every member has
//! verified the step it made (the "action → every member's verified frame"), and
//! each member's own wait for it (from the action to that member's verified step), actions
//! per second, and the leader's CPU per action and memory. Prints one JSON line.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, mpsc};
use std::time::{Duration, Instant};

use aigenora::api::group::{Group, NewGroup, RecoveryMode};
use aigenora::api::invitation::NewInvitation;
use aigenora::api::protocol::NewProtocol;
use aigenora::client::RestClient;

use aigenora::hooks::python_hooks::PythonHooks;
use aigenora::identity::Identity;
use aigenora::records::ReceiptSource;
use aigenora::room::Replica;
use aigenora::room::authority::{Authority, Start};
use aigenora::room::checkpoint::RoomMember;
use aigenora::room::replica::Verified;
use aigenora::server;
use aigenora::session::room::RoomControl;
use aigenora::session::room::admission::{leader_admit, member_admit};
use aigenora::session::room::leader::Hub;
use aigenora::session::room::member::{ActionSource, Follower, MemberEvents, Outbox};
use aigenora::session::room::rest::RestControl;
use aigenora::spec::{Flow, Role, Spec};
use aigenora::transport::{
    Bell, BellSlot, DEFAULT_CONNECT_TIMEOUT, IrohChannel, RelayChoice, SessionEndpoint, Ticket,
};
use aigenora::wire::group::Receipt;
use serde_json::{Map, Value, json};
use tokio::runtime::{Handle, Runtime};

#[path = "common/mod.rs"]
#[allow(dead_code)]
mod common;

/// Actions handed to one member by the benchmark; handing one rings the member's bell, as
/// an agent in the member's process would.
struct Inbox {
    actions: mpsc::Receiver<Map<String, Value>>,
    bell: BellSlot,
}

/// The benchmark's end of a member's [`Inbox`].
struct Outlet {
    actions: mpsc::Sender<Map<String, Value>>,
    bell: BellSlot,
}

impl Outlet {
    fn hand(&self, action: Map<String, Value>) {
        self.actions.send(action).unwrap();
        self.bell.ring();
    }
}

fn inbox() -> (Outlet, Inbox) {
    let (sender, receiver) = mpsc::channel();
    let bell = BellSlot::default();
    let outlet = Outlet {
        actions: sender,
        bell: bell.clone(),
    };
    (
        outlet,
        Inbox {
            actions: receiver,
            bell,
        },
    )
}

impl ActionSource for Inbox {
    fn next_action(&mut self) -> Option<Map<String, Value>> {
        self.actions.try_recv().ok()
    }

    fn ring_on_action(&mut self, bell: Arc<Bell>) {
        self.bell.set(bell);
    }
}

/// One member's verified step, as the member saw it.
struct StepSeen {
    member: usize,
    seq: u64,
    at: Instant,
}

/// Reports each verified step to the benchmark.
struct Steps(usize, mpsc::Sender<StepSeen>);

impl MemberEvents for Steps {
    fn step(&mut self, verified: &Verified, _replica: &Replica) {
        let seen = StepSeen {
            member: self.0,
            seq: verified.envelope.core.seq,
            at: Instant::now(),
        };
        let _ = self.1.send(seen);
    }
    fn receipt(
        &mut self,
        _receipt: &Receipt,
        _source: ReceiptSource,
        _action: &Map<String, Value>,
    ) {
    }
}

fn community_room_dir() -> PathBuf {
    common::reference_protocol_dir("9a8a5128")
}

fn env_number(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(default)
}

/// The leader under test, running until [`Leading::stop`].
enum Leading {
    Ours {
        stop: Arc<AtomicBool>,
        thread: std::thread::JoinHandle<()>,
    },
    Reference {
        pid: String,
        _data: tempfile::TempDir,
    },
}

impl Leading {
    /// The process whose CPU and memory the leader uses (ours shares this one with the
    /// members).
    fn pid(&self) -> String {
        match self {
            Leading::Ours { .. } => "self".into(),
            Leading::Reference { pid, .. } => pid.clone(),
        }
    }

    fn stop(self) {
        match self {
            Leading::Ours { stop, thread } => {
                stop.store(true, Ordering::SeqCst);
                let _ = thread.join();
            }
            Leading::Reference { pid, .. } => {
                let _ = Command::new("kill").args(["-KILL", &pid]).status();
            }
        }
    }
}

fn main() {
    let members = env_number("ROOM_MEMBERS", 31);
    let actions = env_number("ROOM_ACTIONS", 100);
    let reference = std::env::var("ROOM_LEADER").as_deref() == Ok("reference");
    let load_before = common::load_average();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let data = tempfile::tempdir().unwrap();
    let mut config = common::server_config(&data.path().join("bench.sqlite3"));
    // Every member here shares one address: lift the per-address caps meant for strangers.
    config.http.connections_per_address = 4096;
    config.http.max_connections = 4096;
    config.quotas.challenges_per_address = 4096;
    // The members here send no heartbeats; keep their seats for the whole run.
    config.group_member_timeout = Duration::from_secs(3600);
    let handle = rt.block_on(server::serve(config)).unwrap();
    let url = handle.url();
    let register = |name: &str| {
        let identity = Identity::generate();
        let client = RestClient::new(&url, identity.clone()).unwrap();
        rt.block_on(client.register(name, "")).unwrap();
        (identity, client)
    };
    let dir = community_room_dir();
    let spec = Spec::load(&dir.join("spec.json")).unwrap();
    let (leader, leader_client) = register("leader");
    rt.block_on(leader_client.register_protocol(&NewProtocol::for_spec(&spec)))
        .unwrap();
    let (group, leading) = if reference {
        reference_leader(&rt, &url, &dir, &leader_client)
    } else {
        our_leader(&rt, &leader, &leader_client, &spec, &dir, members)
    };
    let (steps_tx, steps_rx) = mpsc::channel::<StepSeen>();
    let mut inboxes = Vec::new();
    let mut threads = Vec::new();
    for n in 0..members {
        let (identity, client) = register(&format!("m{n}"));
        let (outlet, inbox) = inbox();
        inboxes.push(outlet);
        let (handle, group, steps) = (rt.handle().clone(), group.clone(), steps_tx.clone());
        threads.push(std::thread::spawn(move || {
            follow(handle, client, identity, group, inbox, Steps(n, steps))
        }));
    }
    let mut latest: BTreeMap<usize, u64> = BTreeMap::new();
    settle(&steps_rx, &mut latest, members);
    let pid = leading.pid();
    let (cpu_before, started) = (common::cpu_seconds(&pid), Instant::now());
    let mut latencies = Vec::with_capacity(actions);
    let mut each_member = Vec::with_capacity(actions * members);
    for n in 0..actions {
        let before = latest.values().copied().max().unwrap_or(0);
        let begun = Instant::now();
        let text = format!("message {n}");
        inboxes[n % members].hand(
            json!({"kind": "send", "text": text})
                .as_object()
                .unwrap()
                .clone(),
        );
        while latest.len() < members || latest.values().any(|seq| *seq <= before) {
            let seen = steps_rx.recv_timeout(Duration::from_secs(60)).unwrap();
            if latest.get(&seen.member).is_none_or(|seq| *seq <= before) && seen.seq > before {
                each_member.push(seen.at - begun);
            }
            latest.insert(seen.member, seen.seq);
        }
        latencies.push(begun.elapsed());
    }
    let seconds = started.elapsed().as_secs_f64();
    let cpu = common::cpu_seconds(&pid) - cpu_before;
    let rss = common::rss_kib(&pid);
    leading.stop();
    let deadline = Instant::now() + Duration::from_secs(30);
    while threads.iter().any(|t| !t.is_finished()) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    latencies.sort();
    each_member.sort();
    let quantile = |sorted: &[Duration], q: f64| {
        sorted[((sorted.len() as f64 - 1.0) * q) as usize].as_secs_f64() * 1e3
    };
    let ms = |q: f64| quantile(&latencies, q);
    println!(
        "{}",
        json!({
            "leader": if reference { "reference" } else { "ours" },
            "members": members + 1,
            "actions": actions,
            "actions_per_second": actions as f64 / seconds,
            "action_to_every_member_p50_ms": ms(0.5),
            "action_to_every_member_p99_ms": ms(0.99),
            // Each member's own wait, from the action to its verified step: what one member
            // sees, where the two above are the last member's.
            "action_to_each_member_p50_ms": quantile(&each_member, 0.5),
            "action_to_each_member_p99_ms": quantile(&each_member, 0.99),
            // Ours shares its process with the 31 members and the server: an upper bound.
            "leader_process_cpu_ms_per_action": cpu * 1e3 / actions as f64,
            "leader_process_rss_mib": rss as f64 / 1024.0,
            "load_before": load_before,
            "load_after": common::load_average(),
        })
    );
    let _ = rt.block_on(handle.shutdown());
}

/// Waits until every member has verified a step and the room has been quiet a moment (the
/// reference's leader admits late members one membership step at a time).
fn settle(steps: &mpsc::Receiver<StepSeen>, latest: &mut BTreeMap<usize, u64>, members: usize) {
    loop {
        match steps.recv_timeout(Duration::from_millis(500)) {
            Ok(seen) => {
                latest.insert(seen.member, seen.seq);
            }
            Err(mpsc::RecvTimeoutError::Timeout) => {
                let top = latest.values().copied().max();
                if latest.len() == members && latest.values().all(|s| Some(*s) == top) {
                    return;
                }
            }
            Err(mpsc::RecvTimeoutError::Disconnected) => panic!("every member stopped"),
        }
    }
}

/// One member: dial, admission, then following until the leader goes.
fn follow(
    handle: Handle,
    client: RestClient,
    identity: Identity,
    group: Group,
    mut inbox: Inbox,
    mut steps: Steps,
) {
    let ticket: Ticket = group.iroh_ticket.parse().unwrap();
    let dialer = handle
        .block_on(SessionEndpoint::bind(&RelayChoice::Disabled))
        .unwrap();
    let link = handle
        .block_on(dialer.dial(&ticket, DEFAULT_CONNECT_TIMEOUT))
        .unwrap();
    let mut channel = IrohChannel::new(link, &handle);
    let control = RestControl::new(client, handle.clone());
    member_admit(
        &mut channel,
        &control,
        &identity,
        &group,
        "autonomous",
        None,
        false,
    )
    .unwrap();
    let mut replica = Replica::new(
        &group.group_id,
        identity.public_key(),
        &group.leader_public_key,
        group.leader_epoch,
    );
    let _ = Follower::new(
        &mut channel,
        &mut replica,
        &identity,
        &mut inbox,
        &mut steps,
        &mut Outbox::default(),
    )
    .run();
    drop(channel);
    handle.block_on(dialer.shutdown());
}

/// The reference's `host` on the Community Room, as a daemon talking to our server.
fn reference_leader(rt: &Runtime, url: &str, dir: &Path, reader: &RestClient) -> (Group, Leading) {
    let data = tempfile::tempdir().unwrap();
    let run = |args: &[&str]| {
        let output = Command::new(common::reference_python())
            .args(["-m", "aigenora", args[0], "--data-dir"])
            .arg(data.path())
            .args(&args[1..])
            .env("P2P_SERVER", url)
            .env_remove("AIGENORA_CONFIG")
            .env_remove("P2P_DATA_DIR")
            .output()
            .unwrap();
        assert!(
            output.status.success(),
            "reference {args:?}: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        String::from_utf8(output.stdout).unwrap()
    };
    run(&["init"]);
    run(&["register", "--nickname", "reference-leader"]);
    let out = run(&[
        "host",
        "--protocol-dir",
        dir.to_str().unwrap(),
        "--no-web",
        "--daemon",
    ]);
    let line: Value = serde_json::from_str(out.lines().last().unwrap()).unwrap();
    let state_dir = PathBuf::from(line["state_dir"].as_str().unwrap());
    let session: Value =
        serde_json::from_str(&std::fs::read_to_string(state_dir.join("session.json")).unwrap())
            .unwrap();
    let pid = session["pid"].as_u64().unwrap().to_string();
    let group = rt
        .block_on(reader.group_by_post(line["post_id"].as_str().unwrap()))
        .unwrap();
    (group, Leading::Reference { pid, _data: data })
}

/// Our hub on the Community Room, on its own thread: it admits every member, starts the
/// room with all of them, and serves it until stopped.
fn our_leader(
    rt: &Runtime,
    leader: &Identity,
    client: &RestClient,
    spec: &Spec,
    dir: &Path,
    members: usize,
) -> (Group, Leading) {
    let mut endpoint = rt
        .block_on(SessionEndpoint::bind(&RelayChoice::Disabled))
        .unwrap();
    let ticket = rt.block_on(endpoint.ticket()).unwrap().to_string();
    let offer = NewInvitation::signed(leader, &spec.protocol_id(), &ticket);
    let post_id = rt
        .block_on(client.create_invitation(&offer))
        .unwrap()
        .post_id;
    let group = rt
        .block_on(client.create_group(&NewGroup {
            post_id,
            min_participants: 2,
            max_participants: 32,
            allow_late_join: true,
            recovery_mode: RecoveryMode::Exact,
        }))
        .unwrap();
    let mut knocks = {
        let _inside = rt.enter();
        endpoint.knocks(members).unwrap()
    };
    let Flow::Group(rules) = spec.model().unwrap().flow.clone() else {
        panic!("a room")
    };
    let stop = Arc::new(AtomicBool::new(false));
    let (handle, leader, client, dir) = (
        rt.handle().clone(),
        leader.clone(),
        client.clone(),
        dir.to_path_buf(),
    );
    let (group_out, stopping) = (group.clone(), stop.clone());
    let thread = std::thread::spawn(move || {
        let control = RestControl::new(client, handle.clone());
        let mut channels = Vec::new();
        for _ in 0..members {
            let link = handle.block_on(knocks.next()).unwrap();
            let mut channel = IrohChannel::new(link, &handle);
            let member = leader_admit(
                &mut channel,
                &control,
                &leader,
                &group.group_id,
                &group.protocol_id,
                0,
            )
            .unwrap();
            channels.push((member, channel));
        }
        let listed = control.group(&group.group_id).unwrap();
        let seats: Vec<RoomMember> = listed.members.iter().map(RoomMember::from).collect();
        let state = tempfile::tempdir().unwrap();
        let mut hooks = PythonHooks::load(&dir).unwrap();
        common::init_autonomous(&mut hooks, &Map::new(), Role::Host, state.path());
        let (authority, _) = Authority::new(
            hooks,
            rules,
            leader.clone(),
            &group.group_id,
            0,
            listed.membership_version,
            seats,
            Start::Fresh,
        )
        .unwrap();
        let mut hub = Hub::new(authority);
        for ((member, _), channel) in channels {
            hub.attach(&member.public_key, Box::new(channel)).unwrap();
        }
        while !stopping.load(Ordering::SeqCst) {
            hub.poll();
        }
        hub.close();
        handle.block_on(endpoint.shutdown());
    });
    (group_out, Leading::Ours { stop, thread })
}
