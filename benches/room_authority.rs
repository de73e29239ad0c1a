//! A 32-member Community Room in one process, the leader's work per action: our authority on
//! the reference's own Community Room hooks (through the embedded interpreter) applies each
//! `send` and builds the 32 signed envelopes, and a member verifies its envelope. The same
//! workload through the reference's GroupAuthority and GroupReplica is
//! `benches/room_authority_reference.py`; `benches/room_vs_reference.sh` runs both.
//!
//! Prints one JSON line: actions, seconds, actions per second, p50/p99 per action (ms), and
//! the mean time for one member to verify one envelope (µs): in turn with the leader's steps
//! (`verify_us`, which also pays for sorting the garbage the leader's step left in the
//! allocator), and the same envelopes again in a row, once the leader is done, by a new
//! replica (`verify_alone_us`: a member's own cost, as in a process of its own).

use std::time::Instant;

use aigenora::api::group::MemberStatus;
use aigenora::hooks::python_hooks::PythonHooks;
use aigenora::identity::Identity;
use aigenora::room::Replica;
use aigenora::room::authority::{Authority, Start};
use aigenora::room::checkpoint::RoomMember;
use aigenora::spec::{Flow, Role, Spec};
use serde_json::{Map, Value, json};

#[path = "common/mod.rs"]
#[allow(dead_code)]
mod common;

const MEMBERS: usize = 32;

fn community_room_dir() -> std::path::PathBuf {
    common::reference_protocol_dir("9a8a5128")
}

fn main() {
    let actions: usize = std::env::var("ROOM_ACTIONS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(500);
    let dir = community_room_dir();
    let spec = Spec::load(&dir.join("spec.json")).unwrap();
    let Flow::Group(rules) = spec.model().unwrap().flow.clone() else {
        panic!("a room")
    };
    let state = tempfile::tempdir().unwrap();
    let mut hooks = PythonHooks::load(&dir).unwrap();
    let options: Map<String, Value> = json!({"history_limit": 200}).as_object().unwrap().clone();
    common::init_autonomous(&mut hooks, &options, Role::Host, state.path());
    let identities: Vec<Identity> = (0..MEMBERS).map(|_| Identity::generate()).collect();
    let members: Vec<RoomMember> = identities
        .iter()
        .enumerate()
        .map(|(seat, id)| RoomMember {
            member_id: format!("m{seat}"),
            public_key: id.public_key().to_string(),
            seat: seat as u32,
            status: MemberStatus::Active,
        })
        .collect();
    let leader = identities[0].clone();
    let (mut authority, _) = Authority::new(
        hooks,
        rules,
        leader.clone(),
        "bench-room",
        0,
        MEMBERS as u64,
        members,
        Start::Fresh,
    )
    .unwrap();
    let watcher = identities[1].public_key().to_string();
    let mut replica = Replica::new("bench-room", &watcher, leader.public_key(), 0);
    let bootstrap = authority.bootstrap(&watcher).unwrap().unwrap();
    replica.apply(bootstrap.clone(), true).unwrap();
    let mut received = Vec::with_capacity(actions);
    let mut per_action = Vec::with_capacity(actions);
    let mut verify = std::time::Duration::ZERO;
    // Keeping a copy of each envelope for the replay below is the benchmark's own work.
    let mut copying = std::time::Duration::ZERO;
    let started = Instant::now();
    for n in 0..actions {
        let actor = &identities[n % MEMBERS];
        let action = json!({"kind": "send", "text": format!("message {n} in a busy room")});
        let client_seq = (n / MEMBERS) as u64 + 1;
        let begun = Instant::now();
        let (envelopes, _) =
            authority.apply_input(actor.public_key(), client_seq, action.as_object().unwrap());
        per_action.push(begun.elapsed());
        let (_, envelope) = envelopes.into_iter().find(|(k, _)| *k == watcher).unwrap();
        let copied = Instant::now();
        received.push(envelope.clone());
        copying += copied.elapsed();
        let checked = Instant::now();
        replica.apply(envelope, false).unwrap().unwrap();
        verify += checked.elapsed();
    }
    let seconds = (started.elapsed() - copying).as_secs_f64();
    drop(authority);
    let mut alone = Replica::new("bench-room", &watcher, leader.public_key(), 0);
    alone.apply(bootstrap, true).unwrap();
    let replayed = Instant::now();
    for envelope in received {
        alone.apply(envelope, false).unwrap().unwrap();
    }
    let verify_alone = replayed.elapsed();
    per_action.sort();
    let ms =
        |q: f64| per_action[((per_action.len() as f64 - 1.0) * q) as usize].as_secs_f64() * 1e3;
    println!(
        "{}",
        json!({
            "implementation": "ours",
            "members": MEMBERS,
            "actions": actions,
            "seconds": seconds,
            "actions_per_second": actions as f64 / seconds,
            "p50_ms": ms(0.5),
            "p99_ms": ms(0.99),
            "verify_us": verify.as_secs_f64() * 1e6 / actions as f64,
            "verify_alone_us": verify_alone.as_secs_f64() * 1e6 / actions as f64,
        })
    );
}
