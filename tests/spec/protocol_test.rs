//! `aigenora protocol test`: our built-ins with several option sets, the reference's own
//! 1v1 hooks.py files unchanged, the adversarial suite, and the documented failures (hook
//! exception, undeclared outbound message, skeleton, stuck side).

use std::path::{Path, PathBuf};
use std::process::Output;

use serde_json::Value;

use crate::support::cli::{aigenora, protocol_test_json};
use crate::support::reference::reference_package_dir;

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
}

/// Runs `protocol test --json` and returns (exit code, report).
fn test_json(protocol: &str, extra: &[&str]) -> (i32, Value) {
    let (code, report, _state) = protocol_test_json(protocol, extra);
    (code, report)
}

fn run_text(args: &[&str]) -> Output {
    aigenora()
        .args(["protocol", "test"])
        .args(args)
        .output()
        .unwrap()
}

#[test]
fn every_builtin_passes_with_several_option_sets() {
    let cases: &[(&str, &[&str])] = &[
        ("rock-paper-scissors", &[]),
        (
            "rock-paper-scissors",
            &[
                "--options",
                r#"{"best_of": 5, "termination": "fixed_rounds", "seed": 7}"#,
            ],
        ),
        (
            "rock-paper-scissors",
            &[
                "--options",
                r#"{"rounds_to_win": 2, "moves": "rock,paper", "max_rounds": 6}"#,
                "--control-mode",
                "autonomous",
            ],
        ),
        ("coin-flip", &[]),
        (
            "coin-flip",
            &["--options", r#"{"flips": 5, "bits": "1,0", "seed": 3}"#],
        ),
        ("guess-number", &[]),
        (
            "guess-number",
            &[
                "--options",
                r#"{"range_min": 1, "range_max": 1000, "max_attempts": 10, "secret": 777}"#,
            ],
        ),
        (
            "guess-number",
            &[
                "--options",
                r#"{"max_attempts": 2, "guess_strategy": "random", "seed": 1}"#,
            ],
        ),
        ("chat", &[]),
        ("chat", &["--control-mode", "autonomous"]),
        ("text-transform", &[]),
        (
            "text-transform",
            &[
                "--options",
                r#"{"text": "Peer to peer", "operation": "reverse"}"#,
            ],
        ),
        (
            "text-transform",
            &["--options", r#"{"operation": "word_count"}"#],
        ),
    ];
    for (protocol, extra) in cases {
        let (code, report) = test_json(protocol, extra);
        assert_eq!(code, 0, "{protocol} {extra:?}: {report}");
        assert_eq!(report["passed"], true);
        assert_eq!(
            report["host"]["completed"], true,
            "{protocol} {extra:?}: {report}"
        );
        assert_eq!(
            report["guest"]["completed"], true,
            "{protocol} {extra:?}: {report}"
        );
        assert_eq!(
            report["host"]["winner"], report["guest"]["winner"],
            "{protocol}: both sides agree on the outcome"
        );
    }
}

#[test]
fn builtins_lint_clean() {
    for builtin in aigenora::protocols::BUILTINS {
        let diagnostics = aigenora::spec::lint(builtin.spec().value());
        assert!(diagnostics.is_empty(), "{}: {diagnostics:?}", builtin.alias);
        aigenora::spec::validate_options(builtin.spec().value(), &serde_json::Map::new()).unwrap();
    }
}

/// Copies one reference protocol (spec.json + hooks.py only) into a scratch dir.
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

#[test]
fn reference_hooks_run_unchanged() {
    let scratch = tempfile::tempdir().unwrap();
    let games = [
        ("43a80648", "Rock-Paper-Scissors"),
        ("9e5df77c", "Coin Flip"),
        ("166570ef", "Guess Number"),
        ("83ae1cd7", "Weak Wins All"),
        ("6fdb1053", "Gomoku"),
        ("5cd50a30", "Connect Four"),
        ("5358130e", "Reversi"),
        ("59da01bc", "Human Chat"),
        ("df2d0709", "Hero Duel"),
    ];
    for (prefix, name) in games {
        let dir = reference_protocol(prefix, scratch.path());
        let (code, report) = test_json(dir.to_str().unwrap(), &[]);
        assert_eq!(code, 0, "{name}: {report}");
        assert_eq!(report["host"]["completed"], true, "{name}: {report}");
        assert_eq!(report["guest"]["completed"], true, "{name}: {report}");
    }
}

#[test]
fn reference_hero_duel_passes_our_shadow_judge_with_its_own_balance() {
    let scratch = tempfile::tempdir().unwrap();
    let dir = reference_protocol("df2d0709", scratch.path());
    let skill =
        |dmg: u32, cost: u32, cd: u32| serde_json::json!({"dmg": dmg, "cost": cost, "cd": cd});
    let options = serde_json::json!({
        "max_rounds": 15, "host_hero": "golem", "guest_hero": "imp",
        "balance": {
            "golem": {"hp": 400, "mana": 40, "mana_regen": 5, "atk": 20, "skill_a": skill(30, 10, 1),
                      "skill_b": skill(45, 20, 2), "ult": skill(90, 40, 6)},
            "imp": {"hp": 160, "mana": 90, "mana_regen": 30, "atk": 9, "skill_a": skill(40, 15, 0),
                    "skill_b": skill(60, 30, 1), "ult": skill(150, 90, 3)},
        },
    });
    let (code, report) = test_json(dir.to_str().unwrap(), &["--options", &options.to_string()]);
    assert_eq!(code, 0, "{report}");
    assert_eq!(report["guest"]["completed"], true, "{report}");
    assert_eq!(report["host"]["winner"], report["guest"]["winner"]);
}

#[test]
fn reference_rps_prints_both_sides_and_passes() {
    let scratch = tempfile::tempdir().unwrap();
    let dir = reference_protocol("43a80648", scratch.path());
    let output = run_text(&[dir.to_str().unwrap(), "--options", r#"{"best_of": 3}"#]);
    let stdout = String::from_utf8(output.stdout).unwrap();
    assert!(
        output.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(
        stdout.contains("[host] --- Round 1 ---") && stdout.contains("[guest] --- Round 1 ---"),
        "{stdout}"
    );
    assert!(stdout.contains("=== Game Over ==="), "{stdout}");
    assert!(
        stdout
            .lines()
            .last()
            .unwrap()
            .starts_with("[OK] protocol test passed"),
        "{stdout}"
    );
}

#[test]
fn adversarial_suite_rejects_every_malformed_guest_message() {
    for protocol in [
        "rock-paper-scissors",
        "guess-number",
        "chat",
        "text-transform",
        "hero-duel",
    ] {
        let (code, report) = test_json(protocol, &["--adversarial"]);
        assert_eq!(code, 0, "{protocol}: {report}");
        let cases = report["adversarial"].as_array().unwrap();
        assert!(cases.len() >= 3, "{protocol}: {report}");
        assert!(
            cases.iter().all(|c| c["rejected"] == true),
            "{protocol}: {report}"
        );
        assert!(
            cases
                .iter()
                .any(|c| c["case"].as_str().unwrap().ends_with("/unknown_field"))
        );
    }
}

#[test]
fn a_hook_exception_names_the_hook_file_and_line() {
    let output = run_text(&[
        fixture("faulty").to_str().unwrap(),
        "--options",
        r#"{"fault": "exception"}"#,
    ]);
    assert_eq!(output.status.code(), Some(1));
    let stderr = String::from_utf8(output.stderr).unwrap();
    assert!(stderr.starts_with("error: protocol test failed: host failed: hook proto_host_handle failed: KeyError: 'missing_key' ("), "{stderr}");
    assert!(stderr.contains("faulty/hooks.py:17)"), "{stderr}");
}

/// A decision already submitted when a hybrid window opens replaces the automatic move
/// (here the guest's round-1 "rock" becomes "scissors", so the host wins 1-0); the engine
/// records that window, and the other two, which nobody could act on, leave no trace.
#[test]
fn a_submitted_decision_is_played_in_its_hybrid_window() {
    let dir = tempfile::tempdir().unwrap();
    let builtin = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/protocols/rock-paper-scissors");
    std::fs::copy(builtin.join("spec.json"), dir.path().join("spec.json")).unwrap();
    let hooks = std::fs::read_to_string(builtin.join("hooks.py")).unwrap()
        + "\n\nclass Hooks(Hooks):\n\
           \x20   def proto_init(self, *args, **kwargs):\n\
           \x20       super().proto_init(*args, **kwargs)\n\
           \x20       if self.role == 'guest':\n\
           \x20           from aigenora.proto.decision_bus import DecisionBus\n\
           \x20           DecisionBus.submit(self.state_dir, {'round': 0, 'choice': 'scissors'})\n";
    std::fs::write(dir.path().join("hooks.py"), hooks).unwrap();
    let options = r#"{"best_of": 3, "termination": "fixed_rounds", "moves": "rock"}"#;
    let (code, report, _state) =
        protocol_test_json(dir.path().to_str().unwrap(), &["--options", options]);
    assert_eq!(code, 0, "{report}");
    assert_eq!(report["host"]["winner"], "host", "{report}");
    let guest_dir = PathBuf::from(report["guest"]["state_dir"].as_str().unwrap());
    let events = std::fs::read_to_string(guest_dir.parent().unwrap().join("events.jsonl")).unwrap();
    assert_eq!(
        events.matches("\"decision_window_opened\"").count(),
        1,
        "{events}"
    );
    assert_eq!(
        events.matches("\"outcome\":\"decided\"").count(),
        1,
        "{events}"
    );
    assert!(events.contains("\"choice\":\"scissors\""), "{events}");
}

#[test]
fn a_hooks_file_that_does_not_load_is_named_once() {
    let dir = tempfile::tempdir().unwrap();
    let spec = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/protocols/coin-flip/spec.json");
    std::fs::copy(spec, dir.path().join("spec.json")).unwrap();
    std::fs::write(
        dir.path().join("hooks.py"),
        "x = 1\nfrom __future__ import annotations\n",
    )
    .unwrap();
    let output = run_text(&[dir.path().to_str().unwrap()]);
    assert_eq!(output.status.code(), Some(1));
    let stderr = String::from_utf8(output.stderr).unwrap();
    assert_eq!(
        stderr,
        "error: hook load failed: SyntaxError: from __future__ imports must occur at the \
         beginning of the file (hooks.py, line 2)\n"
    );
}

#[test]
fn an_undeclared_outbound_message_fails_and_is_never_sent() {
    let state = tempfile::tempdir().unwrap();
    let output = run_text(&[
        fixture("faulty").to_str().unwrap(),
        "--options",
        r#"{"fault": "undeclared"}"#,
        "--state-base",
        state.path().to_str().unwrap(),
    ]);
    assert_eq!(output.status.code(), Some(1));
    let stderr = String::from_utf8(output.stderr).unwrap();
    assert!(stderr.contains("host failed: proto_host_handle produced an invalid message (host_to_guest): unknown field: bonus; it was not sent"), "{stderr}");
    let guest_dir = std::fs::read_dir(state.path())
        .unwrap()
        .flatten()
        .find(|e| e.file_name().to_string_lossy().starts_with("guest-"))
        .unwrap()
        .path();
    let guest_events = std::fs::read_to_string(guest_dir.join("events.jsonl")).unwrap();
    assert!(
        !guest_events.contains("bonus"),
        "the guest never received it: {guest_events}"
    );
}

#[test]
fn a_stuck_side_is_named() {
    let output = run_text(&[
        fixture("faulty").to_str().unwrap(),
        "--options",
        r#"{"fault": "stuck"}"#,
        "--timeout",
        "2",
    ]);
    assert_eq!(output.status.code(), Some(1));
    assert_eq!(
        String::from_utf8(output.stderr).unwrap(),
        "error: protocol threads did not finish within 2 s: host (waiting for its peer), guest (stuck in its hooks)\n"
    );
}

#[test]
fn skeletons_are_refused_unless_allowed() {
    let dir = tempfile::tempdir().unwrap();
    let protocol = dir.path().join("proto");
    let scaffold = aigenora()
        .args(["protocol", "scaffold"])
        .arg(fixture("faulty/spec.json"))
        .arg(&protocol)
        .output()
        .unwrap();
    assert!(
        scaffold.status.success(),
        "{}",
        String::from_utf8_lossy(&scaffold.stderr)
    );
    let hooks = std::fs::read_to_string(protocol.join("hooks.py")).unwrap();
    assert!(hooks.contains("AIGENORA_SKELETON = True"));
    assert!(
        hooks.contains("n: integer, required, 1..5"),
        "docstrings list field constraints:\n{hooks}"
    );
    let sidecar: Value = serde_json::from_str(
        &std::fs::read_to_string(protocol.join(".aigenora-hooks.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(sidecar["flow_mode"], "session_loop");

    let refused = run_text(&[protocol.to_str().unwrap()]);
    assert_eq!(refused.status.code(), Some(1));
    let stderr = String::from_utf8(refused.stderr).unwrap();
    assert!(stderr.contains("is not implemented: unimplemented hooks: proto_guest_first_action, proto_guest_handle, proto_guest_handle_ready, proto_guest_join_message, proto_host_handle, proto_host_handle_join (reason: sidecar_hash_match)"), "{stderr}");
    assert_eq!(stderr.lines().count(), 1);

    let bypassed = aigenora()
        .args(["protocol", "test"])
        .arg(&protocol)
        .env("AIGENORA_ALLOW_SKELETON_HOOKS", "yes")
        .output()
        .unwrap();
    let stderr = String::from_utf8(bypassed.stderr).unwrap();
    assert!(
        stderr.contains(
            "NotImplementedError: AIGENORA_SKELETON_NOT_IMPLEMENTED: proto_guest_join_message"
        ),
        "runs, then fails inside the skeleton: {stderr}"
    );
}

#[test]
fn bad_options_are_refused_before_anything_runs() {
    let output = run_text(&[
        "rock-paper-scissors",
        "--options",
        r#"{"best_of": 0, "termination": "sudden_death"}"#,
    ]);
    assert_eq!(output.status.code(), Some(1));
    assert_eq!(
        String::from_utf8(output.stderr).unwrap(),
        "error: options: best_of: value out of range (0 not in 1..9999); termination: invalid enum 'sudden_death' (allowed: 'first_to_win', 'fixed_rounds')\n"
    );
}

#[test]
fn the_example_protocol_lints_clean_and_plays() {
    let example = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/protocols/high-card");
    let lint = aigenora()
        .args(["validate", "--json"])
        .arg(example.join("spec.json"))
        .output()
        .unwrap();
    let report: Value = serde_json::from_slice(&lint.stdout).unwrap();
    assert_eq!(
        (report["errors"].as_u64(), report["warnings"].as_u64()),
        (Some(0), Some(0)),
        "{report}"
    );
    let (code, report) = test_json(
        example.to_str().unwrap(),
        &["--options", r#"{"total_rounds": 7}"#],
    );
    assert_eq!(code, 0, "{report}");
    assert_eq!(report["host"]["winner"], report["guest"]["winner"]);
}

/// The interpreter starts without `site`: standard-library probes (copy's `org.python.core`,
/// ntpath's `nt`) stay probes, and the first import only site-packages can satisfy — here
/// through `importlib.import_module`, i.e. asked for by stdlib code on the hooks' behalf —
/// attaches them, .pth files included.
#[test]
fn site_packages_are_attached_on_the_first_import_that_needs_them() {
    let work = tempfile::tempdir().unwrap();
    let user_base = work.path().join("userbase");
    let site_dir = std::process::Command::new("python3")
        .args(["-c", "import site; print(site.getusersitepackages())"])
        .env("PYTHONUSERBASE", &user_base)
        .output()
        .expect("python3 (the interpreter the binary was built against) is needed");
    let site_dir = PathBuf::from(String::from_utf8(site_dir.stdout).unwrap().trim());
    let extra = work.path().join("only-via-pth");
    std::fs::create_dir_all(&site_dir).unwrap();
    std::fs::create_dir_all(&extra).unwrap();
    std::fs::write(site_dir.join("probe.pth"), format!("{}\n", extra.display())).unwrap();
    std::fs::write(extra.join("aigenora_pth_probe.py"), "VALUE = 'reached'\n").unwrap();

    let protocol = work.path().join("protocol");
    std::fs::create_dir_all(&protocol).unwrap();
    std::fs::copy(
        fixture("faulty").join("spec.json"),
        protocol.join("spec.json"),
    )
    .unwrap();
    let hooks = std::fs::read_to_string(fixture("faulty").join("hooks.py"))
        .unwrap()
        .replace(
            "import time\n",
            "import copy, importlib, ntpath, sys, time\n\nSITE_AT_IMPORT = 'site' in sys.modules\n\naigenora_pth_probe = importlib.import_module('aigenora_pth_probe')\n",
        )
        .replace(
            "return f\"ack {msg['n']}\"",
            "return f\"ack {msg['n']} site_at_import={SITE_AT_IMPORT} probe={aigenora_pth_probe.VALUE}\"",
        );
    std::fs::write(protocol.join("hooks.py"), hooks).unwrap();

    let output = aigenora()
        .args(["protocol", "test", protocol.to_str().unwrap()])
        .env("PYTHONUSERBASE", &user_base)
        .env_remove("AIGENORA_EAGER_SITE")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(
        stdout.contains("ack 3 site_at_import=False probe=reached"),
        "{stdout}"
    );

    let eager = aigenora()
        .args(["protocol", "test", protocol.to_str().unwrap()])
        .env("PYTHONUSERBASE", &user_base)
        .env("AIGENORA_EAGER_SITE", "1")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&eager.stdout);
    assert!(
        stdout.contains("ack 3 site_at_import=True probe=reached"),
        "{stdout}"
    );
}
