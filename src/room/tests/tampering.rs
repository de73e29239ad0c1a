//! Envelopes a member must refuse: forged, reordered, inconsistent or signed lies, each caught
//! with its reason and leaving the member's replica exactly as it was.

use serde_json::{Value, json};

use super::{deliver, log_length, room, say};
use crate::identity::Identity;
use crate::room::authority::Envelopes;
use crate::room::checkpoint::Checkpoint;
use crate::room::{Replica, RoomError};

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
    let private = crate::room::envelope::part_of(map, &crate::room::envelope::PRIVATE_FIELDS);
    let view_hash = crate::room::json::hash(&private).unwrap();
    let frame_hash = envelope["frame_hash"].as_str().unwrap().to_string();
    let viewer = envelope["viewer_public_key"].as_str().unwrap().to_string();
    let statement =
        crate::room::envelope::signed_statement(&frame_hash, &view_hash, &viewer).unwrap();
    envelope["view_hash"] = json!(view_hash);
    envelope["signature"] = json!(signer.sign_hex(statement.as_bytes()));
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
    let core = crate::room::json::canonical_part(map, &crate::room::envelope::CORE_FIELDS).unwrap();
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
                error: crate::room::delta::apply(
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
        error: crate::room::delta::DeltaError::Missing(at),
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
                checkpoint.checkpoint_hash = crate::room::json::hash(&content).unwrap();
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
        let hash = crate::room::json::hash(&Value::Object(hashed)).unwrap();
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
