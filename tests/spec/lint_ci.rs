//! `aigenora validate` the way CI uses it: many files and directories in one call, exit
//! codes, `file:line:col` findings, JSON lines, GitHub annotations, SARIF checked against
//! the official SARIF 2.1.0 schema, and the pre-commit hook and GitHub Action run as they
//! are written, on the fixture tree `tests/fixtures/lint-tree`.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

use crate::support::cli::aigenora;

fn tree() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/lint-tree")
}

/// Runs our binary in the fixture tree (so paths print relative to it).
fn validate(args: &[&str]) -> (i32, String, String) {
    let output = aigenora()
        .arg("validate")
        .args(args)
        .current_dir(tree())
        .output()
        .unwrap();
    unpack(output)
}

fn unpack(output: Output) -> (i32, String, String) {
    (
        output.status.code().unwrap(),
        String::from_utf8(output.stdout).unwrap(),
        String::from_utf8(output.stderr).unwrap(),
    )
}

const ERROR_FINDINGS: [&str; 4] = [
    "games/error/spec.json:7:22: error: messages[2].direction: must be host_to_guest, guest_to_host or both, found \"sideways\" [message-direction-invalid]",
    "games/error/spec.json:9:13: error: messages[2].fields.x.type: unknown field type 'number' (use integer); known: integer, enum, boolean, hash, nonce, id, signature, ticket, text, ciphertext, key, ot_blob, array, json [field-type-unknown]",
    "games/broken/spec.json:3:1: error: invalid JSON: expecting a property name in double quotes at line 3 column 1 [invalid-json]",
    "warning/spec.json:6:64: warning: messages[1].fields.action: should be required: true (a frame without an action matches nothing) [action-not-required]",
];

#[test]
fn a_directory_is_searched_and_every_file_reported_with_one_summary() {
    let (code, stdout, stderr) = validate(&["."]);
    assert_eq!(code, 1, "{stdout}{stderr}");
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(
        lines[..lines.len() - 1],
        [
            ERROR_FINDINGS[2],
            ERROR_FINDINGS[0],
            ERROR_FINDINGS[1],
            ERROR_FINDINGS[3]
        ],
        "sorted by path; hidden, node_modules and non-spec.json files are not read"
    );
    assert_eq!(
        lines.last().unwrap(),
        &"INVALID: 4 file(s) checked: 3 error(s), 1 warning(s)"
    );
}

#[test]
fn exit_codes_clean_warnings_errors_and_usage() {
    let (code, stdout, _) = validate(&["clean", "warning/spec.json"]);
    assert_eq!(code, 0, "warnings alone pass: {stdout}");
    assert!(stdout.ends_with("OK: 2 file(s) checked: 0 error(s), 1 warning(s)\n"));
    let (code, _, _) = validate(&["clean", "warning", "--deny-warnings"]);
    assert_eq!(code, 1, "--deny-warnings fails on a warning");
    let (code, stdout, _) = validate(&["clean", "--deny-warnings", "--quiet"]);
    assert_eq!((code, stdout.as_str()), (0, ""));
    for (args, problem) in [
        (
            &["missing.json"][..],
            "missing.json: no such file or directory",
        ),
        (
            &[
                "games/error/spec.json",
                "--direction",
                "both",
                "clean",
                "warning",
            ][..],
            "--direction and --message apply to a message",
        ),
        (
            &["clean", "--options", "[1]"][..],
            "--options must be a JSON object",
        ),
        (
            &["clean", "--format", "sarif", "--json"][..],
            "cannot be used with",
        ),
        (
            &["--format", "github", "clean/spec.json", "{}"][..],
            "report lint findings, not a message",
        ),
    ] {
        let (code, stdout, stderr) = validate(args);
        assert_eq!(code, 2, "{args:?}: {stdout}{stderr}");
        assert!(stderr.contains(problem), "{args:?}: {stderr}");
        assert!(stdout.is_empty(), "{args:?}: {stdout}");
    }
}

