//! hooks.py skeletons: generated from a spec for its flow mode (every hook the mode needs
//! raising `NotImplementedError("AIGENORA_SKELETON_NOT_IMPLEMENTED: <name>")`, its optional
//! hooks calling the SDK's defaults, a module sentinel, docstrings listing the messages), the
//! `.aigenora-hooks.json` sidecar, the check that refuses to run a skeleton nobody filled in,
//! and the hooks a mode cannot run without ([`required_hooks`]).

use std::fmt::Write;
use std::path::{Path, PathBuf};

use serde_json::{Number, Value, json};

use crate::canonical::sha256_hex;
use crate::records::iso_now;
use crate::spec::model::{FieldSchema, FieldType};
use crate::spec::pyrepr::py_repr_str;
use crate::spec::{Direction, FlowMode, Model, Spec};

pub const SIDECAR: &str = ".aigenora-hooks.json";
pub const MODULE_SENTINEL: &str = "AIGENORA_SKELETON";
pub const METHOD_MARKER: &str = "AIGENORA_SKELETON_NOT_IMPLEMENTED";
const GENERATOR_VERSION: &str = "aigenora-rs-1";
/// Environment variable that, set to 1/true/yes, lets skeleton hooks run (testing only).
pub const ALLOW_ENV: &str = "AIGENORA_ALLOW_SKELETON_HOOKS";
const LEGACY_BANNERS: [&str; 2] = [
    "The community server only provides spec.json. Fill in this file locally.",
    "Never pass raw peer messages into an LLM prompt. The protocol engine validates",
];

/// How much a mode needs one of its hooks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Need {
    /// The engine calls it and the SDK's `ProtocolHooks` only raises: hooks.py must define it
    /// (checked when the hooks load, before anything is published or dialed).
    Always,
    /// The skeleton asks for it, though the SDK has a default.
    Skeleton,
    /// The skeleton shows it calling the SDK's default, to change if the game needs to.
    Optional,
}

/// One hook method of a mode's skeleton.
struct Method {
    name: &'static str,
    params: &'static str,
    doc: &'static str,
    need: Need,
}

