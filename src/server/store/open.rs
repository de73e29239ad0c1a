//! Opening a database: the URL picks the backend, the pools are sized for it, and its
//! schema is brought up to date with sqlx migrations (one set per backend, embedded in the
//! binary) before the server answers anything.

use std::borrow::Cow;
use std::str::FromStr;
use std::time::Duration;

use sqlx::migrate::{Migration, MigrationType, Migrator};
use sqlx::postgres::{PgConnectOptions, PgPoolOptions};
use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePoolOptions, SqliteSynchronous};
use sqlx::{ConnectOptions, Connection, SqlSafeStr};

use super::{Pools, Store, StoreError};

/// SQLite readers used for GETs, one per core within these bounds: SQLite in WAL mode lets
/// them run beside the single writer, and as reads are CPU-bound (pages cached), more
/// readers than cores only add thread hand-offs and lock contention.
const READER_CONNECTIONS: (u32, u32) = (2, 8);
/// How long a request waits for a connection (or a new one for the database to answer)
/// before it is refused with 503: patient under a burst ([`Store::ping`], the health
/// check, gives up sooner).
const ACQUIRE_TIMEOUT: Duration = Duration::from_secs(10);
/// The same for the relaxed connections, whose statements are single quick upserts: a
/// request waits at most this long for its rate count and its request-id claim when the
/// database is gone.
const RELAXED_ACQUIRE_TIMEOUT: Duration = Duration::from_secs(3);

/// The migrations of one backend: `migrations/<backend>/NNNN_*.sql`, applied in order.
fn migrator(sqlite: bool) -> Migrator {
    let schema = if sqlite {
        include_str!("migrations/sqlite/0001_schema.sql")
    } else {
        include_str!("migrations/postgres/0001_schema.sql")
    };
    Migrator::with_migrations(vec![Migration::new(
        1,
        Cow::Borrowed("schema"),
        MigrationType::Simple,
        schema.into_sql_str(),
        false,
    )])
}

impl Store {
    /// Opens the database at `url` — `sqlite://PATH` (created if missing), `sqlite::memory:`
    /// or `postgres://USER[:PASSWORD]@HOST[:PORT]/DB` — and brings its schema up to date.
    pub async fn open(url: &str) -> Result<Store, StoreError> {
        Store::open_with(url, crate::server::config::DEFAULT_DATABASE_CONNECTIONS).await
    }

    /// [`Store::open`], with `connections` for a PostgreSQL database's requests (and half as
    /// many, at least 2, for its request ids and rate counts); SQLite ignores it.
    pub async fn open_with(url: &str, connections: u32) -> Result<Store, StoreError> {
        let lowered = url.to_ascii_lowercase();
        if lowered.starts_with("postgres://") || lowered.starts_with("postgresql://") {
            open_postgres(url, connections.max(1)).await
        } else if lowered.starts_with("sqlite:") {
            open_sqlite(url, &lowered).await
        } else {
            Err(StoreError::UnsupportedUrl(redacted(url)))
        }
    }
}

async fn open_sqlite(url: &str, lowered: &str) -> Result<Store, StoreError> {
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
    migrator(true)
        .run(&writer)
        .await
        .map_err(|source| StoreError::Schema {
            url: url.to_string(),
            source,
        })?;
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
        pools: Pools::Sqlite { reader, writer },
        offered_version: Default::default(),
    })
}

fn reader_connections() -> u32 {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    u32::try_from(cores)
        .unwrap_or(u32::MAX)
        .clamp(READER_CONNECTIONS.0, READER_CONNECTIONS.1)
}

async fn open_postgres(url: &str, connections: u32) -> Result<Store, StoreError> {
    let shown = redacted(url);
    let open = |source| StoreError::Open {
        url: shown.clone(),
        source,
    };
    let options = PgConnectOptions::from_str(url)
        .map_err(open)?
        .application_name("aigenora-server");
    // One direct connection first: its error says why (refused, authentication, no such
    // database), where a pool would only report that it timed out.
    options
        .connect()
        .await
        .map_err(open)?
        .close()
        .await
        .map_err(open)?;
    let pool = PgPoolOptions::new()
        .max_connections(connections)
        .acquire_timeout(ACQUIRE_TIMEOUT)
        .connect_with(options.clone())
        .await
        .map_err(open)?;
    // Several instances may start at once: sqlx takes an advisory lock around migrations.
    migrator(false)
        .run(&pool)
        .await
        .map_err(|source| StoreError::Schema {
            url: shown.clone(),
            source,
        })?;
    let relaxed = PgPoolOptions::new()
        .max_connections((connections / 2).max(2))
        .acquire_timeout(RELAXED_ACQUIRE_TIMEOUT)
        .connect_with(options.options([("synchronous_commit", "off")]))
        .await
        .map_err(open)?;
    Ok(Store {
        pools: Pools::Postgres { pool, relaxed },
        offered_version: Default::default(),
    })
}

/// `url` without its password (for logs and error messages).
pub fn redacted(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_string();
    };
    let Some((userinfo, host)) = rest.rsplit_once('@') else {
        return url.to_string();
    };
    match userinfo.split_once(':') {
        Some((user, _password)) => format!("{scheme}://{user}:***@{host}"),
        None => url.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passwords_never_reach_a_log() {
        assert_eq!(
            redacted("postgres://app:s3cret@db.example:5432/community"),
            "postgres://app:***@db.example:5432/community"
        );
        assert_eq!(redacted("postgres://app@db/c"), "postgres://app@db/c");
        assert_eq!(redacted("sqlite:///var/x.db"), "sqlite:///var/x.db");
    }

    #[tokio::test]
    async fn a_database_from_a_newer_server_is_refused_with_one_line() {
        let dir = tempfile::tempdir().unwrap();
        let url = format!("sqlite://{}", dir.path().join("db.sqlite3").display());
        let store = Store::open(&url).await.unwrap();
        let Pools::Sqlite { writer, .. } = &store.pools else {
            unreachable!("a sqlite URL")
        };
        sqlx::query(
            "INSERT INTO _sqlx_migrations (version, description, success, checksum, execution_time) \
             VALUES (2, 'future', TRUE, X'00', 0)",
        )
        .execute(writer)
        .await
        .unwrap();
        store.close().await.unwrap();
        let error = Store::open(&url).await.unwrap_err().to_string();
        assert!(
            error.contains("does not have this server's schema"),
            "{error}"
        );
        assert!(error.contains("migration 2"), "{error}");
        assert!(!error.contains('\n'));
    }
}
