//! The frames of the deal and the turns: transfer requests and answers, and plays.

use crypto_bigint::U2048;
use serde_json::{Value, json};

use crate::engine::mental_poker::abort::{Abort, Reason};
use crate::engine::mental_poker::codec;
use crate::engine::mental_poker::deck::LayerKey;
use crate::engine::mental_poker::ot::{OtId, canonical_index};
use crate::engine::mental_poker::transcript::{Payload, int, text};
use crate::hooks::Card;
use crate::spec::Role;

/// `mp_ot_request {id, z}`.
pub(crate) fn ot_request(id: OtId, z: &U2048) -> Value {
    json!({"action": "mp_ot_request", "id": id.to_string(), "z": codec::big_hex(z)})
}

/// `mp_ot_response {id, y}`.
pub(crate) fn ot_response(id: &str, y: &U2048) -> Value {
    json!({"action": "mp_ot_response", "id": id, "y": codec::big_hex(y)})
}

/// An OT frame's `id` and its value (`z` or `y`) in canonical 512-digit hex.
pub(crate) fn parse_ot(frame: &Value, field: &str) -> Result<(String, U2048), Abort> {
    let id = frame.get("id").and_then(Value::as_str).unwrap_or_default();
    let value = frame
        .get(field)
        .and_then(Value::as_str)
        .and_then(codec::big)
        .ok_or_else(|| {
            Abort::new(
                Reason::OtValueOutOfRange,
                format!("{field} of {id} is not 512 lowercase hex digits"),
            )
        })?;
    Ok((id.to_string(), value))
}

/// `mp_play`: a card out of a hand, with both its keys and its declared face.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Play {
    pub id_b: usize,
    pub card: Card,
    pub call_suit: Option<u8>,
    pub k_inner: LayerKey,
    pub k_outer: LayerKey,
}

impl Play {
    pub fn frame(&self) -> Value {
        let mut frame = json!({
            "action": "mp_play",
            "id_b": self.id_b.to_string(),
            "k_inner": self.k_inner.to_hex(),
            "k_outer": self.k_outer.to_hex(),
            "rank": self.card.rank,
            "suit": self.card.suit,
        });
        if let Some(suit) = self.call_suit {
            frame["call_suit"] = suit.into();
        }
        frame
    }

    /// A peer's play. An id that is no card of this deck is simply not in its hand.
    pub fn parse(frame: &Value, deck_size: usize) -> Result<Play, Abort> {
        let malformed = |what: &str| Abort::new(Reason::MalformedPlay, what.to_string());
        let id = frame
            .get("id_b")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let id_b = canonical_index(id)
            .filter(|&id| id < deck_size)
            .ok_or_else(|| {
                Abort::new(
                    Reason::CardNotInHand,
                    format!("{id:?} is no card of this deck"),
                )
            })?;
        let key = |field: &str| {
            frame
                .get(field)
                .and_then(Value::as_str)
                .and_then(LayerKey::parse)
                .ok_or_else(|| malformed(&format!("{field} is not 64 lowercase hex digits")))
        };
        let index = |field: &str| -> Result<Option<u8>, Abort> {
            match frame.get(field) {
                None | Some(Value::Null) => Ok(None),
                Some(value) => value
                    .as_u64()
                    .and_then(|n| u8::try_from(n).ok())
                    .map(Some)
                    .ok_or_else(|| malformed(&format!("{field} is not an index 0-255"))),
            }
        };
        let (rank, suit) = (index("rank")?, index("suit")?);
        let (Some(rank), Some(suit)) = (rank, suit) else {
            return Err(malformed("rank and suit are required"));
        };
        Ok(Play {
            id_b,
            card: Card { rank, suit },
            call_suit: index("call_suit")?,
            k_inner: key("k_inner")?,
            k_outer: key("k_outer")?,
        })
    }

    /// The transcript entry: who played what (no keys).
    pub fn payload(&self, who: Role) -> Payload {
        let payload = Payload::new()
            .with("who", text(who.as_str()))
            .with("id_b", text(self.id_b.to_string()))
            .with("rank", int(self.card.rank.into()))
            .with("suit", int(self.card.suit.into()));
        match self.call_suit {
            Some(suit) => payload.with("call_suit", int(suit.into())),
            None => payload,
        }
    }
}
