//! The server's storage, behind one API for two backends: SQLite (the embedded default: WAL
//! with `synchronous=FULL`, so an acknowledged write survives a power loss; one writer
//! connection and a few readers) and PostgreSQL (one pool, for several instances on one
//! database: see docs/deploy.md). Queries are written once in portable SQL and run on each
//! backend's typed pool (`with_pool!`, `with_tx!`: the body is compiled once per backend);
//! each backend's schema is applied at start as sqlx migrations. The store also versions
//! the offered-invitations list, so a cache of that list knows when it went stale.

mod agents;
mod groups;
mod invitations;
mod open;
mod protocols;
mod request_ids;
mod sessions;
mod shared;

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use sqlx::postgres::PgRow;
use sqlx::sqlite::SqliteRow;
use sqlx::{PgPool, Postgres, Row, Sqlite, SqlitePool, Transaction};

pub use agents::{NewAgent, NewChallenge, RegisterOutcome};
pub use groups::{GroupRow, GroupState, GroupUpdate, InvitationEffect, MemberRow};
pub use invitations::{
    InvitationRow, InvitationState, NewInvitationRow, OfferedFilter, OfferedPage,
};
pub use open::redacted;
pub use protocols::{InsertProtocol, NewProtocolRow, ProtocolQuota};
pub use sessions::{CreateSession, EndSession};
pub use shared::{HOUSEKEEPING_LOCK, RateWindow};

use crate::server::replay::WriteReceipt;

/// Why the database could not be opened or queried.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("unsupported database URL {0:?} (expected sqlite://PATH or postgres://USER@HOST/DB)")]
    UnsupportedUrl(String),
    #[error("cannot create the database directory: {source} ({path})")]
    CreateDir {
        path: String,
        source: std::io::Error,
    },
    #[error("cannot open the database {url}: {source}")]
    Open { url: String, source: sqlx::Error },
    #[error("the database {url} does not have this server's schema: {source}")]
    Schema {
        url: String,
        source: sqlx::migrate::MigrateError,
    },
    #[error(
        "the database {url} is damaged ({first_problem}); restore it from a backup or move it aside"
    )]
    Corrupt { url: String, first_problem: String },
    #[error("database error: {0}")]
    Query(#[from] sqlx::Error),
}

impl StoreError {
    /// True when the database could not be reached (connection lost or refused, pool
    /// exhausted or closed, server shutting down) or could not store the write (a full disk,
    /// an I/O error): nothing was committed, and the request may succeed later (503).
    pub fn is_unavailable(&self) -> bool {
        let StoreError::Query(error) = self else {
            return true;
        };
        match error {
            sqlx::Error::Io(_)
            | sqlx::Error::Tls(_)
            | sqlx::Error::Protocol(_)
            | sqlx::Error::PoolTimedOut
            | sqlx::Error::PoolClosed
            | sqlx::Error::WorkerCrashed => true,
            sqlx::Error::Database(db)
                if db.try_downcast_ref::<sqlx::sqlite::SqliteError>().is_some() =>
            {
                db.code().is_some_and(|code| is_transient_sqlite(&code))
            }
            // SQLSTATE class 08 (connection exception), 57P01-57P03 (shutdown, cannot
            // connect now), 53300 (too many connections), 53100 (disk full).
            sqlx::Error::Database(db) => db.code().is_some_and(|code| {
                code.starts_with("08")
                    || code.starts_with("57P")
                    || code == "53300"
                    || code == "53100"
            }),
            _ => false,
        }
    }
}

/// True for SQLite result codes (extended codes, as decimal text) of a storage problem that
/// may go away: busy or locked, out of memory, read-only, an I/O error, a full disk, a file
/// that cannot be opened. The write did not commit; the client may retry later (503).
fn is_transient_sqlite(code: &str) -> bool {
    const BUSY: i64 = 5;
    const LOCKED: i64 = 6;
    const NOMEM: i64 = 7;
    const READONLY: i64 = 8;
    const IOERR: i64 = 10;
    const FULL: i64 = 13;
    const CANTOPEN: i64 = 14;
    code.parse::<i64>().is_ok_and(|extended| {
        matches!(
            extended & 0xff,
            BUSY | LOCKED | NOMEM | READONLY | IOERR | FULL | CANTOPEN
        )
    })
}

/// How long the health check waits for the database (load balancers time out their checks
/// after a few seconds).
const PING_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(2);

/// The connections of one backend.
#[derive(Debug, Clone)]
enum Pools {
    Sqlite {
        /// Readers for GETs (WAL lets them run beside the writer).
        reader: SqlitePool,
        /// The single writer connection.
        writer: SqlitePool,
    },
    Postgres {
        pool: PgPool,
        /// Connections with `synchronous_commit=off`, for rows whose loss in a database
        /// crash is harmless or covered (request ids of reads, rate-limit counters): see
        /// [`shared`].
        relaxed: PgPool,
    },
}

