//! Lint behaviour on small specs, one concern per test.

use serde_json::{Value, json};

use super::{Severity, lint};

fn base() -> Value {
    json!({
        "name": "demo",
        "spec_version": "1.0",
        "messages": [
            {"name": "join", "direction": "guest_to_host", "fields": {"action": {"type": "enum", "values": ["join"], "required": true}}},
            {"name": "ready", "direction": "host_to_guest", "fields": {"action": {"type": "enum", "values": ["ready"], "required": true}}}
        ]
    })
}

fn errors(spec: &Value) -> Vec<String> {
    lint(spec)
        .into_iter()
        .filter(|d| d.severity == Severity::Error)
        .map(|d| d.to_string())
        .collect()
}

fn warnings(spec: &Value) -> Vec<String> {
    lint(spec)
        .into_iter()
        .filter(|d| d.severity == Severity::Warning)
        .map(|d| d.to_string())
        .collect()
}

#[test]
fn a_minimal_spec_is_clean() {
    assert!(lint(&base()).is_empty(), "{:?}", lint(&base()));
}

#[test]
fn name_and_messages_are_required() {
    let found = errors(&json!({"messages": []}));
    assert_eq!(
        found,
        [
            "name: required: the protocol's display name",
            "messages: must not be empty"
        ]
    );
}

#[test]
fn message_shape_problems_are_all_reported_with_paths() {
    let mut spec = base();
    spec["messages"].as_array_mut().unwrap().extend([
        json!({"name": "join", "direction": "sideways", "fields": {}}),
        json!({"name": "guess", "direction": "guest_to_host", "fields": {
            "action": {"type": "enum", "values": ["guess"], "required": true},
            "n": {"type": "number"},
            "m": {"type": "integer", "min": 5, "max": 1},
            "e": {"type": "enum", "values": []},
            "l": {"type": "array", "items": {"type": "array"}},
            "r": {"type": "text", "required": "yes"}
        }}),
    ]);
    assert_eq!(
        errors(&spec),
        [
            "messages[2].name: duplicate message name 'join' (first declared at messages[0])",
            "messages[2].direction: must be host_to_guest, guest_to_host or both, found \"sideways\"",
            "messages[2].fields: must declare at least one field",
            "messages[3].fields.n.type: unknown field type 'number' (use integer); known: integer, enum, boolean, hash, nonce, id, signature, ticket, text, ciphertext, key, ot_blob, array, json",
            "messages[3].fields.m.min: min 5 is greater than max 1",
            "messages[3].fields.e.values: must not be empty (nothing would be accepted)",
            "messages[3].fields.l.items.type: array items must be scalar (nested arrays are not allowed)",
            "messages[3].fields.r.required: must be true or false, found \"yes\" (only a literal true makes a field required)",
        ]
    );
}

#[test]
fn action_rules() {
    let mut spec = base();
    spec["messages"].as_array_mut().unwrap().extend([
        json!({"name": "guess", "direction": "guest_to_host", "fields": {"action": {"type": "enum", "values": ["guez"], "required": true}}}),
        json!({"name": "noaction", "direction": "guest_to_host", "fields": {"x": {"type": "integer"}}}),
        json!({"name": "dup", "direction": "both", "fields": {"action": {"type": "enum", "values": ["join"], "required": true}}}),
    ]);
    assert_eq!(
        warnings(&spec),
        [
            "messages[2].fields.action: enum values should contain the message name 'guess'",
            "messages[4].fields.action: enum values should contain the message name 'dup'",
        ]
    );
    assert_eq!(
        errors(&spec),
        [
            "messages[3].fields.action: missing: messages are matched by their action, so declare an enum field `action`",
            "messages[4].fields.action: action 'join' is also declared by messages[0] in an overlapping direction; frames would be ambiguous",
        ]
    );
}

#[test]
fn simultaneous_round_needs_round_and_engine_messages() {
    let mut spec = base();
    spec["flow"] = json!({"mode": "simultaneous_round", "round": {"value_field": "choice", "value_type_ref": "reveal.fields.pick"}});
    spec["messages"].as_array_mut().unwrap().extend([
        json!({"name": "commit", "direction": "both", "fields": {
            "action": {"type": "enum", "values": ["commit"], "required": true},
            "round": {"type": "integer"}, "hash": {"type": "hash"}, "extra": {"type": "integer", "required": true}}}),
    ]);
    assert_eq!(
        errors(&spec),
        [
            "flow.round.value_type_ref: names undeclared message 'reveal'",
            "messages[2].fields.extra: simultaneous_round commit: required, but the engine never sends it",
            "messages: simultaneous_round reveal: declare a message with action 'reveal' and direction host_to_guest",
            "messages[2].fields.extra: simultaneous_round commit: required, but the engine never sends it",
            "messages: simultaneous_round reveal: declare a message with action 'reveal' and direction guest_to_host",
        ]
    );
}

