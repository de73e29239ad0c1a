//! A room over channels, in one process: the admission exchange on both sides against a
//! control plane that checks both signatures like the server, then a leader's hub and two
//! followers that act, verify, acknowledge and see the room end; a forged admission is
//! refused by the member before it registers anything; a member ahead of a new leader
//! hands its checkpoint over.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use serde_json::{Map, Value, json};

use super::RoomControl;
use super::admission::{leader_admit, member_admit};
use super::leader::Hub;
use super::member::{FollowEnd, Follower, MemberEvents, Outbox};
use crate::api::group::{
    Group, GroupMember, GroupStatus, MemberAdmitted, MemberStatus, NewMember, RecoveryMode,
    StartPolicy, admission_canonical,
};
use crate::identity::{self, Identity};
use crate::records::ReceiptSource;
use crate::room::Replica;
use crate::room::authority::{Authority, Start};
use crate::room::checkpoint::RoomMember;
use crate::room::replica::Verified;
use crate::room::test_hooks::{ChatHooks, rules, seated};
use crate::transport::memory::duplex;
use crate::wire::group::{Receipt, ReceiptStatus};

/// The server's part, in memory: admissions need both signatures and get the lowest seat.
#[derive(Clone)]
struct Control {
    group: Arc<Mutex<Group>>,
    caller: Option<Identity>,
}

impl Control {
    fn as_member(&self, identity: &Identity) -> Control {
        Control {
            group: self.group.clone(),
            caller: Some(identity.clone()),
        }
    }
}

impl RoomControl for Control {
    fn group(&self, _group_id: &str) -> Result<Group, String> {
        Ok(self.group.lock().unwrap().clone())
    }

    fn admit(&self, group_id: &str, admission: &NewMember) -> Result<MemberAdmitted, String> {
        let caller = self
            .caller
            .as_ref()
            .expect("a member calls")
            .public_key()
            .to_string();
        let mut group = self.group.lock().unwrap();
        let statement = admission_canonical(
            group_id,
            &group.leader_public_key,
            &caller,
            &group.protocol_id,
            admission.leader_epoch,
            &admission.join_nonce,
        );
        identity::verify_hex(
            &group.leader_public_key,
            statement.as_bytes(),
            &admission.leader_signature,
        )
        .map_err(|_| "leader signature".to_string())?;
        identity::verify_hex(&caller, statement.as_bytes(), &admission.member_signature)
            .map_err(|_| "member signature".to_string())?;
        let member = match group.members.iter().find(|m| m.public_key == caller) {
            // The same seat on re-admission.
            Some(seated) => seated.clone(),
            None => {
                let seat = (0..)
                    .find(|s| group.members.iter().all(|m| m.seat != *s))
                    .unwrap();
                let member = GroupMember {
                    member_id: format!("member-{seat}"),
                    seat,
                    public_key: caller.clone(),
                    status: MemberStatus::Active,
                    joined_at: String::new(),
                };
                group.members.push(member.clone());
                group.membership_version += 1;
                member
            }
        };
        let seat = member.seat;
        Ok(MemberAdmitted {
            group_id: group_id.into(),
            member_id: member.member_id,
            seat,
            public_key: caller,
            status: MemberStatus::Active,
            membership_version: group.membership_version,
        })
    }
}

fn room_of(leader: &Identity) -> Control {
    let group = Group {
        group_id: "room-1".into(),
        post_id: "post-1".into(),
        protocol_id: "p".repeat(64),
        status: GroupStatus::Lobby,
        leader_public_key: leader.public_key().into(),
        leader_epoch: 0,
        leader_lease_seconds: 15,
        leader_lease_expires_at: String::new(),
        server_time: String::new(),
        membership_version: 1,
        participant_count: 1,
        min_participants: 2,
        max_participants: 8,
        allow_late_join: true,
        recovery_mode: RecoveryMode::Exact,
        start_policy: StartPolicy::MinReady,
        checkpoint_seq: 0,
        checkpoint_hash: crate::api::group::EMPTY_CHECKPOINT_HASH.into(),
        iroh_ticket: String::new(),
        transport_binding_signature: String::new(),
        members: vec![GroupMember {
            member_id: "member-0".into(),
            seat: 0,
            public_key: leader.public_key().into(),
            status: MemberStatus::Active,
            joined_at: String::new(),
        }],
        created_at: String::new(),
        updated_at: String::new(),
    };
    Control {
        group: Arc::new(Mutex::new(group)),
        caller: None,
    }
}

