//! A table as a person sees it: the display model a seat's hooks make of its verified view
//! (`proto_group_table(view, member, events)`, built with `aigenora.proto.table_view`) — the
//! seats in turn order with whose turn it is, the cards this seat may see, the centre, the
//! score and the step in words. A member (and a leader with a seat) computes it after each
//! step and keeps it in `room.json` beside the raw view; the browser controller draws it and
//! the room's terminal prints it ([`Table::lines`]). What the hooks return is checked here:
//! every list and text bounded, every card a known suit, so a view the network shaped cannot
//! make the page or the terminal draw without limit.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::hooks::python_hooks::PythonHooks;
use crate::room::checkpoint::RoomMember;

/// The most seats, piles, facts, log lines and cards in one list, and characters in one text.
const MOST_SEATS: usize = 16;
const MOST_PILES: usize = 24;
const MOST_FACTS: usize = 16;
const MOST_LOG: usize = 32;
const MOST_CARDS: usize = 160;
const LONGEST_TEXT: usize = 400;

/// The display model of one seat's view.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Table {
    pub title: String,
    pub phase: String,
    /// Whose turn and what is asked, in words ("" when nobody is to act).
    pub turn: String,
    pub seats: Vec<Seat>,
    pub centre: Vec<Pile>,
    pub facts: Vec<Fact>,
    pub score: Vec<Fact>,
    /// The step's events in words.
    pub log: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Seat {
    pub seat: u32,
    pub name: String,
    pub you: bool,
    pub to_act: bool,
    pub facts: Vec<Fact>,
    /// The cards this side may see.
    pub cards: Vec<Card>,
    /// How many more it holds, face down.
    pub hidden: u32,
}

/// Cards laid out in the middle (the board, a trick, melds), or a line of text.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Pile {
    pub label: String,
    pub cards: Vec<Card>,
    pub text: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Fact {
    pub label: String,
    pub value: String,
}

/// A card or tile by what is printed on it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Card {
    pub suit: Suit,
    /// A, K, Q, J, 10..2; Big or Small for a joker; a tile's number or name; a named card's name.
    pub face: String,
    /// A named card's numbers (cost, power...).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub note: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Suit {
    Spades,
    Hearts,
    Diamonds,
    Clubs,
    Joker,
    Characters,
    Dots,
    Bamboo,
    Wind,
    Dragon,
    /// A card with a name of its own rather than a suit.
    Plain,
}

impl Card {
    /// The card as text: A♠, 10♥, Big joker, 3 bamboo, East wind, a named card's name.
    pub fn text(&self) -> String {
        let symbol = match self.suit {
            Suit::Spades => "♠",
            Suit::Hearts => "♥",
            Suit::Diamonds => "♦",
            Suit::Clubs => "♣",
            Suit::Plain => return self.face.clone(),
            _ => return format!("{} {}", self.face, suit_name(self.suit)),
        };
        format!("{}{symbol}", self.face)
    }
}

fn suit_name(suit: Suit) -> &'static str {
    match suit {
        Suit::Joker => "joker",
        Suit::Characters => "characters",
        Suit::Dots => "dots",
        Suit::Bamboo => "bamboo",
        Suit::Wind => "wind",
        Suit::Dragon => "dragon",
        _ => "",
    }
}

impl Table {
    /// What a table's hooks returned, checked: the model's shape, and every list and text
    /// within its bound.
    pub fn checked(value: Value) -> Result<Table, String> {
        let table: Table =
            serde_json::from_value(value).map_err(|e| format!("not a table model: {e}"))?;
        table.check()?;
        Ok(table)
    }

    fn check(&self) -> Result<(), String> {
        let texts = [&self.title, &self.phase, &self.turn]
            .into_iter()
            .chain(&self.log)
            .chain(self.seats.iter().map(|seat| &seat.name))
            .chain(
                self.centre
                    .iter()
                    .flat_map(|pile| [&pile.label, &pile.text]),
            )
            .chain(self.all_facts().flat_map(|fact| [&fact.label, &fact.value]))
            .chain(self.all_cards().flat_map(|card| [&card.face, &card.note]));
        for text in texts {
            if text.chars().count() > LONGEST_TEXT {
                return Err(format!("a text longer than {LONGEST_TEXT} characters"));
            }
        }
        let within = |what: &str, count: usize, most: usize| {
            if count > most {
                Err(format!("{count} {what} (at most {most})"))
            } else {
                Ok(())
            }
        };
        within("seats", self.seats.len(), MOST_SEATS)?;
        within("piles", self.centre.len(), MOST_PILES)?;
        within("log lines", self.log.len(), MOST_LOG)?;
        within("facts", self.facts.len().max(self.score.len()), MOST_FACTS)?;
        for seat in &self.seats {
            within("facts of a seat", seat.facts.len(), MOST_FACTS)?;
            within("cards of a seat", seat.cards.len(), MOST_CARDS)?;
        }
        for pile in &self.centre {
            within("cards in a pile", pile.cards.len(), MOST_CARDS)?;
        }
        Ok(())
    }

    fn all_facts(&self) -> impl Iterator<Item = &Fact> {
        self.facts
            .iter()
            .chain(&self.score)
            .chain(self.seats.iter().flat_map(|seat| &seat.facts))
    }

    fn all_cards(&self) -> impl Iterator<Item = &Card> {
        self.seats
            .iter()
            .flat_map(|seat| &seat.cards)
            .chain(self.centre.iter().flat_map(|pile| &pile.cards))
    }

