//! Agents and their registration challenges (bounded per key and per address).

use super::{Columns, Store, StoreError, with_pool, with_tx};
use crate::api::agent::Agent;
use crate::server::clock::iso8601;
use crate::server::replay::WriteReceipt;

/// A registration nonce to remember.
#[derive(Debug, Clone, Copy)]
pub struct NewChallenge<'a> {
    pub nonce: &'a str,
    pub public_key: &'a str,
    /// The requesting address as [`crate::server::rate_limit::AddressKey`] text.
    pub address: &'a str,
    pub expires_at: i64,
}

/// A registration to store (already checked by the caller).
#[derive(Debug, Clone, Copy)]
pub struct NewAgent<'a> {
    /// The challenge nonce it consumes.
    pub nonce: &'a str,
    pub public_key: &'a str,
    pub nickname: &'a str,
    pub bio: &'a str,
}

/// What a registration attempt did.
#[derive(Debug)]
pub enum RegisterOutcome {
    /// The nonce was never issued to this key, was used, or expired.
    UnknownNonce,
    AlreadyRegistered,
    Registered(Agent),
}

impl Store {
    /// Remembers a registration nonce issued to `public_key` from `address`: it replaces
    /// the key's previous nonce and, when the address already has `per_address`
    /// outstanding, the address's oldest ones; expired nonces are forgotten.
    pub async fn insert_challenge(
        &self,
        challenge: &NewChallenge<'_>,
        per_address: u32,
        now: i64,
    ) -> Result<(), StoreError> {
        with_pool!(self, writer, |pool| {
            let mut tx = pool.begin().await?;
            sqlx::query("DELETE FROM registration_challenges WHERE expires_at <= $1")
                .bind(now)
                .execute(&mut *tx)
                .await?;
            sqlx::query(
                "DELETE FROM registration_challenges WHERE address = $1 AND public_key <> $3 AND expires_at <= \
                 (SELECT expires_at FROM registration_challenges WHERE address = $1 AND public_key <> $3 \
                  ORDER BY expires_at DESC LIMIT 1 OFFSET $2)",
            )
            .bind(challenge.address)
            .bind(i64::from(per_address.max(1) - 1))
            .bind(challenge.public_key)
            .execute(&mut *tx)
            .await?;
            // An upsert, so that two instances issuing nonces to one key at once both succeed
            // (the later one replaces the earlier).
            sqlx::query(
                "INSERT INTO registration_challenges (public_key, nonce, address, expires_at) \
                 VALUES ($1, $2, $3, $4) ON CONFLICT (public_key) DO UPDATE SET nonce = excluded.nonce, \
                 address = excluded.address, expires_at = excluded.expires_at",
            )
            .bind(challenge.public_key)
            .bind(challenge.nonce)
            .bind(challenge.address)
            .bind(challenge.expires_at)
            .execute(&mut *tx)
            .await?;
            tx.commit().await?;
        });
        Ok(())
    }

    /// How many registration nonces are outstanding.
    #[cfg(test)]
    pub async fn outstanding_challenges(&self) -> Result<i64, StoreError> {
        let (n,): (i64,) = with_pool!(self, writer, |pool| {
            sqlx::query_as("SELECT COUNT(*) FROM registration_challenges")
                .fetch_one(pool)
                .await?
        });
        Ok(n)
    }

