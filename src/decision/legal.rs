//! The legal values of a decision window, from the contract first: the schema of the field
//! the move travels in (the typed spec model), narrowed to the hooks' own choices
//! (`DECISION_SCHEMA.choices`, or the legal list a hook passes). So a person is offered, and
//! held to, exactly what the engine would accept on the wire.

use serde_json::Value;

use crate::records::Choices;
use crate::spec::model::{FieldSchema, FieldType, Model};
use crate::spec::{Direction, Role, Spec};

/// What the hooks say about a window's values.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct HooksChoices {
    /// The values the hooks list (e.g. the keys of `CHOICE_KEYWORDS`).
    pub listed: Option<Vec<Value>>,
    /// `DECISION_SCHEMA.numeric`: the value is a number.
    pub numeric: bool,
}

/// The choices of the window `match_key` whose move is `value_field`, for `role`.
pub fn choices_for(
    spec: &Spec,
    role: Role,
    match_key: &str,
    value_field: &str,
    hooks: &HooksChoices,
) -> Choices {
    let schema = spec
        .model()
        .ok()
        .and_then(|model| move_field(model, role, match_key, value_field))
        .map(from_schema);
    match (&hooks.listed, schema) {
        (Some(listed), Some(schema)) => {
            let values: Vec<Value> = listed
                .iter()
                .filter(|value| schema.check(value_field, Some(value)).is_ok())
                .cloned()
                .collect();
            if values.is_empty() {
                schema
            } else {
                Choices::OneOf { values }
            }
        }
        (Some(listed), None) => Choices::OneOf {
            values: listed.clone(),
        },
        (None, Some(schema)) => schema,
        (None, None) if hooks.numeric => Choices::Integer {
            min: None,
            max: None,
        },
        (None, None) => Choices::Any,
    }
}

/// The schema of `value_field` in a message this side sends, preferring a message that
/// also carries the window's key (a reveal carries `round` and the move).
fn move_field<'m>(
    model: &'m Model,
    role: Role,
    match_key: &str,
    value_field: &str,
) -> Option<&'m FieldSchema> {
    let outbound = Direction::sent_by(role);
    let carrying = |with_key: bool| {
        model
            .messages
            .iter()
            .filter(|message| message.direction.carries(outbound))
            .filter(move |message| {
                !with_key || message.fields.iter().any(|(name, _)| name == match_key)
            })
            .find_map(|message| {
                message
                    .fields
                    .iter()
                    .find(|(name, _)| name == value_field)
                    .map(|(_, schema)| schema)
            })
    };
    carrying(true).or_else(|| carrying(false))
}

fn from_schema(field: &FieldSchema) -> Choices {
    let bound = |number: &Option<serde_json::Number>| number.as_ref().and_then(|n| n.as_i64());
    match field.field_type {
        FieldType::Enum => Choices::OneOf {
            values: field.values.iter().cloned().map(Value::String).collect(),
        },
        FieldType::Integer => Choices::Integer {
            min: bound(&field.min),
            max: bound(&field.max),
        },
        FieldType::Boolean => Choices::OneOf {
            values: vec![Value::Bool(true), Value::Bool(false)],
        },
        FieldType::Text => Choices::Text {
            max_bytes: field
                .max_length
                .as_ref()
                .and_then(|n| n.as_u64())
                .unwrap_or(2000),
        },
        _ => Choices::Any,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn builtin(alias: &str) -> Spec {
        crate::protocols::find(alias).unwrap().spec()
    }

    #[test]
    fn moves_come_from_the_message_schema_and_the_hooks() {
        let rps = builtin("rock-paper-scissors");
        let moves = choices_for(
            &rps,
            Role::Guest,
            "round",
            "choice",
            &HooksChoices::default(),
        );
        assert_eq!(
            moves,
            Choices::OneOf {
                values: vec![json!("rock"), json!("paper"), json!("scissors")]
            }
        );
        let narrowed = HooksChoices {
            listed: Some(vec![json!("rock"), json!("lizard")]),
            numeric: false,
        };
        assert_eq!(
            choices_for(&rps, Role::Host, "round", "choice", &narrowed),
            Choices::OneOf {
                values: vec![json!("rock")]
            }
        );
        let guess = builtin("guess-number");
        let numbers = choices_for(
            &guess,
            Role::Guest,
            "attempt",
            "number",
            &HooksChoices::default(),
        );
        assert!(matches!(numbers, Choices::Integer { .. }), "{numbers:?}");
        let secret = HooksChoices {
            listed: None,
            numeric: true,
        };
        assert_eq!(
            choices_for(&guess, Role::Guest, "setup", "secret", &secret),
            Choices::Integer {
                min: None,
                max: None
            }
        );
    }
}
