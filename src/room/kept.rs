//! The canonical text of a room value kept in parts, so that a member hashes its view and its
//! checkpoint state after a delta at the cost of what the delta changed plus SHA-256 over the
//! bytes, not a new rendering of the whole value. A large object or array is kept as its
//! fields or items, anything small as its text; an operation of a delta marks stale the
//! innermost kept part on its path, and only stale parts are rendered when the value is next
//! hashed. What an operation replaced is put back when its delta is rolled back, so a refused
//! delta leaves the texts exactly as they were.

use std::collections::BTreeMap;

use serde_json::Value;
use sha2::{Digest, Sha256};

use super::delta::Step;
use super::json::{self, JsonLimit, MAX_ITEMS, Sink, feed_object};

/// An object or array whose canonical text reaches this many bytes is kept as its parts...
const SPLIT_BYTES: usize = 1024;
/// ...when it is nested less deeply than this; deeper ones are kept as one text, so a value
/// first kept is rendered at most this many times over (once per level kept by part).
const SPLIT_DEPTH: usize = 3;

/// The canonical text of one value, kept in parts. It follows the value through the changes
/// of a delta ([`KeptText::follow`]) and is brought up to date by [`KeptText::refresh`];
/// a root object is always kept by field, so that a checkpoint's hash can be fed from its
/// state's fields mixed with others ([`Fresh::hash_object`]).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct KeptText {
    root: Part,
}

#[derive(Debug, Clone, PartialEq, Default)]
enum Part {
    /// Not rendered since the value here changed (or never).
    #[default]
    Stale,
    /// The value's canonical text.
    Text(String),
    /// An object kept as its fields, in the canonical order of their keys.
    Object(BTreeMap<String, Part>),
    /// An array kept as its items.
    Array(Vec<Part>),
}

/// What one operation of a delta did to the value, for its texts to follow.
#[derive(Debug, Clone, Copy)]
pub enum Change<'a> {
    /// The value at this path was set: added, replaced, or the whole value (the empty path).
    Set(&'a [Step]),
    /// The key or item at this path was removed.
    Remove(&'a [Step]),
    /// `inserted` items took the place of `deleted` ones from `at` in the array at `path`.
    Splice {
        path: &'a [Step],
        at: usize,
        deleted: usize,
        inserted: usize,
    },
}

/// What a change replaced among the kept texts, to put back.
#[derive(Debug)]
pub struct TextUndo(Undo);

#[derive(Debug)]
enum Undo {
    /// The part at `path`, the innermost kept part the change reached.
    Part { path: Vec<Step>, held: Part },
    /// The field `key` of the object kept at `parent`: as it was, or absent.
    Field {
        parent: Vec<Step>,
        key: String,
        held: Option<Part>,
    },
    /// Items of the array kept at `parent`: the `inserted` ones from `at` replaced `removed`.
    Items {
        parent: Vec<Step>,
        at: usize,
        inserted: usize,
        removed: Vec<Part>,
    },
}

impl KeptText {
    /// Renders every stale part, so the texts are those of `value`: the value they were kept
    /// for, changed since only by the changes they followed. A part kept by field or item
    /// whose count differs from the value's, or a field it cannot find, is rendered again.
    /// Checks the room's limits on what it renders, and on the number of items of a part
    /// kept by items.
    pub fn refresh(&mut self, value: &Value) -> Result<Fresh<'_>, JsonLimit> {
        refresh(&mut self.root, value, 0)?;
        Ok(Fresh(&self.root))
    }

    /// Follows one change of the value: the part it touched is stale now.
    pub fn follow(&mut self, change: Change<'_>) -> TextUndo {
        let (container, last) = match change {
            Change::Set(path) | Change::Remove(path) => match path.split_last() {
                Some((last, parent)) => (parent, Some(last)),
                None => {
                    let held = std::mem::take(&mut self.root);
                    return TextUndo(Undo::Part {
                        path: Vec::new(),
                        held,
                    });
                }
            },
            Change::Splice { path, .. } => (path, None),
        };
        let (part, reached) = reach(&mut self.root, container);
        let edited = match (&mut *part, change, last) {
            _ if reached < container.len() => None,
            (Part::Object(fields), Change::Set(_), Some(Step::Key(key))) => Some(Undo::Field {
                parent: container.to_vec(),
                key: key.clone(),
                held: fields.insert(key.clone(), Part::Stale),
            }),
            (Part::Object(fields), Change::Remove(_), Some(Step::Key(key))) => {
                fields.remove(key).map(|held| Undo::Field {
                    parent: container.to_vec(),
                    key: key.clone(),
                    held: Some(held),
                })
            }
            (Part::Array(items), Change::Set(_), Some(Step::Index(at))) if *at < items.len() => {
                let held = std::mem::take(&mut items[*at]);
                Some(items_undo(container, *at, 1, vec![held]))
            }
            (Part::Array(items), Change::Remove(_), Some(Step::Index(at))) if *at < items.len() => {
                Some(items_undo(container, *at, 0, vec![items.remove(*at)]))
            }
            (
                Part::Array(items),
                Change::Splice {
                    at,
                    deleted,
                    inserted,
                    ..
                },
                None,
            ) if at <= items.len() && deleted <= items.len() - at => {
                let fresh = std::iter::repeat_with(|| Part::Stale).take(inserted);
                let removed = items.splice(at..at + deleted, fresh).collect();
                Some(items_undo(container, at, inserted, removed))
            }
            _ => None,
        };
        // Otherwise the change is inside a part kept as one text, which is stale now.
        TextUndo(edited.unwrap_or_else(|| Undo::Part {
            path: container[..reached].to_vec(),
            held: std::mem::take(part),
        }))
    }

    /// Puts back what a change replaced; changes are put back in the reverse of their order.
    pub fn put_back(&mut self, undo: TextUndo) {
        let restored = match undo.0 {
            Undo::Part { path, held } => reach_all(&mut self.root, &path).map(|part| *part = held),
            Undo::Field { parent, key, held } => match reach_all(&mut self.root, &parent) {
                Some(Part::Object(fields)) => {
                    match held {
                        Some(held) => fields.insert(key, held),
                        None => fields.remove(&key),
                    };
                    Some(())
                }
                _ => None,
            },
            Undo::Items {
                parent,
                at,
                inserted,
                removed,
            } => match reach_all(&mut self.root, &parent) {
                Some(Part::Array(items)) if at + inserted <= items.len() => {
                    items.splice(at..at + inserted, removed);
                    Some(())
                }
                _ => None,
            },
        };
        if restored.is_none() {
            // Not reachable when every change was followed; a lost text is rendered again.
            self.root = Part::Stale;
        }
    }
}

