//! The hero-duel built-in under `protocol test`: presets and custom balance tables played to
//! the end with the guest's shadow judge on, balance tables checked against the spec before
//! anything runs, and the cheating-host fixture (tests/fixtures/hero-duel-cheat) caught by the
//! shadow judge for every judged field.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::support::cli::{aigenora, protocol_test_json};

/// Every round_result field the shadow judge compares (one lie per run).
const JUDGED: [&str; 15] = [
    "host_hp",
    "guest_hp",
    "host_mana",
    "guest_mana",
    "host_damage_dealt",
    "guest_damage_dealt",
    "host_cd_a",
    "host_cd_b",
    "host_cd_ult",
    "guest_cd_a",
    "guest_cd_b",
    "guest_cd_ult",
    "round_winner",
    "game_over",
    "game_winner",
];

fn cheat_fixture() -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/hero-duel-cheat")
        .to_string_lossy()
        .into_owned()
}

fn hero(hp: u32, attack: u32, armor: u32, abilities: [(u32, u32, u32); 3]) -> Value {
    let [a, b, ult] = abilities.map(
        |(damage, cost, cooldown)| json!({"damage": damage, "cost": cost, "cooldown": cooldown}),
    );
    json!({"hp": hp, "mana": 50, "regen": 10, "attack": attack, "armor": armor, "guard": 50,
           "a": a, "b": b, "ult": ult})
}

/// The events.jsonl of the guest's state dir under a state base.
fn guest_events(state: &Path) -> Vec<Value> {
    let dir: PathBuf = std::fs::read_dir(state)
        .unwrap()
        .flatten()
        .find(|entry| entry.file_name().to_string_lossy().starts_with("guest-"))
        .unwrap()
        .path();
    std::fs::read_to_string(dir.join("events.jsonl"))
        .unwrap()
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect()
}

#[test]
fn presets_and_balance_tables_play_out_under_the_shadow_judge() {
    let pair = json!({
        "paladin": hero(300, 20, 5, [(30, 10, 0), (50, 25, 2), (110, 50, 5)]),
        "rogue": hero(210, 30, 0, [(40, 15, 1), (60, 20, 1), (150, 50, 3)]),
    });
    let option_sets = [
        json!({}),
        json!({"preset": "glass-cannon", "seed": 1}),
        json!({"preset": "fortress", "max_rounds": 80, "seed": 2}),
        json!({"preset": "arcane", "host_hero": "sorcerer", "guest_hero": "warden"}),
        json!({"balance": pair, "seed": 3}),
        json!({"balance": pair, "host_hero": "rogue", "guest_hero": "rogue", "moves": "ult,b,a"}),
        json!({"balance": {"golem": hero(99999, 0, 9999, [(0, 0, 0); 3])}, "max_rounds": 4}),
        json!({"preset": "standard", "balance": pair, "max_rounds": 1}),
    ];
    for options in option_sets {
        let text = options.to_string();
        let (code, report, state) = protocol_test_json("hero-duel", &["--options", &text]);
        assert_eq!(code, 0, "{text}: {report}");
        for side in ["host", "guest"] {
            assert_eq!(report[side]["completed"], true, "{text}: {report}");
        }
        assert_eq!(
            report["host"]["winner"], report["guest"]["winner"],
            "{text}"
        );
        let events = guest_events(state.path());
        let results = events
            .iter()
            .filter(|e| {
                e["type"] == "protocol_message" && e["data"]["msg"]["action"] == "round_result"
            })
            .count();
        let max_rounds = options["max_rounds"].as_u64().unwrap_or(30) as usize;
        assert!(
            (1..=max_rounds).contains(&results),
            "{text}: {results} rounds"
        );
    }
}

#[test]
fn a_balance_table_is_checked_against_the_spec_before_anything_runs() {
    let output = aigenora()
        .args(["protocol", "test", "hero-duel", "--options"])
        .arg(json!({"balance": {"imp": {"hp": 0, "speed": 3}}}).to_string())
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1));
    let stderr = String::from_utf8(output.stderr).unwrap();
    assert!(
        stderr.starts_with("error: options: balance.imp: unknown field 'speed'; balance.imp.hp: below min 1 (got 0); balance.imp: missing field 'mana'"),
        "{stderr}"
    );
}

