//! `mp_setup_a` and `mp_setup_b`: a side's OT key, its layer of the deck and its sealed
//! table.

use serde_json::{Value, json};

use super::{embedded, list, str_field};
use crate::canonical::PyJson;
use crate::engine::mental_poker::abort::{Abort, Reason};
use crate::engine::mental_poker::deck::{BlobA, BlobB};
use crate::engine::mental_poker::ot::{Label, Layer, SealedEntry};
use crate::engine::mental_poker::rsa::{E, OtPublicKey};
use crate::engine::mental_poker::transcript::{Payload, int, text};

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
            .with("e", int(E))
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
