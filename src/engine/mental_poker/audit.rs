//! The end-of-game audit, run by each side over the public record and both openings (it
//! trusts nothing either side merely claims):
//!
//! 1. the id-B → id-A map, derived by opening every blob B with its opened outer key — one
//!    to one onto the host's blobs;
//! 2. both sealed tables: every token verifies under its table's public key, opens its
//!    sealed entry, and the entry holds exactly the opened layer key (a side's own table it
//!    checked as it sealed it, so there it checks only that every label is opened);
//! 3. the whole deck: every face rebuilt from the opened keys, as a set equal to the deck
//!    our own hooks declare;
//! 4. every play bound to the opened keys and the rebuilt face (the reference skips this,
//!    so a dealer could play a card it did not hold);
//! 5. every transfer's witness: `z` from the record, never from the witness, pins the label
//!    asked for, and that label must be the single card planned for that transfer.

use std::collections::{BTreeMap, BTreeSet};

use crypto_bigint::U2048;
use serde_json::{Value, json};

use super::abort::Reason;
use super::deck::{BlobA, LayerKey, open_blob, open_card};
use super::ot::{Label, Layer, verify_token, verify_witness};
use super::table::{OtRecord, Table};
use super::threads::parallel_map;
use super::wire::{Opening, OpeningItem, Witness};
use crate::hooks::Card;
use crate::spec::Role;

/// A failed audit: the reason and what shows it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct AuditFailure {
    pub reason: Reason,
    pub evidence: Value,
}

fn fail<T>(reason: Reason, evidence: Value) -> Result<T, AuditFailure> {
    Err(AuditFailure { reason, evidence })
}

/// One opening, indexed: tokens and keys by label index (first occurrence), plus whether
/// any label came twice.
struct Opened {
    token_order: Vec<usize>,
    tokens: BTreeMap<usize, U2048>,
    keys: BTreeMap<usize, LayerKey>,
    repeated: bool,
}

impl Opened {
    fn of(opening: &Opening) -> Opened {
        let mut opened = Opened {
            token_order: Vec::new(),
            tokens: BTreeMap::new(),
            keys: BTreeMap::new(),
            repeated: false,
        };
        for item in &opening.items {
            let fresh = match item {
                OpeningItem::Token { label, token } => {
                    opened.token_order.push(label.index);
                    opened.tokens.insert(label.index, **token).is_none()
                }
                OpeningItem::Key { label, key } => {
                    opened.keys.insert(label.index, key.clone()).is_none()
                }
            };
            opened.repeated |= !fresh;
        }
        opened
    }

    fn key(&self, index: usize) -> &LayerKey {
        &self.keys[&index]
    }
}

/// Runs the audit; `universe` is this side's own `proto_mp_deck_universe()`. `own` is the
/// table the auditor sealed itself, whose tokens it checked as it made them (`None` for a
/// third party, which checks both).
pub(crate) fn audit(
    table: &Table,
    host: &Opening,
    guest: &Opening,
    witnesses: &[Witness],
    universe: &[Card],
    own: Option<Layer>,
) -> Result<(), AuditFailure> {
    let (inner, outer) = (Opened::of(host), Opened::of(guest));
    let id_map = derive_id_map(table, &outer)?;
    check_table(table, Layer::Inner, &inner, own == Some(Layer::Inner))?;
    check_table(table, Layer::Outer, &outer, own == Some(Layer::Outer))?;
    let faces = full_deck(table, &id_map, &inner, universe)?;
    check_plays(table, &id_map, &inner, &outer, &faces)?;
    check_witnesses(table, &id_map, witnesses)
}