fn methods_for(mode: FlowMode) -> Vec<Method> {
    let method = |name, params, doc| Method {
        name,
        params,
        doc,
        need: Need::Skeleton,
    };
    let always = |name, params, doc| Method {
        name,
        params,
        doc,
        need: Need::Always,
    };
    let optional = |name, params, doc| Method {
        name,
        params,
        doc,
        need: Need::Optional,
    };
    match mode {
        FlowMode::SimultaneousRound => vec![
            always(
                "proto_round_value",
                "self, round_index, state",
                "Both sides: this round's secret value (str, int or bool). The engine commits\n        to it, reveals it after the peer committed, and checks the peer's reveal.",
            ),
            always(
                "proto_round_judge",
                "self, round_index, host_value, guest_value, state",
                "Host: judge the round. Return HookResult(round_result_message, completed=game_over).\n        The engine sends {\"action\": \"end\"} after a completed result.",
            ),
        ],
        FlowMode::MentalPoker => vec![
            always(
                "proto_mp_deck_universe",
                "self",
                "Both sides: the whole deck, a list of (rank, suit) pairs (each 0..255). The host\n        seals it; both sides compare the opened deck with it in the audit.",
            ),
            always(
                "proto_mp_initial_deal",
                "self, state",
                "Both sides: cards dealt to each side, e.g. {\"host\": 5, \"guest\": 5}.",
            ),
            always(
                "proto_mp_choose_action",
                "self, state",
                "This side's turn: {\"kind\": \"play\", \"id_b\": <a card of state[\"_mp_hand\"]>},\n        {\"kind\": \"draw\"} or {\"kind\": \"pass\"}. state[\"_mp_hand_cards\"] maps id_b to\n        (rank, suit); state[\"_mp_deck_view\"] shows both hands' sizes, the stock and the plays.",
            ),
            always(
                "proto_mp_check_winner",
                "self, state",
                "Both sides, after every turn: \"host\", \"guest\", \"draw\" or None (game goes on).\n        state.get(\"_mp_stalled\") is true after two passes in a row.",
            ),
            optional(
                "proto_mp_validate_play",
                "self, state, who, play_msg",
                "Optional: the rules check of a peer's play (the engine already proved the card\n        was in its hand). Return ValidationResult(ok, reason); the default accepts all.",
            ),
            optional(
                "proto_mp_legal_actions",
                "self, state",
                "Optional: this side's legal actions, shown to a person (human and hybrid control).",
            ),
            optional(
                "proto_mp_coerce_action",
                "self, state, decision",
                "Optional: a person's decision checked and turned into an action.",
            ),
            optional(
                "proto_mp_apply_local_action",
                "self, state, action",
                "Optional: bookkeeping for an action a person chose.",
            ),
        ],
        FlowMode::Free => vec![
            method(
                "proto_on_message",
                "self, msg",
                "Both sides: a validated chat message from the peer ({action, text, seq}).",
            ),
            method(
                "proto_on_end",
                "self",
                "Both sides: the chat ended (either side sent /quit).",
            ),
        ],
        _ => vec![
            method(
                "proto_host_handle_join",
                "self, msg",
                "Host: the guest's join message. Return HookResult(ready_message).",
            ),
            method(
                "proto_host_handle",
                "self, msg",
                "Host: a guest message. Return HookResult(reply, completed=..., abort=...);\n        a result without a reply ends the session.",
            ),
            method(
                "proto_guest_join_message",
                "self",
                "Guest: the join message to send first (a dict).",
            ),
            method(
                "proto_guest_handle_ready",
                "self, msg",
                "Guest: the host's ready message (the return value is ignored).",
            ),
            method(
                "proto_guest_first_action",
                "self",
                "Guest: the first message after ready, or None to end.",
            ),
            method(
                "proto_guest_handle",
                "self, msg",
                "Guest: a host message. Return HookResult(reply, completed=..., abort=...).",
            ),
        ],
    }
}

/// The hooks a `mode` cannot run without: the engine calls them and the SDK's
/// `ProtocolHooks` only raises `NotImplementedError`.
pub fn required_hooks(mode: FlowMode) -> Vec<&'static str> {
    methods_for(mode)
        .into_iter()
        .filter(|method| method.need == Need::Always)
        .map(|method| method.name)
        .collect()
}

/// `self, state, who, play_msg` → `state, who, play_msg`: the arguments passed on to `super()`.
fn forwarded(params: &str) -> String {
    params
        .split(',')
        .map(str::trim)
        .filter(|param| *param != "self")
        .collect::<Vec<_>>()
        .join(", ")
}

/// Text safe inside a triple-quoted (non-raw) docstring: backslashes, quotes and control
/// characters escaped, so a hostile spec cannot end the string and inject code.
fn docstring_safe(text: &str) -> String {
    let mut out = String::new();
    for ch in text.chars() {
        match ch {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            c if (c as u32) < 0x20 || c as u32 == 0x7f => {
                write!(out, "\\x{:02x}", c as u32).unwrap()
            }
            c => out.push(c),
        }
    }
    out
}

/// A one-line summary of a field's constraints: `integer, required, 1..9999`.
fn describe_field(schema: &FieldSchema) -> String {
    let mut parts = vec![schema.field_type.as_str().to_string()];
    if schema.required {
        parts.push("required".into());
    }
    match (&schema.min, &schema.max) {
        (None, None) => {}
        (min, max) => parts.push(format!(
            "{}..{}",
            min.as_ref().map(Number::to_string).unwrap_or_default(),
            max.as_ref().map(Number::to_string).unwrap_or_default()
        )),
    }
    if schema.field_type == FieldType::Enum {
        let shown: Vec<String> = schema.values.iter().map(|v| py_repr_str(v)).collect();
        parts.push(format!("one of {}", shown.join(", ")));
    }
    for (key, value) in [
        ("max_length", &schema.max_length),
        ("min_items", &schema.min_items),
        ("max_items", &schema.max_items),
    ] {
        if let Some(value) = value {
            parts.push(format!("{key} {value}"));
        }
    }
    if let Some(container) = schema.container {
        parts.push(format!("container \"{}\"", container.as_str()));
    }
    parts.join(", ")
}