#[derive(Default)]
struct Seen {
    steps: Vec<u64>,
    receipts: Vec<(ReceiptStatus, Option<String>)>,
    sources: Vec<ReceiptSource>,
}

impl MemberEvents for Seen {
    fn step(&mut self, verified: &Verified, _replica: &Replica) {
        self.steps.push(verified.envelope.core.seq);
    }
    fn receipt(&mut self, receipt: &Receipt, source: ReceiptSource, _action: &Map<String, Value>) {
        self.receipts.push((receipt.status, receipt.reason.clone()));
        self.sources.push(source);
    }
}

fn say(text: &str) -> Map<String, Value> {
    json!({"say": text}).as_object().unwrap().clone()
}

#[test]
fn members_are_admitted_act_verify_and_see_the_room_end() {
    let leader = Identity::generate();
    let control = room_of(&leader);
    let members: Vec<Identity> = (0..2).map(|_| Identity::generate()).collect();
    let scripts = [
        vec![say(""), say("hello"), say("again")],
        vec![say("hi"), say("more"), say("and"), say("more"), say("bye")],
    ];
    let mut leader_ends = Vec::new();
    let mut threads = Vec::new();
    for (identity, script) in members.iter().cloned().zip(scripts) {
        let (leader_end, mut member_end) = duplex();
        leader_ends.push(leader_end);
        let control = control.as_member(&identity);
        threads.push(std::thread::spawn(move || {
            let group = control.group("room-1").unwrap();
            let seat = member_admit(
                &mut member_end,
                &control,
                &identity,
                &group,
                "autonomous",
                None,
                false,
            )
            .unwrap();
            let mut replica =
                Replica::new("room-1", identity.public_key(), &group.leader_public_key, 0);
            let mut actions: VecDeque<_> = script.into();
            let mut seen = Seen::default();
            let end = Follower::new(
                &mut member_end,
                &mut replica,
                &identity,
                &mut actions,
                &mut seen,
                &mut Outbox::default(),
            )
            .run();
            (seat, end, seen, replica)
        }));
    }
    // The leader admits both channels, then starts the room with the server's members.
    let mut admitted = Vec::new();
    for channel in &mut leader_ends {
        admitted.push(
            leader_admit(channel, &control, &leader, "room-1", &"p".repeat(64), 0)
                .unwrap()
                .0,
        );
    }
    let listed: Vec<RoomMember> = control
        .group("room-1")
        .unwrap()
        .members
        .iter()
        .map(RoomMember::from)
        .collect();
    let (authority, _) = chat_room(&leader, listed);
    let mut hub = Hub::new(authority);
    for (member, channel) in admitted.iter().zip(leader_ends) {
        hub.attach(&member.public_key, Box::new(channel)).unwrap();
    }
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while !hub.authority.completed && std::time::Instant::now() < deadline {
        hub.poll();
    }
    assert!(
        hub.authority.completed,
        "the room ended before the deadline"
    );
    assert!(
        hub.detached.is_empty(),
        "nobody was detached while the room ran: {:?}",
        hub.detached
    );
    // Let the last acks and receipts travel, then close.
    for _ in 0..50 {
        hub.poll();
    }
    hub.close();
    let results: Vec<_> = threads.into_iter().map(|t| t.join().unwrap()).collect();
    let seats: Vec<u32> = results.iter().map(|(seat, ..)| seat.seat).collect();
    assert_eq!(seats.len(), 2);
    assert!(seats.contains(&1) && seats.contains(&2), "{seats:?}");
    let mut logs = Vec::new();
    for (_, end, seen, replica) in &results {
        assert_eq!(
            end.as_ref().unwrap(),
            &FollowEnd::Completed(Some("ended".into()))
        );
        let steps = &seen.steps;
        assert!(
            steps.windows(2).all(|w| w[1] == w[0] + 1),
            "every step, in order: {steps:?}"
        );
        logs.push(replica.view.as_ref().unwrap()["log"].clone());
    }
    assert_eq!(logs[0], logs[1], "both members hold the same log");
    let texts: Vec<&str> = logs[0]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e[1].as_str().unwrap())
        .collect();
    // The second member's "bye" ends the room, maybe before the first member's "hello" or
    // "again" (on a loaded machine its thread may not have sent them yet): what the first
    // member said is the start of its script, in order, once each.
    assert_eq!(texts.last(), Some(&"bye"), "{texts:?}");
    for (said, times) in [("hi", 1), ("more", 2)] {
        assert_eq!(
            texts.iter().filter(|t| **t == said).count(),
            times,
            "{texts:?}"
        );
    }
    let first: Vec<&str> = texts
        .iter()
        .copied()
        .filter(|t| ["hello", "again"].contains(t))
        .collect();
    assert!(
        ["hello", "again"].starts_with(&first),
        "the first member's actions in order, once each: {texts:?}"
    );
    // The action that ended the room has its receipt too, though the leader sends the last
    // step before it: each of the second member's five actions was settled.
    assert_eq!(
        results[1].2.receipts.len(),
        5,
        "{:?}",
        results[1].2.receipts
    );
    let first_member = &results[0].2.receipts;
    assert_eq!(
        first_member[0],
        (
            ReceiptStatus::Rejected,
            Some("the hooks refused the action: say something".into())
        )
    );
    assert!(
        hub.authority.replicated_checkpoint().is_some(),
        "acks reached the authority"
    );
}

