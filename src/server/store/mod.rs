//! The server's storage: sqlx over SQLite (WAL with `synchronous=FULL`, so an acknowledged
//! write survives a power loss; one writer connection and a few readers),
//! with queries in portable SQL so PostgreSQL can serve the same API later. The store also
//! counts the writes that can change the offered-invitations list, so a cache of that list
//! knows when it went stale.

mod agents;
mod invitations;
mod protocols;
mod request_ids;
mod sessions;

use std::str::FromStr;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePoolOptions, SqliteSynchronous};
use sqlx::{Sqlite, SqliteConnection, SqlitePool, Transaction};

pub use agents::{NewAgent, NewChallenge, RegisterOutcome};
pub use invitations::{
    InvitationRow, InvitationState, NewInvitationRow, OfferedFilter, OfferedPage,
};
pub use protocols::{InsertProtocol, NewProtocolRow, ProtocolQuota};
pub use sessions::{CreateSession, EndSession};

use crate::server::replay::WriteReceipt;

/// Readers used for GETs, one per core within these bounds: SQLite in WAL mode lets them run
/// beside the single writer, and as reads are CPU-bound (pages cached), more readers than
/// cores only add thread hand-offs and lock contention.
const READER_CONNECTIONS: (u32, u32) = (2, 8);

fn reader_connections() -> u32 {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    u32::try_from(cores)
        .unwrap_or(u32::MAX)
        .clamp(READER_CONNECTIONS.0, READER_CONNECTIONS.1)
}

/// Why the database could not be opened or queried.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("PostgreSQL support is not built in yet (use sqlite://PATH) ({0})")]
    PostgresNotBuilt(String),
    #[error("unsupported database URL {0:?} (expected sqlite://PATH)")]
    UnsupportedUrl(String),
    #[error("cannot create the database directory: {source} ({path})")]
    CreateDir {
        path: String,
        source: std::io::Error,
    },
    #[error("cannot open the database: {source} ({url})")]
    Open { url: String, source: sqlx::Error },
    #[error("database error: {0}")]
    Query(#[from] sqlx::Error),
}

/// The database behind one server.
#[derive(Debug, Clone)]
pub struct Store {
    reader: SqlitePool,
    writer: SqlitePool,
    /// Bumped after every committed write that can change what the offered list shows.
    offered_version: Arc<AtomicU64>,
}

impl Store {
    /// Opens (creating if needed) the database at `url` (`sqlite://PATH`, `sqlite::memory:`)
    /// and brings its schema up to date.
    pub async fn open(url: &str) -> Result<Store, StoreError> {
        let lowered = url.to_ascii_lowercase();
        if lowered.starts_with("postgres://") || lowered.starts_with("postgresql://") {
            return Err(StoreError::PostgresNotBuilt(url.to_string()));
        }
        if !lowered.starts_with("sqlite:") {
            return Err(StoreError::UnsupportedUrl(url.to_string()));
        }
        let open = |source| StoreError::Open {
            url: url.to_string(),
            source,
        };
        let options = SqliteConnectOptions::from_str(url)
            .map_err(open)?
            .create_if_missing(true)
            .journal_mode(SqliteJournalMode::Wal)
            .synchronous(SqliteSynchronous::Full)
            .busy_timeout(Duration::from_secs(5))
            .foreign_keys(true);
        let in_memory = lowered.contains(":memory:") || lowered.contains("mode=memory");
        let parent = options
            .get_filename()
            .parent()
            .filter(|p| !in_memory && !p.as_os_str().is_empty());
        if let Some(parent) = parent {
            std::fs::create_dir_all(parent).map_err(|source| StoreError::CreateDir {
                path: parent.display().to_string(),
                source,
            })?;
        }
        let writer = SqlitePoolOptions::new()
            .max_connections(1)
            .min_connections(1)
            .connect_with(options.clone())
            .await
            .map_err(open)?;
        sqlx::raw_sql(include_str!("schema.sql"))
            .execute(&writer)
            .await
            .map_err(open)?;
        let reader = if in_memory {
            writer.clone()
        } else {
            SqlitePoolOptions::new()
                .max_connections(reader_connections())
                .connect_with(options.read_only(true))
                .await
                .map_err(open)?
        };
        Ok(Store {
            reader,
            writer,
            offered_version: Arc::default(),
        })
    }

