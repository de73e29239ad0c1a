//! The 14 message field types and their runtime checks, with the reference's error texts.

use std::cmp::Ordering;

use serde_json::{Map, Value};

use super::model::FieldType;
use super::number::{PyNumber, as_integer};
use super::pyrepr::{py_repr, py_repr_str, py_str};
use crate::canonical::{self, PyJson};

pub const DEFAULT_TEXT_MAX_LENGTH: i128 = 2000;
pub const DEFAULT_CIPHERTEXT_MAX_LENGTH: i128 = 512;
pub const DEFAULT_OT_BLOB_MAX_LENGTH: i128 = 16384;
pub const DEFAULT_ARRAY_MAX_TOTAL_BYTES: i128 = 262_144;
pub const DEFAULT_JSON_MAX_TOTAL_BYTES: i128 = 1_048_576;

/// Checks one present field value against its schema, appending `<key>: ...` errors.
pub fn check_field(
    schema: &Map<String, Value>,
    value: &Value,
    key: &str,
    errors: &mut Vec<String>,
) {
    let field_type = schema.get("type");
    let Some(Value::String(field_type)) = field_type else {
        let shown = field_type.map_or("None".to_string(), py_repr);
        errors.push(format!("{key}: unsupported field type {shown}"));
        return;
    };
    let fail = |errors: &mut Vec<String>, what: String| errors.push(format!("{key}: {what}"));
    let Some(field_type) = FieldType::parse(field_type) else {
        return fail(
            errors,
            format!("unsupported field type {}", py_repr_str(field_type)),
        );
    };
    let text = value.as_str();
    match field_type {
        FieldType::Integer => check_integer(schema, value, key, errors),
        FieldType::Enum => match text {
            None => fail(errors, "expected enum string".into()),
            Some(text) if !enum_contains(schema.get("values"), text) => {
                fail(errors, format!("value {} not in enum", py_repr_str(text)))
            }
            Some(_) => {}
        },
        FieldType::Boolean if !value.is_boolean() => fail(errors, "expected boolean".into()),
        FieldType::Hash if !text.is_some_and(|t| is_lower_hex(t, 64, 64)) => {
            fail(errors, "expected lowercase SHA256 hex".into())
        }
        FieldType::Nonce if !text.is_some_and(|t| is_lower_hex(t, 16, 64)) => {
            fail(errors, "expected 16-64 lowercase hex chars".into())
        }
        FieldType::Id if !text.is_some_and(is_safe_identifier) => {
            fail(errors, "expected safe identifier".into())
        }
        FieldType::Signature if !text.is_some_and(|t| is_lower_hex(t, 128, 128)) => {
            fail(errors, "expected lowercase Ed25519 signature hex".into())
        }
        FieldType::Ticket if !text.is_some_and(|t| !t.is_empty() && t.chars().count() <= 2048) => {
            fail(errors, "expected non-empty ticket <= 2048 chars".into())
        }
        FieldType::Text => {
            let limit = limit_of(schema, "max_length", DEFAULT_TEXT_MAX_LENGTH);
            if !text.is_some_and(|t| fits(t.len(), &limit)) {
                fail(
                    errors,
                    format!("expected text <= {} UTF-8 bytes", py_repr_limit(&limit)),
                );
            }
        }
        FieldType::Ciphertext => {
            let limit = limit_of(schema, "max_length", DEFAULT_CIPHERTEXT_MAX_LENGTH);
            let ok = text.is_some_and(|t| {
                fits(t.len(), &limit) && t.len() % 2 == 0 && is_lower_hex(t, 1, usize::MAX)
            });
            if !ok {
                fail(
                    errors,
                    format!(
                        "expected hex ciphertext <= {} chars (even length)",
                        py_repr_limit(&limit)
                    ),
                );
            }
        }
        FieldType::Key if !text.is_some_and(|t| is_lower_hex(t, 64, 64)) => {
            fail(errors, "expected 32-byte key (64 hex chars)".into())
        }
        FieldType::OtBlob => {
            let limit = limit_of(schema, "max_length", DEFAULT_OT_BLOB_MAX_LENGTH);
            if !text.is_some_and(|t| fits(t.len(), &limit)) {
                fail(
                    errors,
                    format!("expected ot_blob <= {} UTF-8 bytes", py_repr_limit(&limit)),
                );
            }
        }
        FieldType::Array => check_array(schema, value, key, errors),
        FieldType::Json => check_json(schema, value, key, errors),
        _ => {}
    }
}

