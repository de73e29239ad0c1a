//! A table seat's legal actions (`proto_group_choices`), as a type: what `room.json` lists for
//! a person or an agent, what a table's decision window accepts, and how a decision (a
//! choice's number, its label, or the action itself, with an amount or the cards picked where
//! the choice leaves them free) becomes the action the seat sends. Hooks are not trusted:
//! their list is checked and bounded here before anything shows or plays it.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::table_pick::Pick;

/// The most choices a seat lists (hooks enumerating combinations stop there).
pub const MAX_CHOICES: usize = 256;
/// The longest label, in bytes.
pub const MAX_LABEL_BYTES: usize = 120;
/// The largest action of a choice, in canonical bytes (a room action's limit).
pub const MAX_ACTION_BYTES: usize = 64 * 1024;

/// One legal action: its label, the action, and what it leaves free — the range of an amount,
/// or the cards to pick — whose field is then missing from `action`. On the wire and in
/// `room.json` the free part is a flat key beside the others (`"amount": {...}` or
/// `"pick": {...}`), read through `FlatChoice`, which refuses a choice with both.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "FlatChoice")]
pub struct TableChoice {
    pub label: String,
    pub action: Map<String, Value>,
    #[serde(flatten)]
    pub free: Option<Free>,
}

/// What a choice leaves for the decision to fill in, under its own key.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Free {
    Amount(AmountRange),
    Pick(Pick),
}

/// A free amount: an integer from `min` to `max`, put in `field`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AmountRange {
    pub field: String,
    pub min: i64,
    pub max: i64,
}

/// A choice as JSON carries it: the free part as two optional keys, at most one present.
#[derive(Deserialize)]
struct FlatChoice {
    label: String,
    action: Map<String, Value>,
    #[serde(default)]
    amount: Option<AmountRange>,
    #[serde(default)]
    pick: Option<Pick>,
}

impl TryFrom<FlatChoice> for TableChoice {
    type Error = &'static str;

    fn try_from(flat: FlatChoice) -> Result<TableChoice, &'static str> {
        let free = match (flat.amount, flat.pick) {
            (Some(_), Some(_)) => {
                return Err("a choice leaves free an amount or a pick, not both");
            }
            (Some(range), None) => Some(Free::Amount(range)),
            (None, Some(pick)) => Some(Free::Pick(pick)),
            (None, None) => None,
        };
        Ok(TableChoice {
            label: flat.label,
            action: flat.action,
            free,
        })
    }
}

impl TableChoice {
    /// What `proto_group_choices` returned, checked: a list of at most [`MAX_CHOICES`]
    /// `{label, action, amount? or pick?}` with short labels and actions that can travel in a room.
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
        let flat: FlatChoice = serde_json::from_value(item).map_err(|_| {
            "not {label: str, action: dict, amount?: {field, min, max}, pick?: {field, from, min, max}}"
        })?;
        let choice = TableChoice::try_from(flat)?;
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
        match &choice.free {
            Some(Free::Amount(range)) => range.check(&choice.action)?,
            Some(Free::Pick(pick)) => pick.check(&choice.action)?,
            None => {}
        }
        Ok(choice)
    }

    /// The action, with what the decision gives its free field: `amount` (checked against
    /// the range) or `picked` (checked against the pick).
    fn filled(
        &self,
        amount: Option<&Value>,
        picked: Option<&Value>,
    ) -> Result<Map<String, Value>, String> {
        let takes_no_amount = || format!("\"{}\" takes no amount", self.label);
        let picks_nothing = || format!("\"{}\" picks nothing", self.label);
        let (field, value) = match &self.free {
            None if picked.is_some() => return Err(picks_nothing()),
            None if amount.is_some() => return Err(takes_no_amount()),
            None => return Ok(self.action.clone()),
            Some(Free::Amount(_)) if picked.is_some() => return Err(picks_nothing()),
            Some(Free::Amount(range)) => (&range.field, range.chosen(&self.label, amount)?),
            Some(Free::Pick(_)) if amount.is_some() => return Err(takes_no_amount()),
            Some(Free::Pick(pick)) => (&pick.field, pick.chosen(&self.label, picked)?),
        };
        let mut action = self.action.clone();
        action.insert(field.clone(), value);
        Ok(action)
    }
}

