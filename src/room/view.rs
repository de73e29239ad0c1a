//! A member's view as the leader builds it: its top-level fields, each held behind an `Arc`
//! so that the views of one step can share a part every member sees (the hooks returned the
//! same part of the state to each) instead of holding 32 copies. A [`StepWork`] renders,
//! and compares with the member's previous view, each shared part once a step; what the
//! members are sent is byte for byte what whole views would give.

use std::collections::HashMap;
use std::sync::Arc;

use serde_json::{Map, Value, json};
use sha2::{Digest, Sha256};

use super::delta;
use super::json::{self, JsonLimit};

/// One member's view: an object's fields, in the order the hooks gave them.
#[derive(Debug, Clone, Default)]
pub struct View {
    fields: Vec<(String, Arc<Value>)>,
}

impl View {
    /// A view of these fields (keys are unique, as in any object).
    pub fn of_fields(fields: Vec<(String, Arc<Value>)>) -> View {
        View { fields }
    }

    /// The view an object is; `None` for any other value.
    pub fn of_value(value: Value) -> Option<View> {
        match value {
            Value::Object(map) => Some(View {
                fields: map.into_iter().map(|(k, v)| (k, Arc::new(v))).collect(),
            }),
            _ => None,
        }
    }

    /// The whole view as one object (a copy of every field).
    pub fn to_value(&self) -> Value {
        Value::Object(
            self.fields
                .iter()
                .map(|(key, value)| (key.clone(), Value::clone(value)))
                .collect::<Map<String, Value>>(),
        )
    }

    /// The field `key`, when the view has it.
    pub fn field(&self, key: &str) -> Option<&Arc<Value>> {
        self.fields.iter().find(|(k, _)| k == key).map(|(_, v)| v)
    }
}

/// The identity of a shared field: the address of its value, which stays its own while the
/// [`StepWork`] that keys by it holds the field.
fn identity(value: &Arc<Value>) -> usize {
    Arc::as_ptr(value) as usize
}

/// What the views of one step share: each field's canonical text, and each field's delta
/// against a previous field, computed once for all the members that hold the same field or
/// pair. It holds the fields it keys by, so no other value can take their addresses.
#[derive(Default)]
pub struct StepWork {
    texts: HashMap<usize, (Arc<Value>, String)>,
    deltas: HashMap<(usize, usize), SharedDelta>,
    /// The last rendered view's fields in their canonical order, each with where its text
    /// ends and the hash state after it: the next view resumes after the fields it shares.
    hashed: Vec<HashedField>,
}

/// A view's canonical text and its SHA-256 (lowercase hex).
pub struct Rendered {
    pub text: String,
    pub hash: String,
}

/// One field of the last rendered view, and the hash of its text up to this field's end.
struct HashedField {
    key: String,
    identity: usize,
    end: usize,
    state: Sha256,
}

/// The delta of one field from one value to another, and what it is keyed by.
struct SharedDelta {
    /// The two values, held so no other value takes their addresses.
    _held: (Arc<Value>, Arc<Value>),
    key: String,
    ops: Vec<Value>,
}

impl StepWork {
    /// The canonical text of `view` and its hash, checked against the room's limits.
    pub fn render(&mut self, view: &View) -> Result<Rendered, JsonLimit> {
        if view.fields.len() > json::MAX_ITEMS {
            return Err(JsonLimit::TooManyItems);
        }
        for (key, value) in &view.fields {
            json::check_string(key)?;
            if let std::collections::hash_map::Entry::Vacant(slot) =
                self.texts.entry(identity(value))
            {
                slot.insert((Arc::clone(value), json::canonical_at(value, 1)?));
            }
        }
        let mut order: Vec<(&str, usize)> = view
            .fields
            .iter()
            .map(|(key, value)| (key.as_str(), identity(value)))
            .collect();
        order.sort_unstable_by(|a, b| a.0.cmp(b.0));
        let parts: Vec<(&str, &str)> = order
            .iter()
            .map(|(key, id)| (*key, self.texts[id].1.as_str()))
            .collect();
        let (text, ends) = json::object_of_sorted(&parts);
        let hash = self.hash(&text, &order, &ends);
        Ok(Rendered { text, hash })
    }

    /// The delta that turns `previous` into `current`: what [`delta::diff`] of the two whole
    /// views gives, with each pair of distinct fields compared once a step.
    pub fn diff(&mut self, previous: &View, current: &View) -> Vec<Value> {
        let mut keys: Vec<&String> = previous
            .fields
            .iter()
            .chain(&current.fields)
            .map(|(key, _)| key)
            .collect();
        keys.sort_unstable();
        keys.dedup();
        let mut ops = Vec::new();
        for key in keys {
            match (previous.field(key), current.field(key)) {
                (Some(_), None) => ops.push(json!({"op": "remove", "path": [key]})),
                (None, Some(new)) => {
                    ops.push(json!({"op": "set", "path": [key], "value": Value::clone(new)}))
                }
                (Some(old), Some(new)) if Arc::ptr_eq(old, new) => {}
                (Some(old), Some(new)) => {
                    let shared = self
                        .deltas
                        .entry((identity(old), identity(new)))
                        .or_insert_with(|| SharedDelta {
                            _held: (Arc::clone(old), Arc::clone(new)),
                            key: key.clone(),
                            ops: delta::diff_under(old, new, key),
                        });
                    if shared.key == *key {
                        ops.extend(shared.ops.iter().cloned());
                    } else {
                        // The same pair under another key: its paths differ.
                        ops.extend(delta::diff_under(old, new, key));
                    }
                }
                (None, None) => {}
            }
        }
        delta::limited(ops, || current.to_value())
    }

