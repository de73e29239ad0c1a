//! The hooks of the mental_poker flow, as the engine sees them: the game's rules (deck,
//! deal, moves, rule checks, winner) stay in hooks, while every `mp_*` frame and all the
//! cryptography stay in the engine. Hooks see cards only as id-B strings and the faces of
//! their own hand, through the table view the engine installs before each call.

use serde_json::Value;

use super::HookError;
use crate::spec::Role;

/// A card face: two indices the game gives meaning to (`proto_mp_deck_universe` pairs).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Card {
    pub rank: u8,
    pub suit: u8,
}

/// How many cards each side is dealt (`proto_mp_initial_deal`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DealPlan {
    pub host: usize,
    pub guest: usize,
}

/// What this side does on its turn (`proto_mp_choose_action`, or a decision in human and
/// hybrid control).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LocalAction {
    /// Play the card with this id-B (from this side's hand), naming a suit when the game
    /// asks for one.
    Play {
        id_b: String,
        call_suit: Option<u8>,
    },
    /// Take the next card of the stock.
    Draw,
    Pass,
}

/// A rules verdict on the peer's (cryptographically verified) play.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Verdict {
    pub ok: bool,
    pub reason: Option<String>,
}

/// What hooks may know of the table: where every id-B is, and the faces of this side's own
/// hand. Installed into the hooks' `state` (`_mp_role`, `_mp_hand`, `_mp_hand_cards`,
/// `_mp_deck_view`, `_mp_stalled`) before every hook that reads it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TableView {
    pub role: Role,
    /// This side's hand: id-B and face.
    pub hand: Vec<(String, Card)>,
    pub host_hand: Vec<String>,
    pub guest_hand: Vec<String>,
    pub stock: Vec<String>,
    pub played: Vec<String>,
    /// Both sides passed in a row: the game ends after this winner check.
    pub stalled: bool,
}

/// The mental_poker hook calls (method names follow the Python hook they call).
pub trait MentalPokerHooks {
    /// The full deck; both sides call it at setup (the host seals it) and in the audit.
    fn mp_deck_universe(&mut self) -> Result<Vec<Card>, HookError>;
    fn mp_initial_deal(&mut self) -> Result<DealPlan, HookError>;
    /// Installs the table view for the hooks that follow.
    fn mp_show_table(&mut self, view: &TableView) -> Result<(), HookError>;
    /// This side's action for its `action_seq`-th turn, through its control mode.
    fn mp_choose_action(&mut self, action_seq: u64) -> Result<LocalAction, HookError>;
    /// The game's rules on the peer's play (`who` played `play`, an `mp_play` frame).
    fn mp_validate_play(&mut self, who: Role, play: &Value) -> Result<Verdict, HookError>;
    /// `host`, `guest` or `draw` once the game is decided (also after a stall), else None.
    fn mp_check_winner(&mut self) -> Result<Option<String>, HookError>;
}

/// A universe as the hooks returned it (pairs of integers 0–255), typed; the error names
/// the first entry that is not a card.
pub fn universe_from_value(value: &Value) -> Result<Vec<Card>, String> {
    let Value::Array(items) = value else {
        return Err("expected a list of (rank, suit) pairs".into());
    };
    items
        .iter()
        .enumerate()
        .map(|(index, item)| {
            let pair = item.as_array().filter(|pair| pair.len() == 2);
            let index_of = |v: &Value| v.as_u64().and_then(|n| u8::try_from(n).ok());
            match pair.map(|pair| (index_of(&pair[0]), index_of(&pair[1]))) {
                Some((Some(rank), Some(suit))) => Ok(Card { rank, suit }),
                _ => Err(format!(
                    "entry {index} ({item}) is not a (rank, suit) pair of integers 0-255"
                )),
            }
        })
        .collect()
}

/// A deal plan as the hooks returned it (`{"host": n, "guest": m}`; a missing side gets 0).
pub fn deal_plan_from_value(value: &Value) -> Result<DealPlan, String> {
    let count = |side: &str| match value.get(side) {
        None => Ok(0),
        Some(count) => count
            .as_u64()
            .and_then(|n| usize::try_from(n).ok())
            .ok_or_else(|| format!("{side}: expected a card count, got {count}")),
    };
    if !value.is_object() {
        return Err(format!(
            "expected {{\"host\": n, \"guest\": m}}, got {value}"
        ));
    }
    Ok(DealPlan {
        host: count("host")?,
        guest: count("guest")?,
    })
}

/// An action as the hooks returned it.
pub fn action_from_value(value: &Value) -> Result<LocalAction, String> {
    let kind = value.get("kind").and_then(Value::as_str);
    match kind {
        Some("draw") => Ok(LocalAction::Draw),
        Some("pass") => Ok(LocalAction::Pass),
        Some("play") => {
            let id_b = value
                .get("id_b")
                .and_then(Value::as_str)
                .ok_or("a play needs id_b (a card id of the local hand)")?
                .to_string();
            let call_suit = match value.get("call_suit") {
                None | Some(Value::Null) => None,
                Some(suit) => Some(
                    suit.as_u64()
                        .and_then(|n| u8::try_from(n).ok())
                        .ok_or_else(|| format!("call_suit: expected a suit index, got {suit}"))?,
                ),
            };
            Ok(LocalAction::Play { id_b, call_suit })
        }
        _ => Err(format!("expected kind play, draw or pass, got {value}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn hook_values_become_types() {
        assert_eq!(
            universe_from_value(&json!([[0, 1], [12, 3]])),
            Ok(vec![Card { rank: 0, suit: 1 }, Card { rank: 12, suit: 3 }])
        );
        for bad in [
            json!([[0]]),
            json!([[0, 256]]),
            json!([[true, 1]]),
            json!({"a": 1}),
        ] {
            assert!(universe_from_value(&bad).is_err(), "{bad}");
        }
        assert_eq!(
            deal_plan_from_value(&json!({"host": 5})),
            Ok(DealPlan { host: 5, guest: 0 })
        );
        assert!(deal_plan_from_value(&json!({"host": -1})).is_err());
        assert_eq!(
            action_from_value(&json!({"kind": "play", "id_b": "3", "call_suit": null})),
            Ok(LocalAction::Play {
                id_b: "3".into(),
                call_suit: None
            })
        );
        assert_eq!(
            action_from_value(&json!({"kind": "draw"})),
            Ok(LocalAction::Draw)
        );
        assert!(action_from_value(&json!({"kind": "fold"})).is_err());
    }
}
