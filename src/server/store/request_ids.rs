//! Used request ids (as digests of key and id) until their signature window ends, so the
//! replay guard survives a restart; and the sweep of every row that has expired.

use sqlx::SqliteConnection;

use super::{Pools, Store, StoreError, with_pool};
use crate::server::replay::PairDigest;

/// Two bound values per row; SQLite allows 32 766 per statement, PostgreSQL 65 535.
const ROWS_PER_STATEMENT: usize = 1024;

impl Store {
    /// Stores used pairs (a pair already stored is kept), in one transaction.
    pub async fn insert_request_ids(&self, pairs: &[(PairDigest, i64)]) -> Result<(), StoreError> {
        with_pool!(self, writer, |pool| {
            let mut tx = pool.begin().await?;
            for chunk in pairs.chunks(ROWS_PER_STATEMENT) {
                let values: Vec<String> = (0..chunk.len())
                    .map(|i| format!("(${}, ${})", 2 * i + 1, 2 * i + 2))
                    .collect();
                let sql = format!(
                    "INSERT INTO request_ids (digest, expires_at) VALUES {} ON CONFLICT (digest) DO NOTHING",
                    values.join(", ")
                );
                let mut statement = sqlx::query(sqlx::AssertSqlSafe(sql));
                for (pair, expires_at) in chunk {
                    statement = statement.bind(hex_of(*pair)).bind(*expires_at);
                }
                statement.execute(&mut *tx).await?;
            }
            tx.commit().await?;
        });
        Ok(())
    }

    /// The stored pairs whose window has not ended at `now`.
    pub async fn live_request_ids(&self, now: i64) -> Result<Vec<(PairDigest, i64)>, StoreError> {
        let rows: Vec<(String, i64)> = with_pool!(self, writer, |pool| {
            sqlx::query_as("SELECT digest, expires_at FROM request_ids WHERE expires_at > $1")
                .bind(now)
                .fetch_all(pool)
                .await?
        });
        Ok(rows
            .into_iter()
            .filter_map(|(digest, expires_at)| {
                let value = u128::from_str_radix(&digest, 16).ok()?;
                Some((PairDigest(value), expires_at))
            })
            .collect())
    }

    /// Deletes request ids and registration challenges that expired before `now` (and,
    /// on PostgreSQL, rate-limit rows whose allowance is whole again).
    pub async fn delete_expired(&self, now: i64) -> Result<(), StoreError> {
        let mut deletions = vec![
            ("request_ids", "expires_at", now),
            ("registration_challenges", "expires_at", now),
        ];
        if matches!(self.pools, Pools::Postgres { .. }) {
            deletions.push(("rate_limits", "tat", now.saturating_mul(1000)));
        }
        with_pool!(self, writer, |pool| {
            let mut tx = pool.begin().await?;
            for (table, column, before) in deletions {
                let sql = format!("DELETE FROM {table} WHERE {column} <= $1");
                sqlx::query(sqlx::AssertSqlSafe(sql))
                    .bind(before)
                    .execute(&mut *tx)
                    .await?;
            }
            tx.commit().await?;
        });
        Ok(())
    }
}

/// Stores one pair inside a SQLite write's transaction (kept if already stored).
pub(super) async fn insert_one(
    conn: &mut SqliteConnection,
    (pair, expires_at): (PairDigest, i64),
) -> Result<(), StoreError> {
    sqlx::query(
        "INSERT INTO request_ids (digest, expires_at) VALUES ($1, $2) ON CONFLICT (digest) DO NOTHING",
    )
    .bind(hex_of(pair))
    .bind(expires_at)
    .execute(conn)
    .await?;
    Ok(())
}

pub(super) fn hex_of(pair: PairDigest) -> String {
    format!("{:032x}", pair.0)
}