fn items_undo(parent: &[Step], at: usize, inserted: usize, removed: Vec<Part>) -> Undo {
    Undo::Items {
        parent: parent.to_vec(),
        at,
        inserted,
        removed,
    }
}

/// The innermost kept part along `path`, and how many of its steps lead to it.
fn reach<'a>(root: &'a mut Part, path: &[Step]) -> (&'a mut Part, usize) {
    let mut part = root;
    let mut reached = 0;
    for step in path {
        if child(part, step).is_none() {
            break;
        }
        part = child_mut(part, step).expect("the child was just found");
        reached += 1;
    }
    (part, reached)
}

fn child<'a>(part: &'a Part, step: &Step) -> Option<&'a Part> {
    match (part, step) {
        (Part::Object(fields), Step::Key(key)) => fields.get(key),
        (Part::Array(items), Step::Index(at)) => items.get(*at),
        _ => None,
    }
}

fn child_mut<'a>(part: &'a mut Part, step: &Step) -> Option<&'a mut Part> {
    match (part, step) {
        (Part::Object(fields), Step::Key(key)) => fields.get_mut(key),
        (Part::Array(items), Step::Index(at)) => items.get_mut(*at),
        _ => None,
    }
}

/// The part kept at exactly `path`.
fn reach_all<'a>(root: &'a mut Part, path: &[Step]) -> Option<&'a mut Part> {
    let (part, reached) = reach(root, path);
    (reached == path.len()).then_some(part)
}

fn refresh(part: &mut Part, value: &Value, depth: usize) -> Result<(), JsonLimit> {
    match (&mut *part, value) {
        (Part::Text(_), _) => Ok(()),
        (Part::Object(fields), Value::Object(map)) if fields.len() == map.len() => {
            if map.len() > MAX_ITEMS {
                return Err(JsonLimit::TooManyItems);
            }
            // A field kept as a text needs no look-up of its value.
            let mut lost = false;
            for (key, field) in fields.iter_mut() {
                if matches!(field, Part::Text(_)) {
                    continue;
                }
                let Some(item) = map.get(key) else {
                    lost = true;
                    break;
                };
                if matches!(field, Part::Stale) {
                    json::check_string(key)?;
                }
                refresh(field, item, depth + 1)?;
            }
            if lost {
                *part = build(value, depth)?;
            }
            Ok(())
        }
        (Part::Array(items), Value::Array(values)) if items.len() == values.len() => {
            if values.len() > MAX_ITEMS {
                return Err(JsonLimit::TooManyItems);
            }
            items
                .iter_mut()
                .zip(values)
                .try_for_each(|(item, value)| refresh(item, value, depth + 1))
        }
        _ => {
            *part = build(value, depth)?;
            Ok(())
        }
    }
}

