//! The cards a table choice leaves to pick (`pick: {field, from, min, max}`), for an action
//! whose combinations are too many to list — any eight cards to bury, a throw of several cards
//! of one suit: what a hook may offer (bounded, each item once) and what a decision may pick
//! (distinct offered items, within the count), each refused in a sentence naming what is wrong.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::table_choice::MAX_LABEL_BYTES;

/// The most items a pick offers (a hand of cards or tiles).
pub const MAX_PICK_ITEMS: usize = 64;
/// The longest pick item's value (a card id), in bytes.
pub const MAX_PICK_VALUE_BYTES: usize = 64;

/// Items to pick, for an action whose combinations are too many to list (any eight cards to
/// bury, a throw of several cards of one suit): between `min` and `max` different items of
/// `from`, their values put as a list in `field`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Pick {
    pub field: String,
    pub from: Vec<PickItem>,
    pub min: usize,
    pub max: usize,
}

/// One item a pick offers: the value the action carries (a card's id) and the card as a
/// person reads it ("7♠", "3 bamboo").
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PickItem {
    pub value: Value,
    pub label: String,
}

impl Pick {
    /// A hook's pick, checked: a field the action lacks, 1 to [`MAX_PICK_ITEMS`] different
    /// items with short string or integer values and labels, and `1 <= min <= max <=` their
    /// count.
    pub(super) fn check(&self, action: &Map<String, Value>) -> Result<(), String> {
        if action.contains_key(&self.field) {
            return Err(format!(
                "its pick needs a field ({}) the action lacks",
                self.field
            ));
        }
        if self.from.is_empty() || self.from.len() > MAX_PICK_ITEMS {
            return Err(format!("its pick offers 1 to {MAX_PICK_ITEMS} items"));
        }
        if !(1 <= self.min && self.min <= self.max && self.max <= self.from.len()) {
            return Err("its pick needs 1 <= min <= max <= the items offered".into());
        }
        let mut values = std::collections::HashSet::new();
        for item in &self.from {
            let short = match &item.value {
                Value::String(text) => text.len() <= MAX_PICK_VALUE_BYTES,
                Value::Number(number) => number.is_i64() || number.is_u64(),
                _ => false,
            };
            if !short {
                return Err(format!(
                    "a pick's item is a string of at most {MAX_PICK_VALUE_BYTES} bytes or an integer"
                ));
            }
            if item.label.is_empty() || item.label.len() > MAX_LABEL_BYTES {
                return Err(format!(
                    "a pick item's label has 1 to {MAX_LABEL_BYTES} bytes"
                ));
            }
            if !values.insert(item.value.to_string()) {
                return Err("a pick offers each item once".into());
            }
        }
        Ok(())
    }

    /// The items a decision picked, checked: a list of `min` to `max` different values of
    /// `from`, refused in a sentence naming the choice (`label`) and what is wrong.
    pub(super) fn chosen(&self, label: &str, picked: Option<&Value>) -> Result<Value, String> {
        let count = self.count();
        let Some(Value::Array(items)) = picked else {
            return Err(format!(
                "\"{label}\" needs a pick: a list of {count} of its items"
            ));
        };
        if !(self.min..=self.max).contains(&items.len()) {
            return Err(format!(
                "\"{label}\" picks {count} items, not {}",
                items.len()
            ));
        }
        for (at, item) in items.iter().enumerate() {
            if !self.from.iter().any(|offered| offered.value == *item) {
                return Err(format!("\"{label}\" does not offer {}", quoted(item)));
            }
            if items[..at].contains(item) {
                return Err(format!("\"{label}\" picks {} twice", quoted(item)));
            }
        }
        Ok(Value::Array(items.clone()))
    }

    /// The value of the item a person typed as `word`: its value itself (a card id, with or
    /// without the quotes `session wait` shows, or an integer); `Err` with the word quoted
    /// when no item is it.
    pub(super) fn item_typed(&self, word: &str) -> Result<Value, String> {
        let bare = word
            .strip_prefix('"')
            .and_then(|w| w.strip_suffix('"'))
            .unwrap_or(word);
        self.from
            .iter()
            .find(|item| match &item.value {
                Value::String(value) => value == bare,
                Value::Number(number) => {
                    bare.parse::<serde_json::Number>().ok() == Some(number.clone())
                }
                _ => false,
            })
            .map(|item| item.value.clone())
            .ok_or_else(|| quoted(&Value::String(word.to_string())))
    }

    /// How many items it takes, in words: `8`, `2 to 3`.
    fn count(&self) -> String {
        if self.min == self.max {
            format!("{}", self.min)
        } else {
            format!("{} to {}", self.min, self.max)
        }
    }

    /// What a person types from, in words: `picks 2 of "c1" 7♠, "c3" A♥` (each item's value as
    /// a decision names it, then its label).
    pub fn spoken(&self) -> String {
        let items: Vec<String> = self
            .from
            .iter()
            .map(|item| format!("{} {}", quoted(&item.value), item.label))
            .collect();
        format!("picks {} of {}", self.count(), items.join(", "))
    }
}

/// An item a decision named, as JSON (its control characters escaped) of at most 80
/// characters.
fn quoted(item: &Value) -> String {
    item.to_string().chars().take(80).collect()
}
