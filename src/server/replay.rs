//! The replay guard: a (public key, request id) pair is accepted once while its signature
//! timestamp can still pass the freshness check — across restarts too. Pairs are checked in
//! memory (sharded, swept lazily) and in the database: a write's pair is stored in the
//! same transaction as the write it allowed (or, when it wrote nothing, before it is
//! answered), so its replay is refused after a crash or restart; reads' pairs are stored by
//! a background task once a second and at a graceful shutdown. A starting server loads the
//! pairs that are still in their window.
//!
//! On a database several instances share (PostgreSQL), memory only catches this
//! instance's replays: every pair is also claimed in the database when admitted (see
//! [`Store::claim_request_id`]), so a request replayed at another instance is refused too.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use sha2::{Digest, Sha256};
use tokio::sync::{mpsc, oneshot};
use tokio::task::JoinHandle;

use super::store::{Store, StoreError};

const SHARDS: usize = 64;
/// How often a shard drops forgotten entries.
const SWEEP_EVERY_MS: i64 = 10_000;
/// Reads' pairs waiting for their batch; a read that finds the queue full is remembered in
/// memory only.
const READ_QUEUE: usize = 65_536;
/// How often reads' pairs are stored.
const READ_BATCH_EVERY: std::time::Duration = std::time::Duration::from_secs(1);
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

/// A write's pair, and who waits until it is stored (hears whether it was).
struct Durable {
    pair: PairDigest,
    forget_at: i64,
    stored: oneshot::Sender<bool>,
}

/// A write request's pair, handed to its handler: the store writes it in the same
/// transaction as the write it allowed (and marks it stored). A write that stored nothing
/// has its pair stored by [`ReplayGuard::settle`] before it is answered.
#[derive(Debug, Clone)]
pub struct WriteReceipt {
    pair: PairDigest,
    forget_at: i64,
    stored: Arc<AtomicBool>,
}

impl WriteReceipt {
    /// The row to store: the pair and when it may be forgotten (Unix ms).
    pub fn row(&self) -> (PairDigest, i64) {
        (self.pair, self.forget_at)
    }

    /// Called once the transaction holding the row has committed.
    pub fn mark_stored(&self) {
        self.stored.store(true, Ordering::Release);
    }

    pub fn is_stored(&self) -> bool {
        self.stored.load(Ordering::Acquire)
    }
}

/// Why a pair was not accepted.
#[derive(Debug, thiserror::Error)]
pub enum ReplayError {
    #[error("this request id was already used by this key")]
    Replayed,
    #[error("the request id could not be stored")]
    NotStored,
}

/// The memory check plus the background writer (or, on a shared database, the claim).
pub struct ReplayGuard {
    memory: ReplayCache,
    /// Set on a database several instances share: pairs are claimed in it at admission.
    shared: Option<Store>,
    writes: mpsc::Sender<Durable>,
    reads: mpsc::Sender<(PairDigest, i64)>,
    stop: mpsc::Sender<oneshot::Sender<()>>,
}

impl ReplayGuard {
    /// Loads the pairs still in their window and starts the writer task.
    pub async fn start(
        store: Store,
        now: i64,
    ) -> Result<(ReplayGuard, JoinHandle<()>), StoreError> {
        let memory = ReplayCache::default();
        let shared = store.is_shared().then(|| store.clone());
        if shared.is_none() {
            for (pair, forget_at) in store.live_request_ids(now).await? {
                memory.first_use(pair, forget_at, now);
            }
        }
        let (writes, queued_writes) = mpsc::channel(BATCH);
        let (reads, queued_reads) = mpsc::channel(READ_QUEUE);
        let (stop, stopped) = mpsc::channel(1);
        let writer = tokio::spawn(write_pairs(store, queued_writes, queued_reads, stopped));
        let guard = ReplayGuard {
            memory,
            shared,
            writes,
            reads,
            stop,
        };
        Ok((guard, writer))
    }

    /// Accepts a read's pair once until `forget_at` (Unix ms); it is stored in the
    /// background, or claimed at once on a shared database, which also answers the
    /// offered-list version then (`Some`).
    pub async fn first_read(
        &self,
        public_key: &str,
        request_id: &str,
        forget_at: i64,
        now: i64,
    ) -> Result<Option<u64>, ReplayError> {
        let pair = PairDigest::of(public_key, request_id);
        if !self.memory.first_use(pair, forget_at, now) {
            return Err(ReplayError::Replayed);
        }
        if let Some(store) = &self.shared {
            return claim(store, pair, forget_at).await.map(Some);
        }
        if self.reads.try_send((pair, forget_at)).is_err() {
            tracing::debug!("replay queue full: a read's request id stays in memory only");
        }
        Ok(None)
    }

    /// Accepts a write's pair once until `forget_at` (Unix ms); the receipt goes with the
    /// write to the store, then to [`ReplayGuard::settle`].
    pub async fn first_write(
        &self,
        public_key: &str,
        request_id: &str,
        forget_at: i64,
        now: i64,
    ) -> Result<WriteReceipt, ReplayError> {
        let pair = PairDigest::of(public_key, request_id);
        if !self.memory.first_use(pair, forget_at, now) {
            return Err(ReplayError::Replayed);
        }
        let receipt = WriteReceipt {
            pair,
            forget_at,
            stored: Arc::default(),
        };
        if let Some(store) = &self.shared {
            claim(store, pair, forget_at).await?;
            receipt.mark_stored();
        }
        Ok(receipt)
    }

