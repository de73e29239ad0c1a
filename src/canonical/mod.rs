//! Python-compatible JSON: the parser and canonical writer behind every protocol_id.
//!
//! The reference hashes `json.dumps(obj, sort_keys=True, ensure_ascii=False,
//! separators=(",", ":"))` of a value read by Python's `json.load`. Reproducing those bytes
//! needs Python's number model (arbitrary integers, `repr` floats, `NaN`/`Infinity`), its
//! escaping rules and code-point key order, none of which serde_json gives, so this module
//! owns a small value type, a parser with Python's acceptance rules (which can also record
//! where each key and item is, for findings that name a line), and the writer.

mod float;
mod parse;
mod spans;
mod write;

use std::collections::BTreeMap;

pub(crate) use float::python_float_repr;
pub use parse::{MAX_DEPTH, MAX_INPUT_BYTES, parse, parse_with_spans};
pub use spans::{Position, Spans};
pub use write::to_canonical_string;
pub(crate) use write::write_string;

/// A JSON value as Python's `json` module sees it.
///
/// Objects are `BTreeMap`s: Rust orders `String` keys by UTF-8 bytes, which equals Python's
/// code-point order, and a repeated key simply overwrites (Python's last-wins rule).
#[derive(Debug, Clone, PartialEq)]
pub enum PyJson {
    Null,
    Bool(bool),
    /// An integer literal, normalised to Python's `str(int)` form (no `-0`, no leading `+`).
    Int(String),
    Float(f64),
    Str(String),
    Array(Vec<PyJson>),
    Object(BTreeMap<String, PyJson>),
}

impl PyJson {
    pub fn as_object(&self) -> Option<&BTreeMap<String, PyJson>> {
        match self {
            PyJson::Object(map) => Some(map),
            _ => None,
        }
    }

    pub fn as_str(&self) -> Option<&str> {
        match self {
            PyJson::Str(text) => Some(text),
            _ => None,
        }
    }

    /// Python truthiness (`bool(value)`), which the reference uses to decide what it keeps.
    pub fn is_truthy(&self) -> bool {
        match self {
            PyJson::Null => false,
            PyJson::Bool(flag) => *flag,
            PyJson::Int(digits) => digits != "0",
            PyJson::Float(value) => *value != 0.0,
            PyJson::Str(text) => !text.is_empty(),
            PyJson::Array(items) => !items.is_empty(),
            PyJson::Object(map) => !map.is_empty(),
        }
    }
}

/// Why a document could not be read the way Python's `json.load` reads it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum JsonError {
    #[error("file is empty")]
    Empty,
    #[error("file is {size} bytes; the limit is {limit} bytes")]
    TooLarge { size: usize, limit: usize },
    #[error("invalid UTF-8 at byte {offset}")]
    InvalidUtf8 { offset: usize },
    #[error("unexpected UTF-8 BOM at the start (save the file without a byte order mark)")]
    Bom,
    #[error("{message} at line {line} column {column}")]
    Syntax {
        message: String,
        line: usize,
        column: usize,
    },
    #[error("nesting deeper than {limit} levels at line {line} column {column}")]
    TooDeep {
        limit: usize,
        line: usize,
        column: usize,
    },
}

impl From<&serde_json::Value> for PyJson {
    /// Converts a serde value (built with `arbitrary_precision`, so number text is kept) into
    /// the Python model: a literal with `.`, `e` or `E` is a float, anything else an integer.
    fn from(value: &serde_json::Value) -> Self {
        match value {
            serde_json::Value::Null => PyJson::Null,
            serde_json::Value::Bool(flag) => PyJson::Bool(*flag),
            serde_json::Value::Number(number) => {
                let text = number.to_string();
                if text.contains(['.', 'e', 'E']) {
                    PyJson::Float(text.parse().unwrap_or(f64::NAN))
                } else {
                    PyJson::Int(parse::normalize_int(&text))
                }
            }
            serde_json::Value::String(text) => PyJson::Str(text.clone()),
            serde_json::Value::Array(items) => {
                PyJson::Array(items.iter().map(PyJson::from).collect())
            }
            serde_json::Value::Object(map) => PyJson::Object(
                map.iter()
                    .map(|(key, item)| (key.clone(), PyJson::from(item)))
                    .collect(),
            ),
        }
    }
}

/// Lowercase hex SHA-256 of some bytes.
pub fn sha256_hex(bytes: impl AsRef<[u8]>) -> String {
    use sha2::Digest;
    hex::encode(sha2::Sha256::digest(bytes.as_ref()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn truthiness_follows_python() {
        assert!(!PyJson::Int("0".into()).is_truthy());
        assert!(PyJson::Int("-1".into()).is_truthy());
        assert!(!PyJson::Float(-0.0).is_truthy());
        assert!(!PyJson::Array(vec![]).is_truthy());
        assert!(PyJson::Str(" ".into()).is_truthy());
    }

    #[test]
    fn serde_numbers_keep_python_kinds() {
        let value: serde_json::Value =
            serde_json::from_str(r#"{"a":1.0,"b":100000000000000000000000,"c":-0,"d":1e2}"#)
                .unwrap();
        let converted = PyJson::from(&value);
        assert_eq!(
            to_canonical_string(&converted),
            r#"{"a":1.0,"b":100000000000000000000000,"c":0,"d":100.0}"#
        );
    }
}