#[test]
fn the_message_mode_still_takes_a_spec_and_a_message() {
    let (code, stdout, _) = validate(&["clean/spec.json", r#"{"action": "join"}"#]);
    assert_eq!((code, stdout.as_str()), (0, "OK\n"));
    let (code, _, stderr) = validate(&["clean/spec.json", "[1]"]);
    assert_eq!(code, 1);
    assert_eq!(
        stderr,
        "error: invalid message: message must be a JSON object\n"
    );
}

#[test]
fn json_format_prints_one_object_per_file_with_positions() {
    let (code, stdout, _) = validate(&["--format", "json", "clean", "games"]);
    assert_eq!(code, 1);
    let reports: Vec<Value> = stdout
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    let files: Vec<&str> = reports
        .iter()
        .map(|r| r["file"].as_str().unwrap())
        .collect();
    assert_eq!(
        files,
        [
            "clean/spec.json",
            "games/broken/spec.json",
            "games/error/spec.json"
        ]
    );
    assert_eq!(reports[0]["valid"], true);
    assert_eq!(reports[1]["protocol_id"], Value::Null);
    let first = &reports[2]["diagnostics"][0];
    assert_eq!(
        (
            &first["check"],
            &first["path"],
            &first["line"],
            &first["column"]
        ),
        (
            &Value::from("message-direction-invalid"),
            &Value::from("messages[2].direction"),
            &Value::from(7),
            &Value::from(22)
        )
    );
}

#[test]
fn github_format_prints_workflow_annotations() {
    let (code, stdout, _) = validate(&["--format", "github", "games/error", "warning"]);
    assert_eq!(code, 1);
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(
        lines,
        [
            "::error file=games/error/spec.json,line=7,col=22,title=aigenora message-direction-invalid::messages[2].direction: must be host_to_guest, guest_to_host or both, found \"sideways\"",
            "::error file=games/error/spec.json,line=9,col=13,title=aigenora field-type-unknown::messages[2].fields.x.type: unknown field type 'number' (use integer); known: integer, enum, boolean, hash, nonce, id, signature, ticket, text, ciphertext, key, ot_blob, array, json",
            "::warning file=warning/spec.json,line=6,col=64,title=aigenora action-not-required::messages[1].fields.action: should be required: true (a frame without an action matches nothing)",
            "INVALID: 2 file(s) checked: 2 error(s), 1 warning(s)",
        ]
    );
}

/// A finding quoting a hostile spec cannot forge a second workflow command.
#[test]
fn github_annotations_escape_what_the_spec_says() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("spec.json");
    let spec =
        serde_json::json!({"name": "x", "messages": [], "bad%\n::error::forged\u{1b}[2J": 1});
    std::fs::write(&path, spec.to_string()).unwrap();
    let output = aigenora()
        .args(["validate", "--format", "github"])
        .arg(&path)
        .output()
        .unwrap();
    let (code, stdout, _) = unpack(output);
    assert_eq!(code, 1);
    assert_eq!(stdout.lines().count(), 3, "{stdout}");
    assert!(
        stdout.contains("bad%25\\x0a::error::forged\\x1b[2J"),
        "{stdout}"
    );
    assert!(
        stdout
            .lines()
            .all(|line| !line.starts_with("::error::forged"))
    );
}

fn sarif_validator() -> jsonschema::Validator {
    let path =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/sarif/sarif-schema-2.1.0.json");
    let schema: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    jsonschema::draft4::new(&schema).expect("the SARIF schema compiles")
}

#[test]
fn sarif_output_validates_against_the_official_schema() {
    let (code, stdout, _) = validate(&["--format", "sarif", "."]);
    assert_eq!(code, 1);
    let log: Value = serde_json::from_str(&stdout).unwrap();
    let errors: Vec<String> = sarif_validator()
        .iter_errors(&log)
        .map(|e| format!("{e} at {}", e.instance_path()))
        .collect();
    assert!(errors.is_empty(), "{errors:?}");
    let run = &log["runs"][0];
    let rules = run["tool"]["driver"]["rules"].as_array().unwrap();
    let ids: Vec<&str> = rules.iter().map(|r| r["id"].as_str().unwrap()).collect();
    let checks: Vec<&str> = aigenora::spec::Check::ALL.iter().map(|c| c.id()).collect();
    assert_eq!(ids, checks, "one rule per lint check, in catalogue order");
    assert!(
        rules
            .iter()
            .all(|r| !r["help"]["text"].as_str().unwrap().is_empty())
    );
    let results = run["results"].as_array().unwrap();
    assert_eq!(results.len(), 4);
    let direction = results
        .iter()
        .find(|r| r["ruleId"] == "message-direction-invalid")
        .unwrap();
    let index = direction["ruleIndex"].as_u64().unwrap() as usize;
    assert_eq!(rules[index]["id"], "message-direction-invalid");
    let location = &direction["locations"][0];
    assert_eq!(
        location["physicalLocation"]["artifactLocation"]["uri"],
        "games/error/spec.json"
    );
    assert_eq!(location["physicalLocation"]["region"]["startLine"], 7);
    assert_eq!(location["physicalLocation"]["region"]["startColumn"], 22);
    assert_eq!(
        location["logicalLocations"][0]["fullyQualifiedName"],
        "messages[2].direction"
    );
    assert_eq!(direction["level"], "error");
}

/// `- id:` blocks of `.pre-commit-hooks.yaml` as (id, key → value) lines.
fn pre_commit_hooks() -> Vec<(String, Vec<(String, String)>)> {
    let text = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join(".pre-commit-hooks.yaml"),
    )
    .unwrap();
    let mut hooks: Vec<(String, Vec<(String, String)>)> = Vec::new();
    for line in text.lines().filter(|l| !l.trim_start().starts_with('#')) {
        if let Some(id) = line.strip_prefix("- id: ") {
            hooks.push((id.trim().to_string(), Vec::new()));
        } else if let Some((key, value)) = line.trim().split_once(": ") {
            hooks
                .last_mut()
                .expect("a key before any hook")
                .1
                .push((key.into(), value.into()));
        }
    }
    hooks
}