#[test]
fn a_room_section_reports_every_problem_at_its_key() {
    let mut spec = base();
    spec["flow"] = json!({"mode": "authoritative_group", "group": {
        "min_participants": 5, "max_participants": 4, "allow_late_join": "yes",
        "recovery_mode": "restart", "start_policy": "full", "max_action_bytes": 100,
        "checkpoint_every_events": null, "seats": 4,
        "peer_channels": {"enabled": true, "routing": "hook", "channels": ["chat", "Chat", "chat"]}
    }});
    assert_eq!(
        errors(&spec),
        [
            "flow.group.seats: not a key of flow.group (one of min_participants, max_participants, allow_late_join, recovery_mode, start_policy, checkpoint_every_events, max_action_bytes, max_events_per_action, peer_channels)",
            "flow.group.min_participants: 5 is above max_participants 4",
            "flow.group.allow_late_join: must be true or false, found 'yes'",
            "flow.group.recovery_mode: must be one of exact, restart_round, abort, found 'restart'",
            "flow.group.max_action_bytes: must be an integer from 256 to 65536, found 100",
            "flow.group.peer_channels.channels[1]: 'Chat' is not a lowercase slug (a-z, then a-z, 0-9, _ or -; at most 32)",
            "flow.group.peer_channels.channels[2]: names a channel twice",
        ]
    );
}

#[test]
fn a_realtime_section_needs_its_settings_and_the_engine_frames() {
    let mut spec = base();
    spec["flow"] = json!({"mode": "authoritative_realtime", "realtime": {
        "tick_rate_hz": 0, "input_delay_ticks": 10, "snapshot_every_ticks": 1,
        "max_command_lead_ticks": 5, "max_commands_per_frame": true
    }});
    let errors = errors(&spec);
    assert!(errors.contains(&"messages: authoritative_realtime: declare a message with action 'rt_join' and direction guest_to_host".to_string()), "{errors:?}");
    assert_eq!(
        errors[errors.len() - 4..],
        [
            "flow.realtime.tick_rate_hz: required: an integer from 1 to 60, found 0",
            "flow.realtime.max_commands_per_frame: required: an integer from 1 to 1024, found true",
            "flow.realtime.max_command_lead_ticks: 5 is below input_delay_ticks 10",
            "flow.realtime.disconnect_policy: must be one of abort, continue, found nothing",
        ][..]
    );
}

#[test]
fn flow_modes_and_phases() {
    let mut spec = base();
    spec["flow"] = json!({"mode": "authoritative_group"});
    assert_eq!(
        errors(&spec),
        ["flow.group: required for this mode: an object, found nothing"]
    );
    spec["flow"] = json!({"mode": "sequenced_turn"});
    assert_eq!(errors(&spec).len(), 1);
    spec["flow"] = json!({"phases": [{"repeat": "best_of", "exchange": [
        {"message": "join", "direction": "host_to_guest"}, {"message": "nope", "direction": "both"}]},
        {"repeat": "forever"}]});
    assert_eq!(
        errors(&spec),
        [
            "flow.phases[0].repeat: repeats by best_of, but no parameter best_of is declared",
            "flow.phases[0].exchange[0].direction: host_to_guest does not match message 'join' declared guest_to_host",
            "flow.phases[0].exchange[1].message: names undeclared message 'nope'",
            "flow.phases[1].repeat: must be one of best_of, total_rounds, until game_over; found \"forever\"",
        ]
    );
}

#[test]
fn parameters_and_sections() {
    let mut spec = base();
    spec["parameters"] = json!({
        "best_of": {"type": "integer", "min": 1, "max": 9, "default": 11},
        "style": {"type": "colour"},
        "balance": {"type": "table", "columns": {"hp": {"type": "integer"}, "skill": {"type": "object"}}}
    });
    spec["decision"] = json!({"mode": "sometimes", "timeout_seconds": 0});
    spec["commit_reveal"] = json!({"algorithm": "MD5", "nonce_length": 8});
    spec["timing"] =
        json!({"mode": "simultaneous", "min_think_seconds": 5, "max_think_seconds": 2});
    spec["shadow_judge"] = json!("yes");
    spec["spec_version"] = json!("2.0");
    assert_eq!(
        errors(&spec),
        [
            "spec_version: unsupported spec_version: '2.0' (supported: 1.0)",
            "parameters.best_of.default: does not fit the schema: value out of range (11 not in 1..9)",
            "parameters.style.type: unknown parameter type \"colour\"; known: integer, boolean, enum, text, id, table",
            "parameters.balance.columns.skill.fields: an object node needs a non-empty fields tree",
            "decision.mode: must be one of auto, manual, found \"sometimes\"",
            "decision.timeout_seconds: expected a positive integer, found 0",
            "commit_reveal.algorithm: must be \"SHA256\" (the only commitment hash the engine uses)",
            "commit_reveal.nonce_length: expected hex characters between 16 and 64 (the nonce field type), found 8",
            "timing.max_think_seconds: must be >= timing.min_think_seconds",
            "shadow_judge: must be a boolean when present, found a string",
        ]
    );
}

