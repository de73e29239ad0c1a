//! A room whose leader died: a member restores it from the newest checkpoint handed over, and
//! every other member follows without going back.

use serde_json::json;

use super::{deliver, log_length, room, say};
use crate::identity::Identity;
use crate::room::authority::{Authority, Envelopes, Receipt, Start};
use crate::room::checkpoint::{self, Checkpoint, RoomMember};
use crate::room::envelope::FrameKind;
use crate::room::test_hooks::{ChatHooks, rules};
use crate::room::{Replica, RoomError};

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
