//! Engine behaviour with Rust test hooks over the in-memory duplex: every flow mode, the
//! commit-reveal and shadow-judge checks, validation both ways, disconnects.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Map, Value, json};

use super::*;
use crate::hooks::{HookError, HookResult, Hooks, HostMetadata, InitContext, Shown};
use crate::spec::{Role, Spec};
use crate::transport::memory::{MemoryChannel, duplex};

type Handler = Box<dyn FnMut(&Value) -> HookResult + Send>;
type Judge = Box<dyn FnMut(u64, &Value, &Value) -> HookResult + Send>;
type PureJudge = Box<dyn FnMut(u64, &Value, &Value) -> Value + Send>;

/// Scripted hooks: each side's behaviour is a few closures over shared test state.
#[derive(Default)]
struct TestHooks {
    calls: Arc<Mutex<Vec<String>>>,
    join: Option<Value>,
    first: Option<Value>,
    handle: Option<Handler>,
    values: Vec<Value>,
    judge: Option<Judge>,
    pure: Option<PureJudge>,
    snapshot: Arc<Mutex<Map<String, Value>>>,
    flushes: Arc<Mutex<u32>>,
    /// When set, `round_value` first waits for a signal (to order events across threads).
    gate: Option<std::sync::mpsc::Receiver<()>>,
}

impl TestHooks {
    fn log(&self, call: impl Into<String>) {
        self.calls.lock().unwrap().push(call.into());
    }
}

impl Hooks for TestHooks {
    fn init(&mut self, context: &InitContext) -> Result<(), HookError> {
        self.log(format!("init {}", context.role));
        Ok(())
    }
    fn host_metadata(&mut self) -> Result<HostMetadata, HookError> {
        Ok(HostMetadata {
            name: "Test".into(),
            tags: vec![],
            invite_type: "supply".into(),
            default_options: Map::new(),
        })
    }
    fn host_handle_join(&mut self, _message: &Value) -> Result<HookResult, HookError> {
        Ok(HookResult {
            response: Some(json!({"action": "ready"})),
            ..HookResult::default()
        })
    }
    fn host_handle(&mut self, message: &Value) -> Result<HookResult, HookError> {
        Ok((self.handle.as_mut().unwrap())(message))
    }
    fn guest_join_message(&mut self) -> Result<Option<Value>, HookError> {
        Ok(Some(self.join.clone().unwrap_or(json!({"action": "join"}))))
    }
    fn guest_handle_ready(&mut self, _message: &Value) -> Result<(), HookError> {
        Ok(())
    }
    fn guest_first_action(&mut self) -> Result<Option<Value>, HookError> {
        Ok(self.first.clone())
    }
    fn guest_handle(&mut self, message: &Value) -> Result<HookResult, HookError> {
        self.log(format!("guest_handle {}", message["action"]));
        Ok(self.handle.as_mut().map(|h| h(message)).unwrap_or_default())
    }
    fn display(&mut self, _message: &Value, _shown: Shown) -> Result<Option<String>, HookError> {
        Ok(None)
    }
    fn round_value(&mut self, round: u64) -> Result<Value, HookError> {
        if let Some(gate) = &self.gate {
            let _ = gate.recv();
        }
        Ok(self
            .values
            .get(round as usize)
            .cloned()
            .unwrap_or(json!("rock")))
    }
    fn round_judge(
        &mut self,
        round: u64,
        host: &Value,
        guest: &Value,
    ) -> Result<HookResult, HookError> {
        Ok((self.judge.as_mut().unwrap())(round, host, guest))
    }
    fn round_judge_pure(
        &mut self,
        round: u64,
        host: &Value,
        guest: &Value,
    ) -> Result<Option<Value>, HookError> {
        Ok(self.pure.as_mut().map(|p| p(round, host, guest)))
    }
    fn on_message(&mut self, message: &Value) -> Result<(), HookError> {
        self.log(format!("on_message {}", message["text"]));
        Ok(())
    }
    fn on_send(&mut self, _message: &Value) -> Result<(), HookError> {
        Ok(())
    }
    fn on_end(&mut self) -> Result<(), HookError> {
        self.log("on_end");
        Ok(())
    }
    fn snapshot_update(&mut self, patch: Map<String, Value>) -> Result<(), HookError> {
        self.snapshot.lock().unwrap().extend(patch);
        Ok(())
    }
    fn snapshot_phase(
        &mut self,
        phase: &str,
        summary: &str,
        _structured: Map<String, Value>,
    ) -> Result<(), HookError> {
        let mut snapshot = self.snapshot.lock().unwrap();
        snapshot.insert("phase".into(), phase.into());
        snapshot.insert("summary".into(), summary.into());
        Ok(())
    }
    fn flush_files(&mut self) -> Result<(), HookError> {
        *self.flushes.lock().unwrap() += 1;
        Ok(())
    }
}

