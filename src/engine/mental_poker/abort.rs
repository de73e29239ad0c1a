//! Why a game stops early, as one typed reason. Everything the peer can get wrong — a
//! malformed or out-of-range value, a frame out of turn, a play that does not open, an
//! audit that fails, a bad receipt — ends the game with one of these (never a panic), is
//! recorded as an event, and is told to the peer in an `error` frame when the spec allows.

use std::fmt;

/// One reason, named as it appears in events and `error` frames (the reference's names
/// where it has one).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
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
    pub const ALL: [Reason; 45] = {
        use Reason::*;
        [
            BadRsaKey,
            BadBlob,
            BadSealedEntry,
            SetupSizeMismatch,
            DuplicateBlob,
            BadDealPlan,
            UnexpectedOtId,
            OtValueOutOfRange,
            EmptyStock,
            OtOpenFailed,
            CardOpenFailed,
            UnknownBlob,
            InvalidFrame,
            UnexpectedMessage,
            MalformedPlay,
            CardNotInHand,
            CardAlreadyPlayed,
            OwnLayerKeyMismatch,
            InvalidKeysOrBlob,
            CardFaceMismatch,
            RuleRejected,
            AuditRefused,
            MalformedOpening,
            MalformedWitness,
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
            ReceiptHashMismatch,
            ReceiptKeyMismatch,
            ReceiptSignatureInvalid,
            ReceiptNotPassed,
            PeerError,
            RsaFault,
        ]
    };

    pub fn as_str(self) -> &'static str {
        use Reason::*;
        match self {
            BadRsaKey => "bad_rsa_key",
            BadBlob => "bad_blob",
            BadSealedEntry => "bad_sealed_entry",
            SetupSizeMismatch => "setup_size_mismatch",
            DuplicateBlob => "duplicate_blob",
            BadDealPlan => "bad_deal_plan",
            UnexpectedOtId => "unexpected_ot_id",
            OtValueOutOfRange => "ot_value_out_of_range",
            EmptyStock => "empty_stock",
            OtOpenFailed => "ot_open_failed",
            CardOpenFailed => "card_open_failed",
            UnknownBlob => "unknown_blob",
            InvalidFrame => "invalid_frame",
            UnexpectedMessage => "unexpected_message",
            MalformedPlay => "malformed_play",
            CardNotInHand => "card_not_in_hand",
            CardAlreadyPlayed => "card_already_played",
            OwnLayerKeyMismatch => "own_layer_key_mismatch",
            InvalidKeysOrBlob => "invalid_keys_or_blob",
            CardFaceMismatch => "card_face_mismatch",
            RuleRejected => "rule_rejected",
            AuditRefused => "audit_refused",
            MalformedOpening => "malformed_opening",
            MalformedWitness => "malformed_witness",
            DeriveIdMapFailed => "derive_id_map_failed",
            KeysetMismatch => "keyset_mismatch",
            ForgedToken => "forged_token",
            SealedPayloadPoisoned => "sealed_payload_poisoned",
            PayloadMismatch => "payload_mismatch",
            InnerOpenFailed => "inner_open_failed",
            DeckSizeMismatch => "deck_size_mismatch",
            DeckUniverseMismatch => "deck_universe_mismatch",
            PlayKeyMismatch => "play_key_mismatch",
            DuplicateWitnessOtId => "duplicate_witness_ot_id",
            WitnessTranscriptMismatch => "witness_transcript_mismatch",
            OtSnapshotMissing => "ot_snapshot_missing",
            BadWitness => "bad_witness",
            LabelNotInMap => "label_not_in_map",
            PeekedNonHand => "peeked_non_hand",
            ReceiptHashMismatch => "receipt_hash_mismatch",
            ReceiptKeyMismatch => "receipt_key_mismatch",
            ReceiptSignatureInvalid => "receipt_signature_invalid",
            ReceiptNotPassed => "receipt_not_passed",
            PeerError => "peer_error",
            RsaFault => "rsa_fault",
        }
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