    /// The table as a few lines of text for a terminal (not yet escaped): the title and
    /// phase, whose turn, each seat with its facts and the cards shown, the centre, the
    /// table's facts and the score, then the step in words.
    pub fn lines(&self) -> Vec<String> {
        let mut lines = vec![format!("{} — {}", self.title, self.phase)];
        if !self.turn.is_empty() {
            lines.push(format!("  {}", self.turn));
        }
        for seat in &self.seats {
            let mark = if seat.to_act { "▶" } else { " " };
            let mut line = format!(
                "{mark} {}{}",
                seat.name,
                if seat.you { " (you)" } else { "" }
            );
            if !seat.facts.is_empty() {
                line.push_str(&format!(" · {}", facts_text(&seat.facts)));
            }
            if !seat.cards.is_empty() {
                line.push_str(&format!(" · {}", cards_text(&seat.cards)));
            }
            if seat.hidden > 0 {
                line.push_str(&format!(" · {} face down", seat.hidden));
            }
            lines.push(line);
        }
        for pile in &self.centre {
            let shown = [cards_text(&pile.cards), pile.text.clone()]
                .into_iter()
                .filter(|part| !part.is_empty())
                .collect::<Vec<_>>()
                .join(" · ");
            lines.push(format!(
                "  {}: {}",
                pile.label,
                if shown.is_empty() { "–" } else { &shown }
            ));
        }
        if !self.facts.is_empty() {
            lines.push(format!("  {}", facts_text(&self.facts)));
        }
        if !self.score.is_empty() {
            lines.push(format!("  score: {}", facts_text(&self.score)));
        }
        lines.extend(self.log.iter().map(|line| format!("  · {line}")));
        lines
    }
}

fn facts_text(facts: &[Fact]) -> String {
    facts
        .iter()
        .map(|fact| format!("{} {}", fact.label, fact.value))
        .collect::<Vec<_>>()
        .join(", ")
}

fn cards_text(cards: &[Card]) -> String {
    cards.iter().map(Card::text).collect::<Vec<_>>().join(" ")
}

/// The table of `viewer`'s `view` after a step with `events`, by `hooks`: `Ok(None)` for a
/// room whose hooks draw no table, `Err` with the hook's failure or what is wrong with its
/// model (the raw view is still shown).
pub fn draw(
    hooks: &PythonHooks,
    view: &Map<String, Value>,
    viewer: &RoomMember,
    events: &[Value],
) -> Result<Option<Table>, String> {
    match hooks.room_table(view, viewer, events) {
        Ok(Some(model)) => Table::checked(model).map(Some),
        Ok(None) => Ok(None),
        Err(failure) => Err(failure.message),
    }
}

/// The table this side draws, and why it could not when it could not, as `room.json` keeps
/// them.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Drawn {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub table: Option<Table>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub table_error: Option<String>,
}

impl Drawn {
    pub fn of(result: Result<Option<Table>, String>) -> Drawn {
        match result {
            Ok(table) => Drawn {
                table,
                table_error: None,
            },
            Err(error) => Drawn {
                table: None,
                table_error: Some(error),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn model() -> Value {
        json!({
            "title": "Texas Hold'em", "phase": "hand 1, flop", "turn": "Your turn: check or bet",
            "seats": [
                {"seat": 0, "name": "Seat 0 (0a0a0a)", "you": true, "to_act": true,
                 "facts": [{"label": "stack", "value": "990"}],
                 "cards": [{"suit": "spades", "face": "A"}, {"suit": "hearts", "face": "10"}],
                 "hidden": 0},
                {"seat": 1, "name": "Seat 1 (0b0b0b)", "you": false, "to_act": false,
                 "facts": [], "cards": [], "hidden": 2}
            ],
            "centre": [{"label": "Board", "cards": [{"suit": "joker", "face": "Big"},
                                                    {"suit": "bamboo", "face": "3"}], "text": ""}],
            "facts": [{"label": "pot", "value": "20"}],
            "score": [{"label": "Seat 0", "value": "990"}],
            "log": ["Seat 1 (0b0b0b) call, amount 10"]
        })
    }

    #[test]
    fn a_model_reads_as_lines_with_cards_as_faces() {
        let table = Table::checked(model()).unwrap();
        assert_eq!(
            table.lines(),
            [
                "Texas Hold'em — hand 1, flop",
                "  Your turn: check or bet",
                "▶ Seat 0 (0a0a0a) (you) · stack 990 · A♠ 10♥",
                "  Seat 1 (0b0b0b) · 2 face down",
                "  Board: Big joker 3 bamboo",
                "  pot 20",
                "  score: Seat 0 990",
                "  · Seat 1 (0b0b0b) call, amount 10",
            ]
        );
    }

    #[test]
    fn a_model_out_of_shape_or_bounds_is_refused_with_its_reason() {
        let mut unknown_suit = model();
        unknown_suit["centre"][0]["cards"][0]["suit"] = json!("stars");
        assert!(
            Table::checked(unknown_suit)
                .unwrap_err()
                .contains("unknown variant")
        );
        let mut long = model();
        long["title"] = json!("x".repeat(LONGEST_TEXT + 1));
        assert!(Table::checked(long).unwrap_err().contains("longer than"));
        let mut many = model();
        many["log"] = json!(vec!["line"; MOST_LOG + 1]);
        assert_eq!(
            Table::checked(many).unwrap_err(),
            format!("{} log lines (at most {MOST_LOG})", MOST_LOG + 1)
        );
        let mut extra = model();
        extra["script"] = json!("<b>");
        assert!(Table::checked(extra).unwrap_err().contains("unknown field"));
    }
}
