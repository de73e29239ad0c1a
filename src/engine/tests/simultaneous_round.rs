//! simultaneous_round: commit-reveal rounds, a broken commitment, the shadow judge on a lying host, and a peer that explains its leaving.

use super::*;

fn rps_spec(shadow: bool) -> Spec {
    rps_spec_with_errors(shadow, "host_to_guest")
}

fn rps_spec_with_errors(shadow: bool, error_direction: &str) -> Spec {
    simultaneous_spec(
        json!({"type": "enum", "values": ["rock", "paper", "scissors"], "required": true}),
        vec![
            message(
                "round_result",
                "host_to_guest",
                json!({"round_winner": {"type": "enum", "values": ["host", "guest", "draw"]}, "game_winner": {"type": "enum", "values": ["host", "guest", "none"]}, "host_hp": {"type": "integer"}}),
            ),
            message(
                "error",
                error_direction,
                json!({"round": {"type": "integer"}, "reason": {"type": "enum", "values": ["commit_mismatch", "balance_mismatch"], "required": true}}),
            ),
        ],
        json!({"shadow_judge": shadow}),
    )
}

fn beats(a: &Value, b: &Value) -> bool {
    matches!(
        (a.as_str().unwrap(), b.as_str().unwrap()),
        ("rock", "scissors") | ("paper", "rock") | ("scissors", "paper")
    )
}

fn judge(lie: bool) -> Judge {
    Box::new(move |round, h, g| {
        let winner = if beats(h, g) {
            "host"
        } else if beats(g, h) {
            "guest"
        } else {
            "draw"
        };
        let over = round == 1;
        let hp = if lie { 99 } else { 10 - round as i64 };
        HookResult {
            response: Some(
                json!({"action": "round_result", "round_winner": winner, "game_winner": if over { "host" } else { "none" }, "host_hp": hp}),
            ),
            completed: over,
            abort: false,
        }
    })
}

fn rps_hooks(lie: bool) -> (TestHooks, TestHooks) {
    let host = TestHooks {
        values: vec![json!("rock"), json!("paper")],
        judge: Some(judge(lie)),
        ..TestHooks::default()
    };
    let mut honest = judge(false);
    let guest = TestHooks {
        values: vec![json!("scissors"), json!("rock")],
        pure: Some(Box::new(move |r, h, g| honest(r, h, g).response.unwrap())),
        ..TestHooks::default()
    };
    (host, guest)
}

#[test]
fn simultaneous_rounds_commit_reveal_judge_and_end() {
    let dir = tempfile::tempdir().unwrap();
    let (host, guest) = rps_hooks(false);
    let (guest_calls, flushes) = (
        guest.calls.clone(),
        [&host, &guest].map(|h| h.flushes.clone()),
    );
    let (host, guest) = play(&rps_spec(true), host, guest, dir.path(), |c| Box::new(c));
    let (host, guest) = (host.unwrap(), guest.unwrap());
    assert!(host.completed && guest.completed);
    assert_eq!(flushes.map(|f| *f.lock().unwrap()), [1, 1]);
    assert_eq!(
        (
            host.winner.map(|w| w.as_str()),
            guest.winner.map(|w| w.as_str())
        ),
        (Some("host"), Some("host"))
    );
    assert_eq!(
        *guest_calls.lock().unwrap(),
        [
            "init guest",
            "guest_handle \"round_result\"",
            "guest_handle \"round_result\""
        ]
    );
    let kinds: Vec<String> = events(dir.path(), "guest")
        .iter()
        .filter(|e| e["type"] == "protocol_message")
        .map(|e| {
            format!(
                "{} {}",
                e["data"]["direction"],
                e["data"]["msg"]["action"].as_str().unwrap()
            )
        })
        .collect();
    assert_eq!(
        kinds[..6],
        [
            "\"sent\" join",
            "\"received\" ready",
            "\"received\" commit",
            "\"sent\" commit",
            "\"sent\" reveal",
            "\"received\" reveal"
        ],
        "the guest reveals right after committing, without waiting for the host's reveal"
    );
}

