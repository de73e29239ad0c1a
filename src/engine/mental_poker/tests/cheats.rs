//! Test-only switches that make our own engine misbehave on one side (each side runs on its
//! own thread, so a thread-local switch touches one side only): the dealer and player cheats
//! of the catalogue that need a side's secrets, faster fixed RSA keys, and a spy on what a
//! side learnt in setup (for the fairness test).

use std::cell::RefCell;

use crypto_bigint::U2048;

use crate::engine::mental_poker::deck::LayerKey;
use crate::engine::mental_poker::ot::{Label, OtId, SealedEntry};
use crate::engine::mental_poker::player::{Player, Stop};
use crate::engine::mental_poker::rsa::OtPublicKey;
use crate::engine::mental_poker::wire::{self, Opening, OpeningItem, Receipt, Witness};
use crate::hooks::Card;
use crate::identity::Identity;

/// How a receipt is forged.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Forgery {
    Signature,
    Hash,
    /// Signed by a key other than the one the handshake proved.
    Key,
    /// Says the audit failed (the reference would still count it).
    Failed,
}

/// One way to misbehave.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Cheat {
    /// Use the vector key instead of generating one (speed; not a cheat).
    FixedKey,
    /// The host seals its deck in the hooks' order, as the reference does.
    HostSkipsShuffle,
    /// This side's first transfer asks for the label of this card instead of its own.
    PeekAt(usize),
    /// The witness of a peeking transfer names the card it should have asked for.
    LyingWitness,
    SkipWitness,
    /// An extra witness for a transfer that never happened.
    BogusWitness,
    DuplicateWitness,
    /// The sealed entry with this index is garbage in this side's setup.
    PoisonSealed(usize),
    /// The opened token with this index is off by one.
    ForgeToken(usize),
    /// The opened layer key with this index is another key.
    AlterOpeningKey(usize),
    /// Asks for a card when the stock is empty.
    IgnoreEmptyStock,
    ForgeReceipt(Forgery),
}

/// What a side knew after its setup.
#[derive(Debug, Clone, Default)]
pub(crate) struct Spy {
    /// The guest's shuffle: id-A of each id-B.
    pub guest_order: Option<Vec<usize>>,
    /// The host's deck in id-A order.
    pub host_deck: Option<Vec<Card>>,
    /// This side's layer keys, in hex.
    pub layer_keys: Option<Vec<String>>,
}

thread_local! {
    static ACTIVE: RefCell<Vec<Cheat>> = const { RefCell::new(Vec::new()) };
    static SPY: RefCell<Spy> = RefCell::new(Spy::default());
}

/// Whether this thread's side cheats this way.
pub(crate) fn active(cheat: Cheat) -> bool {
    ACTIVE.with(|active| active.borrow().contains(&cheat))
}

/// Turns these cheats on for the calling thread.
pub(crate) fn set(cheats: &[Cheat]) {
    ACTIVE.with(|active| *active.borrow_mut() = cheats.to_vec());
}

fn find<T>(pick: impl Fn(&Cheat) -> Option<T>) -> Option<T> {
    ACTIVE.with(|active| active.borrow().iter().find_map(pick))
}

pub(crate) fn spy(record: impl FnOnce(&mut Spy)) {
    SPY.with(|spy| record(&mut spy.borrow_mut()));
}

pub(crate) fn take_spy() -> Spy {
    SPY.with(|spy| std::mem::take(&mut *spy.borrow_mut()))
}

/// The card a transfer really asks for (once, under `PeekAt`).
pub(crate) fn peek(planned: usize) -> usize {
    let Some(target) = find(|c| match c {
        Cheat::PeekAt(target) => Some(*target),
        _ => None,
    }) else {
        return planned;
    };
    ACTIVE.with(|active| active.borrow_mut().retain(|c| *c != Cheat::PeekAt(target)));
    target
}

/// The label a witness names: the planned card's when lying.
pub(crate) fn witness_label(asked: Label, planned: Label) -> Label {
    if active(Cheat::LyingWitness) {
        planned
    } else {
        asked
    }
}

/// The witnesses this side sends.
pub(crate) fn witnesses(mut honest: Vec<Witness>, key: &OtPublicKey) -> Vec<Witness> {
    if active(Cheat::SkipWitness) {
        honest.clear();
    }
    if active(Cheat::DuplicateWitness) {
        honest.push(honest[0].clone());
    }
    if active(Cheat::BogusWitness) {
        let label = honest[0].label;
        let requester = honest[0].ot_id.requester;
        honest.push(Witness {
            ot_id: OtId {
                requester,
                seq: 999,
            },
            label: Label::new(label.layer, 999),
            r: key.random_unit().0,
        });
    }
    honest
}

/// This side's published sealed entries, one poisoned if asked.
pub(crate) fn poisoned(mut sealed: Vec<SealedEntry>) -> Vec<SealedEntry> {
    if let Some(index) = find(|c| match c {
        Cheat::PoisonSealed(index) => Some(*index),
        _ => None,
    }) {
        sealed[index].0[20] ^= 0x40;
    }
    sealed
}

/// Asks the peer for a card of an empty stock (and waits for its answer).
pub(crate) fn draw_from_empty(player: &mut Player) -> Result<(), Stop> {
    let id = player.table.next_ot_id(player.role);
    let (z, _) = player.table.key_of(player.role.peer()).random_unit();
    player.send(&wire::ot_request(id, &z))?;
    player.receive(&["mp_ot_response"])?;
    Ok(())
}

/// This side's opening, forged as asked.
pub(crate) fn opening(mut opening: Opening, key: &OtPublicKey) -> Opening {
    for item in &mut opening.items {
        match item {
            OpeningItem::Token { label, token } if active(Cheat::ForgeToken(label.index)) => {
                let next = token.wrapping_add(&U2048::ONE);
                **token = if next == *key.modulus() {
                    U2048::ONE
                } else {
                    next
                };
            }
            OpeningItem::Key { label, key } if active(Cheat::AlterOpeningKey(label.index)) => {
                *key = LayerKey::random();
            }
            _ => {}
        }
    }
    opening
}

/// This side's receipt, forged as asked.
pub(crate) fn receipt(mut receipt: Receipt, root: &[u8; 32]) -> Receipt {
    match find(|c| match c {
        Cheat::ForgeReceipt(forgery) => Some(*forgery),
        _ => None,
    }) {
        Some(Forgery::Signature) => {
            let flipped = if receipt.signature.starts_with('0') {
                "1"
            } else {
                "0"
            };
            receipt.signature.replace_range(..1, flipped);
        }
        Some(Forgery::Hash) => receipt.transcript_hash = "0".repeat(64),
        Some(Forgery::Key) => {
            let stranger = Identity::generate();
            receipt.signature = stranger.sign_hex(root);
            receipt.public_key = stranger.public_key().to_string();
        }
        Some(Forgery::Failed) => receipt.audit_status = "failed".into(),
        None => {}
    }
    receipt
}