/// The database behind one server.
#[derive(Debug, Clone)]
pub struct Store {
    pools: Pools,
    /// SQLite: bumped after every committed write that can change the offered list
    /// (PostgreSQL keeps this version in the database, shared by every instance).
    offered_version: Arc<AtomicU64>,
}

/// Runs `$body` with `$pool` bound to the backend's pool for reads (`reader`) or writes
/// (`writer`); the body is compiled once per backend, with its typed pool.
macro_rules! with_pool {
    ($store:expr, $role:ident, |$pool:ident| $body:expr) => {
        match &$store.pools {
            $crate::server::store::Pools::Sqlite { $role: $pool, .. } => $body,
            $crate::server::store::Pools::Postgres { pool: $pool, .. } => $body,
        }
    };
}
pub(crate) use with_pool;

/// Runs `$body` with `$conn` bound to the write transaction's typed connection.
macro_rules! with_tx {
    ($tx:expr, |$conn:ident| $body:expr) => {
        match &mut $tx.tx {
            $crate::server::store::Tx::Sqlite(tx) => {
                let $conn: &mut sqlx::SqliteConnection = &mut *tx;
                $body
            }
            $crate::server::store::Tx::Postgres(tx) => {
                let $conn: &mut sqlx::PgConnection = &mut *tx;
                $body
            }
        }
    };
}
pub(crate) use with_tx;