fn message_catalogue(model: &Model) -> String {
    let mut out = String::new();
    for (title, direction) in [
        ("Guest -> host", Direction::GuestToHost),
        ("Host -> guest", Direction::HostToGuest),
    ] {
        writeln!(out, "{title}:").unwrap();
        let mut any = false;
        for message in model
            .messages
            .iter()
            .filter(|message| message.direction.carries(direction))
        {
            any = true;
            writeln!(
                out,
                "  {} ({})",
                docstring_safe(&message.name),
                message.direction
            )
            .unwrap();
            for (field, schema) in &message.fields {
                writeln!(
                    out,
                    "      {}: {}",
                    docstring_safe(field),
                    docstring_safe(&describe_field(schema))
                )
                .unwrap();
            }
        }
        if !any {
            writeln!(out, "  (none)").unwrap();
        }
    }
    out
}

/// The hooks.py text for a spec that passed the run gate.
fn generate(spec: &Spec, model: &Model) -> String {
    let mode = model.flow.mode();
    let name = if spec.name().is_empty() {
        "Generated Protocol"
    } else {
        spec.name()
    };
    let mut out = String::new();
    writeln!(
        out,
        "\"\"\"Local hooks for {} (flow mode {}), generated by aigenora from spec.json.",
        docstring_safe(name),
        mode
    )
    .unwrap();
    out.push_str(
        "\nImplement every method that raises NotImplementedError (the optional ones keep the\n",
    );
    out.push_str(
        "SDK's default until you change them), then delete the AIGENORA_SKELETON line. The community\n",
    );
    out.push_str(
        "server only distributes spec.json: your business logic lives here, on your machine.\n",
    );
    out.push_str(
        "The engine validates every peer message against the spec before a hook sees it, but its\n",
    );
    out.push_str(
        "text is still untrusted input: never paste it into an LLM prompt as instructions.\n\n",
    );
    out.push_str(&message_catalogue(model));
    out.push_str("\"\"\"\n\n");
    if mode == FlowMode::MentalPoker {
        out.push_str("from aigenora.proto.mental_poker import ValidationResult  # noqa: F401\n");
    }
    out.push_str("from aigenora.proto.hooks import HookResult, ProtocolHooks\n\n");
    if !mode.runs() {
        out.push_str("# This build generates session_loop-style hooks for this flow mode.\n");
    }
    out.push_str("# Remove this line once every hook is implemented.\n");
    writeln!(out, "{MODULE_SENTINEL} = True\n\n").unwrap();
    writeln!(out, "class Hooks(ProtocolHooks):").unwrap();
    writeln!(
        out,
        "    \"\"\"{} hooks for {}.\"\"\"\n",
        mode,
        docstring_safe(name)
    )
    .unwrap();
    let invite_type = if mode == FlowMode::Free {
        "chat".to_string()
    } else {
        spec.value()
            .get("type")
            .and_then(Value::as_str)
            .filter(|t| ["supply", "demand", "chat"].contains(t))
            .unwrap_or("supply")
            .to_string()
    };
    writeln!(out, "    def proto_host_metadata(self):").unwrap();
    writeln!(out, "        \"\"\"Host: (display name, comma-separated tags, supply|demand|chat, default options).\"\"\"").unwrap();
    writeln!(
        out,
        "        return ({}, \"generated\", {}, {{}})",
        py_repr_str(name),
        py_repr_str(&invite_type)
    )
    .unwrap();
    for method in methods_for(mode) {
        writeln!(out, "\n    def {}({}):", method.name, method.params).unwrap();
        writeln!(out, "        \"\"\"{}\"\"\"", method.doc).unwrap();
        if method.need == Need::Optional {
            writeln!(
                out,
                "        return super().{}({})",
                method.name,
                forwarded(method.params)
            )
            .unwrap();
        } else {
            writeln!(
                out,
                "        raise NotImplementedError(\"{METHOD_MARKER}: {}\")",
                method.name
            )
            .unwrap();
        }
    }
    out
}

