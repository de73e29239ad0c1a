//! Lint of `messages`: names, directions, field schemas and constraints, the `action` enum,
//! and schemas the runtime lookup would find ambiguous.

use serde_json::{Map, Value};

use super::{Check, Findings, join, kind, unknown_keys};
use crate::spec::flow::MessageShape;
use crate::spec::message::Direction;
use crate::spec::model::{FieldType, JsonContainer};
use crate::spec::number::{PyNumber, is_integer};
use crate::spec::pyrepr::py_repr_str;

/// A message as later passes need it: where it is, its name, direction and fields.
pub struct DeclaredMessage<'a> {
    pub path: String,
    pub name: &'a str,
    pub direction: Option<Direction>,
    pub fields: Option<&'a Map<String, Value>>,
}

impl DeclaredMessage<'_> {
    /// Whether a frame travelling `direction` may use this schema.
    pub fn travels(&self, direction: Direction) -> bool {
        self.direction
            .is_some_and(|declared| declared.carries(direction))
    }

    pub fn action_values(&self) -> Vec<&str> {
        self.fields
            .and_then(|fields| fields.get("action"))
            .and_then(|action| action.get("values"))
            .and_then(Value::as_array)
            .map(|values| values.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default()
    }
}

impl MessageShape for DeclaredMessage<'_> {
    fn host_sends(&self) -> bool {
        self.travels(Direction::HostToGuest)
    }

    fn actions(&self) -> Vec<&str> {
        self.action_values()
    }

    fn field_names(&self) -> Vec<&str> {
        self.fields
            .map(|fields| fields.keys().map(String::as_str).collect())
            .unwrap_or_default()
    }
}

pub fn lint_messages<'a>(
    messages: Option<&'a Value>,
    findings: &mut Findings,
) -> Vec<DeclaredMessage<'a>> {
    let items = match messages {
        None => {
            findings.add(
                Check::Messages,
                "messages",
                "required: a non-empty array of message schemas",
            );
            return Vec::new();
        }
        Some(Value::Array(items)) if items.is_empty() => {
            findings.add(Check::Messages, "messages", "must not be empty");
            return Vec::new();
        }
        Some(Value::Array(items)) => items,
        Some(other) => {
            findings.add(
                Check::Messages,
                "messages",
                format!("expected an array, found {}", kind(other)),
            );
            return Vec::new();
        }
    };
    let mut declared: Vec<DeclaredMessage> = Vec::new();
    for (index, item) in items.iter().enumerate() {
        let path = format!("messages[{index}]");
        let Value::Object(message) = item else {
            findings.add(
                Check::MessageNotObject,
                &path,
                format!("expected a message object, found {}", kind(item)),
            );
            continue;
        };
        if let Some(entry) = lint_message(&path, message, &declared, findings) {
            declared.push(entry);
        }
    }
    lint_ambiguity(&declared, findings);
    for direction in [Direction::GuestToHost, Direction::HostToGuest] {
        if !declared.is_empty() && !declared.iter().any(|m| m.travels(direction)) {
            findings.add(
                Check::DirectionUncovered,
                "messages",
                format!("no message can travel {direction}"),
            );
        }
    }
    declared
}

fn lint_message<'a>(
    path: &str,
    message: &'a Map<String, Value>,
    earlier: &[DeclaredMessage],
    findings: &mut Findings,
) -> Option<DeclaredMessage<'a>> {
    unknown_keys(
        message,
        &["name", "direction", "fields", "description"],
        path,
        findings,
    );
    let name = match message.get("name") {
        Some(Value::String(name)) if !name.is_empty() => name.as_str(),
        Some(Value::String(_)) => {
            findings.add(Check::MessageName, join(path, "name"), "must not be empty");
            ""
        }
        None => {
            findings.add(Check::MessageName, join(path, "name"), "required");
            ""
        }
        Some(other) => {
            findings.add(
                Check::MessageName,
                join(path, "name"),
                format!("expected a string, found {}", kind(other)),
            );
            ""
        }
    };
    if let Some(first) = earlier.iter().find(|m| !name.is_empty() && m.name == name) {
        findings.add(
            Check::MessageNameDuplicate,
            join(path, "name"),
            format!(
                "duplicate message name {} (first declared at {})",
                py_repr_str(name),
                first.path
            ),
        );
    }
    let direction = match message.get("direction") {
        None => {
            findings.add(
                Check::MessageDirection,
                join(path, "direction"),
                "required: host_to_guest, guest_to_host or both",
            );
            None
        }
        Some(declared) => {
            let direction = declared.as_str().and_then(Direction::parse);
            if direction.is_none() {
                findings.add(
                    Check::MessageDirection,
                    join(path, "direction"),
                    format!("must be host_to_guest, guest_to_host or both, found {declared}"),
                );
            }
            direction
        }
    };
    let fields_path = join(path, "fields");
    let fields = match message.get("fields") {
        Some(Value::Object(fields)) if !fields.is_empty() => Some(fields),
        Some(Value::Object(_)) => {
            findings.add(
                Check::MessageFields,
                &fields_path,
                "must declare at least one field",
            );
            None
        }
        None => {
            findings.add(
                Check::MessageFields,
                &fields_path,
                "required: an object of field schemas",
            );
            None
        }
        Some(other) => {
            findings.add(
                Check::MessageFields,
                &fields_path,
                format!("expected an object, found {}", kind(other)),
            );
            None
        }
    };
    if let Some(fields) = fields {
        for (key, schema) in fields {
            lint_field(&join(&fields_path, key), schema, false, findings);
        }
        lint_action(&fields_path, name, fields, findings);
    }
    Some(DeclaredMessage {
        path: path.to_string(),
        name,
        direction,
        fields,
    })
}

