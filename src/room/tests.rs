//! A room run in memory: our authority's envelopes, verified by our replicas, and every
//! kind of tampering caught with its reason.

use serde_json::{Value, json};

use super::authority::{Authority, Envelopes, Receipt, Start};
use super::checkpoint::{self, Checkpoint, RoomMember};
use super::envelope::FrameKind;
use super::test_hooks::{ChatHooks, rules};
use super::{Replica, RoomError};
use crate::api::group::MemberStatus;
use crate::identity::Identity;

fn member(identity: &Identity, seat: u32) -> RoomMember {
    RoomMember {
        member_id: format!("m{seat}"),
        public_key: identity.public_key().to_string(),
        seat,
        status: MemberStatus::Active,
    }
}

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
    let mut members = vec![member(&leader, 0)];
    members.extend(
        others
            .iter()
            .enumerate()
            .map(|(i, id)| member(id, i as u32 + 1)),
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

#[test]
fn every_member_verifies_every_step_with_views_and_checkpoints_in_both_forms() {
    let mut room = room();
    let mut forms = std::collections::BTreeSet::new();
    for round in 1..=24u64 {
        let (envelopes, receipt) = say(
            &mut room,
            (round % 3) as usize,
            round.div_ceil(3),
            &format!("hello {round}"),
        );
        assert!(
            matches!(receipt, Receipt::Accepted { authority_seq, .. } if authority_seq == round),
            "{receipt:?}"
        );
        assert_eq!(envelopes.len(), 4, "the leader gets its own envelope too");
        for (_, envelope) in &envelopes {
            forms.insert((
                envelope["view_mode"].to_string(),
                envelope["checkpoint_mode"].to_string(),
            ));
        }
        deliver(&mut room.replicas, &envelopes, false);
    }
    assert!(
        forms.contains(&("\"delta\"".into(), "\"delta\"".into())),
        "{forms:?}"
    );
    assert!(
        forms.iter().any(|(_, c)| c == "\"full\""),
        "every 4th step is a full checkpoint"
    );
    let view = room.replicas[0].view.as_ref().unwrap();
    assert_eq!(view["log"].as_array().unwrap().len(), 24);
    assert_eq!(view["mine"], 8);
    let checkpoint = room.replicas[2].checkpoint.as_ref().unwrap();
    assert_eq!(checkpoint.seq, 24);
    assert_eq!(
        checkpoint.state.last_client_seq[room.others[2].public_key()],
        8
    );
}

#[test]
fn inputs_are_ordered_duplicates_and_gaps_and_refusals_change_nothing() {
    let mut room = room();
    let (_, first) = say(&mut room, 0, 1, "one");
    assert!(matches!(first, Receipt::Accepted { .. }));
    let (none, again) = say(&mut room, 0, 1, "one");
    assert!(none.is_empty());
    assert_eq!(
        again,
        Receipt::Duplicate {
            client_seq: 1,
            authority_seq: 1
        }
    );
    let (_, gap) = say(&mut room, 0, 3, "three");
    assert_eq!(
        gap,
        Receipt::Rejected {
            client_seq: 3,
            reason: "client_seq gap: expected 2, got 3".into()
        }
    );
    let (_, refused) = say(&mut room, 0, 2, "");
    assert_eq!(
        refused,
        Receipt::Rejected {
            client_seq: 2,
            reason: "the hooks refused the action: say something".into()
        }
    );
    let (_, big) = say(&mut room, 0, 2, &"x".repeat(600));
    assert!(
        matches!(big, Receipt::Rejected { ref reason, .. } if reason.contains("max_action_bytes")),
        "{big:?}"
    );
    let stranger = Identity::generate();
    let (_, outsider) = room.authority.apply_input(
        stranger.public_key(),
        1,
        json!({"say": "hi"}).as_object().unwrap(),
    );
    assert!(matches!(outsider, Receipt::Rejected { .. }));
    assert_eq!(
        room.authority.seq, 1,
        "only the accepted action made a step"
    );
    let (envelopes, end) = say(&mut room, 1, 1, "bye");
    assert!(matches!(
        end,
        Receipt::Accepted {
            completed: true,
            ..
        }
    ));
    assert_eq!(envelopes[0].1["outcome"], "ended");
    let (_, after) = say(&mut room, 0, 2, "late");
    assert_eq!(
        after,
        Receipt::Rejected {
            client_seq: 2,
            reason: "the room has ended".into()
        }
    );
}

/// Each edit of a valid envelope, and the reason the member gives.
#[test]
fn a_forged_reordered_or_inconsistent_envelope_is_caught_with_its_reason() {
    let mut room = room();
    let (step1, _) = say(&mut room, 0, 1, "one");
    let (step2, _) = say(&mut room, 1, 1, "two");
    let viewer = room.replicas[0].viewer.clone();
    let of = |envelopes: &Envelopes| {
        envelopes
            .iter()
            .find(|(k, _)| *k == viewer)
            .unwrap()
            .1
            .clone()
    };
    let (good1, good2) = (of(&step1), of(&step2));
    let someone_elses = step1.iter().find(|(k, _)| *k != viewer).unwrap().1.clone();
    let forger = Identity::generate();
    type Edit = fn(&mut Value);
    type Expect = fn(&RoomError) -> bool;
    let cases: Vec<(&str, Edit, Expect)> = vec![
        (
            "seq",
            |e| e["seq"] = json!(7),
            |r| matches!(r, RoomError::FrameHash),
        ),
        (
            "events",
            |e| e["events"] = json!([{"kind": "forged"}]),
            |r| matches!(r, RoomError::EventsHash),
        ),
        (
            "direct",
            |e| e["direct"] = json!({"forged": true}),
            |r| matches!(r, RoomError::ViewHash),
        ),
        (
            "signature",
            |e| e["signature"] = json!("00".repeat(64)),
            |r| matches!(r, RoomError::Signature),
        ),
        (
            "epoch",
            |e| e["leader_epoch"] = json!(3),
            |r| matches!(r, RoomError::Mismatch { what: "epoch", .. }),
        ),
        (
            "wire",
            |e| e["wire_version"] = json!("2"),
            |r| matches!(r, RoomError::Malformed(_)),
        ),
        (
            "kind",
            |e| e["_group"] = json!("forged"),
            |r| matches!(r, RoomError::Malformed(_)),
        ),
    ];
    for (name, edit, expected) in cases {
        let mut replica = room.replicas[0].clone();
        let mut forged = good1.clone();
        edit(&mut forged);
        let error = replica.apply(forged.clone(), false).unwrap_err();
        assert!(expected(&error), "{name}: {error}");
        assert_eq!(
            replica, room.replicas[0],
            "{name}: a refused envelope changes nothing"
        );
    }
    // Someone else's envelope: the viewer check catches it.
    let mut replica = room.replicas[0].clone();
    assert!(matches!(
        replica.apply(someone_elses.clone(), false).unwrap_err(),
        RoomError::Mismatch { what: "viewer", .. }
    ));
    // Out of order: step 2 before step 1 is a gap; re-sent step 1 after 2 is going backwards.
    let mut replica = room.replicas[0].clone();
    assert_eq!(
        replica.apply(good2.clone(), false).unwrap_err(),
        RoomError::Gap { have: 0, got: 2 }
    );
    replica.apply(good1.clone(), false).unwrap().unwrap();
    replica.apply(good2.clone(), false).unwrap().unwrap();
    assert_eq!(
        replica.apply(good2.clone(), false).unwrap(),
        None,
        "a repeat is a no-op"
    );
    assert_eq!(
        replica.apply(good1.clone(), false).unwrap_err(),
        RoomError::Backwards { have: 2, got: 1 }
    );
    // Signed by the leader, yet inconsistent: step 1's frame with step 2's checkpoint.
    let mut mixed = good1.clone();
    for key in [
        "checkpoint",
        "checkpoint_mode",
        "checkpoint_delta",
        "checkpoint_hash",
        "checkpoint_signature",
    ] {
        mixed[key] = good2[key].clone();
    }
    mixed["checkpoint"] = serde_json::to_value(room.authority.checkpoint().unwrap()).unwrap();
    mixed["checkpoint_mode"] = json!("full");
    mixed["checkpoint_delta"] = json!([]);
    resign(&mut mixed, &room.leader);
    let mut replica = room.replicas[0].clone();
    assert_eq!(
        replica.apply(mixed.clone(), false).unwrap_err(),
        RoomError::CheckpointFrame("seq")
    );
    // The same frame signed by someone else.
    let mut forged = good1.clone();
    resign(&mut forged, &forger);
    assert_eq!(
        replica.apply(forged.clone(), false).unwrap_err(),
        RoomError::Signature
    );
}

/// Recomputes an envelope's view hash and signs it again with `signer`.
fn resign(envelope: &mut Value, signer: &Identity) {
    let map = envelope.as_object().unwrap();
    let private = super::envelope::part_of(map, &super::envelope::PRIVATE_FIELDS);
    let view_hash = super::json::hash(&private).unwrap();
    let frame_hash = envelope["frame_hash"].as_str().unwrap().to_string();
    let viewer = envelope["viewer_public_key"].as_str().unwrap().to_string();
    let statement = super::envelope::signed_statement(&frame_hash, &view_hash, &viewer).unwrap();
    envelope["view_hash"] = json!(view_hash);
    envelope["signature"] = json!(signer.sign_hex(statement.as_bytes()));
}

/// `who` says "after" to a new leader as its action `client_seq`, accepted as step `step`.
fn said_after(
    next: &mut Authority<ChatHooks>,
    who: &Identity,
    client_seq: u64,
    step: u64,
) -> Envelopes {
    let action = json!({"say": "after"});
    let (envelopes, receipt) =
        next.apply_input(who.public_key(), client_seq, action.as_object().unwrap());
    assert!(
        matches!(receipt, Receipt::Accepted { authority_seq, .. } if authority_seq == step),
        "{receipt:?}"
    );
    envelopes
}

/// The members a checkpoint lists, but `gone` (a leader that died).
fn members_but(checkpoint: &Checkpoint, gone: &Identity) -> Vec<RoomMember> {
    let members = checkpoint.state.members.iter();
    members
        .filter(|m| m.public_key != gone.public_key())
        .cloned()
        .collect()
}

/// How many lines the chat log a member sees has.
fn log_length(replica: &Replica) -> usize {
    replica.view.as_ref().unwrap()["log"]
        .as_array()
        .unwrap()
        .len()
}

#[test]
fn a_new_leader_restores_from_a_members_checkpoint_and_the_others_follow() {
    let mut room = room();
    for seq in 1..=5 {
        let (envelopes, _) = say(&mut room, 0, seq, &format!("m{seq}"));
        deliver(&mut room.replicas, &envelopes, false);
    }
    let checkpoint = room.replicas[1].checkpoint.clone().unwrap();
    assert!(room.authority.acknowledge(
        room.others[1].public_key(),
        5,
        &checkpoint.frame_hash,
        Some(&checkpoint.checkpoint_hash)
    ));
    assert_eq!(room.authority.replicated_checkpoint().unwrap().seq, 5);
    // The leader dies; member 1 takes over at epoch 1 with the old leader gone.
    let successor = room.others[1].clone();
    let members = members_but(&checkpoint, &room.leader);
    let (mut next, first) = Authority::new(
        ChatHooks,
        rules(),
        successor.clone(),
        "g1",
        1,
        5,
        members,
        Start::Restore(&checkpoint),
    )
    .unwrap();
    assert_eq!(next.seq, 6);
    let follower = &mut room.replicas[0];
    follower.advance_epoch(successor.public_key(), 1).unwrap();
    let (_, envelope) = first.iter().find(|(k, _)| *k == follower.viewer).unwrap();
    assert_eq!(envelope["_group"], json!(FrameKind::EpochStart));
    follower.apply(envelope.clone(), true).unwrap().unwrap();
    let envelopes = said_after(&mut next, &room.others[0], 6, 7);
    let (_, envelope) = envelopes
        .iter()
        .find(|(k, _)| *k == follower.viewer)
        .unwrap();
    follower.apply(envelope.clone(), false).unwrap().unwrap();
    assert_eq!(log_length(follower), 6);
    // An envelope of the dead leader is no longer believed.
    let (stale, _) = say(&mut room, 2, 1, "ghost");
    let (_, ghost) = stale
        .iter()
        .find(|(k, _)| *k == room.replicas[0].viewer)
        .unwrap();
    assert!(matches!(
        room.replicas[0].apply(ghost.clone(), false).unwrap_err(),
        RoomError::Mismatch { what: "leader", .. }
    ));
}

/// The old leader's last step reached only member 0; member 1 claims the room with the
/// step before. Restored from the claimant's checkpoint, the new epoch would start below
/// member 0's head and member 0 would refuse it as going backwards; restored from the
/// newest checkpoint handed over, every member follows and none goes back. A checkpoint
/// that is not the room's, or certified by a key that never led it, is not taken.
#[test]
fn a_member_ahead_of_the_claimant_hands_over_its_checkpoint_and_nobody_goes_back() {
    let mut room = room();
    for seq in 1..=3 {
        let (envelopes, _) = say(&mut room, 0, seq, &format!("m{seq}"));
        if seq < 3 {
            deliver(&mut room.replicas, &envelopes, false);
        } else {
            deliver(&mut room.replicas[..1], &envelopes, false);
        }
    }
    let ahead = room.replicas[0].checkpoint.clone().unwrap();
    let claimed = room.replicas[1].checkpoint.clone().unwrap();
    assert_eq!((ahead.seq, claimed.seq), (3, 2));
    let successor = room.others[1].clone();
    let members = members_but(&claimed, &room.leader);
    let restore = |checkpoint: &Checkpoint| {
        Authority::new(
            ChatHooks,
            rules(),
            successor.clone(),
            "g1",
            1,
            5,
            members.clone(),
            Start::Restore(checkpoint),
        )
        .unwrap()
    };
    let follow = |replica: &Replica, envelopes: &Envelopes| {
        let mut replica = replica.clone();
        replica.advance_epoch(successor.public_key(), 1).unwrap();
        let (_, envelope) = envelopes
            .iter()
            .find(|(k, _)| *k == replica.viewer)
            .unwrap();
        replica.apply(envelope.clone(), true).map(|_| replica)
    };
    // What a claim alone restores from sends member 0 back.
    let (_, from_claim) = restore(&claimed);
    assert_eq!(
        follow(&room.replicas[0], &from_claim).unwrap_err(),
        RoomError::Backwards { have: 3, got: 3 }
    );
    // Handed over in `ready`, member 0's checkpoint is verified and is the newest.
    let trusted = [(room.leader.public_key().to_string(), 0)];
    let raw = serde_json::to_value(&ahead).unwrap();
    let handed = checkpoint::handed_over(raw.as_object().unwrap(), "g1", &trusted).unwrap();
    let start = checkpoint::newest(claimed.clone(), [handed]);
    assert_eq!(start.seq, 3);
    let (mut next, first) = restore(&start);
    assert_eq!(next.seq, 4);
    let mut followers: Vec<Replica> = [0, 2]
        .iter()
        .map(|&i| follow(&room.replicas[i], &first).unwrap())
        .collect();
    let envelopes = said_after(&mut next, &room.others[2], 1, 5);
    deliver(&mut followers, &envelopes, false);
    for follower in &followers {
        assert_eq!(follower.head.as_ref().unwrap().seq, 5);
        assert_eq!(log_length(follower), 4);
    }
    // Not this room's, or certified by a leader the claimant does not know: not taken.
    assert_eq!(
        checkpoint::handed_over(raw.as_object().unwrap(), "g2", &trusted).unwrap_err(),
        RoomError::CheckpointFrame("group_id")
    );
    let strangers = [(room.others[2].public_key().to_string(), 0)];
    assert_eq!(
        checkpoint::handed_over(raw.as_object().unwrap(), "g1", &strangers).unwrap_err(),
        RoomError::Certificate
    );
    let mut forged = raw.as_object().unwrap().clone();
    forged.insert("seq".into(), json!(9));
    assert_eq!(
        checkpoint::handed_over(&forged, "g1", &trusted).unwrap_err(),
        RoomError::CheckpointHash
    );
    // An older epoch never outranks a newer one, whatever its sequence number.
    let mut later = claimed.clone();
    later.leader_epoch = 1;
    assert_eq!(checkpoint::newest(later, [ahead]).leader_epoch, 1);
}

/// A lie a test tells: an edit of a good envelope.
type Lie<'a> = Box<dyn Fn(&mut Value) + 'a>;

/// `good` told as `edit` is refused by `replica` with `expected` and changes nothing, to the
/// order of its keys.
fn refused_unchanged(
    replica: &mut Replica,
    good: &Value,
    (name, edit, expected): (&str, Lie, RoomError),
) {
    let before = replica.clone();
    let mut forged = good.clone();
    edit(&mut forged);
    assert_eq!(
        replica.apply(forged.clone(), false).unwrap_err(),
        expected,
        "{name}"
    );
    assert_eq!(
        format!("{replica:?}"),
        format!("{before:?}"),
        "{name}: nothing changed"
    );
}

/// Recomputes an envelope's frame hash over its (edited) core, then signs it again.
fn rehash(envelope: &mut Value, signer: &Identity) {
    let map = envelope.as_object().unwrap();
    let core = super::json::canonical_part(map, &super::envelope::CORE_FIELDS).unwrap();
    envelope["frame_hash"] = json!(crate::canonical::sha256_hex(core));
    resign(envelope, signer);
}

/// A lying leader signs what it sends, so only the checks behind the signature catch it:
/// a broken chain, a view that is not the one hashed, a checkpoint it did not certify, a
/// delta that does not apply, an envelope of an epoch the member has left.
#[test]
fn a_lying_leaders_signed_envelope_is_caught_with_its_reason() {
    let mut room = room();
    let (step1, _) = say(&mut room, 0, 1, "one");
    let viewer = room.replicas[0].viewer.clone();
    let good = step1.iter().find(|(k, _)| *k == viewer).unwrap().1.clone();
    let leader = room.leader.clone();
    let forger = Identity::generate();
    let forged_certificate = forger.sign_hex(b"not the leader's certificate");
    let cases: Vec<(&str, Lie, RoomError)> = vec![
        (
            "previous_hash",
            Box::new(|e| {
                e["previous_hash"] = json!("ab".repeat(32));
                rehash(e, &leader);
            }),
            RoomError::Chain(1),
        ),
        (
            "view_state_hash",
            Box::new(|e| {
                e["view_state_hash"] = json!("cd".repeat(32));
                resign(e, &leader);
            }),
            RoomError::ViewState,
        ),
        (
            "checkpoint_signature",
            Box::new(|e| {
                e["checkpoint_signature"] = json!(forged_certificate);
                if e["checkpoint"].is_object() {
                    e["checkpoint"]["checkpoint_signature"] = json!(forged_certificate);
                }
                resign(e, &leader);
            }),
            RoomError::Certificate,
        ),
        (
            "view_delta",
            Box::new(|e| {
                e["view_mode"] = json!("delta");
                e["view"] = Value::Null;
                e["view_delta"] = json!([{"op": "remove", "path": ["no such key"]}]);
                resign(e, &leader);
            }),
            RoomError::Delta {
                what: "view",
                error: super::delta::apply(
                    &json!({}),
                    &json!([{"op": "remove", "path": ["no such key"]}]),
                )
                .unwrap_err(),
            },
        ),
    ];
    for case in cases {
        refused_unchanged(&mut room.replicas[0].clone(), &good, case);
    }
    // The same leader, once the member follows it into epoch 1, is no longer believed
    // about epoch 0.
    let mut replica = room.replicas[0].clone();
    replica.advance_epoch(leader.public_key(), 1).unwrap();
    assert_eq!(
        replica.apply(good.clone(), false).unwrap_err(),
        RoomError::Mismatch {
            what: "epoch",
            expected: "1".into(),
            got: "0".into()
        }
    );
    assert_eq!(
        replica.advance_epoch(leader.public_key(), 1).unwrap_err(),
        RoomError::EpochNotNewer { have: 1, got: 1 }
    );
}

/// Ops of every kind that apply to a member's view (`under` `[]`) or checkpoint state
/// (`under` `["protocol_state"]`), then one that cannot: the delta fails at its last op.
fn failing_at_the_end(under: &[&str], then: &[Value]) -> Value {
    let at = |steps: Value| {
        let mut path: Vec<Value> = under.iter().map(|s| json!(s)).collect();
        path.extend(steps.as_array().unwrap().iter().cloned());
        Value::Array(path)
    };
    let mut ops = vec![
        json!({"op": "set", "path": at(json!(["log", 0])), "value": "x"}),
        json!({"op": "splice", "path": at(json!(["log"])), "index": 1, "delete": 1, "items": [1, 2, 3]}),
        json!({"op": "remove", "path": at(json!(["log", 0]))}),
        json!({"op": "set", "path": at(json!(["new"])), "value": {}}),
        json!({"op": "remove", "path": at(json!(["log"]))}),
    ];
    ops.extend(then.iter().cloned());
    ops.extend([
        json!({"op": "set", "path": [], "value": {"a": 1}}),
        json!({"op": "remove", "path": ["nope"]}),
    ]);
    Value::Array(ops)
}

/// Whatever fails after a delta was applied in place — a later op of the same delta, the
/// view's or the checkpoint's hash, the certificate, the recovery hash, the view delta after
/// a good checkpoint delta — the replica is as it was, to the order of its keys and the
/// canonical texts it keeps of its view and checkpoint state, and the next good envelope
/// verifies as if nothing had happened.
#[test]
fn a_failed_delta_envelope_leaves_the_replica_exactly_as_it_was() {
    let mut room = room();
    let leader = room.leader.clone();
    let viewer = room.replicas[0].viewer.clone();
    let mut round = 0;
    let good = loop {
        round += 1;
        let (step, _) = say(&mut room, 0, round, &format!("line {round}"));
        let mine = step.iter().find(|(k, _)| *k == viewer).unwrap().1.clone();
        if round >= 3 && mine["view_mode"] == "delta" && mine["checkpoint_mode"] == "delta" {
            break mine;
        }
        deliver(&mut room.replicas, &step, false);
    };
    let certified = room.authority.checkpoint().unwrap().clone();
    let forged_certificate = Identity::generate().sign_hex(b"not the leader's certificate");
    let missing = |what, at| RoomError::Delta {
        what,
        error: super::delta::DeltaError::Missing(at),
    };
    let push = |e: &mut Value, field: &str, op: Value| {
        e[field].as_array_mut().unwrap().push(op);
        resign(e, &leader);
    };
    let cases: Vec<(&str, Lie, RoomError)> = vec![
        (
            "a checkpoint delta failing at its last op",
            Box::new(|e| {
                let small_fields = [
                    json!({"op": "set", "path": ["completed"], "value": true}),
                    json!({"op": "remove", "path": ["members"]}),
                ];
                e["checkpoint_delta"] = failing_at_the_end(&["protocol_state"], &small_fields);
                resign(e, &leader);
            }),
            missing("checkpoint", 8),
        ),
        (
            "a view delta failing at its last op",
            Box::new(|e| {
                let existing = [json!({"op": "set", "path": ["mine"], "value": 99})];
                e["view_delta"] = failing_at_the_end(&[], &existing);
                resign(e, &leader);
            }),
            missing("view", 7),
        ),
        (
            "a view that is not the one hashed",
            Box::new(|e| {
                push(
                    e,
                    "view_delta",
                    json!({"op": "set", "path": ["mine"], "value": 7}),
                )
            }),
            RoomError::ViewState,
        ),
        (
            "a view delta making a non-object",
            Box::new(|e| {
                e["view_delta"] = json!([{"op": "set", "path": [], "value": [1]}]);
                resign(e, &leader);
            }),
            RoomError::Form("view"),
        ),
        (
            "a checkpoint state that is not the one hashed",
            Box::new(|e| {
                let op = json!({"op": "set", "path": ["protocol_state", "seats"], "value": 9});
                push(e, "checkpoint_delta", op)
            }),
            RoomError::CheckpointHash,
        ),
        (
            "a certificate by someone else",
            Box::new(|e| {
                e["checkpoint_signature"] = json!(forged_certificate);
                resign(e, &leader);
            }),
            RoomError::Certificate,
        ),
        (
            "a recovery hash that is not the state's, all else certified",
            Box::new(|e| {
                e["recovery_state_hash"] = json!("ab".repeat(32));
                rehash(e, &leader);
                let mut checkpoint = certified.clone();
                checkpoint.frame_hash = e["frame_hash"].as_str().unwrap().into();
                let mut content = serde_json::to_value(&checkpoint).unwrap();
                let fields = content.as_object_mut().unwrap();
                fields.remove("checkpoint_hash");
                fields.remove("checkpoint_signature");
                checkpoint.checkpoint_hash = super::json::hash(&content).unwrap();
                e["checkpoint_hash"] = json!(checkpoint.checkpoint_hash);
                e["checkpoint_signature"] =
                    json!(leader.sign_hex(checkpoint.certificate().as_bytes()));
                resign(e, &leader);
            }),
            RoomError::RecoveryHash,
        ),
    ];
    let before = room.replicas[0].clone();
    let replica = &mut room.replicas[0];
    for case in cases {
        refused_unchanged(replica, &good, case);
    }
    let mut untouched = before.clone();
    untouched
        .apply(good.clone(), false)
        .unwrap()
        .expect("a new frame");
    replica
        .apply(good.clone(), false)
        .unwrap()
        .expect("a new frame");
    assert_eq!(format!("{replica:?}"), format!("{untouched:?}"));
    assert_eq!(log_length(replica), round as usize);
    let (next, _) = say(&mut room, 0, round + 1, "after the lies");
    deliver(&mut room.replicas[..1], &next, false);
    assert_eq!(log_length(&room.replicas[0]), round as usize + 1);
}

/// A checkpoint its leader hashed and certified, yet whose fields do not read as their
/// types, is refused naming the field; the same checkpoint untouched reads back whole.
#[test]
fn a_certified_checkpoint_with_ill_typed_fields_is_refused_naming_the_field() {
    let mut room = room();
    say(&mut room, 0, 1, "hello");
    let good = serde_json::to_value(room.authority.checkpoint().unwrap()).unwrap();
    let certified = |edit: &dyn Fn(&mut serde_json::Map<String, Value>)| {
        let mut raw = good.as_object().unwrap().clone();
        edit(&mut raw);
        let mut hashed = raw.clone();
        hashed.remove("checkpoint_hash");
        hashed.remove("checkpoint_signature");
        let hash = super::json::hash(&Value::Object(hashed)).unwrap();
        let read = |key: &str| raw.get(key).cloned().unwrap_or(json!(0));
        let statement = crate::api::group::checkpoint_canonical(
            read("group_id").as_str().unwrap_or(""),
            read("leader_public_key").as_str().unwrap_or(""),
            read("leader_epoch").as_u64().unwrap_or(0),
            read("seq").as_u64().unwrap_or(0),
            read("frame_hash").as_str().unwrap_or(""),
            read("membership_version").as_u64().unwrap_or(0),
            &hash,
        );
        raw.insert(
            "checkpoint_signature".into(),
            json!(room.leader.sign_hex(statement.as_bytes())),
        );
        raw.insert("checkpoint_hash".into(), json!(hash));
        Checkpoint::verify(raw)
    };
    let (read, _) = certified(&|_| {}).unwrap();
    assert_eq!(&read, room.authority.checkpoint().unwrap());
    let refusal = |edit: &dyn Fn(&mut serde_json::Map<String, Value>)| match certified(edit) {
        Err(RoomError::CheckpointState(reason)) => reason,
        other => panic!("expected a refused state, got {other:?}"),
    };
    let members = refusal(&|raw| {
        raw.insert("members".into(), json!("everyone"));
    });
    assert!(
        members.starts_with("members: invalid type: string"),
        "{members}"
    );
    let protocol_state = refusal(&|raw| {
        raw.insert("protocol_state".into(), json!([1]));
    });
    assert_eq!(protocol_state, "protocol_state: not an object");
    let seq = refusal(&|raw| {
        raw.remove("seq");
    });
    assert_eq!(seq, "missing field `seq`");
    let seat = refusal(&|raw| {
        raw["members"][0]["seat"] = json!(-1);
    });
    assert!(seat.starts_with("members: "), "{seat}");
}