impl Store {
    /// Which backend this is, for logs and the health check.
    pub fn backend(&self) -> &'static str {
        match self.pools {
            Pools::Sqlite { .. } => "sqlite",
            Pools::Postgres { .. } => "postgres",
        }
    }

    /// True when several instances may share this database (PostgreSQL): replay checks,
    /// rate limits and cache versions must then go through it.
    pub fn is_shared(&self) -> bool {
        matches!(self.pools, Pools::Postgres { .. })
    }

    /// Changes whenever a committed write may have changed an offered-invitations list
    /// (an invitation created, renewed, cancelled or matched; an agent registered), on any
    /// instance. Read it before querying: an answer is current while the version still
    /// equals the one read and no listed invitation has expired.
    pub async fn offered_version(&self) -> Result<u64, StoreError> {
        match &self.pools {
            Pools::Sqlite { .. } => Ok(self.offered_version.load(Ordering::Acquire)),
            Pools::Postgres { pool, .. } => shared::offered_version(pool).await,
        }
    }

    /// Called after such a write commits, before the request that made it is answered.
    async fn offered_changed(&self) {
        match &self.pools {
            Pools::Sqlite { .. } => {
                self.offered_version.fetch_add(1, Ordering::AcqRel);
            }
            Pools::Postgres { pool, .. } => shared::bump_offered_version(pool).await,
        }
    }

    /// A trivial query, to prove the database answers within [`PING_TIMEOUT`].
    pub async fn ping(&self) -> Result<(), StoreError> {
        let ping = async {
            with_pool!(self, reader, |pool| sqlx::query("SELECT 1")
                .execute(pool)
                .await
                .map(drop))
        };
        match tokio::time::timeout(PING_TIMEOUT, ping).await {
            Ok(answered) => Ok(answered?),
            Err(_) => Err(StoreError::Query(sqlx::Error::PoolTimedOut)),
        }
    }

    /// Closes every connection; on SQLite first moves the whole WAL into the database file
    /// and truncates it (`PRAGMA wal_checkpoint(TRUNCATE)`; idle readers hold no snapshot).
    /// A checkpoint that fails (a disk still full) loses nothing: the WAL stays beside the
    /// database, and SQLite applies it at the next start.
    pub async fn close(&self) -> Result<(), StoreError> {
        match &self.pools {
            Pools::Sqlite { reader, writer } => {
                let checkpoint = sqlx::query("PRAGMA wal_checkpoint(TRUNCATE)")
                    .execute(writer)
                    .await;
                reader.close().await;
                writer.close().await;
                if let Err(error) = checkpoint {
                    tracing::warn!(%error, "the WAL could not be checkpointed; it is applied at the next start");
                }
            }
            Pools::Postgres { pool, relaxed } => {
                relaxed.close().await;
                pool.close().await;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
impl Store {
    /// The SQLite writer pool, for tests that set up rows directly.
    pub(crate) fn sqlite_writer(&self) -> &SqlitePool {
        match &self.pools {
            Pools::Sqlite { writer, .. } => writer,
            Pools::Postgres { .. } => unreachable!("a SQLite store"),
        }
    }
}

/// The typed transaction of a write.
enum Tx {
    Sqlite(Transaction<'static, Sqlite>),
    Postgres(Transaction<'static, Postgres>),
}

/// A write transaction that also stores the request id of the request that made it: the id
/// is on disk exactly when the write is (see [`crate::server::replay`]).
pub struct WriteTx<'a> {
    tx: Tx,
    receipt: Option<&'a WriteReceipt>,
}

impl WriteTx<'_> {
    /// Serialises, across instances, the transactions that check a per-key limit before
    /// inserting (the 3-active-invitations rule, protocol quotas) until this one ends. A
    /// no-op on SQLite, where the single writer already serialises every write.
    async fn lock(&mut self, scope: &str, key: &str) -> Result<(), StoreError> {
        if let Tx::Postgres(tx) = &mut self.tx {
            sqlx::query("SELECT pg_advisory_xact_lock(hashtextextended($1, 0))")
                .bind(format!("{scope}:{key}"))
                .execute(&mut **tx)
                .await?;
        }
        Ok(())
    }

    /// Commits the write and its request id together.
    async fn commit(self) -> Result<(), StoreError> {
        match self.tx {
            Tx::Sqlite(tx) => tx.commit().await?,
            Tx::Postgres(tx) => tx.commit().await?,
        }
        if let Some(receipt) = self.receipt {
            receipt.mark_stored();
        }
        Ok(())
    }
}

impl Store {
    /// Begins a write, storing `receipt`'s request id first unless it is stored already
    /// (on PostgreSQL every request id is claimed in the database when admitted).
    async fn begin_write<'a>(
        &self,
        receipt: Option<&'a WriteReceipt>,
    ) -> Result<WriteTx<'a>, StoreError> {
        let mut tx = match &self.pools {
            Pools::Sqlite { writer, .. } => Tx::Sqlite(writer.begin().await?),
            Pools::Postgres { pool, .. } => Tx::Postgres(pool.begin().await?),
        };
        if let (Some(receipt), Tx::Sqlite(tx)) = (receipt, &mut tx)
            && !receipt.is_stored()
        {
            request_ids::insert_one(&mut *tx, receipt.row()).await?;
        }
        Ok(WriteTx { tx, receipt })
    }
}

/// True when a write failed on a UNIQUE or PRIMARY KEY constraint.
fn is_unique_violation(error: &sqlx::Error) -> bool {
    matches!(error, sqlx::Error::Database(db) if db.is_unique_violation())
}

/// Typed column access, the same for both backends' rows (so each row is decoded by one
/// function).
trait Columns {
    fn text(&self, column: &str) -> Result<String, sqlx::Error>;
    fn maybe_text(&self, column: &str) -> Result<Option<String>, sqlx::Error>;
    fn int(&self, column: &str) -> Result<i64, sqlx::Error>;
    fn maybe_int(&self, column: &str) -> Result<Option<i64>, sqlx::Error>;
}

macro_rules! columns_of {
    ($row:ty) => {
        impl Columns for $row {
            fn text(&self, column: &str) -> Result<String, sqlx::Error> {
                self.try_get(column)
            }
            fn maybe_text(&self, column: &str) -> Result<Option<String>, sqlx::Error> {
                self.try_get(column)
            }
            fn int(&self, column: &str) -> Result<i64, sqlx::Error> {
                self.try_get(column)
            }
            fn maybe_int(&self, column: &str) -> Result<Option<i64>, sqlx::Error> {
                self.try_get(column)
            }
        }
    };
}
columns_of!(SqliteRow);
columns_of!(PgRow);

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
        let Pools::Sqlite { writer, .. } = &store.pools else {
            unreachable!("a sqlite URL")
        };
        let (synchronous,): (i64,) = sqlx::query_as("PRAGMA synchronous")
            .fetch_one(writer)
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

    #[test]
    fn only_an_unreachable_database_is_unavailable() {
        assert!(StoreError::Query(sqlx::Error::PoolTimedOut).is_unavailable());
        assert!(
            StoreError::Query(sqlx::Error::Io(std::io::ErrorKind::BrokenPipe.into()))
                .is_unavailable()
        );
        assert!(!StoreError::Query(sqlx::Error::RowNotFound).is_unavailable());
    }

    #[test]
    fn storage_trouble_is_transient_and_a_broken_constraint_is_not() {
        // SQLITE_FULL, SQLITE_IOERR_WRITE (778), SQLITE_BUSY, SQLITE_READONLY_DBMOVED (1032).
        for code in ["13", "778", "5", "1032"] {
            assert!(is_transient_sqlite(code), "{code}");
        }
        // SQLITE_CONSTRAINT_UNIQUE (2067), SQLITE_CORRUPT (11), SQLITE_ERROR (1).
        for code in ["2067", "11", "1", "x"] {
            assert!(!is_transient_sqlite(code), "{code}");
        }
    }
}
