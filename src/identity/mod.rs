//! An agent's Ed25519 identity (`key.json`) and every signature the network defines: signed
//! REST requests, the transport binding of an invitation, the session proof, and the
//! registration proof of work.

mod binding;
mod key_file;
mod pow;
mod request;
mod session;

use ed25519_dalek::{Signature, Signer, SigningKey, VerifyingKey};

pub use binding::{TRANSPORT_IROH, transport_binding_canonical};
pub use key_file::{create_key_file, load_key_file};
pub use pow::{pow_satisfied, registration_canonical, solve_pow};
pub use request::{
    HEADER_PUBLIC_KEY, HEADER_REQUEST_ID, HEADER_SIGNATURE, HEADER_TIMESTAMP, SignedHeaders,
    new_request_id, request_canonical,
};
pub use session::{new_session_nonce, session_canonical, session_id};

/// Why key material could not be used.
#[derive(Debug, thiserror::Error)]
pub enum IdentityError {
    #[error("key.json not found (run `aigenora init` first) ({0})")]
    NotFound(String),
    #[error("cannot {action} key.json: {source} ({path})")]
    Io {
        action: &'static str,
        path: String,
        source: std::io::Error,
    },
    #[error("invalid key.json: {reason} ({path})")]
    Malformed { path: String, reason: String },
    #[error("invalid private key: {0}")]
    BadSeed(String),
}

/// Why a signature was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SignatureError {
    #[error("public key must be 64 hex characters (32 bytes)")]
    BadPublicKey,
    #[error("signature must be 128 hex characters (64 bytes)")]
    BadSignatureEncoding,
    #[error("signature does not verify")]
    Mismatch,
}

/// An Ed25519 key pair; the public key in lowercase hex is the agent's identity everywhere.
#[derive(Clone)]
pub struct Identity {
    signing: SigningKey,
    public_key_hex: String,
}

impl std::fmt::Debug for Identity {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Identity")
            .field("public_key", &self.public_key_hex)
            .finish_non_exhaustive()
    }
}

impl Identity {
    /// A fresh random identity.
    pub fn generate() -> Identity {
        Identity::from_signing_key(SigningKey::generate(&mut rand::rngs::OsRng))
    }

    /// Rebuilds an identity from its 32-byte seed in hex (the `private_key` of key.json).
    pub fn from_seed_hex(seed_hex: &str) -> Result<Identity, IdentityError> {
        let seed: [u8; 32] = decode_fixed(seed_hex).ok_or_else(|| {
            IdentityError::BadSeed("expected 64 hex characters (a 32-byte seed)".into())
        })?;
        Ok(Identity::from_signing_key(SigningKey::from_bytes(&seed)))
    }

    fn from_signing_key(signing: SigningKey) -> Identity {
        let public_key_hex = hex::encode(signing.verifying_key().to_bytes());
        Identity {
            signing,
            public_key_hex,
        }
    }

    /// The public key, 64 lowercase hex characters.
    pub fn public_key(&self) -> &str {
        &self.public_key_hex
    }

    /// The 32-byte seed in lowercase hex (what key.json stores as `private_key`).
    pub fn seed_hex(&self) -> String {
        hex::encode(self.signing.to_bytes())
    }

    /// Signs raw bytes (pure Ed25519, RFC 8032) and returns the signature in lowercase hex.
    pub fn sign_hex(&self, message: &[u8]) -> String {
        hex::encode(self.signing.sign(message).to_bytes())
    }
}

/// Verifies a hex signature by a hex public key over raw bytes (strict RFC 8032 checks).
pub fn verify_hex(
    public_key_hex: &str,
    message: &[u8],
    signature_hex: &str,
) -> Result<(), SignatureError> {
    let key_bytes: [u8; 32] = decode_fixed(public_key_hex).ok_or(SignatureError::BadPublicKey)?;
    let key = verifying_key(&key_bytes)?;
    let signature_bytes: [u8; 64] =
        decode_fixed(signature_hex).ok_or(SignatureError::BadSignatureEncoding)?;
    let signature = Signature::from_bytes(&signature_bytes);
    key.verify_strict(message, &signature)
        .map_err(|_| SignatureError::Mismatch)
}

