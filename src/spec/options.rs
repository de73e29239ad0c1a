//! Options (`--options`, invitation options) checked against the spec's `parameters`:
//! integer ranges, booleans, enums, text limits, safe ids, and `table` parameters whose
//! nested rows (e.g. `options.balance.warrior.skill_a.dmg`) are checked leaf by leaf.
//! Keys the spec does not declare pass through untouched; defaults are never applied.

use std::cmp::Ordering;

use serde_json::{Map, Value};

use super::fields::{enum_contains, is_safe_identifier};
use super::model::{ColumnType, ParameterType};
use super::number::PyNumber;
use super::pyrepr::{py_repr, py_repr_str};

/// Options that do not fit the spec's parameters; every problem, `"; "`-joined, each
/// prefixed with its path.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}", .0.join("; "))]
pub struct OptionsError(pub Vec<String>);

/// Parses `--options` text into an object (`{}` when absent).
pub fn parse_options(text: Option<&str>) -> Result<Map<String, Value>, OptionsError> {
    let Some(text) = text else {
        return Ok(Map::new());
    };
    match serde_json::from_str::<Value>(text) {
        Ok(Value::Object(map)) => Ok(map),
        Ok(_) => Err(OptionsError(vec!["--options must be a JSON object".into()])),
        Err(error) => Err(OptionsError(vec![format!(
            "--options is not valid JSON: {error}"
        )])),
    }
}

/// Options that passed [`validate_options`] against one spec: the only form a side plays
/// with, so a side never plays unchecked options and never checks the same ones twice.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CheckedOptions(Map<String, Value>);

impl CheckedOptions {
    /// `options` once they fit `spec`'s parameters.
    pub fn check(
        spec: &Value,
        options: Map<String, Value>,
    ) -> Result<CheckedOptions, OptionsError> {
        validate_options(spec, &options)?;
        Ok(CheckedOptions(options))
    }

    /// No options at all (nothing to check: parameters are never required).
    pub fn none() -> CheckedOptions {
        CheckedOptions::default()
    }

    /// `defaults` (the hooks' own, unchecked) under these, which win where both set a key;
    /// the merged options are checked again since the defaults were not.
    pub fn under_defaults(
        self,
        spec: &Value,
        defaults: &Map<String, Value>,
    ) -> Result<CheckedOptions, OptionsError> {
        let mut merged = defaults.clone();
        merged.extend(self.0);
        CheckedOptions::check(spec, merged)
    }

    pub fn as_map(&self) -> &Map<String, Value> {
        &self.0
    }

    pub fn into_map(self) -> Map<String, Value> {
        self.0
    }
}

/// Validates options against `spec.parameters` (no checks when that is not an object).
pub fn validate_options(spec: &Value, options: &Map<String, Value>) -> Result<(), OptionsError> {
    let Some(Value::Object(parameters)) = spec.get("parameters") else {
        return Ok(());
    };
    let mut errors = Vec::new();
    for (key, schema) in parameters {
        let (Some(value), Value::Object(schema)) = (options.get(key), schema) else {
            continue;
        };
        check_parameter(key, schema, value, &mut errors);
    }
    if errors.is_empty() {
        Ok(())
    } else {
        Err(OptionsError(errors))
    }
}

