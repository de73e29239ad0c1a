//! Blind-RSA token oblivious transfer, byte-compatible with the reference: how a side takes
//! one card key out of the other side's table without the other side learning which.
//!
//! The sender publishes, for every label, `nonce ‖ AEAD(HKDF(token ‖ ctx), nonce, key, ctx)`
//! where `token = FDH(ctx)^d` stays secret until the end. A receiver blinds `FDH(ctx)` with
//! `r^e`, the sender raises whatever it gets to `d`, and the receiver unblinds the token.
//! After the game the sender opens its tokens (anyone checks `token^e == FDH(ctx)` and the
//! sealed entry) and the receiver its `r` (anyone checks `z == FDH(ctx)·r^e`, which pins
//! the label it really asked for). The context binds protocol, session, table and label.

use std::fmt;

use chacha20poly1305::aead::{Aead, KeyInit, Payload};
use chacha20poly1305::{ChaCha20Poly1305, Key, Nonce};
use crypto_bigint::U2048;
use hkdf::Hkdf;
use sha2::{Digest, Sha256};
use zeroize::Zeroize;

use super::deck::LayerKey;
use super::rsa::{OtPrivateKey, OtPublicKey, PrivateOpError};
use super::threads::parallel_map;
use super::{codec, rng};
use crate::spec::Role;

const CONTEXT_MAGIC: &[u8] = b"aigenora.mp.v1";
const TOKEN_KEY_INFO: &[u8] = b"aigenora.mp.tokenkey.v1";
const SEALED_LEN: usize = 12 + 32 + 16;

/// Which layer's keys a table holds: the host's inner keys (labels `h-<id-A>`) or the
/// guest's outer keys (labels `g-<id-B>`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) enum Layer {
    Inner,
    Outer,
}

impl Layer {
    /// The side that owns (and answers OTs for) this table.
    pub fn owner(self) -> Role {
        match self {
            Layer::Inner => Role::Host,
            Layer::Outer => Role::Guest,
        }
    }

    pub fn of(owner: Role) -> Layer {
        match owner {
            Role::Host => Layer::Inner,
            Role::Guest => Layer::Outer,
        }
    }

    fn prefix(self) -> &'static str {
        match self {
            Layer::Inner => "h-",
            Layer::Outer => "g-",
        }
    }

    /// The context's sender-role and payload-type bytes (the same number for each table).
    fn code(self) -> u8 {
        match self {
            Layer::Inner => 0x01,
            Layer::Outer => 0x02,
        }
    }
}

/// One entry of a table: `h-<i>` or `g-<i>`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) struct Label {
    pub layer: Layer,
    pub index: usize,
}

impl Label {
    pub fn new(layer: Layer, index: usize) -> Label {
        Label { layer, index }
    }

    /// `h-<n>` or `g-<n>` with `n` in canonical decimal (no sign, no leading zeros).
    pub fn parse(text: &str) -> Option<Label> {
        let layer = [Layer::Inner, Layer::Outer]
            .into_iter()
            .find(|layer| text.starts_with(layer.prefix()))?;
        let index = canonical_index(&text[2..])?;
        Some(Label { layer, index })
    }
}

impl fmt::Display for Label {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}{}", self.layer.prefix(), self.index)
    }
}

/// One oblivious transfer of a game: who asked, and its number among that side's transfers
/// (`host-0`, `guest-3`, ...).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct OtId {
    pub requester: Role,
    pub seq: u32,
}

impl OtId {
    pub fn parse(text: &str) -> Option<OtId> {
        let (role, seq) = text.split_once('-')?;
        let requester = Role::parse(role)?;
        let seq = u32::try_from(canonical_index(seq)?).ok()?;
        Some(OtId { requester, seq })
    }
}

impl fmt::Display for OtId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}-{}", self.requester, self.seq)
    }
}

/// A decimal index as the reference writes it (`str(i)`), else `None`.
pub(crate) fn canonical_index(digits: &str) -> Option<usize> {
    let canonical = !digits.is_empty()
        && digits.bytes().all(|b| b.is_ascii_digit())
        && (digits == "0" || !digits.starts_with('0'));
    canonical.then(|| digits.parse().ok()).flatten()
}

/// What every OT of one game is bound to: the protocol (the reference uses the spec's
/// display name) and the session id (`mp-session` when there is none).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct OtBinding {
    pub protocol_id: String,
    pub session_id: String,
}

