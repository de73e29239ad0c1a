//! The one source of randomness for every secret of a game — layer keys, nonces, pads, both
//! shuffles, OT blinding factors and RSA primes: the operating system's generator, in the
//! `rand_core` 0.10 shape that `crypto-bigint` and `crypto-primes` take.

use getrandom::SysRng;
use rand_core::{Rng, UnwrapErr};

/// The operating system's CSPRNG (it panics only if the OS cannot give randomness at all).
pub(crate) type Os = UnwrapErr<SysRng>;

pub(crate) fn os() -> Os {
    UnwrapErr(SysRng)
}

/// `N` fresh random bytes.
pub(crate) fn bytes<const N: usize>() -> [u8; N] {
    let mut out = [0u8; N];
    os().fill_bytes(&mut out);
    out
}

/// A uniform index below `bound` (rejection sampling, no modulo bias).
fn below(rng: &mut Os, bound: usize) -> usize {
    let bound = bound as u64;
    let zone = u64::MAX - (u64::MAX % bound);
    loop {
        let draw = rng.next_u64();
        if draw < zone {
            return (draw % bound) as usize;
        }
    }
}

/// A uniformly random permutation (Fisher–Yates).
pub(crate) fn shuffle<T>(items: &mut [T]) {
    let mut rng = os();
    for last in (1..items.len()).rev() {
        items.swap(last, below(&mut rng, last + 1));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shuffles_are_permutations_and_reach_every_position() {
        let mut seen_first = [false; 4];
        for _ in 0..200 {
            let mut items = [0, 1, 2, 3];
            shuffle(&mut items);
            let mut sorted = items;
            sorted.sort();
            assert_eq!(sorted, [0, 1, 2, 3]);
            seen_first[items[0]] = true;
        }
        assert_eq!(seen_first, [true; 4]);
        assert_ne!(bytes::<16>(), bytes::<16>());
    }
}