#[test]
fn a_member_refuses_a_forged_admission_before_registering_anything() {
    let leader = Identity::generate();
    let control = room_of(&leader);
    let member = Identity::generate();
    let (mut leader_end, mut member_end) = duplex();
    let group = control.group("room-1").unwrap();
    let forger = Identity::generate();
    let member_thread = {
        let control = control.as_member(&member);
        std::thread::spawn(move || {
            member_admit(
                &mut member_end,
                &control,
                &member,
                &group,
                "human",
                None,
                false,
            )
        })
    };
    // A leader impostor answers with a signature of its own key.
    let join = crate::wire::group::Join::parse(&leader_end_recv(&mut leader_end)).unwrap();
    let statement = admission_canonical(
        "room-1",
        leader.public_key(),
        &join.member_public_key,
        &"p".repeat(64),
        0,
        &join.join_nonce,
    );
    let forged = crate::wire::group::Admission {
        group_id: "room-1".into(),
        protocol_id: "p".repeat(64),
        leader_public_key: leader.public_key().into(),
        leader_epoch: 0,
        join_nonce: join.join_nonce,
        channel_challenge: super::admission::fresh_hex(),
        leader_signature: forger.sign_hex(statement.as_bytes()),
    };
    crate::transport::Channel::send(&mut leader_end, &forged.to_value()).unwrap();
    let refused = member_thread.join().unwrap().unwrap_err();
    assert_eq!(refused, "the leader's admission signature does not verify");
    assert_eq!(
        control.group("room-1").unwrap().members.len(),
        1,
        "nothing was registered"
    );
}

