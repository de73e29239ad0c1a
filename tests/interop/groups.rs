//! Interop: the reference client's rooms against OUR server, on its Community Room
//! contract. Its own room calls (`aigenora.proto.group_control`, with its RestClient and
//! signatures): a host opens the room, a member finds it by invitation and is admitted
//! (twice: the same seat), both heartbeat, the room starts, the member claims it once the
//! lease ran out, the old leader leaves, and the new leader closes it, while the reference's
//! own readers of a room (lease expiry, lease length, start readiness, active members) judge
//! our answers. And two reference agents in a real room over iroh: a message through the
//! leader, then the leader killed and the member taking over through our server.

use std::path::Path;
use std::process::{Command, Output};

use aigenora::api::group::{GroupStatus, MemberStatus};
use aigenora::identity::load_key_file;
use serde_json::Value;

use crate::room_seats::reference_action;
use crate::support::net::{Net, SessionFiles, wait_until};
use crate::support::reference::{reference_cli, reference_contract, reference_python};
use crate::support::server::{TestServer, fake_ticket};

/// The whole room, driven by the reference's functions; prints what it saw as JSON.
const REFERENCE_ROOM: &str = r#"
import json, secrets, sys, time
from aigenora.agent.group import _find_active_member, _lease_expired, _leader_lease_seconds, _start_ready
from aigenora.engine.config import get_server
from aigenora.engine.crypto import transport_binding_canonical
from aigenora.engine.keys import load_keys, sign_raw
from aigenora.engine.rest import RestClient
from aigenora.proto import group_control as gc
from aigenora.proto.group import GroupConfig, checkpoint_certificate_canonical

host_dir, member_dir, spec_path, ticket, new_ticket = sys.argv[1:6]
spec = json.load(open(spec_path))
config = GroupConfig.from_spec(spec)
host, member = load_keys(host_dir), load_keys(member_dir)
hc, mc = RestClient(get_server(None), host), RestClient(get_server(None), member)
seen = {}

protocol_id = sys.argv[6]
binding = transport_binding_canonical(host.public_key, "iroh", ticket, protocol_id)
post = hc.json("POST", "/api/v1/invitations", {
    "message": "room", "tags": ["chat"], "iroh_ticket": ticket, "transport": "iroh",
    "transport_info": {"version": 1, "endpoint_id": host.public_key, "ticket": ticket},
    "transport_binding_signature": sign_raw(host.private_key, binding.encode("utf-8")),
    "protocol_id": protocol_id, "host_control_mode": "hybrid", "type": "supply"}, expected={201})
group = gc.create_group(hc, post_id=post["post_id"], min_participants=config.min_participants,
    max_participants=config.max_participants, allow_late_join=config.allow_late_join,
    recovery_mode=config.recovery_mode)
gid = group["group_id"]
seen["created"] = group
seen["ready_alone"] = _start_ready(group, config)

found = gc.get_group_by_post(mc, post["post_id"])
assert found["group_id"] == gid and found["protocol_id"] == protocol_id, found
def admit():
    nonce = secrets.token_hex(16)
    statement = gc.admission_canonical(gid, found["leader_public_key"], member.public_key,
        protocol_id, found["leader_epoch"], nonce)
    return gc.admit_member(mc, member, group=found, join_nonce=nonce,
        leader_signature=sign_raw(host.private_key, statement.encode("utf-8")))
seen["admitted"] = admit()
seen["readmitted"] = admit()
after = gc.get_group(hc, gid)
seen["member_listed"] = _find_active_member(after, member.public_key) is not None
seen["ready_with_member"] = _start_ready(after, config)
seen["lease_seconds"] = _leader_lease_seconds(after)

checkpoint_hash = "ab" * 32
seen["renewed"] = gc.renew_leader(hc, host, group_id=gid, protocol_id=protocol_id, leader_epoch=0,
    checkpoint_seq=1, checkpoint_hash=checkpoint_hash, iroh_ticket=ticket)