/// id-B → id-A, from the data alone.
fn derive_id_map(table: &Table, outer: &Opened) -> Result<Vec<usize>, AuditFailure> {
    let failed = |detail: String| fail(Reason::DeriveIdMapFailed, json!({"detail": detail}));
    let mut used = BTreeSet::new();
    let mut map = Vec::with_capacity(table.deck_size());
    for (id_b, blob) in table.outer.blobs.iter().enumerate() {
        let Some(key) = outer.keys.get(&id_b) else {
            return failed(format!("missing k_outer for g-{id_b}"));
        };
        let Some(blob_a) = open_blob(key, blob) else {
            return failed(format!("cannot open blob B {id_b}"));
        };
        let Some(id_a) = table.id_a_of(&blob_a) else {
            return failed(format!(
                "blob B {id_b} does not wrap a blob of the host's setup"
            ));
        };
        if !used.insert(id_a) {
            return failed(format!("blob A {id_a} is wrapped twice"));
        }
        map.push(id_a);
    }
    Ok(map)
}

/// One sealed table against its opening (only its key sets, for the auditor's own).
fn check_table(
    table: &Table,
    layer: Layer,
    opened: &Opened,
    own: bool,
) -> Result<(), AuditFailure> {
    let all: BTreeSet<usize> = (0..table.deck_size()).collect();
    let tokens: BTreeSet<usize> = opened.tokens.keys().copied().collect();
    let keys: BTreeSet<usize> = opened.keys.keys().copied().collect();
    if opened.repeated || tokens != all || keys != all {
        let names = |set: &BTreeSet<usize>| -> Vec<String> {
            set.iter()
                .map(|&i| Label::new(layer, i).to_string())
                .collect()
        };
        let evidence =
            json!({"tokens": names(&tokens), "keys": names(&keys), "repeated": opened.repeated});
        return fail(Reason::KeysetMismatch, evidence);
    }
    if own {
        return Ok(());
    }
    let key = table.key_of(layer.owner());
    let failures = parallel_map(&opened.token_order, |&index| {
        let label = Label::new(layer, index);
        let token = &opened.tokens[&index];
        if !verify_token(&table.binding, key, label, token) {
            return Some(Reason::ForgedToken);
        }
        let context = table.binding.context(label);
        match table.sealed(label).open(token, &context) {
            None => Some(Reason::SealedPayloadPoisoned),
            Some(payload) if payload != *opened.key(index) => Some(Reason::PayloadMismatch),
            Some(_) => None,
        }
    });
    let first = opened
        .token_order
        .iter()
        .zip(failures)
        .find_map(|(index, failure)| Some((index, failure?)));
    if let Some((&index, reason)) = first {
        return fail(
            reason,
            json!({"label": Label::new(layer, index).to_string()}),
        );
    }
    Ok(())
}

/// Every face, by id-B, checked against the declared universe as a set.
fn full_deck(
    table: &Table,
    id_map: &[usize],
    inner: &Opened,
    universe: &[Card],
) -> Result<Vec<Card>, AuditFailure> {
    let mut faces = Vec::with_capacity(id_map.len());
    for (id_b, &id_a) in id_map.iter().enumerate() {
        let blob: &BlobA = &table.inner.blobs[id_a];
        let Some(card) = open_card(inner.key(id_a), blob) else {
            return fail(
                Reason::InnerOpenFailed,
                json!({"id_a": id_a.to_string(), "id_b": id_b.to_string()}),
            );
        };
        faces.push(card);
    }
    let expected: BTreeSet<Card> = universe.iter().copied().collect();
    let actual: BTreeSet<Card> = faces.iter().copied().collect();
    if faces.len() != expected.len() {
        return fail(
            Reason::DeckSizeMismatch,
            json!({"actual": faces.len(), "expected": expected.len()}),
        );
    }
    if actual != expected {
        let cards = |set: BTreeSet<&Card>| -> Vec<[u8; 2]> {
            set.into_iter().map(|c| [c.rank, c.suit]).collect()
        };
        let evidence = json!({
            "missing": cards(expected.difference(&actual).collect()),
            "extra": cards(actual.difference(&expected).collect()),
        });
        return fail(Reason::DeckUniverseMismatch, evidence);
    }
    Ok(faces)
}

