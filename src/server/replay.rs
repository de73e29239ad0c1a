//! The replay guard: a (public key, request id) pair is accepted once while its signature
//! timestamp can still pass the freshness check — across restarts too. Pairs are checked in
//! memory (sharded, swept lazily) and written to the database by one background task in
//! batches: a write request waits until its pair is stored (so a replay after a crash or
//! restart is refused), a read does not (its pair is stored within one batch, and at a
//! graceful shutdown). A starting server loads the pairs that are still in their window.

use std::collections::HashMap;
use std::sync::Mutex;

use sha2::{Digest, Sha256};
use tokio::sync::{mpsc, oneshot};
use tokio::task::JoinHandle;

use super::store::{Store, StoreError};

const SHARDS: usize = 64;
/// How often a shard drops forgotten entries.
const SWEEP_EVERY_MS: i64 = 10_000;
/// Pairs waiting to be stored; reads that find the queue full are remembered in memory only.
const QUEUE: usize = 16_384;
/// Pairs stored per transaction at most.
const BATCH: usize = 1024;

/// 128 bits of SHA-256(public key, 0, request id): what is remembered of a pair.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct PairDigest(pub u128);

impl PairDigest {
    pub fn of(public_key: &str, request_id: &str) -> PairDigest {
        let mut hasher = Sha256::new();
        hasher.update(public_key.as_bytes());
        hasher.update([0]);
        hasher.update(request_id.as_bytes());
        let digest = hasher.finalize();
        PairDigest(u128::from_le_bytes(
            digest[..16].try_into().expect("16 bytes"),
        ))
    }
}

#[derive(Default)]
struct Shard {
    /// Pair → when it may be forgotten (Unix ms).
    seen: HashMap<PairDigest, i64>,
    next_sweep: i64,
}

/// Remembers recently used pairs in memory.
struct ReplayCache {
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
    fn first_use(&self, pair: PairDigest, forget_at: i64, now: i64) -> bool {
        let mut shard = self.shards[(pair.0 % SHARDS as u128) as usize]
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        if now >= shard.next_sweep {
            shard.seen.retain(|_, until| *until > now);
            shard.next_sweep = now + SWEEP_EVERY_MS;
        }
        match shard.seen.get(&pair) {
            Some(until) if *until > now => false,
            _ => {
                shard.seen.insert(pair, forget_at);
                true
            }
        }
    }
}

enum Message {
    /// Store a pair; `stored` (if any) hears whether it was stored.
    Record {
        pair: PairDigest,
        forget_at: i64,
        stored: Option<oneshot::Sender<bool>>,
    },
    /// Store what is queued, then stop.
    Stop(oneshot::Sender<()>),
}

/// Whether a request must wait until its pair is on disk.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Durability {
    /// A write: its pair is stored before the write runs.
    BeforeHandling,
    /// A read: its pair is stored in the background.
    Background,
}

/// Why a pair was not accepted.
#[derive(Debug, thiserror::Error)]
pub enum ReplayError {
    #[error("this request id was already used by this key")]
    Replayed,
    #[error("the request id could not be stored")]
    NotStored,
}

/// The memory check plus the background writer.
pub struct ReplayGuard {
    memory: ReplayCache,
    queue: mpsc::Sender<Message>,
}

impl ReplayGuard {
    /// Loads the pairs still in their window and starts the writer task.
    pub async fn start(
        store: Store,
        now: i64,
    ) -> Result<(ReplayGuard, JoinHandle<()>), StoreError> {
        let memory = ReplayCache::default();
        for (pair, forget_at) in store.live_request_ids(now).await? {
            memory.first_use(pair, forget_at, now);
        }
        let (queue, received) = mpsc::channel(QUEUE);
        let writer = tokio::spawn(write_pairs(store, received));
        Ok((ReplayGuard { memory, queue }, writer))
    }

