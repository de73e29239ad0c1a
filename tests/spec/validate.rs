//! `aigenora validate`: the linter through the CLI, message validation, options, and the
//! reference's built-ins linting clean. (Message errors compared with the reference's own
//! validator: tests/interop/spec.rs.)

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::support::cli::aigenora;
use crate::support::reference::reference_package_dir;

fn write_spec(dir: &Path, spec: &Value) -> PathBuf {
    let path = dir.join("spec.json");
    std::fs::write(&path, serde_json::to_string_pretty(spec).unwrap()).unwrap();
    path
}

fn demo_spec() -> Value {
    json!({
        "name": "Guess",
        "spec_version": "1.0",
        "messages": [
            {"name": "join", "direction": "guest_to_host", "fields": {"action": {"type": "enum", "values": ["join"], "required": true}}},
            {"name": "ready", "direction": "host_to_guest", "fields": {"action": {"type": "enum", "values": ["ready"], "required": true}}},
            {"name": "guess", "direction": "guest_to_host", "fields": {
                "action": {"type": "enum", "values": ["gues"], "required": true},
                "n": {"type": "integer", "min": 1, "max": 100, "required": true}}}
        ],
        "parameters": {"max_attempts": {"type": "integer", "min": 1, "max": 20},
                       "balance": {"type": "table", "columns": {"hp": {"type": "integer", "min": 1}}}}
    })
}

#[test]
fn lint_reports_every_problem_with_its_path_and_exits_1() {
    let dir = tempfile::tempdir().unwrap();
    let mut spec = demo_spec();
    spec["messages"][2]["fields"]["n"]["type"] = json!("number");
    spec["flow"] = json!({"mode": "simultaneous_round"});
    let path = write_spec(dir.path(), &spec);
    let output = aigenora().arg("validate").arg(&path).output().unwrap();
    assert_eq!(output.status.code(), Some(1));
    let text = String::from_utf8(output.stdout).unwrap();
    let file = path.display().to_string();
    for expected in [
        ": warning: messages[2].fields.action: enum values should contain the message name 'guess' [action-own-name]",
        ": error: messages[2].fields.n.type: unknown field type 'number' (use integer)",
        ": error: flow.round: required for simultaneous_round",
    ] {
        let line = text
            .lines()
            .find(|line| line.contains(expected))
            .unwrap_or_else(|| panic!("missing {expected:?} in:\n{text}"));
        let position = line
            .strip_prefix(&format!("{file}:"))
            .and_then(|rest| rest.split(": ").next())
            .unwrap_or_else(|| panic!("{line} does not start with {file}:line:col"));
        assert!(
            position
                .split(':')
                .all(|n| n.parse::<usize>().is_ok_and(|n| n > 0)),
            "{line}"
        );
    }
    assert!(text.contains(&format!("{file}: INVALID: ")), "{text}");
}

/// A spec can come from anyone (fetched from a community server): what the linter quotes of
/// it (a field's name here) reaches the terminal escaped, in text and in JSON.
#[test]
fn diagnostics_quoting_the_spec_are_escaped() {
    let dir = tempfile::tempdir().unwrap();
    let mut spec = demo_spec();
    spec["messages"][2]["fields"]["n\u{1b}]0;owned\u{7}\u{9b}"] = json!({"type": "number"});
    let path = write_spec(dir.path(), &spec);
    for json_flag in [false, true] {
        let mut command = aigenora();
        command.arg("validate").arg(&path);
        if json_flag {
            command.arg("--json");
        }
        let out = command.output().unwrap();
        let report = String::from_utf8(out.stdout).unwrap();
        assert_eq!(out.status.code(), Some(1), "{report}");
        assert!(
            !report.contains(['\u{1b}', '\u{7}', '\u{9b}']),
            "{report:?}"
        );
        let quoted = if json_flag {
            "n\\u001b]0;owned\\u0007\\u009b"
        } else {
            "n\\x1b]0;owned\\x07\\u{9b}"
        };
        assert!(report.contains(quoted), "{report}");
    }
}

#[test]
fn clean_spec_exits_0_and_json_is_machine_readable() {
    let dir = tempfile::tempdir().unwrap();
    let path = write_spec(dir.path(), &demo_spec());
    let output = aigenora()
        .args(["validate", "--json"])
        .arg(&path)
        .output()
        .unwrap();
    assert_eq!(
        output.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&output.stdout)
    );
    let report: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(report["valid"], true);
    assert_eq!(report["errors"], 0);
    assert_eq!(report["warnings"], 1);
    let diagnostic = &report["diagnostics"][0];
    let (line, column) = (
        diagnostic["line"].as_u64().unwrap(),
        diagnostic["column"].as_u64().unwrap(),
    );
    assert_eq!(
        diagnostic,
        &json!({
            "severity": "warning",
            "check": "action-own-name",
            "path": "messages[2].fields.action",
            "line": line,
            "column": column,
            "message": "enum values should contain the message name 'guess'"
        })
    );
    // The position is the key the path names: the third message's "action".
    let text = std::fs::read_to_string(&path).unwrap();
    let line_start: usize = text
        .split_inclusive('\n')
        .take(line as usize - 1)
        .map(str::len)
        .sum();
    let at = line_start
        + text[line_start..]
            .chars()
            .take(column as usize - 1)
            .map(char::len_utf8)
            .sum::<usize>();
    assert!(
        text[at..].starts_with("\"action\""),
        "{}",
        &text[line_start..]
    );
    assert_eq!(
        text[..at].matches("\"action\"").count(),
        2,
        "the third message's action"
    );
    let hash = aigenora()
        .args(["protocol", "hash"])
        .arg(&path)
        .output()
        .unwrap();
    assert_eq!(
        report["protocol_id"].as_str().unwrap(),
        String::from_utf8(hash.stdout).unwrap().trim()
    );
}

