//! The harness: a small card game as Rust hooks, a spec that declares every abort reason,
//! and [`play`], which runs our host and our guest on two threads over the in-memory
//! duplex — each with its own cheats and an optional tampering of what it sends.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Map, Value, json};

use super::cheats::{self, Cheat};
use crate::engine::mental_poker::Reason;
use crate::engine::{EngineConfig, EngineError, Outcome, SessionBinding, run};
use crate::hooks::{
    Card, DealPlan, HookError, HookResult, Hooks, HostMetadata, InitContext, LocalAction,
    MentalPokerHooks, Shown, TableView, Verdict,
};
use crate::identity::Identity;
use crate::records::{EventLog, RecordedEvent, read_events};
use crate::spec::ControlMode;
use crate::spec::{Role, Spec};
use crate::transport::memory::{MemoryChannel, duplex};
use crate::transport::{Channel, ChannelError};

/// A mental_poker spec for decks of up to 128 cards whose `error` message takes every reason.
pub(crate) fn spec() -> Spec {
    let reasons: Vec<&str> = Reason::ALL.iter().map(|r| r.as_str()).collect();
    spec_with_reasons(&reasons)
}

/// The same spec, its `error` message taking only `reasons` (the reference's take two).
pub(crate) fn spec_with_reasons(reasons: &[&str]) -> Spec {
    let action = |name: &str| json!({"type": "enum", "values": [name], "required": true});
    let blobs = json!({"type": "array", "items": {"type": "ciphertext"}, "min_items": 1, "max_items": 128, "required": true});
    let blobs_text = json!({"type": "array", "items": {"type": "ot_blob"}, "min_items": 1, "max_items": 128, "required": true});
    let setup = |name: &str, direction: &str| {
        json!({"name": name, "direction": direction, "fields": {
            "action": action(name), "rsa_pub": {"type": "ot_blob", "required": true},
            "blobs": blobs, "sealed_keys": blobs_text}})
    };
    let value = json!({
        "name": "Test Cards", "spec_version": "1.0", "flow": {"mode": "mental_poker"},
        "messages": [
            {"name": "join", "direction": "guest_to_host", "fields": {"action": action("join")}},
            {"name": "ready", "direction": "host_to_guest", "fields": {"action": action("ready")}},
            setup("mp_setup_a", "host_to_guest"),
            setup("mp_setup_b", "guest_to_host"),
            {"name": "mp_ot_request", "direction": "both", "fields": {"action": action("mp_ot_request"),
                "id": {"type": "id", "required": true}, "z": {"type": "ot_blob", "required": true}}},
            {"name": "mp_ot_response", "direction": "both", "fields": {"action": action("mp_ot_response"),
                "id": {"type": "id", "required": true}, "y": {"type": "ot_blob", "required": true}}},
            {"name": "mp_play", "direction": "both", "fields": {"action": action("mp_play"),
                "id_b": {"type": "id", "required": true}, "k_inner": {"type": "key", "required": true},
                "k_outer": {"type": "key", "required": true},
                "rank": {"type": "integer", "min": 0, "max": 255, "required": true},
                "suit": {"type": "integer", "min": 0, "max": 255, "required": true},
                "call_suit": {"type": "integer", "min": 0, "max": 3}}},
            {"name": "mp_pass", "direction": "both", "fields": {"action": action("mp_pass")}},
            {"name": "mp_opening", "direction": "both", "fields": {"action": action("mp_opening"),
                "openings": {"type": "array", "items": {"type": "ot_blob"}, "min_items": 1, "max_items": 256, "required": true}}},
            {"name": "mp_witness", "direction": "both", "fields": {"action": action("mp_witness"),
                "witnesses": {"type": "array", "items": {"type": "ot_blob"}, "min_items": 0, "max_items": 256, "required": true}}},
            {"name": "mp_terminal_receipt", "direction": "both", "fields": {"action": action("mp_terminal_receipt"),
                "transcript_hash": {"type": "hash", "required": true}, "signature": {"type": "signature", "required": true},
                "audit_status": {"type": "enum", "values": ["passed", "failed", "refused"], "required": true},
                "public_key": {"type": "hash", "required": true}}},
            {"name": "error", "direction": "both", "fields": {"action": action("error"),
                "reason": {"type": "enum", "values": reasons, "required": true}}},
        ],
    });
    let spec = Spec::from_value(value).expect("the test spec parses");
    spec.check().expect("the test spec lints");
    spec
}

