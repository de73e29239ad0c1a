//! The RSA-2048 key (e = 65537) behind each side's oblivious transfers: a fresh key per game
//! and side, its public half on the wire as `{"e":65537,"n":"<512 hex>"}`, and the raw
//! private operation `z^d mod n` the OT needs, done with `crypto-bigint`'s constant-time
//! Montgomery arithmetic, split over the primes (CRT) and checked (`y^e == z`) before
//! anything leaves. A `z` the peer chose is blinded first (a fresh random `b`, so the
//! exponentiation never sees it); the sender's own table tokens, powers of public hashes,
//! are not. Secret values (blinding factors, requests' `r`) are handled in constant time;
//! public ones (hashes, opened witnesses) may take the faster variable-time checks.

use crypto_bigint::modular::{FixedMontyForm, FixedMontyParams};
use crypto_bigint::{Limb, NonZero, Odd, U1024, U2048};
use crypto_primes::hazmat::{SetBits, SmallFactorsSieveFactory};
use crypto_primes::{Flavor, is_prime, sieve_and_find};
use serde_json::Value;
use zeroize::Zeroize;

use super::threads::both;
use super::{codec, rng};

/// The public exponent both clients use and insist on: 2^16 + 1.
pub(crate) const E: u64 = 65537;
const E_SQUARINGS: u32 = 16;
const L2048: usize = U2048::LIMBS;
const L1024: usize = U1024::LIMBS;

/// A peer's (or our own) OT public key: an odd 2048-bit modulus.
#[derive(Clone)]
pub(crate) struct OtPublicKey {
    params: FixedMontyParams<L2048>,
}

impl OtPublicKey {
    /// A 2048-bit odd modulus, else `None`.
    pub fn from_modulus(n: U2048) -> Option<OtPublicKey> {
        if n.bit_width() != 2048 {
            return None;
        }
        let modulus = Option::<Odd<U2048>>::from(Odd::new(n))?;
        Some(OtPublicKey {
            params: FixedMontyParams::new_vartime(modulus),
        })
    }

    /// The wire form's JSON text, exactly `{"e":65537,"n":"<512 lowercase hex>"}` as an
    /// object (any key order or spacing), else `None`.
    pub fn parse(text: &str) -> Option<OtPublicKey> {
        let Ok(Value::Object(fields)) = serde_json::from_str::<Value>(text) else {
            return None;
        };
        let e = fields.get("e")?.as_u64()?;
        let n = codec::big(fields.get("n")?.as_str()?)?;
        (fields.len() == 2 && e == E).then_some(())?;
        OtPublicKey::from_modulus(n)
    }

    /// The wire form, as the reference writes it.
    pub fn to_json_text(&self) -> String {
        format!(r#"{{"e":{E},"n":"{}"}}"#, self.n_hex())
    }

    pub fn modulus(&self) -> &U2048 {
        self.params.modulus().as_ref()
    }

    pub fn n_hex(&self) -> String {
        codec::big_hex(self.modulus())
    }

    /// `0 < x < n`: the range of every z, y, r and token on the wire.
    pub fn in_range(&self, x: &U2048) -> bool {
        x.is_nonzero().to_bool() && x < self.modulus()
    }

    /// In range and coprime to `n` (a unit of `Z_n`), for a public value (variable time).
    pub fn is_public_unit(&self, x: &U2048) -> bool {
        self.in_range(x) && x.gcd_vartime(self.modulus()) == U2048::ONE
    }

    fn form(&self, x: &U2048) -> FixedMontyForm<L2048> {
        FixedMontyForm::new(x, &self.params)
    }

    /// `x^65537 mod n`: sixteen squarings and a multiplication (the exponent is public).
    pub fn pow_e(&self, x: &U2048) -> U2048 {
        let x = self.form(x);
        x.square_repeat_vartime(E_SQUARINGS).mul(&x).retrieve()
    }

    pub fn mul(&self, a: &U2048, b: &U2048) -> U2048 {
        self.form(a).mul(&self.form(b)).retrieve()
    }

    /// `x^-1 mod n`, for a unit.
    pub fn invert(&self, x: &U2048) -> Option<U2048> {
        Option::from(self.form(x).invert()).map(|inverse: FixedMontyForm<L2048>| inverse.retrieve())
    }

    /// A uniform secret unit of `Z_n` and its inverse (rejection sampling over 2048-bit
    /// draws; a draw that is not invertible is drawn again).
    pub fn random_unit(&self) -> (U2048, U2048) {
        loop {
            let candidate = U2048::from_be_slice(&rng::bytes::<256>());
            if !self.in_range(&candidate) {
                continue;
            }
            if let Some(inverse) = self.invert(&candidate) {
                return (candidate, inverse);
            }
        }
    }
}

/// Our side's OT key; every secret part is wiped when it is dropped.
pub(crate) struct OtPrivateKey {
    public: OtPublicKey,
    p: FixedMontyParams<L1024>,
    q: FixedMontyParams<L1024>,
    /// `d mod (p-1)`, `d mod (q-1)` and `q^-1 mod p`.
    dp: U1024,
    dq: U1024,
    q_inv: U1024,
}

/// Why a private operation was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub(crate) enum PrivateOpError {
    #[error("the value to exponentiate is not in 1..n")]
    OutOfRange,
    #[error("the RSA private operation failed its own check (a computation fault)")]
    Fault,
}

