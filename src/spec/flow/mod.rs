//! Flow modes: how the engine moves messages for a protocol. What each mode is and needs —
//! whether it lints and runs, the heartbeat, local input, decision windows, the hooks it
//! calls — is one row of [`FlowMode::capabilities`], which every other part of the project
//! reads instead of comparing modes. Also the simultaneous-round rule for what a shadow
//! judge compares (shared by the linter and the model, so both always agree).

pub mod group;
pub mod hooks;
pub mod realtime;

use serde_json::Value;

/// A `flow.mode` this project knows about.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, strum::IntoStaticStr, strum::EnumString, strum::Display,
)]
#[strum(serialize_all = "snake_case")]
pub enum FlowMode {
    SessionLoop,
    RequestResponse,
    SimultaneousRound,
    Free,
    MentalPoker,
    AuthoritativeRealtime,
    AuthoritativeGroup,
}

impl FlowMode {
    pub const ALL: [FlowMode; 7] = [
        FlowMode::SessionLoop,
        FlowMode::RequestResponse,
        FlowMode::SimultaneousRound,
        FlowMode::Free,
        FlowMode::MentalPoker,
        FlowMode::AuthoritativeRealtime,
        FlowMode::AuthoritativeGroup,
    ];

    pub fn as_str(self) -> &'static str {
        self.into()
    }

    pub fn parse(text: &str) -> Option<FlowMode> {
        text.parse().ok()
    }

    /// Whether this build's engine can play this mode (see `Spec::ensure_runnable`).
    pub fn runs(self) -> bool {
        self.capabilities().runs
    }

    /// What this mode is and needs: its row of the table below.
    pub fn capabilities(self) -> &'static Capabilities {
        match self {
            FlowMode::SessionLoop | FlowMode::RequestResponse => &TURNS,
            FlowMode::SimultaneousRound => &Capabilities {
                hooks: hooks::ROUND,
                ..TURNS
            },
            FlowMode::Free => &Capabilities {
                heartbeat: false,
                local_input: true,
                decision_windows: false,
                both_sides_describe: true,
                turn_based: false,
                invitation_type: Some("chat"),
                hooks: hooks::CHAT,
                ..TURNS
            },
            FlowMode::MentalPoker => &Capabilities {
                light_hooks: false,
                hooks: hooks::MENTAL_POKER,
                skeleton_imports: &["from aigenora.proto.mental_poker import ValidationResult"],
                ..TURNS
            },
            FlowMode::AuthoritativeGroup => &Capabilities {
                runs: false,
                self_test: SelfTest::Room,
                room: true,
                decision_windows: false,
                hooks: hooks::GROUP,
                ..TURNS
            },
            FlowMode::AuthoritativeRealtime => &Capabilities {
                runs: false,
                self_test: SelfTest::None,
                ..TURNS
            },
        }
    }
}

/// What a flow mode is and needs, as the rest of the project asks it. Adding a mode is adding
/// a row to [`FlowMode::capabilities`] (and its engine, lint and model entries: see
/// docs/ARCHITECTURE.md, "Where to add a flow mode").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Capabilities {
    /// This build's engine plays it (`host`, `join`, `guest`).
    pub runs: bool,
    /// How `protocol test` plays it in one process.
    pub self_test: SelfTest,
    /// A room: `join` takes a seat as a member that runs no hooks of its own, `host` leads
    /// it (its own paths in `session/room/`).
    pub room: bool,
    /// The link runs the `_sys` heartbeat after the handshake (as the reference does).
    pub heartbeat: bool,
    /// Lines the person types (or appends to the engine dir's `inbox.jsonl`) are sent: a chat.
    pub local_input: bool,
    /// A person may decide this side's moves (human and hybrid control): the side gets a
    /// desk, and `proto_init` gets the decision config.
    pub decision_windows: bool,
    /// Both sides describe the session with `proto_host_metadata`, not only the host.
    pub both_sides_describe: bool,
    /// The peer moves in turns, so its silence is bounded by the contract's think time; a
    /// mode without turns (a chat) is bounded by the idle time alone.
    pub turn_based: bool,
    /// Its hooks are quick enough for `protocol test` to run both sides on one CPU.
    pub light_hooks: bool,
    /// The invitation type a skeleton's metadata announces (None: the spec's `type`).
    pub invitation_type: Option<&'static str>,
    /// The hooks the engine calls in this mode.
    pub hooks: &'static [hooks::HookStub],
    /// What a skeleton for this mode imports besides the SDK's hooks.
    pub skeleton_imports: &'static [&'static str],
}

/// How `protocol test` plays a mode in one process.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SelfTest {
    /// A host and a guest engine over an in-memory duplex.
    Pair,
    /// A room: a leader's authority and every member's verifier, with a late join, a
    /// departure and a failover.
    Room,
    /// Not in this build.
    None,
}

