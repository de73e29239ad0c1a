//! The typed contract: a spec that passed the run gate, read once into types (messages and
//! their field schemas, the flow with each mode's settings). The engine, self-play and the
//! skeleton generator read this instead of matching strings in the JSON. The raw JSON stays
//! next to it in [`Spec`](super::Spec), untouched, for hashing and for runtime validation
//! (which must word its errors exactly as the reference does).
//!
//! The linter cannot use the model (it reports every problem of an invalid spec with its
//! JSON path), but it dispatches on the same enums: [`FieldType`], [`FlowMode`],
//! [`ParameterType`], [`Direction`].

mod decision;
mod field;
mod parameter;

use serde_json::{Map, Value};

pub use decision::{DecisionRules, TimeoutAction};
pub use field::{FieldSchema, FieldType, JsonContainer};
pub use parameter::{ColumnType, ParameterType};

use super::flow::group::GroupRules;
use super::flow::realtime::RealtimeRules;
use super::flow::{self, FlowMode, JUDGED_FIELDS_KEY, MessageShape};
use super::lint::{Check, Diagnostic};
use super::message::Direction;

/// A spec's contract as types.
#[derive(Debug, Clone, PartialEq)]
pub struct Model {
    /// Every message schema, in declaration order.
    pub messages: Vec<MessageSchema>,
    pub flow: Flow,
    /// `decision`: a person's think time and what its deadline does.
    pub decision: DecisionRules,
}

/// One declared message.
#[derive(Debug, Clone, PartialEq)]
pub struct MessageSchema {
    pub name: String,
    pub direction: Direction,
    /// The field schemas, in declaration order.
    pub fields: Vec<(String, FieldSchema)>,
}

impl MessageSchema {
    /// The values of its `action` enum: the frames it matches.
    pub fn actions(&self) -> &[String] {
        self.fields
            .iter()
            .find(|(name, _)| name == "action")
            .map_or(&[], |(_, schema)| schema.values.as_slice())
    }
}

impl MessageShape for MessageSchema {
    fn host_sends(&self) -> bool {
        self.direction.carries(Direction::HostToGuest)
    }

    fn actions(&self) -> Vec<&str> {
        MessageSchema::actions(self)
            .iter()
            .map(String::as_str)
            .collect()
    }

    fn field_names(&self) -> Vec<&str> {
        self.fields.iter().map(|(name, _)| name.as_str()).collect()
    }
}

/// `flow`: the mode and the settings it runs with. Only modes that lint appear here (a
/// spec in any other mode fails the run gate).
#[derive(Debug, Clone, PartialEq)]
pub enum Flow {
    SessionLoop,
    RequestResponse,
    SimultaneousRound(RoundSettings),
    Free,
    MentalPoker,
    /// A room: `flow.group`.
    Group(GroupRules),
    /// A realtime game: `flow.realtime` (linted; this build does not run it).
    Realtime(RealtimeRules),
}

impl Flow {
    pub fn mode(&self) -> FlowMode {
        match self {
            Flow::SessionLoop => FlowMode::SessionLoop,
            Flow::RequestResponse => FlowMode::RequestResponse,
            Flow::SimultaneousRound(_) => FlowMode::SimultaneousRound,
            Flow::Free => FlowMode::Free,
            Flow::MentalPoker => FlowMode::MentalPoker,
            Flow::Group(_) => FlowMode::AuthoritativeGroup,
            Flow::Realtime(_) => FlowMode::AuthoritativeRealtime,
        }
    }
}

/// `flow.round` of a simultaneous round, with the spec's `shadow_judge`.
#[derive(Debug, Clone, PartialEq)]
pub struct RoundSettings {
    /// The reveal field carrying each side's committed value (`flow.round.value_field`).
    pub value_field: String,
    /// With `shadow_judge: true`: the round-result fields the guest's recomputation must
    /// match, from `flow.round.judged_fields` or else derived from the round-result message
    /// ([`flow::derived_judged_fields`]). `None` without a shadow judge.
    pub judged_fields: Option<Vec<String>>,
}

/// Something in a lint-clean spec the model cannot read (a gap in the linter), as a
/// diagnostic at its JSON path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct BuildError {
    path: String,
    what: String,
}

impl BuildError {
    fn at(path: &str, what: &str) -> BuildError {
        BuildError {
            path: path.to_string(),
            what: what.to_string(),
        }
    }
}

impl From<BuildError> for Diagnostic {
    fn from(error: BuildError) -> Diagnostic {
        Diagnostic::new(
            Check::ContractUnreadable,
            error.path,
            format!("cannot be read as the contract: {}", error.what),
        )
    }
}