impl OtPrivateKey {
    /// A fresh key: two random 1024-bit primes with their two top bits set (so `n` has
    /// exactly 2048 bits) and `e` invertible modulo each `prime - 1`.
    pub fn generate() -> OtPrivateKey {
        let mut rng = rng::os();
        let mut prime = || -> U1024 {
            let sieve = SmallFactorsSieveFactory::<U1024>::new(Flavor::Any, 1024, SetBits::TwoMsb)
                .expect("1024 bits is a valid prime size");
            sieve_and_find(&mut rng, sieve, |_, candidate| {
                candidate.rem_limb(NonZero::<Limb>::new_unwrap(Limb(E))) != Limb::ONE
                    && is_prime(Flavor::Any, candidate)
            })
            .expect("the sieve is endless")
            .expect("a prime is always found")
        };
        loop {
            let (p, q) = (prime(), prime());
            if p != q {
                return OtPrivateKey::from_primes(p, q).expect("generated primes make a key");
            }
        }
    }

    /// The key of two distinct odd primes of 1024 bits whose product has 2048 bits.
    pub fn from_primes(p: U1024, q: U1024) -> Option<OtPrivateKey> {
        let public = OtPublicKey::from_modulus(p.concatenating_mul(&q))?;
        let p_odd = Option::<Odd<U1024>>::from(Odd::new(p))?;
        let q_odd = Option::<Odd<U1024>>::from(Odd::new(q))?;
        let q_inv = Option::from(q.invert_odd_mod(&p_odd))?;
        let key = OtPrivateKey {
            public,
            p: FixedMontyParams::new_vartime(p_odd),
            q: FixedMontyParams::new_vartime(q_odd),
            dp: inverse_of_e(&p.wrapping_sub(&U1024::ONE))?,
            dq: inverse_of_e(&q.wrapping_sub(&U1024::ONE))?,
            q_inv,
        };
        Some(key)
    }

    pub fn public(&self) -> &OtPublicKey {
        &self.public
    }

    /// `z^d mod n` for a `z` the peer chose: blinded, by CRT, and checked.
    pub fn private_op(&self, z: &U2048) -> Result<U2048, PrivateOpError> {
        let public = &self.public;
        if !public.in_range(z) {
            return Err(PrivateOpError::OutOfRange);
        }
        let (mut blind, mut unblind) = public.random_unit();
        let root = self.root_on_two_cpus(&public.mul(z, &public.pow_e(&blind)));
        let root = public.mul(&root, &unblind);
        blind.zeroize();
        unblind.zeroize();
        if public.pow_e(&root) != *z {
            return Err(PrivateOpError::Fault);
        }
        Ok(root)
    }

    /// `h^d mod n` for a public `h` in range (a table token of a hash): by CRT, checked.
    pub fn private_op_public(&self, h: &U2048) -> Result<U2048, PrivateOpError> {
        if !self.public.in_range(h) {
            return Err(PrivateOpError::OutOfRange);
        }
        let root = self.root(h);
        if self.public.pow_e(&root) != *h {
            return Err(PrivateOpError::Fault);
        }
        Ok(root)
    }

    /// `x^d mod n` by CRT (Garner), constant time in `x` and the key.
    fn root(&self, x: &U2048) -> U2048 {
        self.combine(self.half_p(x), self.half_q(x))
    }

    /// [`OtPrivateKey::root`] with its two halves computed at once (the answer to a peer
    /// waits on it; the sealed tables are spread over the CPUs already).
    fn root_on_two_cpus(&self, x: &U2048) -> U2048 {
        let (m1, m2) = both(|| self.half_p(x), || self.half_q(x));
        self.combine(m1, m2)
    }

    fn half_p(&self, x: &U2048) -> U1024 {
        half(x, &self.p, &self.dp)
    }

    fn half_q(&self, x: &U2048) -> U1024 {
        half(x, &self.q, &self.dq)
    }

    /// Garner's recombination: `m2 + q·((m1 - m2)·q^-1 mod p)`.
    fn combine(&self, m1: U1024, m2: U1024) -> U2048 {
        let m2_mod_p = m2.rem(self.p.modulus().as_nz_ref());
        let h = FixedMontyForm::new(&m1, &self.p)
            .sub(&FixedMontyForm::new(&m2_mod_p, &self.p))
            .mul(&FixedMontyForm::new(&self.q_inv, &self.p))
            .retrieve();
        let q = self.q.modulus().as_ref();
        m2.resize::<L2048>().wrapping_add(&h.concatenating_mul(q))
    }
}

