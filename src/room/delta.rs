//! Deltas between two versions of a view or a checkpoint, so a room sends what changed
//! instead of the whole value: `set` (a value at a path; the empty path replaces the root),
//! `remove` (a key or an array item) and `splice` (an array range replaced by items). Any
//! correct delta is acceptable — the receiver checks the result's hash — so ours need not
//! match the reference's choice of ops; they must only be applied identically. Unlike the
//! reference, the diff tells `1` from `true` and `0` from `false` (JSON values of different
//! types are different), so a view never silently keeps a stale value. A receiver applies a
//! delta in place to the value it holds, lent to the delta ([`Lent`]), which puts back what
//! each operation replaced when a check after the delta fails; the value's canonical text,
//! kept in parts ([`KeptText`]), follows each operation the same way.

use serde_json::{Map, Value, json};

use super::json::JsonLimit;
use super::kept::{Change, Fresh, KeptText, TextUndo};

/// Most operations in one delta.
pub const MAX_OPS: usize = 1024;
/// Longest path of one operation.
pub const MAX_PATH: usize = 32;

/// Why a delta cannot be applied.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DeltaError {
    #[error("a delta must be an array of at most {MAX_OPS} operations")]
    NotOps,
    #[error("operation {0} is not a set, remove or splice with exactly its fields")]
    BadOp(usize),
    #[error("operation {0} has a path that is not up to {MAX_PATH} keys and indexes")]
    BadPath(usize),
    #[error("operation {0} names a path that does not exist")]
    Missing(usize),
    #[error("operation {0} splices outside its array")]
    BadSplice(usize),
}

/// One step of a path: an object key or an array index.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Step {
    Key(String),
    Index(usize),
}

/// Applies `ops` to a copy of `base` (tests check deltas with it).
#[cfg(test)]
pub fn apply(base: &Value, ops: &Value) -> Result<Value, DeltaError> {
    let ops = ops.as_array().ok_or(DeltaError::NotOps)?;
    let mut lent = Lent::new(base.clone(), KeptText::default());
    lent.apply(ops)?;
    Ok(lent.keep().0)
}

/// What one applied operation replaced, so that it can be put back.
#[derive(Debug)]
enum Replaced {
    /// The whole value (a `set` of the empty path).
    Root(Value),
    /// A key of the object at `parent` that a `set` gave a value: the value it held, or
    /// `None` when the `set` added it.
    Key {
        parent: Vec<Step>,
        key: String,
        held: Option<Value>,
    },
    /// A key of the object at `parent` that a `remove` took out, and its place.
    RemovedKey {
        parent: Vec<Step>,
        key: String,
        place: usize,
        held: Value,
    },
    /// An item of the array at `parent` that a `set` replaced.
    Item {
        parent: Vec<Step>,
        at: usize,
        held: Value,
    },
    /// An item of the array at `parent` that a `remove` took out.
    RemovedItem {
        parent: Vec<Step>,
        at: usize,
        held: Value,
    },
    /// The items a `splice` took out of the array at `path`, and how many it put in.
    Spliced {
        path: Vec<Step>,
        at: usize,
        inserted: usize,
        removed: Vec<Value>,
    },
}

/// What each operation of a delta applied in place replaced (moved out, not copied), in the
/// value and among its kept texts.
#[derive(Debug, Default)]
struct Undo(Vec<(Replaced, TextUndo)>);

impl Undo {
    /// Puts back everything the delta replaced: `root` and `texts` must be what it was
    /// applied to, unchanged since but for refreshing the texts.
    fn roll_back(self, root: &mut Value, texts: &mut KeptText) {
        for (replaced, text) in self.0.into_iter().rev() {
            replaced.put_back(root);
            texts.put_back(text);
        }
    }
}

/// A value lent to a delta with its kept texts: the delta applies to both in place, and they
/// go back as they were unless the checks after the delta pass and they are kept — so
/// checking a delta costs what it changes, not a copy or a rendering of the whole value.
#[derive(Debug)]
#[must_use = "a lent value is kept or rolled back"]
pub struct Lent {
    value: Value,
    texts: KeptText,
    undo: Undo,
}

impl Lent {
    /// Lends `value` with its `texts` (kept for it, or [`KeptText::default`] to render it
    /// whole when it is first hashed).
    pub fn new(value: Value, texts: KeptText) -> Lent {
        Lent {
            value,
            texts,
            undo: Undo::default(),
        }
    }

