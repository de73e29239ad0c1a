//! The public record of one game: both setups, the ledger, every oblivious transfer with
//! the card it was planned for, every play with its keys, and the transcript. Both sides
//! build it from the same frames through the same methods (their own frames included), so
//! both reach the same transcript root; anyone holding the frames could build it too, which
//! is how a recorded reference game is replayed through our audit.

use std::collections::HashMap;

use crypto_bigint::U2048;

use super::abort::{Abort, Reason};
use super::deck::{BlobA, BlobB};
use super::ledger::Ledger;
use super::ot::{Label, Layer, OtBinding, OtId, SealedEntry};
use super::rsa::OtPublicKey;
use super::transcript::{Payload, Transcript, big, text};
use super::wire::{Opening, Play, Setup, Witness, witness_payload};
use crate::hooks::DealPlan;
use crate::spec::Role;

/// One completed transfer: the public request and answer, and the card it was for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct OtRecord {
    pub id: OtId,
    pub z: U2048,
    pub y: U2048,
    /// The id-B the requester was entitled to take (checked against its witness).
    pub card: usize,
}

pub(crate) struct Table {
    pub binding: OtBinding,
    pub inner: Setup<BlobA>,
    pub outer: Setup<BlobB>,
    blob_ids: HashMap<BlobA, usize>,
    pub ledger: Ledger,
    pub ots: Vec<OtRecord>,
    pending: Option<OtRecord>,
    /// The next transfer number of the host and of the guest.
    issued: [u32; 2],
    pub plays: Vec<(Role, Play)>,
    transcript: Transcript,
}

fn slot(role: Role) -> usize {
    match role {
        Role::Host => 0,
        Role::Guest => 1,
    }
}

impl Table {
    /// The game after both setups; every blob A must be distinct (the guest's layer wraps
    /// each exactly once, and the audit maps them back one to one).
    pub fn new(
        binding: OtBinding,
        inner: Setup<BlobA>,
        outer: Setup<BlobB>,
    ) -> Result<Table, Abort> {
        let size = inner.blobs.len();
        if size == 0 || outer.blobs.len() != size {
            let detail = format!("{size} host blobs and {} guest blobs", outer.blobs.len());
            return Err(Abort::new(Reason::SetupSizeMismatch, detail));
        }
        let mut blob_ids = HashMap::with_capacity(size);
        for (id_a, blob) in inner.blobs.iter().enumerate() {
            if blob_ids.insert(*blob, id_a).is_some() {
                return Err(Abort::new(
                    Reason::DuplicateBlob,
                    format!("blob A {id_a} repeats an earlier one"),
                ));
            }
        }
        let mut transcript = Transcript::new();
        transcript.append("mp_setup_a", inner.payload());
        transcript.append("mp_setup_b", outer.payload());
        Ok(Table {
            binding,
            inner,
            outer,
            blob_ids,
            ledger: Ledger::new(size),
            ots: Vec::new(),
            pending: None,
            issued: [0, 0],
            plays: Vec::new(),
            transcript,
        })
    }

    pub fn deck_size(&self) -> usize {
        self.inner.blobs.len()
    }

    /// The id-A of a blob A of the host's setup.
    pub fn id_a_of(&self, blob: &BlobA) -> Option<usize> {
        self.blob_ids.get(blob).copied()
    }

    /// The public key of `owner`'s table.
    pub fn key_of(&self, owner: Role) -> &OtPublicKey {
        match owner {
            Role::Host => &self.inner.key,
            Role::Guest => &self.outer.key,
        }
    }

    pub fn sealed(&self, label: Label) -> &SealedEntry {
        match label.layer {
            Layer::Inner => &self.inner.sealed[label.index],
            Layer::Outer => &self.outer.sealed[label.index],
        }
    }

    /// Who takes a card, transfer by transfer, in the initial deal: the guest's cards first,
    /// then the host's (each transfer takes the lowest id-B left in the stock, like a draw).
    pub fn deal_plan(&self, plan: DealPlan) -> Result<Vec<Role>, Abort> {
        if plan.host + plan.guest > self.deck_size() {
            let detail = format!(
                "{} + {} cards from a deck of {}",
                plan.host,
                plan.guest,
                self.deck_size()
            );
            return Err(Abort::new(Reason::BadDealPlan, detail));
        }
        let guest = std::iter::repeat_n(Role::Guest, plan.guest);
        Ok(guest
            .chain(std::iter::repeat_n(Role::Host, plan.host))
            .collect())
    }