/// `x^exponent mod prime`, constant time.
fn half(x: &U2048, params: &FixedMontyParams<L1024>, exponent: &U1024) -> U1024 {
    let reduced = x.rem(params.modulus().as_nz_ref());
    FixedMontyForm::new(&reduced, params)
        .pow_amm(exponent)
        .retrieve()
}

impl Drop for OtPrivateKey {
    fn drop(&mut self) {
        self.p.zeroize();
        self.q.zeroize();
        self.dp.zeroize();
        self.dq.zeroize();
        self.q_inv.zeroize();
    }
}

/// `e^-1 mod m` for an even `m` coprime to `e`: `d = (1 + k·m) / e` with `k ≡ -m^-1 (mod e)`,
/// exact arithmetic on small factors (this runs once per prime, at key generation).
fn inverse_of_e(m: &U1024) -> Option<U1024> {
    let m_mod_e = m.rem_limb(NonZero::<Limb>::new_unwrap(Limb(E))).0;
    let inverse = inverse_mod_e(m_mod_e)?;
    let k = (E - inverse) % E;
    let product: U2048 = m.concatenating_mul(&U1024::from_u64(k));
    let numerator = product.wrapping_add(&U2048::ONE);
    let (d, remainder) = numerator.div_rem_limb(NonZero::<Limb>::new_unwrap(Limb(E)));
    (remainder == Limb::ZERO).then(|| d.resize())
}

/// `x^-1 mod e` for the prime `e` (Fermat), or `None` for 0.
fn inverse_mod_e(x: u64) -> Option<u64> {
    if x.is_multiple_of(E) {
        return None;
    }
    let (mut result, mut base, mut exponent) = (1u64, x % E, E - 2);
    while exponent > 0 {
        if exponent & 1 == 1 {
            result = result * base % E;
        }
        base = base * base % E;
        exponent >>= 1;
    }
    Some(result)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::engine::mental_poker::vectors::primitives;

    /// The fixed key of the reference vectors.
    pub(crate) fn vector_key() -> OtPrivateKey {
        let rsa = &primitives()["rsa"];
        let prime = |name: &str| {
            U1024::from_str_radix_vartime(rsa[name].as_str().unwrap(), 16).expect("vector prime")
        };
        OtPrivateKey::from_primes(prime("p"), prime("q")).expect("vector key")
    }

    #[test]
    fn the_private_operation_inverts_the_public_one() {
        let key = vector_key();
        let public = key.public();
        assert_eq!(public.n_hex(), primitives()["rsa"]["n"].as_str().unwrap());
        for _ in 0..4 {
            let (x, inverse) = public.random_unit();
            assert_eq!(key.private_op(&public.pow_e(&x)), Ok(x));
            assert_eq!(key.private_op_public(&public.pow_e(&x)), Ok(x));
            assert_eq!(public.mul(&x, &inverse), U2048::ONE);
        }
        assert_eq!(
            key.private_op(&U2048::ZERO),
            Err(PrivateOpError::OutOfRange)
        );
        assert_eq!(
            key.private_op(public.modulus()),
            Err(PrivateOpError::OutOfRange)
        );
    }

    #[test]
    fn generated_keys_have_exactly_2048_bits() {
        let key = OtPrivateKey::generate();
        let public = key.public();
        assert_eq!(public.modulus().bit_width(), 2048);
        let (x, _) = public.random_unit();
        assert_eq!(key.private_op(&public.pow_e(&x)), Ok(x));
    }

    #[test]
    fn public_keys_parse_only_in_their_exact_form() {
        let public = vector_key().public().clone();
        let text = public.to_json_text();
        assert_eq!(text, format!(r#"{{"e":65537,"n":"{}"}}"#, public.n_hex()));
        assert!(OtPublicKey::parse(&text).is_some());
        let n = public.n_hex();
        let even = format!("{}0", &n[..511]);
        let short = format!("{}{}", "0", &n[1..]);
        for bad in [
            format!(r#"{{"e":3,"n":"{n}"}}"#),
            format!(r#"{{"e":"65537","n":"{n}"}}"#),
            format!(r#"{{"e":65537,"n":"{}"}}"#, n.to_uppercase()),
            format!(r#"{{"e":65537,"n":"{even}"}}"#),
            format!(r#"{{"e":65537,"n":"{short}"}}"#),
            format!(r#"{{"e":65537,"n":"{n}","x":1}}"#),
            format!(r#"[65537,"{n}"]"#),
        ] {
            assert!(OtPublicKey::parse(&bad).is_none(), "{bad}");
        }
    }

    #[test]
    fn small_inverses() {
        let m = U1024::from_u64(2 * 3 * 5 * 7 * 11 * 13);
        let d = inverse_of_e(&m).unwrap();
        let check: U2048 = d.concatenating_mul(&U1024::from_u64(E));
        assert_eq!(
            check.rem(&NonZero::<U2048>::new_unwrap(m.resize())),
            U2048::ONE
        );
        assert_eq!(inverse_mod_e(0), None);
    }
}