    /// The value, with the delta once applied.
    pub fn value(&self) -> &Value {
        &self.value
    }

    /// The value and its texts, brought up to date to be hashed.
    pub fn refreshed(&mut self) -> Result<(&Value, Fresh<'_>), JsonLimit> {
        Ok((&self.value, self.texts.refresh(&self.value)?))
    }

    /// Applies `ops`; on failure the value and its texts are as they were.
    pub fn apply(&mut self, ops: &[Value]) -> Result<(), DeltaError> {
        if ops.len() > MAX_OPS {
            return Err(DeltaError::NotOps);
        }
        for (index, op) in ops.iter().enumerate() {
            match apply_one(&mut self.value, &mut self.texts, op, index) {
                Ok(replaced) => self.undo.0.push(replaced),
                Err(error) => {
                    std::mem::take(&mut self.undo).roll_back(&mut self.value, &mut self.texts);
                    return Err(error);
                }
            }
        }
        Ok(())
    }

    /// The value and its texts as they were lent.
    pub fn roll_back(mut self) -> (Value, KeptText) {
        self.undo.roll_back(&mut self.value, &mut self.texts);
        (self.value, self.texts)
    }

    /// The value with the delta applied, and its texts.
    pub fn keep(self) -> (Value, KeptText) {
        (self.value, self.texts)
    }
}

impl Replaced {
    fn put_back(self, root: &mut Value) {
        fn at_path<'a>(root: &'a mut Value, path: &[Step]) -> &'a mut Value {
            resolve(root, path, 0).expect("an undo walks back the paths its delta walked")
        }
        match self {
            Replaced::Root(held) => *root = held,
            Replaced::Key { parent, key, held } => {
                if let Value::Object(map) = at_path(root, &parent) {
                    match held {
                        // An existing key keeps its place.
                        Some(held) => map.insert(key, held),
                        None => map.shift_remove(&key),
                    };
                }
            }
            Replaced::RemovedKey {
                parent,
                key,
                place,
                held,
            } => {
                if let Value::Object(map) = at_path(root, &parent) {
                    map.shift_insert(place, key, held);
                }
            }
            Replaced::Item { parent, at, held } => {
                if let Value::Array(items) = at_path(root, &parent) {
                    items[at] = held;
                }
            }
            Replaced::RemovedItem { parent, at, held } => {
                if let Value::Array(items) = at_path(root, &parent) {
                    items.insert(at, held);
                }
            }
            Replaced::Spliced {
                path,
                at,
                inserted,
                removed,
            } => {
                if let Value::Array(items) = at_path(root, &path) {
                    items.splice(at..at + inserted, removed);
                }
            }
        }
    }
}

/// Applies one operation to `root` and has `texts` follow it.
fn apply_one(
    root: &mut Value,
    texts: &mut KeptText,
    op: &Value,
    index: usize,
) -> Result<(Replaced, TextUndo), DeltaError> {
    let op = op.as_object().ok_or(DeltaError::BadOp(index))?;
    let path = parse_path(op.get("path"), index)?;
    let replaced = apply_to_value(root, op, &path, index)?;
    let change = match &replaced {
        Replaced::Root(_) | Replaced::Key { .. } | Replaced::Item { .. } => Change::Set(&path),
        Replaced::RemovedKey { .. } | Replaced::RemovedItem { .. } => Change::Remove(&path),
        Replaced::Spliced {
            at,
            inserted,
            removed,
            ..
        } => Change::Splice {
            path: &path,
            at: *at,
            deleted: removed.len(),
            inserted: *inserted,
        },
    };
    let text = texts.follow(change);
    Ok((replaced, text))
}

