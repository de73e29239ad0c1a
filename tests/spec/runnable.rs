//! The run gate for mental_poker: a spec whose messages do not declare the fields the engine
//! sends fails `validate`, and `protocol test`, `host` and `guest` refuse it with one line
//! before any hook loads and before anything is published or dialed.

use std::path::Path;
use std::process::{Command, Output};

use serde_json::{Value, json};

/// The twelve mental_poker messages, each declaring only its `action`.
fn bare_mental_poker_spec() -> Value {
    let names = [
        "join",
        "ready",
        "mp_setup_a",
        "mp_setup_b",
        "mp_ot_request",
        "mp_ot_response",
        "mp_play",
        "mp_pass",
        "mp_opening",
        "mp_witness",
        "mp_terminal_receipt",
        "error",
    ];
    let messages: Vec<Value> = names
        .iter()
        .map(|name| {
            let direction = match *name {
                "join" => "guest_to_host",
                "ready" => "host_to_guest",
                _ => "both",
            };
            json!({"name": name, "direction": direction,
                   "fields": {"action": {"type": "enum", "values": [name], "required": true}}})
        })
        .collect();
    json!({"name": "Poker", "spec_version": "1.0", "flow": {"mode": "mental_poker"}, "messages": messages})
}

fn aigenora(data_dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_aigenora"))
        .arg("--data-dir")
        .arg(data_dir)
        .args(args)
        .output()
        .unwrap()
}

#[test]
fn a_mental_poker_spec_without_the_engines_fields_is_refused_before_loading_hooks() {
    let home = tempfile::tempdir().unwrap();
    let protocol = home.path().join("poker");
    std::fs::create_dir(&protocol).unwrap();
    let spec_path = protocol.join("spec.json");
    std::fs::write(&spec_path, bare_mental_poker_spec().to_string()).unwrap();
    // Hooks that leave a mark if anything ever loads them.
    let marker = protocol.join("hooks-were-loaded");
    std::fs::write(
        protocol.join("hooks.py"),
        format!(
            "open({:?}, 'w').close()\nraise SystemExit('hooks.py must not load')\n",
            marker.display().to_string()
        ),
    )
    .unwrap();
    let spec = spec_path.to_str().unwrap();

    let validated = aigenora(home.path(), &["validate", spec]);
    let report = String::from_utf8_lossy(&validated.stdout);
    assert_eq!(validated.status.code(), Some(1), "{report}");
    assert!(
        report.contains("mental_poker: the engine sends field 'rsa_pub', which is not declared"),
        "{report}"
    );

    let state = home.path().join("state");
    let tested = aigenora(
        home.path(),
        &[
            "protocol",
            "test",
            protocol.to_str().unwrap(),
            "--state-base",
            state.to_str().unwrap(),
        ],
    );
    let stderr = String::from_utf8_lossy(&tested.stderr);
    assert_eq!(tested.status.code(), Some(1), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(stderr.starts_with("error: invalid spec: "), "{stderr}");
    assert!(tested.stdout.is_empty());
    assert!(!marker.exists(), "hooks.py was loaded");
    assert!(!state.exists(), "no side was started");

    // Hosting and dialing stop at the same gate: no key, server or ticket is ever needed.
    let dir = protocol.to_str().unwrap();
    let ticket = "nodeaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";
    for args in [
        vec![
            "host",
            "--protocol-dir",
            dir,
            "--server",
            "http://127.0.0.1:9",
        ],
        vec!["host", "--direct", "--protocol-dir", dir],
        vec!["guest", "--protocol-dir", dir, "--iroh-ticket", ticket],
    ] {
        let refused = aigenora(home.path(), &args);
        let stderr = String::from_utf8_lossy(&refused.stderr);
        assert_eq!(refused.status.code(), Some(1), "{args:?}: {stderr}");
        assert_eq!(stderr.lines().count(), 1, "{args:?}: {stderr}");
        assert!(stderr.contains("invalid spec"), "{args:?}: {stderr}");
        assert!(!marker.exists(), "hooks.py was loaded by {args:?}");
        assert!(
            !home.path().join("sessions").exists(),
            "{args:?} started a session"
        );
    }
}