impl AmountRange {
    /// A hook's range, checked: `min <= max`, and a field the action lacks.
    fn check(&self, action: &Map<String, Value>) -> Result<(), String> {
        if self.min > self.max || action.contains_key(&self.field) {
            return Err(format!(
                "its amount needs min <= max and a field ({}) the action lacks",
                self.field
            ));
        }
        Ok(())
    }

    /// The amount a decision gave, checked: an integer within the range, refused in a
    /// sentence naming the choice (`label`).
    fn chosen(&self, label: &str, amount: Option<&Value>) -> Result<Value, String> {
        amount
            .filter(|v| !v.is_boolean())
            .and_then(Value::as_i64)
            .filter(|n| (self.min..=self.max).contains(n))
            .map(Value::from)
            .ok_or_else(|| {
                format!(
                    "\"{label}\" needs an amount from {} to {}",
                    self.min, self.max
                )
            })
    }
}

/// The action a decision names among `choices`: a choice's number (from 0) or its label;
/// `{"index": n, "amount": a}` or `{"index": n, "pick": [...]}`; or `{"action": {...}}`, one
/// of the fixed actions, or an amount or pick choice's action with its free field filled in.
/// Refused with a sentence otherwise.
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
        Value::Number(_) => numbered(decided)?.filled(None, None),
        Value::String(text) => match choices.iter().find(|c| c.label == *text) {
            Some(choice) => choice.filled(None, None),
            None => typed(choices, text),
        },
        Value::Object(named) if named.contains_key("index") => {
            numbered(&named["index"])?.filled(named.get("amount"), named.get("pick"))
        }
        Value::Object(named) => {
            let Some(Value::Object(action)) = named.get("action") else {
                return Err(FORMS.into());
            };
            let (index, free) = find_action(choices, action)
                .ok_or("that action is not among this seat's legal choices")?;
            let choice = &choices[index];
            match choice.free {
                Some(Free::Pick(_)) => choice.filled(None, free.as_ref()),
                _ => choice.filled(free.as_ref(), None),
            }
        }
        _ => Err(FORMS.into()),
    }
}

/// A decision as a person types it at a terminal, when it is no label: a choice's number
/// then what it leaves free — `2 60` (an amount), `5 c3 c17` (the values picked, as `session
/// wait` lists them, quotes optional) — or one of the JSON forms.
fn typed(choices: &[TableChoice], text: &str) -> Result<Map<String, Value>, String> {
    let unlabelled = || format!("no choice is labelled \"{}\"", quoted_text(text));
    if text.trim_start().starts_with('{') {
        return match serde_json::from_str::<Value>(text) {
            Ok(named @ Value::Object(_)) => resolve(choices, &named),
            _ => Err(FORMS.into()),
        };
    }
    let mut words = text.split_whitespace();
    let Some(index) = words.next().and_then(|word| word.parse::<usize>().ok()) else {
        return Err(unlabelled());
    };
    let choice = choices.get(index).ok_or_else(unlabelled)?;
    let words: Vec<&str> = words.collect();
    match &choice.free {
        _ if words.is_empty() => choice.filled(None, None),
        None => Err(format!("\"{}\" takes nothing more", choice.label)),
        Some(Free::Amount(_)) => {
            let amount = match words[..] {
                [word] => word.parse::<i64>().map_or(Value::Null, Value::from),
                _ => Value::Null,
            };
            choice.filled(Some(&amount), None)
        }
        Some(Free::Pick(pick)) => {
            let picked = words
                .iter()
                .map(|word| pick.item_typed(word))
                .collect::<Result<Vec<Value>, String>>()
                .map_err(|word| format!("\"{}\" does not offer {word}", choice.label))?;
            choice.filled(None, Some(&Value::Array(picked)))
        }
    }
}

/// Typed text quoted in a refusal: its control characters escaped, at most 80 characters.
fn quoted_text(text: &str) -> String {
    let short: String = text.chars().take(80).collect();
    crate::terminal::escape_control(&short).into_owned()
}

