//! Lint of `flow`: the mode, what each mode needs from the spec (the engine-made frames must
//! validate; a shadow judge must have round-result fields to compare), phases and their
//! exchanges, and `repeat`.

use serde_json::{Map, Value};

use super::authoritative;
use super::messages::DeclaredMessage;
use super::{Check, Findings, join, kind, unknown_keys};
use crate::spec::flow::{self, FlowMode, JUDGED_FIELDS_KEY, MessageShape};
use crate::spec::message::Direction;
use crate::spec::pyrepr::py_repr_str;

/// The values the reference accepts for `flow.phases[].repeat`.
const REPEAT_VALUES: [&str; 3] = ["best_of", "total_rounds", "until game_over"];

pub fn lint_flow(spec: &Value, declared: &[DeclaredMessage], findings: &mut Findings) {
    let flow = match spec.get("flow") {
        None | Some(Value::Null) => return,
        Some(Value::Object(flow)) => flow,
        Some(other) => {
            return findings.add(
                Check::Flow,
                "flow",
                format!("expected an object, found {}", kind(other)),
            );
        }
    };
    let mode = match flow.get("mode") {
        None | Some(Value::Null) => Some(FlowMode::SessionLoop),
        Some(Value::String(text)) if text.is_empty() => Some(FlowMode::SessionLoop),
        Some(Value::String(text)) => match FlowMode::parse(text) {
            Some(mode) => Some(mode),
            None => {
                let supported: Vec<&str> = FlowMode::ALL.iter().map(|m| m.as_str()).collect();
                findings.add(
                    Check::FlowModeUnknown,
                    "flow.mode",
                    format!(
                        "unsupported flow mode {}; one of {}",
                        py_repr_str(text),
                        supported.join(", ")
                    ),
                );
                None
            }
        },
        Some(other) => {
            findings.add(
                Check::FlowModeUnknown,
                "flow.mode",
                format!("expected a string, found {}", kind(other)),
            );
            None
        }
    };
    let parameters = spec.get("parameters").and_then(Value::as_object);
    lint_phases(flow.get("phases"), declared, parameters, findings);
    let Some(mode) = mode else { return };
    let needs = EngineFrames { declared, findings };
    match mode {
        FlowMode::SimultaneousRound => {
            let shadow = spec.get("shadow_judge") == Some(&Value::Bool(true));
            lint_simultaneous_round(flow, shadow, needs)
        }
        FlowMode::Free => lint_free(flow, needs),
        FlowMode::MentalPoker => lint_mental_poker(needs),
        FlowMode::AuthoritativeGroup => authoritative::lint_group(flow, needs.findings),
        FlowMode::AuthoritativeRealtime => authoritative::lint_realtime(flow, needs),
        FlowMode::SessionLoop | FlowMode::RequestResponse => {}
    }
}

fn lint_phases(
    phases: Option<&Value>,
    declared: &[DeclaredMessage],
    parameters: Option<&Map<String, Value>>,
    findings: &mut Findings,
) {
    let phases = match phases {
        None | Some(Value::Null) => return,
        Some(Value::Array(phases)) => phases,
        Some(other) => {
            return findings.add(
                Check::Phases,
                "flow.phases",
                format!("expected an array, found {}", kind(other)),
            );
        }
    };
    for (index, phase) in phases.iter().enumerate() {
        let path = format!("flow.phases[{index}]");
        let Value::Object(phase) = phase else {
            findings.add(
                Check::PhaseNotObject,
                &path,
                format!("expected a phase object, found {}", kind(phase)),
            );
            continue;
        };
        if let Some(repeat) = phase.get("repeat") {
            lint_repeat(&join(&path, "repeat"), repeat, parameters, findings);
        }
        match phase.get("exchange") {
            None => {}
            Some(Value::Array(steps)) => {
                for (step_index, step) in steps.iter().enumerate() {
                    lint_exchange_step(
                        &format!("{path}.exchange[{step_index}]"),
                        step,
                        declared,
                        findings,
                    );
                }
            }
            Some(other) => findings.add(
                Check::Exchange,
                join(&path, "exchange"),
                format!("expected an array, found {}", kind(other)),
            ),
        }
    }
}

fn lint_repeat(
    path: &str,
    repeat: &Value,
    parameters: Option<&Map<String, Value>>,
    findings: &mut Findings,
) {
    let Some(repeat) = repeat.as_str().filter(|r| REPEAT_VALUES.contains(r)) else {
        return findings.add(
            Check::PhaseRepeat,
            path,
            format!("must be one of best_of, total_rounds, until game_over; found {repeat}"),
        );
    };
    if repeat != "until game_over" && !parameters.is_some_and(|p| p.contains_key(repeat)) {
        findings.add(
            Check::PhaseRepeatParameter,
            path,
            format!("repeats by {repeat}, but no parameter {repeat} is declared"),
        );
    }
}