    /// Changes whenever a committed write may have changed an offered-invitations list
    /// (an invitation created, renewed, cancelled or matched; an agent registered). Read it
    /// before querying: an answer is current while the version still equals the one read
    /// and no listed invitation has expired.
    pub fn offered_version(&self) -> u64 {
        self.offered_version.load(Ordering::Acquire)
    }

    /// Called after such a write commits, before the request that made it is answered.
    fn offered_changed(&self) {
        self.offered_version.fetch_add(1, Ordering::AcqRel);
    }

    /// A trivial query, to prove the database answers.
    pub async fn ping(&self) -> Result<(), StoreError> {
        sqlx::query("SELECT 1").execute(&self.reader).await?;
        Ok(())
    }

    /// Moves the whole WAL into the database file and truncates it
    /// (`PRAGMA wal_checkpoint(TRUNCATE)`; idle readers hold no snapshot), then closes
    /// every connection.
    pub async fn close(&self) -> Result<(), StoreError> {
        let checkpoint = sqlx::query("PRAGMA wal_checkpoint(TRUNCATE)")
            .execute(&self.writer)
            .await;
        self.reader.close().await;
        self.writer.close().await;
        checkpoint?;
        Ok(())
    }
}

/// A write transaction that also stores the request id of the request that made it: the id
/// is on disk exactly when the write is (see [`crate::server::replay`]).
pub struct WriteTx<'a> {
    tx: Transaction<'static, Sqlite>,
    receipt: Option<&'a WriteReceipt>,
}

impl WriteTx<'_> {
    /// The connection, for the write's statements.
    fn conn(&mut self) -> &mut SqliteConnection {
        &mut self.tx
    }

    /// Commits the write and its request id together.
    async fn commit(self) -> Result<(), StoreError> {
        self.tx.commit().await?;
        if let Some(receipt) = self.receipt {
            receipt.mark_stored();
        }
        Ok(())
    }
}

impl Store {
    /// Begins a write on the writer connection, storing `receipt`'s request id first.
    async fn begin_write<'a>(
        &self,
        receipt: Option<&'a WriteReceipt>,
    ) -> Result<WriteTx<'a>, StoreError> {
        let mut tx = self.writer.begin().await?;
        if let Some(receipt) = receipt {
            request_ids::insert_one(&mut tx, receipt.row()).await?;
        }
        Ok(WriteTx { tx, receipt })
    }
}

/// True when a write failed on a UNIQUE or PRIMARY KEY constraint.
fn is_unique_violation(error: &sqlx::Error) -> bool {
    matches!(error, sqlx::Error::Database(db) if db.is_unique_violation())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn acknowledged_writes_are_synced_and_the_wal_is_emptied_on_close() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("db.sqlite3");
        let store = Store::open(&format!("sqlite://{}", path.display()))
            .await
            .unwrap();
        let (synchronous,): (i64,) = sqlx::query_as("PRAGMA synchronous")
            .fetch_one(&store.writer)
            .await
            .unwrap();
        assert_eq!(synchronous, 2, "synchronous=FULL");
        store
            .insert_request_ids(&[(crate::server::replay::PairDigest(1), i64::MAX)])
            .await
            .unwrap();
        let wal = dir.path().join("db.sqlite3-wal");
        assert!(std::fs::metadata(&wal).unwrap().len() > 0);
        store.close().await.unwrap();
        assert_eq!(std::fs::metadata(&wal).map_or(0, |m| m.len()), 0);
    }
}