    /// Stores a handled write's pair unless its write already did.
    pub async fn settle(&self, receipt: &WriteReceipt) -> Result<(), ReplayError> {
        if receipt.is_stored() {
            return Ok(());
        }
        let (stored, heard) = oneshot::channel();
        let durable = Durable {
            pair: receipt.pair,
            forget_at: receipt.forget_at,
            stored,
        };
        self.writes
            .send(durable)
            .await
            .map_err(|_| ReplayError::NotStored)?;
        match heard.await {
            Ok(true) => {
                receipt.mark_stored();
                Ok(())
            }
            _ => Err(ReplayError::NotStored),
        }
    }

    /// Stores every queued pair and stops the writer (at shutdown).
    pub async fn flush(&self) {
        let (done, finished) = oneshot::channel();
        if self.stop.send(done).await.is_ok() {
            let _ = finished.await;
        }
    }
}

/// Claims a pair in the shared database (refused if any instance claimed it before): the
/// offered-list version read with it.
async fn claim(store: &Store, pair: PairDigest, forget_at: i64) -> Result<u64, ReplayError> {
    match store.claim_request_id(pair, forget_at).await {
        Ok(Some(version)) => Ok(version),
        Ok(None) => Err(ReplayError::Replayed),
        Err(error) => {
            tracing::error!(%error, "a request id could not be claimed");
            Err(ReplayError::NotStored)
        }
    }
}

/// The writer. Writes' pairs are stored as soon as they come, all those waiting in one
/// transaction (group commit); reads' pairs once per [`READ_BATCH_EVERY`], in transactions
/// of [`BATCH`] with the writes that arrived meanwhile stored between them.
async fn write_pairs(
    store: Store,
    mut writes: mpsc::Receiver<Durable>,
    mut reads: mpsc::Receiver<(PairDigest, i64)>,
    mut stop: mpsc::Receiver<oneshot::Sender<()>>,
) {
    let mut every = tokio::time::interval(READ_BATCH_EVERY);
    every.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut waiting = Vec::with_capacity(BATCH);
    loop {
        tokio::select! {
            biased;
            done = stop.recv() => {
                writes.close();
                while let Some(durable) = writes.recv().await {
                    waiting.push(durable);
                }
                store_writes(&store, &mut waiting).await;
                while store_reads(&store, &mut reads).await {}
                if let Some(done) = done {
                    let _ = done.send(());
                }
                return;
            }
            received = writes.recv_many(&mut waiting, BATCH) => {
                if received == 0 {
                    return;
                }
                store_writes(&store, &mut waiting).await;
            }
            _ = every.tick() => {
                // In chunks, storing the writes that arrive meanwhile between them.
                while store_reads(&store, &mut reads).await {
                    while let Ok(durable) = writes.try_recv() {
                        waiting.push(durable);
                    }
                    store_writes(&store, &mut waiting).await;
                }
            }
        }
    }
}

async fn store_writes(store: &Store, waiting: &mut Vec<Durable>) {
    if waiting.is_empty() {
        return;
    }
    let pairs: Vec<(PairDigest, i64)> = waiting.iter().map(|w| (w.pair, w.forget_at)).collect();
    let stored = match store.insert_request_ids(&pairs).await {
        Ok(()) => true,
        Err(error) => {
            tracing::error!(%error, "request ids of writes not stored");
            false
        }
    };
    for durable in waiting.drain(..) {
        let _ = durable.stored.send(stored);
    }
}

/// Stores up to [`BATCH`] queued reads' pairs; `true` when more may be queued.
async fn store_reads(store: &Store, reads: &mut mpsc::Receiver<(PairDigest, i64)>) -> bool {
    let mut pairs = Vec::with_capacity(BATCH);
    while pairs.len() < BATCH
        && let Ok(pair) = reads.try_recv()
    {
        pairs.push(pair);
    }
    if pairs.is_empty() {
        return false;
    }
    if let Err(error) = store.insert_request_ids(&pairs).await {
        tracing::warn!(%error, count = pairs.len(), "request ids of reads not stored");
    }
    pairs.len() == BATCH
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
        let receipt = guard.first_write("k", "write", 10_000, 0).await.unwrap();
        guard.settle(&receipt).await.unwrap();
        assert!(receipt.is_stored());
        guard.first_read("k", "read", 10_000, 0).await.unwrap();
        assert!(matches!(
            guard.first_write("k", "read", 10_000, 0).await,
            Err(ReplayError::Replayed)
        ));
        guard.flush().await;
        writer.await.unwrap();

        let (again, _writer) = ReplayGuard::start(store.clone(), 1_000).await.unwrap();
        for id in ["write", "read"] {
            assert!(matches!(
                again.first_read("k", id, 10_000, 1_000).await,
                Err(ReplayError::Replayed)
            ));
        }
        let (later, _writer) = ReplayGuard::start(store, 10_000).await.unwrap();
        assert!(
            later.first_read("k", "write", 20_000, 10_000).await.is_ok(),
            "forgotten once its window ended"
        );
    }
}
