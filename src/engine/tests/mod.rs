//! Engine behaviour with Rust test hooks over the in-memory duplex: the scripted hooks and
//! helpers here, one file per flow mode (commit-reveal, shadow-judge, validation both ways,
//! disconnects).

mod free;
mod request_response;
mod session_loop;
mod shadow_judge;
mod simultaneous_round;

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
            invite_type: crate::spec::InvitationType::Supply,
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

/// A simultaneous_round spec: join, ready, commit and a reveal whose `choice` has the schema
/// `choice`, then `more` messages.
fn simultaneous_spec(choice: Value, more: Vec<Value>, extra: Value) -> Spec {
    let mut messages = vec![
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
            json!({"round": {"type": "integer", "required": true}, "choice": choice, "nonce": {"type": "nonce", "required": true}}),
        ),
    ];
    messages.extend(more);
    spec_with("simultaneous_round", messages, extra)
}

fn config(role: Role, dir: &std::path::Path) -> EngineConfig {
    let state_dir = dir.join(role.as_str());
    std::fs::create_dir_all(&state_dir).unwrap();
    EngineConfig {
        role,
        options: Map::new(),
        args: vec![],
        events: EventLog::to_file(state_dir.join("events.jsonl")),
        state_dir: crate::layout::EngineDir::open(state_dir),
        control_mode: ControlMode::Hybrid,
        pace: Duration::ZERO,
        display: Arc::new(|_, _| {}),
        local_input: None,
        decisions: Default::default(),
        binding: SessionBinding::unbound(),
        peer_timeout: crate::engine::DEFAULT_PEER_TIMEOUT,
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