const FORMS: &str = "a decision names a choice (its number or label), {\"index\", \"amount\"}, {\"index\", \"pick\"} or {\"action\"}";

/// Which choice `action` is (its number), and what it gives that choice's free field (an
/// amount, or the items picked).
pub fn find_action(
    choices: &[TableChoice],
    action: &Map<String, Value>,
) -> Option<(usize, Option<Value>)> {
    choices.iter().enumerate().find_map(|(index, choice)| {
        let Some(field) = choice.free_field() else {
            return (choice.action == *action).then_some((index, None));
        };
        let mut rest = action.clone();
        let free = rest.remove(field);
        (rest == choice.action).then_some((index, free))
    })
}

impl TableChoice {
    /// The field the decision fills in (an amount's or a pick's), if any.
    fn free_field(&self) -> Option<&str> {
        match &self.free {
            Some(Free::Amount(range)) => Some(&range.field),
            Some(Free::Pick(pick)) => Some(&pick.field),
            None => None,
        }
    }

    /// How a decision names this choice with `free` in its free field: `{"index", "amount"}`
    /// or `{"index", "pick"}` (its number alone when it leaves nothing free).
    pub fn decision(&self, index: usize, free: Option<Value>) -> Value {
        match (free, &self.free) {
            (None, _) => Value::from(index),
            (Some(picked), Some(Free::Pick(_))) => {
                serde_json::json!({"index": index, "pick": picked})
            }
            (Some(amount), _) => serde_json::json!({"index": index, "amount": amount}),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::table_pick::{MAX_PICK_ITEMS, PickItem};
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

    fn upgrade_bury() -> Vec<TableChoice> {
        TableChoice::list_from_hook(json!([
            {"label": "Bury 2 cards", "action": {"kind": "bury"}, "pick": {
                "field": "card_ids", "min": 2, "max": 2,
                "from": [{"value": "c1", "label": "7♠"}, {"value": "c2", "label": "7♠"},
                         {"value": "c3", "label": "A♥"}]}},
            {"label": "Throw ♠", "action": {"kind": "play"}, "pick": {
                "field": "card_ids", "min": 2, "max": 3,
                "from": [{"value": "c1", "label": "7♠"}, {"value": "c2", "label": "7♠"},
                         {"value": "c4", "label": "9♠"}]}},
        ]))
        .unwrap()
    }

    #[test]
    fn a_window_that_picks_lists_each_picks_items_as_a_person_types_them() {
        let described = crate::records::decision::Choices::Table {
            options: upgrade_bury(),
        }
        .describe();
        assert_eq!(
            described,
            "one of these choices (by number from 0, or label): Bury 2 cards or Throw ♠; a \
             choice that leaves an amount or cards free takes its number then the amount or \
             the values picked (2 60, 5 c3 c17); 0 picks 2 of \"c1\" 7♠, \"c2\" 7♠, \"c3\" A♥; 1 picks 2 to 3 of \"c1\" 7♠, \
             \"c2\" 7♠, \"c4\" 9♠"
        );
    }

    #[test]
    fn a_pick_puts_distinct_offered_items_within_its_count_in_its_field() {
        let choices = upgrade_bury();
        assert_eq!(
            resolve(&choices, &json!({"index": 0, "pick": ["c3", "c1"]})).unwrap(),
            *json!({"kind": "bury", "card_ids": ["c3", "c1"]})
                .as_object()
                .unwrap()
        );
        assert_eq!(
            resolve(
                &choices,
                &json!({"action": {"kind": "play", "card_ids": ["c4", "c1", "c2"]}})
            )
            .unwrap(),
            *json!({"kind": "play", "card_ids": ["c4", "c1", "c2"]})
                .as_object()
                .unwrap()
        );
        for (decided, why) in [
            (
                json!({"index": 0, "pick": ["c1"]}),
                "\"Bury 2 cards\" picks 2 items, not 1",
            ),
            (
                json!({"index": 1, "pick": ["c1", "c2", "c4", "c3"]}),
                "\"Throw ♠\" picks 2 to 3 items, not 4",
            ),
            (
                json!({"index": 0, "pick": ["c1", "c9"]}),
                "\"Bury 2 cards\" does not offer \"c9\"",
            ),
            (
                json!({"index": 0, "pick": ["c1", "c1"]}),
                "\"Bury 2 cards\" picks \"c1\" twice",
            ),
            (
                json!({"index": 1, "pick": "c1"}),
                "\"Throw ♠\" needs a pick: a list of 2 to 3 of its items",
            ),
            (
                json!(0),
                "\"Bury 2 cards\" needs a pick: a list of 2 of its items",
            ),
            (
                json!({"index": 0, "amount": 2}),
                "\"Bury 2 cards\" takes no amount",
            ),
            (
                json!({"action": {"kind": "bury", "card_ids": ["c4", "c1"]}}),
                "\"Bury 2 cards\" does not offer \"c4\"",
            ),
        ] {
            assert_eq!(resolve(&choices, &decided).unwrap_err(), why, "{decided}");
        }
        assert_eq!(
            resolve(&holdem(), &json!({"index": 1, "pick": ["c1"]})).unwrap_err(),
            "\"Call 20\" picks nothing"
        );
    }

    #[test]
    fn a_person_types_a_choices_number_then_its_amount_or_the_values_picked() {
        let object = |value: Value| value.as_object().unwrap().clone();
        let typed = |choices: &[TableChoice], text: &str| resolve(choices, &json!(text));
        let (holdem, bury) = (holdem(), upgrade_bury());
        assert_eq!(
            typed(&holdem, "2 60").unwrap(),
            object(json!({"kind": "raise", "amount": 60}))
        );
        assert_eq!(
            typed(&holdem, " 1 ").unwrap(),
            object(json!({"kind": "call"}))
        );
        assert_eq!(
            typed(&bury, "0 c3 \"c1\"").unwrap(),
            object(json!({"kind": "bury", "card_ids": ["c3", "c1"]}))
        );
        assert_eq!(
            typed(&bury, r#"{"index": 1, "pick": ["c4", "c2"]}"#).unwrap(),
            object(json!({"kind": "play", "card_ids": ["c4", "c2"]}))
        );
        let tiles = TableChoice::list_from_hook(json!([
            {"label": "Discard", "action": {"kind": "discard"}, "pick": {
                "field": "tiles", "min": 1, "max": 1,
                "from": [{"value": 3, "label": "3 bamboo"}, {"value": 7, "label": "7 dots"}]}},
        ]))
        .unwrap();
        assert_eq!(
            typed(&tiles, "0 7").unwrap(),
            object(json!({"kind": "discard", "tiles": [7]}))
        );
        assert_eq!(
            typed(&tiles, "0 8").unwrap_err(),
            "\"Discard\" does not offer \"8\""
        );
        for (choices, text, why) in [
            (
                &holdem,
                "2 twenty",
                "\"Raise\" needs an amount from 40 to 990",
            ),
            (
                &holdem,
                "2 60 70",
                "\"Raise\" needs an amount from 40 to 990",
            ),
            (&holdem, "2 20", "\"Raise\" needs an amount from 40 to 990"),
            (&holdem, "1 60", "\"Call 20\" takes nothing more"),
            (&holdem, "7 60", "no choice is labelled \"7 60\""),
            (
                &holdem,
                "Raise\u{1b}[2J",
                "no choice is labelled \"Raise\\x1b[2J\"",
            ),
            (&bury, "0 c1 c9", "\"Bury 2 cards\" does not offer \"c9\""),
            (&bury, "0 c1", "\"Bury 2 cards\" picks 2 items, not 1"),
            (&bury, "0 c1 c1", "\"Bury 2 cards\" picks \"c1\" twice"),
            (&bury, "{\"index\": 0", FORMS),
        ] {
            assert_eq!(typed(choices, text).unwrap_err(), why, "{text:?}");
        }
    }

    #[test]
    fn a_choice_reads_and_writes_its_free_part_as_a_flat_key() {
        for (text, free) in [
            (r#"{"label":"Fold","action":{"kind":"fold"}}"#, None),
            (
                r#"{"label":"Raise","action":{"kind":"raise"},"amount":{"field":"amount","min":40,"max":990}}"#,
                Some(Free::Amount(AmountRange {
                    field: "amount".into(),
                    min: 40,
                    max: 990,
                })),
            ),
            (
                r#"{"label":"Bury","action":{"kind":"bury"},"pick":{"field":"card_ids","from":[{"value":"c1","label":"7♠"},{"value":7,"label":"A♥"}],"min":1,"max":2}}"#,
                Some(Free::Pick(Pick {
                    field: "card_ids".into(),
                    from: vec![
                        PickItem {
                            value: json!("c1"),
                            label: "7♠".into(),
                        },
                        PickItem {
                            value: json!(7),
                            label: "A♥".into(),
                        },
                    ],
                    min: 1,
                    max: 2,
                })),
            ),
        ] {
            let choice: TableChoice = serde_json::from_str(text).unwrap();
            assert_eq!(choice.free, free, "{text}");
            assert_eq!(serde_json::to_string(&choice).unwrap(), text);
            assert_eq!(
                TableChoice::list_from_hook(json!([serde_json::to_value(&choice).unwrap()]))
                    .unwrap(),
                [choice]
            );
        }
    }

    #[test]
    fn a_choice_with_both_an_amount_and_a_pick_is_refused() {
        let both = json!({"label": "x", "action": {}, "amount": {"field": "n", "min": 1, "max": 2},
            "pick": {"field": "ids", "min": 1, "max": 1, "from": [{"value": "a", "label": "a"}]}});
        assert_eq!(
            TableChoice::list_from_hook(json!([both])).unwrap_err(),
            "proto_group_choices[0]: a choice leaves free an amount or a pick, not both"
        );
        let read = serde_json::from_value::<TableChoice>(both).unwrap_err();
        assert_eq!(
            read.to_string(),
            "a choice leaves free an amount or a pick, not both"
        );
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
                json!([{"label": "x", "action": {}, "amount": {"field": "n", "min": 1}}]),
                "[0]: not {label",
            ),
            (
                json!([{"label": "x", "action": {"v": 1.5}}]),
                "cannot travel",
            ),
            (
                Value::Array(vec![json!({"label": "x", "action": {}}); MAX_CHOICES + 1]),
                "at most 256",
            ),
            (
                json!([{"label": "x", "action": {"ids": []}, "pick": {"field": "ids", "min": 1, "max": 1, "from": [{"value": "a", "label": "a"}]}}]),
                "a field (ids) the action lacks",
            ),
            (
                json!([{"label": "x", "action": {}, "pick": {"field": "ids", "min": 2, "max": 1, "from": [{"value": "a", "label": "a"}]}}]),
                "min <= max",
            ),
            (
                json!([{"label": "x", "action": {}, "pick": {"field": "ids", "min": 1, "max": 2, "from": [{"value": "a", "label": "a"}, {"value": "a", "label": "b"}]}}]),
                "each item once",
            ),
            (
                json!([{"label": "x", "action": {}, "pick": {"field": "ids", "min": 1, "max": 1, "from": [{"value": {"a": 1}, "label": "a"}]}}]),
                "a string of at most 64 bytes",
            ),
            (
                json!([{"label": "x", "action": {}, "pick": {"field": "ids", "min": 1, "max": 1, "from": [{"value": "a", "label": ""}]}}]),
                "label has 1 to",
            ),
            (
                json!([{"label": "x", "action": {}, "pick": {"field": "ids", "min": 1, "max": 1,
                    "from": (0..=MAX_PICK_ITEMS).map(|n| json!({"value": n, "label": "a"})).collect::<Vec<_>>()}}]),
                "1 to 64 items",
            ),
            (
                json!([{"label": "x", "action": {}, "amount": {"field": "n", "min": 1, "max": 2}, "pick": {"field": "ids", "min": 1, "max": 1, "from": [{"value": "a", "label": "a"}]}}]),
                "not both",
            ),
        ] {
            let error = TableChoice::list_from_hook(junk).unwrap_err();
            assert!(error.contains(why), "{error}");
        }
    }
}
