//! Why a game stops early, as one typed reason. Everything the peer can get wrong — a
//! malformed or out-of-range value, a frame out of turn, a play that does not open, an
//! audit that fails, a bad receipt — ends the game with one of these (never a panic), is
//! recorded as an event, and is told to the peer in an `error` frame when the spec allows.

use std::fmt;

/// One reason, named as it appears in events and `error` frames (the variant in snake case:
/// the reference's names where it has one).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, strum::IntoStaticStr, strum::VariantArray)]
#[strum(serialize_all = "snake_case")]
pub enum Reason {
    // Setup.
    BadRsaKey,
    BadBlob,
    BadSealedEntry,
    SetupSizeMismatch,
    DuplicateBlob,
    BadDealPlan,
    // Oblivious transfers.
    UnexpectedOtId,
    OtValueOutOfRange,
    EmptyStock,
    OtOpenFailed,
    CardOpenFailed,
    UnknownBlob,
    // Turns and plays.
    InvalidFrame,
    UnexpectedMessage,
    MalformedPlay,
    CardNotInHand,
    CardAlreadyPlayed,
    OwnLayerKeyMismatch,
    InvalidKeysOrBlob,
    CardFaceMismatch,
    RuleRejected,
    // Opening and witnesses.
    AuditRefused,
    MalformedOpening,
    MalformedWitness,
    // The audit.
    DeriveIdMapFailed,
    KeysetMismatch,
    ForgedToken,
    SealedPayloadPoisoned,
    PayloadMismatch,
    InnerOpenFailed,
    DeckSizeMismatch,
    DeckUniverseMismatch,
    PlayKeyMismatch,
    DuplicateWitnessOtId,
    WitnessTranscriptMismatch,
    OtSnapshotMissing,
    BadWitness,
    LabelNotInMap,
    PeekedNonHand,
    // The receipt.
    ReceiptHashMismatch,
    ReceiptKeyMismatch,
    ReceiptSignatureInvalid,
    ReceiptNotPassed,
    // The peer stopped, or our own computation failed its check.
    PeerError,
    RsaFault,
}

impl Reason {
    /// Every reason, in declaration order (a spec's `error` message can list them all).
    #[cfg(test)]
    pub const ALL: &'static [Reason] = <Reason as strum::VariantArray>::VARIANTS;

    pub fn as_str(self) -> &'static str {
        self.into()
    }

    /// The coarser reason the reference's specs allow in `error` frames, for a spec that
    /// does not list this one: a play that failed its checks, or one the rules refused.
    pub fn reference_reason(self) -> Option<&'static str> {
        use Reason::*;
        match self {
            MalformedPlay | CardNotInHand | CardAlreadyPlayed | OwnLayerKeyMismatch
            | InvalidKeysOrBlob | CardFaceMismatch => Some("play_rejected"),
            RuleRejected => Some("rule_rejected"),
            _ => None,
        }
    }
}

impl fmt::Display for Reason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A stopped game: the reason and a one-line detail (what exactly, where).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Abort {
    pub reason: Reason,
    pub detail: String,
}

impl Abort {
    pub fn new(reason: Reason, detail: impl Into<String>) -> Abort {
        Abort {
            reason,
            detail: detail.into(),
        }
    }
}

impl From<Reason> for Abort {
    fn from(reason: Reason) -> Abort {
        Abort::new(reason, reason.as_str())
    }
}

impl fmt::Display for Abort {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.reason, self.detail)
    }
}