fn lint_exchange_step(
    path: &str,
    step: &Value,
    declared: &[DeclaredMessage],
    findings: &mut Findings,
) {
    let Value::Object(step) = step else {
        return findings.add(
            Check::Exchange,
            path,
            format!("expected {{message, direction}}, found {}", kind(step)),
        );
    };
    let Some(name) = step.get("message").and_then(Value::as_str) else {
        return findings.add(
            Check::Exchange,
            join(path, "message"),
            "required: the name of a declared message",
        );
    };
    let Some(message) = declared.iter().find(|m| m.name == name) else {
        return findings.add(
            Check::ExchangeMessageUndeclared,
            join(path, "message"),
            format!("names undeclared message {}", py_repr_str(name)),
        );
    };
    match step.get("direction").and_then(Value::as_str) {
        None => {} // implied by the message's own direction
        Some(text) => match Direction::parse(text) {
            None => findings.add(
                Check::ExchangeDirection,
                join(path, "direction"),
                format!(
                    "must be host_to_guest, guest_to_host or both, found {}",
                    py_repr_str(text)
                ),
            ),
            Some(direction) => {
                if let Some(declared) = message.direction
                    && !declared.carries(direction)
                {
                    findings.add(
                        Check::ExchangeDirectionMismatch,
                        join(path, "direction"),
                        format!(
                            "{direction} does not match message {} declared {declared}",
                            py_repr_str(name)
                        ),
                    );
                }
            }
        },
    }
}

/// Checks that the frames the engine itself builds would pass validation.
pub(super) struct EngineFrames<'a, 'b> {
    declared: &'a [DeclaredMessage<'a>],
    pub(super) findings: &'b mut Findings,
}

const MENTAL_POKER_MESSAGES: [&str; 12] = [
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

impl<'a> EngineFrames<'a, '_> {
    /// The unique schema a frame with `action` travelling `direction` resolves to, or an error.
    fn schema_for(
        &mut self,
        action: &str,
        direction: Direction,
        why: &str,
    ) -> Option<&'a DeclaredMessage<'a>> {
        let declared: &'a [DeclaredMessage<'a>] = self.declared;
        let matches: Vec<&'a DeclaredMessage<'a>> = declared
            .iter()
            .filter(|m| m.action_values().contains(&action))
            .filter(|m| m.travels(direction))
            .collect();
        match matches.as_slice() {
            [one] => Some(one),
            [] => {
                self.findings.add(
                    Check::EngineMessageMissing,
                    "messages",
                    format!(
                        "{why}: declare a message with action {} and direction {direction}",
                        py_repr_str(action)
                    ),
                );
                None
            }
            _ => None, // reported as ambiguity by the messages pass
        }
    }

    /// The engine sends exactly `keys`: each must be declared, and no other field required.
    pub(super) fn exact_fields(
        &mut self,
        action: &str,
        direction: Direction,
        keys: &[&str],
        why: &str,
    ) {
        if let Some(message) = self.schema_for(action, direction, why) {
            self.check_fields(message, keys, why);
        }
    }

    /// [`EngineFrames::exact_fields`] for a frame each side sends: one message declared
    /// `both` is checked once, two one-way messages each.
    fn exact_fields_both_ways(&mut self, action: &str, keys: &[&str], why: &str) {
        let to_guest = self.schema_for(action, Direction::HostToGuest, why);
        let to_host = self.schema_for(action, Direction::GuestToHost, why);
        if let Some(message) = to_guest {
            self.check_fields(message, keys, why);
        }
        if let Some(message) = to_host.filter(|m| to_guest.is_none_or(|g| g.path != m.path)) {
            self.check_fields(message, keys, why);
        }
    }

    fn check_fields(&mut self, message: &DeclaredMessage, keys: &[&str], why: &str) {
        let path = &message.path;
        let Some(fields) = message.fields else { return };
        for key in keys.iter().filter(|key| !fields.contains_key(**key)) {
            self.findings.add(
                Check::EngineFieldUndeclared,
                join(path, "fields"),
                format!(
                    "{why}: the engine sends field {}, which is not declared",
                    py_repr_str(key)
                ),
            );
        }
        for (key, schema) in fields {
            if !keys.contains(&key.as_str()) && schema.get("required") == Some(&Value::Bool(true)) {
                self.findings.add(
                    Check::EngineFieldRequired,
                    join(&join(path, "fields"), key),
                    format!("{why}: required, but the engine never sends it"),
                );
            }
        }
    }

    fn declared_names(&mut self, names: &[&str]) {
        for name in names {
            if !self.declared.iter().any(|m| m.name == *name) {
                self.findings.add(
                    Check::MentalPokerMessage,
                    "messages",
                    format!("mental_poker needs a message named {}", py_repr_str(name)),
                );
            }
        }
    }
}

