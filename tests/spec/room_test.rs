//! `aigenora protocol test` on a room: the reference's Community Room hooks, unchanged, played
//! through a room's whole life (scripted actions, a late join, a departure, a failover) with
//! every envelope verified by its member; an `abort` room has no failover; hooks that break
//! the room fail the test in one line.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::support::cli::{aigenora, protocol_test_json};
use crate::support::reference::reference_contract;

/// A copy of the reference's Community Room (spec and hooks) in `into`, its spec edited.
fn community_room(into: &Path, edit: impl FnOnce(&mut Value)) -> PathBuf {
    let source = reference_contract("community-room-v1").spec;
    let dir = into.join("room");
    std::fs::create_dir_all(&dir).unwrap();
    let mut spec: Value = serde_json::from_str(&std::fs::read_to_string(&source).unwrap()).unwrap();
    edit(&mut spec);
    std::fs::write(dir.join("spec.json"), spec.to_string()).unwrap();
    std::fs::copy(source.with_file_name("hooks.py"), dir.join("hooks.py")).unwrap();
    dir
}

fn actions(dir: &Path, lines: &[Value]) -> PathBuf {
    let path = dir.join("actions.jsonl");
    let text: String = lines.iter().map(|line| format!("{line}\n")).collect();
    std::fs::write(&path, text).unwrap();
    path
}

#[test]
fn a_reference_room_plays_its_whole_life_with_every_envelope_verified() {
    let work = tempfile::tempdir().unwrap();
    let room = community_room(work.path(), |_| {});
    let script = actions(
        work.path(),
        &[
            json!({"seat": 1, "action": {"kind": "send", "text": "hello room"}}),
            json!({"seat": 0, "action": {"kind": "set_topic", "topic": "tests"}}),
            json!({"seat": 1, "action": {"kind": "dance"}}),
            json!({"seat": 1, "action": {"kind": "send", "text": "after a refusal"}}),
            json!({"seat": 1, "action": {"kind": "send", "text": "after the failover"}}),
        ],
    );
    let (code, report, _state) = protocol_test_json(
        room.to_str().unwrap(),
        &[
            "--actions",
            script.to_str().unwrap(),
            "--actions-before-failover",
            "4",
            "--max-actions",
            "4",
        ],
    );
    assert_eq!(code, 0, "{report}");
    let room_report = &report["room"];
    assert_eq!(report["passed"], true);
    assert_eq!(
        room_report["members"], 2,
        "min_ready starts with min_participants"
    );
    assert_eq!(room_report["accepted"], 4, "{room_report}");
    assert_eq!(room_report["rejected"].as_array().unwrap().len(), 1);
    assert!(
        room_report["rejected"][0]
            .as_str()
            .unwrap()
            .contains("kind must be send")
    );
    assert_eq!(
        (
            room_report["late_join"].as_bool(),
            room_report["departure"].as_bool()
        ),
        (Some(true), Some(true))
    );
    assert_eq!(
        room_report["failover_from"], 5,
        "3 actions, a join and a departure before it"
    );
    assert!(
        room_report["envelopes_verified"].as_u64().unwrap() >= 12,
        "{room_report}"
    );
    // Each member left its last verified view: the message sent after the failover is there.
    let dir = PathBuf::from(room_report["dir"].as_str().unwrap());
    let seat: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("seat-1.json")).unwrap()).unwrap();
    let texts: Vec<&str> = seat["view"]["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["kind"] == "message")
        .filter_map(|m| m["text"].as_str())
        .collect();
    assert_eq!(
        texts,
        ["hello room", "after a refusal", "after the failover"]
    );
    let system: Vec<&Value> = seat["view"]["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["kind"] == "system")
        .collect();
    assert!(
        system
            .iter()
            .any(|m| m["text"].as_str().unwrap().starts_with("Authority moved")),
        "{system:?}"
    );
    assert_eq!(seat["checkpoint"]["leader_epoch"], 1);
}

#[test]
fn an_abort_room_has_no_failover_and_the_text_report_says_so() {
    let work = tempfile::tempdir().unwrap();
    let room = community_room(work.path(), |spec| {
        spec["flow"]["group"]["recovery_mode"] = json!("abort")
    });
    let output = aigenora()
        .args(["protocol", "test", room.to_str().unwrap(), "--state-base"])
        .arg(work.path().join("state"))
        .output()
        .unwrap();
    let stdout = String::from_utf8(output.stdout).unwrap();
    assert_eq!(output.status.code(), Some(0), "{stdout}");
    assert!(
        stdout.contains("no failover (recovery_mode abort"),
        "{stdout}"
    );
    assert!(
        stdout.contains("[OK] protocol test passed (room still open"),
        "{stdout}"
    );
}

#[test]
fn hooks_that_break_the_room_fail_the_test_in_one_line() {
    let work = tempfile::tempdir().unwrap();
    let room = community_room(work.path(), |_| {});
    let hooks = std::fs::read_to_string(room.join("hooks.py")).unwrap();
    std::fs::write(
        room.join("hooks.py"),
        hooks + "\n    def proto_group_view(self, state, viewer):\n        return {'score': 1.5}\n",
    )
    .unwrap();
    let output = aigenora()
        .args(["protocol", "test", room.to_str().unwrap(), "--state-base"])
        .arg(work.path().join("state"))
        .output()
        .unwrap();
    let stderr = String::from_utf8(output.stderr).unwrap();
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(stderr.contains("floating-point number (1.5)"), "{stderr}");
    let bad = actions(work.path(), &[json!({"seat": "one"})]);
    let output = aigenora()
        .args(["protocol", "test", room.to_str().unwrap(), "--actions"])
        .arg(&bad)
        .output()
        .unwrap();
    let stderr = String::from_utf8(output.stderr).unwrap();
    assert!(
        stderr.starts_with("error: --actions ") && stderr.contains("actions.jsonl:1:"),
        "{stderr}"
    );
}
