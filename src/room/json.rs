//! The JSON a room's state, views, events and checkpoints may hold, and its hash. Every
//! value a room hashes or signs is bounded (nesting, container sizes, string bytes) and holds
//! no floats, so both implementations agree on its canonical bytes: keys sorted by code
//! point, compact separators, raw UTF-8 with Python's escaping — exactly what the reference
//! writes with `json.dumps(sort_keys=True, separators=(",", ":"), ensure_ascii=False)`.

use serde_json::Value;
use sha2::{Digest, Sha256};

use crate::canonical::{sha256_hex, write_string};

/// Deepest nesting a room value may have (the top value is depth 0).
pub const MAX_DEPTH: usize = 16;
/// Most items in one array or object.
pub const MAX_ITEMS: usize = 1024;
/// Longest string, in UTF-8 bytes.
pub const MAX_STRING_BYTES: usize = 65536;

/// Why a value cannot be part of a room.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum JsonLimit {
    #[error("JSON nesting deeper than {MAX_DEPTH}")]
    TooDeep,
    #[error("an array or object with more than {MAX_ITEMS} items")]
    TooManyItems,
    #[error("a string longer than {MAX_STRING_BYTES} bytes")]
    StringTooLong,
    #[error("a floating-point number ({0}); rooms hold integers only")]
    Float(String),
}

/// Checks the room limits on `value`.
pub fn check(value: &Value) -> Result<(), JsonLimit> {
    check_at(value, 0)
}

/// [`check`] of the object `map` would be, without building it.
pub fn check_map(map: &serde_json::Map<String, Value>) -> Result<(), JsonLimit> {
    if map.len() > MAX_ITEMS {
        return Err(JsonLimit::TooManyItems);
    }
    map.iter().try_for_each(|(key, item)| {
        check_string(key)?;
        check_at(item, 1)
    })
}

/// [`check`] of the array `items` would be, without building it.
pub fn check_items(items: &[Value]) -> Result<(), JsonLimit> {
    if items.len() > MAX_ITEMS {
        return Err(JsonLimit::TooManyItems);
    }
    items.iter().try_for_each(|item| check_at(item, 1))
}

fn check_at(value: &Value, depth: usize) -> Result<(), JsonLimit> {
    if depth > MAX_DEPTH {
        return Err(JsonLimit::TooDeep);
    }
    match value {
        Value::Null | Value::Bool(_) => Ok(()),
        Value::Number(number) => write_integer(&mut String::new(), number),
        Value::String(text) => check_string(text),
        Value::Array(items) => {
            if items.len() > MAX_ITEMS {
                return Err(JsonLimit::TooManyItems);
            }
            items.iter().try_for_each(|item| check_at(item, depth + 1))
        }
        Value::Object(map) => {
            if map.len() > MAX_ITEMS {
                return Err(JsonLimit::TooManyItems);
            }
            map.iter().try_for_each(|(key, item)| {
                check_string(key)?;
                check_at(item, depth + 1)
            })
        }
    }
}

/// Checks the length of a string (a key or a value).
pub fn check_string(text: &str) -> Result<(), JsonLimit> {
    if text.len() > MAX_STRING_BYTES {
        Err(JsonLimit::StringTooLong)
    } else {
        Ok(())
    }
}

/// Writes an integer's digits as Python prints them (`-0` is `0`); a float is refused.
fn write_integer(out: &mut String, number: &serde_json::Number) -> Result<(), JsonLimit> {
    use std::fmt::Write;
    let start = out.len();
    write!(out, "{number}").expect("writing to a String");
    let digits = &out[start..];
    if digits.contains(['.', 'e', 'E']) {
        let float = digits.to_string();
        out.truncate(start);
        return Err(JsonLimit::Float(float));
    }
    if digits == "-0" {
        out.truncate(start);
        out.push('0');
    }
    Ok(())
}

/// The canonical bytes of a value within the limits (checked as it is written, in one pass).
pub fn canonical(value: &Value) -> Result<String, JsonLimit> {
    canonical_at(value, 0)
}

/// [`canonical`] of a value nested `depth` levels inside the value being checked.
pub fn canonical_at(value: &Value, depth: usize) -> Result<String, JsonLimit> {
    let mut out = String::new();
    write(&mut out, value, depth)?;
    Ok(out)
}

