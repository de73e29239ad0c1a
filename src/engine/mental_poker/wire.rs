//! The `mp_*` frames as types: how each is built (field order and text exactly as the
//! reference writes them) and parsed. Parsing is strict on top of the spec's schema check:
//! exact hex lengths, canonical numbers and ids, exact key sets inside the JSON texts the
//! frames carry, every big integer below its modulus. A frame that fails is a typed
//! [`Abort`], never a panic.

use crypto_bigint::U2048;
use serde_json::{Map, Value, json};

use super::abort::{Abort, Reason};
use super::codec;
use super::deck::{BlobA, BlobB, LayerKey};
use super::ot::{Label, Layer, OtId, SealedEntry, canonical_index};
use super::rsa::OtPublicKey;
use super::transcript::{Payload, big, int, text};
use crate::canonical::PyJson;
use crate::hooks::Card;
use crate::spec::Role;

/// A JSON text carried in a string field, as an object with exactly `keys`.
fn embedded(item: &Value, keys: &[&str]) -> Option<Map<String, Value>> {
    embedded_object(item).filter(|fields| has_exactly(fields, keys))
}

fn embedded_object(item: &Value) -> Option<Map<String, Value>> {
    match serde_json::from_str::<Value>(item.as_str()?) {
        Ok(Value::Object(fields)) => Some(fields),
        _ => None,
    }
}

fn has_exactly(fields: &Map<String, Value>, keys: &[&str]) -> bool {
    fields.len() == keys.len() && keys.iter().all(|key| fields.contains_key(*key))
}

fn str_field<'a>(fields: &'a Map<String, Value>, key: &str) -> Option<&'a str> {
    fields.get(key).and_then(Value::as_str)
}

fn list<'a>(frame: &'a Value, key: &str) -> Option<&'a Vec<Value>> {
    frame.get(key).and_then(Value::as_array)
}

/// A layer's blobs as one side publishes them.
pub(crate) trait Blob: Copy + Sized {
    const LAYER: Layer;
    const ACTION: &'static str;
    fn parse(text: &str) -> Option<Self>;
    fn hex(&self) -> String;
}

impl Blob for BlobA {
    const LAYER: Layer = Layer::Inner;
    const ACTION: &'static str = "mp_setup_a";
    fn parse(text: &str) -> Option<BlobA> {
        BlobA::parse(text)
    }
    fn hex(&self) -> String {
        BlobA::hex(self)
    }
}

impl Blob for BlobB {
    const LAYER: Layer = Layer::Outer;
    const ACTION: &'static str = "mp_setup_b";
    fn parse(text: &str) -> Option<BlobB> {
        BlobB::parse(text)
    }
    fn hex(&self) -> String {
        BlobB::hex(self)
    }
}

/// `mp_setup_a` / `mp_setup_b`: one side's OT key, its layer of the deck and its sealed table.
#[derive(Clone)]
pub(crate) struct Setup<B> {
    pub key: OtPublicKey,
    pub blobs: Vec<B>,
    pub sealed: Vec<SealedEntry>,
}

