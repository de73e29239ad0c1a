//! Faults only a cheating peer can cause, injected below the engine with real Python hooks:
//! a reveal that breaks its commitment.

use std::sync::Arc;
use std::time::Duration;

use aigenora::selfplay::SelfPlay;
use aigenora::spec::ControlMode;
use serde_json::{Value, json};

/// The guest's reveals, rewritten after its engine validated them.
fn cheat(frame: &mut Value) {
    if frame["action"] == "reveal" {
        frame["choice"] = json!(if frame["choice"] == "rock" {
            "paper"
        } else {
            "rock"
        });
    }
}

#[test]
fn a_reveal_that_breaks_its_commitment_ends_the_match() {
    let data = tempfile::tempdir().unwrap();
    let builtin = aigenora::protocols::find("rock-paper-scissors").unwrap();
    let protocol_dir =
        aigenora::protocols::materialize(builtin, &aigenora::layout::DataDir::new(data.path()))
            .unwrap();
    let play = SelfPlay {
        protocol_dir,
        spec: builtin.spec(),
        options: aigenora::spec::CheckedOptions::none(),
        state_base: data.path().join("sessions"),
        control_mode: ControlMode::Hybrid,
        think: None,
        pace: Duration::ZERO,
        timeout: Duration::from_secs(30),
        display: Arc::new(|_, _| {}),
    };
    let [host, guest] = play
        .run_with(Box::new(|channel| Box::new(channel.rewriting_sends(cheat))))
        .unwrap();
    let host_outcome = host.result.as_ref().unwrap();
    assert_eq!(
        (host_outcome.completed, host_outcome.reason.as_deref()),
        (false, Some("commit_mismatch"))
    );
    assert!(!guest.result.unwrap().completed);
    let events = std::fs::read_to_string(host.events_file()).unwrap();
    let mismatch: Value = events
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .find(|e| e["type"] == "commit_mismatch_detected")
        .unwrap();
    assert_eq!(mismatch["data"]["role"], "guest");
    assert_eq!(mismatch["data"]["round"], 0);
    let snapshot: Value =
        serde_json::from_str(&std::fs::read_to_string(host.state_dir.snapshot_file()).unwrap())
            .unwrap();
    assert_eq!(snapshot["phase"], "aborted");
}
