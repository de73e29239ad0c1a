//! The model of real and small specs: typed messages, the flow's settings, and the judged
//! fields a shadow judge compares.

use serde_json::{Value, json};

use super::*;
use crate::spec::{Spec, SpecError};

fn builtin(alias: &str) -> Spec {
    crate::protocols::BUILTINS
        .iter()
        .find(|builtin| builtin.alias == alias)
        .unwrap()
        .spec()
}

fn action(name: &str) -> Value {
    json!({"type": "enum", "values": [name], "required": true})
}

/// A lint-clean mental_poker spec: the twelve messages the mode needs, with every field the
/// engine sends.
pub(crate) fn mental_poker_spec() -> Value {
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
    let field = |kind: &str| json!({"type": kind, "required": true});
    let list = |item: &str| json!({"type": "array", "items": {"type": item}, "required": true});
    let messages: Vec<Value> = names
        .iter()
        .map(|name| {
            let direction = match *name {
                "join" | "mp_setup_b" => "guest_to_host",
                "ready" | "mp_setup_a" => "host_to_guest",
                _ => "both",
            };
            let mut fields = match *name {
                "mp_setup_a" | "mp_setup_b" => json!({"rsa_pub": field("ot_blob"),
                    "blobs": list("ciphertext"), "sealed_keys": list("ot_blob")}),
                "mp_ot_request" => json!({"id": field("id"), "z": field("ot_blob")}),
                "mp_ot_response" => json!({"id": field("id"), "y": field("ot_blob")}),
                "mp_play" => json!({"id_b": field("id"), "k_inner": field("key"),
                    "k_outer": field("key"), "rank": field("integer"), "suit": field("integer"),
                    "call_suit": {"type": "integer"}}),
                "mp_opening" => json!({"openings": list("ot_blob")}),
                "mp_witness" => json!({"witnesses": list("ot_blob")}),
                "mp_terminal_receipt" => json!({"transcript_hash": field("hash"),
                    "signature": field("signature"), "public_key": field("hash"),
                    "audit_status": {"type": "enum", "values": ["passed"], "required": true}}),
                "error" => json!({"reason": {"type": "enum", "values": ["play_rejected"], "required": true}}),
                _ => json!({}),
            };
            fields["action"] = action(name);
            json!({"name": name, "direction": direction, "fields": fields})
        })
        .collect();
    json!({"name": "Poker", "flow": {"mode": "mental_poker"}, "messages": messages})
}

#[test]
fn hero_duel_reads_as_types() {
    let spec = builtin("hero-duel");
    let model = spec.model().unwrap();
    let round_result = model
        .messages
        .iter()
        .find(|m| m.name == "round_result")
        .unwrap();
    assert_eq!(round_result.direction, Direction::HostToGuest);
    assert_eq!(round_result.actions(), ["round_result"]);
    let (name, host_hp) = &round_result.fields[4];
    assert_eq!(
        (name.as_str(), host_hp.field_type),
        ("host_hp", FieldType::Integer)
    );
    let Flow::SimultaneousRound(round) = &model.flow else {
        panic!("hero-duel is a simultaneous round: {:?}", model.flow);
    };
    assert_eq!(round.value_field, "move");
    let judged = round
        .judged_fields
        .as_ref()
        .expect("hero-duel has a shadow judge");
    // The reference's hard-coded list, plus the played moves the round result echoes.
    let reference = [
        "host_hp",
        "guest_hp",
        "host_mana",
        "guest_mana",
        "host_damage_dealt",
        "guest_damage_dealt",
        "host_cd_a",
        "host_cd_b",
        "host_cd_ult",
        "guest_cd_a",
        "guest_cd_b",
        "guest_cd_ult",
        "round_winner",
        "game_over",
        "game_winner",
    ];
    assert_eq!(judged[..2], ["host_move", "guest_move"]);
    assert_eq!(judged[2..], reference);
    assert_eq!(
        model.find("commit", Direction::GuestToHost).unwrap().name,
        "commit"
    );
    assert!(model.find("round_result", Direction::GuestToHost).is_none());
}

