//! The game transcript both sides sign: one SHA-256 over a stream of typed entries, each
//! written as `u64be(seq) ‖ u32be(len) type ‖ u32be(len) canonical-JSON payload`, payloads in
//! the reference's canonical JSON (sorted keys, compact, raw UTF-8, big integers as bare
//! decimals). Both sides append the same entries in the same order, so equal roots mean
//! both saw the same game; the root is what the terminal receipt signs.

use std::collections::BTreeMap;

use crypto_bigint::U2048;
use sha2::{Digest, Sha256};

use super::codec;
use crate::canonical::{PyJson, to_canonical_string};

/// A transcript under construction (only the running hash is kept).
#[derive(Clone)]
pub(crate) struct Transcript {
    hasher: Sha256,
    seq: u64,
}

impl Transcript {
    pub fn new() -> Transcript {
        Transcript {
            hasher: Sha256::new(),
            seq: 0,
        }
    }

    pub fn append(&mut self, kind: &str, payload: Payload) {
        let payload = to_canonical_string(&PyJson::Object(payload.0));
        self.hasher.update(self.seq.to_be_bytes());
        for part in [kind.as_bytes(), payload.as_bytes()] {
            self.hasher.update((part.len() as u32).to_be_bytes());
            self.hasher.update(part);
        }
        self.seq += 1;
    }

    /// The root over everything appended so far.
    pub fn root(&self) -> [u8; 32] {
        self.hasher.clone().finalize().into()
    }
}

/// One entry's payload: a JSON object built field by field.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Payload(BTreeMap<String, PyJson>);

impl Payload {
    pub fn new() -> Payload {
        Payload::default()
    }

    pub fn with(mut self, key: &str, value: PyJson) -> Payload {
        self.0.insert(key.to_string(), value);
        self
    }

    pub fn into_json(self) -> PyJson {
        PyJson::Object(self.0)
    }
}

pub(crate) fn text(value: impl Into<String>) -> PyJson {
    PyJson::Str(value.into())
}

pub(crate) fn int(value: u64) -> PyJson {
    PyJson::Int(value.to_string())
}

pub(crate) fn big(value: &U2048) -> PyJson {
    PyJson::Int(codec::big_decimal(value))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::mental_poker::vectors::primitives;
    use serde_json::Value;

    /// A JSON value of the vectors, as Python held it (integers stay integers).
    fn py(value: &Value) -> PyJson {
        match value {
            Value::Null => PyJson::Null,
            Value::Bool(flag) => PyJson::Bool(*flag),
            Value::Number(number) => PyJson::Int(number.to_string()),
            Value::String(s) => PyJson::Str(s.clone()),
            Value::Array(items) => PyJson::Array(items.iter().map(py).collect()),
            Value::Object(map) => {
                PyJson::Object(map.iter().map(|(k, v)| (k.clone(), py(v))).collect())
            }
        }
    }

    #[test]
    fn roots_match_the_reference() {
        let vectors = primitives();
        for case in vectors["transcripts"].as_array().unwrap() {
            let mut transcript = Transcript::new();
            for event in case["events"].as_array().unwrap() {
                let PyJson::Object(fields) = py(&event[1]) else {
                    panic!("payloads are objects")
                };
                transcript.append(event[0].as_str().unwrap(), Payload(fields));
            }
            assert_eq!(
                hex::encode(transcript.root()),
                case["root"].as_str().unwrap()
            );
        }
    }

    #[test]
    fn the_documented_example() {
        let mut transcript = Transcript::new();
        let payload = Payload::new()
            .with("ot_id", text("guest-0"))
            .with("z", big(&U2048::from_u64(5)))
            .with("y", int(7));
        transcript.append("mp_ot", payload);
        assert!(hex::encode(transcript.root()).starts_with("0aa1ac9d"));
    }
}