seen["member_heartbeat"] = gc.heartbeat_member(mc, gid)
seen["active"] = gc.update_group_status(hc, group_id=gid, leader_epoch=0, status="active")

deadline = time.monotonic() + 30
while True:
    current = gc.get_group(mc, gid)
    if _lease_expired(current):
        break
    assert time.monotonic() < deadline, current
    gc.heartbeat_member(mc, gid)
    time.sleep(0.2)
checkpoint = {"group_id": gid, "leader_public_key": host.public_key, "leader_epoch": 0, "seq": 2,
    "frame_hash": "cd" * 32, "membership_version": current["membership_version"],
    "checkpoint_hash": "ef" * 32}
checkpoint["checkpoint_signature"] = sign_raw(host.private_key,
    checkpoint_certificate_canonical(checkpoint).encode("utf-8"))
seen["claimed"] = gc.claim_leader(mc, member, group_id=gid, protocol_id=protocol_id,
    expected_epoch=0, checkpoint=checkpoint, iroh_ticket=new_ticket)
try:
    gc.renew_leader(hc, host, group_id=gid, protocol_id=protocol_id, leader_epoch=0,
        checkpoint_seq=3, checkpoint_hash=checkpoint_hash, iroh_ticket=ticket)
    seen["fenced"] = False
except Exception as error:
    seen["fenced"] = str(error)
seen["old_leader_left"] = gc.leave_group(hc, gid)
seen["closed"] = gc.update_group_status(mc, group_id=gid, leader_epoch=1, status="closed")
print(json.dumps(seen))
"#;

fn run(command: &mut Command, server: &str) -> Output {
    command
        .env("P2P_SERVER", server)
        .env_remove("AIGENORA_CONFIG")
        .env_remove("P2P_DATA_DIR")
        .output()
        .unwrap()
}

fn ok(output: Output) -> String {
    let (out, err) = (
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr),
    );
    assert!(output.status.success(), "reference failed:\n{out}\n{err}");
    out.into_owned()
}

fn reference_agent(dir: &Path, server: &str, nickname: &str) {
    ok(run(
        reference_cli().arg("init").arg("--data-dir").arg(dir),
        server,
    ));
    ok(run(
        reference_cli()
            .args(["register", "--nickname", nickname, "--data-dir"])
            .arg(dir),
        server,
    ));
}

