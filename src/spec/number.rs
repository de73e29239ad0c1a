//! Python's numeric model over JSON numbers: integers of any size, floats, and comparisons
//! between them, as `isinstance(v, int)` / `v < schema["min"]` see them.

use std::cmp::Ordering;

use serde_json::{Number, Value};

/// A JSON number classified the way Python's `json` module would have parsed it.
#[derive(Debug, Clone, PartialEq)]
pub enum PyNumber {
    /// An integer literal that fits in i128.
    Int(i128),
    /// An integer literal beyond i128 (kept as its decimal text).
    BigInt(String),
    Float(f64),
}

impl PyNumber {
    /// Classifies a JSON value; `None` for non-numbers (booleans are not numbers here).
    pub fn of(value: &Value) -> Option<PyNumber> {
        match value {
            Value::Number(number) => Some(PyNumber::of_number(number)),
            _ => None,
        }
    }

    /// Classifies a JSON number by how it was written.
    pub fn of_number(number: &Number) -> PyNumber {
        let text = number.to_string();
        if text.contains(['.', 'e', 'E']) {
            return PyNumber::Float(text.parse().unwrap_or(f64::NAN));
        }
        match text.parse::<i128>() {
            Ok(int) => PyNumber::Int(int),
            Err(_) => PyNumber::BigInt(text),
        }
    }

    pub fn is_int(&self) -> bool {
        !matches!(self, PyNumber::Float(_))
    }

    fn approx(&self) -> f64 {
        match self {
            PyNumber::Int(int) => *int as f64,
            PyNumber::BigInt(text) => text.parse().unwrap_or(f64::NAN),
            PyNumber::Float(float) => *float,
        }
    }

    /// Python's ordering between two numbers (`None` when a NaN is involved).
    pub fn compare(&self, other: &PyNumber) -> Option<Ordering> {
        match (self, other) {
            (PyNumber::Int(a), PyNumber::Int(b)) => Some(a.cmp(b)),
            _ => self.approx().partial_cmp(&other.approx()),
        }
    }
}

/// `Some(n)` when the value is a JSON integer (not a bool, not a float literal) fitting i128.
pub fn as_integer(value: &Value) -> Option<i128> {
    match value {
        Value::Number(number) => number_as_integer(number),
        _ => None,
    }
}

/// `Some(n)` when the number is an integer literal fitting i128.
pub fn number_as_integer(number: &Number) -> Option<i128> {
    match PyNumber::of_number(number) {
        PyNumber::Int(int) => Some(int),
        _ => None,
    }
}

/// True when the value is a JSON integer of any size.
pub fn is_integer(value: &Value) -> bool {
    PyNumber::of(value).is_some_and(|number| number.is_int())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn classifies_like_python() {
        let big: Value =
            serde_json::from_str("123456789012345678901234567890123456789012").unwrap();
        assert!(is_integer(&big));
        assert!(!is_integer(&json!(1.0)));
        assert!(!is_integer(&json!(true)));
        assert_eq!(as_integer(&json!(-7)), Some(-7));
        let one = PyNumber::of(&json!(1)).unwrap();
        let one_and_half = PyNumber::of(&json!(1.5)).unwrap();
        assert_eq!(one.compare(&one_and_half), Some(Ordering::Less));
        assert_eq!(
            PyNumber::of(&big).unwrap().compare(&one),
            Some(Ordering::Greater)
        );
    }
}
