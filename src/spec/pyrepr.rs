//! Python `repr()`/`str()` of JSON values, for error texts that must read like the reference's.

use serde_json::Value;

use crate::canonical::{self, PyJson};

/// Python `repr(value)` of a parsed JSON value (`None`, `True`, `'text'`, `[1, 'a']`, ...).
pub fn py_repr(value: &Value) -> String {
    let mut out = String::new();
    write_repr(&mut out, value);
    out
}

/// Python `str(value)`: like `repr` except that a string is itself.
pub fn py_str(value: &Value) -> String {
    match value {
        Value::String(text) => text.clone(),
        other => py_repr(other),
    }
}

/// Python `repr()` of a string: single quotes unless the text has `'` but no `"`.
pub fn py_repr_str(text: &str) -> String {
    let quote = if text.contains('\'') && !text.contains('"') {
        '"'
    } else {
        '\''
    };
    let mut out = String::with_capacity(text.len() + 2);
    out.push(quote);
    for ch in text.chars() {
        match ch {
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c == quote => {
                out.push('\\');
                out.push(c);
            }
            c if is_printable(c) => out.push(c),
            c if (c as u32) < 0x100 => out.push_str(&format!("\\x{:02x}", c as u32)),
            c if (c as u32) < 0x10000 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push_str(&format!("\\U{:08x}", c as u32)),
        }
    }
    out.push(quote);
    out
}

/// Python's `str.isprintable` for the characters that realistically reach an error text:
/// controls, separators other than the ASCII space, and format characters are escaped.
fn is_printable(ch: char) -> bool {
    let code = ch as u32;
    !(code < 0x20
        || (0x7f..=0xa0).contains(&code)
        || code == 0xad
        || code == 0x1680
        || (0x2000..=0x200f).contains(&code)
        || (0x2028..=0x202f).contains(&code)
        || (0x205f..=0x2064).contains(&code)
        || code == 0x3000
        || code == 0xfeff
        || (0xe000..=0xf8ff).contains(&code)
        || (0xfff9..=0xfffb).contains(&code))
}

fn write_repr(out: &mut String, value: &Value) {
    match value {
        Value::Null => out.push_str("None"),
        Value::Bool(true) => out.push_str("True"),
        Value::Bool(false) => out.push_str("False"),
        Value::Number(_) => {
            let number = canonical::to_canonical_string(&PyJson::from(value));
            out.push_str(match number.as_str() {
                "NaN" => "nan",
                "Infinity" => "inf",
                "-Infinity" => "-inf",
                other => other,
            });
        }
        Value::String(text) => out.push_str(&py_repr_str(text)),
        Value::Array(items) => {
            out.push('[');
            for (index, item) in items.iter().enumerate() {
                if index > 0 {
                    out.push_str(", ");
                }
                write_repr(out, item);
            }
            out.push(']');
        }
        Value::Object(map) => {
            out.push('{');
            for (index, (key, item)) in map.iter().enumerate() {
                if index > 0 {
                    out.push_str(", ");
                }
                out.push_str(&py_repr_str(key));
                out.push_str(": ");
                write_repr(out, item);
            }
            out.push('}');
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn reprs_like_python() {
        assert_eq!(py_repr(&json!(null)), "None");
        assert_eq!(py_repr(&json!("it's")), "\"it's\"");
        assert_eq!(py_repr(&json!("a'b\"c")), "'a\\'b\"c'");
        assert_eq!(
            py_repr(&json!(["x", 1, true, {"k": 2.5}])),
            "['x', 1, True, {'k': 2.5}]"
        );
        assert_eq!(py_repr_str("tab\there\u{1}é"), "'tab\\there\\x01é'");
        assert_eq!(py_str(&json!("plain")), "plain");
    }
}