/// Writes hooks.py (unless one exists) and the sidecar into a protocol dir. Returns whether
/// a skeleton was written; a spec that fails the run gate gets none (`InvalidInput`).
pub fn write_scaffold(spec: &Spec, dir: &Path) -> std::io::Result<bool> {
    let hooks = dir.join("hooks.py");
    if hooks.exists() {
        return Ok(false);
    }
    let model = spec
        .model()
        .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidInput, e.to_string()))?;
    std::fs::create_dir_all(dir)?;
    let text = generate(spec, model);
    std::fs::write(&hooks, &text)?;
    let spec_file = dir.join("spec.json");
    let spec_hash = match std::fs::read(&spec_file) {
        Ok(bytes) => sha256_hex(bytes),
        Err(_) => sha256_hex(serde_json::to_string(spec.value()).unwrap_or_default()),
    };
    let sidecar = json!({
        "skeleton_hash": sha256_hex(&text),
        "spec_hash": spec_hash,
        "generator_version": GENERATOR_VERSION,
        "protocol_id": spec.protocol_id(),
        "flow_mode": model.flow.mode().as_str(),
        "created_at": iso_now(),
    });
    std::fs::write(dir.join(SIDECAR), sidecar.to_string())?;
    Ok(true)
}

/// What pristine detection found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SkeletonStatus {
    pub pristine: bool,
    /// `sidecar_hash_match`, `module_sentinel`, `method_sentinel`, `legacy_banner`, or why not.
    pub reason: String,
    /// Methods still carrying the not-implemented marker, sorted.
    pub missing_methods: Vec<String>,
    pub hooks_path: PathBuf,
}

/// Detects an unfilled skeleton in a protocol dir (same rules as the reference).
pub fn detect(dir: &Path) -> SkeletonStatus {
    let hooks_path = dir.join("hooks.py");
    let status = |pristine, reason: &str, missing| SkeletonStatus {
        pristine,
        reason: reason.into(),
        missing_methods: missing,
        hooks_path: hooks_path.clone(),
    };
    let Ok(raw) = std::fs::read_to_string(&hooks_path) else {
        return status(false, "hooks.py not found", Vec::new());
    };
    let text = raw.replace("\r\n", "\n").replace('\r', "\n");
    let missing = missing_methods(&text);
    if sidecar_matches(dir, &text) {
        return status(true, "sidecar_hash_match", missing);
    }
    if text.lines().any(is_module_sentinel) {
        return status(true, "module_sentinel", missing);
    }
    if !missing.is_empty() {
        return status(true, "method_sentinel", missing);
    }
    if LEGACY_BANNERS.iter().any(|banner| text.contains(banner)) {
        return status(true, "legacy_banner", missing);
    }
    status(false, "implemented", missing)
}

fn sidecar_matches(dir: &Path, text: &str) -> bool {
    let Ok(sidecar) = std::fs::read_to_string(dir.join(SIDECAR)) else {
        return false;
    };
    let Ok(sidecar) = serde_json::from_str::<Value>(&sidecar) else {
        return false;
    };
    if sidecar.get("skeleton_hash").and_then(Value::as_str) != Some(&sha256_hex(text)) {
        return false;
    }
    match std::fs::read(dir.join("spec.json")) {
        Ok(bytes) => sidecar.get("spec_hash").and_then(Value::as_str) == Some(&sha256_hex(bytes)),
        Err(_) => true,
    }
}