/// The turn-taking modes' row, which the others change.
const TURNS: Capabilities = Capabilities {
    runs: true,
    self_test: SelfTest::Pair,
    room: false,
    heartbeat: true,
    local_input: false,
    decision_windows: true,
    both_sides_describe: false,
    turn_based: true,
    light_hooks: true,
    invitation_type: None,
    hooks: hooks::TURNS,
    skeleton_imports: &[],
};

impl Capabilities {
    /// The hooks this mode cannot run without.
    pub fn required_hooks(&self) -> impl Iterator<Item = &'static str> + use<> {
        self.hooks
            .iter()
            .filter(|hook| hook.need == hooks::HookNeed::Required)
            .map(|hook| hook.name)
    }
}

/// The raw `flow.mode` of a spec: `Ok(None)` means the default (absent, null or "").
pub fn declared_mode(spec: &Value) -> Result<Option<&str>, &Value> {
    let Some(Value::Object(flow)) = spec.get("flow") else {
        return Ok(None);
    };
    match flow.get("mode") {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(mode)) if mode.is_empty() => Ok(None),
        Some(Value::String(mode)) => Ok(Some(mode)),
        Some(other) => Err(other),
    }
}

/// `flow.round.<JUDGED_FIELDS_KEY>`: the round-result fields a shadow judge compares, when
/// the spec lists them itself.
pub const JUDGED_FIELDS_KEY: &str = "judged_fields";

/// Actions the engine or the handshake own in a simultaneous round: a message carrying one
/// of them is never the round result.
pub const ROUND_MACHINERY_ACTIONS: [&str; 6] =
    ["join", "ready", "commit", "reveal", "error", "end"];

/// Round-result fields that are commit machinery rather than a verdict (the revealed value
/// field is left out too).
pub const UNJUDGED_FIELDS: [&str; 4] = ["action", "round", "hash", "nonce"];

/// What the round-result rule needs to know about a declared message.
pub trait MessageShape {
    /// Whether the host may send it (declared `host_to_guest` or `both`).
    fn host_sends(&self) -> bool;
    /// Its `action` enum values.
    fn actions(&self) -> Vec<&str>;
    /// Its field names, in declaration order.
    fn field_names(&self) -> Vec<&str>;
}

/// The round-result message of a simultaneous round: the only message the host can send
/// that carries none of the [`ROUND_MACHINERY_ACTIONS`]. `None` when there is none, or more
/// than one to choose from.
pub fn round_result<M: MessageShape>(messages: &[M]) -> Option<&M> {
    let mut candidates = messages.iter().filter(|message| {
        message.host_sends()
            && !message
                .actions()
                .iter()
                .any(|action| ROUND_MACHINERY_ACTIONS.contains(action))
    });
    match (candidates.next(), candidates.next()) {
        (Some(only), None) => Some(only),
        _ => None,
    }
}

/// The fields a shadow judge compares when the spec lists none: every field of the round
/// result except [`UNJUDGED_FIELDS`] and the revealed value field.
pub fn derived_judged_fields<M: MessageShape>(result: &M, value_field: &str) -> Vec<String> {
    result
        .field_names()
        .into_iter()
        .filter(|field| *field != value_field && !UNJUDGED_FIELDS.contains(field))
        .map(str::to_string)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Shape(bool, &'static str, &'static [&'static str]);

    impl MessageShape for Shape {
        fn host_sends(&self) -> bool {
            self.0
        }
        fn actions(&self) -> Vec<&str> {
            vec![self.1]
        }
        fn field_names(&self) -> Vec<&str> {
            self.2.to_vec()
        }
    }

    #[test]
    fn the_authoritative_modes_lint_but_do_not_run_yet() {
        let running: Vec<&str> = FlowMode::ALL
            .into_iter()
            .filter(|m| m.runs())
            .map(FlowMode::as_str)
            .collect();
        assert_eq!(
            running,
            [
                "session_loop",
                "request_response",
                "simultaneous_round",
                "free",
                "mental_poker"
            ]
        );
    }

    #[test]
    fn the_round_result_is_the_one_message_no_engine_step_owns() {
        let messages = [
            Shape(false, "join", &["action"]),
            Shape(true, "ready", &["action"]),
            Shape(true, "commit", &["action", "round", "hash"]),
            Shape(true, "reveal", &["action", "round", "die", "nonce"]),
            Shape(true, "result", &["action", "round", "die", "sum", "winner"]),
            Shape(true, "error", &["action", "reason"]),
            Shape(true, "end", &["action"]),
        ];
        let result = round_result(&messages).unwrap();
        assert_eq!(result.1, "result");
        assert_eq!(derived_judged_fields(result, "die"), ["sum", "winner"]);
        let two = [
            Shape(true, "result", &["action"]),
            Shape(true, "aside", &["action"]),
        ];
        assert!(round_result(&two).is_none());
    }
}
