//! Protocols: registration, the stored record, and the directory listing.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::spec::Spec;

/// Longest protocol name the server stores.
pub const MAX_NAME_CHARS: usize = 128;
/// Longest protocol description the server stores.
pub const MAX_DESCRIPTION_CHARS: usize = 2000;

/// `POST /protocols`: the whole spec plus its client-computed id (the server recomputes it).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NewProtocol {
    pub protocol_id: String,
    #[serde(default)]
    pub name: String,
    #[serde(default)]
    pub description: String,
    #[serde(rename = "type", default = "protocol")]
    pub protocol_type: String,
    pub spec_json: Value,
}

fn protocol() -> String {
    "protocol".to_string()
}

impl NewProtocol {
    /// The registration body for a spec, filled the way the reference fills it.
    pub fn for_spec(spec: &Spec) -> NewProtocol {
        let protocol_id = spec.protocol_id();
        let text = |key: &str| {
            spec.value()
                .get(key)
                .and_then(Value::as_str)
                .filter(|v| !v.is_empty())
        };
        NewProtocol {
            name: text("name").unwrap_or(&protocol_id).to_string(),
            description: text("description").unwrap_or_default().to_string(),
            protocol_type: text("type").unwrap_or("protocol").to_string(),
            spec_json: spec.value().clone(),
            protocol_id,
        }
    }
}

/// `GET /protocols/{id}` (and the 201 of a registration).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProtocolRecord {
    pub protocol_id: String,
    #[serde(default)]
    pub name: String,
    #[serde(default)]
    pub description: String,
    #[serde(rename = "type", default = "protocol")]
    pub protocol_type: String,
    pub spec_json: Value,
    /// Who registered it; `None` for the server's built-ins.
    #[serde(default)]
    pub public_key: Option<String>,
    #[serde(default)]
    pub created_at: Option<String>,
}

/// One item of `GET /protocols`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProtocolSummary {
    pub protocol_id: String,
    #[serde(default)]
    pub name: String,
    #[serde(default)]
    pub description: String,
    #[serde(rename = "type", default = "protocol")]
    pub protocol_type: String,
    #[serde(default)]
    pub created_at: Option<String>,
}

/// `GET /protocols?limit=&cursor=&q=` → newest first.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProtocolList {
    pub results: Vec<ProtocolSummary>,
    #[serde(default)]
    pub next_cursor: Option<String>,
}

/// The spec inside a protocol response: `spec_json` as an object or a JSON string, or the
/// whole body when the key is absent (all three forms exist in the wild).
pub fn spec_of_response(body: Value) -> Result<Value, String> {
    let spec = match body {
        Value::Object(mut map) if map.contains_key("spec_json") => {
            map.remove("spec_json").unwrap_or(Value::Null)
        }
        other => other,
    };
    let spec = match spec {
        Value::String(text) => {
            serde_json::from_str(&text).map_err(|e| format!("spec_json is not JSON: {e}"))?
        }
        other => other,
    };
    if spec.is_object() {
        Ok(spec)
    } else {
        Err("the protocol response holds no JSON spec object".into())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_spec_is_found_in_every_response_shape() {
        let spec = json!({"messages": []});
        assert_eq!(spec_of_response(json!({"spec_json": spec})).unwrap(), spec);
        assert_eq!(
            spec_of_response(json!({"spec_json": spec.to_string()})).unwrap(),
            spec
        );
        assert_eq!(spec_of_response(spec.clone()).unwrap(), spec);
        assert!(spec_of_response(json!({"spec_json": 3})).is_err());
    }

    #[test]
    fn registration_body_defaults_follow_the_reference() {
        let spec = Spec::from_value(json!({"messages": [], "name": ""})).unwrap();
        let body = NewProtocol::for_spec(&spec);
        assert_eq!(body.name, spec.protocol_id());
        assert_eq!(body.protocol_type, "protocol");
        let text = serde_json::to_string(&body).unwrap();
        assert!(
            text.starts_with(r#"{"protocol_id":""#)
                && text.contains(r#""type":"protocol","spec_json":{"#)
        );
    }
}
