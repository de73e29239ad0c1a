//! Known answers from the reference client (`tests/vectors/mental_poker/primitives.json`):
//! context bytes, full-domain hashes, the raw RSA operation, HKDF token keys, sealed entries
//! and deck blobs with fixed nonces and pads, and blinded requests with their witnesses.

use crypto_bigint::U2048;

use crate::engine::mental_poker::codec;
use crate::engine::mental_poker::deck::{BlobA, LayerKey, seal_blob_with, seal_card_with};
use crate::engine::mental_poker::ot::{
    Label, OtBinding, SealedEntry, fdh, token_key, verify_token, verify_witness,
};
use crate::engine::mental_poker::rsa::tests::vector_key;
use crate::engine::mental_poker::vectors::primitives;
use crate::hooks::Card;

fn big(text: &serde_json::Value) -> U2048 {
    codec::big(text.as_str().unwrap()).unwrap()
}

fn bytes<const N: usize>(text: &serde_json::Value) -> [u8; N] {
    codec::fixed(text.as_str().unwrap()).unwrap()
}

#[test]
fn transfers_match_the_reference_byte_for_byte() {
    let key = vector_key();
    let public = key.public();
    for case in primitives()["contexts"].as_array().unwrap() {
        let binding = OtBinding {
            protocol_id: case["protocol_id"].as_str().unwrap().into(),
            session_id: case["session_id"].as_str().unwrap().into(),
        };
        let label = Label::parse(case["label"].as_str().unwrap()).unwrap();
        let context = binding.context(label);
        assert_eq!(
            hex::encode(&context),
            case["context"].as_str().unwrap(),
            "{label}"
        );
        let h = fdh(&context, public);
        assert_eq!(h, big(&case["fdh"]), "FDH of {label}");
        let token = key.private_op_public(&h).unwrap();
        assert_eq!(
            key.private_op(&h).unwrap(),
            token,
            "blinding changes nothing"
        );
        assert_eq!(token, big(&case["token"]), "token of {label}");
        assert!(verify_token(&binding, public, label, &token));
        assert_eq!(
            token_key(&token, &context).to_hex(),
            case["token_key"].as_str().unwrap()
        );
        let payload = LayerKey::from_bytes(bytes(&case["payload"]));
        let sealed = SealedEntry::seal_with(&token, &context, &payload, bytes(&case["nonce"]));
        assert_eq!(sealed.hex(), case["sealed"].as_str().unwrap());
        assert_eq!(sealed.open(&token, &context), Some(payload));
        let (r, z) = (big(&case["r"]), big(&case["z"]));
        assert_eq!(public.mul(&h, &public.pow_e(&r)), z);
        assert_eq!(key.private_op(&z).unwrap(), big(&case["y"]));
        assert!(verify_witness(&binding, public, label, &z, &r));
    }
}

#[test]
fn deck_blobs_match_the_reference_byte_for_byte() {
    for case in primitives()["blobs"].as_array().unwrap() {
        let card = Card {
            rank: case["rank"].as_u64().unwrap() as u8,
            suit: case["suit"].as_u64().unwrap() as u8,
        };
        let k_inner = LayerKey::from_bytes(bytes(&case["k_inner"]));
        let k_outer = LayerKey::from_bytes(bytes(&case["k_outer"]));
        let blob_a = seal_card_with(
            &k_inner,
            card,
            bytes(&case["pad"]),
            bytes(&case["nonce_inner"]),
        );
        assert_eq!(blob_a.hex(), case["blob_a"].as_str().unwrap());
        let blob_b = seal_blob_with(&k_outer, &blob_a, bytes(&case["nonce_outer"]));
        assert_eq!(blob_b.hex(), case["blob_b"].as_str().unwrap());
        assert_eq!(BlobA::parse(case["blob_a"].as_str().unwrap()), Some(blob_a));
    }
}