    /// The id the next transfer of `requester` must carry.
    pub fn next_ot_id(&self, requester: Role) -> OtId {
        OtId {
            requester,
            seq: self.issued[slot(requester)],
        }
    }

    /// A transfer request: the expected id, a `z` in range of the table it draws from, and
    /// no other transfer open.
    pub fn open_ot(
        &mut self,
        requester: Role,
        id: &str,
        z: U2048,
        card: usize,
    ) -> Result<OtId, Abort> {
        let expected = self.next_ot_id(requester);
        if id != expected.to_string() {
            return Err(Abort::new(
                Reason::UnexpectedOtId,
                format!("transfer {id:?} where {expected} was due"),
            ));
        }
        if self.pending.is_some() {
            return Err(Abort::new(
                Reason::UnexpectedMessage,
                format!("transfer {id} while another is open"),
            ));
        }
        if !self.key_of(requester.peer()).in_range(&z) {
            return Err(Abort::new(
                Reason::OtValueOutOfRange,
                format!("z of {id} is not in 1..n"),
            ));
        }
        self.issued[slot(requester)] += 1;
        self.pending = Some(OtRecord {
            id: expected,
            z,
            y: U2048::ZERO,
            card,
        });
        Ok(expected)
    }

    /// The answer to the open transfer: its id echoed, `y` in range. The card goes to the
    /// requester's hand.
    pub fn close_ot(&mut self, id: &str, y: U2048) -> Result<&OtRecord, Abort> {
        let Some(mut record) = self.pending.take() else {
            return Err(Abort::new(
                Reason::UnexpectedMessage,
                format!("an answer to {id:?}, which nobody asked"),
            ));
        };
        if id != record.id.to_string() {
            return Err(Abort::new(
                Reason::UnexpectedOtId,
                format!("answer for {id:?} to request {}", record.id),
            ));
        }
        let requester = record.id.requester;
        if !self.key_of(requester.peer()).in_range(&y) {
            return Err(Abort::new(
                Reason::OtValueOutOfRange,
                format!("y of {id} is not in 1..n"),
            ));
        }
        record.y = y;
        let payload = Payload::new()
            .with("ot_id", text(record.id.to_string()))
            .with("z", big(&record.z))
            .with("y", big(&record.y));
        self.transcript.append("mp_ot", payload);
        self.ledger.deal(record.card, requester);
        self.ots.push(record);
        Ok(self.ots.last().expect("just pushed"))
    }

    /// A transfer of the play phase was a draw (the deal's are not marked).
    pub fn record_draw(&mut self, id: OtId) {
        let payload = Payload::new()
            .with("who", text(id.requester.as_str()))
            .with("ot_id", text(id.to_string()));
        self.transcript.append("mp_draw", payload);
    }

    /// The ledger's verdict on `who` playing `play` (nullifier check).
    pub fn check_play(&self, who: Role, play: &Play) -> Result<(), Abort> {
        self.ledger
            .check_play(who, play.id_b)
            .map_err(|reason| Abort::new(reason, format!("{who} played card {}", play.id_b)))
    }

    /// A play that passed every check.
    pub fn record_play(&mut self, who: Role, play: Play) {
        self.ledger.play(who, play.id_b);
        self.transcript.append("mp_play", play.payload(who));
        self.plays.push((who, play));
    }

    pub fn record_pass(&mut self, who: Role) {
        self.transcript
            .append("mp_pass", Payload::new().with("who", text(who.as_str())));
    }

    pub fn record_openings(&mut self, host: &Opening, guest: &Opening) {
        self.transcript
            .append("mp_opening", host.payload(Role::Host));
        self.transcript
            .append("mp_opening", guest.payload(Role::Guest));
    }

    /// Both sides' witnesses, each list sorted by ot_id.
    pub fn record_witnesses(&mut self, host: &[Witness], guest: &[Witness]) {
        self.transcript
            .append("mp_witness", witness_payload(Role::Host, host));
        self.transcript
            .append("mp_witness", witness_payload(Role::Guest, guest));
    }

    pub fn root(&self) -> [u8; 32] {
        self.transcript.root()
    }
}