/// The canonical bytes of an object, without building a value around it.
pub fn canonical_map(map: &serde_json::Map<String, Value>) -> Result<String, JsonLimit> {
    let mut out = String::new();
    write_map(&mut out, map, 0)?;
    Ok(out)
}

/// SHA-256 (lowercase hex) of the canonical bytes.
pub fn hash(value: &Value) -> Result<String, JsonLimit> {
    canonical(value).map(sha256_hex)
}

fn write(out: &mut String, value: &Value, depth: usize) -> Result<(), JsonLimit> {
    if depth > MAX_DEPTH {
        return Err(JsonLimit::TooDeep);
    }
    match value {
        Value::Null => out.push_str("null"),
        Value::Bool(flag) => out.push_str(if *flag { "true" } else { "false" }),
        Value::Number(number) => write_integer(out, number)?,
        Value::String(text) => {
            check_string(text)?;
            write_string(out, text);
        }
        Value::Array(items) => {
            if items.len() > MAX_ITEMS {
                return Err(JsonLimit::TooManyItems);
            }
            out.push('[');
            for (index, item) in items.iter().enumerate() {
                if index > 0 {
                    out.push(',');
                }
                write(out, item, depth + 1)?;
            }
            out.push(']');
        }
        Value::Object(map) => write_map(out, map, depth)?,
    }
    Ok(())
}

fn write_map(
    out: &mut String,
    map: &serde_json::Map<String, Value>,
    depth: usize,
) -> Result<(), JsonLimit> {
    if map.len() > MAX_ITEMS {
        return Err(JsonLimit::TooManyItems);
    }
    let mut entries: Vec<(&String, &Value)> = map.iter().collect();
    entries.sort_unstable_by(|a, b| a.0.cmp(b.0));
    out.push('{');
    for (index, (key, item)) in entries.into_iter().enumerate() {
        if index > 0 {
            out.push(',');
        }
        check_string(key)?;
        write_string(out, key);
        out.push(':');
        write(out, item, depth + 1)?;
    }
    out.push('}');
    Ok(())
}