#[test]
fn free_mode_needs_the_engine_chat_messages() {
    let mut spec = base();
    spec["flow"] = json!({"mode": "free", "end_when": "either_ends"});
    assert_eq!(
        errors(&spec),
        [
            "messages: free mode: declare a message with action 'chat' and direction both",
            "messages: free mode: declare a message with action 'end' and direction both",
        ]
    );
}

/// A clean simultaneous round with a shadow judge and the given extra host messages.
fn shadow_judged(extra: Vec<Value>) -> Value {
    let action = |name: &str| json!({"type": "enum", "values": [name], "required": true});
    let mut spec = base();
    spec["flow"] = json!({"mode": "simultaneous_round", "round": {"value_field": "die", "value_type_ref": "reveal.fields.die"}});
    spec["shadow_judge"] = json!(true);
    let messages = spec["messages"].as_array_mut().unwrap();
    messages.extend([
        json!({"name": "commit", "direction": "both", "fields": {"action": action("commit"),
            "round": {"type": "integer"}, "hash": {"type": "hash"}}}),
        json!({"name": "reveal", "direction": "both", "fields": {"action": action("reveal"),
            "round": {"type": "integer"}, "die": {"type": "integer"}, "nonce": {"type": "nonce"}}}),
        json!({"name": "error", "direction": "both", "fields": {"action": action("error"),
            "reason": {"type": "text"}}}),
    ]);
    messages.extend(extra);
    spec
}

fn host_message(name: &str, fields: &[&str]) -> Value {
    let mut declared = json!({"action": {"type": "enum", "values": [name], "required": true}});
    for field in fields {
        declared[*field] = json!({"type": "integer"});
    }
    json!({"name": name, "direction": "host_to_guest", "fields": declared})
}

#[test]
fn a_shadow_judge_needs_round_result_fields_to_compare() {
    let result = host_message("result", &["round", "die", "host_score", "guest_score"]);
    assert!(lint(&shadow_judged(vec![result.clone()])).is_empty());
    let listed = "list the fields to compare in flow.round.judged_fields";
    assert_eq!(
        errors(&shadow_judged(vec![])),
        [format!(
            "shadow_judge: cannot tell which message is the round result (the host must send exactly one message besides ready, commit, reveal, error and end); {listed}"
        )]
    );
    assert_eq!(
        errors(&shadow_judged(vec![
            result.clone(),
            host_message("aside", &["x"])
        ]))
        .len(),
        1,
        "two candidates are as unclear as none"
    );
    assert_eq!(
        errors(&shadow_judged(vec![host_message(
            "result",
            &["round", "die"]
        )])),
        [format!(
            "shadow_judge: the round result 'result' has no field to judge besides action, round and the commit fields; {listed}"
        )]
    );
    let mut spec = shadow_judged(vec![result, host_message("aside", &["x"])]);
    spec["flow"]["round"]["judged_fields"] = json!(["host_score", "x"]);
    assert!(
        errors(&spec).is_empty(),
        "a list settles which fields count"
    );
}

#[test]
fn judged_fields_are_checked_against_the_round_result() {
    let mut spec = shadow_judged(vec![host_message("result", &["host_score"])]);
    spec["flow"]["round"]["judged_fields"] = json!(["host_score", "hp", 3, "host_score"]);
    spec["flow"]["round"]["judge_fields"] = json!([]);
    assert_eq!(
        errors(&spec),
        [
            "flow.round.judged_fields[1]: the round result 'result' declares no field 'hp'",
            "flow.round.judged_fields[2]: expected a field name, found a number",
        ]
    );
    assert_eq!(
        warnings(&spec),
        [
            "flow.round.judge_fields: unknown key (known: value_field, value_type_ref, judged_fields, description)",
            "flow.round.judged_fields[3]: duplicate field 'host_score'",
        ]
    );
    spec["flow"]["round"]["judged_fields"] = json!([]);
    assert_eq!(
        errors(&spec),
        ["flow.round.judged_fields: must not be empty (the shadow judge would compare nothing)"]
    );
    spec["flow"]["round"]["judged_fields"] = json!(["host_score"]);
    spec["shadow_judge"] = json!(false);
    assert_eq!(
        warnings(&spec)[1],
        "flow.round.judged_fields: only the shadow judge reads it, and shadow_judge is not true"
    );
}

#[test]
fn mental_poker_needs_every_frame_the_engine_builds() {
    let spec = crate::spec::model::tests::mental_poker_spec();
    assert!(errors(&spec).is_empty(), "{:?}", errors(&spec));
    let mut bare = spec.clone();
    for message in bare["messages"].as_array_mut().unwrap() {
        let action = message["fields"]["action"].clone();
        message["fields"] = json!({"action": action});
    }
    let found = errors(&bare);
    assert!(
        found.contains(&"messages[2].fields: mental_poker: the engine sends field 'rsa_pub', which is not declared".to_string()),
        "{found:?}"
    );
    assert!(found.iter().any(|e| e.contains("'k_inner'")), "{found:?}");
    let mut required = spec.clone();
    required["messages"][6]["fields"]["call_suit"]["required"] = json!(true);
    assert_eq!(
        errors(&required),
        ["messages[6].fields.call_suit: mental_poker: required, but the engine never sends it"]
    );
}
