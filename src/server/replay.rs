//! The replay guard: a (public key, request id) pair is accepted once while its signature
//! timestamp can still pass the freshness check. Kept in memory, sharded, swept lazily.

use std::collections::HashMap;
use std::sync::Mutex;

use sha2::{Digest, Sha256};

const SHARDS: usize = 64;
/// How often a shard drops forgotten entries.
const SWEEP_EVERY_MS: i64 = 10_000;

#[derive(Default)]
struct Shard {
    /// 128-bit digest of (key, request id) → when it may be forgotten (Unix ms).
    seen: HashMap<u128, i64>,
    next_sweep: i64,
}

/// Remembers recently used request ids per key.
pub struct ReplayCache {
    shards: Vec<Mutex<Shard>>,
}

impl Default for ReplayCache {
    fn default() -> ReplayCache {
        ReplayCache {
            shards: (0..SHARDS).map(|_| Mutex::new(Shard::default())).collect(),
        }
    }
}

impl ReplayCache {
    /// Records the pair until `forget_at` (Unix ms); `false` if it was already recorded.
    pub fn first_use(&self, public_key: &str, request_id: &str, forget_at: i64, now: i64) -> bool {
        let mut hasher = Sha256::new();
        hasher.update(public_key.as_bytes());
        hasher.update([0]);
        hasher.update(request_id.as_bytes());
        let digest = hasher.finalize();
        let key = u128::from_le_bytes(digest[..16].try_into().expect("16 bytes"));
        let mut shard = self.shards[(key % SHARDS as u128) as usize]
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        if now >= shard.next_sweep {
            shard.seen.retain(|_, until| *until > now);
            shard.next_sweep = now + SWEEP_EVERY_MS;
        }
        match shard.seen.get(&key) {
            Some(until) if *until > now => false,
            _ => {
                shard.seen.insert(key, forget_at);
                true
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pair_is_accepted_once_until_forgotten() {
        let cache = ReplayCache::default();
        assert!(cache.first_use("k", "r1", 1_000, 0));
        assert!(!cache.first_use("k", "r1", 1_000, 500));
        assert!(cache.first_use("other", "r1", 1_000, 500));
        assert!(cache.first_use("k", "r2", 1_000, 500));
        assert!(
            cache.first_use("k", "r1", 50_000, 20_000),
            "forgotten after its window"
        );
    }
}
