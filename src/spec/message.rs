//! Runtime validation of one message against the spec, exactly as the reference does it:
//! schema lookup by action (or name) and direction, unknown fields rejected, `required: true`
//! honoured, every present field type-checked. The engine validates every frame with this.

use serde_json::{Map, Value};

use super::fields::{check_field, enum_contains};
use super::pyrepr::py_repr;

/// Which way a message travels. `Both` is what free mode and the mental-poker play loop ask
/// for; it only matches schemas declared `both`.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    clap::ValueEnum,
    strum::IntoStaticStr,
    strum::EnumString,
    strum::Display,
)]
#[strum(serialize_all = "snake_case")]
pub enum Direction {
    #[value(name = "host_to_guest")]
    HostToGuest,
    #[value(name = "guest_to_host")]
    GuestToHost,
    #[value(name = "both")]
    Both,
}

impl Direction {
    pub const ALL: [Direction; 3] = [
        Direction::HostToGuest,
        Direction::GuestToHost,
        Direction::Both,
    ];

    pub fn as_str(self) -> &'static str {
        self.into()
    }

    pub fn parse(text: &str) -> Option<Direction> {
        text.parse().ok()
    }

    /// Whether a schema declared with this direction matches a frame travelling `wanted`
    /// (`both` carries everything; a `both` frame only matches `both`).
    pub fn carries(self, wanted: Direction) -> bool {
        self == Direction::Both || self == wanted
    }

    /// The direction of frames a role sends.
    pub fn sent_by(role: super::Role) -> Direction {
        match role {
            super::Role::Host => Direction::HostToGuest,
            super::Role::Guest => Direction::GuestToHost,
        }
    }
}

/// A message that does not conform; the text is the reference's (`"; "`-joined).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct MessageError(pub String);

/// Validates `message` against the spec's message schemas.
pub fn validate_message(
    spec: &Value,
    message: &Value,
    direction: Option<Direction>,
    message_name: Option<&str>,
) -> Result<(), MessageError> {
    let Value::Object(message) = message else {
        return Err(MessageError("message must be a JSON object".into()));
    };
    let schema = find_schema(spec, message, direction, message_name)?;
    let fields = match schema.get("fields") {
        Some(Value::Object(fields)) if !fields.is_empty() => fields,
        _ => {
            let name = schema.get("name").map_or("None".to_string(), |n| match n {
                Value::String(text) => text.clone(),
                other => py_repr(other),
            });
            return Err(MessageError(format!("message {name} has no fields schema")));
        }
    };
    let mut errors: Vec<String> = message
        .keys()
        .filter(|key| !fields.contains_key(*key))
        .map(|key| format!("unknown field: {key}"))
        .collect();
    for (key, field) in fields {
        let Value::Object(field) = field else {
            errors.push(format!("field schema must be object: {key}"));
            continue;
        };
        match message.get(key) {
            None if field.get("required") == Some(&Value::Bool(true)) => {
                errors.push(format!("missing required field: {key}"))
            }
            None => {}
            Some(value) => check_field(field, value, key, &mut errors),
        }
    }
    if errors.is_empty() {
        Ok(())
    } else {
        Err(MessageError(errors.join("; ")))
    }
}

fn direction_matches(schema: &Map<String, Value>, wanted: Option<Direction>) -> bool {
    let declared = schema
        .get("direction")
        .and_then(Value::as_str)
        .and_then(Direction::parse);
    match wanted {
        None => true,
        Some(wanted) => declared.is_some_and(|declared| declared.carries(wanted)),
    }
}

/// The one schema a message belongs to (by `message_name`, else by its `action`).
pub fn find_schema<'a>(
    spec: &'a Value,
    message: &Map<String, Value>,
    direction: Option<Direction>,
    message_name: Option<&str>,
) -> Result<&'a Map<String, Value>, MessageError> {
    let schemas = match spec.get("messages") {
        Some(Value::Array(items)) if !items.is_empty() => items,
        _ => {
            return Err(MessageError(
                "spec.messages must be a non-empty array".into(),
            ));
        }
    };
    let action = message.get("action");
    let mut candidates = schemas
        .iter()
        .filter_map(Value::as_object)
        .filter(|schema| {
            let selected = match message_name.filter(|name| !name.is_empty()) {
                Some(name) => schema.get("name").and_then(Value::as_str) == Some(name),
                None => {
                    let values = schema
                        .get("fields")
                        .and_then(|fields| fields.get("action"))
                        .and_then(Value::as_object)
                        .and_then(|action_schema| action_schema.get("values"));
                    action_matches(values, action)
                }
            };
            selected && direction_matches(schema, direction)
        });
    let first = candidates.next();
    match (first, candidates.next()) {
        (Some(schema), None) => Ok(schema),
        (Some(_), Some(_)) => Err(MessageError(
            "ambiguous message schema; pass message_name".into(),
        )),
        (None, _) => {
            let shown = action.map_or("None".to_string(), py_repr);
            let suffix = direction
                .map(|d| format!(" direction={d}"))
                .unwrap_or_default();
            Err(MessageError(format!(
                "message schema not found for action={shown}{suffix}"
            )))
        }
    }
}

/// Python `action in values` for the schema's declared action values.
fn action_matches(values: Option<&Value>, action: Option<&Value>) -> bool {
    match (values, action) {
        (Some(Value::Array(items)), Some(action)) => items.contains(action),
        (Some(Value::Array(items)), None) => items.contains(&Value::Null),
        (values, Some(Value::String(action))) => enum_contains(values, action),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn spec() -> Value {
        json!({"messages": [
            {"name": "move", "direction": "guest_to_host", "fields": {
                "action": {"type": "enum", "values": ["move"], "required": true},
                "x": {"type": "integer", "min": 0, "required": true},
                "note": {"type": "text", "max_length": 4}}},
            {"name": "chat", "direction": "both", "fields": {
                "action": {"type": "enum", "values": ["chat"], "required": true}}},
            {"name": "empty", "direction": "both", "fields": {}}
        ]})
    }

    #[test]
    fn errors_are_collected_in_reference_order() {
        let error = validate_message(
            &spec(),
            &json!({"action": "move", "y": 1, "note": "toolong"}),
            None,
            None,
        )
        .unwrap_err();
        assert_eq!(
            error.0,
            "unknown field: y; missing required field: x; note: expected text <= 4 UTF-8 bytes"
        );
    }

    #[test]
    fn lookup_respects_direction() {
        let guest_move = json!({"action": "move", "x": 1});
        assert!(validate_message(&spec(), &guest_move, Some(Direction::GuestToHost), None).is_ok());
        assert_eq!(
            validate_message(&spec(), &guest_move, Some(Direction::HostToGuest), None)
                .unwrap_err()
                .0,
            "message schema not found for action='move' direction=host_to_guest"
        );
        assert_eq!(
            validate_message(&spec(), &guest_move, Some(Direction::Both), None)
                .unwrap_err()
                .0,
            "message schema not found for action='move' direction=both"
        );
        assert!(
            validate_message(
                &spec(),
                &json!({"action": "chat"}),
                Some(Direction::Both),
                None
            )
            .is_ok()
        );
        assert_eq!(
            validate_message(&spec(), &json!({"x": 1}), None, None)
                .unwrap_err()
                .0,
            "message schema not found for action=None"
        );
        assert_eq!(
            validate_message(&spec(), &json!({}), None, Some("empty"))
                .unwrap_err()
                .0,
            "message empty has no fields schema"
        );
        assert_eq!(
            validate_message(&spec(), &json!([1]), None, None)
                .unwrap_err()
                .0,
            "message must be a JSON object"
        );
    }
}