    /// Consumes a nonce issued to `public_key` and, if it was still valid, registers the agent.
    pub async fn register_agent(
        &self,
        registration: &NewAgent<'_>,
        receipt: Option<&WriteReceipt>,
        now: i64,
    ) -> Result<RegisterOutcome, StoreError> {
        let NewAgent {
            nonce,
            public_key,
            nickname,
            bio,
        } = *registration;
        let mut tx = self.begin_write(receipt).await?;
        let outcome = with_tx!(tx, |conn| {
            let taken = sqlx::query(
                "DELETE FROM registration_challenges WHERE nonce = $1 AND public_key = $2 AND expires_at > $3",
            )
            .bind(nonce)
            .bind(public_key)
            .bind(now)
            .execute(&mut *conn)
            .await?;
            if taken.rows_affected() == 0 {
                return Ok(RegisterOutcome::UnknownNonce);
            }
            let inserted = sqlx::query(
                // The NOT EXISTS keeps PostgreSQL's identity sequence from advancing for a
                // key already registered (agent ids stay dense, as on SQLite); the ON
                // CONFLICT covers a concurrent registration of the same key.
                "INSERT INTO agents (public_key, nickname, bio, created_at) SELECT $1, $2, $3, $4 \
                 WHERE NOT EXISTS (SELECT 1 FROM agents WHERE public_key = $1) \
                 ON CONFLICT (public_key) DO NOTHING RETURNING id, public_key, nickname, bio, created_at",
            )
            .bind(public_key)
            .bind(nickname)
            .bind(bio)
            .bind(now)
            .fetch_optional(&mut *conn)
            .await?;
            match inserted {
                Some(row) => RegisterOutcome::Registered(agent_of(&row)?),
                None => RegisterOutcome::AlreadyRegistered,
            }
        });
        tx.commit().await?;
        if matches!(outcome, RegisterOutcome::Registered(_)) {
            self.offered_changed().await;
        }
        Ok(outcome)
    }

    /// Whether `public_key` is a registered agent (one indexed lookup).
    pub async fn is_registered(&self, public_key: &str) -> Result<bool, StoreError> {
        let row: Option<(i32,)> = with_pool!(self, reader, |pool| {
            sqlx::query_as("SELECT 1 FROM agents WHERE public_key = $1")
                .bind(public_key)
                .fetch_optional(pool)
                .await?
        });
        Ok(row.is_some())
    }

    /// The agent registered with `public_key`, if any.
    pub async fn agent(&self, public_key: &str) -> Result<Option<Agent>, StoreError> {
        with_pool!(self, reader, |pool| {
            let row = sqlx::query(
                "SELECT id, public_key, nickname, bio, created_at FROM agents WHERE public_key = $1",
            )
            .bind(public_key)
            .fetch_optional(pool)
            .await?;
            Ok(row.as_ref().map(agent_of).transpose()?)
        })
    }
}

fn agent_of(row: &impl Columns) -> Result<Agent, sqlx::Error> {
    let id = row.int("id")?;
    Ok(Agent {
        id,
        agent_id: id,
        public_key: row.text("public_key")?,
        nickname: row.text("nickname")?,
        bio: row.text("bio")?,
        created_at: Some(iso8601(row.int("created_at")?)),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn challenges_are_bounded_per_key_and_per_address() {
        let store = Store::open("sqlite::memory:").await.unwrap();
        let keys: Vec<String> = (0..20).map(|i| format!("{i:064x}")).collect();
        for (i, key) in keys.iter().enumerate() {
            for round in 0..3 {
                let nonce = format!("n{i}-{round}");
                let challenge = NewChallenge {
                    nonce: &nonce,
                    public_key: key,
                    address: "192.0.2.1",
                    expires_at: 1_000 + (i * 3 + round) as i64,
                };
                store.insert_challenge(&challenge, 8, 0).await.unwrap();
            }
        }
        assert_eq!(store.outstanding_challenges().await.unwrap(), 8);
        let other = NewChallenge {
            nonce: "elsewhere",
            public_key: &keys[0],
            address: "192.0.2.2",
            expires_at: 2_000,
        };
        store.insert_challenge(&other, 8, 0).await.unwrap();
        assert_eq!(store.outstanding_challenges().await.unwrap(), 9);
        // The newest nonce of each address stays usable; replaced ones do not.
        let register = |nonce: &'static str, key: String| {
            let store = store.clone();
            async move {
                let agent = NewAgent {
                    nonce,
                    public_key: &key,
                    nickname: "n",
                    bio: "",
                };
                store.register_agent(&agent, None, 10).await.unwrap()
            }
        };
        assert!(matches!(
            register("n0-2", keys[0].clone()).await,
            RegisterOutcome::UnknownNonce
        ));
        assert!(matches!(
            register("elsewhere", keys[0].clone()).await,
            RegisterOutcome::Registered(_)
        ));
        store.delete_expired(5_000).await.unwrap();
        assert_eq!(store.outstanding_challenges().await.unwrap(), 0);
    }
}