/// `^AIGENORA_SKELETON\s*=\s*True\b`
fn is_module_sentinel(line: &str) -> bool {
    let Some(rest) = line.strip_prefix(MODULE_SENTINEL) else {
        return false;
    };
    let Some(rest) = rest.trim_start().strip_prefix('=') else {
        return false;
    };
    let Some(rest) = rest.trim_start().strip_prefix("True") else {
        return false;
    };
    !rest.starts_with(|c: char| c.is_alphanumeric() || c == '_')
}

/// Names after every `AIGENORA_SKELETON_NOT_IMPLEMENTED:` marker, sorted and unique.
fn missing_methods(text: &str) -> Vec<String> {
    let mut names: Vec<String> = text
        .match_indices(METHOD_MARKER)
        .filter_map(|(at, marker)| {
            let rest = text[at + marker.len()..].strip_prefix(':')?.trim_start();
            let name: String = rest
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            (!name.is_empty()).then_some(name)
        })
        .collect();
    names.sort();
    names.dedup();
    names
}

/// Whether the environment allows skeleton hooks (`AIGENORA_ALLOW_SKELETON_HOOKS`).
pub fn allowed_by_env() -> bool {
    std::env::var(ALLOW_ENV)
        .is_ok_and(|v| matches!(v.trim().to_ascii_lowercase().as_str(), "1" | "true" | "yes"))
}