/// Rewrites frames the guest sends after its own validation (a cheating guest).
#[test]
fn a_reveal_that_breaks_its_commitment_is_caught() {
    let dir = tempfile::tempdir().unwrap();
    let (host, guest) = rps_hooks(false);
    let cheat = |frame: &mut Value| {
        if frame["action"] == "reveal" {
            frame["choice"] = json!("paper");
        }
    };
    let (host, guest) = play(&rps_spec(false), host, guest, dir.path(), |c| {
        Box::new(c.rewriting_sends(cheat))
    });
    assert_eq!(host.unwrap().reason.as_deref(), Some("commit_mismatch"));
    let guest = guest.unwrap();
    assert_eq!(
        (guest.completed, guest.reason.as_deref()),
        (false, Some("peer_error: commit_mismatch")),
        "the guest learns why"
    );
    let mismatch: Vec<Value> = events(dir.path(), "host")
        .into_iter()
        .filter(|e| e["type"] == "commit_mismatch_detected")
        .collect();
    assert_eq!(mismatch[0]["data"]["role"], "guest");
    assert_eq!(mismatch[0]["data"]["round"], 0);
}

#[test]
fn the_shadow_judge_catches_a_lying_host() {
    let dir = tempfile::tempdir().unwrap();
    let (host, guest) = rps_hooks(true);
    let guest_calls = guest.calls.clone();
    let (_host, guest) = play(&rps_spec(true), host, guest, dir.path(), |c| Box::new(c));
    assert_eq!(guest.unwrap().reason.as_deref(), Some("balance_mismatch"));
    assert_eq!(
        *guest_calls.lock().unwrap(),
        ["init guest"],
        "the lie never reaches guest hooks"
    );
    let detected: Vec<Value> = events(dir.path(), "guest")
        .into_iter()
        .filter(|e| e["type"] == "balance_mismatch_detected")
        .collect();
    assert_eq!(
        detected[0]["data"]["mismatches"],
        json!([{"field": "host_hp", "expected": 10, "actual": 99}])
    );
}

#[test]
fn a_guest_that_catches_a_lie_tells_the_host_why_when_the_spec_allows() {
    let dir = tempfile::tempdir().unwrap();
    let (host, guest) = rps_hooks(true);
    let (host, guest) = play(
        &rps_spec_with_errors(true, "both"),
        host,
        guest,
        dir.path(),
        |c| Box::new(c),
    );
    assert_eq!(guest.unwrap().reason.as_deref(), Some("balance_mismatch"));
    assert_eq!(
        host.unwrap().reason.as_deref(),
        Some("peer_error: balance_mismatch")
    );
    let peer_error: Vec<Value> = events(dir.path(), "host")
        .into_iter()
        .filter(|e| e["type"] == "peer_error")
        .collect();
    assert_eq!(
        peer_error[0]["data"],
        json!({"round": 0, "reason": "balance_mismatch"})
    );
}

#[test]
fn a_peer_that_explains_and_leaves_while_we_send_is_still_heard() {
    let dir = tempfile::tempdir().unwrap();
    let spec = rps_spec_with_errors(false, "both");
    let (mut host_end, guest_end) = duplex();
    let (gone, gate) = std::sync::mpsc::channel();
    let guest = std::thread::spawn(move || {
        let mut guest_end = guest_end;
        guest_end.send(&json!({"action": "join"})).unwrap();
        guest_end.recv().unwrap();
        guest_end
            .send(&json!({"action": "error", "round": 0, "reason": "commit_mismatch"}))
            .unwrap();
        drop(guest_end);
        gone.send(()).unwrap();
    });
    let mut host = TestHooks {
        gate: Some(gate),
        ..TestHooks::default()
    };
    let outcome = run(
        &spec,
        &mut host,
        &mut host_end,
        config(Role::Host, dir.path()),
    )
    .unwrap();
    guest.join().unwrap();
    assert_eq!(
        outcome.reason.as_deref(),
        Some("peer_error: commit_mismatch"),
        "the commit could not be sent, but the reason was read"
    );
}
