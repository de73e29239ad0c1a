//! Lint of `parameters`: known types, well-formed constraints, defaults that fit their own
//! schema, and `table` column trees.

use serde_json::{Map, Value, json};

use super::messages::{lint_bounds, lint_enum_values, positive_integer};
use super::{Check, Findings, join, kind, unknown_keys};
use crate::spec::model::{ColumnType, ParameterType};
use crate::spec::options::validate_options;

pub fn lint_parameters(parameters: Option<&Value>, findings: &mut Findings) {
    let parameters = match parameters {
        None | Some(Value::Null) => return,
        Some(Value::Object(parameters)) => parameters,
        Some(other) => {
            return findings.add(
                Check::Parameters,
                "parameters",
                format!(
                    "expected an object of parameter schemas, found {}",
                    kind(other)
                ),
            );
        }
    };
    for (name, schema) in parameters {
        let path = join("parameters", name);
        let Value::Object(schema) = schema else {
            findings.add(
                Check::ParameterNotObject,
                &path,
                format!("expected a parameter schema object, found {}", kind(schema)),
            );
            continue;
        };
        lint_parameter(&path, name, schema, findings);
    }
}

fn lint_parameter(path: &str, name: &str, schema: &Map<String, Value>, findings: &mut Findings) {
    let parameter_type = match schema.get("type") {
        None => {
            return findings.add(
                Check::ParameterType,
                join(path, "type"),
                format!("required; one of {}", ParameterType::names()),
            );
        }
        Some(declared) => match declared.as_str().and_then(ParameterType::parse) {
            Some(parameter_type) => parameter_type,
            None => {
                return findings.add(
                    Check::ParameterType,
                    join(path, "type"),
                    format!(
                        "unknown parameter type {declared}; known: {}",
                        ParameterType::names()
                    ),
                );
            }
        },
    };
    let constraints: &[&str] = match parameter_type {
        ParameterType::Integer => &["min", "max"],
        ParameterType::Enum => &["values"],
        ParameterType::Text => &["max_length"],
        ParameterType::Table => &["columns"],
        ParameterType::Boolean | ParameterType::Id => &[],
    };
    let mut known = vec!["type", "default", "description", "label"];
    known.extend_from_slice(constraints);
    unknown_keys(schema, &known, path, findings);
    match parameter_type {
        ParameterType::Integer => lint_bounds(path, schema, "min", "max", false, findings),
        ParameterType::Enum => lint_enum_values(path, schema.get("values"), findings),
        ParameterType::Text => positive_integer(path, schema, "max_length", findings),
        ParameterType::Table => {
            lint_columns(&join(path, "columns"), schema.get("columns"), findings)
        }
        ParameterType::Boolean | ParameterType::Id => {}
    }
    if let Some(default) = schema.get("default") {
        lint_default(path, name, schema, default, findings);
    }
}

/// A default is never applied by the engine, but one that fails its own schema misleads
/// everyone who reads the spec.
fn lint_default(
    path: &str,
    name: &str,
    schema: &Map<String, Value>,
    default: &Value,
    findings: &mut Findings,
) {
    let probe = json!({ "parameters": { name: schema } });
    let mut options = Map::new();
    options.insert(name.to_string(), default.clone());
    if let Err(error) = validate_options(&probe, &options) {
        for problem in error.0 {
            let detail = problem
                .strip_prefix(name)
                .unwrap_or(&problem)
                .trim_start_matches(':')
                .trim_start();
            findings.add(
                Check::ParameterDefault,
                join(path, "default"),
                format!("does not fit the schema: {detail}"),
            );
        }
    }
}

/// A table's `columns`: a non-empty tree of `object` nodes (with `fields`) and
/// integer/boolean/enum leaves.
fn lint_columns(path: &str, columns: Option<&Value>, findings: &mut Findings) {
    match columns {
        Some(Value::Object(fields)) if !fields.is_empty() => {
            lint_field_tree(path, fields, findings)
        }
        Some(Value::Object(_)) => findings.add(Check::Columns, path, "must not be empty"),
        None => findings.add(
            Check::Columns,
            path,
            "required: the field tree every row must match",
        ),
        Some(other) => findings.add(
            Check::Columns,
            path,
            format!("expected an object, found {}", kind(other)),
        ),
    }
}

fn lint_field_tree(path: &str, fields: &Map<String, Value>, findings: &mut Findings) {
    for (key, node) in fields {
        let node_path = join(path, key);
        let Value::Object(node) = node else {
            findings.add(
                Check::Columns,
                &node_path,
                format!("expected a node schema object, found {}", kind(node)),
            );
            continue;
        };
        if let Some(required) = node.get("required").filter(|r| !r.is_boolean()) {
            findings.add(
                Check::RequiredNotBoolean,
                join(&node_path, "required"),
                format!("must be true or false, found {required}"),
            );
        }
        match node
            .get("type")
            .and_then(Value::as_str)
            .and_then(ColumnType::parse)
        {
            Some(ColumnType::Object) => {
                unknown_keys(
                    node,
                    &["type", "fields", "required", "description"],
                    &node_path,
                    findings,
                );
                match node.get("fields") {
                    Some(Value::Object(inner)) if !inner.is_empty() => {
                        lint_field_tree(&join(&node_path, "fields"), inner, findings)
                    }
                    _ => findings.add(
                        Check::Columns,
                        join(&node_path, "fields"),
                        "an object node needs a non-empty fields tree",
                    ),
                }
            }
            Some(ColumnType::Integer) => {
                unknown_keys(
                    node,
                    &["type", "min", "max", "required", "description"],
                    &node_path,
                    findings,
                );
                lint_bounds(&node_path, node, "min", "max", false, findings);
            }
            Some(ColumnType::Boolean) => unknown_keys(
                node,
                &["type", "required", "description"],
                &node_path,
                findings,
            ),
            Some(ColumnType::Enum) => {
                unknown_keys(
                    node,
                    &["type", "values", "required", "description"],
                    &node_path,
                    findings,
                );
                lint_enum_values(&node_path, node.get("values"), findings);
            }
            None => findings.add(
                Check::Columns,
                join(&node_path, "type"),
                format!(
                    "must be object, integer, boolean or enum, found {}",
                    node.get("type")
                        .map_or("nothing".to_string(), Value::to_string)
                ),
            ),
        }
    }
}
