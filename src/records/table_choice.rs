//! A table seat's legal actions (`proto_group_choices`), as a type: what `room.json` lists for
//! a person or an agent, what a table's decision window accepts, and how a decision (a
//! choice's number, its label, or the action itself, with an amount where the choice leaves
//! one free) becomes the action the seat sends. Hooks are not trusted: their list is checked
//! and bounded here before anything shows or plays it.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// The most choices a seat lists (hooks enumerating combinations stop there).
pub const MAX_CHOICES: usize = 256;
/// The longest label, in bytes.
pub const MAX_LABEL_BYTES: usize = 120;
/// The largest action of a choice, in canonical bytes (a room action's limit).
pub const MAX_ACTION_BYTES: usize = 64 * 1024;

/// One legal action: its label, the action, and the range of a free amount (its field is
/// then missing from `action`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TableChoice {
    pub label: String,
    pub action: Map<String, Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub amount: Option<AmountRange>,
}

/// A free amount: an integer from `min` to `max`, put in `field`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AmountRange {
    pub field: String,
    pub min: i64,
    pub max: i64,
}

impl TableChoice {
    /// What `proto_group_choices` returned, checked: a list of at most [`MAX_CHOICES`]
    /// `{label, action, amount?}` with short labels and actions that can travel in a room.
    pub fn list_from_hook(returned: Value) -> Result<Vec<TableChoice>, String> {
        let Value::Array(items) = returned else {
            return Err(format!(
                "proto_group_choices must return a list, not {}",
                crate::spec::json_kind(&returned)
            ));
        };
        if items.len() > MAX_CHOICES {
            return Err(format!(
                "proto_group_choices returned {} choices; at most {MAX_CHOICES}",
                items.len()
            ));
        }
        items
            .into_iter()
            .enumerate()
            .map(|(at, item)| {
                TableChoice::checked(item)
                    .map_err(|why| format!("proto_group_choices[{at}]: {why}"))
            })
            .collect()
    }

    fn checked(item: Value) -> Result<TableChoice, String> {
        let choice: TableChoice = serde_json::from_value(item)
            .map_err(|_| "not {label: str, action: dict, amount?: {field, min, max}}")?;
        if choice.label.is_empty() || choice.label.len() > MAX_LABEL_BYTES {
            return Err(format!("a label has 1 to {MAX_LABEL_BYTES} bytes"));
        }
        let size = crate::room::json::canonical(&Value::Object(choice.action.clone()))
            .map_err(|e| format!("the action cannot travel in a room: {e}"))?
            .len();
        if size > MAX_ACTION_BYTES {
            return Err(format!(
                "the action is {size} bytes; at most {MAX_ACTION_BYTES}"
            ));
        }
        if let Some(range) = &choice.amount
            && (range.min > range.max || choice.action.contains_key(&range.field))
        {
            return Err(format!(
                "its amount needs min <= max and a field ({}) the action lacks",
                range.field
            ));
        }
        Ok(choice)
    }

    /// The action, with `amount` put in its free field (checked against the range).
    fn with_amount(&self, amount: Option<&Value>) -> Result<Map<String, Value>, String> {
        let Some(range) = &self.amount else {
            return match amount {
                None => Ok(self.action.clone()),
                Some(_) => Err(format!("\"{}\" takes no amount", self.label)),
            };
        };
        let number = amount
            .filter(|v| !v.is_boolean())
            .and_then(Value::as_i64)
            .filter(|n| (range.min..=range.max).contains(n))
            .ok_or_else(|| {
                format!(
                    "\"{}\" needs an amount from {} to {}",
                    self.label, range.min, range.max
                )
            })?;
        let mut action = self.action.clone();
        action.insert(range.field.clone(), Value::from(number));
        Ok(action)
    }
}

