//! Interop: a room outlives its leader. The leader is killed (SIGKILL, as a crash would);
//! once its lease ran out on our server a member holding the room's hooks claims the room,
//! leads its next epoch from its newest checkpoint, and the others follow it there: nothing
//! said before the crash is lost, no member's room goes back a step, the dead leader is
//! taken out of the room once the server stops listing it, and the new leader closes the
//! room for everyone. The same across implementations: the reference takes over from our
//! dead leader, ours from a dead reference leader, and with both able to claim exactly one
//! of them does.

use aigenora::api::group::GroupStatus;
use serde_json::Value;

use crate::room_seats::{LIMIT, Seat, community_room, our_follower, our_member, their_member};
use crate::support::net::{Net, wait_until};
use crate::support::process::Proc;
use crate::support::reference::{ReferenceContract, reference_contract};

/// A short lease and member timeout, so a dead leader is noticed within seconds.
const QUICK_FAILOVER: [&str; 4] = ["--group-lease", "3", "--group-member-timeout-seconds", "8"];

/// A reference agent hosting the Community Room: its contract, the post id, and its seat.
fn reference_leader(net: &Net) -> (ReferenceContract, String, Seat) {
    let agent = net.reference_agent("host");
    let room = reference_contract("community-room-v1");
    agent.register_protocol(&room.protocol_id);
    let dir = agent.protocol_dir(&room.protocol_id);
    let (hosting, process) =
        agent.daemon(&["host", "--protocol-dir", dir.to_str().unwrap(), "--no-web"]);
    let post_id = hosting["post_id"].as_str().unwrap().to_string();
    (room, post_id, Seat::Theirs { agent, process })
}