fn check_integer(schema: &Map<String, Value>, value: &Value, key: &str, errors: &mut Vec<String>) {
    let Some(number) = PyNumber::of(value).filter(PyNumber::is_int) else {
        errors.push(format!("{key}: expected integer"));
        return;
    };
    for (bound, breaks, word) in [
        ("min", Ordering::Less, "below min"),
        ("max", Ordering::Greater, "above max"),
    ] {
        let Some(limit) = schema.get(bound) else {
            continue;
        };
        match PyNumber::of(limit) {
            Some(limit_number) => {
                if number.compare(&limit_number) == Some(breaks) {
                    errors.push(format!("{key}: {word} {}", py_repr(limit)));
                }
            }
            None => errors.push(format!(
                "{key}: schema {bound} {} is not a number",
                py_repr(limit)
            )),
        }
    }
}

/// Python `value in values`: list membership, substring for a string, key for an object.
pub fn enum_contains(values: Option<&Value>, candidate: &str) -> bool {
    match values {
        Some(Value::Array(items)) => items.iter().any(|item| item.as_str() == Some(candidate)),
        Some(Value::String(text)) => text.contains(candidate),
        Some(Value::Object(map)) => map.contains_key(candidate),
        _ => false,
    }
}

fn check_array(schema: &Map<String, Value>, value: &Value, key: &str, errors: &mut Vec<String>) {
    let Value::Array(items) = value else {
        errors.push(format!("{key}: expected array"));
        return;
    };
    let Some(Value::Object(items_schema)) = schema.get("items") else {
        errors.push(format!("{key}: array requires an 'items' schema"));
        return;
    };
    let item_type = items_schema.get("type").and_then(Value::as_str);
    if item_type.and_then(FieldType::parse) == Some(FieldType::Array) {
        errors.push(format!(
            "{key}: nested array not allowed (items must be scalar)"
        ));
        return;
    }
    let count = items.len() as i128;
    if let Some(min) = schema
        .get("min_items")
        .and_then(as_integer)
        .filter(|min| count < *min)
    {
        errors.push(format!("{key}: below min_items {min}"));
    }
    if let Some(max) = schema
        .get("max_items")
        .and_then(as_integer)
        .filter(|max| count > *max)
    {
        errors.push(format!("{key}: above max_items {max}"));
    }
    let limit = limit_of(schema, "max_total_bytes", DEFAULT_ARRAY_MAX_TOTAL_BYTES);
    let total: usize = items.iter().map(|item| py_str(item).len()).sum();
    if !fits(total, &limit) {
        errors.push(format!(
            "{key}: array total {total} bytes exceeds max_total_bytes {}",
            py_repr_limit(&limit)
        ));
    }
    for (index, item) in items.iter().enumerate() {
        check_field(items_schema, item, &format!("{key}[{index}]"), errors);
    }
}

fn check_json(schema: &Map<String, Value>, value: &Value, key: &str, errors: &mut Vec<String>) {
    let container = schema
        .get("container")
        .cloned()
        .unwrap_or(Value::from("any"));
    match container.as_str() {
        Some("object") if !value.is_object() => {
            return errors.push(format!("{key}: expected JSON object"));
        }
        Some("array") if !value.is_array() => {
            return errors.push(format!("{key}: expected JSON array"));
        }
        Some("any" | "object" | "array") => {}
        _ => {
            return errors.push(format!(
                "{key}: json container must be any, object, or array"
            ));
        }
    }
    if !is_finite_json(value) {
        return errors.push(format!("{key}: expected finite JSON value"));
    }
    let encoded = canonical::to_canonical_string(&PyJson::from(value));
    match schema.get("max_total_bytes") {
        None => {
            if encoded.len() as i128 > DEFAULT_JSON_MAX_TOTAL_BYTES {
                errors.push(format!(
                    "{key}: JSON payload {} bytes exceeds max_total_bytes {DEFAULT_JSON_MAX_TOTAL_BYTES}",
                    encoded.len()
                ));
            }
        }
        Some(limit) => match as_integer(limit).filter(|limit| *limit >= 1) {
            Some(limit) if encoded.len() as i128 > limit => errors.push(format!(
                "{key}: JSON payload {} bytes exceeds max_total_bytes {limit}",
                encoded.len()
            )),
            Some(_) => {}
            None => errors.push(format!(
                "{key}: json max_total_bytes must be a positive integer"
            )),
        },
    }
}

