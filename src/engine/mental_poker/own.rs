//! What only this side knows: its RSA key and table tokens, its layer's keys, how its cards
//! map between the two id spaces, the blinding factors of its own transfers, and its hand.
//! Kept in memory only (the keys wipe themselves when dropped); it is opened to the peer
//! after the game, as the audit needs, and never written anywhere.

use std::collections::BTreeMap;

use super::deck::LayerKey;
use super::ot::{Label, Layer, SenderTable};
use super::rsa::OtPrivateKey;
use super::wire::{Opening, OpeningItem, Witness};
use crate::hooks::Card;
use crate::spec::Role;

/// A card in this side's hand: its face and both its keys (what a play shows).
pub(crate) struct Held {
    pub card: Card,
    pub k_inner: LayerKey,
    pub k_outer: LayerKey,
}

pub(crate) struct Own {
    pub role: Role,
    pub key: OtPrivateKey,
    pub table: SenderTable,
    /// This side's layer keys: the host's by id-A, the guest's by id-B.
    pub layer_keys: Vec<LayerKey>,
    /// The guest's shuffle: the id-A each of its id-Bs wraps (empty for the host).
    pub guest_order: Vec<usize>,
    /// The transfers this side asked for.
    pub witnesses: Vec<Witness>,
    pub hand: BTreeMap<usize, Held>,
}

impl Own {
    pub fn new(
        role: Role,
        key: OtPrivateKey,
        table: SenderTable,
        layer_keys: Vec<LayerKey>,
        guest_order: Vec<usize>,
    ) -> Own {
        Own {
            role,
            key,
            table,
            layer_keys,
            guest_order,
            witnesses: Vec::new(),
            hand: BTreeMap::new(),
        }
    }

    /// The label this side asks for to take card `id_b`: the host's inner key of its blob A
    /// (guest), or the guest's outer key of that very card (host).
    pub fn label_for(&self, id_b: usize) -> Label {
        match self.role {
            Role::Guest => Label::new(Layer::Inner, self.guest_order[id_b]),
            Role::Host => Label::new(Layer::Outer, id_b),
        }
    }

    /// This side's opening: every token (labels sorted as strings, as the reference does),
    /// then every layer key in index order.
    pub fn opening(&self) -> Opening {
        let layer = Layer::of(self.role);
        let mut labels: Vec<Label> = (0..self.layer_keys.len())
            .map(|index| Label::new(layer, index))
            .collect();
        labels.sort_by_key(Label::to_string);
        let tokens = labels.into_iter().map(|label| OpeningItem::Token {
            label,
            token: Box::new(self.table.tokens[label.index]),
        });
        let keys = self
            .layer_keys
            .iter()
            .enumerate()
            .map(|(index, key)| OpeningItem::Key {
                label: Label::new(layer, index),
                key: key.clone(),
            });
        Opening {
            layer,
            items: tokens.chain(keys).collect(),
        }
    }
}
