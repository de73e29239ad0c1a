//! Used request ids (as digests of key and id) until their signature window ends, so the
//! replay guard survives a restart; and the sweep of every row that has expired.

use sqlx::SqliteConnection;

use super::{Pools, Store, StoreError, with_pool};
use crate::server::replay::PairDigest;

/// Two bound values per row; SQLite allows 32 766 per statement, PostgreSQL 65 535.
const ROWS_PER_STATEMENT: usize = 1024;
/// Invitations that expired or were cancelled without a match are deleted this long after
/// their expiry (their creator can read them until then: 410, not 404).
const INVITATION_RETENTION_MS: i64 = 7 * 24 * 3_600_000;

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

    /// Deletes request ids and registration challenges that expired before `now`,
    /// invitations never matched (nor holding a room) and expired for
    /// [`INVITATION_RETENTION_MS`] (with their tags), and on PostgreSQL rate-limit rows whose allowance is whole again.
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
            // A room's invitation stays with its room.
            const OLD_INVITATIONS: &str = "SELECT post_id FROM invitations \
                WHERE status IN ('active', 'cancelled') AND expires_at <= $1 \
                AND post_id NOT IN (SELECT post_id FROM groups)";
            for table in ["invitation_tags", "invitations"] {
                let sql = format!("DELETE FROM {table} WHERE post_id IN ({OLD_INVITATIONS})");
                sqlx::query(sqlx::AssertSqlSafe(sql))
                    .bind(now - INVITATION_RETENTION_MS)
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

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn only_long_expired_unmatched_invitations_are_deleted() {
        let store = Store::open("sqlite::memory:").await.unwrap();
        let now = 10 * INVITATION_RETENTION_MS;
        let old = now - INVITATION_RETENTION_MS - 1;
        let invitation = |post_id: &str, status: &str, expires_at: i64| {
            format!(
                "INSERT INTO invitations (post_id, public_key, protocol_id, invitation_type, message, tags, \
                 iroh_ticket, transport, transport_info, transport_binding_signature, host_control_mode, \
                 options, status, created_at, expires_at) VALUES ('{post_id}', 'h', 'pr', 'supply', '', \
                 '[\"t\"]', 't', 'iroh', '{{}}', 's', 'hybrid', '{{}}', '{status}', 0, {expires_at}); \
                 INSERT INTO invitation_tags (post_id, tag) VALUES ('{post_id}', 't');"
            )
        };
        let setup = [
            "INSERT INTO protocols VALUES ('pr', 'n', '', 'protocol', '{}', NULL, 0);".to_string(),
            invitation("old-active", "active", old),
            invitation("old-cancelled", "cancelled", old),
            invitation("old-matched", "matched", old),
            invitation("recent", "cancelled", now - 1),
            invitation("old-room", "active", old),
            "INSERT INTO groups VALUES ('g1', 'old-room', 'pr', 'h', 2, 4, 0, 'exact', 'full', 'active', 'h', 0, 0, \
             't', 's', 1, 0, '00', 0, 0);"
                .to_string(),
        ]
        .join("\n");
        sqlx::raw_sql(sqlx::AssertSqlSafe(setup))
            .execute(store.sqlite_writer())
            .await
            .unwrap();
        store.delete_expired(now).await.unwrap();
        let left: Vec<(String,)> =
            sqlx::query_as("SELECT post_id FROM invitations ORDER BY post_id")
                .fetch_all(store.sqlite_writer())
                .await
                .unwrap();
        let left: Vec<&str> = left.iter().map(|(id,)| id.as_str()).collect();
        assert_eq!(left, ["old-matched", "old-room", "recent"]);
        let (tags,): (i64,) = sqlx::query_as("SELECT COUNT(*) FROM invitation_tags")
            .fetch_one(store.sqlite_writer())
            .await
            .unwrap();
        assert_eq!(tags, 3);
    }
}
