//! Interop: full rooms where both implementations sit side by side. Our leader seats
//! reference members and ours at once (each acting as soon as it is admitted); every member's
//! message must reach every other member's verified view, and no member may be let go.

use serde_json::Value;

use crate::room_seats::{
    LIMIT, Seat, community_room, our_member, session_with, texts, their_member,
};
use crate::support::net::{Net, SessionFiles, wait_until};

/// Our leader, four reference members and three of ours in one Community Room.
#[test]
fn our_leader_seats_eight_with_four_reference_members() {
    a_full_room(8);
}

/// A full Community Room of 32: our leader, sixteen reference members and fifteen of ours.
#[test]
fn our_leader_seats_thirty_two_with_sixteen_reference_members() {
    a_full_room(32);
}

/// Our leader and `seats - 1` members, every other one the reference's: each member says
/// hello the moment it is admitted, every hello reaches every verified view, our leader
/// lets nobody go, and the room closes on every seat.
fn a_full_room(size: usize) {
    let net = Net::start();
    let leader = net.agent("leader");
    let (room, dir) = community_room(&leader);
    let (hosting, post_id) = leader.host(dir.to_str().unwrap(), &[]);
    let members = size - 1;
    let mut seats = Vec::new();
    for index in 0..members {
        let seat = if index % 2 == 0 {
            their_member(&net, &format!("theirs{index}"), &room.protocol_id, &post_id)
        } else {
            our_member(&net, &format!("ours{index}"), &room.protocol_id, &post_id)
        };
        seat.say(&format!("hello from seat {index}"));
        seats.push(seat);
    }
    let leader_session = session_with(&leader.dir, "room.json").expect("our leader's session");
    for seat in &seats {
        let view = seat.view();
        let all = wait_until(LIMIT, || {
            let seen = texts(&view);
            (0..members)
                .all(|i| seen.contains(&format!("hello from seat {i}")))
                .then_some(())
        });
        assert!(
            all.is_some(),
            "{} saw only {:?}; our leader's events:\n{}",
            view.display(),
            texts(&view),
            std::fs::read_to_string(leader_session.join("events.jsonl")).unwrap_or_default()
        );
    }
    let leader_files = SessionFiles::read(&leader_session);
    assert!(
        leader_files
            .events_of("group_member_disconnected")
            .is_empty(),
        "our leader let a member go: {:?}",
        leader_files.events_of("group_member_disconnected")
    );
    leader.ok(&[
        "session",
        "action",
        "--state-dir",
        leader_session.to_str().unwrap(),
        "--action",
        r#"{"kind": "close_room"}"#,
    ]);
    hosting.succeed(LIMIT);
    for seat in seats {
        match seat {
            Seat::Ours { process, .. } => {
                process.succeed(LIMIT);
            }
            Seat::Theirs { process, .. } => {
                let files = process.wait_reference_end();
                assert!(
                    !files.events_of("session_ended").is_empty() || files.is_final(),
                    "the reference member ended with the room"
                );
            }
        }
    }
    let room_file: Value =
        serde_json::from_str(&std::fs::read_to_string(leader_session.join("room.json")).unwrap())
            .unwrap();
    assert_eq!(room_file["completed"], true);
    assert_eq!(
        room_file["members"].as_array().unwrap().len(),
        size,
        "{room_file}"
    );
}