#[test]
fn an_unknown_preset_names_the_presets() {
    let (code, report, _state) =
        protocol_test_json("hero-duel", &["--options", r#"{"preset": "chaos"}"#]);
    assert_eq!(code, 1);
    let error = report["host"]["error"].as_str().unwrap_or_default();
    assert!(
        error.contains(
            "ValueError: unknown preset 'chaos' (presets: standard, glass-cannon, fortress, arcane)"
        ),
        "{report}"
    );
}

#[test]
fn a_host_misreporting_any_judged_field_is_caught() {
    let fixture = cheat_fixture();
    for field in JUDGED {
        let options = json!({"cheat_field": field, "cheat_round": 0}).to_string();
        let (code, report, state) = protocol_test_json(&fixture, &["--options", &options]);
        assert_eq!(code, 1, "{field}: {report}");
        assert_eq!(
            report["guest"]["reason"], "balance_mismatch",
            "{field}: {report}"
        );
        assert_eq!(report["host"]["completed"], false, "{field}: {report}");
        assert_eq!(
            report["host"]["reason"], "peer_error: balance_mismatch",
            "{field}: the guest tells the host why it leaves: {report}"
        );
        let detected: Vec<Value> = guest_events(state.path())
            .into_iter()
            .filter(|e| e["type"] == "balance_mismatch_detected")
            .collect();
        assert_eq!(detected.len(), 1, "{field}");
        let mismatches = detected[0]["data"]["mismatches"].as_array().unwrap();
        assert_eq!(mismatches.len(), 1, "{field}: {mismatches:?}");
        assert_eq!(mismatches[0]["field"], field);
        assert_eq!(detected[0]["data"]["round"], 0);
    }
}

#[test]
fn a_host_playing_a_secret_preset_is_caught() {
    let (code, report, _state) = protocol_test_json(
        &cheat_fixture(),
        &[
            "--options",
            r#"{"preset": "standard", "cheat_preset": "fortress"}"#,
        ],
    );
    assert_eq!(code, 1, "{report}");
    assert_eq!(report["guest"]["reason"], "balance_mismatch", "{report}");
}

#[test]
fn balance_values_are_not_part_of_the_protocol_id_but_the_schema_is() {
    let builtin = aigenora::protocols::find("hero-duel").unwrap();
    let spec: Value = serde_json::from_str(builtin.spec_json).unwrap();
    let id = |spec: &Value| aigenora::spec::protocol_id::protocol_id(spec).unwrap();
    let original = id(&spec);

    let mut with_values = spec.clone();
    with_values["parameters"]["balance"]["default"] = json!({"knight": {"hp": 1}});
    assert_eq!(
        id(&with_values),
        original,
        "a default balance is a value, not schema"
    );

    let mut wider = spec.clone();
    let columns = wider["parameters"]["balance"]["columns"]
        .as_object_mut()
        .unwrap();
    let (column, schema) = columns
        .iter_mut()
        .find(|(_, s)| s.get("max").is_some())
        .unwrap();
    let column = column.clone();
    schema["max"] = json!(schema["max"].as_i64().unwrap() + 1);
    assert_ne!(
        id(&wider),
        original,
        "widening column {column} changes the contract"
    );

    let mut extra = spec.clone();
    extra["parameters"]["balance"]["columns"]["luck"] =
        json!({"type": "integer", "min": 0, "max": 9});
    assert_ne!(id(&extra), original, "a new column changes the contract");
}

#[test]
fn the_host_refuses_a_bad_balance_before_publishing_anything() {
    let data = tempfile::tempdir().unwrap();
    let output = aigenora()
        .arg("--data-dir")
        .arg(data.path())
        .args([
            "host",
            "--protocol-dir",
            "hero-duel",
            "--relay",
            "disabled",
            "--options",
        ])
        .arg(json!({"balance": {"imp": {"hp": "lots"}}}).to_string())
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1));
    let stderr = String::from_utf8(output.stderr).unwrap();
    assert!(
        stderr.starts_with("error: options: balance.imp.hp: expected integer, got 'lots'"),
        "{stderr}"
    );
    assert!(
        !data.path().join("sessions").exists(),
        "no session was started"
    );
    assert!(!data.path().join("key.json").exists());
}
