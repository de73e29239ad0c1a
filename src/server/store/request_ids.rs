//! Used request ids (as digests of key and id) until their signature window ends, so the
//! replay guard survives a restart; and the sweep of every row that has expired.

use sqlx::{Row, SqliteConnection};

use super::{Store, StoreError};
use crate::server::replay::PairDigest;

/// Two bound values per row; SQLite allows 32 766 per statement.
const ROWS_PER_STATEMENT: usize = 1024;

impl Store {
    /// Stores used pairs (a pair already stored is kept), in one transaction.
    pub async fn insert_request_ids(&self, pairs: &[(PairDigest, i64)]) -> Result<(), StoreError> {
        let mut tx = self.writer.begin().await?;
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
        Ok(())
    }

    /// The stored pairs whose window has not ended at `now`.
    pub async fn live_request_ids(&self, now: i64) -> Result<Vec<(PairDigest, i64)>, StoreError> {
        let rows = sqlx::query("SELECT digest, expires_at FROM request_ids WHERE expires_at > $1")
            .bind(now)
            .fetch_all(&self.writer)
            .await?;
        let mut pairs = Vec::with_capacity(rows.len());
        for row in rows {
            let digest: String = row.try_get("digest")?;
            if let Ok(value) = u128::from_str_radix(&digest, 16) {
                pairs.push((PairDigest(value), row.try_get("expires_at")?));
            }
        }
        Ok(pairs)
    }

    /// Deletes request ids and registration challenges that expired before `now`.
    pub async fn delete_expired(&self, now: i64) -> Result<(), StoreError> {
        let mut tx = self.writer.begin().await?;
        for table in ["request_ids", "registration_challenges"] {
            let sql = format!("DELETE FROM {table} WHERE expires_at <= $1");
            sqlx::query(sqlx::AssertSqlSafe(sql))
                .bind(now)
                .execute(&mut *tx)
                .await?;
        }
        tx.commit().await?;
        Ok(())
    }
}

/// Stores one pair inside a write's transaction (kept if already stored).
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

fn hex_of(pair: PairDigest) -> String {
    format!("{:032x}", pair.0)
}
