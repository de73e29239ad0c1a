//! Registration: the proof of work over a server challenge and the signed registration
//! proof `nonce:public_key:nickname` (docs/rest-api.md#registration).

use sha2::{Digest, Sha256};

/// True when SHA-256(nonce + public_key + decimal(counter)) starts with `difficulty` zero bytes.
pub fn pow_satisfied(nonce: &str, public_key: &str, counter: u64, difficulty: u8) -> bool {
    satisfies(prefix_state(nonce, public_key), counter, difficulty)
}

/// The smallest counter that satisfies [`pow_satisfied`] (what the reference computes).
/// The hash state of `nonce + public_key` is computed once, so each try hashes only the
/// counter's digits: about 2^24 tries (difficulty 3) take a second or so.
pub fn solve_pow(nonce: &str, public_key: &str, difficulty: u8) -> u64 {
    let prefix = prefix_state(nonce, public_key);
    (0..)
        .find(|&counter| satisfies(prefix.clone(), counter, difficulty))
        .expect("unbounded search")
}

fn prefix_state(nonce: &str, public_key: &str) -> Sha256 {
    let mut hasher = Sha256::new();
    hasher.update(nonce.as_bytes());
    hasher.update(public_key.as_bytes());
    hasher
}

fn satisfies(mut hasher: Sha256, counter: u64, difficulty: u8) -> bool {
    let mut digits = [0u8; 20];
    hasher.update(decimal(counter, &mut digits));
    let digest = hasher.finalize();
    let zeros = usize::from(difficulty);
    zeros <= digest.len() && digest[..zeros].iter().all(|&byte| byte == 0)
}

/// `n` in decimal ASCII, written at the end of `buffer`.
fn decimal(mut n: u64, buffer: &mut [u8; 20]) -> &[u8] {
    let mut start = buffer.len();
    loop {
        start -= 1;
        buffer[start] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            return &buffer[start..];
        }
    }
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
    fn counters_are_hashed_in_decimal() {
        let mut buffer = [0u8; 20];
        assert_eq!(decimal(0, &mut buffer), b"0");
        assert_eq!(decimal(6839, &mut buffer), b"6839");
        assert_eq!(
            decimal(u64::MAX, &mut buffer),
            u64::MAX.to_string().as_bytes()
        );
    }

    #[test]
    fn difficulty_zero_accepts_anything_and_too_much_rejects_everything() {
        assert!(pow_satisfied("n", "k", 0, 0));
        assert!(!pow_satisfied("n", "k", 0, 33));
    }
}
