//! mental_poker in `protocol test`: the reference's own Crazy Eights and Briscola hooks run
//! unchanged on our engine, both audits pass, and both sides sign the same transcript root
//! (each side's `transcript_receipt.json` holds its own signature and the peer's).

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::support::cli::protocol_test_json;
use crate::support::reference::reference_package_dir;

/// The reference's protocol with this id prefix (spec.json + hooks.py), copied into `into`.
fn reference_protocol(prefix: &str, into: &Path) -> PathBuf {
    let protocols = reference_package_dir().join("protocols").join(prefix);
    let source = std::fs::read_dir(&protocols)
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let target = into.join(prefix);
    std::fs::create_dir_all(&target).unwrap();
    for file in ["spec.json", "hooks.py"] {
        std::fs::copy(source.join(file), target.join(file)).unwrap();
    }
    target
}

fn receipt(side: &Value) -> Value {
    let path = Path::new(side["state_dir"].as_str().unwrap()).join("transcript_receipt.json");
    serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap()
}

fn events(side: &Value) -> Vec<Value> {
    let path = Path::new(side["session_dir"].as_str().unwrap()).join("events.jsonl");
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect()
}

fn plays_with_matching_receipts(prefix: &str, name: &str, options: &[&str]) {
    let scratch = tempfile::tempdir().unwrap();
    let dir = reference_protocol(prefix, scratch.path());
    let (code, report, _state) = protocol_test_json(dir.to_str().unwrap(), options);
    assert_eq!(code, 0, "{name}: {report}");
    let (host, guest) = (&report["host"], &report["guest"]);
    assert_eq!(host["completed"], true, "{name}: {report}");
    assert_eq!(guest["completed"], true, "{name}: {report}");
    assert_eq!(host["winner"], guest["winner"], "{name}");
    let (host_receipt, guest_receipt) = (receipt(host), receipt(guest));
    assert_eq!(
        host_receipt["transcript_hash"],
        guest_receipt["transcript_hash"]
    );
    assert_eq!(host_receipt["signature"], guest_receipt["peer_signature"]);
    assert_eq!(guest_receipt["signature"], host_receipt["peer_signature"]);
    for side in [host, guest] {
        let names: Vec<Value> = events(side).iter().map(|e| e["type"].clone()).collect();
        for expected in [
            "mp_setup_completed",
            "audit_passed",
            "mp_terminal_receipt_verified",
            "game_over",
        ] {
            assert!(
                names.contains(&Value::from(expected)),
                "{name}: no {expected}"
            );
        }
    }
}

