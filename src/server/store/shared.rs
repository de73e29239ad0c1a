//! What several instances on one PostgreSQL database share through it, so that they behave
//! as one server: the offered-list version (a sequence, advanced after each such write
//! commits), request ids claimed at admission (`INSERT … ON CONFLICT DO NOTHING`: the
//! first instance to claim a pair wins), rate limits (GCRA, as the in-memory limiters: one
//! conditional upsert per request on an unlogged table), and one housekeeper at a time (`pg_try_advisory_lock`).
//!
//! Request ids and counters go through connections with `synchronous_commit=off`: a
//! database crash may lose the last fraction of a second of them, never a pair whose write
//! was acknowledged (that write's own synchronous commit flushes the WAL up to and
//! including the earlier claim).

use sqlx::PgPool;

use super::{Pools, Store, StoreError};
use crate::server::replay::PairDigest;

/// The advisory lock key of housekeeping ("aigenora" in ASCII).
pub const HOUSEKEEPING_LOCK: i64 = 0x6169_6765_6e6f_7261;

/// A rate limit in GCRA terms (microseconds): one request per `interval`, `burst` at once.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RateWindow {
    pub interval_us: i64,
    pub burst: i64,
}

/// The sequence's value, counting its first `nextval` too (which leaves `last_value` at 1).
const VERSION: &str =
    "(SELECT last_value + CASE WHEN is_called THEN 1 ELSE 0 END FROM offered_version)";

pub(super) async fn offered_version(pool: &PgPool) -> Result<u64, StoreError> {
    let (version,): (i64,) = sqlx::query_as(sqlx::AssertSqlSafe(format!("SELECT {VERSION}")))
        .fetch_one(pool)
        .await?;
    Ok(version as u64)
}

/// Advances the version after a committed write. If that fails (the database went away
/// just after the commit), other instances may serve their cached list until the next
/// write or the first listed expiry: logged, as the write itself stands.
pub(super) async fn bump_offered_version(pool: &PgPool) {
    if let Err(error) = sqlx::query("SELECT nextval('offered_version')")
        .execute(pool)
        .await
    {
        tracing::error!(%error, "the offered-list version was not advanced after a write");
    }
}

impl Store {
    /// PostgreSQL only: claims a request id for every instance; `None` if any instance
    /// (this one included) claimed it before, else the offered-list version read in the
    /// same round trip (a read's list answer may then be served from cache without
    /// another one: see [`crate::server::page_cache::AdmittedVersion`]).
    pub async fn claim_request_id(
        &self,
        pair: PairDigest,
        expires_at: i64,
    ) -> Result<Option<u64>, StoreError> {
        let Pools::Postgres { relaxed, .. } = &self.pools else {
            unreachable!("request ids are claimed in the database on PostgreSQL only")
        };
        let (claimed, version): (bool, i64) = sqlx::query_as(sqlx::AssertSqlSafe(format!(
            "WITH claimed AS (INSERT INTO request_ids (digest, expires_at) VALUES ($1, $2) \
             ON CONFLICT (digest) DO NOTHING RETURNING 1) \
             SELECT EXISTS (SELECT 1 FROM claimed), {VERSION}"
        )))
        .bind(super::request_ids::hex_of(pair))
        .bind(expires_at)
        .fetch_one(relaxed)
        .await?;
        Ok(claimed.then_some(version as u64))
    }

    /// PostgreSQL only: counts one request of `subject` unless its allowance is used up;
    /// `Ok(None)` if allowed, else the microseconds to wait at least. Time is the
    /// database's clock, so instances with skewed clocks still count alike.
    pub async fn count_request(
        &self,
        subject: &str,
        limit: RateWindow,
    ) -> Result<Option<i64>, StoreError> {
        let Pools::Postgres { relaxed, .. } = &self.pools else {
            unreachable!("rate limits are counted in the database on PostgreSQL only")
        };
        // excluded.tat - $2 is the database's now (µs): the inserted row is now + interval.
        let allowed: Option<(i64,)> = sqlx::query_as(
            "INSERT INTO rate_limits (subject, tat) \
             VALUES ($1, CAST(EXTRACT(EPOCH FROM clock_timestamp()) * 1000000 AS BIGINT) + $2) \
             ON CONFLICT (subject) DO UPDATE SET tat = GREATEST(rate_limits.tat, excluded.tat - $2) + $2 \
             WHERE GREATEST(rate_limits.tat, excluded.tat - $2) + $2 - (excluded.tat - $2) <= $3 \
             RETURNING tat",
        )
        .bind(subject)
        .bind(limit.interval_us)
        .bind(limit.interval_us.saturating_mul(limit.burst))
        .fetch_optional(relaxed)
        .await?;
        Ok(allowed.is_none().then_some(limit.interval_us))
    }

    /// Deletes expired rows (see [`Store::delete_expired`]) unless another instance is
    /// doing it right now (PostgreSQL; SQLite has one instance): `Ok(false)` when skipped.
    pub async fn housekeep(&self, now: i64) -> Result<bool, StoreError> {
        let Pools::Postgres { pool, .. } = &self.pools else {
            self.delete_expired(now).await?;
            return Ok(true);
        };
        // A session lock on one connection: released by the unlock below, or by the
        // database if this instance dies meanwhile.
        let mut conn = pool.acquire().await?;
        let (locked,): (bool,) = sqlx::query_as("SELECT pg_try_advisory_lock($1)")
            .bind(HOUSEKEEPING_LOCK)
            .fetch_one(&mut *conn)
            .await?;
        if !locked {
            return Ok(false);
        }
        let deleted = self.delete_expired(now).await;
        let unlocked = sqlx::query("SELECT pg_advisory_unlock($1)")
            .bind(HOUSEKEEPING_LOCK)
            .execute(&mut *conn)
            .await;
        deleted?;
        unlocked?;
        Ok(true)
    }
}