/// PATH with our binary's directory first, as an installed aigenora would be.
fn path_with_our_binary() -> String {
    let ours = Path::new(env!("CARGO_BIN_EXE_aigenora")).parent().unwrap();
    format!(
        "{}:{}",
        ours.display(),
        std::env::var("PATH").unwrap_or_default()
    )
}

/// Runs each hook's entry as pre-commit does: the entry's words, then the matching files.
#[test]
fn the_pre_commit_hooks_entry_lints_the_files_it_is_given() {
    let hooks = pre_commit_hooks();
    let ids: Vec<&str> = hooks.iter().map(|(id, _)| id.as_str()).collect();
    assert_eq!(ids, ["aigenora-validate", "aigenora-validate-system"]);
    for (id, keys) in &hooks {
        let get = |key: &str| {
            keys.iter()
                .find(|(k, _)| k == key)
                .map(|(_, v)| v.as_str())
                .unwrap_or_else(|| panic!("{id} has no {key}"))
        };
        assert_eq!(get("files"), r"(^|/)spec\.json$", "{id}");
        let entry: Vec<&str> = get("entry").split_whitespace().collect();
        let run = |files: &[&str]| {
            let output = Command::new(entry[0])
                .args(&entry[1..])
                .args(files)
                .current_dir(tree())
                .env("PATH", path_with_our_binary())
                .output()
                .unwrap();
            unpack(output)
        };
        let (code, stdout, _) = run(&["clean/spec.json", "warning/spec.json"]);
        assert_eq!(code, 0, "{id}: {stdout}");
        assert!(stdout.contains(ERROR_FINDINGS[3]), "{id}: {stdout}");
        let (code, stdout, _) = run(&[
            "clean/spec.json",
            "games/error/spec.json",
            "games/broken/spec.json",
        ]);
        assert_eq!(code, 1, "{id}: {stdout}");
        for finding in &ERROR_FINDINGS[..3] {
            assert!(stdout.contains(finding), "{id}: {stdout}");
        }
    }
}

/// The `run:` script of the action's step named `name` (a `|` block).
fn action_step_script(name: &str) -> String {
    let text =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("action.yml")).unwrap();
    let mut lines = text
        .lines()
        .skip_while(|l| l.trim() != format!("- name: {name}"));
    lines.next().unwrap_or_else(|| panic!("no step {name}"));
    let mut lines = lines.skip_while(|l| l.trim() != "run: |");
    let run = lines.next().expect("a run block");
    let indent = run.len() - run.trim_start().len() + 2;
    lines
        .take_while(|l| l.trim().is_empty() || l.len() - l.trim_start().len() >= indent)
        .map(|l| l.get(indent..).unwrap_or(""))
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn the_github_action_lint_step_annotates_and_fails_on_errors() {
    let script = action_step_script("Lint specs");
    assert!(script.contains("aigenora validate"), "{script}");
    let run = |paths: &str, deny: &str| {
        let output = Command::new("bash")
            .args(["-euo", "pipefail", "-c", &script])
            .current_dir(tree())
            .env("PATH", path_with_our_binary())
            .env("AIGENORA_PATHS", paths)
            .env("AIGENORA_DENY_WARNINGS", deny)
            .output()
            .unwrap();
        unpack(output)
    };
    let (code, stdout, stderr) = run("games warning", "false");
    assert_eq!(code, 1, "{stdout}{stderr}");
    assert!(
        stdout.starts_with(
            "::error file=games/broken/spec.json,line=3,col=1,title=aigenora invalid-json::"
        ),
        "{stdout}"
    );
    assert!(
        stdout.contains("::warning file=warning/spec.json,line=6,col=64,"),
        "{stdout}"
    );
    let (code, stdout, _) = run("clean warning", "false");
    assert_eq!(code, 0, "{stdout}");
    let (code, _, _) = run("clean warning", "true");
    assert_eq!(code, 1, "deny-warnings: true fails on the warning");
}
