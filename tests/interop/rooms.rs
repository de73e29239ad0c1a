//! Rooms against the reference's own room code, both ways, on the reference's Community
//! Room hooks: every envelope the reference's leader builds (bootstraps, frames with views
//! and checkpoints as deltas, a late join, a failover to a new epoch) verifies in our
//! member's replica, and every envelope our leader builds verifies in the reference's — on
//! the reference's hooks and on our own hooks for the contract.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use aigenora::api::group::MemberStatus;
use aigenora::hooks::python_hooks::PythonHooks;
use aigenora::hooks::{Hooks, InitContext};
use aigenora::identity::Identity;
use aigenora::room::Replica;
use aigenora::room::authority::{Authority, Envelopes, Receipt, Start};
use aigenora::room::checkpoint::RoomMember;
use aigenora::spec::{Flow, Role, Spec};
use serde_json::{Map, Value, json};

use crate::support::reference::{reference_contract, reference_python};

fn script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/interop/reference_room.py")
}

fn community_room_dir() -> PathBuf {
    reference_contract("community-room-v1")
        .spec
        .parent()
        .unwrap()
        .to_path_buf()
}

/// Runs the reference script in `mode` with `input` on stdin; its stdout lines.
fn run_reference(mode: &str, input: &str) -> Vec<String> {
    let state = tempfile::tempdir().unwrap();
    let mut child = Command::new(reference_python())
        .arg(script())
        .arg(mode)
        .arg(state.path())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.as_bytes())
        .unwrap();
    let output = child.wait_with_output().unwrap();
    assert!(
        output.status.success(),
        "reference_room.py {mode} failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout)
        .unwrap()
        .lines()
        .map(str::to_string)
        .collect()
}

fn send(actor: i64, client_seq: u64, text: &str) -> Value {
    json!({"input": {"actor": actor, "client_seq": client_seq, "action": {"kind": "send", "text": text}}})
}