impl Model {
    /// Reads a spec that passed the linter.
    pub(crate) fn build(spec: &Value) -> Result<Model, BuildError> {
        let messages = spec
            .get("messages")
            .and_then(Value::as_array)
            .ok_or_else(|| BuildError::at("messages", "not an array"))?
            .iter()
            .enumerate()
            .map(|(index, message)| build_message(&format!("messages[{index}]"), message))
            .collect::<Result<Vec<_>, _>>()?;
        let flow = build_flow(spec, &messages)?;
        Ok(Model {
            messages,
            flow,
            decision: DecisionRules::build(spec),
        })
    }

    /// The schema a frame with this `action` travelling `direction` resolves to (the
    /// linter guarantees at most one).
    pub fn find(&self, action: &str, direction: Direction) -> Option<&MessageSchema> {
        self.messages.iter().find(|message| {
            message.direction.carries(direction)
                && message.actions().iter().any(|value| value == action)
        })
    }
}

fn build_message(path: &str, message: &Value) -> Result<MessageSchema, BuildError> {
    let text = |key: &str| message.get(key).and_then(Value::as_str);
    let name = text("name").ok_or_else(|| BuildError::at(path, "no name"))?;
    let direction = text("direction")
        .and_then(Direction::parse)
        .ok_or_else(|| BuildError::at(path, "no direction"))?;
    let fields = message
        .get("fields")
        .and_then(Value::as_object)
        .ok_or_else(|| BuildError::at(path, "no fields"))?
        .iter()
        .map(|(key, schema)| {
            FieldSchema::build(&format!("{path}.fields.{key}"), schema)
                .map(|schema| (key.clone(), schema))
        })
        .collect::<Result<Vec<_>, _>>()?;
    Ok(MessageSchema {
        name: name.to_string(),
        direction,
        fields,
    })
}

fn build_flow(spec: &Value, messages: &[MessageSchema]) -> Result<Flow, BuildError> {
    let mode = match flow::declared_mode(spec) {
        Ok(None) => FlowMode::SessionLoop,
        Ok(Some(text)) => FlowMode::parse(text)
            .ok_or_else(|| BuildError::at("flow.mode", "not a mode the linter knows"))?,
        Err(_) => return Err(BuildError::at("flow.mode", "not a string")),
    };
    Ok(match mode {
        FlowMode::SessionLoop => Flow::SessionLoop,
        FlowMode::RequestResponse => Flow::RequestResponse,
        FlowMode::SimultaneousRound => Flow::SimultaneousRound(build_round(spec, messages)?),
        FlowMode::Free => Flow::Free,
        FlowMode::MentalPoker => Flow::MentalPoker,
        FlowMode::AuthoritativeGroup => {
            Flow::Group(GroupRules::read(section(spec, "group")?).map_err(|key| {
                BuildError::at(&format!("flow.group.{key}"), "not a valid setting")
            })?)
        }
        FlowMode::AuthoritativeRealtime => Flow::Realtime(
            RealtimeRules::read(section(spec, "realtime")?).map_err(|key| {
                BuildError::at(&format!("flow.realtime.{key}"), "not a valid setting")
            })?,
        ),
    })
}

/// A mode's own object in `flow`.
fn section<'a>(spec: &'a Value, key: &str) -> Result<&'a Map<String, Value>, BuildError> {
    spec.get("flow")
        .and_then(|flow| flow.get(key))
        .and_then(Value::as_object)
        .ok_or_else(|| BuildError::at(&format!("flow.{key}"), "not an object"))
}

fn build_round(spec: &Value, messages: &[MessageSchema]) -> Result<RoundSettings, BuildError> {
    let round: Option<&Map<String, Value>> = spec.pointer("/flow/round").and_then(Value::as_object);
    let value_field = round
        .and_then(|round| round.get("value_field"))
        .and_then(Value::as_str)
        .filter(|field| !field.is_empty())
        .ok_or_else(|| BuildError::at("flow.round.value_field", "not a field name"))?
        .to_string();
    if spec.get("shadow_judge") != Some(&Value::Bool(true)) {
        return Ok(RoundSettings {
            value_field,
            judged_fields: None,
        });
    }
    let judged = match round.and_then(|round| round.get(JUDGED_FIELDS_KEY)) {
        Some(listed) => {
            let path = format!("flow.round.{JUDGED_FIELDS_KEY}");
            listed
                .as_array()
                .ok_or_else(|| BuildError::at(&path, "not an array"))?
                .iter()
                .map(|field| {
                    field
                        .as_str()
                        .map(str::to_string)
                        .ok_or_else(|| BuildError::at(&path, "not an array of field names"))
                })
                .collect::<Result<Vec<_>, _>>()?
        }
        None => flow::round_result(messages)
            .map(|result| flow::derived_judged_fields(result, &value_field))
            .ok_or_else(|| BuildError::at("shadow_judge", "no round-result message"))?,
    };
    if judged.is_empty() {
        return Err(BuildError::at("shadow_judge", "nothing to judge"));
    }
    Ok(RoundSettings {
        value_field,
        judged_fields: Some(judged),
    })
}

#[cfg(test)]
pub(crate) mod tests;