/// The engine finds a message's schema by its `action`, so every schema needs an action enum.
fn lint_action(
    fields_path: &str,
    name: &str,
    fields: &Map<String, Value>,
    findings: &mut Findings,
) {
    let path = join(fields_path, "action");
    let Some(Value::Object(action)) = fields.get("action") else {
        if !fields.contains_key("action") {
            findings.add(
                Check::ActionMissing,
                &path,
                "missing: messages are matched by their action, so declare an enum field `action`",
            );
        }
        return;
    };
    if action.get("type").and_then(Value::as_str) != Some("enum") {
        findings.add(
            Check::ActionNotEnum,
            &path,
            "must be an enum (messages are matched by their action value)",
        );
        return;
    }
    if action.get("required") != Some(&Value::Bool(true)) {
        findings.add(
            Check::ActionNotRequired,
            &path,
            "should be required: true (a frame without an action matches nothing)",
        );
    }
    let names_itself = action
        .get("values")
        .and_then(Value::as_array)
        .is_some_and(|values| values.iter().any(|v| v.as_str() == Some(name)));
    if !name.is_empty() && !names_itself {
        findings.add(
            Check::ActionOwnName,
            &path,
            format!(
                "enum values should contain the message name {}",
                py_repr_str(name)
            ),
        );
    }
}

/// Two schemas that share an action value and a direction make the runtime lookup fail.
fn lint_ambiguity(declared: &[DeclaredMessage], findings: &mut Findings) {
    for (index, later) in declared.iter().enumerate() {
        for earlier in &declared[..index] {
            let overlapping = [Direction::GuestToHost, Direction::HostToGuest]
                .into_iter()
                .any(|d| earlier.travels(d) && later.travels(d));
            if !overlapping {
                continue;
            }
            let earlier_actions = earlier.action_values();
            for action in later
                .action_values()
                .into_iter()
                .filter(|a| earlier_actions.contains(a))
            {
                findings.add(Check::ActionAmbiguous,
                    join(&later.path, "fields.action"),
                    format!(
                        "action {} is also declared by {} in an overlapping direction; frames would be ambiguous",
                        py_repr_str(action),
                        earlier.path
                    ),
                );
            }
        }
    }
}

/// Keys each field type understands, besides `type`, `required` and `description`.
fn constraint_keys(field_type: FieldType) -> &'static [&'static str] {
    match field_type {
        FieldType::Integer => &["min", "max"],
        FieldType::Enum => &["values"],
        FieldType::Text | FieldType::Ciphertext | FieldType::OtBlob => &["max_length"],
        FieldType::Array => &["items", "min_items", "max_items", "max_total_bytes"],
        FieldType::Json => &["container", "max_total_bytes"],
        _ => &[],
    }
}

/// Lints one field schema. `as_item` is set for an array's `items` schema.
fn lint_field(path: &str, schema: &Value, as_item: bool, findings: &mut Findings) {
    let Value::Object(schema) = schema else {
        findings.add(
            Check::FieldNotObject,
            path,
            format!("field schema must be an object, found {}", kind(schema)),
        );
        return;
    };
    let field_type = match schema.get("type") {
        Some(Value::String(t)) => match FieldType::parse(t) {
            Some(field_type) => field_type,
            None => return unknown_field_type(path, t, findings),
        },
        None => {
            findings.add(
                Check::FieldType,
                join(path, "type"),
                format!("required; one of {}", FieldType::names()),
            );
            return;
        }
        Some(other) => {
            findings.add(
                Check::FieldType,
                join(path, "type"),
                format!("expected a string, found {}", kind(other)),
            );
            return;
        }
    };
    if as_item && field_type == FieldType::Array {
        findings.add(
            Check::ArrayItems,
            join(path, "type"),
            "array items must be scalar (nested arrays are not allowed)",
        );
        return;
    }
    let mut known = vec!["type", "required", "description"];
    known.extend_from_slice(constraint_keys(field_type));
    unknown_keys(schema, &known, path, findings);
    if let Some(required) = schema.get("required").filter(|r| !r.is_boolean()) {
        findings.add(Check::RequiredNotBoolean,
            join(path, "required"),
            format!("must be true or false, found {required} (only a literal true makes a field required)"),
        );
    }
    match field_type {
        FieldType::Integer => lint_bounds(path, schema, "min", "max", false, findings),
        FieldType::Enum => lint_enum_values(path, schema.get("values"), findings),
        FieldType::Text | FieldType::Ciphertext | FieldType::OtBlob => {
            positive_integer(path, schema, "max_length", findings)
        }
        FieldType::Array => {
            match schema.get("items") {
                Some(items) => lint_field(&join(path, "items"), items, true, findings),
                None => findings.add(
                    Check::ArrayItems,
                    join(path, "items"),
                    "required: the schema of each element",
                ),
            }
            lint_bounds(path, schema, "min_items", "max_items", true, findings);
            positive_integer(path, schema, "max_total_bytes", findings);
        }
        FieldType::Json => {
            if let Some(container) = schema.get("container")
                && container.as_str().and_then(JsonContainer::parse).is_none()
            {
                findings.add(
                    Check::JsonContainer,
                    join(path, "container"),
                    format!("must be any, object or array, found {container}"),
                );
            }
            positive_integer(path, schema, "max_total_bytes", findings);
        }
        _ => {}
    }
}