/// Every play used the keys that were opened for its card, and showed its true face.
fn check_plays(
    table: &Table,
    id_map: &[usize],
    inner: &Opened,
    outer: &Opened,
    faces: &[Card],
) -> Result<(), AuditFailure> {
    for (who, play) in &table.plays {
        let id_b = play.id_b;
        let bound = play.k_outer == *outer.key(id_b)
            && play.k_inner == *inner.key(id_map[id_b])
            && play.card == faces[id_b];
        if !bound {
            return fail(
                Reason::PlayKeyMismatch,
                json!({"who": who.as_str(), "id_b": id_b.to_string()}),
            );
        }
    }
    Ok(())
}

/// Both directions of transfers against their witnesses: first that every witness names a
/// transfer of the record, then the guest's transfers, then the host's.
fn check_witnesses(
    table: &Table,
    id_map: &[usize],
    witnesses: &[Witness],
) -> Result<(), AuditFailure> {
    let of = |requester: Role| -> Vec<(usize, &Witness)> {
        let witnesses = witnesses.iter().enumerate();
        witnesses
            .filter(|(_, w)| w.ot_id.requester == requester)
            .collect()
    };
    let record = |witness: &Witness| table.ots.iter().find(|ot| ot.id == witness.ot_id);
    for witness in witnesses {
        if record(witness).is_none() {
            return fail(
                Reason::OtSnapshotMissing,
                json!({"ot_id": witness.ot_id.to_string()}),
            );
        }
    }
    let mut id_b_of_id_a = vec![0; id_map.len()];
    for (id_b, &id_a) in id_map.iter().enumerate() {
        id_b_of_id_a[id_a] = id_b;
    }
    let verified = parallel_map(witnesses, |witness| {
        let ot = record(witness).expect("checked above");
        let key = table.key_of(witness.ot_id.requester.peer());
        verify_witness(&table.binding, key, witness.label, &ot.z, &witness.r)
    });
    for requester in [Role::Guest, Role::Host] {
        let given = of(requester);
        let ids: Vec<String> = given.iter().map(|(_, w)| w.ot_id.to_string()).collect();
        let unique: BTreeSet<&String> = ids.iter().collect();
        if unique.len() != ids.len() {
            return fail(
                Reason::DuplicateWitnessOtId,
                json!({"requester": requester.as_str()}),
            );
        }
        let done: BTreeSet<String> = table
            .ots
            .iter()
            .filter(|ot| ot.id.requester == requester)
            .map(|ot| ot.id.to_string())
            .collect();
        let unique: BTreeSet<String> = ids.iter().cloned().collect();
        if unique != done {
            let evidence = json!({
                "missing": done.difference(&unique).collect::<Vec<_>>(),
                "extra": unique.difference(&done).collect::<Vec<_>>(),
            });
            return fail(Reason::WitnessTranscriptMismatch, evidence);
        }
        for (at, witness) in given {
            let ot: &OtRecord = record(witness).expect("checked above");
            check_witness(&id_b_of_id_a, witness, ot, verified[at])?;
        }
    }
    Ok(())
}

/// One witness (whose `z = FDH·r^e` check came out `verified`) names the card planned for
/// its transfer.
fn check_witness(
    id_b_of_id_a: &[usize],
    witness: &Witness,
    ot: &OtRecord,
    verified: bool,
) -> Result<(), AuditFailure> {
    let owner = witness.ot_id.requester.peer();
    let label = witness.label;
    let id = witness.ot_id.to_string();
    if !verified {
        return fail(Reason::BadWitness, json!({"ot_id": id}));
    }
    let in_range = label.index < id_b_of_id_a.len() && label.layer == Layer::of(owner);
    if !in_range {
        return fail(
            Reason::LabelNotInMap,
            json!({"ot_id": id, "label": label.to_string()}),
        );
    }
    let id_b = match label.layer {
        Layer::Inner => id_b_of_id_a[label.index],
        Layer::Outer => label.index,
    };
    if id_b != ot.card {
        let evidence = json!({"ot_id": id, "id_b": id_b.to_string(), "label": label.to_string()});
        return fail(Reason::PeekedNonHand, evidence);
    }
    Ok(())
}