    /// The SHA-256 of a view's `text` whose fields are `order` (each field's part ending at
    /// `ends`), resumed after the fields it shares with the view rendered before it.
    fn hash(&mut self, text: &str, order: &[(&str, usize)], ends: &[usize]) -> String {
        let shared = self
            .hashed
            .iter()
            .zip(order)
            .take_while(|(done, (key, id))| done.key == *key && done.identity == *id)
            .count();
        self.hashed.truncate(shared);
        let (mut start, mut state) = match self.hashed.last() {
            Some(done) => (done.end, done.state.clone()),
            None => (0, Sha256::new()),
        };
        for ((key, id), end) in order.iter().zip(ends).skip(shared) {
            state.update(&text.as_bytes()[start..*end]);
            start = *end;
            self.hashed.push(HashedField {
                key: key.to_string(),
                identity: *id,
                end: *end,
                state: state.clone(),
            });
        }
        state.update(&text.as_bytes()[start..]);
        hex::encode(state.finalize())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::canonical::sha256_hex;

    fn view(value: Value) -> View {
        View::of_value(value).unwrap()
    }

    #[test]
    fn shared_fields_render_and_diff_as_whole_views_do() {
        let log_before = Arc::new(json!([{"id": 1, "text": "a"}, {"id": 2, "text": "b"}]));
        let log_after = Arc::new(json!([{"id": 2, "text": "b"}, {"id": 3, "text": "c"}]));
        let members = ["m0", "m1", "m2"];
        let with = |log: &Arc<Value>, you: &str, extra: Option<Value>| {
            let mut fields = vec![
                ("you".to_string(), Arc::new(json!({"key": you}))),
                ("messages".to_string(), Arc::clone(log)),
            ];
            if let Some(extra) = extra {
                fields.push(("note".to_string(), Arc::new(extra)));
            }
            View::of_fields(fields)
        };
        let mut work = StepWork::default();
        for (index, member) in members.iter().enumerate() {
            let before = with(&log_before, member, (index == 1).then(|| json!(1)));
            let after = with(&log_after, member, (index == 2).then(|| json!(true)));
            let rendered = work.render(&after).unwrap();
            assert_eq!(rendered.text, json::canonical(&after.to_value()).unwrap());
            assert_eq!(rendered.hash, sha256_hex(&rendered.text), "{member}");
            assert_eq!(
                work.diff(&before, &after),
                delta::diff(&before.to_value(), &after.to_value()),
                "{member}"
            );
        }
        let logs = work.deltas.values().filter(|d| d.key == "messages");
        assert_eq!(logs.count(), 1, "the shared log compared once");
        let twice = View::of_fields(vec![
            ("a".to_string(), Arc::clone(&log_after)),
            ("b".to_string(), Arc::clone(&log_after)),
        ]);
        let twice_before = View::of_fields(vec![
            ("a".to_string(), Arc::clone(&log_before)),
            ("b".to_string(), Arc::clone(&log_before)),
        ]);
        assert_eq!(
            work.diff(&twice_before, &twice),
            delta::diff(&twice_before.to_value(), &twice.to_value()),
            "one shared part under two keys"
        );
    }

    #[test]
    fn a_view_beyond_the_limits_is_refused_as_a_whole_view_is() {
        let mut deep = json!(0);
        for _ in 0..json::MAX_DEPTH {
            deep = json!([deep]);
        }
        let too_deep = view(json!({"x": deep}));
        let render = |view: &View| StepWork::default().render(view).map(|r| r.text);
        assert_eq!(render(&too_deep), json::canonical(&too_deep.to_value()));
        assert_eq!(render(&too_deep), Err(JsonLimit::TooDeep));
        let long_key = view(json!({"k".repeat(json::MAX_STRING_BYTES + 1): 1}));
        assert_eq!(render(&long_key), Err(JsonLimit::StringTooLong));
    }

    #[test]
    fn a_delta_past_the_limits_sets_the_whole_view() {
        let before = view(json!({"items": (0..2000).collect::<Vec<_>>()}));
        let many: Map<String, Value> = (0..delta::MAX_OPS + 1)
            .map(|n| (format!("k{n}"), json!(n)))
            .collect();
        let after = view(Value::Object(many));
        assert_eq!(
            StepWork::default().diff(&before, &after),
            delta::diff(&before.to_value(), &after.to_value())
        );
    }
}