fn is_finite_json(value: &Value) -> bool {
    match value {
        Value::Number(_) => {
            !matches!(PyNumber::of(value), Some(PyNumber::Float(f)) if !f.is_finite())
        }
        Value::Array(items) => items.iter().all(is_finite_json),
        Value::Object(map) => map.values().all(is_finite_json),
        _ => true,
    }
}

/// A size limit from the schema: the declared number, or the default when absent.
fn limit_of(schema: &Map<String, Value>, name: &str, default: i128) -> Value {
    schema
        .get(name)
        .cloned()
        .unwrap_or(Value::from(default as i64))
}

/// `size <= limit` with Python's comparison (a non-numeric limit accepts nothing).
fn fits(size: usize, limit: &Value) -> bool {
    PyNumber::of(limit)
        .is_some_and(|limit| PyNumber::Int(size as i128).compare(&limit) != Some(Ordering::Greater))
}

fn py_repr_limit(limit: &Value) -> String {
    py_str(limit)
}

/// `[0-9a-f]{min,max}` over the whole string.
pub fn is_lower_hex(text: &str, min: usize, max: usize) -> bool {
    (min..=max).contains(&text.len())
        && text.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

/// `[A-Za-z0-9_.:-]{1,128}`, the reference's safe identifier.
pub fn is_safe_identifier(text: &str) -> bool {
    (1..=128).contains(&text.len())
        && text
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b':' | b'-'))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn errors_for(schema: Value, value: Value) -> Vec<String> {
        let mut errors = Vec::new();
        check_field(schema.as_object().unwrap(), &value, "f", &mut errors);
        errors
    }

    #[test]
    fn integer_rules() {
        let schema = json!({"type": "integer", "min": 1, "max": 5});
        assert_eq!(
            errors_for(schema.clone(), json!(true)),
            ["f: expected integer"]
        );
        assert_eq!(
            errors_for(schema.clone(), json!(1.0)),
            ["f: expected integer"]
        );
        assert_eq!(errors_for(schema.clone(), json!(0)), ["f: below min 1"]);
        assert_eq!(errors_for(schema.clone(), json!(6)), ["f: above max 5"]);
        assert!(errors_for(schema, json!(3)).is_empty());
    }

    #[test]
    fn string_types() {
        assert_eq!(
            errors_for(json!({"type": "enum", "values": ["a"]}), json!("b")),
            ["f: value 'b' not in enum"]
        );
        assert_eq!(
            errors_for(json!({"type": "hash"}), json!("AB")),
            ["f: expected lowercase SHA256 hex"]
        );
        assert!(errors_for(json!({"type": "nonce"}), json!("0123456789abcdef")).is_empty());
        assert_eq!(
            errors_for(json!({"type": "id"}), json!("a b")),
            ["f: expected safe identifier"]
        );
        assert_eq!(
            errors_for(json!({"type": "text", "max_length": 3}), json!("éé")),
            ["f: expected text <= 3 UTF-8 bytes"]
        );
        assert_eq!(
            errors_for(json!({"type": "ciphertext"}), json!("abc")),
            ["f: expected hex ciphertext <= 512 chars (even length)"]
        );
        assert_eq!(
            errors_for(json!({"type": "string"}), json!("x")),
            ["f: unsupported field type 'string'"]
        );
        assert_eq!(
            errors_for(json!({}), json!("x")),
            ["f: unsupported field type None"]
        );
    }

    #[test]
    fn arrays_and_json() {
        let schema = json!({"type": "array", "items": {"type": "integer", "max": 2}, "max_items": 2, "max_total_bytes": 2});
        assert_eq!(
            errors_for(schema, json!([1, 2, 3])),
            [
                "f: above max_items 2",
                "f: array total 3 bytes exceeds max_total_bytes 2",
                "f[2]: above max 2"
            ]
        );
        assert_eq!(
            errors_for(
                json!({"type": "array", "items": {"type": "array"}}),
                json!([])
            ),
            ["f: nested array not allowed (items must be scalar)"]
        );
        assert_eq!(
            errors_for(json!({"type": "json", "container": "object"}), json!([1])),
            ["f: expected JSON object"]
        );
        assert_eq!(
            errors_for(
                json!({"type": "json", "max_total_bytes": 4}),
                json!({"a": 1})
            ),
            ["f: JSON payload 7 bytes exceeds max_total_bytes 4"]
        );
    }
}
