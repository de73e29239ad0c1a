//! Interop: a room outlives its leader. The leader is killed (SIGKILL, as a crash would);
//! once its lease ran out on our server a member holding the room's hooks claims the room,
//! leads its next epoch from its newest checkpoint, and the others follow it there: nothing
//! said before the crash is lost, no member's room goes back a step, the dead leader is
//! taken out of the room once the server stops listing it, and the new leader closes the
//! room for everyone.

use aigenora::api::group::GroupStatus;
use serde_json::Value;

use crate::room_seats::{LIMIT, Seat, community_room, session_with};
use crate::support::net::{Agent, Net, wait_until};
use crate::support::process::Proc;
use crate::support::reference::install_reference_protocol;

/// A short lease and member timeout, so a dead leader is noticed within seconds.
const QUICK_FAILOVER: [&str; 4] = ["--group-lease", "3", "--group-member-timeout-seconds", "8"];

/// One of our members in the room of `post_id`, holding the room's hooks (it can lead).
fn our_member(net: &Net, name: &str, protocol_id: &str, post_id: &str) -> Seat {
    let agent: Agent = net.agent(name);
    install_reference_protocol(&agent, protocol_id);
    let process = Proc::spawn(
        name,
        agent.command(&["join", post_id, "--control-mode", "autonomous"]),
    );
    let session = wait_until(LIMIT, || session_with(&agent.dir, "room.json"))
        .unwrap_or_else(|| panic!("{name} was admitted"));
    Seat::Ours {
        agent,
        process,
        session,
    }
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