fn check_parameter(
    key: &str,
    schema: &Map<String, Value>,
    value: &Value,
    errors: &mut Vec<String>,
) {
    let Some(parameter_type) = schema
        .get("type")
        .and_then(Value::as_str)
        .and_then(ParameterType::parse)
    else {
        return;
    };
    match parameter_type {
        ParameterType::Integer => match PyNumber::of(value).filter(PyNumber::is_int) {
            None => errors.push(format!("{key}: expected integer, got {}", py_repr(value))),
            Some(number) => {
                if let Some(range) = out_of_range(&number, schema) {
                    errors.push(format!(
                        "{key}: value out of range ({} not in {range})",
                        py_repr(value)
                    ));
                }
            }
        },
        ParameterType::Boolean if !value.is_boolean() => {
            errors.push(format!("{key}: expected boolean, got {}", py_repr(value)))
        }
        ParameterType::Enum
            if !value
                .as_str()
                .is_some_and(|v| enum_contains(schema.get("values"), v)) =>
        {
            errors.push(format!(
                "{key}: invalid enum {} (allowed: {})",
                py_repr(value),
                allowed(schema)
            ))
        }
        ParameterType::Text => {
            let limit = schema
                .get("max_length")
                .and_then(super::number::as_integer)
                .unwrap_or(super::fields::DEFAULT_TEXT_MAX_LENGTH);
            if value.as_str().is_none_or(|text| text.len() as i128 > limit) {
                errors.push(format!("{key}: expected text <= {limit} UTF-8 bytes"));
            }
        }
        ParameterType::Id if !value.as_str().is_some_and(is_safe_identifier) => errors.push(
            format!("{key}: expected safe identifier, got {}", py_repr(value)),
        ),
        ParameterType::Table => check_table(key, schema, value, errors),
        _ => {}
    }
}

/// `Some("min..max")` when the number breaks a declared bound.
fn out_of_range(number: &PyNumber, schema: &Map<String, Value>) -> Option<String> {
    let min = schema.get("min").and_then(PyNumber::of);
    let max = schema.get("max").and_then(PyNumber::of);
    let below = min
        .as_ref()
        .is_some_and(|m| number.compare(m) == Some(Ordering::Less));
    let above = max
        .as_ref()
        .is_some_and(|m| number.compare(m) == Some(Ordering::Greater));
    (below || above).then(|| {
        let show = |bound: Option<&Value>| bound.map(py_repr).unwrap_or_default();
        format!("{}..{}", show(schema.get("min")), show(schema.get("max")))
    })
}

fn allowed(schema: &Map<String, Value>) -> String {
    match schema.get("values") {
        Some(Value::Array(values)) => values.iter().map(py_repr).collect::<Vec<_>>().join(", "),
        Some(other) => py_repr(other),
        None => String::new(),
    }
}

fn check_table(path: &str, schema: &Map<String, Value>, value: &Value, errors: &mut Vec<String>) {
    let columns = match schema.get("columns") {
        Some(Value::Object(columns)) if !columns.is_empty() => columns,
        _ => {
            errors.push(format!(
                "{path}: table schema requires a non-empty 'columns' field-tree"
            ));
            return;
        }
    };
    let Value::Object(rows) = value else {
        errors.push(format!("{path}: expected a keyed table object"));
        return;
    };
    for (row_key, row) in rows {
        check_fields(&format!("{path}.{row_key}"), columns, row, errors);
    }
}

/// A row or `object` node: unknown keys rejected, fields required unless `required: false`.
fn check_fields(path: &str, fields: &Map<String, Value>, value: &Value, errors: &mut Vec<String>) {
    let Value::Object(map) = value else {
        errors.push(format!("{path}: expected object"));
        return;
    };
    for key in map.keys().filter(|key| !fields.contains_key(*key)) {
        errors.push(format!("{path}: unknown field {}", py_repr_str(key)));
    }
    for (key, node) in fields {
        let required = node
            .get("required")
            .is_none_or(|flag| flag != &Value::Bool(false));
        match map.get(key) {
            None if required => errors.push(format!("{path}: missing field {}", py_repr_str(key))),
            None => {}
            Some(item) => check_node(&format!("{path}.{key}"), node, item, errors),
        }
    }
}

