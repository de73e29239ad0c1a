//! Message field schemas as types: the 14 field types and the constraints each one reads.

use serde_json::{Map, Number, Value};

use super::BuildError;

/// A field type a message schema may declare.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, strum::IntoStaticStr, strum::EnumString, strum::Display,
)]
#[strum(serialize_all = "snake_case")]
pub enum FieldType {
    Integer,
    Enum,
    Boolean,
    Hash,
    Nonce,
    Id,
    Signature,
    Ticket,
    Text,
    Ciphertext,
    Key,
    OtBlob,
    Array,
    Json,
}

impl FieldType {
    /// Every field type, in the order the linter lists them.
    pub const ALL: [FieldType; 14] = [
        FieldType::Integer,
        FieldType::Enum,
        FieldType::Boolean,
        FieldType::Hash,
        FieldType::Nonce,
        FieldType::Id,
        FieldType::Signature,
        FieldType::Ticket,
        FieldType::Text,
        FieldType::Ciphertext,
        FieldType::Key,
        FieldType::OtBlob,
        FieldType::Array,
        FieldType::Json,
    ];

    pub fn as_str(self) -> &'static str {
        self.into()
    }

    pub fn parse(text: &str) -> Option<FieldType> {
        text.parse().ok()
    }

    /// The names of every type, `", "`-joined (for "one of ..." texts).
    pub fn names() -> String {
        FieldType::ALL.map(FieldType::as_str).join(", ")
    }

    /// Whether values of this type are fixed-length lowercase hex (hash, nonce, key,
    /// signature).
    pub fn is_hex(self) -> bool {
        matches!(
            self,
            FieldType::Hash | FieldType::Nonce | FieldType::Key | FieldType::Signature
        )
    }
}

/// What a `json` field accepts at its top level.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, strum::IntoStaticStr, strum::EnumString, strum::Display,
)]
#[strum(serialize_all = "snake_case")]
pub enum JsonContainer {
    Any,
    Object,
    Array,
}

impl JsonContainer {
    pub fn as_str(self) -> &'static str {
        self.into()
    }

    pub fn parse(text: &str) -> Option<JsonContainer> {
        text.parse().ok()
    }
}

/// One field of a message: its type, whether it is required, and the constraints its type
/// reads (numbers kept as written, so they print as the spec spells them). Runtime
/// validation reads the raw schema instead, for the reference's exact error texts.
#[derive(Debug, Clone, PartialEq)]
pub struct FieldSchema {
    pub field_type: FieldType,
    pub required: bool,
    /// integer: the inclusive bounds.
    pub min: Option<Number>,
    pub max: Option<Number>,
    /// enum: the accepted strings.
    pub values: Vec<String>,
    /// text, ciphertext, ot_blob: the size limit.
    pub max_length: Option<Number>,
    /// array: the element count bounds.
    pub min_items: Option<Number>,
    pub max_items: Option<Number>,
    /// json: the accepted top-level container.
    pub container: Option<JsonContainer>,
}

impl FieldSchema {
    /// Reads a lint-clean field schema at `path`.
    pub(super) fn build(path: &str, schema: &Value) -> Result<FieldSchema, BuildError> {
        let Value::Object(schema) = schema else {
            return Err(BuildError::at(path, "not an object"));
        };
        let field_type = schema
            .get("type")
            .and_then(Value::as_str)
            .and_then(FieldType::parse)
            .ok_or_else(|| BuildError::at(path, "no known field type"))?;
        let number = |key: &str| -> Result<Option<Number>, BuildError> {
            match schema.get(key) {
                None => Ok(None),
                Some(Value::Number(number)) => Ok(Some(number.clone())),
                Some(_) => Err(BuildError::at(&format!("{path}.{key}"), "not a number")),
            }
        };
        let mut field = FieldSchema {
            field_type,
            required: schema.get("required") == Some(&Value::Bool(true)),
            min: None,
            max: None,
            values: Vec::new(),
            max_length: None,
            min_items: None,
            max_items: None,
            container: None,
        };
        match field_type {
            FieldType::Integer => {
                field.min = number("min")?;
                field.max = number("max")?;
            }
            FieldType::Enum => field.values = enum_values(path, schema)?,
            FieldType::Text | FieldType::Ciphertext | FieldType::OtBlob => {
                field.max_length = number("max_length")?
            }
            FieldType::Array => {
                field.min_items = number("min_items")?;
                field.max_items = number("max_items")?;
            }
            FieldType::Json => {
                field.container = match schema.get("container") {
                    None => None,
                    Some(container) => Some(
                        container
                            .as_str()
                            .and_then(JsonContainer::parse)
                            .ok_or_else(|| {
                                BuildError::at(&format!("{path}.container"), "not a container")
                            })?,
                    ),
                }
            }
            _ => {}
        }
        Ok(field)
    }
}

fn enum_values(path: &str, schema: &Map<String, Value>) -> Result<Vec<String>, BuildError> {
    let bad = || BuildError::at(&format!("{path}.values"), "not an array of strings");
    schema
        .get("values")
        .and_then(Value::as_array)
        .ok_or_else(bad)?
        .iter()
        .map(|value| value.as_str().map(str::to_string).ok_or_else(bad))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_type_round_trips_through_its_name() {
        for field_type in FieldType::ALL {
            assert_eq!(FieldType::parse(field_type.as_str()), Some(field_type));
        }
        assert_eq!(FieldType::parse("string"), None);
        assert_eq!(FieldType::ALL.len(), 14);
    }
}