#[test]
fn reference_crazy_eights_runs_unchanged_with_matching_receipts() {
    plays_with_matching_receipts(
        "3a3c352a",
        "Crazy Eights",
        &["--options", r#"{"hand_size": 4}"#],
    );
}

#[test]
fn reference_briscola_runs_unchanged_with_matching_receipts() {
    plays_with_matching_receipts("f508d605", "Briscola", &[]);
}

/// The built-in Thirty-One with both sides under human control: every turn waits in a
/// decision window until a "person" (this test) submits one of the legal actions it shows.
#[test]
fn thirty_one_is_played_by_two_humans_through_decision_windows() {
    use std::io::Write;

    let data = tempfile::tempdir().unwrap();
    let state = tempfile::tempdir().unwrap();
    let mut game = crate::support::cli::aigenora()
        .arg("--data-dir")
        .arg(data.path())
        .args([
            "protocol",
            "test",
            "thirty-one",
            "--json",
            "--control-mode",
            "human",
        ])
        .args(["--options", r#"{"hand_size": 3}"#, "--state-base"])
        .arg(state.path())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut answered = std::collections::HashSet::new();
    let started = std::time::Instant::now();
    while game.try_wait().unwrap().is_none() {
        assert!(started.elapsed().as_secs() < 120, "the game did not end");
        for side in std::fs::read_dir(state.path()).unwrap().flatten() {
            for engine in std::fs::read_dir(side.path())
                .unwrap()
                .flatten()
                .filter(|e| e.path().is_dir())
            {
                let Ok(text) = std::fs::read_to_string(engine.path().join("snapshot.json")) else {
                    continue;
                };
                let Ok(snapshot) = serde_json::from_str::<Value>(&text) else {
                    continue;
                };
                let seq = snapshot["action_seq"].clone();
                if snapshot["phase"] != "action_required"
                    || !answered.insert((engine.path(), seq.to_string()))
                {
                    continue;
                }
                let mut decision = snapshot["legal_actions"][0].clone();
                decision["action_seq"] = seq;
                let decisions = engine.path().join("decision/decisions.jsonl");
                // A person's tool makes the decision dir if the window has not yet.
                std::fs::create_dir_all(decisions.parent().unwrap()).unwrap();
                let mut file = std::fs::OpenOptions::new()
                    .create(true)
                    .append(true)
                    .open(decisions)
                    .unwrap();
                writeln!(file, "{decision}").unwrap();
            }
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let output = game.wait_with_output().unwrap();
    let report: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(report["passed"], true, "{report}");
    assert_eq!(report["host"]["winner"], report["guest"]["winner"]);
    // Each decision a person made closed its window as `decided` (the engine's desk records
    // it in the side's events).
    let finalized = |side: &Value| {
        let dir = Path::new(side["session_dir"].as_str().unwrap());
        aigenora::records::read_events(&dir.join("events.jsonl"))
            .iter()
            .filter(|e| e.name == "decision_window_closed" && e.data["outcome"] == "decided")
            .count()
    };
    assert!(
        finalized(&report["host"]) >= 2 && finalized(&report["guest"]) >= 2,
        "{report}"
    );
    assert_eq!(
        receipt(&report["host"])["transcript_hash"],
        receipt(&report["guest"])["transcript_hash"]
    );
}

/// `protocol test --adversarial` on a dealt game: each malformed variant of the guest's first
/// frame of every kind (join, setup, transfers, play, opening, witness, receipt) stops the
/// host, although every replay deals a different game.
#[test]
fn thirty_one_refuses_every_malformed_guest_frame() {
    let options = ["--adversarial", "--options", r#"{"hand_size": 3}"#];
    let (code, report, _state) = protocol_test_json("thirty-one", &options);
    assert_eq!(code, 0, "{report}");
    let cases = report["adversarial"].as_array().unwrap();
    assert!(cases.len() >= 15, "{report}");
    assert!(
        cases.iter().all(|case| case["rejected"] == true),
        "{report}"
    );
    for action in [
        "mp_setup_b",
        "mp_ot_request",
        "mp_play",
        "mp_witness",
        "mp_terminal_receipt",
    ] {
        let label = format!("{action}/unknown_field");
        assert!(
            cases.iter().any(|case| case["case"] == label.as_str()),
            "{label}: {report}"
        );
    }
}

/// Thirty-One's `moves` script (per side) and `strategy: lowest` in a whole dealt game (their
/// choices turn by turn are checked in `tests/python/test_builtin_protocols.py`); a script
/// naming no card of the deck is refused with the hook's reason.
#[test]
fn thirty_one_takes_a_moves_script_and_the_lowest_strategy() {
    let options = r#"{"hand_size": 3, "strategy": "lowest", "host_moves": "10S, 1C, draw", "guest_moves": "5H pass"}"#;
    let (code, report, _state) = protocol_test_json("thirty-one", &["--options", options]);
    assert_eq!(code, 0, "{report}");
    assert_eq!(report["passed"], true, "{report}");
    assert_eq!(report["host"]["winner"], report["guest"]["winner"]);

    let bad = r#"{"moves": "10S, 11S"}"#;
    let (code, report, _state) = protocol_test_json("thirty-one", &["--options", bad]);
    assert_eq!(code, 1, "{report}");
    assert!(
        report["host"]["error"]
            .as_str()
            .is_some_and(|error| error.contains("moves: unknown move(s) 11s")),
        "{report}"
    );
}
