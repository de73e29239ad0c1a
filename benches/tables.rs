//! One hand of each four-seat table named on the command line, with four agent seats in one
//! process, through our leader: our authority on our hooks for the contract (laid beside the
//! reference's spec as a fetched contract is), each seat's action chosen by our seat agent
//! (`proto_group_autoplay`) from the view its member verified, and every envelope of every
//! step verified by its member's replica. The same hands through the reference's leader and
//! hooks are `benches/tables_reference.py`; `benches/tables_vs_reference.sh` runs both.
//!
//! usage: tables RUN ALIAS...  (RUN picks the deal: `deal_seed` "table-bench-RUN"). Prints one
//! JSON line per table: actions, ms for the hand (from the deal to the last verified envelope;
//! loading the hooks is not in it), and the part of it the seat agents spent choosing.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use aigenora::api::group::MemberStatus;
use aigenora::hooks::python_hooks::PythonHooks;
use aigenora::identity::Identity;
use aigenora::protocols::well_known;
use aigenora::room::Replica;
use aigenora::room::authority::{Authority, Receipt, Start};
use aigenora::room::checkpoint::RoomMember;
use aigenora::spec::{Flow, Role, Spec};
use serde_json::{Map, Value, json};

#[path = "common/mod.rs"]
#[allow(dead_code)]
mod common;

const SEATS: u32 = 4;
const GROUP_ID: &str = "table-bench";
/// A hand that has not ended after this many actions is a broken table, not a long hand.
const MAX_ACTIONS: usize = 5000;

/// Our hooks for `alias` beside the reference's spec of it, the way `join` lays out a
/// fetched well-known contract.
fn our_table(alias: &str, into: &Path) -> PathBuf {
    let ours = well_known::find(alias).unwrap_or_else(|| panic!("{alias} is not well-known"));
    let reference = common::reference_protocol_dir(&ours.protocol_id[..8]);
    let dir = into.join(alias);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::copy(reference.join("spec.json"), dir.join("spec.json")).unwrap();
    let spec = Spec::load_checked(&dir.join("spec.json")).unwrap();
    assert_eq!(
        well_known::provide_hooks(&spec, &dir).unwrap(),
        well_known::ProvidedHooks::WellKnown(ours)
    );
    dir
}

/// A hooks instance for `role`, its state in `dir`/`name`.
fn hooks(
    dir: &Path,
    spec: &Spec,
    (role, name): (Role, &str),
    options: &Map<String, Value>,
) -> PythonHooks {
    let mut hooks = PythonHooks::load_for(dir, spec).unwrap();
    let state = dir.join(name);
    std::fs::create_dir_all(&state).unwrap();
    common::init_autonomous(&mut hooks, options, role, &state);
    hooks
}

/// What one hand took.
struct Hand {
    actions: usize,
    took: Duration,
    choosing: Duration,
}

fn play_hand(dir: &Path, options: &Map<String, Value>) -> Hand {
    let spec = Spec::load_checked(&dir.join("spec.json")).unwrap();
    let Flow::Group(rules) = spec.model().unwrap().flow.clone() else {
        panic!("a table is a room")
    };
    let players = hooks(dir, &spec, (Role::Guest, "players"), options);
    let leader_hooks = hooks(dir, &spec, (Role::Host, "leader"), options);
    let identities: Vec<Identity> = (0..SEATS).map(|_| Identity::generate()).collect();
    let members: Vec<RoomMember> = identities
        .iter()
        .zip(0..)
        .map(|(id, seat)| RoomMember {
            member_id: format!("seat-{seat}"),
            public_key: id.public_key().to_string(),
            seat,
            status: MemberStatus::Active,
        })
        .collect();
    let leader = identities[0].clone();
    let started = Instant::now();
    let (mut authority, _) = Authority::new(
        leader_hooks,
        rules,
        leader.clone(),
        GROUP_ID,
        0,
        u64::from(SEATS),
        members.clone(),
        Start::Fresh,
    )
    .unwrap();
    let mut replicas: Vec<Replica> = identities
        .iter()
        .map(|id| Replica::new(GROUP_ID, id.public_key(), leader.public_key(), 0))
        .collect();
    for (id, replica) in identities.iter().zip(&mut replicas) {
        let envelope = authority.bootstrap(id.public_key()).unwrap().unwrap();
        replica.apply(envelope, true).unwrap();
    }
    let mut client_seq = [0u64; SEATS as usize];
    let (mut actions, mut choosing) = (0, Duration::ZERO);
    while !authority.completed {
        assert!(actions < MAX_ACTIONS, "no end after {MAX_ACTIONS} actions");
        let chose = Instant::now();
        let (seat, action) = (0..members.len())
            .map(|offset| (actions + offset) % members.len())
            .find_map(|seat| {
                let view = replicas[seat].view.as_ref()?;
                let action = players.room_autoplay(view, &members[seat]).unwrap()?;
                Some((seat, action))
            })
            .expect("a seat has an action while the hand is on");
        choosing += chose.elapsed();
        client_seq[seat] += 1;
        let (envelopes, receipt) =
            authority.apply_input(identities[seat].public_key(), client_seq[seat], &action);
        assert!(
            matches!(receipt, Receipt::Accepted { .. }),
            "seat {seat}'s {action:?}: {receipt:?}"
        );
        for (key, envelope) in envelopes {
            let replica = replicas.iter_mut().find(|r| r.viewer == key).unwrap();
            replica.apply(envelope, false).unwrap();
        }
        actions += 1;
    }
    Hand {
        actions,
        took: started.elapsed(),
        choosing,
    }
}

fn main() {
    let mut args = std::env::args().skip(1);
    let run = args.next().expect("usage: tables RUN ALIAS...");
    let options = json!({"max_hands": 1, "deal_seed": format!("table-bench-{run}")});
    let options = options.as_object().unwrap();
    let work = tempfile::tempdir().unwrap();
    for alias in args {
        let hand = play_hand(&our_table(&alias, work.path()), options);
        println!(
            "{}",
            json!({
                "implementation": "ours",
                "table": alias,
                "actions": hand.actions,
                "hand_ms": hand.took.as_secs_f64() * 1e3,
                "choosing_ms": hand.choosing.as_secs_f64() * 1e3,
            })
        );
    }
}