fn message(name: &str, direction: &str, extra: Value) -> Value {
    let mut fields = json!({"action": {"type": "enum", "values": [name], "required": true}});
    fields
        .as_object_mut()
        .unwrap()
        .extend(extra.as_object().unwrap().clone());
    json!({"name": name, "direction": direction, "fields": fields})
}

fn spec_with(mode: &str, messages: Vec<Value>, extra: Value) -> Spec {
    let mut spec = json!({"name": "t", "flow": {"mode": mode, "round": {"value_field": "choice", "value_type_ref": "reveal.fields.choice"}}, "messages": messages});
    spec.as_object_mut()
        .unwrap()
        .extend(extra.as_object().unwrap().clone());
    let spec = Spec::from_value(spec).unwrap();
    spec.check().unwrap();
    spec
}

fn config(role: Role, dir: &std::path::Path) -> EngineConfig {
    let state_dir = dir.join(role.as_str());
    std::fs::create_dir_all(&state_dir).unwrap();
    EngineConfig {
        role,
        options: Map::new(),
        args: vec![],
        events: EventLog::to_file(state_dir.join("events.jsonl")),
        state_dir,
        control_mode: ControlMode::Hybrid,
        pace: Duration::ZERO,
        display: Arc::new(|_, _| {}),
        local_input: None,
        decisions: Default::default(),
        binding: SessionBinding::unbound(),
    }
}

type Side = Result<Outcome, EngineError>;

/// Runs both sides on threads over an in-memory duplex.
fn play(
    spec: &Spec,
    mut host: TestHooks,
    mut guest: TestHooks,
    dir: &std::path::Path,
    wrap: impl FnOnce(MemoryChannel) -> Box<dyn Channel>,
) -> (Side, Side) {
    let (host_end, guest_end) = duplex();
    let mut guest_channel = wrap(guest_end);
    let (host_spec, guest_spec) = (spec.clone(), spec.clone());
    let (host_config, guest_config) = (config(Role::Host, dir), config(Role::Guest, dir));
    let host_thread = std::thread::spawn(move || {
        let mut channel = host_end.with_recv_timeout(Duration::from_secs(5));
        run(&host_spec, &mut host, &mut channel, host_config)
    });
    let guest_result = run(
        &guest_spec,
        &mut guest,
        guest_channel.as_mut(),
        guest_config,
    );
    (host_thread.join().unwrap(), guest_result)
}

fn events(dir: &std::path::Path, role: &str) -> Vec<Value> {
    std::fs::read_to_string(dir.join(role).join("events.jsonl"))
        .unwrap_or_default()
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect()
}

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
        (host.winner.as_deref(), guest.winner.as_deref()),
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

fn rps_spec(shadow: bool) -> Spec {
    rps_spec_with_errors(shadow, "host_to_guest")
}