/// The parts of a value nested `depth` levels deep: its text, or its fields or items when it
/// is large and not deep (the root object always).
fn build(value: &Value, depth: usize) -> Result<Part, JsonLimit> {
    if !(depth == 0 && value.is_object()) {
        let text = json::canonical_at(value, depth)?;
        let container = value.is_object() || value.is_array();
        if text.len() < SPLIT_BYTES || depth >= SPLIT_DEPTH || !container {
            return Ok(Part::Text(text));
        }
    }
    match value {
        Value::Object(map) => {
            if map.len() > MAX_ITEMS {
                return Err(JsonLimit::TooManyItems);
            }
            map.iter()
                .map(|(key, field)| {
                    json::check_string(key)?;
                    Ok((key.clone(), build(field, depth + 1)?))
                })
                .collect::<Result<_, JsonLimit>>()
                .map(Part::Object)
        }
        Value::Array(items) => items
            .iter()
            .map(|item| build(item, depth + 1))
            .collect::<Result<_, JsonLimit>>()
            .map(Part::Array),
        scalar => Ok(Part::Text(json::canonical_at(scalar, depth)?)),
    }
}

/// Kept texts with no stale part, ready to be hashed.
#[derive(Debug, Clone, Copy)]
pub struct Fresh<'a>(&'a Part);

/// One field of an object being fed: kept, or rendered by the caller.
enum Piece<'a> {
    Kept(&'a Part),
    Rendered(&'a str),
}

impl Fresh<'_> {
    /// SHA-256 (lowercase hex) of the value's canonical text.
    pub fn hash(self) -> String {
        let mut hasher = Sha256::new();
        feed(self.0, &mut hasher);
        hex::encode(hasher.finalize())
    }

    /// SHA-256 (lowercase hex) of the canonical text of the object made of the fields of
    /// this root object that `include` keeps and of `rendered` (canonical texts by key; a
    /// field of the root wins over a rendered one of the same key).
    pub fn hash_object(
        self,
        rendered: &[(&str, String)],
        include: impl Fn(&str) -> bool,
    ) -> String {
        let mut hasher = Sha256::new();
        self.feed_object(rendered, include, &mut hasher);
        hex::encode(hasher.finalize())
    }

    fn feed_object(
        self,
        rendered: &[(&str, String)],
        include: impl Fn(&str) -> bool,
        out: &mut impl Sink,
    ) {
        let mut pieces: BTreeMap<&str, Piece> = rendered
            .iter()
            .map(|(key, text)| (*key, Piece::Rendered(text)))
            .collect();
        if let Part::Object(fields) = self.0 {
            let kept = fields.iter().filter(|(key, _)| include(key));
            pieces.extend(kept.map(|(key, part)| (key.as_str(), Piece::Kept(part))));
        }
        feed_object(pieces.into_iter(), out, |piece, out| match piece {
            Piece::Kept(part) => feed(part, out),
            Piece::Rendered(text) => out.put(text),
        });
    }

    /// The whole canonical text (tests compare it with a full rendering).
    #[cfg(test)]
    pub fn text(self) -> String {
        let mut out = String::new();
        feed(self.0, &mut out);
        out
    }
}

fn feed(part: &Part, out: &mut impl Sink) {
    match part {
        Part::Text(text) => out.put(text),
        Part::Object(fields) => feed_object(
            fields.iter().map(|(key, field)| (key.as_str(), field)),
            out,
            |field, out| feed(field, out),
        ),
        Part::Array(items) => {
            out.put("[");
            for (index, item) in items.iter().enumerate() {
                if index > 0 {
                    out.put(",");
                }
                feed(item, out);
            }
            out.put("]");
        }
        // `Fresh` has none: refreshing rendered them all.
        Part::Stale => debug_assert!(false, "a stale part among fresh texts"),
    }
}

#[cfg(test)]
mod tests {
    use rand::rngs::StdRng;
    use rand::{Rng, SeedableRng};
    use serde_json::json;

    use super::*;
    use crate::room::delta::{DeltaError, Lent};

