//! Agents and their registration challenges.

use sqlx::Row;
use sqlx::sqlite::SqliteRow;

use super::{Store, StoreError, is_unique_violation};
use crate::api::agent::Agent;
use crate::server::clock::iso8601;

/// What a registration attempt did.
#[derive(Debug)]
pub enum RegisterOutcome {
    /// The nonce was never issued to this key, was used, or expired.
    UnknownNonce,
    AlreadyRegistered,
    Registered(Agent),
}

impl Store {
    /// Remembers a registration nonce issued to `public_key` (and forgets expired ones).
    pub async fn insert_challenge(
        &self,
        nonce: &str,
        public_key: &str,
        now: i64,
        expires_at: i64,
    ) -> Result<(), StoreError> {
        let mut tx = self.writer.begin().await?;
        sqlx::query("DELETE FROM challenges WHERE expires_at <= $1")
            .bind(now)
            .execute(&mut *tx)
            .await?;
        sqlx::query("INSERT INTO challenges (nonce, public_key, expires_at) VALUES ($1, $2, $3)")
            .bind(nonce)
            .bind(public_key)
            .bind(expires_at)
            .execute(&mut *tx)
            .await?;
        tx.commit().await?;
        Ok(())
    }

    /// Consumes a nonce issued to `public_key` and, if it was still valid, registers the agent.
    pub async fn register_agent(
        &self,
        nonce: &str,
        public_key: &str,
        nickname: &str,
        bio: &str,
        now: i64,
    ) -> Result<RegisterOutcome, StoreError> {
        let mut tx = self.writer.begin().await?;
        let taken = sqlx::query(
            "DELETE FROM challenges WHERE nonce = $1 AND public_key = $2 AND expires_at > $3",
        )
        .bind(nonce)
        .bind(public_key)
        .bind(now)
        .execute(&mut *tx)
        .await?;
        if taken.rows_affected() == 0 {
            return Ok(RegisterOutcome::UnknownNonce);
        }
        let inserted = sqlx::query(
            "INSERT INTO agents (public_key, nickname, bio, created_at) VALUES ($1, $2, $3, $4) \
             RETURNING id, public_key, nickname, bio, created_at",
        )
        .bind(public_key)
        .bind(nickname)
        .bind(bio)
        .bind(now)
        .fetch_one(&mut *tx)
        .await;
        let outcome = match inserted {
            Ok(row) => RegisterOutcome::Registered(agent_of(&row)?),
            Err(error) if is_unique_violation(&error) => RegisterOutcome::AlreadyRegistered,
            Err(error) => return Err(error.into()),
        };
        tx.commit().await?;
        if matches!(outcome, RegisterOutcome::Registered(_)) {
            self.offered_changed();
        }
        Ok(outcome)
    }

    /// The agent registered with `public_key`, if any.
    pub async fn agent(&self, public_key: &str) -> Result<Option<Agent>, StoreError> {
        let row = sqlx::query(
            "SELECT id, public_key, nickname, bio, created_at FROM agents WHERE public_key = $1",
        )
        .bind(public_key)
        .fetch_optional(&self.reader)
        .await?;
        Ok(row.as_ref().map(agent_of).transpose()?)
    }
}

fn agent_of(row: &SqliteRow) -> Result<Agent, sqlx::Error> {
    let id: i64 = row.try_get("id")?;
    Ok(Agent {
        id,
        agent_id: id,
        public_key: row.try_get("public_key")?,
        nickname: row.try_get("nickname")?,
        bio: row.try_get("bio")?,
        created_at: Some(iso8601(row.try_get("created_at")?)),
    })
}