fn lint_simultaneous_round(flow: &Map<String, Value>, shadow: bool, mut needs: EngineFrames) {
    let round = match flow.get("round") {
        Some(Value::Object(round)) => round,
        Some(other) => {
            return needs.findings.add(
                Check::Round,
                "flow.round",
                format!("expected an object, found {}", kind(other)),
            );
        }
        None => {
            return needs.findings.add(
                Check::Round,
                "flow.round",
                "required for simultaneous_round: {value_field, value_type_ref}",
            );
        }
    };
    let text = |key: &str| {
        round
            .get(key)
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
    };
    let value_field = text("value_field");
    if value_field.is_none() {
        needs.findings.add(
            Check::Round,
            "flow.round.value_field",
            "required: a non-empty string naming the revealed field",
        );
    }
    match text("value_type_ref") {
        None => needs.findings.add(
            Check::Round,
            "flow.round.value_type_ref",
            "required: a reference like reveal.fields.choice",
        ),
        Some(reference) => lint_type_ref(reference, value_field, &mut needs),
    }
    let value_field = value_field.unwrap_or("value");
    let why = "simultaneous_round commit";
    for direction in [Direction::HostToGuest, Direction::GuestToHost] {
        needs.exact_fields("commit", direction, &["action", "round", "hash"], why);
        needs.exact_fields(
            "reveal",
            direction,
            &["action", "round", value_field, "nonce"],
            "simultaneous_round reveal",
        );
    }
    unknown_keys(
        round,
        &[
            "value_field",
            "value_type_ref",
            JUDGED_FIELDS_KEY,
            "description",
        ],
        "flow.round",
        needs.findings,
    );
    lint_judged_fields(round, value_field, shadow, &mut needs);
}

/// What a shadow judge compares: `flow.round.judged_fields` when listed (each a field of the
/// round result), else the round-result message's own fields, which must then be found
/// and not be empty (a judge comparing nothing would accept any lie).
fn lint_judged_fields(
    round: &Map<String, Value>,
    value_field: &str,
    shadow: bool,
    needs: &mut EngineFrames,
) {
    let result = flow::round_result(needs.declared);
    let Some(listed) = round.get(JUDGED_FIELDS_KEY) else {
        if !shadow {
            return;
        }
        let problem = match result {
            None => "cannot tell which message is the round result (the host must send exactly one message besides ready, commit, reveal, error and end)".to_string(),
            Some(result) if flow::derived_judged_fields(result, value_field).is_empty() => {
                format!(
                    "the round result {} has no field to judge besides action, round and the commit fields",
                    py_repr_str(result.name)
                )
            }
            Some(_) => return,
        };
        return needs.findings.add(
            Check::ShadowJudgeNothingToCompare,
            "shadow_judge",
            format!("{problem}; list the fields to compare in flow.round.{JUDGED_FIELDS_KEY}"),
        );
    };
    let path = format!("flow.round.{JUDGED_FIELDS_KEY}");
    if !shadow {
        needs.findings.add(
            Check::JudgedFieldsUnused,
            &path,
            "only the shadow judge reads it, and shadow_judge is not true",
        );
    }
    let items = match listed {
        Value::Array(items) if !items.is_empty() => items,
        Value::Array(_) => {
            return needs.findings.add(
                Check::JudgedFields,
                &path,
                "must not be empty (the shadow judge would compare nothing)",
            );
        }
        other => {
            return needs.findings.add(
                Check::JudgedFields,
                &path,
                format!("expected an array of field names, found {}", kind(other)),
            );
        }
    };
    for (index, item) in items.iter().enumerate() {
        let item_path = format!("{path}[{index}]");
        let Some(field) = item.as_str() else {
            needs.findings.add(
                Check::JudgedFields,
                &item_path,
                format!("expected a field name, found {}", kind(item)),
            );
            continue;
        };
        if items[..index].contains(item) {
            needs.findings.add(
                Check::JudgedFieldDuplicate,
                &item_path,
                format!("duplicate field {}", py_repr_str(field)),
            );
            continue;
        }
        let problem = match result {
            Some(result) if !result.field_names().contains(&field) => format!(
                "the round result {} declares no field {}",
                py_repr_str(result.name),
                py_repr_str(field)
            ),
            None if !needs
                .declared
                .iter()
                .any(|m| m.host_sends() && m.field_names().contains(&field)) =>
            {
                format!(
                    "no message the host sends declares field {}",
                    py_repr_str(field)
                )
            }
            _ => continue,
        };
        needs
            .findings
            .add(Check::JudgedFieldUnknown, &item_path, problem);
    }
}

