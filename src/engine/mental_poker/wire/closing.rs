//! The closing frames: openings, witnesses and the terminal receipt.

use crypto_bigint::U2048;
use serde_json::{Value, json};

use super::{embedded, embedded_object, has_exactly, list, str_field};
use crate::canonical::PyJson;
use crate::engine::mental_poker::abort::{Abort, Reason};
use crate::engine::mental_poker::codec;
use crate::engine::mental_poker::deck::LayerKey;
use crate::engine::mental_poker::ot::{Label, Layer, OtId};
use crate::engine::mental_poker::transcript::{Payload, big, text};
use crate::spec::Role;

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