#[test]
fn the_reference_clients_room_calls_work_against_our_server() {
    let server = TestServer::start(&["--group-lease", "3"]);
    let work = tempfile::tempdir().unwrap();
    let (host, member) = (work.path().join("host"), work.path().join("member"));
    reference_agent(&host, &server.url, "host");
    reference_agent(&member, &server.url, "member");
    let room = reference_contract("community-room-v1");
    let spec = room.spec.to_str().unwrap();
    ok(run(
        reference_cli()
            .args(["protocol", "register", spec, "--data-dir"])
            .arg(&host),
        &server.url,
    ));
    let seen: Value = serde_json::from_str(&ok(run(
        Command::new(reference_python())
            .arg("-c")
            .arg(REFERENCE_ROOM)
            .args([
                host.to_str().unwrap(),
                member.to_str().unwrap(),
                spec,
                &fake_ticket(1),
                &fake_ticket(2),
                &room.protocol_id,
            ]),
        &server.url,
    )))
    .unwrap();
    let host_key = load_key_file(&aigenora::layout::DataDir::new(&host)).unwrap();
    let member_key = load_key_file(&aigenora::layout::DataDir::new(&member)).unwrap();

    let created = &seen["created"];
    assert_eq!(created["status"], "lobby");
    assert_eq!(created["leader_public_key"], host_key.public_key());
    assert_eq!(created["members"][0]["seat"], 0);
    assert_eq!(
        seen["ready_alone"], false,
        "a min-2 room does not start alone"
    );
    assert_eq!(seen["admitted"]["seat"], 1);
    assert_eq!(
        seen["readmitted"]["member_id"],
        seen["admitted"]["member_id"]
    );
    assert_eq!(seen["readmitted"]["seat"], 1);
    assert_eq!(seen["member_listed"], true);
    assert_eq!(
        seen["ready_with_member"], true,
        "the leader counts as a participant"
    );
    assert_eq!(
        seen["lease_seconds"], 3,
        "the reference reads our lease length"
    );
    assert_eq!(seen["renewed"]["checkpoint_seq"], 1);
    assert_eq!(seen["active"]["status"], "active");
    let claimed = &seen["claimed"];
    assert_eq!(claimed["leader_epoch"], 1);
    assert_eq!(claimed["leader_public_key"], member_key.public_key());
    assert_eq!(claimed["iroh_ticket"], fake_ticket(2).as_str());
    assert!(
        seen["fenced"].as_str().is_some_and(|e| e.contains("409")),
        "the old leader's heartbeat is refused: {}",
        seen["fenced"]
    );
    assert_eq!(seen["closed"]["status"], "closed");

    // The room the reference made reads back through our typed client.
    let group: aigenora::api::group::Group =
        serde_json::from_value(seen["closed"].clone()).unwrap();
    assert_eq!(group.status, GroupStatus::Closed);
    let old_leader = group.member(host_key.public_key()).unwrap();
    assert_eq!(
        (old_leader.seat, old_leader.status),
        (0, MemberStatus::Left)
    );
}

/// How long a member may take to notice a killed leader (its link's idle timeout) and win
/// the claim.
const FAILOVER_LIMIT: std::time::Duration = std::time::Duration::from_secs(120);

fn has_event(state_dir: &Path, kind: &str) -> bool {
    !SessionFiles::read(state_dir).events_of(kind).is_empty()
}

