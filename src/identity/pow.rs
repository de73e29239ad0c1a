//! Registration: the proof of work over a server challenge and the signed registration
//! proof `nonce:public_key:nickname` (docs/rest-api.md#registration).

use sha2::{Digest, Sha256};

/// True when SHA-256(nonce + public_key + decimal(counter)) starts with `difficulty` zero bytes.
pub fn pow_satisfied(nonce: &str, public_key: &str, counter: u64, difficulty: u8) -> bool {
    let digest = Sha256::digest(format!("{nonce}{public_key}{counter}").as_bytes());
    let zeros = usize::from(difficulty);
    zeros <= digest.len() && digest[..zeros].iter().all(|&byte| byte == 0)
}

/// The smallest counter that satisfies [`pow_satisfied`] (what the reference computes).
pub fn solve_pow(nonce: &str, public_key: &str, difficulty: u8) -> u64 {
    (0..)
        .find(|&counter| pow_satisfied(nonce, public_key, counter, difficulty))
        .expect("unbounded search")
}

/// The bytes the registrant signs (the bio is not covered).
pub fn registration_canonical(nonce: &str, public_key: &str, nickname: &str) -> String {
    format!("{nonce}:{public_key}:{nickname}")
}

#[cfg(test)]
mod tests {
    use super::super::Identity;
    use super::super::vectors::*;
    use super::*;

    const NONCE: &str = "62dac900c291e64cbece700369535f08";

    #[test]
    fn reproduces_the_captured_registration() {
        assert_eq!(solve_pow(NONCE, ALICE_PUBLIC, 2), 6839);
        let digest = Sha256::digest(format!("{NONCE}{ALICE_PUBLIC}6839").as_bytes());
        assert!(hex::encode(digest).starts_with("0000b99d"));
        assert!(!pow_satisfied(NONCE, ALICE_PUBLIC, 6838, 2));
        let alice = Identity::from_seed_hex(ALICE_SEED).unwrap();
        assert_eq!(
            alice.sign_hex(registration_canonical(NONCE, ALICE_PUBLIC, "alice").as_bytes()),
            "c716fa25251a1ede4318eb76a3ba8fd42efb942d34e8c813d47ddb0f13fc0ff5\
             3a027e233ea1c55cdeb659697882bac3f4b15ac04b811eb10ca515000f5b5f0f"
        );
    }

    #[test]
    fn difficulty_zero_accepts_anything_and_too_much_rejects_everything() {
        assert!(pow_satisfied("n", "k", 0, 0));
        assert!(!pow_satisfied("n", "k", 0, 33));
    }
}
