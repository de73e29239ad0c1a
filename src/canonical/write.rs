//! The canonical writer: Python `json.dumps(sort_keys=True, ensure_ascii=False,
//! separators=(",", ":"))`, byte for byte.

use std::fmt::Write;

use super::PyJson;
use super::float::python_float_repr;

/// Serialises a value to its canonical text (keys sorted by code point, compact, raw UTF-8).
pub fn to_canonical_string(value: &PyJson) -> String {
    let mut out = String::new();
    write_value(&mut out, value);
    out
}

fn write_value(out: &mut String, value: &PyJson) {
    match value {
        PyJson::Null => out.push_str("null"),
        PyJson::Bool(flag) => out.push_str(if *flag { "true" } else { "false" }),
        PyJson::Int(digits) => out.push_str(digits),
        PyJson::Float(number) => out.push_str(&python_float_repr(*number)),
        PyJson::Str(text) => write_string(out, text),
        PyJson::Array(items) => {
            out.push('[');
            for (index, item) in items.iter().enumerate() {
                if index > 0 {
                    out.push(',');
                }
                write_value(out, item);
            }
            out.push(']');
        }
        PyJson::Object(map) => {
            out.push('{');
            for (index, (key, item)) in map.iter().enumerate() {
                if index > 0 {
                    out.push(',');
                }
                write_string(out, key);
                out.push(':');
                write_value(out, item);
            }
            out.push('}');
        }
    }
}

/// Python's `ensure_ascii=False` escaping: only `"`, `\` and C0 controls are escaped.
pub(crate) fn write_string(out: &mut String, text: &str) {
    out.push('"');
    let mut plain_start = 0;
    for (index, ch) in text.char_indices() {
        let escaped = match ch {
            '"' => "\\\"",
            '\\' => "\\\\",
            '\n' => "\\n",
            '\r' => "\\r",
            '\t' => "\\t",
            '\u{8}' => "\\b",
            '\u{c}' => "\\f",
            c if c < ' ' => "",
            _ => continue,
        };
        out.push_str(&text[plain_start..index]);
        if escaped.is_empty() {
            write!(out, "\\u{:04x}", ch as u32).expect("writing to a String");
        } else {
            out.push_str(escaped);
        }
        plain_start = index + ch.len_utf8();
    }
    out.push_str(&text[plain_start..]);
    out.push('"');
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_like_python() {
        let mut out = String::new();
        write_string(&mut out, "a\"b\\c\n\u{1}\u{1f}\u{7f}\u{2028}é/");
        assert_eq!(out, "\"a\\\"b\\\\c\\n\\u0001\\u001f\u{7f}\u{2028}é/\"");
    }
}