fn apply_to_value(
    root: &mut Value,
    op: &Map<String, Value>,
    path: &[Step],
    index: usize,
) -> Result<Replaced, DeltaError> {
    let has_exactly =
        |keys: &[&str]| op.len() == keys.len() && keys.iter().all(|k| op.contains_key(*k));
    match op.get("op").and_then(Value::as_str) {
        Some("set") if has_exactly(&["op", "path", "value"]) => {
            let value = op["value"].clone();
            let Some((last, parent)) = path.split_last() else {
                return Ok(Replaced::Root(std::mem::replace(root, value)));
            };
            match (resolve(root, parent, index)?, last) {
                (Value::Object(map), Step::Key(key)) => Ok(Replaced::Key {
                    held: map.insert(key.clone(), value),
                    parent: parent.to_vec(),
                    key: key.clone(),
                }),
                (Value::Array(items), Step::Index(at)) if *at < items.len() => Ok(Replaced::Item {
                    parent: parent.to_vec(),
                    at: *at,
                    held: std::mem::replace(&mut items[*at], value),
                }),
                _ => Err(DeltaError::Missing(index)),
            }
        }
        Some("remove") if has_exactly(&["op", "path"]) => {
            let (last, parent) = path.split_last().ok_or(DeltaError::BadOp(index))?;
            match (resolve(root, parent, index)?, last) {
                (Value::Object(map), Step::Key(key)) => {
                    let place = map
                        .keys()
                        .position(|k| k == key)
                        .ok_or(DeltaError::Missing(index))?;
                    let held = map.shift_remove(key).ok_or(DeltaError::Missing(index))?;
                    Ok(Replaced::RemovedKey {
                        parent: parent.to_vec(),
                        key: key.clone(),
                        place,
                        held,
                    })
                }
                (Value::Array(items), Step::Index(at)) if *at < items.len() => {
                    Ok(Replaced::RemovedItem {
                        parent: parent.to_vec(),
                        at: *at,
                        held: items.remove(*at),
                    })
                }
                _ => Err(DeltaError::Missing(index)),
            }
        }
        Some("splice") if has_exactly(&["op", "path", "index", "delete", "items"]) => {
            let Value::Array(target) = resolve(root, path, index)? else {
                return Err(DeltaError::BadSplice(index));
            };
            let count = |key: &str| op[key].as_u64().and_then(|n| usize::try_from(n).ok());
            let (Some(at), Some(delete), Some(items)) =
                (count("index"), count("delete"), op["items"].as_array())
            else {
                return Err(DeltaError::BadSplice(index));
            };
            if at > target.len() || delete > target.len() - at {
                return Err(DeltaError::BadSplice(index));
            }
            let removed = target
                .splice(at..at + delete, items.iter().cloned())
                .collect();
            Ok(Replaced::Spliced {
                path: path.to_vec(),
                at,
                inserted: items.len(),
                removed,
            })
        }
        _ => Err(DeltaError::BadOp(index)),
    }
}

fn parse_path(path: Option<&Value>, index: usize) -> Result<Vec<Step>, DeltaError> {
    let steps = path
        .and_then(Value::as_array)
        .filter(|steps| steps.len() <= MAX_PATH)
        .ok_or(DeltaError::BadPath(index))?;
    steps
        .iter()
        .map(|step| match step {
            Value::String(key) => Ok(Step::Key(key.clone())),
            Value::Number(n) => n
                .as_u64()
                .and_then(|n| usize::try_from(n).ok())
                .map(Step::Index)
                .ok_or(DeltaError::BadPath(index)),
            _ => Err(DeltaError::BadPath(index)),
        })
        .collect()
}

fn resolve<'a>(
    root: &'a mut Value,
    path: &[Step],
    index: usize,
) -> Result<&'a mut Value, DeltaError> {
    path.iter()
        .try_fold(root, |current, step| match (current, step) {
            (Value::Object(map), Step::Key(key)) => {
                map.get_mut(key).ok_or(DeltaError::Missing(index))
            }
            (Value::Array(items), Step::Index(at)) => {
                items.get_mut(*at).ok_or(DeltaError::Missing(index))
            }
            _ => Err(DeltaError::Missing(index)),
        })
}

/// A delta that turns `previous` into `current` (values of different JSON types always
/// differ). Falls back to one root `set` when the delta would exceed the limits.
pub fn diff(previous: &Value, current: &Value) -> Vec<Value> {
    let mut ops = Vec::new();
    diff_at(previous, current, &mut Vec::new(), &mut ops);
    limited(ops, || current.clone())
}

/// `ops` when a member would accept them as a delta (not too many, no path too long);
/// otherwise one root `set` of the value they lead to, `whole()`.
pub fn limited(ops: Vec<Value>, whole: impl FnOnce() -> Value) -> Vec<Value> {
    if within_limits(&ops) {
        ops
    } else {
        vec![json!({"op": "set", "path": [], "value": whole()})]
    }
}

/// The operations that turn the field `key` of an object from `previous` into `current`
/// (a part of what [`diff`] of the two objects gives, before its limits are applied).
pub fn diff_under(previous: &Value, current: &Value, key: &str) -> Vec<Value> {
    let mut ops = Vec::new();
    diff_at(
        previous,
        current,
        &mut vec![Value::String(key.to_string())],
        &mut ops,
    );
    ops
}

