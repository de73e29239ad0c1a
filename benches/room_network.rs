//! A room over the real parts, in one process: our community server (SQLite, in process) as
//! the control plane, iroh on loopback, our leader's hub on the reference's Community Room
//! hooks and `ROOM_MEMBERS` (default 31) of our members, each on its own endpoint and thread.
//! One action at a time, from the members in turn: the time from handing the action to its
//! member until every member has verified the step it made (the issue's "action → every
//! member's verified frame"), and actions per second. Prints one JSON line.

use std::collections::VecDeque;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use aigenora::api::group::{NewGroup, RecoveryMode};
use aigenora::api::invitation::NewInvitation;
use aigenora::api::protocol::NewProtocol;
use aigenora::client::RestClient;
use aigenora::hooks::python_hooks::PythonHooks;
use aigenora::hooks::{Hooks, InitContext};
use aigenora::identity::Identity;
use aigenora::room::Replica;
use aigenora::room::authority::{Authority, Start};
use aigenora::room::checkpoint::RoomMember;
use aigenora::room::replica::Verified;
use aigenora::server::{self, ServerConfig};
use aigenora::session::room::RoomControl;
use aigenora::session::room::admission::{leader_admit, member_admit};
use aigenora::session::room::leader::Hub;
use aigenora::session::room::member::{ActionSource, Follower, MemberEvents, Outbox};
use aigenora::session::room::rest::RestControl;
use aigenora::spec::{Flow, Role, Spec};
use aigenora::transport::{
    DEFAULT_CONNECT_TIMEOUT, IrohChannel, RelayChoice, SessionEndpoint, Ticket,
};
use aigenora::wire::group::Receipt;
use serde_json::{Map, Value, json};

#[path = "common/mod.rs"]
#[allow(dead_code)]
mod common;

/// Actions handed to one member by the benchmark.
struct Inbox(mpsc::Receiver<Map<String, Value>>);

impl ActionSource for Inbox {
    fn next_action(&mut self) -> Option<Map<String, Value>> {
        self.0.try_recv().ok()
    }
}

/// Reports each verified step to the benchmark.
struct Steps(mpsc::Sender<u64>);

impl MemberEvents for Steps {
    fn step(&mut self, verified: &Verified) {
        let _ = self.0.send(verified.envelope.core.seq);
    }
    fn receipt(&mut self, _receipt: &Receipt, _action: &Map<String, Value>) {}
}

fn community_room_dir() -> std::path::PathBuf {
    common::reference_protocol_dir("9a8a5128")
}