impl<B: Blob> Setup<B> {
    pub fn frame(&self) -> Value {
        let sealed: Vec<Value> = self
            .sealed
            .iter()
            .enumerate()
            .map(|(index, entry)| {
                let label = Label::new(B::LAYER, index);
                Value::String(format!(r#"{{"label":"{label}","c":"{}"}}"#, entry.hex()))
            })
            .collect();
        json!({
            "action": B::ACTION,
            "rsa_pub": self.key.to_json_text(),
            "blobs": self.blobs.iter().map(Blob::hex).collect::<Vec<_>>(),
            "sealed_keys": sealed,
        })
    }

    /// A peer's setup; `size` is the deck size it must have (the guest's must match the
    /// host's).
    pub fn parse(frame: &Value, size: Option<usize>) -> Result<Setup<B>, Abort> {
        let key = frame
            .get("rsa_pub")
            .and_then(Value::as_str)
            .and_then(OtPublicKey::parse)
            .ok_or_else(|| {
                Abort::new(
                    Reason::BadRsaKey,
                    "rsa_pub is not {e: 65537, n: 2048-bit odd}",
                )
            })?;
        let (Some(blobs), Some(sealed)) = (list(frame, "blobs"), list(frame, "sealed_keys")) else {
            return Err(Abort::new(
                Reason::SetupSizeMismatch,
                "blobs or sealed_keys missing",
            ));
        };
        let expected = size.unwrap_or(blobs.len());
        if blobs.len() != expected || sealed.len() != expected {
            let detail = format!(
                "{} blobs and {} sealed keys for a deck of {expected}",
                blobs.len(),
                sealed.len()
            );
            return Err(Abort::new(Reason::SetupSizeMismatch, detail));
        }
        let blobs = blobs
            .iter()
            .enumerate()
            .map(|(index, blob)| {
                blob.as_str().and_then(B::parse).ok_or_else(|| {
                    Abort::new(
                        Reason::BadBlob,
                        format!(
                            "blobs[{index}] is not a {}-layer blob of the exact size",
                            B::ACTION
                        ),
                    )
                })
            })
            .collect::<Result<Vec<B>, Abort>>()?;
        let sealed = sealed
            .iter()
            .enumerate()
            .map(|(index, item)| {
                let label = Label::new(B::LAYER, index).to_string();
                embedded(item, &["label", "c"])
                    .filter(|fields| str_field(fields, "label") == Some(&label))
                    .and_then(|fields| str_field(&fields, "c").and_then(SealedEntry::parse))
                    .ok_or_else(|| {
                        Abort::new(
                            Reason::BadSealedEntry,
                            format!("sealed_keys[{index}] is not {{label: {label}, c: 60 bytes}}"),
                        )
                    })
            })
            .collect::<Result<Vec<_>, Abort>>()?;
        Ok(Setup { key, blobs, sealed })
    }

    /// The transcript entry (`mp_setup_a` / `mp_setup_b`).
    pub fn payload(&self) -> Payload {
        let rsa_pub = Payload::new()
            .with("e", int(super::rsa::E))
            .with("n", text(self.key.n_hex()));
        let sealed =
            self.sealed
                .iter()
                .enumerate()
                .fold(Payload::new(), |table, (index, entry)| {
                    table.with(&Label::new(B::LAYER, index).to_string(), text(entry.hex()))
                });
        Payload::new()
            .with("rsa_pub", rsa_pub.into_json())
            .with(
                "blobs",
                PyJson::Array(self.blobs.iter().map(|b| text(b.hex())).collect()),
            )
            .with("sealed", sealed.into_json())
    }
}

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

/// One entry of an opening: a table token, or a layer key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum OpeningItem {
    Token { label: Label, token: Box<U2048> },
    Key { label: Label, key: LayerKey },
}

impl OpeningItem {
    fn kind(layer: Layer) -> &'static str {
        match layer {
            Layer::Inner => "k_inner",
            Layer::Outer => "k_outer",
        }
    }

    fn text(&self) -> String {
        match self {
            OpeningItem::Token { label, token } => format!(
                r#"{{"kind":"token","label":"{label}","token":"{}"}}"#,
                codec::big_hex(token)
            ),
            OpeningItem::Key { label, key } => format!(
                r#"{{"kind":"{}","label":"{label}","k":"{}"}}"#,
                OpeningItem::kind(label.layer),
                key.to_hex()
            ),
        }
    }

    fn payload(&self) -> PyJson {
        let payload = match self {
            OpeningItem::Token { label, token } => Payload::new()
                .with("kind", text("token"))
                .with("label", text(label.to_string()))
                .with("token", text(codec::big_hex(token))),
            OpeningItem::Key { label, key } => Payload::new()
                .with("kind", text(OpeningItem::kind(label.layer)))
                .with("label", text(label.to_string()))
                .with("k", text(key.to_hex())),
        };
        payload.into_json()
    }

    fn parse(item: &Value, layer: Layer) -> Option<OpeningItem> {
        let fields = embedded_object(item)?;
        let label = Label::parse(str_field(&fields, "label")?).filter(|l| l.layer == layer)?;
        match str_field(&fields, "kind")? {
            "token" if has_exactly(&fields, &["kind", "label", "token"]) => {
                let token = Box::new(codec::big(str_field(&fields, "token")?)?);
                Some(OpeningItem::Token { label, token })
            }
            kind if kind == OpeningItem::kind(layer)
                && has_exactly(&fields, &["kind", "label", "k"]) =>
            {
                let key = LayerKey::parse(str_field(&fields, "k")?)?;
                Some(OpeningItem::Key { label, key })
            }
            _ => None,
        }
    }
}

/// `mp_opening`: one side's tokens and layer keys, in the order it sent them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Opening {
    pub layer: Layer,
    pub items: Vec<OpeningItem>,
}

