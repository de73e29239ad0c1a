//! Finished JSON answers of the offered-invitations list, kept while they are still true:
//! an entry is served only while the store's offered version is the one read before its
//! query ran (no write since) and its first listed invitation has not expired. Agents that
//! poll the same browse query then cost a signature check and a map lookup, not a database
//! round trip and a serialization. After a write, requests for the same answer wait for
//! one of them to recompute it instead of all querying at once.

use std::collections::HashMap;
use std::hash::{BuildHasher, RandomState};
use std::sync::{PoisonError, RwLock};

use axum::body::Bytes;
use tokio::sync::Mutex;

use super::clock::now_ms;

/// Answers kept at most (pages are small; a full cache keeps only current entries).
const MAX_ENTRIES: usize = 256;
/// Keys are spread over this many fill locks (misses of different keys rarely wait).
const FILL_LOCKS: usize = 16;

struct Entry {
    version: u64,
    /// Unix ms from which the answer is stale by expiry alone (`None`: only writes change it).
    stale_at: Option<i64>,
    body: Bytes,
}

impl Entry {
    fn current(&self, version: u64, now: i64) -> bool {
        self.version == version && self.stale_at.is_none_or(|at| now < at)
    }
}

/// The store's offered version as read when a signed read was admitted (on a shared
/// database, in the same round trip as its request-id claim): current enough for the first
/// cache check of that request, which then needs no round trip of its own.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AdmittedVersion(pub u64);

/// Cached list answers by query key (filters, limit, cursor).
pub struct PageCache {
    entries: RwLock<HashMap<String, Entry>>,
    fills: Vec<Mutex<()>>,
    hasher: RandomState,
}

impl Default for PageCache {
    fn default() -> PageCache {
        PageCache {
            entries: RwLock::default(),
            fills: (0..FILL_LOCKS).map(|_| Mutex::new(())).collect(),
            hasher: RandomState::new(),
        }
    }
}

impl PageCache {
    /// The answer for `key`: cached if still current, else computed by `fill` (given the
    /// time to query at; it returns the body and when it goes stale by expiry). `version`
    /// reads the store's offered version (shared by every instance on PostgreSQL); it is
    /// read before any query it covers. `admitted`, when known, stands for the first read.
    pub async fn get_or_fill<E, V: Future<Output = Result<u64, E>>>(
        &self,
        key: String,
        admitted: Option<AdmittedVersion>,
        version: impl Fn() -> V,
        fill: impl AsyncFnOnce(i64) -> Result<(Bytes, Option<i64>), E>,
    ) -> Result<Bytes, E> {
        let first = match admitted {
            Some(AdmittedVersion(version)) => version,
            None => version().await?,
        };
        if let Some(body) = self.get(&key, first, now_ms()) {
            return Ok(body);
        }
        let lock = &self.fills[self.hasher.hash_one(&key) as usize % FILL_LOCKS];
        let _turn = lock.lock().await;
        // Whoever held the lock before may have just stored a current answer.
        let (version, now) = (version().await?, now_ms());
        if let Some(body) = self.get(&key, version, now) {
            return Ok(body);
        }
        let (body, stale_at) = fill(now).await?;
        self.put(key, version, stale_at, body.clone(), now);
        Ok(body)
    }

    /// The answer for `key` if it is still current at `version` and `now`.
    fn get(&self, key: &str, version: u64, now: i64) -> Option<Bytes> {
        let entries = self.entries.read().unwrap_or_else(PoisonError::into_inner);
        entries
            .get(key)
            .filter(|entry| entry.current(version, now))
            .map(|entry| entry.body.clone())
    }

    /// Keeps `body`, computed from a query that started at `version`.
    fn put(&self, key: String, version: u64, stale_at: Option<i64>, body: Bytes, now: i64) {
        let mut entries = self.entries.write().unwrap_or_else(PoisonError::into_inner);
        if entries.len() >= MAX_ENTRIES && !entries.contains_key(&key) {
            entries.retain(|_, entry| entry.current(version, now));
            if entries.len() >= MAX_ENTRIES {
                entries.clear();
            }
        }
        entries.insert(
            key,
            Entry {
                version,
                stale_at,
                body,
            },
        );
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

    use super::*;

    #[tokio::test]
    async fn concurrent_misses_fill_once_and_a_write_forces_a_refill() {
        let cache = PageCache::default();
        let (version, fills) = (AtomicU64::new(1), AtomicUsize::new(0));
        let read = || {
            cache.get_or_fill(
                "k".to_string(),
                None,
                || std::future::ready(Ok(version.load(Ordering::SeqCst))),
                async |_| {
                    fills.fetch_add(1, Ordering::SeqCst);
                    tokio::task::yield_now().await;
                    Ok::<_, ()>((Bytes::from(fills.load(Ordering::SeqCst).to_string()), None))
                },
            )
        };
        let answers = tokio::join!(read(), read(), read());
        assert_eq!(answers, (Ok("1".into()), Ok("1".into()), Ok("1".into())));
        version.store(2, Ordering::SeqCst);
        assert_eq!(read().await, Ok("2".into()));
        assert_eq!(fills.load(Ordering::SeqCst), 2);
    }

    #[test]
    fn an_answer_lasts_until_a_write_or_the_first_expiry() {
        let cache = PageCache::default();
        cache.put("k".into(), 7, Some(1_000), Bytes::from_static(b"[]"), 0);
        assert_eq!(cache.get("k", 7, 999), Some(Bytes::from_static(b"[]")));
        assert_eq!(cache.get("k", 7, 1_000), None, "an invitation expired");
        assert_eq!(cache.get("k", 8, 10), None, "a write happened");
        assert_eq!(cache.get("other", 7, 10), None);
        cache.put("k".into(), 8, None, Bytes::from_static(b"{}"), 0);
        assert_eq!(cache.get("k", 8, i64::MAX), Some(Bytes::from_static(b"{}")));
    }

    #[test]
    fn a_full_cache_drops_stale_answers_first() {
        let cache = PageCache::default();
        for n in 0..MAX_ENTRIES {
            cache.put(format!("old{n}"), 1, None, Bytes::new(), 0);
        }
        cache.put("fresh".into(), 2, None, Bytes::new(), 0);
        assert!(cache.get("fresh", 2, 0).is_some());
        assert_eq!(
            cache
                .entries
                .read()
                .unwrap()
                .values()
                .filter(|e| e.version == 1)
                .count(),
            0
        );
    }
}