/// Whether `text` is a SHA-256 in lowercase hex.
pub fn is_hash(text: &str) -> bool {
    crate::identity::is_lower_hex_64(text)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn canonical_bytes_sort_keys_keep_unicode_and_refuse_floats() {
        let value: Value =
            serde_json::from_str(r#"{"b":[1,-0,true,null],"a":"é\n\"","ä":{"z":1,"y":2}}"#)
                .unwrap();
        assert_eq!(
            canonical(&value).unwrap(),
            r#"{"a":"é\n\"","b":[1,0,true,null],"ä":{"y":2,"z":1}}"#
        );
        let big: Value = serde_json::from_str("123456789012345678901234567890").unwrap();
        assert_eq!(canonical(&big).unwrap(), "123456789012345678901234567890");
        assert_eq!(
            canonical(&json!({"x": 1.5})),
            Err(JsonLimit::Float("1.5".into()))
        );
        let one_point_oh: Value = serde_json::from_str("1.0").unwrap();
        assert!(
            canonical(&one_point_oh).is_err(),
            "1.0 is a float in Python"
        );
    }

    #[test]
    fn limits_bound_depth_items_and_strings() {
        let mut deep = json!(0);
        for _ in 0..=MAX_DEPTH {
            deep = json!([deep]);
        }
        assert_eq!(check(&deep), Err(JsonLimit::TooDeep));
        assert_eq!(check(&deep[0]), Ok(()));
        assert_eq!(
            check(&json!(vec![0; MAX_ITEMS + 1])),
            Err(JsonLimit::TooManyItems)
        );
        assert_eq!(
            check(&json!("x".repeat(MAX_STRING_BYTES + 1))),
            Err(JsonLimit::StringTooLong)
        );
    }
}

/// The canonical text of an object from its fields' canonical texts (already rendered and
/// within the limits), so a large part shared by many objects is rendered once.
pub fn canonical_object(fields: &mut [(&str, &str)]) -> String {
    fields.sort_unstable_by(|a, b| a.0.cmp(b.0));
    object_of_sorted(fields).0
}

/// The canonical text of an object from its fields' texts in their canonical order, and
/// where each field's part of the text ends.
pub fn object_of_sorted(fields: &[(&str, &str)]) -> (String, Vec<usize>) {
    let mut out = String::with_capacity(
        fields
            .iter()
            .map(|(k, v)| k.len() + v.len() + 4)
            .sum::<usize>()
            + 2,
    );
    let mut ends = Vec::with_capacity(fields.len());
    feed_object(fields.iter().copied(), &mut out, |text, out| {
        out.push_str(text);
        ends.push(out.len());
    });
    (out, ends)
}

/// The canonical text of the object made of `fields` of `map` (a missing field is `null`),
/// without copying the map.
pub fn canonical_part(
    map: &serde_json::Map<String, Value>,
    fields: &[&str],
) -> Result<String, JsonLimit> {
    let rendered = render_fields(map, fields)?;
    let mut parts: Vec<(&str, &str)> = rendered.iter().map(|(k, v)| (*k, v.as_str())).collect();
    Ok(canonical_object(&mut parts))
}

/// SHA-256 (lowercase hex) of [`canonical_part`], its fields fed to the hash one by one
/// instead of assembled into one text first.
pub fn hash_part(
    map: &serde_json::Map<String, Value>,
    fields: &[&str],
) -> Result<String, JsonLimit> {
    let mut rendered = render_fields(map, fields)?;
    rendered.sort_unstable_by(|a, b| a.0.cmp(b.0));
    let mut hasher = Sha256::new();
    let fields = rendered.iter().map(|(key, text)| (*key, text.as_str()));
    feed_object(fields, &mut hasher, |text, out| out.put(text));
    Ok(hex::encode(hasher.finalize()))
}

fn render_fields<'a>(
    map: &serde_json::Map<String, Value>,
    fields: &[&'a str],
) -> Result<Vec<(&'a str, String)>, JsonLimit> {
    fields
        .iter()
        .map(|key| Ok((*key, canonical(map.get(*key).unwrap_or(&Value::Null))?)))
        .collect()
}

/// Where canonical text goes: a hash fed as it is written, or a string.
pub trait Sink {
    fn put(&mut self, text: &str);
}

impl Sink for Sha256 {
    fn put(&mut self, text: &str) {
        self.update(text.as_bytes());
    }
}

impl Sink for String {
    fn put(&mut self, text: &str) {
        self.push_str(text);
    }
}

/// Writes to `out` the canonical text of an object of `fields`, given in the canonical order
/// of their keys, each field's value written by `write_field`.
pub fn feed_object<'a, T, S: Sink>(
    fields: impl Iterator<Item = (&'a str, T)>,
    out: &mut S,
    mut write_field: impl FnMut(T, &mut S),
) {
    let mut key_text = String::new();
    out.put("{");
    for (index, (key, field)) in fields.enumerate() {
        key_text.clear();
        if index > 0 {
            key_text.push(',');
        }
        write_string(&mut key_text, key);
        key_text.push(':');
        out.put(&key_text);
        write_field(field, out);
    }
    out.put("}");
}

#[cfg(test)]
mod assembled {
    use super::*;
    use serde_json::json;

    #[test]
    fn an_object_assembled_from_rendered_fields_is_its_canonical_text() {
        let value = json!({"b": [1, {"z": 0, "a": "é"}], "a": null, "c": "x"});
        let map = value.as_object().unwrap();
        assert_eq!(
            canonical_part(map, &["c", "b", "a"]).unwrap(),
            canonical(&value).unwrap()
        );
        let with_missing = canonical_part(map, &["a", "d"]).unwrap();
        assert_eq!(with_missing, r#"{"a":null,"d":null}"#);
    }

    #[test]
    fn a_part_hashes_as_its_canonical_text() {
        let value = json!({"b": [1, {"z": 0, "a": "é"}], "a": null, "c": "x"});
        let map = value.as_object().unwrap();
        for fields in [&["c", "b", "a"][..], &["a", "d"], &[]] {
            let text = canonical_part(map, fields).unwrap();
            assert_eq!(hash_part(map, fields).unwrap(), sha256_hex(&text));
        }
        assert_eq!(
            hash(&value).unwrap(),
            sha256_hex(canonical(&value).unwrap())
        );
        let too_deep = (0..=MAX_DEPTH).fold(json!(0), |inner, _| json!([inner]));
        let deep = json!({"a": too_deep});
        assert_eq!(
            hash_part(deep.as_object().unwrap(), &["a"]),
            Err(JsonLimit::TooDeep)
        );
    }
}