impl Opening {
    pub fn frame(&self) -> Value {
        let items: Vec<String> = self.items.iter().map(OpeningItem::text).collect();
        json!({"action": "mp_opening", "openings": items})
    }

    /// A peer's opening of its `layer`: each item well formed and of that layer (whether
    /// every label is there is the audit's question).
    pub fn parse(frame: &Value, layer: Layer) -> Result<Opening, Abort> {
        let items = list(frame, "openings")
            .ok_or_else(|| Abort::new(Reason::MalformedOpening, "openings is not a list"))?;
        let items = items
            .iter()
            .enumerate()
            .map(|(index, item)| {
                OpeningItem::parse(item, layer).ok_or_else(|| {
                    Abort::new(
                        Reason::MalformedOpening,
                        format!("openings[{index}] is not a token or key of the {layer:?} table"),
                    )
                })
            })
            .collect::<Result<_, _>>()?;
        Ok(Opening { layer, items })
    }

    pub fn payload(&self, role: Role) -> Payload {
        Payload::new().with("role", text(role.as_str())).with(
            "entries",
            PyJson::Array(self.items.iter().map(OpeningItem::payload).collect()),
        )
    }
}

/// One OT's witness: the label a side really asked for and its blinding factor.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Witness {
    pub ot_id: OtId,
    pub label: Label,
    pub r: U2048,
}

/// The witnesses in the order both clients list them: by ot_id as a string.
pub(crate) fn sorted(mut witnesses: Vec<Witness>) -> Vec<Witness> {
    witnesses.sort_by_key(|w| w.ot_id.to_string());
    witnesses
}

/// `mp_witness` of a side's own transfers.
pub(crate) fn witness_frame(witnesses: &[Witness]) -> Value {
    let items: Vec<String> = witnesses
        .iter()
        .map(|w| {
            format!(
                r#"{{"ot_id":"{}","label":"{}","r":"{}"}}"#,
                w.ot_id,
                w.label,
                codec::big_hex(&w.r)
            )
        })
        .collect();
    json!({"action": "mp_witness", "witnesses": items})
}

/// A peer's witnesses: each well formed and for one of its own transfers.
pub(crate) fn parse_witnesses(frame: &Value, from: Role) -> Result<Vec<Witness>, Abort> {
    let items = list(frame, "witnesses")
        .ok_or_else(|| Abort::new(Reason::MalformedWitness, "witnesses is not a list"))?;
    items
        .iter()
        .enumerate()
        .map(|(index, item)| {
            let fields = embedded(item, &["ot_id", "label", "r"]);
            let witness = fields.and_then(|fields| {
                Some(Witness {
                    ot_id: OtId::parse(str_field(&fields, "ot_id")?)
                        .filter(|id| id.requester == from)?,
                    label: Label::parse(str_field(&fields, "label")?)?,
                    r: codec::big(str_field(&fields, "r")?)?,
                })
            });
            witness.ok_or_else(|| {
                Abort::new(
                    Reason::MalformedWitness,
                    format!("witnesses[{index}] is not {{ot_id: {from}-n, label, r: 512 hex}}"),
                )
            })
        })
        .collect()
}

/// The transcript entry of one side's witnesses (already sorted).
pub(crate) fn witness_payload(role: Role, witnesses: &[Witness]) -> Payload {
    let items = witnesses
        .iter()
        .map(|w| {
            Payload::new()
                .with("ot_id", text(w.ot_id.to_string()))
                .with("label", text(w.label.to_string()))
                .with("r", big(&w.r))
                .into_json()
        })
        .collect();
    Payload::new()
        .with("role", text(role.as_str()))
        .with("witnesses", PyJson::Array(items))
}

/// `mp_terminal_receipt`: a signature over the transcript root.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Receipt {
    pub transcript_hash: String,
    pub signature: String,
    pub audit_status: String,
    pub public_key: String,
}

impl Receipt {
    pub fn frame(&self) -> Value {
        json!({
            "action": "mp_terminal_receipt",
            "transcript_hash": self.transcript_hash,
            "signature": self.signature,
            "audit_status": self.audit_status,
            "public_key": self.public_key,
        })
    }

    pub fn parse(frame: &Value) -> Receipt {
        let field = |key: &str| {
            frame
                .get(key)
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string()
        };
        Receipt {
            transcript_hash: field("transcript_hash"),
            signature: field("signature"),
            audit_status: field("audit_status"),
            public_key: field("public_key"),
        }
    }
}
