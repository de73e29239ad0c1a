//! `aigenora protocol diff`: contract changes (a new protocol_id) apart from display
//! changes, both ids agreeing with `protocol hash`, as text and as JSON.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::support::cli::aigenora;

fn write(dir: &Path, name: &str, spec: &Value) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, serde_json::to_string_pretty(spec).unwrap()).unwrap();
    path
}

fn coin_flip() -> Value {
    serde_json::from_str(aigenora::protocols::find("coin-flip").unwrap().spec_json).unwrap()
}

fn hash(path: &Path) -> String {
    let output = aigenora()
        .args(["protocol", "hash"])
        .arg(path)
        .output()
        .unwrap();
    String::from_utf8(output.stdout).unwrap().trim().to_string()
}

fn diff_json(old: &Path, new: &Path) -> Value {
    let output = aigenora()
        .args(["protocol", "diff", "--json"])
        .arg(old)
        .arg(new)
        .output()
        .unwrap();
    assert_eq!(
        output.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_slice(&output.stdout).unwrap()
}

#[test]
fn display_edits_are_the_same_protocol() {
    let dir = tempfile::tempdir().unwrap();
    let old = write(dir.path(), "old.json", &coin_flip());
    let mut edited = coin_flip();
    edited["name"] = json!("Coin Toss");
    edited["description"] = json!("Heads or tails.");
    edited["ui"] = json!({"theme": "dark"});
    let new = write(dir.path(), "new.json", &edited);
    let report = diff_json(&old, &new);
    assert_eq!(report["same_protocol"], true);
    assert_eq!(report["old"]["protocol_id"], hash(&old));
    assert_eq!(report["new"]["protocol_id"], hash(&new));
    assert_eq!(report["contract"], json!([]));
    assert_eq!(
        report["display"],
        json!([
            {"path": "description", "change": "changed", "old": coin_flip()["description"], "new": "Heads or tails."},
            {"path": "name", "change": "changed", "old": "Coin Flip", "new": "Coin Toss"},
            {"path": "ui", "change": "added", "new": {"theme": "dark"}},
        ])
    );
}

#[test]
fn contract_edits_are_a_new_protocol_and_the_text_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let old = write(dir.path(), "old.json", &coin_flip());
    let mut edited = coin_flip();
    edited["name"] = json!("Coin Flip 2");
    let commit = edited["messages"]
        .as_array_mut()
        .unwrap()
        .iter_mut()
        .find(|m| m["name"] == "commit")
        .unwrap();
    commit["fields"]["round"]["max"] = json!(99);
    let new = write(dir.path(), "new.json", &edited);
    let report = diff_json(&old, &new);
    assert_eq!(report["same_protocol"], false);
    assert_ne!(report["old"]["protocol_id"], report["new"]["protocol_id"]);
    assert_eq!(report["new"]["protocol_id"], hash(&new));
    let index = coin_flip()["messages"]
        .as_array()
        .unwrap()
        .iter()
        .position(|m| m["name"] == "commit")
        .unwrap();
    assert_eq!(
        report["contract"],
        json!([{"path": format!("messages[{index}].fields.round.max"), "change": "added", "new": 99}])
    );
    assert_eq!(report["display"][0]["path"], "name");
    let text = aigenora()
        .args(["protocol", "diff"])
        .arg(&old)
        .arg(&new)
        .output()
        .unwrap();
    let text = String::from_utf8(text.stdout).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(
        lines[2..],
        [
            "a new protocol: the contract changed",
            "contract (hashed):",
            &format!("  + messages[{index}].fields.round.max: 99"),
            "display (not hashed):",
            "  ~ name: \"Coin Flip\" → \"Coin Flip 2\"",
        ]
    );
    assert!(
        lines[0].starts_with(&format!("old: {}", hash(&old))),
        "{text}"
    );
}

#[test]
fn a_file_that_is_no_spec_is_one_error_line() {
    let dir = tempfile::tempdir().unwrap();
    let old = write(dir.path(), "old.json", &json!([1]));
    let output = aigenora()
        .args(["protocol", "diff"])
        .arg(&old)
        .arg(&old)
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1));
    assert_eq!(
        String::from_utf8(output.stderr).unwrap(),
        format!(
            "error: the spec must be a JSON object ({})\n",
            old.display()
        )
    );
}