impl OtBinding {
    /// `"aigenora.mp.v1" ‖ u32be(len) pid ‖ u32be(len) sid ‖ role ‖ type ‖ u32be(len) label`.
    pub fn context(&self, label: Label) -> Vec<u8> {
        let mut context = CONTEXT_MAGIC.to_vec();
        for part in [self.protocol_id.as_bytes(), self.session_id.as_bytes()] {
            push_prefixed(&mut context, part);
        }
        let code = label.layer.code();
        context.extend([code, code]);
        push_prefixed(&mut context, label.to_string().as_bytes());
        context
    }
}

fn push_prefixed(out: &mut Vec<u8>, part: &[u8]) {
    out.extend((part.len() as u32).to_be_bytes());
    out.extend(part);
}

/// Full-domain hash into the units of `Z_n`: MGF1-SHA256 of `ctx ‖ u32be(counter)` to 256
/// bytes, the first counter whose value is a unit.
pub(crate) fn fdh(context: &[u8], key: &OtPublicKey) -> U2048 {
    for counter in 0u32.. {
        let mut seed = context.to_vec();
        seed.extend(counter.to_be_bytes());
        let mut out = [0u8; 256];
        for (block, chunk) in out.chunks_mut(32).enumerate() {
            let digest = Sha256::new()
                .chain_update(&seed)
                .chain_update((block as u32).to_be_bytes())
                .finalize();
            chunk.copy_from_slice(&digest);
        }
        let candidate = U2048::from_be_slice(&out);
        if key.is_public_unit(&candidate) {
            return candidate;
        }
    }
    unreachable!("almost every 2048-bit value is a unit")
}

/// `HKDF-SHA256(salt none, IKM = I2OSP(token, 256) ‖ ctx, info "aigenora.mp.tokenkey.v1")`.
pub(crate) fn token_key(token: &U2048, context: &[u8]) -> LayerKey {
    let mut ikm = token.to_be_bytes().to_vec();
    ikm.extend(context);
    let mut key = [0u8; 32];
    Hkdf::<Sha256>::new(None, &ikm)
        .expand(TOKEN_KEY_INFO, &mut key)
        .expect("32 bytes is a valid HKDF-SHA256 length");
    ikm.zeroize();
    LayerKey::from_bytes(key)
}

/// One published entry of a table: a layer key sealed under its label's token key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct SealedEntry(pub [u8; SEALED_LEN]);

impl SealedEntry {
    pub fn parse(text: &str) -> Option<SealedEntry> {
        codec::fixed(text).map(SealedEntry)
    }

    pub fn hex(&self) -> String {
        hex::encode(self.0)
    }

    /// Seals `payload` for the holder of `token` (context as associated data).
    pub fn seal_with(
        token: &U2048,
        context: &[u8],
        payload: &LayerKey,
        nonce: [u8; 12],
    ) -> SealedEntry {
        let key = token_key(token, context);
        let cipher = ChaCha20Poly1305::new(Key::from_slice(key.bytes()));
        let sealed = cipher
            .encrypt(
                Nonce::from_slice(&nonce),
                Payload {
                    msg: payload.bytes(),
                    aad: context,
                },
            )
            .expect("ChaCha20-Poly1305 seals a 32-byte key");
        let mut out = [0u8; SEALED_LEN];
        out[..12].copy_from_slice(&nonce);
        out[12..].copy_from_slice(&sealed);
        SealedEntry(out)
    }

    /// The layer key inside, when `token` is the right one.
    pub fn open(&self, token: &U2048, context: &[u8]) -> Option<LayerKey> {
        let key = token_key(token, context);
        let cipher = ChaCha20Poly1305::new(Key::from_slice(key.bytes()));
        let payload = Payload {
            msg: &self.0[12..],
            aad: context,
        };
        let mut plain = cipher
            .decrypt(Nonce::from_slice(&self.0[..12]), payload)
            .ok()?;
        let key: [u8; 32] = plain.as_slice().try_into().ok()?;
        plain.zeroize();
        Some(LayerKey::from_bytes(key))
    }
}

/// A sender's table: the published entries and the tokens it opens after the game.
pub(crate) struct SenderTable {
    pub entries: Vec<SealedEntry>,
    pub tokens: Vec<U2048>,
}

impl Drop for SenderTable {
    fn drop(&mut self) {
        self.tokens.zeroize();
    }
}