/// [`diff_under`] of two objects, without building values around them.
pub fn diff_maps_under(
    previous: &Map<String, Value>,
    current: &Map<String, Value>,
    key: &str,
) -> Vec<Value> {
    let mut ops = Vec::new();
    if previous != current {
        diff_objects(
            previous,
            current,
            &mut vec![Value::String(key.to_string())],
            &mut ops,
        );
    }
    ops
}

fn within_limits(ops: &[Value]) -> bool {
    ops.len() <= MAX_OPS
        && ops
            .iter()
            .all(|op| op["path"].as_array().is_none_or(|p| p.len() <= MAX_PATH))
}

fn diff_at(previous: &Value, current: &Value, path: &mut Vec<Value>, ops: &mut Vec<Value>) {
    if previous == current {
        return;
    }
    match (previous, current) {
        (Value::Object(before), Value::Object(after)) => diff_objects(before, after, path, ops),
        (Value::Array(before), Value::Array(after)) => {
            let prefix = before.iter().zip(after).take_while(|(a, b)| a == b).count();
            let rest = before.len().min(after.len()) - prefix;
            let suffix = before
                .iter()
                .rev()
                .zip(after.iter().rev())
                .take(rest)
                .take_while(|(a, b)| a == b)
                .count();
            let (gone, new) = (
                &before[prefix..before.len() - suffix],
                &after[prefix..after.len() - suffix],
            );
            let splice = |index: usize, delete: usize, items: &[Value]| json!({"op": "splice", "path": path.clone(), "index": index, "delete": delete, "items": items});
            match window_shift(gone, new) {
                Some(dropped) => {
                    let kept = gone.len() - dropped;
                    ops.push(splice(prefix, dropped, &[]));
                    ops.push(splice(prefix + kept, 0, &new[kept..]));
                }
                None => ops.push(splice(prefix, gone.len(), new)),
            }
        }
        _ => ops.push(json!({"op": "set", "path": path.clone(), "value": current})),
    }
}

/// Most items a window may drop from its front in one step and still be sent as a shift.
const MAX_SHIFT: usize = 64;

/// How many items `before` drops from its front to become the start of `after`, when a
/// window slid (a log keeping its last N entries): then two small splices say it instead of
/// the whole window.
fn window_shift(before: &[Value], after: &[Value]) -> Option<usize> {
    (1..before.len().min(MAX_SHIFT + 1)).find(|&dropped| {
        let kept = &before[dropped..];
        after.len() >= kept.len() && after[..kept.len()] == *kept
    })
}