/// Refuses a pristine skeleton unless allowed (flag first, then the environment).
pub fn ensure_implemented(dir: &Path, allow_flag: bool) -> Result<(), String> {
    if allow_flag || allowed_by_env() {
        return Ok(());
    }
    let status = detect(dir);
    if !status.pristine {
        return Ok(());
    }
    let what = if status.missing_methods.is_empty() {
        "module-level skeleton sentinel still present".to_string()
    } else {
        format!("unimplemented hooks: {}", status.missing_methods.join(", "))
    };
    Err(format!(
        "protocol skeleton at {} is not implemented: {what} (reason: {}); implement the hooks and remove the \
         {MODULE_SENTINEL} sentinel and {METHOD_MARKER} markers, or pass --allow-skeleton-hooks \
         (or set {ALLOW_ENV}=1) to bypass for testing only",
        status.hooks_path.display(),
        status.reason
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A valid spec for `mode` (simultaneous_round or free) with a hostile name.
    fn spec(mode: &str) -> Spec {
        let action = |name: &str| json!({"type": "enum", "values": [name], "required": true});
        let int = json!({"type": "integer", "required": true});
        let spec = Spec::from_value(json!({"name": "Evil \"\"\"\nimport os",
            "flow": {"mode": mode, "round": {"value_field": "move", "value_type_ref": "reveal.fields.move"}},
            "messages": [
                {"name": "join", "direction": "guest_to_host", "fields": {"action": action("join")}},
                {"name": "bid", "direction": "guest_to_host", "fields": {"action": action("bid"),
                    "best_of": {"type": "integer", "min": 1, "max": 9, "required": true}}},
                {"name": "ready", "direction": "host_to_guest", "fields": {"action": action("ready")}},
                {"name": "commit", "direction": "both", "fields": {"action": action("commit"),
                    "round": int, "hash": {"type": "hash", "required": true}}},
                {"name": "reveal", "direction": "both", "fields": {"action": action("reveal"),
                    "round": int, "move": {"type": "enum", "values": ["a", "b"], "required": true},
                    "nonce": {"type": "nonce", "required": true}}},
                {"name": "chat", "direction": "both", "fields": {"action": action("chat"),
                    "text": {"type": "text", "max_length": 80, "required": true}, "seq": int}},
                {"name": "end", "direction": "both", "fields": {"action": action("end")}}]}))
        .unwrap();
        spec.check().unwrap();
        spec
    }

    #[test]
    fn generated_skeletons_are_detected_and_list_their_methods() {
        let dir = tempfile::tempdir().unwrap();
        assert!(write_scaffold(&spec("simultaneous_round"), dir.path()).unwrap());
        let status = detect(dir.path());
        assert_eq!(
            (status.pristine, status.reason.as_str()),
            (true, "sidecar_hash_match")
        );
        assert_eq!(
            status.missing_methods,
            ["proto_round_judge", "proto_round_value"]
        );
        let text = std::fs::read_to_string(dir.path().join("hooks.py")).unwrap();
        assert!(text.contains("best_of: integer, required, 1..9"), "{text}");
        assert!(text.contains("  bid (guest_to_host)\n"), "{text}");
        assert!(
            text.contains("move: enum, required, one of 'a', 'b'"),
            "{text}"
        );
        assert!(
            text.contains("text: text, required, max_length 80"),
            "{text}"
        );
        assert!(
            !text.contains("\nimport os"),
            "a hostile name must not escape the docstring"
        );
        let error = ensure_implemented(dir.path(), false).unwrap_err();
        assert!(
            error.contains("unimplemented hooks: proto_round_judge, proto_round_value"),
            "{error}"
        );
        assert!(ensure_implemented(dir.path(), true).is_ok());
        assert!(
            !write_scaffold(&spec("free"), dir.path()).unwrap(),
            "never overwrites hooks.py"
        );
    }

    #[test]
    fn a_mental_poker_skeleton_asks_for_the_mp_hooks() {
        let spec = crate::protocols::find("thirty-one").unwrap().spec();
        let dir = tempfile::tempdir().unwrap();
        assert!(write_scaffold(&spec, dir.path()).unwrap());
        let required = [
            "proto_mp_check_winner",
            "proto_mp_choose_action",
            "proto_mp_deck_universe",
            "proto_mp_initial_deal",
        ];
        assert_eq!(detect(dir.path()).missing_methods, required);
        let mut needed = required_hooks(FlowMode::MentalPoker);
        needed.sort();
        assert_eq!(needed, required);
        let text = std::fs::read_to_string(dir.path().join("hooks.py")).unwrap();
        for optional in [
            "def proto_mp_validate_play(self, state, who, play_msg):",
            "return super().proto_mp_validate_play(state, who, play_msg)",
            "return super().proto_mp_legal_actions(state)",
            "return super().proto_mp_coerce_action(state, decision)",
            "return super().proto_mp_apply_local_action(state, action)",
            "from aigenora.proto.mental_poker import ValidationResult",
        ] {
            assert!(text.contains(optional), "{optional} missing:\n{text}");
        }
        assert!(!text.contains("proto_host_handle"), "{text}");
        assert!(!text.contains("session_loop-style"), "{text}");
        let error = ensure_implemented(dir.path(), false).unwrap_err();
        assert!(
            error.contains(&format!("unimplemented hooks: {}", required.join(", "))),
            "{error}"
        );
    }

    #[test]
    fn partly_filled_skeletons_still_refuse() {
        let dir = tempfile::tempdir().unwrap();
        let text = "from x import y\nclass Hooks:\n    def a(self):\n        raise NotImplementedError(\"AIGENORA_SKELETON_NOT_IMPLEMENTED: proto_on_end\")\n";
        std::fs::write(dir.path().join("hooks.py"), text).unwrap();
        let status = detect(dir.path());
        assert_eq!(
            (status.reason.as_str(), status.missing_methods.clone()),
            ("method_sentinel", vec!["proto_on_end".to_string()])
        );
        std::fs::write(
            dir.path().join("hooks.py"),
            "AIGENORA_SKELETON = True  # left\n",
        )
        .unwrap();
        assert_eq!(detect(dir.path()).reason, "module_sentinel");
        std::fs::write(
            dir.path().join("hooks.py"),
            "AIGENORA_SKELETON = Truest\nclass Hooks: pass\n",
        )
        .unwrap();
        assert!(!detect(dir.path()).pristine);
    }
}