fn check_node(path: &str, node: &Value, value: &Value, errors: &mut Vec<String>) {
    let Value::Object(node) = node else {
        errors.push(format!("{path}: invalid node schema"));
        return;
    };
    let declared = node.get("type").and_then(Value::as_str);
    let Some(column_type) = declared.and_then(ColumnType::parse) else {
        return errors.push(format!(
            "{path}: unsupported node type {}",
            declared.map_or("None".to_string(), py_repr_str)
        ));
    };
    match column_type {
        ColumnType::Object => match node.get("fields") {
            Some(Value::Object(fields)) => check_fields(path, fields, value, errors),
            _ => errors.push(format!(
                "{path}: object node requires a 'fields' field-tree"
            )),
        },
        ColumnType::Integer => match PyNumber::of(value).filter(PyNumber::is_int) {
            None => errors.push(format!("{path}: expected integer, got {}", py_repr(value))),
            Some(number) => {
                for (bound, breaks, word) in [
                    ("min", Ordering::Less, "below min"),
                    ("max", Ordering::Greater, "above max"),
                ] {
                    let limit = node.get(bound).and_then(PyNumber::of);
                    if limit.is_some_and(|limit| number.compare(&limit) == Some(breaks)) {
                        errors.push(format!(
                            "{path}: {word} {} (got {})",
                            py_repr(&node[bound]),
                            py_repr(value)
                        ));
                    }
                }
            }
        },
        ColumnType::Boolean if !value.is_boolean() => {
            errors.push(format!("{path}: expected boolean, got {}", py_repr(value)))
        }
        ColumnType::Enum
            if !value
                .as_str()
                .is_some_and(|v| enum_contains(node.get("values"), v)) =>
        {
            errors.push(format!(
                "{path}: invalid enum {} (allowed: {})",
                py_repr(value),
                allowed(node)
            ))
        }
        ColumnType::Boolean | ColumnType::Enum => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn spec() -> Value {
        json!({"parameters": {
            "best_of": {"type": "integer", "min": 1, "max": 9},
            "fast": {"type": "boolean"},
            "mode": {"type": "enum", "values": ["a", "b"]},
            "balance": {"type": "table", "columns": {
                "hp": {"type": "integer", "min": 1},
                "skill": {"type": "object", "fields": {"dmg": {"type": "integer", "max": 50}}},
                "note": {"type": "enum", "values": ["x"], "required": false}}}
        }})
    }

    fn check(options: Value) -> Result<(), OptionsError> {
        validate_options(&spec(), options.as_object().unwrap())
    }

    #[test]
    fn scalars_are_checked_and_unknown_keys_pass() {
        assert!(check(json!({"best_of": 3, "fast": true, "mode": "a", "other": [1]})).is_ok());
        let error = check(json!({"best_of": 0, "fast": 1, "mode": "c"})).unwrap_err();
        assert_eq!(
            error.to_string(),
            "best_of: value out of range (0 not in 1..9); fast: expected boolean, got 1; mode: invalid enum 'c' (allowed: 'a', 'b')"
        );
        assert_eq!(
            check(json!({"best_of": 2.0})).unwrap_err().0,
            ["best_of: expected integer, got 2.0"]
        );
    }

    #[test]
    fn tables_report_every_path() {
        let error = check(json!({"balance": {
            "warrior": {"hp": 0, "skill": {"dmg": 60, "extra": 1}},
            "mage": {"skill": {"dmg": "x"}, "bogus": true},
            "rogue": 5
        }}))
        .unwrap_err();
        assert_eq!(
            error.0,
            [
                "balance.warrior.hp: below min 1 (got 0)",
                "balance.warrior.skill: unknown field 'extra'",
                "balance.warrior.skill.dmg: above max 50 (got 60)",
                "balance.mage: unknown field 'bogus'",
                "balance.mage: missing field 'hp'",
                "balance.mage.skill.dmg: expected integer, got 'x'",
                "balance.rogue: expected object",
            ]
        );
        assert_eq!(
            check(json!({"balance": [1]})).unwrap_err().0,
            ["balance: expected a keyed table object"]
        );
    }

    #[test]
    fn options_text_must_be_an_object() {
        assert!(parse_options(Some("[1]")).is_err());
        assert!(parse_options(Some("{")).is_err());
        assert_eq!(parse_options(None).unwrap().len(), 0);
    }
}
