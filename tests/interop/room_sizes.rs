//! Interop: full rooms where both implementations sit side by side. Our leader seats
//! reference members and ours at once (each acting as soon as it is admitted); every member's
//! message must reach every other member's verified view, and no member may be let go.

use serde_json::Value;

use crate::room_seats::{LIMIT, Seat, community_room, session_with, texts};
use crate::support::net::{Net, SessionFiles, wait_until};
use crate::support::process::Proc;

/// Our leader, four reference members and three of ours in one Community Room: each member
/// says hello the moment it is admitted, every hello reaches all eight verified views, our
/// leader lets nobody go, and the room closes on every seat.
#[test]
fn our_leader_seats_eight_with_four_reference_members() {
    let net = Net::start();
    let leader = net.agent("leader");
    let (room, dir) = community_room(&leader);
    let (hosting, post_id) = leader.host(dir.to_str().unwrap(), &[]);
    let mut seats = Vec::new();
    for index in 0..7 {
        let seat = if index % 2 == 0 {
            let agent = net.reference_agent(&format!("theirs{index}"));
            agent.register_protocol(&room.protocol_id);
            let (_, process) = agent.daemon(&["join", &post_id, "--no-web"]);
            wait_until(LIMIT, || {
                process
                    .state_dir
                    .join("snapshot.json")
                    .is_file()
                    .then_some(())
            })
            .unwrap_or_else(|| panic!("reference member {index} was admitted"));
            Seat::Theirs { agent, process }
        } else {
            let agent = net.agent(&format!("ours{index}"));
            let process = Proc::spawn(
                "join",
                agent.command(&["join", &post_id, "--control-mode", "autonomous"]),
            );
            let session = wait_until(LIMIT, || session_with(&agent.dir, "room.json"))
                .unwrap_or_else(|| panic!("our member {index} was admitted"));
            Seat::Ours {
                agent,
                process,
                session,
            }
        };
        seat.say(&format!("hello from seat {index}"));
        seats.push(seat);
    }
    let leader_session = session_with(&leader.dir, "room.json").expect("our leader's session");
    for seat in &seats {
        let view = seat.view();
        let all = wait_until(LIMIT, || {
            let seen = texts(&view);
            (0..7)
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
        8,
        "{room_file}"
    );
}