/// A member that verified more of the old epoch than the room's new leader claimed with
/// hands its checkpoint over in `ready`, and the new leader's admission returns it as sent;
/// a member that is not ahead hands nothing over.
#[test]
fn a_member_ahead_hands_its_checkpoint_to_a_new_leader_in_ready() {
    let (old, successor, member) = (
        Identity::generate(),
        Identity::generate(),
        Identity::generate(),
    );
    let seats = vec![seated(&old, 0), seated(&successor, 1), seated(&member, 2)];
    let (mut authority, _) = chat_room(&old, seats);
    let _ = authority.apply_input(member.public_key(), 1, &say("last words"));
    let newest = authority.checkpoint().unwrap().clone();
    let control = room_of(&successor);
    {
        let mut group = control.group.lock().unwrap();
        group.leader_epoch = 1;
        group.checkpoint_seq = 0;
    }
    let admit = |claimed_seq: u64| {
        control.group.lock().unwrap().checkpoint_seq = claimed_seq;
        let (mut leader_end, mut member_end) = duplex();
        let (as_member, member, newest) =
            (control.as_member(&member), member.clone(), newest.clone());
        let member_thread = std::thread::spawn(move || {
            let group = as_member.group("room-1").unwrap();
            member_admit(
                &mut member_end,
                &as_member,
                &member,
                &group,
                "autonomous",
                Some(&newest),
                false,
            )
        });
        let admitted = leader_admit(
            &mut leader_end,
            &control,
            &successor,
            "room-1",
            &"p".repeat(64),
            1,
        )
        .unwrap();
        member_thread.join().unwrap().unwrap();
        admitted.1.checkpoint
    };
    let handed = admit(0).expect("handed over");
    assert_eq!(
        Value::Object(handed),
        serde_json::to_value(&newest).unwrap()
    );
    assert_eq!(admit(1), None, "not ahead of the claimed checkpoint");
}

fn leader_end_recv(channel: &mut dyn crate::transport::Channel) -> Value {
    channel
        .recv_timeout(std::time::Duration::from_secs(5))
        .unwrap()
        .unwrap()
}

/// A fresh chat room `room-1` led by `leader` with `seats` (membership version 3), and its
/// first envelopes.
fn chat_room(
    leader: &Identity,
    seats: Vec<RoomMember>,
) -> (Authority<ChatHooks>, crate::room::authority::Envelopes) {
    Authority::new(
        ChatHooks,
        rules(),
        leader.clone(),
        "room-1",
        0,
        3,
        seats,
        Start::Fresh,
    )
    .unwrap()
}

/// A flood is throttled with retryable refusals, unapplied; members that acknowledge
/// nothing while the leader goes on are detached once they fall `MAX_UNACKED_STEPS` behind,
/// long before their clock runs out.
#[test]
fn the_hub_throttles_a_flood_and_detaches_members_that_fall_behind() {
    use super::leader::{INPUT_BURST, MAX_UNACKED_STEPS};
    use crate::transport::Channel;
    let leader = Identity::generate();
    let (flooder, deaf) = (Identity::generate(), Identity::generate());
    let members = vec![seated(&leader, 0), seated(&flooder, 1), seated(&deaf, 2)];
    let (authority, _) = chat_room(&leader, members);
    let mut hub = Hub::new(authority);
    let (flood_leader, mut flood_end) = duplex();
    let (deaf_leader, _deaf_end) = duplex();
    hub.attach(flooder.public_key(), Box::new(flood_leader))
        .unwrap();
    hub.attach(deaf.public_key(), Box::new(deaf_leader))
        .unwrap();
    let flood = 40;
    for seq in 1..=flood {
        let input = crate::wire::group::Input {
            group_id: "room-1".into(),
            leader_epoch: 0,
            actor_public_key: flooder.public_key().into(),
            client_seq: seq,
            action_id: super::admission::fresh_hex(),
            action: say(&format!("flood {seq}")),
        };
        flood_end.send(&input.to_value()).unwrap();
    }
    let mut receipts = Vec::new();
    while receipts.len() < flood as usize {
        hub.poll();
        while let Ok(Some(frame)) = flood_end.recv_timeout(std::time::Duration::ZERO) {
            if frame["_group"] == "receipt" {
                receipts.push(frame);
            }
        }
    }
    let accepted = receipts
        .iter()
        .take_while(|r| r["status"] == "accepted")
        .count();
    assert!(
        (INPUT_BURST as usize..INPUT_BURST as usize + 3).contains(&accepted),
        "{accepted} accepted at once"
    );
    let throttled = &receipts[accepted];
    assert_eq!(
        (&throttled["status"], &throttled["retryable"]),
        (&json!("rejected"), &json!(true))
    );
    assert_eq!(
        throttled["reason"],
        "input flood: above 10 inputs per second; resend later"
    );
    assert_eq!(
        hub.authority.seq, accepted as u64,
        "only accepted inputs made steps"
    );
    assert!(hub.detached.is_empty(), "a flood costs refusals");

    // The leader goes on; neither member acknowledges anything.
    let mut seq = 0;
    while hub.attached() > 0 && seq < 2 * MAX_UNACKED_STEPS {
        seq += 1;
        let (envelopes, _) =
            hub.authority
                .apply_input(leader.public_key(), seq, &say(&format!("step {seq}")));
        hub.broadcast(&envelopes);
        hub.poll();
    }
    let reasons: Vec<(String, String)> = hub
        .detached
        .iter()
        .map(|d| (d.public_key.clone(), d.reason.clone()))
        .collect();
    assert!(
        reasons.contains(&(
            deaf.public_key().to_string(),
            format!(
                "unacked_flood: {} steps sent after its last acknowledgement (at most {MAX_UNACKED_STEPS})",
                MAX_UNACKED_STEPS + 1
            )
        )),
        "{reasons:?}"
    );
    assert_eq!(reasons.len(), 2, "{reasons:?}");
}