fn main() {
    let members: usize = std::env::var("ROOM_MEMBERS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(31);
    let actions: usize = std::env::var("ROOM_ACTIONS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(100);
    let load_before = common::load_average();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let data = tempfile::tempdir().unwrap();
    let mut config = ServerConfig::new(
        "127.0.0.1:0".parse().unwrap(),
        server::sqlite_url(&data.path().join("bench.sqlite3")),
    );
    config.pow_difficulty = 1;
    config.rates = aigenora::server::config::RateLimits {
        per_key: None,
        per_address: None,
    };
    // Every member here shares one address: lift the per-address caps meant for strangers.
    config.http.connections_per_address = 4096;
    config.http.max_connections = 4096;
    config.quotas.challenges_per_address = 4096;
    let handle = rt.block_on(server::serve(config)).unwrap();
    let url = handle.url();
    let register = |name: &str| {
        let identity = Identity::generate();
        let client = RestClient::new(&url, identity.clone()).unwrap();
        rt.block_on(client.register(name, "")).unwrap();
        (identity, client)
    };
    let (leader, leader_client) = register("leader");
    let dir = community_room_dir();
    let spec = Spec::load(&dir.join("spec.json")).unwrap();
    rt.block_on(leader_client.register_protocol(&NewProtocol::for_spec(&spec)))
        .unwrap();
    let mut endpoint = rt
        .block_on(SessionEndpoint::bind(&RelayChoice::Disabled))
        .unwrap();
    let ticket = rt.block_on(endpoint.ticket()).unwrap().to_string();
    let offer = NewInvitation::signed(&leader, &spec.protocol_id(), &ticket);
    let post_id = rt
        .block_on(leader_client.create_invitation(&offer))
        .unwrap()
        .post_id;
    let group = rt
        .block_on(leader_client.create_group(&NewGroup {
            post_id,
            min_participants: 2,
            max_participants: 32,
            allow_late_join: true,
            recovery_mode: RecoveryMode::Exact,
        }))
        .unwrap();
    let (steps_tx, steps_rx) = mpsc::channel::<u64>();
    let mut inboxes = Vec::new();
    let mut threads = Vec::new();
    for n in 0..members {
        let (identity, client) = register(&format!("m{n}"));
        let (inbox_tx, inbox_rx) = mpsc::channel();
        inboxes.push(inbox_tx);
        let (handle, group, steps) = (rt.handle().clone(), group.clone(), steps_tx.clone());
        threads.push(std::thread::spawn(move || {
            let ticket: Ticket = group.iroh_ticket.parse().unwrap();
            let dialer = handle
                .block_on(SessionEndpoint::bind(&RelayChoice::Disabled))
                .unwrap();
            let link = handle
                .block_on(dialer.dial(&ticket, DEFAULT_CONNECT_TIMEOUT))
                .unwrap();
            let mut channel = IrohChannel::new(link, &handle);
            let control = RestControl::new(client, handle.clone());
            member_admit(&mut channel, &control, &identity, &group, "autonomous").unwrap();
            let mut replica = Replica::new(
                &group.group_id,
                identity.public_key(),
                &group.leader_public_key,
                0,
            );
            let (mut inbox, mut steps) = (Inbox(inbox_rx), Steps(steps));
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
        }));
    }
    let control = RestControl::new(leader_client.clone(), rt.handle().clone());
    let mut knocks = {
        let _inside = rt.enter();
        endpoint.knocks(members).unwrap()
    };
    let mut channels = Vec::new();
    for _ in 0..members {
        let link = rt.block_on(knocks.next()).unwrap();
        let mut channel = IrohChannel::new(link, rt.handle());
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
    let Flow::Group(rules) = spec.model().unwrap().flow.clone() else {
        panic!("a room")
    };
    let state = tempfile::tempdir().unwrap();
    let mut hooks = PythonHooks::load(&dir).unwrap();
    hooks
        .init(&InitContext {
            options: &Map::new(),
            role: Role::Host,
            args: &[],
            state_dir: state.path(),
            decision: None,
            pass_decision: true,
            timing: None,
            desk: None,
        })
        .unwrap();
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
    for (member, channel) in channels {
        hub.attach(&member.public_key, Box::new(channel)).unwrap();
    }
    // Every member verifies the bootstrap first.
    let mut pending: VecDeque<u64> = VecDeque::new();
    let wait_all = |hub: &mut Hub<PythonHooks>, seq: u64, pending: &mut VecDeque<u64>| {
        let mut seen = pending.iter().filter(|s| **s == seq).count();
        pending.retain(|s| *s > seq);
        while seen < members {
            hub.poll();
            while let Ok(got) = steps_rx.try_recv() {
                if got == seq {
                    seen += 1;
                } else if got > seq {
                    pending.push_back(got);
                }
            }
        }
    };
    wait_all(&mut hub, 0, &mut pending);
    let mut latencies = Vec::with_capacity(actions);
    let started = Instant::now();
    for n in 0..actions {
        let begun = Instant::now();
        inboxes[n % members]
            .send(
                json!({"kind": "send", "text": format!("message {n}")})
                    .as_object()
                    .unwrap()
                    .clone(),
            )
            .unwrap();
        wait_all(&mut hub, n as u64 + 1, &mut pending);
        latencies.push(begun.elapsed());
    }
    let seconds = started.elapsed().as_secs_f64();
    let (envelopes, _) = hub.authority.apply_input(
        leader.public_key(),
        1,
        json!({"kind": "close_room"}).as_object().unwrap(),
    );
    hub.broadcast(&envelopes);
    let deadline = Instant::now() + Duration::from_secs(30);
    while threads.iter().any(|t| !t.is_finished()) && Instant::now() < deadline {
        hub.poll();
    }
    hub.close();
    latencies.sort();
    let ms = |q: f64| latencies[((latencies.len() as f64 - 1.0) * q) as usize].as_secs_f64() * 1e3;
    println!(
        "{}",
        json!({
            "implementation": "ours",
            "members": members + 1,
            "actions": actions,
            "actions_per_second": actions as f64 / seconds,
            "action_to_every_member_p50_ms": ms(0.5),
            "action_to_every_member_p99_ms": ms(0.99),
            "load_before": load_before,
            "load_after": common::load_average(),
        })
    );
    rt.block_on(endpoint.shutdown());
    let _ = rt.block_on(handle.shutdown());
}