    /// A value with large arrays and objects (kept by part) nested among small ones.
    fn room_like(rng: &mut StdRng, depth: usize) -> Value {
        match rng.gen_range(0..10) {
            0..=2 if depth < 4 => {
                let most = if rng.gen_bool(0.3) { 80 } else { 6 };
                let items = rng.gen_range(0..most);
                Value::Array((0..items).map(|_| room_like(rng, depth + 1)).collect())
            }
            3..=5 if depth < 4 => {
                let most = if rng.gen_bool(0.3) { 40 } else { 6 };
                let fields = rng.gen_range(0..most);
                let map = (0..fields).map(|n| (format!("k{n}é\n"), room_like(rng, depth + 1)));
                Value::Object(map.collect())
            }
            6 => json!(rng.gen_range(-5..1_000_000)),
            7 => json!(rng.gen_bool(0.5)),
            8 => Value::Null,
            _ => json!("message \"quoted\" ü ".repeat(rng.gen_range(0..4))),
        }
    }

    /// The path of a random container in `value`, and the container.
    fn some_container<'a>(rng: &mut StdRng, value: &'a Value) -> (Vec<Value>, &'a Value) {
        let mut path = Vec::new();
        let mut at = value;
        while rng.gen_bool(0.7) {
            let next = match at {
                Value::Object(map) if !map.is_empty() => {
                    let (key, next) = map.iter().nth(rng.gen_range(0..map.len())).unwrap();
                    (json!(key), next)
                }
                Value::Array(items) if !items.is_empty() => {
                    let index = rng.gen_range(0..items.len());
                    (json!(index), &items[index])
                }
                _ => break,
            };
            if !(next.1.is_object() || next.1.is_array()) {
                break;
            }
            path.push(next.0);
            at = next.1;
        }
        (path, at)
    }

    fn with(path: &[Value], last: Value) -> Value {
        let mut path = path.to_vec();
        path.push(last);
        Value::Array(path)
    }

    /// A random delta of one to four ops of every kind that applies to `value`.
    fn some_delta(rng: &mut StdRng, value: &Value) -> Vec<Value> {
        let mut value = value.clone();
        let mut ops = Vec::new();
        for _ in 0..rng.gen_range(1..=4) {
            let (path, container) = some_container(rng, &value);
            let at_key = |key: &str| with(&path, json!(key));
            let more: Vec<Value> = match container {
                _ if rng.gen_range(0..40) == 0 => {
                    vec![json!({"op": "set", "path": [], "value": room_like(rng, 0)})]
                }
                Value::Object(map) => match map.keys().nth(rng.gen_range(0..=map.len())) {
                    Some(key) if rng.gen_bool(0.3) => {
                        vec![json!({"op": "remove", "path": at_key(key)})]
                    }
                    key => {
                        let key = key
                            .cloned()
                            .unwrap_or_else(|| format!("new {}", rng.r#gen::<u16>()));
                        let new = room_like(rng, path.len() + 1);
                        vec![json!({"op": "set", "path": at_key(&key), "value": new})]
                    }
                },
                Value::Array(items) => {
                    let len = items.len();
                    match rng.gen_range(0..4) {
                        0 if len > 0 => {
                            let at = rng.gen_range(0..len);
                            vec![json!({"op": "remove", "path": with(&path, json!(at))})]
                        }
                        1 if len > 0 => {
                            let at = rng.gen_range(0..len);
                            let new = room_like(rng, path.len() + 1);
                            vec![json!({"op": "set", "path": with(&path, json!(at)), "value": new})]
                        }
                        2 if len > 2 => {
                            // A window slides: it drops from its front and gains at its end.
                            let slid = rng.gen_range(1..=2);
                            let gained: Vec<Value> = (0..slid).map(|_| json!("new")).collect();
                            vec![
                                json!({"op": "splice", "path": path, "index": 0, "delete": slid, "items": []}),
                                json!({"op": "splice", "path": path, "index": len - slid, "delete": 0, "items": gained}),
                            ]
                        }
                        _ => {
                            let at = rng.gen_range(0..=len);
                            let delete = rng.gen_range(0..=len - at);
                            let items: Vec<Value> = (0..rng.gen_range(0..3))
                                .map(|_| room_like(rng, path.len() + 1))
                                .collect();
                            vec![
                                json!({"op": "splice", "path": path, "index": at, "delete": delete, "items": items}),
                            ]
                        }
                    }
                }
                _ => continue,
            };
            value = crate::room::delta::apply(&value, &Value::Array(more.clone()))
                .expect("an op made for the value applies to it");
            ops.extend(more);
        }
        ops
    }

    fn fresh_text(texts: &mut KeptText, value: &Value) -> String {
        texts.refresh(value).unwrap().text()
    }

    #[test]
    fn kept_texts_equal_a_full_rendering_after_any_deltas_and_roll_backs() {
        let mut rng = StdRng::seed_from_u64(20261205);
        let mut split_parts = 0;
        for _ in 0..24 {
            let mut value = json!({"log": (0..120).map(|n| json!({"n": n, "text": "a line of the room's log"})).collect::<Vec<_>>()});
            value["state"] = room_like(&mut rng, 1);
            let mut texts = KeptText::default();
            assert_eq!(
                fresh_text(&mut texts, &value),
                json::canonical(&value).unwrap()
            );
            for _ in 0..25 {
                let ops = some_delta(&mut rng, &value);
                let before = texts.clone();
                let mut lent = Lent::new(value.clone(), texts.clone());
                lent.apply(&ops).unwrap();
                let (changed, fresh) = lent.refreshed().unwrap();
                let expected = json::canonical(changed).unwrap();
                assert_eq!(fresh.text(), expected, "{ops:?}");
                assert_eq!(fresh.hash(), crate::canonical::sha256_hex(&expected));
                if rng.gen_bool(0.3) {
                    // Refused after the delta applied: value and texts go back as they were.
                    let (back, text) = lent.roll_back();
                    assert_eq!(back, value);
                    assert_eq!(text, before, "{ops:?}");
                    continue;
                }
                if rng.gen_bool(0.2) {
                    // Refused by a later op of the same delta.
                    let mut failing = ops.clone();
                    failing.push(json!({"op": "remove", "path": ["no such key", 0]}));
                    let mut lent = Lent::new(value.clone(), texts.clone());
                    let error = lent.apply(&failing).unwrap_err();
                    assert_eq!(error, DeltaError::Missing(ops.len()));
                    assert_eq!(lent.keep(), (value.clone(), before));
                }
                let (next, text) = lent.keep();
                (value, texts) = (next, text);
                split_parts += usize::from(
                    matches!(&texts.root, Part::Object(fields) if fields.values().any(|part| !matches!(part, Part::Text(_)))),
                );
            }
        }
        assert!(
            split_parts > 60,
            "large parts were kept by part: {split_parts}"
        );
    }

    #[test]
    fn a_kept_part_refuses_what_a_full_rendering_refuses() {
        let value = json!({"log": vec!["x".repeat(20); MAX_ITEMS]});
        let mut texts = KeptText::default();
        texts.refresh(&value).unwrap();
        let grow =
            json!([{"op": "splice", "path": ["log"], "index": 0, "delete": 0, "items": [1]}]);
        let mut lent = Lent::new(value.clone(), texts.clone());
        lent.apply(grow.as_array().unwrap()).unwrap();
        assert_eq!(json::canonical(lent.value()), Err(JsonLimit::TooManyItems));
        assert_eq!(lent.refreshed().unwrap_err(), JsonLimit::TooManyItems);
        assert_eq!(lent.roll_back().1, texts);
        let long_key = "k".repeat(json::MAX_STRING_BYTES + 1);
        let add = json!([{"op": "set", "path": [long_key], "value": 1}]);
        let mut lent = Lent::new(value.clone(), texts.clone());
        lent.apply(add.as_array().unwrap()).unwrap();
        assert_eq!(lent.refreshed().unwrap_err(), JsonLimit::StringTooLong);
        let float = json!([{"op": "set", "path": ["log", 3], "value": 1.5}]);
        let mut lent = Lent::new(value, texts);
        lent.apply(float.as_array().unwrap()).unwrap();
        assert_eq!(
            lent.refreshed().unwrap_err(),
            JsonLimit::Float("1.5".into())
        );
    }

    #[test]
    fn a_checkpoint_hash_feeds_kept_fields_among_rendered_ones() {
        let state = json!({"b": [1, 2], "d": {"e": null}, "z": "kept wins"});
        let mut texts = KeptText::default();
        let fresh = texts.refresh(&state).unwrap();
        let rendered = [
            ("a", "1".to_string()),
            ("c", "true".to_string()),
            ("z", "0".to_string()),
        ];
        let whole = json!({"a": 1, "b": [1, 2], "c": true, "d": {"e": null}, "z": "kept wins"});
        assert_eq!(
            fresh.hash_object(&rendered, |_| true),
            crate::canonical::sha256_hex(json::canonical(&whole).unwrap())
        );
        let only_b = json!({"b": [1, 2]});
        assert_eq!(
            fresh.hash_object(&[], |key| key == "b"),
            crate::canonical::sha256_hex(json::canonical(&only_b).unwrap())
        );
    }
}