/// A `type` that names no field type, with a hint for the usual mix-ups.
fn unknown_field_type(path: &str, name: &str, findings: &mut Findings) {
    let hint = match name {
        "string" | "str" => " (use text, or enum for fixed values)",
        "number" | "int" | "float" => " (use integer)",
        "bool" => " (use boolean)",
        "object" => " (use json with container: object)",
        _ => "",
    };
    findings.add(
        Check::FieldType,
        join(path, "type"),
        format!(
            "unknown field type {}{hint}; known: {}",
            py_repr_str(name),
            FieldType::names()
        ),
    );
}

/// `values` of an enum: a non-empty array of distinct strings.
pub fn lint_enum_values(path: &str, values: Option<&Value>, findings: &mut Findings) {
    let values_path = join(path, "values");
    let items = match values {
        Some(Value::Array(items)) if !items.is_empty() => items,
        Some(Value::Array(_)) => {
            return findings.add(
                Check::EnumValues,
                values_path,
                "must not be empty (nothing would be accepted)",
            );
        }
        None => {
            return findings.add(
                Check::EnumValues,
                values_path,
                "required: the accepted strings",
            );
        }
        Some(other) => {
            return findings.add(
                Check::EnumValues,
                values_path,
                format!("expected an array of strings, found {}", kind(other)),
            );
        }
    };
    for (index, item) in items.iter().enumerate() {
        match item {
            Value::String(text) if items[..index].iter().any(|earlier| earlier == item) => findings
                .add(
                    Check::EnumValueDuplicate,
                    format!("{values_path}[{index}]"),
                    format!("duplicate value {}", py_repr_str(text)),
                ),
            Value::String(_) => {}
            other => findings.add(
                Check::EnumValues,
                format!("{values_path}[{index}]"),
                format!("expected a string, found {}", kind(other)),
            ),
        }
    }
}

/// Numeric `low`/`high` bounds: numbers (integers when `integers_only`), low <= high.
pub fn lint_bounds(
    path: &str,
    schema: &Map<String, Value>,
    low: &str,
    high: &str,
    integers_only: bool,
    findings: &mut Findings,
) {
    let mut bound = |key: &str| -> Option<PyNumber> {
        let value = schema.get(key)?;
        match PyNumber::of(value) {
            Some(number)
                if integers_only
                    && (!number.is_int() || matches!(number, PyNumber::Int(n) if n < 0)) =>
            {
                findings.add(
                    Check::Bounds,
                    join(path, key),
                    format!("expected a non-negative integer, found {value}"),
                );
                None
            }
            Some(number) => Some(number),
            None => {
                findings.add(
                    Check::Bounds,
                    join(path, key),
                    format!("expected a number, found {}", kind(value)),
                );
                None
            }
        }
    };
    let (low_value, high_value) = (bound(low), bound(high));
    if let (Some(a), Some(b)) = (low_value, high_value)
        && a.compare(&b) == Some(std::cmp::Ordering::Greater)
    {
        findings.add(
            Check::BoundsInverted,
            join(path, low),
            format!(
                "{low} {} is greater than {high} {}",
                schema[low], schema[high]
            ),
        );
    }
}

/// An optional size limit that must be a positive integer when present.
pub fn positive_integer(
    path: &str,
    schema: &Map<String, Value>,
    key: &str,
    findings: &mut Findings,
) {
    if let Some(value) = schema.get(key) {
        let positive = is_integer(value)
            && PyNumber::of(value).and_then(|n| n.compare(&PyNumber::Int(0)))
                == Some(std::cmp::Ordering::Greater);
        if !positive {
            findings.add(
                Check::SizeLimit,
                join(path, key),
                format!("expected a positive integer, found {value}"),
            );
        }
    }
}