/// `count` distinct cards (rank = index, suit = index % 4).
pub(crate) fn deck(count: u8) -> Vec<Card> {
    (0..count)
        .map(|i| Card {
            rank: i,
            suit: i % 4,
        })
        .collect()
}

/// How a test side chooses its actions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Strategy {
    /// Always pass: the game ends after the first two turns, a draw.
    Pass,
    /// Play the lowest card id in hand, else draw, else pass; the first empty hand wins.
    PlayLowest,
    /// Always draw (even from an empty stock, which the engine refuses).
    Draw,
}

/// A side's hooks for a plain card game.
pub(crate) struct CardHooks {
    pub universe: Vec<Card>,
    /// What the audit's universe call returns, when it differs from the setup's.
    pub audit_universe: Option<Vec<Card>>,
    pub deal: DealPlan,
    pub strategy: Strategy,
    universe_calls: usize,
    /// Every view the engine showed, shared with the test.
    pub views: Arc<Mutex<Vec<TableView>>>,
}

impl CardHooks {
    pub fn new(universe: Vec<Card>, deal: DealPlan, strategy: Strategy) -> CardHooks {
        CardHooks {
            universe,
            audit_universe: None,
            deal,
            strategy,
            universe_calls: 0,
            views: Arc::default(),
        }
    }

    fn view(&self) -> TableView {
        self.views
            .lock()
            .unwrap()
            .last()
            .cloned()
            .expect("a view was shown")
    }
}

impl MentalPokerHooks for CardHooks {
    fn mp_deck_universe(&mut self) -> Result<Vec<Card>, HookError> {
        self.universe_calls += 1;
        Ok(match &self.audit_universe {
            Some(audit) if self.universe_calls > 1 => audit.clone(),
            _ => self.universe.clone(),
        })
    }
    fn mp_initial_deal(&mut self) -> Result<DealPlan, HookError> {
        Ok(self.deal)
    }
    fn mp_show_table(&mut self, view: &TableView) -> Result<(), HookError> {
        self.views.lock().unwrap().push(view.clone());
        Ok(())
    }
    fn mp_choose_action(&mut self, _action_seq: u64) -> Result<LocalAction, HookError> {
        let view = self.view();
        Ok(match self.strategy {
            Strategy::Pass => LocalAction::Pass,
            Strategy::Draw => LocalAction::Draw,
            Strategy::PlayLowest => match view
                .hand
                .iter()
                .min_by_key(|(id, _)| id.parse::<usize>().unwrap())
            {
                Some((id, _)) => LocalAction::Play {
                    id_b: id.clone(),
                    call_suit: None,
                },
                None if !view.stock.is_empty() => LocalAction::Draw,
                None => LocalAction::Pass,
            },
        })
    }
    fn mp_validate_play(&mut self, _who: Role, _play: &Value) -> Result<Verdict, HookError> {
        Ok(Verdict {
            ok: true,
            reason: None,
        })
    }
    fn mp_check_winner(&mut self) -> Result<Option<String>, HookError> {
        let view = self.view();
        let winner = if view.host_hand.is_empty() && !view.played.is_empty() {
            Some("host")
        } else if view.guest_hand.is_empty() && !view.played.is_empty() {
            Some("guest")
        } else {
            view.stalled.then_some("draw")
        };
        Ok(winner.map(str::to_string))
    }
}

fn unused(hook: &str) -> HookError {
    HookError::new(hook, "not a mental_poker hook")
}