#[test]
fn every_builtin_builds_a_model_in_its_mode() {
    for builtin in crate::protocols::BUILTINS {
        let spec = builtin.spec();
        let model = spec
            .model()
            .unwrap_or_else(|e| panic!("{}: {e}", builtin.alias));
        if spec.capabilities().room {
            // A room (poll-room): led by a host, tested as a room.
            assert!(matches!(model.flow, Flow::Group(_)), "{}", builtin.alias);
            assert_eq!(
                spec.capabilities().self_test,
                crate::spec::flow::SelfTest::Room
            );
            continue;
        }
        assert!(model.flow.mode().runs(), "{}", builtin.alias);
        spec.ensure_runnable().unwrap();
    }
}

#[test]
fn a_listed_judged_fields_wins_over_the_derived_ones() {
    let mut value = builtin("hero-duel").value().clone();
    value["flow"]["round"]["judged_fields"] = json!(["host_hp", "game_over"]);
    let spec = Spec::from_value(value).unwrap();
    let Flow::SimultaneousRound(round) = &spec.model().unwrap().flow else {
        panic!("still a simultaneous round");
    };
    assert_eq!(
        round.judged_fields.as_deref(),
        Some(&["host_hp".to_string(), "game_over".to_string()][..])
    );
}

#[test]
fn mental_poker_lints_and_runs() {
    let spec = Spec::from_value(mental_poker_spec()).unwrap();
    spec.check().unwrap();
    assert_eq!(spec.model().unwrap().flow, Flow::MentalPoker);
    spec.ensure_runnable().unwrap();
}

#[test]
fn a_realtime_spec_builds_its_model_but_is_refused_by_the_run_gate() {
    let spec = Spec::from_value(json!({
        "name": "Ticks",
        "messages": [
            {"name": "rt_join", "direction": "guest_to_host", "fields": {
                "action": {"type": "enum", "values": ["rt_join"], "required": true},
                "wire_version": {"type": "integer"}, "ruleset_hash": {"type": "text"},
                "match_config_hash": {"type": "text"}}},
            {"name": "rt_command", "direction": "guest_to_host", "fields": {
                "action": {"type": "enum", "values": ["rt_command"], "required": true},
                "seq": {"type": "integer"}, "target_tick": {"type": "integer"},
                "commands": {"type": "json"}, "command_hash": {"type": "text"}}},
            {"name": "rt_ready", "direction": "host_to_guest", "fields": {
                "action": {"type": "enum", "values": ["rt_ready"], "required": true},
                "wire_version": {"type": "integer"}, "ruleset_hash": {"type": "text"},
                "match_config_hash": {"type": "text"}, "config": {"type": "json"},
                "frame": {"type": "json"}}},
            {"name": "rt_reject", "direction": "host_to_guest", "fields": {
                "action": {"type": "enum", "values": ["rt_reject"], "required": true},
                "reason": {"type": "text"}}},
            {"name": "rt_command_ack", "direction": "host_to_guest", "fields": {
                "action": {"type": "enum", "values": ["rt_command_ack"], "required": true},
                "seq": {"type": "integer"}, "target_tick": {"type": "integer"},
                "status": {"type": "text"}, "received_at_tick": {"type": "integer"},
                "command_hash": {"type": "text"}, "reason": {"type": "text"}}},
            {"name": "rt_frame", "direction": "host_to_guest", "fields": {
                "action": {"type": "enum", "values": ["rt_frame"], "required": true},
                "frame": {"type": "json"}}}
        ],
        "flow": {"mode": "authoritative_realtime", "realtime": {
            "tick_rate_hz": 20, "input_delay_ticks": 2, "snapshot_every_ticks": 5,
            "max_command_lead_ticks": 40, "max_commands_per_frame": 8,
            "disconnect_policy": "continue"}}
    }))
    .unwrap();
    spec.check().unwrap();
    let Flow::Realtime(rules) = &spec.model().unwrap().flow else {
        panic!("a realtime flow");
    };
    assert_eq!((rules.tick_rate_hz, rules.max_commands_per_frame), (20, 8));
    assert_eq!(
        spec.ensure_runnable().unwrap_err().to_string(),
        "this build does not run flow mode authoritative_realtime: the spec validates and registers, but it cannot be hosted, joined or tested here"
    );
}

#[test]
fn an_invalid_spec_has_no_model() {
    let spec = Spec::from_value(json!({"name": "x", "messages": []})).unwrap();
    assert!(matches!(spec.model(), Err(SpecError::Invalid(_))));
    assert!(matches!(spec.ensure_runnable(), Err(SpecError::Invalid(_))));
}