#[tokio::test]
async fn two_reference_agents_run_a_room_over_our_server_and_fail_over() {
    let net = Net::start_with(&["--group-lease", "3"]);
    let host = net.reference_agent("host");
    let member = net.reference_agent("member");
    let room = reference_contract("community-room-v1");
    host.register_protocol(&room.protocol_id);
    let dir = host.protocol_dir(&room.protocol_id);
    let (hosting, leader) =
        host.daemon(&["host", "--protocol-dir", dir.to_str().unwrap(), "--no-web"]);
    let post_id = hosting["post_id"].as_str().unwrap();
    let group_id = hosting["group_id"].as_str().unwrap().to_string();
    let (joining, follower) = member.daemon(&["join", post_id, "--no-web"]);
    assert_eq!(
        (joining["group_id"].as_str(), &joining["seat"]),
        (Some(group_id.as_str()), &Value::from(1))
    );
    assert!(
        wait_until(FAILOVER_LIMIT, || has_event(
            &leader.state_dir,
            "group_started"
        )
        .then_some(()))
        .is_some(),
        "the room never started"
    );

    // A message through the leader raises the checkpoint floor on our server.
    ok(run(
        reference_cli()
            .args(["session", "action", "--state-dir"])
            .arg(&follower.state_dir)
            .args(["--action", r#"{"kind":"send","text":"hello room"}"#]),
        net.url(),
    ));
    let reader = net.server.client(&aigenora::identity::Identity::generate());
    let started = std::time::Instant::now();
    let group = loop {
        let group = reader.group(&group_id).await.unwrap();
        if group.checkpoint_seq >= 1 {
            break group;
        }
        assert!(
            started.elapsed() < FAILOVER_LIMIT,
            "the floor never moved: {group:?}"
        );
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    };
    assert_eq!(
        (group.status, group.participant_count),
        (GroupStatus::Active, 2)
    );

    // The leader dies; the member notices, claims the room, and leads its next epoch.
    let leader_pid = SessionFiles::read(&leader.state_dir).info["pid"]
        .as_u64()
        .unwrap();
    assert!(
        Command::new("kill")
            .args(["-KILL", &leader_pid.to_string()])
            .status()
            .unwrap()
            .success()
    );
    let member_key = load_key_file(&aigenora::layout::DataDir::new(&member.dir)).unwrap();
    let started = std::time::Instant::now();
    let claimed = loop {
        let group = reader.group(&group_id).await.unwrap();
        if group.leader_epoch == 1 {
            break group;
        }
        assert!(
            started.elapsed() < FAILOVER_LIMIT,
            "nobody took over: {group:?}"
        );
        tokio::time::sleep(std::time::Duration::from_millis(500)).await;
    };
    assert_eq!(claimed.leader_public_key, member_key.public_key());
    assert!(
        claimed.checkpoint_seq >= 1,
        "the claim did not go below the floor"
    );
    assert!(has_event(&follower.state_dir, "group_leadership_claimed"));
    // The dead leader, silent since it was killed, is shown as left once its member
    // timeout (30 s) has passed.
    let host_key = load_key_file(&aigenora::layout::DataDir::new(&host.dir)).unwrap();
    let started = std::time::Instant::now();
    loop {
        let group = reader.group(&group_id).await.unwrap();
        let old_leader = group.member(host_key.public_key()).unwrap();
        if old_leader.status == MemberStatus::Left {
            assert_eq!((old_leader.seat, group.participant_count), (0, 1));
            break;
        }
        assert!(started.elapsed() < FAILOVER_LIMIT, "{group:?}");
        tokio::time::sleep(std::time::Duration::from_millis(500)).await;
    }
}

/// Our member at a reference leader's room, through our server: `aigenora join` finds the
/// room, is admitted by the reference leader, verifies its envelopes; `aigenora session
/// action` sends a message that comes back in every verified view; the reference owner
/// closes the room and our member ends completed.
#[test]
fn our_member_sits_in_a_reference_leaders_room() {
    let limit = std::time::Duration::from_secs(90);
    let net = Net::start();
    let host = net.reference_agent("host");
    let ours = net.agent("ours");
    let room = reference_contract("community-room-v1");
    host.register_protocol(&room.protocol_id);
    let dir = host.protocol_dir(&room.protocol_id);
    let (hosting, leader) =
        host.daemon(&["host", "--protocol-dir", dir.to_str().unwrap(), "--no-web"]);
    let post_id = hosting["post_id"].as_str().unwrap().to_string();
    let member = crate::support::process::Proc::spawn(
        "join",
        ours.command(&["join", &post_id, "--control-mode", "autonomous"]),
    );
    let sessions = ours.dir.join("sessions");
    let session = wait_until(limit, || {
        std::fs::read_dir(&sessions)
            .ok()?
            .flatten()
            .map(|e| e.path())
            .find(|p| p.join("room.json").is_file())
    })
    .expect("our member was admitted and verified the leader's first envelope");
    assert!(
        wait_until(limit, || has_event(&leader.state_dir, "group_started")
            .then_some(()))
        .is_some(),
        "the reference leader started the room"
    );
    ours.ok(&[
        "session",
        "action",
        "--state-dir",
        session.to_str().unwrap(),
        "--action",
        r#"{"kind": "send", "text": "hello from the rust member"}"#,
    ]);
    let said = wait_until(limit, || {
        let room: Value =
            serde_json::from_str(&std::fs::read_to_string(session.join("room.json")).ok()?).ok()?;
        room["view"]["messages"]
            .as_array()?
            .iter()
            .any(|m| m["text"] == "hello from the rust member")
            .then_some(())
    });
    assert!(
        said.is_some(),
        "our message came back through the reference leader"
    );
    ok(run(
        reference_cli()
            .args(["session", "action", "--state-dir"])
            .arg(&leader.state_dir)
            .args(["--action", r#"{"kind":"close_room"}"#]),
        net.url(),
    ));
    let finished = member.succeed(limit);
    let _ = finished;
    let events = std::fs::read_to_string(session.join("events.jsonl")).unwrap();
    assert!(events.contains("\"group_member_admitted\""), "{events}");
    assert!(
        events.contains("\"group_action_receipt\"") && events.contains("\"accepted\""),
        "{events}"
    );
    let room: Value =
        serde_json::from_str(&std::fs::read_to_string(session.join("room.json")).unwrap()).unwrap();
    assert_eq!(
        (room["completed"].as_bool(), room["outcome"].as_str()),
        (Some(true), Some("closed"))
    );
    // The member follows without hooks, but ours for the contract were put in its library
    // (ready for when it leads the room), and the session says where its protocol came from.
    let contract = reference_contract("community-room-v1");
    let library = crate::support::reference::library_dir(&ours.dir, &contract.protocol_id);
    assert_eq!(
        std::fs::read_to_string(library.join("hooks.py")).unwrap(),
        aigenora::protocols::well_known::find("community-room-v1")
            .unwrap()
            .hooks_py
    );
    let record: Value =
        serde_json::from_str(&std::fs::read_to_string(session.join("session.json")).unwrap())
            .unwrap();
    assert_eq!(record["protocol_source"], "well-known", "{record}");
}

/// The newest session directory of an agent of ours holding `file`.
fn session_with(agent_dir: &Path, file: &str) -> Option<std::path::PathBuf> {
    let mut dirs: Vec<_> = std::fs::read_dir(agent_dir.join("sessions"))
        .ok()?
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.join(file).is_file())
        .collect();
    dirs.sort();
    dirs.pop()
}

fn view_says(path: &Path, text: &str) -> Option<()> {
    let room: Value = serde_json::from_str(&std::fs::read_to_string(path).ok()?).ok()?;
    let messages = room["view"]["messages"]
        .as_array()
        .or(room["group_view"]["messages"].as_array())?;
    messages.iter().any(|m| m["text"] == text).then_some(())
}

/// Our leader's room with a reference member and one of ours: `aigenora host` opens the
/// invitation and the room on our server and starts it once the reference member is in; our
/// member joins late; each member's message reaches the other's verified view; our leader's
/// own `session action` closes the room and everyone ends.
#[test]
fn our_leader_hosts_a_reference_member_and_one_of_ours() {
    let limit = std::time::Duration::from_secs(90);
    let net = Net::start();
    let leader = net.agent("leader");
    let ours = net.agent("ours");
    let theirs = net.reference_agent("theirs");
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
    let (hosting, post_id) = leader.host(dir.to_str().unwrap(), &[]);
    theirs.register_protocol(&room.protocol_id);
    let (_, reference_member) = theirs.daemon(&["join", &post_id, "--no-web"]);
    assert!(
        wait_until(limit, || has_event(
            &reference_member.state_dir,
            "group_frame_received"
        )
        .then_some(()))
        .is_some(),
        "the reference member was admitted by our leader: {}\n--- our host: {}",
        std::fs::read_to_string(reference_member.state_dir.join("events.jsonl"))
            .unwrap_or_default(),
        hosting.stdout()
    );
    let member = crate::support::process::Proc::spawn(
        "join",
        ours.command(&["join", &post_id, "--control-mode", "autonomous"]),
    );
    let our_session = wait_until(limit, || session_with(&ours.dir, "room.json"))
        .expect("our member joined the running room");
    reference_action(
        &reference_member.state_dir,
        net.url(),
        r#"{"kind":"send","text":"hello from the reference"}"#,
    );
    assert!(
        wait_until(limit, || view_says(
            &our_session.join("room.json"),
            "hello from the reference"
        ))
        .is_some(),
        "the reference member's message reached our member through our leader"
    );
    ours.ok(&[
        "session",
        "action",
        "--state-dir",
        our_session.to_str().unwrap(),
        "--action",
        r#"{"kind": "send", "text": "hello from ours"}"#,
    ]);
    assert!(
        wait_until(limit, || view_says(
            &reference_member.state_dir.join("snapshot.json"),
            "hello from ours"
        ))
        .is_some(),
        "our member's message reached the reference member"
    );
    let leader_session = session_with(&leader.dir, "room.json").expect("our leader's session");
    leader.ok(&[
        "session",
        "action",
        "--state-dir",
        leader_session.to_str().unwrap(),
        "--action",
        r#"{"kind": "close_room"}"#,
    ]);
    hosting.succeed(limit);
    member.succeed(limit);
    let room_file: Value =
        serde_json::from_str(&std::fs::read_to_string(leader_session.join("room.json")).unwrap())
            .unwrap();
    assert_eq!(room_file["completed"], true);
    assert_eq!(
        room_file["members"].as_array().unwrap().len(),
        3,
        "{room_file}"
    );
}

/// `aigenora host --protocol community-room-v1`: the spec comes from the server, the hooks by
/// the contract's id are OURS, and a reference member admitted to the room verifies every
/// envelope our leader builds with them: its message, our leader's topic and the close all
/// reach its verified view, and it ends with the room closed.
#[test]
fn our_leader_on_our_community_room_hooks_leads_a_reference_member() {
    let limit = std::time::Duration::from_secs(90);
    let net = Net::start();
    let leader = net.agent("leader");
    let theirs = net.reference_agent("theirs");
    let room = reference_contract("community-room-v1");
    theirs.register_protocol(&room.protocol_id);
    let (hosting, post_id) = leader.host_with(&["--protocol", "community-room-v1"]);
    let ours = aigenora::protocols::well_known::find("community-room-v1").unwrap();
    let library = crate::support::reference::library_dir(&leader.dir, &room.protocol_id);
    assert_eq!(
        std::fs::read_to_string(library.join("hooks.py")).unwrap(),
        ours.hooks_py,
        "the room's id brought our hooks"
    );
    let (_, member) = theirs.daemon(&["join", &post_id, "--no-web"]);
    let leader_session = wait_until(limit, || session_with(&leader.dir, "room.json"))
        .expect("our leader started the room");
    let record: Value = serde_json::from_str(
        &std::fs::read_to_string(leader_session.join("session.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(record["protocol_source"], "well-known", "{record}");
    reference_action(
        &member.state_dir,
        net.url(),
        r#"{"kind":"send","text":"hello to your hooks"}"#,
    );
    let snapshot = member.state_dir.join("snapshot.json");
    assert!(
        wait_until(limit, || view_says(&snapshot, "hello to your hooks")).is_some(),
        "the reference member's line came back in a view it verified: {}",
        hosting.stdout()
    );
    for action in [
        r#"{"kind": "set_topic", "topic": "our hooks"}"#,
        r#"{"kind": "close_room"}"#,
    ] {
        leader.ok(&[
            "session",
            "action",
            "--state-dir",
            leader_session.to_str().unwrap(),
            "--action",
            action,
        ]);
    }
    hosting.succeed(limit);
    let closed = wait_until(limit, || {
        let seen: Value = serde_json::from_str(&std::fs::read_to_string(&snapshot).ok()?).ok()?;
        (seen["completed"] == true).then_some(seen)
    })
    .expect("the reference member saw the room close");
    assert_eq!(closed["outcome"], "closed", "{closed}");
    assert_eq!(closed["group_view"]["topic"], "our hooks", "{closed}");
    assert_eq!(closed["group_view"]["closed"], true, "{closed}");
    assert!(
        view_says(&snapshot, "The room was closed").is_some(),
        "{closed}"
    );
    let events = std::fs::read_to_string(member.state_dir.join("events.jsonl")).unwrap();
    assert!(!events.contains("group_frame_rejected"), "{events}");
}