#[test]
fn our_members_verify_every_envelope_of_the_reference_leader() {
    let leader = Identity::generate();
    let members: Vec<Identity> = (0..3).map(|_| Identity::generate()).collect();
    let newcomer = Identity::generate();
    let mut steps = Vec::new();
    for round in 0..30u64 {
        steps.push(send(
            (round % 3) as i64,
            round / 3 + 1,
            &format!("message {round} from the reference room"),
        ));
    }
    steps.push(json!({"input": {"actor": 1, "client_seq": 11, "action": {"kind": "set_topic", "topic": "interop"}}}));
    steps.push(json!({"input": {"actor": 2, "client_seq": 11, "action": {"kind": "dance"}}}));
    steps.push(json!({"join": {"seed": newcomer.seed_hex(), "seat": 4, "membership_version": 5}}));
    steps.push(send(2, 11, "welcome"));
    steps.push(
        json!({"restore": {"leader": 0, "epoch": 1, "membership_version": 6, "members": [1, 2]}}),
    );
    steps.push(send(1, 12, "after the failover"));
    let job = json!({
        "hooks_dir": community_room_dir(),
        "group_id": "interop-room",
        "options": {"history_limit": 200, "initial_topic": "Interop"},
        "leader": leader.seed_hex(),
        "members": members.iter().enumerate().map(|(i, m)| json!({"seed": m.seed_hex(), "seat": i + 1})).collect::<Vec<_>>(),
        "steps": steps,
    });
    let lines = run_reference("lead", &job.to_string());
    assert_eq!(lines.len(), 1 + job["steps"].as_array().unwrap().len());

    let mut replicas: Vec<Replica> = members
        .iter()
        .chain([&leader])
        .map(|m| Replica::new("interop-room", m.public_key(), leader.public_key(), 0))
        .collect();
    let (mut verified, mut deltas, mut refusals) = (0, 0, 0);
    for (index, line) in lines.iter().enumerate() {
        let step: Value = serde_json::from_str(line).unwrap();
        if step["receipt"]["status"] == "rejected" {
            refusals += 1;
        }
        if let Some(key) = step["joined"].as_str() {
            let mut replica = Replica::new("interop-room", key, leader.public_key(), 0);
            replica
                .apply(step["joined_bootstrap"].clone(), true)
                .unwrap()
                .expect("the newcomer's bootstrap");
            replicas.push(replica);
        }
        let bootstrap = step["bootstrap"] == true;
        for (key, envelope) in step["envelopes"].as_object().unwrap() {
            let replica = replicas
                .iter_mut()
                .find(|r| r.viewer == *key)
                .unwrap_or_else(|| panic!("step {index}: no member {key}"));
            if envelope["leader_epoch"] != json!(replica.epoch) {
                let leader = envelope["leader_public_key"].as_str().unwrap();
                replica
                    .advance_epoch(leader, envelope["leader_epoch"].as_u64().unwrap())
                    .unwrap();
            }
            let applied = replica
                .apply(envelope.clone(), bootstrap)
                .unwrap_or_else(|e| panic!("step {index}, member {key}: {e}"));
            assert!(applied.is_some(), "step {index}: a new frame");
            verified += 1;
            deltas += usize::from(envelope["view_mode"] == "delta")
                + usize::from(envelope["checkpoint_mode"] == "delta");
        }
    }
    assert_eq!(refusals, 1, "the hooks refused the unknown action kind");
    assert!(verified > 120, "{verified} envelopes verified");
    assert!(
        deltas > 40,
        "views and checkpoints travelled as deltas ({deltas})"
    );
    let follower = replicas
        .iter()
        .find(|r| r.viewer == members[1].public_key())
        .unwrap();
    assert_eq!(follower.epoch, 1);
    let view = follower.view.as_ref().unwrap();
    let texts: Vec<&str> = view["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|m| m["text"].as_str())
        .collect();
    assert_eq!(texts.last(), Some(&"after the failover"));
    assert_eq!(view["topic"], "interop");
}

/// Our authority on the Community Room hooks in `dir` (through our embedded interpreter), as
/// a leader would run it.
fn our_authority(
    dir: &Path,
    identity: &Identity,
    epoch: u64,
    members: Vec<RoomMember>,
    start: Start,
) -> (Authority<PythonHooks>, Envelopes, tempfile::TempDir) {
    let spec = Spec::load(&dir.join("spec.json")).unwrap();
    let Flow::Group(rules) = spec.model().unwrap().flow.clone() else {
        panic!("a room");
    };
    let mut hooks = PythonHooks::load(dir).unwrap();
    let state = tempfile::tempdir().unwrap();
    let options: Map<String, Value> = json!({"history_limit": 200, "initial_topic": "Ours"})
        .as_object()
        .unwrap()
        .clone();
    hooks
        .init(&InitContext {
            options: &options,
            role: Role::Host,
            args: &[],
            state_dir: state.path(),
            decision: None,
            pass_decision: true,
            timing: None,
            desk: None,
        })
        .unwrap();
    let version = members.len() as u64;
    let (authority, envelopes) = Authority::new(
        hooks,
        rules,
        identity.clone(),
        "our-room",
        epoch,
        version,
        members,
        start,
    )
    .unwrap();
    (authority, envelopes, state)
}

fn seat(identity: &Identity, seat: u32) -> RoomMember {
    RoomMember {
        member_id: format!("m{seat}"),
        public_key: identity.public_key().to_string(),
        seat,
        status: MemberStatus::Active,
    }
}

#[test]
fn the_reference_verifies_every_envelope_of_our_leader() {
    reference_follows_our_leader(&community_room_dir());
}

/// The same room with OUR hooks for the contract (the ones its protocol_id gets) beside the
/// reference's spec: the reference's members verify every envelope, view and checkpoint.
#[test]
fn the_reference_verifies_our_leader_on_our_community_room_hooks() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(
        community_room_dir().join("spec.json"),
        dir.path().join("spec.json"),
    )
    .unwrap();
    let ours = aigenora::protocols::well_known::find("community-room-v1").unwrap();
    std::fs::write(dir.path().join("hooks.py"), ours.hooks_py).unwrap();
    reference_follows_our_leader(dir.path());
}