impl Hooks for CardHooks {
    fn init(&mut self, _context: &InitContext) -> Result<(), HookError> {
        Ok(())
    }
    fn host_metadata(&mut self) -> Result<HostMetadata, HookError> {
        Ok(HostMetadata {
            name: "Test Cards".into(),
            tags: vec![],
            invite_type: crate::spec::InvitationType::Supply,
            default_options: Map::new(),
        })
    }
    fn host_handle_join(&mut self, _message: &Value) -> Result<HookResult, HookError> {
        Err(unused("proto_host_handle_join"))
    }
    fn host_handle(&mut self, _message: &Value) -> Result<HookResult, HookError> {
        Err(unused("proto_host_handle"))
    }
    fn guest_join_message(&mut self) -> Result<Option<Value>, HookError> {
        Err(unused("proto_guest_join_message"))
    }
    fn guest_handle_ready(&mut self, _message: &Value) -> Result<(), HookError> {
        Err(unused("proto_guest_handle_ready"))
    }
    fn guest_first_action(&mut self) -> Result<Option<Value>, HookError> {
        Err(unused("proto_guest_first_action"))
    }
    fn guest_handle(&mut self, _message: &Value) -> Result<HookResult, HookError> {
        Err(unused("proto_guest_handle"))
    }
    fn display(&mut self, _message: &Value, _shown: Shown) -> Result<Option<String>, HookError> {
        Ok(None)
    }
    fn round_value(&mut self, _round: u64) -> Result<Value, HookError> {
        Err(unused("proto_round_value"))
    }
    fn round_judge(&mut self, _: u64, _: &Value, _: &Value) -> Result<HookResult, HookError> {
        Err(unused("proto_round_judge"))
    }
    fn round_judge_pure(
        &mut self,
        _: u64,
        _: &Value,
        _: &Value,
    ) -> Result<Option<Value>, HookError> {
        Ok(None)
    }
    fn on_message(&mut self, _message: &Value) -> Result<(), HookError> {
        Err(unused("proto_on_message"))
    }
    fn on_send(&mut self, _message: &Value) -> Result<(), HookError> {
        Err(unused("proto_on_send"))
    }
    fn on_end(&mut self) -> Result<(), HookError> {
        Err(unused("proto_on_end"))
    }
    fn snapshot_update(&mut self, _patch: Map<String, Value>) -> Result<(), HookError> {
        Ok(())
    }
    fn snapshot_phase(&mut self, _: &str, _: &str, _: Map<String, Value>) -> Result<(), HookError> {
        Ok(())
    }
    fn mental_poker(&mut self) -> Option<&mut dyn MentalPokerHooks> {
        Some(self)
    }
}

/// Rewrites (or drops, by returning false) what a side sends.
pub(crate) type Tamper = Box<dyn FnMut(&mut Value) -> bool + Send>;

/// A side's channel end, tampering with what it sends (and, holding it open, never closing
/// it: a peer that stays connected).
struct Tampered {
    inner: MemoryChannel,
    tamper: Tamper,
    hold_open: bool,
}

impl Channel for Tampered {
    fn send(&mut self, frame: &Value) -> Result<(), ChannelError> {
        let mut frame = frame.clone();
        if (self.tamper)(&mut frame) {
            self.inner.send(&frame)?;
        }
        Ok(())
    }
    fn recv(&mut self) -> Result<Value, ChannelError> {
        self.inner.recv()
    }
    fn recv_timeout(&mut self, timeout: Duration) -> Result<Option<Value>, ChannelError> {
        self.inner.recv_timeout(timeout)
    }
    fn close(&mut self) -> Result<(), ChannelError> {
        if self.hold_open {
            return Ok(());
        }
        self.inner.close()
    }
}

/// One side of a test game.
pub(crate) struct Side {
    pub hooks: CardHooks,
    pub cheats: Vec<Cheat>,
    pub tamper: Option<Tamper>,
    /// How long this side waits for the other's next frame.
    pub peer_timeout: Duration,
    /// Its connection stays up after it ends (a silent peer rather than one that left).
    pub hold_open: bool,
}