/// The action a decision names among `choices`: a choice's number (from 0) or its label;
/// `{"index": n, "amount": a}`; or `{"action": {...}}`, one of the fixed actions or an amount
/// choice's action with its amount in range. Refused with a sentence otherwise.
pub fn resolve(choices: &[TableChoice], decided: &Value) -> Result<Map<String, Value>, String> {
    let numbered = |index: &Value| {
        index
            .as_u64()
            .filter(|_| !index.is_boolean())
            .and_then(|n| choices.get(usize::try_from(n).ok()?))
            .ok_or_else(|| {
                format!(
                    "the choice must be a number from 0 to {}",
                    choices.len().saturating_sub(1)
                )
            })
    };
    match decided {
        Value::Number(_) => numbered(decided)?.with_amount(None),
        Value::String(label) => choices
            .iter()
            .find(|c| c.label == *label)
            .ok_or_else(|| format!("no choice is labelled \"{label}\""))?
            .with_amount(None),
        Value::Object(named) if named.contains_key("index") => {
            numbered(&named["index"])?.with_amount(named.get("amount"))
        }
        Value::Object(named) => {
            let Some(Value::Object(action)) = named.get("action") else {
                return Err("a decision names a choice (its number or label), {\"index\", \"amount\"} or {\"action\"}".into());
            };
            if let Some((index, amount)) = find_action(choices, action) {
                return choices[index].with_amount(amount.as_ref());
            }
            Err("that action is not among this seat's legal choices".into())
        }
        _ => Err("a decision names a choice (its number or label), {\"index\", \"amount\"} or {\"action\"}".into()),
    }
}

/// Which choice `action` is (its number), and the amount it gives that choice's free field.
pub fn find_action(
    choices: &[TableChoice],
    action: &Map<String, Value>,
) -> Option<(usize, Option<Value>)> {
    choices
        .iter()
        .enumerate()
        .find_map(|(index, choice)| match &choice.amount {
            None => (choice.action == *action).then_some((index, None)),
            Some(range) => {
                let mut rest = action.clone();
                let amount = rest.remove(&range.field);
                (rest == choice.action).then_some((index, amount))
            }
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn holdem() -> Vec<TableChoice> {
        TableChoice::list_from_hook(json!([
            {"label": "Fold", "action": {"kind": "fold"}},
            {"label": "Call 20", "action": {"kind": "call"}},
            {"label": "Raise", "action": {"kind": "raise"}, "amount": {"field": "amount", "min": 40, "max": 990}},
        ]))
        .unwrap()
    }

    #[test]
    fn a_decision_names_a_choice_by_number_label_or_action_with_its_amount_in_range() {
        let choices = holdem();
        assert_eq!(
            resolve(&choices, &json!(1)).unwrap(),
            *json!({"kind": "call"}).as_object().unwrap()
        );
        assert_eq!(
            resolve(&choices, &json!("Fold")).unwrap(),
            *json!({"kind": "fold"}).as_object().unwrap()
        );
        assert_eq!(
            resolve(&choices, &json!({"index": 2, "amount": 60})).unwrap(),
            *json!({"kind": "raise", "amount": 60}).as_object().unwrap()
        );
        assert_eq!(
            resolve(
                &choices,
                &json!({"action": {"kind": "raise", "amount": 990}})
            )
            .unwrap(),
            *json!({"kind": "raise", "amount": 990}).as_object().unwrap()
        );
        assert_eq!(
            resolve(&choices, &json!({"index": 2, "amount": 20})).unwrap_err(),
            "\"Raise\" needs an amount from 40 to 990"
        );
        assert_eq!(
            resolve(&choices, &json!(2)).unwrap_err(),
            "\"Raise\" needs an amount from 40 to 990"
        );
        assert_eq!(
            resolve(&choices, &json!(3)).unwrap_err(),
            "the choice must be a number from 0 to 2"
        );
        assert!(resolve(&choices, &json!({"action": {"kind": "check"}})).is_err());
    }

    #[test]
    fn a_hook_that_returns_junk_is_refused_with_its_reason() {
        for (junk, why) in [
            (json!({"label": "x"}), "must return a list"),
            (json!([{"label": "", "action": {}}]), "[0]: a label"),
            (json!([{"label": "x", "action": 3}]), "[0]: not {label"),
            (
                json!([{"label": "x", "action": {"amount": 1}, "amount": {"field": "amount", "min": 1, "max": 2}}]),
                "lacks",
            ),
            (
                json!([{"label": "x", "action": {"v": 1.5}}]),
                "cannot travel",
            ),
            (
                Value::Array(vec![json!({"label": "x", "action": {}}); MAX_CHOICES + 1]),
                "at most 256",
            ),
        ] {
            let error = TableChoice::list_from_hook(junk).unwrap_err();
            assert!(error.contains(why), "{error}");
        }
    }
}