fn diff_objects(
    before: &Map<String, Value>,
    after: &Map<String, Value>,
    path: &mut Vec<Value>,
    ops: &mut Vec<Value>,
) {
    let mut keys: Vec<&String> = before.keys().chain(after.keys()).collect();
    keys.sort_unstable();
    keys.dedup();
    for key in keys {
        path.push(Value::String(key.clone()));
        match (before.get(key), after.get(key)) {
            (Some(_), None) => ops.push(json!({"op": "remove", "path": path.clone()})),
            (Some(old), Some(new)) => diff_at(old, new, path, ops),
            (None, Some(new)) => ops.push(json!({"op": "set", "path": path.clone(), "value": new})),
            (None, None) => {}
        }
        path.pop();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round_trip(previous: Value, current: Value) -> Vec<Value> {
        let ops = diff(&previous, &current);
        assert_eq!(
            apply(&previous, &Value::Array(ops.clone())).unwrap(),
            current
        );
        ops
    }

    #[test]
    fn a_diff_applies_back_and_tells_one_from_true() {
        assert!(round_trip(json!({"a": 1}), json!({"a": 1})).is_empty());
        assert_eq!(
            round_trip(json!({"a": 1}), json!({"a": true})),
            [json!({"op": "set", "path": ["a"], "value": true})]
        );
        round_trip(
            json!({"a": 0, "b": [1, 2, 3]}),
            json!({"a": false, "b": [1, 9, 3, 4]}),
        );
        round_trip(json!({"log": [1, 2, 3, 4]}), json!({"log": [3, 4, 5]}));
        assert_eq!(
            round_trip(
                json!({"log": [1, 2, 3, 4, 5]}),
                json!({"log": [3, 4, 5, 6, 7]})
            ),
            [
                json!({"op": "splice", "path": ["log"], "index": 0, "delete": 2, "items": []}),
                json!({"op": "splice", "path": ["log"], "index": 3, "delete": 0, "items": [6, 7]}),
            ],
            "a sliding window is sent as what it dropped and what it gained"
        );
        round_trip(json!([0, 1, 2, 9]), json!([0, 2, 5, 9]));
        round_trip(
            json!({"x": {"y": [1]}, "gone": 1}),
            json!({"x": {"y": []}, "new": {"z": null}}),
        );
        round_trip(json!([1, 2]), json!({"now": "an object"}));
        round_trip(json!({"a": [[1], [2]]}), json!({"a": [[1], [2], [3]]}));
    }

    #[test]
    fn a_lent_value_rolls_back_to_its_exact_bytes_after_success_or_failure() {
        let original = json!({"a": [1, 2, 3], "b": {"c": 1, "d": 2}, "e": "x"});
        let ops = json!([
            {"op": "set", "path": ["a", 0], "value": 9},
            {"op": "splice", "path": ["a"], "index": 1, "delete": 2, "items": [7, 8, 9]},
            {"op": "remove", "path": ["a", 3]},
            {"op": "remove", "path": ["b", "c"]},
            {"op": "set", "path": ["b", "d"], "value": [0]},
            {"op": "set", "path": ["b", "z"], "value": null},
            {"op": "remove", "path": ["a"]},
            {"op": "set", "path": [], "value": {"whole": true}},
            {"op": "set", "path": ["whole"], "value": false},
        ]);
        let ops = ops.as_array().unwrap();
        let mut texts = KeptText::default();
        texts.refresh(&original).unwrap();
        let mut lent = Lent::new(original.clone(), texts.clone());
        lent.apply(ops).unwrap();
        assert_eq!(lent.value(), &json!({"whole": false}));
        let (_, fresh) = lent.refreshed().unwrap();
        assert_eq!(fresh.text(), r#"{"whole":false}"#);
        let (value, rolled_back) = lent.roll_back();
        assert_eq!(value.to_string(), original.to_string());
        assert_eq!(rolled_back, texts, "the texts as they were lent");
        let mut failing = ops[..7].to_vec();
        failing.push(json!({"op": "remove", "path": ["a"]}));
        let mut lent = Lent::new(original.clone(), texts.clone());
        assert_eq!(lent.apply(&failing), Err(DeltaError::Missing(7)));
        assert_eq!(lent.value().to_string(), original.to_string());
        let (value, kept) = lent.keep();
        assert_eq!(value.to_string(), original.to_string());
        assert_eq!(kept, texts);
    }

    #[test]
    fn malformed_or_out_of_range_ops_are_refused_by_number() {
        let base = json!({"a": [1, 2], "b": {"c": 1}});
        for (ops, error) in [
            (json!({"op": "set"}), DeltaError::NotOps),
            (
                json!([{"op": "set", "path": ["a"], "value": 1, "x": 0}]),
                DeltaError::BadOp(0),
            ),
            (json!([{"op": "move", "path": []}]), DeltaError::BadOp(0)),
            (json!([{"op": "remove", "path": []}]), DeltaError::BadOp(0)),
            (
                json!([{"op": "remove", "path": ["zz"]}]),
                DeltaError::Missing(0),
            ),
            (
                json!([{"op": "set", "path": ["a", 5], "value": 0}]),
                DeltaError::Missing(0),
            ),
            (
                json!([{"op": "set", "path": ["a", -1], "value": 0}]),
                DeltaError::BadPath(0),
            ),
            (
                json!([{"op": "set", "path": [true], "value": 0}]),
                DeltaError::BadPath(0),
            ),
            (
                json!([{"op": "remove", "path": ["b", "c"]}, {"op": "splice", "path": ["a"], "index": 1, "delete": 2, "items": []}]),
                DeltaError::BadSplice(1),
            ),
            (
                json!([{"op": "splice", "path": ["b"], "index": 0, "delete": 0, "items": []}]),
                DeltaError::BadSplice(0),
            ),
        ] {
            assert_eq!(apply(&base, &ops), Err(error), "{ops}");
        }
        let too_deep: Vec<Value> = (0..=MAX_PATH).map(|_| json!("k")).collect();
        assert_eq!(
            apply(&base, &json!([{"op": "set", "path": too_deep, "value": 0}])),
            Err(DeltaError::BadPath(0))
        );
    }
}