/// `value_type_ref` must resolve to a declared field: `<message>.fields.<field>`.
fn lint_type_ref(reference: &str, value_field: Option<&str>, needs: &mut EngineFrames) {
    let path = "flow.round.value_type_ref";
    let parts: Vec<&str> = reference.split('.').collect();
    let [message_name, "fields", field] = parts.as_slice() else {
        return needs.findings.add(
            Check::ValueTypeRefForm,
            path,
            format!(
                "{} is not of the form <message>.fields.<field>",
                py_repr_str(reference)
            ),
        );
    };
    let Some(message) = needs.declared.iter().find(|m| m.name == *message_name) else {
        return needs.findings.add(
            Check::ValueTypeRefUnresolved,
            path,
            format!("names undeclared message {}", py_repr_str(message_name)),
        );
    };
    if !message
        .fields
        .is_some_and(|fields| fields.contains_key(*field))
    {
        return needs.findings.add(
            Check::ValueTypeRefUnresolved,
            path,
            format!(
                "message {} declares no field {}",
                py_repr_str(message_name),
                py_repr_str(field)
            ),
        );
    }
    if value_field.is_some_and(|value_field| value_field != *field) {
        needs.findings.add(
            Check::ValueTypeRefMismatch,
            path,
            format!(
                "refers to field {} but value_field is {}",
                py_repr_str(field),
                py_repr_str(value_field.unwrap_or(""))
            ),
        );
    }
}

/// mental_poker: the twelve messages by name, and every frame the engine builds. A play's
/// `call_suit` is sent only when the hooks name a suit, so it may be declared (not required).
fn lint_mental_poker(mut needs: EngineFrames) {
    needs.declared_names(&MENTAL_POKER_MESSAGES);
    let why = "mental_poker";
    let setup = ["action", "rsa_pub", "blobs", "sealed_keys"];
    needs.exact_fields("join", Direction::GuestToHost, &["action"], why);
    needs.exact_fields("ready", Direction::HostToGuest, &["action"], why);
    needs.exact_fields("mp_setup_a", Direction::HostToGuest, &setup, why);
    needs.exact_fields("mp_setup_b", Direction::GuestToHost, &setup, why);
    let play = ["action", "id_b", "k_inner", "k_outer", "rank", "suit"];
    let receipt = [
        "action",
        "transcript_hash",
        "signature",
        "audit_status",
        "public_key",
    ];
    needs.exact_fields_both_ways("mp_ot_request", &["action", "id", "z"], why);
    needs.exact_fields_both_ways("mp_ot_response", &["action", "id", "y"], why);
    needs.exact_fields_both_ways("mp_play", &play, why);
    needs.exact_fields_both_ways("mp_pass", &["action"], why);
    needs.exact_fields_both_ways("mp_opening", &["action", "openings"], why);
    needs.exact_fields_both_ways("mp_witness", &["action", "witnesses"], why);
    needs.exact_fields_both_ways("mp_terminal_receipt", &receipt, why);
}

fn lint_free(flow: &Map<String, Value>, mut needs: EngineFrames) {
    match flow.get("end_when") {
        None => needs.findings.add(
            Check::FreeEndWhen,
            "flow.end_when",
            "free mode should say how it ends (e.g. \"either_ends\")",
        ),
        Some(Value::String(text)) if text == "either_ends" => {}
        Some(Value::String(text)) => needs.findings.add(
            Check::FreeEndWhen,
            "flow.end_when",
            format!(
                "{}: a free session always ends when either side ends",
                py_repr_str(text)
            ),
        ),
        Some(other) => needs.findings.add(
            Check::FreeEndWhenType,
            "flow.end_when",
            format!("expected a string, found {}", kind(other)),
        ),
    }
    let why = "free mode";
    needs.exact_fields("join", Direction::GuestToHost, &["action"], why);
    needs.exact_fields("ready", Direction::HostToGuest, &["action"], why);
    needs.exact_fields("chat", Direction::Both, &["action", "text", "seq"], why);
    needs.exact_fields("end", Direction::Both, &["action"], why);
}
