//! protocol_id: the SHA-256 of the canonical JSON of a spec's contract subset.
//!
//! Only what changes behaviour on the wire is hashed: `messages`, `rules`, `choices`,
//! `commit_reveal`, a normalised `flow`, the parameter schemas without their `default`s, and
//! `timing`. Names, descriptions, decision settings, `spec_version` and `shadow_judge` are
//! not, so they can change without forking the protocol.

use std::collections::BTreeMap;

use crate::canonical::{self, JsonError, PyJson};

/// Keys copied verbatim when present, even when their value is null.
const VERBATIM_KEYS: [&str; 4] = ["messages", "rules", "choices", "commit_reveal"];

/// Why a document has no protocol_id.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HashError {
    #[error(transparent)]
    Json(#[from] JsonError),
    #[error("the spec must be a JSON object, found {found}")]
    NotAnObject { found: &'static str },
}

/// Hashes a spec file's raw bytes exactly as the reference does.
pub fn protocol_id_of_bytes(bytes: &[u8]) -> Result<String, HashError> {
    protocol_id_of_pyjson(&canonical::parse(bytes)?)
}

/// Hashes an already parsed spec (server registrations, fetched specs).
pub fn protocol_id(spec: &serde_json::Value) -> Result<String, HashError> {
    protocol_id_of_pyjson(&PyJson::from(spec))
}

pub(crate) fn protocol_id_of_pyjson(spec: &PyJson) -> Result<String, HashError> {
    let text = canonical::to_canonical_string(&contract(spec)?);
    Ok(canonical::sha256_hex(text))
}

/// The contract subset of a spec (what the hash covers), as an object.
pub fn contract(spec: &PyJson) -> Result<PyJson, HashError> {
    let Some(spec) = spec.as_object() else {
        return Err(HashError::NotAnObject {
            found: kind_name(spec),
        });
    };
    let mut out = BTreeMap::new();
    for key in VERBATIM_KEYS {
        if let Some(value) = spec.get(key) {
            out.insert(key.to_string(), value.clone());
        }
    }
    let flow = flow_contract(spec.get("flow"));
    if !flow.is_empty() {
        out.insert("flow".to_string(), PyJson::Object(flow));
    }
    if let Some(PyJson::Object(parameters)) = spec.get("parameters") {
        out.insert("parameters".to_string(), parameters_contract(parameters));
    }
    if let Some(timing) = spec.get("timing") {
        out.insert("timing".to_string(), timing.clone());
    }
    Ok(PyJson::Object(out))
}

/// `flow` keeps truthy `phases`, a non-default `mode`, and that mode's own sub-object.
fn flow_contract(flow: Option<&PyJson>) -> BTreeMap<String, PyJson> {
    let mut out = BTreeMap::new();
    let Some(PyJson::Object(flow)) = flow else {
        return out;
    };
    if let Some(phases) = flow.get("phases").filter(|phases| phases.is_truthy()) {
        out.insert("phases".to_string(), phases.clone());
    }
    let Some(mode) = flow.get("mode").and_then(PyJson::as_str) else {
        return out;
    };
    if mode.is_empty() || mode == "session_loop" {
        return out;
    }
    out.insert("mode".to_string(), PyJson::Str(mode.to_string()));
    let mode_key = match mode {
        "simultaneous_round" => Some("round"),
        "authoritative_realtime" => Some("realtime"),
        "authoritative_group" => Some("group"),
        _ => None,
    };
    if let Some(key) = mode_key
        && let Some(sub @ PyJson::Object(_)) = flow.get(key)
    {
        out.insert(key.to_string(), sub.clone());
    }
    out
}

/// Parameter schemas lose their top-level `default` (values are not part of the contract).
fn parameters_contract(parameters: &BTreeMap<String, PyJson>) -> PyJson {
    let stripped = parameters
        .iter()
        .map(|(name, schema)| {
            let schema = match schema {
                PyJson::Object(fields) => {
                    let mut fields = fields.clone();
                    fields.remove("default");
                    PyJson::Object(fields)
                }
                other => other.clone(),
            };
            (name.clone(), schema)
        })
        .collect();
    PyJson::Object(stripped)
}

fn kind_name(value: &PyJson) -> &'static str {
    match value {
        PyJson::Null => "null",
        PyJson::Bool(_) => "a boolean",
        PyJson::Int(_) | PyJson::Float(_) => "a number",
        PyJson::Str(_) => "a string",
        PyJson::Array(_) => "an array",
        PyJson::Object(_) => "an object",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn contract_text(spec: &str) -> String {
        let parsed = canonical::parse(spec.as_bytes()).unwrap();
        canonical::to_canonical_string(&contract(&parsed).unwrap())
    }

    #[test]
    fn flow_normalisation() {
        assert_eq!(
            contract_text(r#"{"flow":{"mode":"session_loop","phases":[]}}"#),
            "{}"
        );
        assert_eq!(
            contract_text(r#"{"flow":{"mode":"","end_when":"x"}}"#),
            "{}"
        );
        assert_eq!(
            contract_text(r#"{"flow":{"mode":"free","round":{"a":1}}}"#),
            r#"{"flow":{"mode":"free"}}"#
        );
        assert_eq!(
            contract_text(
                r#"{"flow":{"mode":"simultaneous_round","round":{"a":1},"realtime":{}}}"#
            ),
            r#"{"flow":{"mode":"simultaneous_round","round":{"a":1}}}"#
        );
        assert_eq!(
            contract_text(r#"{"flow":{"mode":"sequenced_turn"}}"#),
            r#"{"flow":{"mode":"sequenced_turn"}}"#
        );
    }

    #[test]
    fn parameters_lose_only_top_level_defaults() {
        assert_eq!(
            contract_text(
                r#"{"parameters":{"a":{"type":"integer","default":3},"b":{"columns":{"default":1}},"c":5}}"#
            ),
            r#"{"parameters":{"a":{"type":"integer"},"b":{"columns":{"default":1}},"c":5}}"#
        );
        assert_eq!(contract_text(r#"{"parameters":[1]}"#), "{}");
        assert_eq!(
            contract_text(r#"{"timing":null,"rules":null}"#),
            r#"{"rules":null,"timing":null}"#
        );
    }

    #[test]
    fn non_objects_are_refused() {
        assert_eq!(
            protocol_id_of_bytes(b"[1]"),
            Err(HashError::NotAnObject { found: "an array" })
        );
    }
}