impl Side {
    pub fn honest(hooks: CardHooks) -> Side {
        Side {
            hooks,
            cheats: vec![],
            tamper: None,
            peer_timeout: crate::engine::DEFAULT_PEER_TIMEOUT,
            hold_open: false,
        }
    }
}

/// What a side left: its outcome, its events and what its hooks were shown.
pub(crate) struct Ended {
    pub result: Result<Outcome, EngineError>,
    pub events: Vec<RecordedEvent>,
    pub views: Vec<TableView>,
    pub state_dir: PathBuf,
    pub spy: super::cheats::Spy,
}

impl Ended {
    /// The outcome's reason (a completed game has none).
    pub fn reason(&self) -> Option<&str> {
        self.result
            .as_ref()
            .expect("no engine error")
            .reason
            .as_deref()
    }

    pub fn events_named(&self, name: &str) -> Vec<&Value> {
        self.events
            .iter()
            .filter(|event| event.name == name)
            .map(|event| &event.data)
            .collect()
    }

    /// The transcript hash this side signed, if it got that far.
    pub fn signed_hash(&self) -> Option<String> {
        self.events_named("mp_terminal_receipt_signed")
            .first()
            .map(|data| data["transcript_hash"].as_str().unwrap().to_string())
    }
}

/// Plays one game between two of our engines; the host's and guest's ends.
pub(crate) fn play(spec: &Spec, host: Side, guest: Side, dir: &Path) -> (Ended, Ended) {
    let (host_end, guest_end) = duplex();
    let (host_id, guest_id) = (Identity::generate(), Identity::generate());
    let bind = |me: &Identity, peer: &Identity| SessionBinding {
        session_id: "a".repeat(64),
        identity: me.clone(),
        peer_public_key: Some(peer.public_key().to_string()),
    };
    let sides = [
        (Role::Host, host, host_end, bind(&host_id, &guest_id)),
        (Role::Guest, guest, guest_end, bind(&guest_id, &host_id)),
    ];
    let handles: Vec<_> = sides
        .into_iter()
        .map(|(role, side, end, binding)| {
            let spec = spec.clone();
            let state_dir = dir.join(role.as_str());
            std::fs::create_dir_all(&state_dir).unwrap();
            std::thread::spawn(move || run_side(&spec, role, side, end, binding, state_dir))
        })
        .collect();
    let mut ends = handles
        .into_iter()
        .map(|handle| handle.join().expect("a side panicked"));
    (ends.next().unwrap(), ends.next().unwrap())
}

fn run_side(
    spec: &Spec,
    role: Role,
    side: Side,
    end: MemoryChannel,
    binding: SessionBinding,
    state_dir: PathBuf,
) -> Ended {
    let mut active = side.cheats;
    active.push(Cheat::FixedKey);
    cheats::set(&active);
    let mut hooks = side.hooks;
    let views = hooks.views.clone();
    let events_file = state_dir.join("events.jsonl");
    let config = EngineConfig {
        role,
        options: Map::new(),
        args: vec![],
        state_dir: crate::layout::EngineDir::open(&state_dir),
        events: EventLog::to_file(&events_file),
        control_mode: ControlMode::Autonomous,
        pace: Duration::ZERO,
        display: Arc::new(|_, _| {}),
        local_input: None,
        binding,
        decisions: Default::default(),
        peer_timeout: side.peer_timeout,
    };
    let mut channel: Box<dyn Channel> = match side.tamper {
        Some(tamper) => Box::new(Tampered {
            inner: end,
            tamper,
            hold_open: side.hold_open,
        }),
        None => Box::new(end),
    };
    let result = run(spec, &mut hooks, channel.as_mut(), config);
    if side.hold_open {
        // Never dropped, so never closed: the other side hears nothing, not a departure.
        std::mem::forget(channel);
    }
    Ended {
        result,
        events: read_events(&events_file),
        views: views.lock().unwrap().clone(),
        state_dir,
        spy: cheats::take_spy(),
    }
}
