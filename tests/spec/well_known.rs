//! Our hooks for the network's well-known contracts, in one process and from the command
//! line: the id of each contract in our table is the one the reference's index.json gives
//! (and our hash of the package's spec); `protocol test` plays our hooks against themselves
//! on that spec; `protocol list` names them; `init --samples` writes them, with the
//! built-ins, into the library and keeps a user's edits.

use aigenora::protocols::BUILTINS;
use aigenora::protocols::well_known::WELL_KNOWN;
use aigenora::spec::Spec;
use serde_json::Value;

use crate::support::cli::{aigenora, protocol_test_json};
use crate::support::reference::{library_dir, reference_contract};

/// Options that keep each self-play short.
fn quick_options(alias: &str) -> &'static str {
    match alias {
        "connect4-v1" | "reversi-v1" => r#"{"think_ms": 20}"#,
        "gomoku-v1" => r#"{"think_ms": 20, "board_size": 9}"#,
        "trusted-agent-task-v1" => r#"{"task_goal": "say hi", "task_reply": "hi"}"#,
        "crazy-eights-v1" => r#"{"hand_size": 7}"#,
        "texas-holdem-v1" => r#"{"max_hands": 1}"#,
        // (a pinned deal: the board or round ends within `--max-actions` after the failover)
        "contract-bridge-v1" | "four-player-landlord-v1" => r#"{"deal_seed": "quick"}"#,
        // (one hand: about a hundred actions after the failover, within `--max-actions`)
        "upgrade-tractor-v1" => r#"{"deal_seed": "quick", "max_hands": 1}"#,
        // (a pinned deal: about a hundred actions after the failover, within `--max-actions`)
        "aether-sigil-v1" => r#"{"deal_seed": "quick"}"#,
        // (one hand: this wall is won about 120 actions after the failover)
        "classical-mahjong-v1" => r#"{"deal_seed": "quick", "max_hands": 1}"#,
        _ => "{}",
    }
}

#[test]
fn the_table_has_the_ids_of_the_reference_index() {
    for entry in WELL_KNOWN {
        let contract = reference_contract(entry.alias);
        assert_eq!(contract.protocol_id, entry.protocol_id, "{}", entry.alias);
        let spec = Spec::load_checked(&contract.spec).unwrap();
        assert_eq!(spec.protocol_id(), entry.protocol_id, "{}", entry.alias);
        assert_eq!(spec.name(), entry.name, "{}", entry.alias);
    }
}

#[test]
fn our_hooks_play_themselves_on_each_contract() {
    let scratch = tempfile::tempdir().unwrap();
    for entry in WELL_KNOWN {
        let dir = scratch.path().join(entry.alias);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::copy(reference_contract(entry.alias).spec, dir.join("spec.json")).unwrap();
        std::fs::write(dir.join("hooks.py"), entry.hooks_py).unwrap();
        let options = quick_options(entry.alias);
        let (code, report, _state) = protocol_test_json(
            dir.to_str().unwrap(),
            &["--options", options, "--max-actions", "200"],
        );
        assert_eq!(code, 0, "{}: {report}", entry.alias);
        if let Some(room) = report.get("room") {
            // A room: one leader and its members (their whole life is in `room_test`).
            assert_eq!(room["completed"], true, "{}: {report}", entry.alias);
            continue;
        }
        for role in ["host", "guest"] {
            assert_eq!(report[role]["completed"], true, "{}: {report}", entry.alias);
        }
        assert_eq!(
            report["host"]["winner"], report["guest"]["winner"],
            "{}: {report}",
            entry.alias
        );
    }
}

#[test]
fn protocol_list_names_the_builtins_and_every_well_known_contract() {
    let output = aigenora()
        .args(["protocol", "list", "--json"])
        .output()
        .unwrap();
    assert!(output.status.success());
    let rows: Vec<Value> = serde_json::from_slice(&output.stdout).unwrap();
    let of_kind = |kind: &str| rows.iter().filter(|row| row["kind"] == kind).count();
    assert_eq!(of_kind("builtin"), BUILTINS.len());
    assert_eq!(of_kind("well-known"), WELL_KNOWN.len());
    for entry in WELL_KNOWN {
        assert!(
            rows.iter()
                .any(|row| row["protocol_id"] == entry.protocol_id
                    && row["alias"] == entry.alias
                    && row["name"] == entry.name),
            "{}: {rows:?}",
            entry.alias
        );
    }
}

#[test]
fn init_samples_fills_the_library_and_keeps_edited_hooks() {
    let data = tempfile::tempdir().unwrap();
    let init = || {
        let output = aigenora()
            .arg("--data-dir")
            .arg(data.path())
            .args(["init", "--samples", "--json"])
            .output()
            .unwrap();
        assert!(output.status.success(), "{output:?}");
        serde_json::from_slice::<Value>(&output.stdout).unwrap()
    };
    let report = init();
    assert_eq!(
        report["samples"].as_array().unwrap().len(),
        BUILTINS.len() + WELL_KNOWN.len()
    );
    for builtin in BUILTINS {
        let dir = library_dir(data.path(), &builtin.spec().protocol_id());
        assert!(dir.join("spec.json").is_file(), "{}", builtin.alias);
        assert!(dir.join("hooks.py").is_file(), "{}", builtin.alias);
    }
    for entry in WELL_KNOWN {
        let dir = library_dir(data.path(), entry.protocol_id);
        let hooks = std::fs::read_to_string(dir.join("hooks.py")).unwrap();
        assert_eq!(hooks, entry.hooks_py, "{}", entry.alias);
        assert!(
            !dir.join("spec.json").exists(),
            "the spec comes from the server"
        );
    }
    let adapted = library_dir(data.path(), WELL_KNOWN[5].protocol_id).join("hooks.py");
    std::fs::write(&adapted, "# mine\n").unwrap();
    let again = init();
    let kept = again["samples"]
        .as_array()
        .unwrap()
        .iter()
        .find(|sample| sample["alias"] == WELL_KNOWN[5].alias)
        .unwrap();
    assert_eq!(kept["written"], false);
    assert_eq!(std::fs::read_to_string(adapted).unwrap(), "# mine\n");
}

#[test]
fn host_protocol_takes_an_id_or_a_well_known_alias() {
    let output = aigenora()
        .args(["host", "--protocol", "connect-four"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains(
            "--protocol takes a protocol_id (64 hex characters) or a well-known alias (rps-v1, "
        ),
        "{stderr}"
    );
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    let both = aigenora()
        .args(["host", "--protocol", "rps-v1", "--protocol-dir", "chat"])
        .output()
        .unwrap();
    assert_eq!(both.status.code(), Some(2), "{both:?}");
}