#[test]
fn options_are_checked_with_paths() {
    let dir = tempfile::tempdir().unwrap();
    let path = write_spec(dir.path(), &demo_spec());
    let bad =
        r#"{"max_attempts": 0, "balance": {"knight": {"hp": 0, "mp": 3}}, "undeclared": true}"#;
    let output = aigenora()
        .args(["validate", "--json", "--options", bad])
        .arg(&path)
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1));
    let report: Value = serde_json::from_slice(&output.stdout).unwrap();
    let messages: Vec<&str> = report["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|d| d["severity"] == "error")
        .map(|d| d["message"].as_str().unwrap())
        .collect();
    assert_eq!(
        messages,
        [
            "options.max_attempts: value out of range (0 not in 1..20)",
            "options.balance.knight: unknown field 'mp'",
            "options.balance.knight.hp: below min 1 (got 0)",
        ]
    );
    let good = aigenora()
        .args([
            "validate",
            "--quiet",
            "--options",
            r#"{"max_attempts": 3, "x": 1}"#,
        ])
        .arg(&path)
        .output()
        .unwrap();
    assert_eq!(good.status.code(), Some(0));
    let not_object = aigenora()
        .args(["validate", "--options", "[1]"])
        .arg(&path)
        .output()
        .unwrap();
    assert_eq!(
        String::from_utf8_lossy(&not_object.stderr),
        "error: --options must be a JSON object\n"
    );
}

#[test]
fn spec_version_gate_applies_to_message_validation() {
    let dir = tempfile::tempdir().unwrap();
    let mut spec = demo_spec();
    spec["spec_version"] = json!("2.0");
    let path = write_spec(dir.path(), &spec);
    let output = aigenora()
        .arg("validate")
        .arg(&path)
        .arg(r#"{"action":"join"}"#)
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1));
    let stderr = String::from_utf8(output.stderr).unwrap();
    assert!(
        stderr.starts_with("error: ")
            && stderr.contains("unsupported spec_version: '2.0' (supported: 1.0)"),
        "{stderr}"
    );
}

#[test]
fn message_validation_prints_ok_or_the_reason() {
    let dir = tempfile::tempdir().unwrap();
    let path = write_spec(dir.path(), &demo_spec());
    let ok = aigenora()
        .arg("validate")
        .arg(&path)
        .args([r#"{"action":"gues","n":5}"#, "--direction", "guest_to_host"])
        .output()
        .unwrap();
    assert_eq!(
        (ok.status.code(), String::from_utf8(ok.stdout).unwrap()),
        (Some(0), "OK\n".to_string())
    );
    let bad = aigenora()
        .arg("validate")
        .arg(&path)
        .args([r#"{"action":"gues","n":500,"x":1}"#])
        .output()
        .unwrap();
    assert_eq!(bad.status.code(), Some(1));
    assert_eq!(
        String::from_utf8(bad.stderr).unwrap(),
        "error: invalid message: unknown field: x; n: above max 100\n"
    );
    let by_name = aigenora()
        .arg("validate")
        .arg(&path)
        .args([r#"{"action":"join"}"#, "--message", "join", "--quiet"])
        .output()
        .unwrap();
    assert_eq!((by_name.status.code(), by_name.stdout.len()), (Some(0), 0));
}

#[test]
fn every_reference_sample_lints_without_errors_rooms_and_realtime_included() {
    let protocols = reference_package_dir().join("protocols");
    let mut linted = 0;
    for spec in glob_specs(&protocols) {
        let output = aigenora()
            .args(["validate", "--json"])
            .arg(&spec)
            .output()
            .unwrap();
        let report: Value = serde_json::from_slice(&output.stdout).unwrap();
        assert_eq!(
            report["errors"],
            0,
            "{}: {}",
            spec.display(),
            report["diagnostics"]
        );
        assert_eq!(output.status.code(), Some(0));
        linted += 1;
    }
    assert_eq!(linted, 21, "the reference ships 21 contracts");
    let whole = aigenora().arg("validate").arg(&protocols).output().unwrap();
    assert_eq!(whole.status.code(), Some(0));
    assert_eq!(
        String::from_utf8(whole.stdout).unwrap(),
        "OK: 21 file(s) checked: 0 error(s), 0 warning(s)\n"
    );
}

fn glob_specs(protocols: &Path) -> Vec<PathBuf> {
    let mut specs = Vec::new();
    for prefix in std::fs::read_dir(protocols).unwrap().flatten() {
        if prefix.file_name().len() != 8 {
            continue;
        }
        for dir in std::fs::read_dir(prefix.path()).unwrap().flatten() {
            specs.push(dir.path().join("spec.json"));
        }
    }
    specs.sort();
    specs
}