/// Seals `payloads[i]` under label `<layer>-i` (one private operation each, spread over the
/// CPUs).
pub(crate) fn build_table(
    key: &OtPrivateKey,
    binding: &OtBinding,
    layer: Layer,
    payloads: &[LayerKey],
) -> Result<SenderTable, PrivateOpError> {
    let indexed: Vec<(usize, &LayerKey)> = payloads.iter().enumerate().collect();
    let sealed = parallel_map(&indexed, |(index, payload)| {
        let context = binding.context(Label::new(layer, *index));
        let token = key.private_op_public(&fdh(&context, key.public()))?;
        let entry = SealedEntry::seal_with(&token, &context, payload, rng::bytes());
        Ok((entry, token))
    });
    let mut table = SenderTable {
        entries: Vec::with_capacity(payloads.len()),
        tokens: Vec::with_capacity(payloads.len()),
    };
    for item in sealed {
        let (entry, token) = item?;
        table.entries.push(entry);
        table.tokens.push(token);
    }
    Ok(table)
}

/// A receiver's blinded request for one label; `r` is the witness it opens after the game.
pub(crate) struct Request {
    pub r: U2048,
    r_inverse: U2048,
    pub z: U2048,
}

/// `r` stays secret until the witnesses are opened, and `r^-1` forever: both are wiped.
impl Drop for Request {
    fn drop(&mut self) {
        self.r.zeroize();
        self.r_inverse.zeroize();
    }
}

impl Request {
    pub fn new(binding: &OtBinding, key: &OtPublicKey, label: Label) -> Request {
        let h = fdh(&binding.context(label), key);
        let (r, r_inverse) = key.random_unit();
        let z = key.mul(&h, &key.pow_e(&r));
        Request { r, r_inverse, z }
    }

    /// The token behind the sender's answer `y` (`y · r^-1`).
    pub fn token(&self, key: &OtPublicKey, y: &U2048) -> U2048 {
        key.mul(y, &self.r_inverse)
    }
}

/// Whether `token` is the sender's true token for `label` (`token^e == FDH(ctx)`).
pub(crate) fn verify_token(
    binding: &OtBinding,
    key: &OtPublicKey,
    label: Label,
    token: &U2048,
) -> bool {
    key.in_range(token) && key.pow_e(token) == fdh(&binding.context(label), key)
}

/// Whether the request `z` asked for `label` with blinding `r` (`z == FDH(ctx) · r^e`).
pub(crate) fn verify_witness(
    binding: &OtBinding,
    key: &OtPublicKey,
    label: Label,
    z: &U2048,
    r: &U2048,
) -> bool {
    key.is_public_unit(r) && key.mul(&fdh(&binding.context(label), key), &key.pow_e(r)) == *z
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::mental_poker::rsa::tests::vector_key;

    #[test]
    fn labels_are_canonical() {
        assert_eq!(Label::parse("h-12"), Some(Label::new(Layer::Inner, 12)));
        assert_eq!(Label::parse("g-0").unwrap().to_string(), "g-0");
        for bad in [
            "h-",
            "h-01",
            "x-1",
            "h-1a",
            "h--1",
            "h-+1",
            "g- 1",
            "h-99999999999999999999999",
        ] {
            assert_eq!(Label::parse(bad), None, "{bad}");
        }
    }

    #[test]
    fn ot_ids_are_canonical() {
        let id = OtId::parse("guest-10").unwrap();
        assert_eq!(
            (id.requester, id.seq, id.to_string()),
            (Role::Guest, 10, "guest-10".into())
        );
        for bad in ["guest-", "guest-01", "peer-1", "host1", "host-1-2"] {
            assert_eq!(OtId::parse(bad), None, "{bad}");
        }
    }

    #[test]
    fn a_transfer_gives_the_receiver_exactly_its_label() {
        let key = vector_key();
        let binding = OtBinding {
            protocol_id: "P".into(),
            session_id: "S".into(),
        };
        let payloads: Vec<LayerKey> = (0..3).map(|_| LayerKey::random()).collect();
        let table = build_table(&key, &binding, Layer::Inner, &payloads).unwrap();
        let label = Label::new(Layer::Inner, 2);
        let request = Request::new(&binding, key.public(), label);
        let y = key.private_op(&request.z).unwrap();
        let token = request.token(key.public(), &y);
        assert_eq!(token, table.tokens[2]);
        let context = binding.context(label);
        assert_eq!(
            table.entries[2].open(&token, &context),
            Some(payloads[2].clone())
        );
        assert_eq!(table.entries[1].open(&token, &context), None);
        assert!(verify_token(&binding, key.public(), label, &token));
        assert!(!verify_token(
            &binding,
            key.public(),
            Label::new(Layer::Inner, 1),
            &token
        ));
        assert!(verify_witness(
            &binding,
            key.public(),
            label,
            &request.z,
            &request.r
        ));
        let other = Label::new(Layer::Inner, 1);
        assert!(!verify_witness(
            &binding,
            key.public(),
            other,
            &request.z,
            &request.r
        ));
    }
}