fn rps_spec_with_errors(shadow: bool, error_direction: &str) -> Spec {
    spec_with(
        "simultaneous_round",
        vec![
            message("join", "guest_to_host", json!({})),
            message("ready", "host_to_guest", json!({})),
            message(
                "commit",
                "both",
                json!({"round": {"type": "integer", "required": true}, "hash": {"type": "hash", "required": true}}),
            ),
            message(
                "reveal",
                "both",
                json!({"round": {"type": "integer", "required": true}, "choice": {"type": "enum", "values": ["rock", "paper", "scissors"], "required": true}, "nonce": {"type": "nonce", "required": true}}),
            ),
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
        (host.winner.as_deref(), guest.winner.as_deref()),
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
            "\"received\" reveal",
            "\"sent\" reveal"
        ]
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

#[test]
fn request_response_is_one_exchange() {
    let dir = tempfile::tempdir().unwrap();
    let spec = spec_with(
        "request_response",
        vec![
            message("join", "guest_to_host", json!({})),
            message("ready", "host_to_guest", json!({})),
            message("ask", "guest_to_host", json!({"q": {"type": "text"}})),
            message("answer", "host_to_guest", json!({"a": {"type": "text"}})),
        ],
        json!({}),
    );
    let host = TestHooks {
        handle: Some(Box::new(|m| HookResult {
            response: Some(
                json!({"action": "answer", "a": m["q"].as_str().unwrap().to_uppercase()}),
            ),
            ..HookResult::default()
        })),
        ..TestHooks::default()
    };
    let guest = TestHooks {
        first: Some(json!({"action": "ask", "q": "hi"})),
        ..TestHooks::default()
    };
    let guest_calls = guest.calls.clone();
    let (host, guest) = play(&spec, host, guest, dir.path(), |c| Box::new(c));
    assert!(host.unwrap().completed && guest.unwrap().completed);
    assert_eq!(guest_calls.lock().unwrap()[1], "guest_handle \"answer\"");
}

#[test]
fn free_mode_chats_until_either_side_ends() {
    let dir = tempfile::tempdir().unwrap();
    let spec = spec_with(
        "free",
        vec![
            message("join", "guest_to_host", json!({})),
            message("ready", "host_to_guest", json!({})),
            message(
                "chat",
                "both",
                json!({"text": {"type": "text", "required": true}, "seq": {"type": "integer", "required": true}}),
            ),
            message("end", "both", json!({})),
        ],
        json!({}),
    );
    let (host_end, guest_end) = duplex();
    let mut host_config = config(Role::Host, dir.path());
    host_config.local_input = Some(Box::new(ScriptedInput::new([ScriptStep::Say(
        "hello from host".into(),
    )])));
    let mut guest_config = config(Role::Guest, dir.path());
    guest_config.local_input = Some(Box::new(ScriptedInput::new([
        ScriptStep::Say("hello from guest".into()),
        ScriptStep::AwaitPeer(1),
        ScriptStep::Say("/quit".into()),
    ])));
    let (host_hooks, guest_hooks) = (TestHooks::default(), TestHooks::default());
    let (host_calls, guest_calls) = (host_hooks.calls.clone(), guest_hooks.calls.clone());
    let host_spec = spec.clone();
    let host = std::thread::spawn(move || {
        let mut hooks = host_hooks;
        let mut channel = host_end;
        run(&host_spec, &mut hooks, &mut channel, host_config)
    });
    let mut guest_hooks = guest_hooks;
    let mut channel = guest_end;
    assert!(
        run(&spec, &mut guest_hooks, &mut channel, guest_config)
            .unwrap()
            .completed
    );
    assert!(host.join().unwrap().unwrap().completed);
    assert_eq!(
        *host_calls.lock().unwrap(),
        ["init host", "on_message \"hello from guest\"", "on_end"]
    );
    assert_eq!(
        *guest_calls.lock().unwrap(),
        ["init guest", "on_message \"hello from host\"", "on_end"]
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

/// A second shadow-judged protocol, unrelated to Hero Duel: each round both roll a die and
/// the round result carries two scores, the leader and whether the game is over.
fn dice_duel_spec(judged_fields: Option<Value>) -> Spec {
    let mut spec = spec_with(
        "simultaneous_round",
        vec![
            message("join", "guest_to_host", json!({})),
            message("ready", "host_to_guest", json!({})),
            message(
                "commit",
                "both",
                json!({"round": {"type": "integer", "required": true}, "hash": {"type": "hash", "required": true}}),
            ),
            message(
                "reveal",
                "both",
                json!({"round": {"type": "integer", "required": true}, "choice": {"type": "integer", "min": 1, "max": 6, "required": true}, "nonce": {"type": "nonce", "required": true}}),
            ),
            message(
                "roll_result",
                "host_to_guest",
                json!({"round": {"type": "integer", "required": true},
                       "host_score": {"type": "integer", "min": 0, "max": 12, "required": true},
                       "guest_score": {"type": "integer", "min": 0, "max": 12, "required": true},
                       "leader": {"type": "enum", "values": ["host", "guest", "tie"], "required": true},
                       "game_over": {"type": "boolean", "required": true}}),
            ),
            message(
                "error",
                "both",
                json!({"round": {"type": "integer"}, "reason": {"type": "enum", "values": ["commit_mismatch", "balance_mismatch"], "required": true}}),
            ),
        ],
        json!({"shadow_judge": true}),
    )
    .value()
    .clone();
    if let Some(fields) = judged_fields {
        spec["flow"]["round"]["judged_fields"] = fields;
    }
    let spec = Spec::from_value(spec).unwrap();
    spec.check().unwrap();
    spec
}

/// Every field of the dice duel's round result besides the round number.
const DICE_RESULT_FIELDS: [&str; 4] = ["host_score", "guest_score", "leader", "game_over"];

/// The dice duel's rules; a host that lies misreports `lie_in` in round 0.
fn dice_judge(lie_in: Option<&'static str>) -> Judge {
    Box::new(move |round, h, g| {
        let (host, guest) = (h.as_i64().unwrap(), g.as_i64().unwrap());
        let leader = match host.cmp(&guest) {
            std::cmp::Ordering::Greater => "host",
            std::cmp::Ordering::Less => "guest",
            std::cmp::Ordering::Equal => "tie",
        };
        let over = round == 1;
        let mut result = json!({"action": "roll_result", "round": round, "host_score": host,
            "guest_score": guest, "leader": leader, "game_over": over});
        if let Some(field) = lie_in.filter(|_| round == 0) {
            result[field] = match &result[field] {
                Value::Bool(flag) => json!(!flag),
                Value::String(_) if leader == "tie" => json!("host"),
                Value::String(_) => json!("tie"),
                number => json!(number.as_i64().unwrap() + 1),
            };
        }
        HookResult {
            response: Some(result),
            completed: over,
            abort: false,
        }
    })
}

fn dice_hooks(lie_in: Option<&'static str>) -> (TestHooks, TestHooks) {
    let host = TestHooks {
        values: vec![json!(3), json!(5)],
        judge: Some(dice_judge(lie_in)),
        ..TestHooks::default()
    };
    let mut honest = dice_judge(None);
    let guest = TestHooks {
        values: vec![json!(4), json!(5)],
        pure: Some(Box::new(move |r, h, g| honest(r, h, g).response.unwrap())),
        ..TestHooks::default()
    };
    (host, guest)
}

#[test]
fn the_shadow_judge_of_any_protocol_catches_a_lie_in_every_field_of_its_round_result() {
    let spec = dice_duel_spec(None);
    let dir = tempfile::tempdir().unwrap();
    let (host, guest) = dice_hooks(None);
    let (host, guest) = play(&spec, host, guest, dir.path(), |c| Box::new(c));
    assert!(
        host.unwrap().completed && guest.unwrap().completed,
        "honest hosts pass"
    );
    for field in DICE_RESULT_FIELDS {
        let dir = tempfile::tempdir().unwrap();
        let (host, guest) = dice_hooks(Some(field));
        let (host, guest) = play(&spec, host, guest, dir.path(), |c| Box::new(c));
        assert_eq!(
            guest.unwrap().reason.as_deref(),
            Some("balance_mismatch"),
            "a lie in {field} went unnoticed"
        );
        assert_eq!(
            host.unwrap().reason.as_deref(),
            Some("peer_error: balance_mismatch")
        );
        let detected: Vec<Value> = events(dir.path(), "guest")
            .into_iter()
            .filter(|e| e["type"] == "balance_mismatch_detected")
            .collect();
        let mismatches = detected[0]["data"]["mismatches"].as_array().unwrap();
        assert_eq!(mismatches.len(), 1, "{field}: {mismatches:?}");
        assert_eq!(mismatches[0]["field"], field);
    }
}

#[test]
fn a_spec_that_lists_its_judged_fields_is_judged_on_those_only() {
    let spec = dice_duel_spec(Some(json!(["leader"])));
    let dir = tempfile::tempdir().unwrap();
    let (host, guest) = dice_hooks(Some("host_score"));
    let (_host, guest) = play(&spec, host, guest, dir.path(), |c| Box::new(c));
    assert!(guest.unwrap().completed, "host_score is not judged here");
    let dir = tempfile::tempdir().unwrap();
    let (host, guest) = dice_hooks(Some("leader"));
    let (_host, guest) = play(&spec, host, guest, dir.path(), |c| Box::new(c));
    assert_eq!(guest.unwrap().reason.as_deref(), Some("balance_mismatch"));
}
