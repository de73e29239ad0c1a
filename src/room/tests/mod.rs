//! A room run in memory: our authority's envelopes, verified by our replicas. The room every
//! case starts from is built here; the cases live by concept beside it.

mod failover;
mod steps;
mod tampering;

use serde_json::json;

use super::Replica;
use super::authority::{Authority, Envelopes, Receipt, Start};
use super::test_hooks::{ChatHooks, rules, seated};
use crate::identity::Identity;

struct Room {
    leader: Identity,
    others: Vec<Identity>,
    authority: Authority<ChatHooks>,
    replicas: Vec<Replica>,
}

fn deliver(replicas: &mut [Replica], envelopes: &Envelopes, bootstrap: bool) {
    for replica in replicas.iter_mut() {
        let (_, envelope) = envelopes
            .iter()
            .find(|(key, _)| *key == replica.viewer)
            .expect("one per member");
        replica
            .apply(envelope.clone(), bootstrap)
            .unwrap()
            .expect("a new frame");
    }
}

fn room() -> Room {
    let leader = Identity::generate();
    let others: Vec<Identity> = (0..3).map(|_| Identity::generate()).collect();
    let mut members = vec![seated(&leader, 0)];
    members.extend(
        others
            .iter()
            .enumerate()
            .map(|(i, id)| seated(id, i as u32 + 1)),
    );
    let (authority, first) = Authority::new(
        ChatHooks,
        rules(),
        leader.clone(),
        "g1",
        0,
        4,
        members,
        Start::Fresh,
    )
    .unwrap();
    let mut replicas: Vec<Replica> = others
        .iter()
        .map(|id| Replica::new("g1", id.public_key(), leader.public_key(), 0))
        .collect();
    deliver(&mut replicas, &first, true);
    Room {
        leader,
        others,
        authority,
        replicas,
    }
}

fn say(room: &mut Room, who: usize, seq: u64, text: &str) -> (Envelopes, Receipt) {
    let key = room.others[who].public_key().to_string();
    let action = json!({"say": text});
    room.authority
        .apply_input(&key, seq, action.as_object().unwrap())
}

/// How many lines the chat log a member sees has.
fn log_length(replica: &Replica) -> usize {
    replica.view.as_ref().unwrap()["log"]
        .as_array()
        .unwrap()
        .len()
}