/// Kills a reference session's process (as a crash would).
fn kill_reference(seat: &Seat) {
    let pid = crate::support::net::SessionFiles::read(seat.dir()).info["pid"]
        .as_u64()
        .expect("the reference session's pid");
    let killed = std::process::Command::new("kill")
        .args(["-KILL", &pid.to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
}

/// Waits until exactly one of `seats` claims the room and every other one follows the
/// new leader; returns the claimant's index.
fn one_takes_over(seats: &[Seat]) -> usize {
    let claimant = wait_until(LIMIT, || {
        seats
            .iter()
            .position(|s| !s.events("group_leadership_claimed").is_empty())
    })
    .expect("a member took the room over");
    for (index, seat) in seats.iter().enumerate().filter(|(i, _)| *i != claimant) {
        assert!(
            wait_until(LIMIT, || (!seat.events("group_leader_changed").is_empty())
                .then_some(()))
            .is_some(),
            "member {index} followed the new leader"
        );
        assert!(
            seat.events("group_leadership_claimed").is_empty(),
            "exactly one member leads"
        );
    }
    claimant
}

/// The step a seat's verified view is at.
fn step(seat: &Seat) -> u64 {
    std::fs::read_to_string(seat.view())
        .ok()
        .and_then(|text| serde_json::from_str::<Value>(&text).ok())
        .and_then(|room| room["seq"].as_u64())
        .unwrap_or(0)
}

/// The seqs of the envelopes a seat verified, in order: they never go back.
fn assert_never_backwards(seat: &Seat) {
    let seqs: Vec<u64> = seat
        .events("group_frame_received")
        .iter()
        .filter_map(|e| e["seq"].as_u64())
        .collect();
    assert!(
        seqs.windows(2).all(|pair| pair[0] <= pair[1]),
        "{} went back a step: {seqs:?}",
        seat.dir().display()
    );
}

#[tokio::test]
async fn our_member_takes_over_when_our_leader_dies() {
    let net = Net::start_with(&QUICK_FAILOVER);
    let leader = net.agent("leader");
    let (room, dir) = community_room(&leader);
    let (mut hosting, post_id) = leader.host(dir.to_str().unwrap(), &[]);
    let group_id = hosting
        .wait_for_line("group_id: ", LIMIT)
        .trim_start_matches("group_id: ")
        .trim()
        .to_string();
    let seats = [
        our_member(&net, "first", &room.protocol_id, &post_id),
        our_member(&net, "second", &room.protocol_id, &post_id),
    ];
    seats[0].say("before the crash");
    for seat in &seats {
        seat.wait_for_texts(&["before the crash"]);
    }
    let before: Vec<u64> = seats.iter().map(step).collect();

    hosting.kill_and_reap();
    let claimant = wait_until(LIMIT, || {
        seats
            .iter()
            .position(|s| !s.events("group_leadership_claimed").is_empty())
    })
    .expect("a member took the room over");
    let follower = 1 - claimant;
    assert!(
        wait_until(LIMIT, || (!seats[follower]
            .events("group_leader_changed")
            .is_empty())
        .then_some(()))
        .is_some(),
        "the other member followed the new leader"
    );
    assert!(
        seats[follower]
            .events("group_leadership_claimed")
            .is_empty(),
        "exactly one member leads"
    );
    let reader = net.server.client(&aigenora::identity::Identity::generate());
    let group = reader.group(&group_id).await.unwrap();
    let Seat::Ours { agent, .. } = &seats[claimant] else {
        unreachable!()
    };
    assert_eq!(
        (group.leader_epoch, group.leader_public_key.as_str()),
        (1, agent.public_key().as_str())
    );

    seats[follower].say("after the crash");
    seats[claimant].say("from the new leader");
    for seat in &seats {
        seat.wait_for_texts(&["before the crash", "after the crash", "from the new leader"]);
    }
    for (seat, before) in seats.iter().zip(before) {
        assert!(step(seat) > before, "{} moved on", seat.dir().display());
        assert_never_backwards(seat);
    }
    let old_leader = leader.public_key();
    let room_of = |seat: &Seat| -> Value {
        std::fs::read_to_string(seat.view())
            .ok()
            .and_then(|text| serde_json::from_str(&text).ok())
            .unwrap_or(Value::Null)
    };
    let gone = wait_until(LIMIT, || {
        let room = room_of(&seats[claimant]);
        let members = room["members"].as_array()?;
        let active = |key: &str| {
            members
                .iter()
                .any(|m| m["public_key"] == key && m["status"] == "active")
        };
        (!active(&old_leader) && members.iter().filter(|m| m["status"] == "active").count() == 2)
            .then_some(())
    });
    assert!(
        gone.is_some(),
        "the dead leader is out of the room and both members are in: {}\n{:?}",
        room_of(&seats[claimant]),
        seats[follower].events("group_member_heartbeat_failed")
    );

    for seat in &seats {
        assert_eq!(
            seat.events("group_member_heartbeat_failed"),
            Vec::<Value>::new(),
            "{} kept its seat",
            seat.dir().display()
        );
    }
    // The follower is stopped: it gives up its seat, and the new leader takes it out of
    // the room at once rather than after its heartbeats lapse.
    let [first, second] = seats;
    let (claimant, follower) = if claimant == 0 {
        (first, second)
    } else {
        (second, first)
    };
    let follower_key = {
        let Seat::Ours { agent, process, .. } = follower else {
            unreachable!()
        };
        process.terminate(LIMIT);
        agent.public_key()
    };
    assert!(
        wait_until(std::time::Duration::from_secs(10), || claimant
            .events("group_member_left")
            .iter()
            .any(|e| e["public_key"] == follower_key.as_str())
            .then_some(()))
        .is_some(),
        "the stopped member left the room"
    );
    let group = reader.group(&group_id).await.unwrap();
    assert_eq!(
        (group.status, group.leader_epoch, group.participant_count),
        (GroupStatus::Active, 1, 1)
    );
}

/// Our leader dies with a reference member in its room: the reference claims it from the
/// checkpoints our leader certified, and its room carries on from what was said.
#[test]
fn the_reference_takes_over_from_our_dead_leader() {
    let net = Net::start_with(&QUICK_FAILOVER);
    let leader = net.agent("leader");
    let (room, dir) = community_room(&leader);
    let (mut hosting, post_id) = leader.host(dir.to_str().unwrap(), &[]);
    let theirs = their_member(&net, "theirs", &room.protocol_id, &post_id);
    theirs.say("before the crash");
    theirs.wait_for_texts(&["before the crash"]);
    hosting.kill_and_reap();
    let seats = [theirs];
    assert_eq!(one_takes_over(&seats), 0);
    seats[0].say("after the crash");
    seats[0].wait_for_texts(&["before the crash", "after the crash"]);
}

/// A reference leader dies with one of our members in its room: ours claims it from the
/// reference's certified checkpoint and leads on.
#[test]
fn ours_takes_over_from_a_dead_reference_leader() {
    let net = Net::start_with(&QUICK_FAILOVER);
    let (room, post_id, leader) = reference_leader(&net);
    let ours = our_member(&net, "ours", &room.protocol_id, &post_id);
    ours.say("before the crash");
    ours.wait_for_texts(&["before the crash"]);
    let before = step(&ours);
    kill_reference(&leader);
    let seats = [ours];
    assert_eq!(one_takes_over(&seats), 0);
    seats[0].say("after the crash");
    seats[0].wait_for_texts(&["before the crash", "after the crash"]);
    assert!(step(&seats[0]) > before);
    assert_never_backwards(&seats[0]);
}

/// A reference leader dies with a member of each implementation in its room, both able to
/// claim: exactly one does, the other follows it, and both see each other's messages.
#[test]
fn with_both_able_to_claim_exactly_one_leads() {
    let net = Net::start_with(&QUICK_FAILOVER);
    let (room, post_id, leader) = reference_leader(&net);
    let seats = [
        our_member(&net, "ours", &room.protocol_id, &post_id),
        their_member(&net, "theirs", &room.protocol_id, &post_id),
    ];
    seats[1].say("before the crash");
    for seat in &seats {
        seat.wait_for_texts(&["before the crash"]);
    }
    kill_reference(&leader);
    one_takes_over(&seats);
    seats[0].say("ours after the crash");
    seats[1].say("theirs after the crash");
    for seat in &seats {
        seat.wait_for_texts(&[
            "before the crash",
            "ours after the crash",
            "theirs after the crash",
        ]);
    }
    assert_never_backwards(&seats[0]);
}

/// A member whose process dies comes back on its session directory (as a supervisor would
/// restart it): it is admitted to its seat again, the action it had in flight goes out with
/// the same `client_seq` and `action_id` (here one the leader applied already: a
/// `duplicate`, not applied twice), and its queue resumes past what was settled — nothing
/// said twice, nothing lost.
#[test]
fn a_restarted_member_resumes_its_outbox() {
    let net = Net::start();
    let leader = net.agent("leader");
    let (room, dir) = community_room(&leader);
    let (_hosting, post_id) = leader.host(dir.to_str().unwrap(), &[]);
    let seat = our_member(&net, "member", &room.protocol_id, &post_id);
    seat.say("one");
    seat.wait_for_texts(&["one"]);
    seat.say("two");
    seat.wait_for_texts(&["one", "two"]);
    let Seat::Ours {
        agent,
        mut process,
        session,
    } = seat
    else {
        unreachable!()
    };
    // The view can show "two" before its receipt reaches the member: wait for the outbox to
    // settle, then kill the member.
    let read_outbox = || -> Value {
        serde_json::from_str(&std::fs::read_to_string(session.join("room-outbox.json")).unwrap())
            .unwrap()
    };
    let outbox = wait_until(LIMIT, || {
        let outbox = read_outbox();
        outbox["pending"].is_null().then_some(outbox)
    })
    .unwrap_or_else(|| panic!("the receipt for \"two\" never settled: {}", read_outbox()));
    process.kill_and_reap();
    // As if it died after sending "two" a second time but before its receipt came.
    let replay = serde_json::json!({
        "version": 1,
        "committed_offset": outbox["committed_offset"],
        "pending": {"client_seq": 2, "action_id": "cd".repeat(16),
            "action": {"kind": "send", "text": "two"},
            "end_offset": outbox["committed_offset"]},
    });
    std::fs::write(session.join("room-outbox.json"), replay.to_string()).unwrap();
    let _restarted = Proc::spawn(
        "member again",
        agent.command(&[
            "join",
            &post_id,
            "--control-mode",
            "autonomous",
            "--internal-session-dir",
            session.to_str().unwrap(),
        ]),
    );
    let seat = Seat::Ours {
        agent,
        process: _restarted,
        session,
    };
    assert!(
        wait_until(LIMIT, || seat
            .events("group_action_receipt")
            .iter()
            .any(|e| e["status"] == "duplicate")
            .then_some(()))
        .is_some(),
        "the action in flight was answered as a duplicate: {:?}",
        seat.events("group_action_receipt")
    );
    seat.say("three");
    seat.wait_for_texts(&["one", "two", "three"]);
    let said = crate::room_seats::texts(&seat.view());
    for text in ["one", "two", "three"] {
        assert_eq!(
            said.iter().filter(|t| *t == text).count(),
            1,
            "{text} once: {said:?}"
        );
    }
    assert_eq!(seat.events("group_member_admitted").len(), 2);
}

/// A room whose contract says `abort` does not fail over: when its leader dies, a member's
/// claim makes the server fail the room, and every member ends with it (`room_failed`)
/// instead of waiting on a room nobody may lead.
#[tokio::test]
async fn an_abort_room_ends_on_every_member_when_its_leader_dies() {
    let net = Net::start_with(&QUICK_FAILOVER);
    let leader = net.agent("leader");
    let (_, dir) = community_room(&leader);
    let spec_path = dir.join("spec.json");
    let mut spec: Value =
        serde_json::from_str(&std::fs::read_to_string(&spec_path).unwrap()).unwrap();
    spec["flow"]["group"]["recovery_mode"] = "abort".into();
    std::fs::write(&spec_path, spec.to_string()).unwrap();
    leader.ok(&["protocol", "register", spec_path.to_str().unwrap()]);
    let (mut hosting, post_id) = leader.host(dir.to_str().unwrap(), &[]);
    let group_id = hosting
        .wait_for_line("group_id: ", LIMIT)
        .trim_start_matches("group_id: ")
        .trim()
        .to_string();
    let seats = [
        our_follower(&net, "first", &post_id),
        our_follower(&net, "second", &post_id),
    ];
    seats[0].say("before the crash");
    for seat in &seats {
        seat.wait_for_texts(&["before the crash"]);
    }
    hosting.kill_and_reap();
    for seat in seats {
        let dir = seat.dir().to_path_buf();
        let Seat::Ours { process, .. } = seat else {
            unreachable!()
        };
        let finished = process.finish(LIMIT);
        let events = std::fs::read_to_string(dir.join("events.jsonl")).unwrap_or_default();
        let files = crate::support::net::SessionFiles::read(&dir);
        assert_eq!(
            (files.field("end_reason").as_str(), files.is_final()),
            (Some("room_failed"), true),
            "{} ended with the failed room ({}):\n{events}\n{}",
            dir.display(),
            finished.status,
            finished.stderr
        );
        assert!(
            !events.contains("group_leadership_claimed"),
            "nobody leads an abort room: {events}"
        );
    }
    let reader = net.server.client(&aigenora::identity::Identity::generate());
    let group = reader.group(&group_id).await.unwrap();
    assert_eq!((group.status, group.leader_epoch), (GroupStatus::Failed, 0));
}
