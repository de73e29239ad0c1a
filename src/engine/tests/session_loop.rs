//! session_loop: a game to its shared outcome, validation of what is sent and received, and a peer that vanishes.

use super::*;

fn guess_spec() -> Spec {
    spec_with(
        "session_loop",
        vec![
            message("join", "guest_to_host", json!({})),
            message("ready", "host_to_guest", json!({})),
            message(
                "guess",
                "guest_to_host",
                json!({"n": {"type": "integer", "min": 1, "max": 9, "required": true}}),
            ),
            message(
                "hint",
                "host_to_guest",
                json!({"dir": {"type": "enum", "values": ["up", "down", "win"], "required": true},
            "winner": {"type": "enum", "values": ["guest", "none"]}}),
            ),
        ],
        json!({}),
    )
}

fn guess_hooks(secret: i64, bad_hint: bool) -> (TestHooks, TestHooks) {
    let host = TestHooks {
        handle: Some(Box::new(move |m| {
            let n = m["n"].as_i64().unwrap();
            if n == secret {
                return HookResult {
                    response: Some(json!({"action": "hint", "dir": "win", "winner": "guest"})),
                    completed: true,
                    abort: false,
                };
            }
            let dir = if bad_hint {
                "sideways"
            } else if n < secret {
                "up"
            } else {
                "down"
            };
            HookResult {
                response: Some(json!({"action": "hint", "dir": dir})),
                ..HookResult::default()
            }
        })),
        ..TestHooks::default()
    };
    let mut next = 1;
    let guest = TestHooks {
        first: Some(json!({"action": "guess", "n": 1})),
        handle: Some(Box::new(move |m| {
            if m["dir"] == "win" {
                return HookResult {
                    completed: true,
                    ..HookResult::default()
                };
            }
            next += 1;
            HookResult {
                response: Some(json!({"action": "guess", "n": next})),
                ..HookResult::default()
            }
        })),
        ..TestHooks::default()
    };
    (host, guest)
}

#[test]
fn session_loop_plays_to_a_shared_outcome() {
    let dir = tempfile::tempdir().unwrap();
    let (host, guest) = guess_hooks(4, false);
    let (host, guest) = play(&guess_spec(), host, guest, dir.path(), |c| Box::new(c));
    let (host, guest) = (host.unwrap(), guest.unwrap());
    assert!(host.completed && guest.completed);
    assert_eq!(
        (
            host.winner.map(|w| w.as_str()),
            guest.winner.map(|w| w.as_str())
        ),
        (Some("guest"), Some("guest"))
    );
    assert_eq!(host.metadata.unwrap().name, "Test");
    let host_events = events(dir.path(), "host");
    let sent: Vec<&Value> = host_events
        .iter()
        .filter(|e| e["data"]["direction"] == "sent")
        .map(|e| &e["data"]["msg"])
        .collect();
    assert_eq!(sent.len(), 5, "ready + 4 hints");
    assert_eq!(
        host_events.last().unwrap()["data"],
        json!({"completed": true, "reason": "completed"})
    );
}

#[test]
fn an_undeclared_outbound_message_is_never_sent() {
    let dir = tempfile::tempdir().unwrap();
    let (host, guest) = guess_hooks(4, true);
    let (host, guest) = play(&guess_spec(), host, guest, dir.path(), |c| Box::new(c));
    let error = host.unwrap_err();
    assert!(
        matches!(error, EngineError::InvalidOutbound { .. }),
        "{error}"
    );
    assert_eq!(
        error.to_string(),
        "proto_host_handle produced an invalid message (host_to_guest): dir: value 'sideways' not in enum; it was not sent"
    );
    assert_eq!(guest.unwrap().reason.as_deref(), Some("peer_disconnected"));
    let last = events(dir.path(), "host").pop().unwrap();
    assert_eq!(last["data"]["reason"], "engine_error");
}

#[test]
fn an_invalid_inbound_message_never_reaches_hooks() {
    let dir = tempfile::tempdir().unwrap();
    let (host, guest) = guess_hooks(4, false);
    let (calls, flushes) = (host.calls.clone(), host.flushes.clone());
    let cheat = |frame: &mut Value| {
        if frame["action"] == "guess" {
            frame["n"] = json!(42);
        }
    };
    let (host, _guest) = play(&guess_spec(), host, guest, dir.path(), |c| {
        Box::new(c.rewriting_sends(cheat))
    });
    assert_eq!(
        host.unwrap_err().to_string(),
        "invalid message from the peer (guest_to_host): n: above max 9"
    );
    assert_eq!(*calls.lock().unwrap(), ["init host"]);
    assert_eq!(
        *flushes.lock().unwrap(),
        1,
        "state files are flushed after a failure too"
    );
    let rejected: Vec<Value> = events(dir.path(), "host")
        .into_iter()
        .filter(|e| e["type"] == "message_rejected")
        .collect();
    assert_eq!(
        rejected[0]["data"]["msg"],
        json!({"action": "guess", "n": 42})
    );
}

#[test]
fn a_vanished_peer_is_an_outcome_not_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let (host_end, guest_end) = duplex();
    drop(host_end);
    let (_, mut guest) = guess_hooks(4, false);
    let mut channel = guest_end;
    let outcome = run(
        &guess_spec(),
        &mut guest,
        &mut channel,
        config(Role::Guest, dir.path()),
    )
    .unwrap();
    assert_eq!(outcome.reason.as_deref(), Some("peer_disconnected"));
    assert_eq!(guest.snapshot.lock().unwrap()["phase"], "aborted");
}