/// A leader (a bare authority here) that ends the room on a step and stops without sending
/// any receipt: the member's action in flight is settled from the last checkpoint — accepted
/// when that checkpoint counts it, left unrecorded when the room ended on someone else's.
#[test]
fn an_action_whose_receipt_never_comes_is_settled_from_the_last_checkpoint() {
    use crate::transport::Channel;
    for ours_ends_it in [true, false] {
        let (leader, member, other) = (
            Identity::generate(),
            Identity::generate(),
            Identity::generate(),
        );
        let seats = vec![seated(&leader, 0), seated(&member, 1), seated(&other, 2)];
        let (mut authority, first) = chat_room(&leader, seats);
        let (mut leader_end, mut member_end) = duplex();
        let envelope_for = |envelopes: &[(String, Value)]| {
            let (_, envelope) = envelopes
                .iter()
                .find(|(key, _)| key == member.public_key())
                .expect("one for the member");
            envelope.clone()
        };
        leader_end.send(&envelope_for(&first)).unwrap();
        let follower = {
            let member = member.clone();
            let leader_key = leader.public_key().to_string();
            std::thread::spawn(move || {
                let mut replica = Replica::new("room-1", member.public_key(), &leader_key, 0);
                let mut actions: VecDeque<_> = vec![say("bye")].into();
                let mut seen = Seen::default();
                let mut outbox = Outbox::default();
                let end = Follower::new(
                    &mut member_end,
                    &mut replica,
                    &member,
                    &mut actions,
                    &mut seen,
                    &mut outbox,
                )
                .run();
                (end, seen, outbox.pending().is_some())
            })
        };
        let input = loop {
            let frame = leader_end_recv(&mut leader_end);
            if frame["_group"] == "input" {
                break crate::wire::group::Input::parse(&frame).unwrap();
            }
        };
        let (last, _) = if ours_ends_it {
            authority.apply_input(member.public_key(), input.client_seq, &input.action)
        } else {
            authority.apply_input(other.public_key(), 1, &say("bye"))
        };
        assert!(authority.completed);
        leader_end.send(&envelope_for(&last)).unwrap();
        leader_end.close().unwrap();
        let (end, seen, still_pending) = follower.join().unwrap();
        assert_eq!(end.unwrap(), FollowEnd::Completed(Some("ended".into())));
        if ours_ends_it {
            assert_eq!(seen.receipts, vec![(ReceiptStatus::Accepted, None)]);
            assert_eq!(seen.sources, vec![ReceiptSource::TerminalCheckpoint]);
            assert!(!still_pending, "the action is settled");
        } else {
            assert!(seen.receipts.is_empty(), "{:?}", seen.receipts);
            assert!(
                still_pending,
                "an action the room never took stays unsettled"
            );
        }
    }
}