    /// Accepts a pair once until `forget_at` (Unix ms).
    pub async fn first_use(
        &self,
        public_key: &str,
        request_id: &str,
        forget_at: i64,
        now: i64,
        durability: Durability,
    ) -> Result<(), ReplayError> {
        let pair = PairDigest::of(public_key, request_id);
        if !self.memory.first_use(pair, forget_at, now) {
            return Err(ReplayError::Replayed);
        }
        match durability {
            Durability::Background => {
                let record = Message::Record {
                    pair,
                    forget_at,
                    stored: None,
                };
                if self.queue.try_send(record).is_err() {
                    tracing::debug!("replay queue full: a read's request id stays in memory only");
                }
                Ok(())
            }
            Durability::BeforeHandling => {
                let (stored, heard) = oneshot::channel();
                let record = Message::Record {
                    pair,
                    forget_at,
                    stored: Some(stored),
                };
                self.queue
                    .send(record)
                    .await
                    .map_err(|_| ReplayError::NotStored)?;
                match heard.await {
                    Ok(true) => Ok(()),
                    _ => Err(ReplayError::NotStored),
                }
            }
        }
    }

    /// Stores every queued pair and stops the writer (at shutdown).
    pub async fn flush(&self) {
        let (done, finished) = oneshot::channel();
        if self.queue.send(Message::Stop(done)).await.is_ok() {
            let _ = finished.await;
        }
    }
}

/// The writer: stores whatever is queued in one transaction, answers the waiting writes.
async fn write_pairs(store: Store, mut received: mpsc::Receiver<Message>) {
    let mut messages = Vec::with_capacity(BATCH);
    loop {
        if received.recv_many(&mut messages, BATCH).await == 0 {
            return;
        }
        let mut pairs = Vec::with_capacity(messages.len());
        let mut waiting = Vec::new();
        let mut stop = None;
        for message in messages.drain(..) {
            match message {
                Message::Record {
                    pair,
                    forget_at,
                    stored,
                } => {
                    pairs.push((pair, forget_at));
                    waiting.extend(stored);
                }
                Message::Stop(done) => stop = Some(done),
            }
        }
        let stored = match store.insert_request_ids(&pairs).await {
            Ok(()) => true,
            Err(error) => {
                tracing::error!(%error, "request ids not stored");
                false
            }
        };
        for waiter in waiting {
            let _ = waiter.send(stored);
        }
        if let Some(done) = stop {
            received.close();
            let _ = done.send(());
            return;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pair_is_accepted_once_until_forgotten() {
        let cache = ReplayCache::default();
        let pair = |key: &str, id: &str| PairDigest::of(key, id);
        assert!(cache.first_use(pair("k", "r1"), 1_000, 0));
        assert!(!cache.first_use(pair("k", "r1"), 1_000, 500));
        assert!(cache.first_use(pair("other", "r1"), 1_000, 500));
        assert!(cache.first_use(pair("k", "r2"), 1_000, 500));
        assert!(
            cache.first_use(pair("k", "r1"), 50_000, 20_000),
            "forgotten after its window"
        );
    }

    #[tokio::test]
    async fn pairs_survive_a_restart_until_their_window_ends() {
        let store = Store::open("sqlite::memory:").await.unwrap();
        let (guard, writer) = ReplayGuard::start(store.clone(), 0).await.unwrap();
        guard
            .first_use("k", "write", 10_000, 0, Durability::BeforeHandling)
            .await
            .unwrap();
        guard
            .first_use("k", "read", 10_000, 0, Durability::Background)
            .await
            .unwrap();
        guard.flush().await;
        writer.await.unwrap();

        let (again, _writer) = ReplayGuard::start(store.clone(), 1_000).await.unwrap();
        for id in ["write", "read"] {
            assert!(matches!(
                again
                    .first_use("k", id, 10_000, 1_000, Durability::Background)
                    .await,
                Err(ReplayError::Replayed)
            ));
        }
        let (later, _writer) = ReplayGuard::start(store, 10_000).await.unwrap();
        assert!(
            later
                .first_use("k", "write", 20_000, 10_000, Durability::Background)
                .await
                .is_ok(),
            "forgotten once its window ended"
        );
    }
}