/// The key of `bytes`, decompressed once per thread while the same key comes back: a room's
/// member checks two signatures of its one leader in every envelope, and decompressing the
/// point (a square root in the field) is about a tenth of a check.
fn verifying_key(bytes: &[u8; 32]) -> Result<VerifyingKey, SignatureError> {
    thread_local! {
        static LAST: std::cell::Cell<Option<VerifyingKey>> = const { std::cell::Cell::new(None) };
    }
    LAST.with(|last| match last.get() {
        Some(key) if key.as_bytes() == bytes => Ok(key),
        _ => {
            let key = VerifyingKey::from_bytes(bytes).map_err(|_| SignatureError::BadPublicKey)?;
            last.set(Some(key));
            Ok(key)
        }
    })
}

/// True for exactly 64 lowercase hex characters: the form of public keys and protocol ids.
pub fn is_lower_hex_64(text: &str) -> bool {
    crate::spec::fields::is_lower_hex(text, 64, 64)
}

fn decode_fixed<const N: usize>(text: &str) -> Option<[u8; N]> {
    let mut out = [0u8; N];
    hex::decode_to_slice(text, &mut out).ok()?;
    Some(out)
}

#[cfg(test)]
pub(crate) mod vectors {
    //! Test vectors (docs/rest-api.md#test-vectors): throwaway keys.
    pub const ALICE_PUBLIC: &str =
        "04ca55517f11ed24b195dd9b205db244dfcf24ce6f85b5f0a939ac38f430f8de";
    pub const ALICE_SEED: &str = "226cc59319533d99c17fc9769c4f126a1dec35e1b2d11a09de51709439c19ea4";
    pub const BOB_PUBLIC: &str = "8d8366f10446757f925fbee96dbb026861e0059ee10d4223209502257dcbc3cc";
    pub const BOB_SEED: &str = "6b2d6f30bc38125842082e5b7621f686e51404163f10ba742d4b79aeacb41feb";
}

#[cfg(test)]
mod tests {
    use super::vectors::*;
    use super::*;

    #[test]
    fn seeds_give_the_captured_public_keys() {
        assert_eq!(
            Identity::from_seed_hex(ALICE_SEED).unwrap().public_key(),
            ALICE_PUBLIC
        );
        assert_eq!(
            Identity::from_seed_hex(BOB_SEED).unwrap().public_key(),
            BOB_PUBLIC
        );
    }

    #[test]
    fn signatures_round_trip_and_tampering_is_caught() {
        let alice = Identity::generate();
        let signature = alice.sign_hex(b"hello");
        assert_eq!(verify_hex(alice.public_key(), b"hello", &signature), Ok(()));
        assert_eq!(
            verify_hex(alice.public_key(), b"hellO", &signature),
            Err(SignatureError::Mismatch)
        );
        assert_eq!(
            verify_hex("zz", b"hello", &signature),
            Err(SignatureError::BadPublicKey)
        );
        assert_eq!(
            verify_hex(alice.public_key(), b"hello", "00"),
            Err(SignatureError::BadSignatureEncoding)
        );
        assert_eq!(
            Identity::from_seed_hex(&alice.seed_hex())
                .unwrap()
                .public_key(),
            alice.public_key()
        );
    }

    #[test]
    fn each_check_uses_its_own_key_whichever_key_came_before() {
        let (alice, bob) = (Identity::generate(), Identity::generate());
        let signed = alice.sign_hex(b"hello");
        for _ in 0..2 {
            assert_eq!(verify_hex(alice.public_key(), b"hello", &signed), Ok(()));
            assert_eq!(
                verify_hex(bob.public_key(), b"hello", &signed),
                Err(SignatureError::Mismatch)
            );
        }
        // Bytes that are no point on the curve, right after a good key.
        let not_a_point = (0u8..=255)
            .map(|first| {
                let mut bytes = [0u8; 32];
                bytes[0] = first;
                bytes
            })
            .find(|bytes| VerifyingKey::from_bytes(bytes).is_err())
            .unwrap();
        assert_eq!(verify_hex(alice.public_key(), b"hello", &signed), Ok(()));
        assert_eq!(
            verify_hex(&hex::encode(not_a_point), b"hello", &signed),
            Err(SignatureError::BadPublicKey)
        );
        assert_eq!(verify_hex(alice.public_key(), b"hello", &signed), Ok(()));
    }

    #[test]
    fn lower_hex_64_is_strict() {
        assert!(is_lower_hex_64(ALICE_PUBLIC));
        assert!(!is_lower_hex_64(&ALICE_PUBLIC.to_uppercase()));
        assert!(!is_lower_hex_64(&ALICE_PUBLIC[1..]));
    }
}
