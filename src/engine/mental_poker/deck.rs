//! The two-layer encrypted deck. The host seals each card under its own ChaCha20-Poly1305
//! key (blob A), the guest seals each blob A again under a key of its own (blob B); a face
//! shows only to someone holding both keys of that card.
//!
//! Every size is fixed — plaintext 16 bytes (card + random pad), blob A 44, blob B 72 — and
//! the types make any other size unrepresentable, so a dealer cannot mark cards by their
//! length. Nonces and pads are fresh random bytes; the inner nonce travels inside the outer
//! ciphertext.

use chacha20poly1305::aead::{Aead, KeyInit, Payload};
use chacha20poly1305::{ChaCha20Poly1305, Key, Nonce};
use zeroize::Zeroize;

use super::{codec, rng};
use crate::hooks::Card;

const NONCE_LEN: usize = 12;
const PAD_LEN: usize = 14;
/// A card's plaintext: rank, suit, random pad.
const PLAINTEXT_LEN: usize = 2 + PAD_LEN;
pub(crate) const BLOB_A_LEN: usize = NONCE_LEN + PLAINTEXT_LEN + 16;
pub(crate) const BLOB_B_LEN: usize = NONCE_LEN + BLOB_A_LEN + 16;

/// One card's key for one layer (the host's `k_inner` or the guest's `k_outer`), wiped from
/// memory when dropped.
#[derive(Clone, PartialEq, Eq)]
pub(crate) struct LayerKey([u8; 32]);

impl Drop for LayerKey {
    fn drop(&mut self) {
        self.0.zeroize();
    }
}

impl std::fmt::Debug for LayerKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("LayerKey(..)")
    }
}

impl LayerKey {
    pub fn random() -> LayerKey {
        LayerKey(rng::bytes())
    }

    pub fn from_bytes(bytes: [u8; 32]) -> LayerKey {
        LayerKey(bytes)
    }

    pub fn parse(text: &str) -> Option<LayerKey> {
        codec::fixed(text).map(LayerKey)
    }

    pub fn to_hex(&self) -> String {
        hex::encode(self.0)
    }

    pub(crate) fn bytes(&self) -> &[u8; 32] {
        &self.0
    }

    fn cipher(&self) -> ChaCha20Poly1305 {
        ChaCha20Poly1305::new(Key::from_slice(&self.0))
    }
}

/// The host's layer of one card.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct BlobA(pub [u8; BLOB_A_LEN]);

/// The guest's layer around one blob A.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct BlobB(pub [u8; BLOB_B_LEN]);

impl BlobA {
    pub fn parse(text: &str) -> Option<BlobA> {
        codec::fixed(text).map(BlobA)
    }

    pub fn hex(&self) -> String {
        hex::encode(self.0)
    }
}

impl BlobB {
    pub fn parse(text: &str) -> Option<BlobB> {
        codec::fixed(text).map(BlobB)
    }

    pub fn hex(&self) -> String {
        hex::encode(self.0)
    }
}

/// `nonce ‖ AEAD(key, nonce, plaintext)`, no associated data, into exactly `OUT` bytes.
fn seal<const OUT: usize>(key: &LayerKey, nonce: [u8; NONCE_LEN], plaintext: &[u8]) -> [u8; OUT] {
    let ciphertext = key
        .cipher()
        .encrypt(Nonce::from_slice(&nonce), plaintext)
        .expect("ChaCha20-Poly1305 seals any short message");
    let mut out = [0u8; OUT];
    out[..NONCE_LEN].copy_from_slice(&nonce);
    out[NONCE_LEN..].copy_from_slice(&ciphertext);
    out
}

/// The plaintext inside `nonce ‖ ciphertext`, when `key` opens it.
fn open<const OUT: usize>(key: &LayerKey, sealed: &[u8]) -> Option<[u8; OUT]> {
    let (nonce, ciphertext) = sealed.split_at(NONCE_LEN);
    let payload = Payload {
        msg: ciphertext,
        aad: b"",
    };
    let plain = key
        .cipher()
        .decrypt(Nonce::from_slice(nonce), payload)
        .ok()?;
    plain.try_into().ok()
}

/// Seals a card under the host's key with the given pad and nonce.
pub(crate) fn seal_card_with(
    key: &LayerKey,
    card: Card,
    pad: [u8; PAD_LEN],
    nonce: [u8; NONCE_LEN],
) -> BlobA {
    let mut plaintext = [0u8; PLAINTEXT_LEN];
    plaintext[0] = card.rank;
    plaintext[1] = card.suit;
    plaintext[2..].copy_from_slice(&pad);
    let blob = BlobA(seal(key, nonce, &plaintext));
    plaintext.zeroize();
    blob
}

/// Seals a card under the host's key (fresh pad and nonce).
pub(crate) fn seal_card(key: &LayerKey, card: Card) -> BlobA {
    seal_card_with(key, card, rng::bytes(), rng::bytes())
}

/// Seals a blob A under the guest's key with the given nonce.
pub(crate) fn seal_blob_with(key: &LayerKey, blob: &BlobA, nonce: [u8; NONCE_LEN]) -> BlobB {
    BlobB(seal(key, nonce, &blob.0))
}

/// Seals a blob A under the guest's key (fresh nonce).
pub(crate) fn seal_blob(key: &LayerKey, blob: &BlobA) -> BlobB {
    seal_blob_with(key, blob, rng::bytes())
}

/// Removes the guest's layer.
pub(crate) fn open_blob(key: &LayerKey, blob: &BlobB) -> Option<BlobA> {
    open(key, &blob.0).map(BlobA)
}

/// Removes the host's layer: the card, when `key` opens the blob.
pub(crate) fn open_card(key: &LayerKey, blob: &BlobA) -> Option<Card> {
    let mut plaintext: [u8; PLAINTEXT_LEN] = open(key, &blob.0)?;
    let card = Card {
        rank: plaintext[0],
        suit: plaintext[1],
    };
    plaintext.zeroize();
    Some(card)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layers_open_only_with_their_keys() {
        let (inner, outer) = (LayerKey::random(), LayerKey::random());
        let card = Card { rank: 6, suit: 3 };
        let blob_a = seal_card(&inner, card);
        let blob_b = seal_blob(&outer, &blob_a);
        assert_eq!(open_blob(&outer, &blob_b), Some(blob_a));
        assert_eq!(open_card(&inner, &blob_a), Some(card));
        assert_eq!(open_blob(&inner, &blob_b), None);
        assert_eq!(open_card(&outer, &blob_a), None);
        let mut tampered = blob_b;
        tampered.0[40] ^= 1;
        assert_eq!(open_blob(&outer, &tampered), None);
        assert_ne!(seal_card(&inner, card), blob_a, "fresh nonce and pad");
    }

    #[test]
    fn blobs_parse_only_at_their_exact_length() {
        let blob = seal_card(&LayerKey::random(), Card { rank: 1, suit: 2 });
        assert!(BlobA::parse(&blob.hex()).is_some());
        assert!(BlobA::parse(&format!("{}00", blob.hex())).is_none());
        assert!(BlobB::parse(&blob.hex()).is_none());
        assert_eq!((BLOB_A_LEN, BLOB_B_LEN), (44, 72));
    }
}
