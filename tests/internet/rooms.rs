//! A room across the simulated internet: our leader behind NAT A, one member behind NAT B
//! and one on the public network, meeting through the community server and our relay. Each
//! member's message reaches the other's verified view through the leader, and the leader's
//! own action closes the room for everyone.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::fixture::{Internet, RelaySetup};
use crate::support::net::{SESSION_LIMIT, SessionFiles, wait_until};
use crate::support::process::Proc;
use crate::support::reference::reference_contract;
use crate::topology::{Options, Place};

fn session_with(agent_dir: &Path, file: &str) -> Option<PathBuf> {
    std::fs::read_dir(agent_dir.join("sessions"))
        .ok()?
        .flatten()
        .map(|e| e.path())
        .find(|p| p.join(file).is_file())
}

fn shows(session: &Path, text: &str) -> Option<()> {
    let room: Value =
        serde_json::from_str(&std::fs::read_to_string(session.join("room.json")).ok()?).ok()?;
    room["view"]["messages"]
        .as_array()?
        .iter()
        .any(|m| m["text"] == text)
        .then_some(())
}

#[test]
fn a_room_with_members_behind_different_nats() {
    let internet = Internet::start(Options::default(), RelaySetup::Embedded);
    let leader = internet.agent("leader", Place::Host);
    let room = reference_contract("community-room-v1");
    let dir = leader.dir.join("room");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::copy(&room.spec, dir.join("spec.json")).unwrap();
    std::fs::copy(room.spec.with_file_name("hooks.py"), dir.join("hooks.py")).unwrap();
    leader.ok(&[
        "protocol",
        "register",
        dir.join("spec.json").to_str().unwrap(),
    ]);
    let (hosting, post_id) = leader.host(dir.to_str().unwrap(), &["--control-mode", "autonomous"]);
    let mut members = Vec::new();
    for (name, place) in [("behind-b", Place::Guest), ("public", Place::Public)] {
        let agent = internet.agent(name, place);
        let process = Proc::spawn(
            name,
            agent.command(&["join", &post_id, "--control-mode", "autonomous"]),
        );
        let session = wait_until(SESSION_LIMIT, || session_with(&agent.dir, "room.json"))
            .unwrap_or_else(|| panic!("{name} was admitted across the NATs"));
        members.push((agent, process, session));
    }
    for (index, (agent, _, session)) in members.iter().enumerate() {
        let text = format!("hello from member {index}");
        agent.ok(&[
            "session",
            "action",
            "--state-dir",
            session.to_str().unwrap(),
            "--action",
            &format!(r#"{{"kind": "send", "text": "{text}"}}"#),
        ]);
    }
    for (_, _, session) in &members {
        for index in 0..members.len() {
            let text = format!("hello from member {index}");
            assert!(
                wait_until(SESSION_LIMIT, || shows(session, &text)).is_some(),
                "{} shows {text}",
                session.display()
            );
        }
    }
    let leader_session = session_with(&leader.dir, "room.json").expect("the leader's session");
    leader.ok(&[
        "session",
        "action",
        "--state-dir",
        leader_session.to_str().unwrap(),
        "--action",
        r#"{"kind": "close_room"}"#,
    ]);
    hosting.succeed(SESSION_LIMIT);
    for (_, process, session) in members {
        process.succeed(SESSION_LIMIT);
        assert!(SessionFiles::read(&session).is_final());
    }
}