/// Our leader on the hooks in `hooks_dir`: bootstraps, 30 messages, a refusal, a late join, a
/// failover to a new epoch and one more message, all followed by the reference's replicas,
/// and one forged envelope they must refuse.
fn reference_follows_our_leader(hooks_dir: &Path) {
    let leader = Identity::generate();
    let members: Vec<Identity> = (0..3).map(|_| Identity::generate()).collect();
    let mut listed = vec![seat(&leader, 0)];
    listed.extend(
        members
            .iter()
            .enumerate()
            .map(|(i, m)| seat(m, i as u32 + 1)),
    );
    let (mut authority, _, _state) =
        our_authority(hooks_dir, &leader, 0, listed.clone(), Start::Fresh);
    let mut lines = Vec::new();
    let mut record = |envelopes: &Envelopes, leader: &Identity, epoch: u64, bootstrap: bool| {
        for (viewer, envelope) in envelopes {
            lines.push(
                json!({"viewer": viewer, "group_id": "our-room", "leader": leader.public_key(),
                              "epoch": epoch, "envelope": envelope, "bootstrap": bootstrap})
                .to_string(),
            );
        }
    };
    let bootstraps: Envelopes = listed
        .iter()
        .map(|m| {
            (
                m.public_key.clone(),
                authority.bootstrap(&m.public_key).unwrap().unwrap(),
            )
        })
        .collect();
    record(&bootstraps, &leader, 0, true);
    let action = |text: &str| {
        json!({"kind": "send", "text": text})
            .as_object()
            .unwrap()
            .clone()
    };
    let mut deltas = 0;
    for round in 0..30u64 {
        let actor = members[(round % 3) as usize].public_key();
        let (envelopes, receipt) = authority.apply_input(
            actor,
            round / 3 + 1,
            &action(&format!("message {round} from our room")),
        );
        assert!(matches!(receipt, Receipt::Accepted { .. }), "{receipt:?}");
        deltas += envelopes
            .iter()
            .filter(|(_, e)| e["view_mode"] == "delta" || e["checkpoint_mode"] == "delta")
            .count();
        record(&envelopes, &leader, 0, false);
    }
    assert!(deltas > 40, "{deltas} envelopes carried deltas");
    let refused = authority.apply_input(
        members[0].public_key(),
        11,
        json!({"kind": "dance"}).as_object().unwrap(),
    );
    assert!(
        matches!(refused, (ref e, Receipt::Rejected { ref reason, .. }) if e.is_empty() && reason.contains("kind must be send")),
        "{refused:?}"
    );
    let newcomer = Identity::generate();
    let joined = authority.add_member(seat(&newcomer, 4), 5).unwrap();
    let (mine, others): (Envelopes, Envelopes) = joined
        .into_iter()
        .partition(|(k, _)| k == newcomer.public_key());
    record(&others, &leader, 0, false);
    record(&mine, &leader, 0, true);

    // The leader dies; member 0 restores from the last checkpoint at epoch 1.
    let checkpoint = authority.checkpoint().unwrap().clone();
    let survivors: Vec<RoomMember> = checkpoint
        .state
        .members
        .iter()
        .filter(|m| m.public_key != leader.public_key())
        .cloned()
        .collect();
    let successor = &members[0];
    let (mut next, _, _state2) = our_authority(
        hooks_dir,
        successor,
        1,
        survivors.clone(),
        Start::Restore(&checkpoint),
    );
    let bootstraps: Envelopes = survivors
        .iter()
        .map(|m| {
            (
                m.public_key.clone(),
                next.bootstrap(&m.public_key).unwrap().unwrap(),
            )
        })
        .collect();
    record(&bootstraps, successor, 1, true);
    let (envelopes, receipt) =
        next.apply_input(members[1].public_key(), 11, &action("after the failover"));
    assert!(matches!(receipt, Receipt::Accepted { .. }), "{receipt:?}");
    record(&envelopes, successor, 1, false);
    // One forged line at the end: the reference must refuse it (so "OK" means something).
    let mut forged: Value = serde_json::from_str(lines.last().unwrap()).unwrap();
    forged["envelope"]["events"] = json!([{"kind": "message", "text": "forged"}]);
    lines.push(forged.to_string());

    let verdicts = run_reference("follow", &(lines.join("\n") + "\n"));
    assert_eq!(verdicts.len(), lines.len());
    let (last, all_but_last) = verdicts.split_last().unwrap();
    for (index, verdict) in all_but_last.iter().enumerate() {
        assert_eq!(
            verdict,
            "OK",
            "line {index}: {}",
            &lines[index][..lines[index].len().min(300)]
        );
    }
    assert!(
        last.starts_with("ERR") && last.contains("events hash"),
        "{last}"
    );
}
