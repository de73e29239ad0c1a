//! Sessions: created from an offered invitation (which becomes matched), ended once by a
//! participant together with that party's result (the invitation becomes closed), and
//! each party's result report.

use super::{Columns, Store, StoreError, is_unique_violation, with_pool, with_tx};
use crate::api::session::{NewSession, Session, SessionResult, SessionStatus, Winner};
use crate::server::clock::iso8601;
use crate::server::replay::WriteReceipt;
use crate::spec::Role;

/// Sets one party's report unless it already reported another winner: `true` if set (a
/// macro, to run on either backend's connection).
macro_rules! record_report {
    ($conn:expr, $session_id:expr, $party:expr, $winner:expr, $now:expr) => {{
        let column = match $party {
            Role::Host => "host_report",
            Role::Guest => "guest_report",
        };
        let sql = format!(
            "UPDATE sessions SET {column} = $1, updated_at = $2 \
             WHERE session_id = $3 AND ({column} IS NULL OR {column} = $1)"
        );
        sqlx::query(sqlx::AssertSqlSafe(sql))
            .bind($winner.as_str())
            .bind($now)
            .bind($session_id)
            .execute($conn)
            .await?
            .rows_affected()
            == 1
    }};
}

/// What ending a session did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EndSession {
    Ended,
    /// It had already ended (nothing written).
    AlreadyEnded,
    /// The ending party had reported another winner before (nothing written).
    ReportConflicts,
}

/// What a session creation did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CreateSession {
    Created,
    /// The invitation stopped being offered meanwhile.
    InvitationTaken,
    /// This exact session (same proof) already exists.
    Duplicate,
}

impl Store {
    /// Marks the offered invitation matched and stores the session, atomically.
    pub async fn create_session(
        &self,
        id: &str,
        new: &NewSession,
        receipt: &WriteReceipt,
        now: i64,
    ) -> Result<CreateSession, StoreError> {
        let mut tx = self.begin_write(Some(receipt)).await?;
        let created = with_tx!(tx, |conn| {
            // A concurrent match of the same invitation (on any instance) waits for this
            // row, then finds it no longer active.
            let matched = sqlx::query(
                "UPDATE invitations SET status = 'matched' WHERE post_id = $1 AND status = 'active' AND expires_at > $2",
            )
            .bind(&new.post_id)
            .bind(now)
            .execute(&mut *conn)
            .await?;
            if matched.rows_affected() == 0 {
                return Ok(CreateSession::InvitationTaken);
            }
            sqlx::query(
                "INSERT INTO sessions (session_id, post_id, protocol_id, host_public_key, guest_public_key, session_nonce, \
                 host_signature, guest_signature, status, created_at, updated_at) \
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, 'matched', $9, $9)",
            )
            .bind(id)
            .bind(&new.post_id)
            .bind(&new.protocol_id)
            .bind(&new.host_public_key)
            .bind(&new.guest_public_key)
            .bind(&new.session_nonce)
            .bind(&new.host_signature)
            .bind(&new.guest_signature)
            .bind(now)
            .execute(&mut *conn)
            .await
            .map(drop)
        });
        match created {
            Ok(_) => {
                tx.commit().await?;
                self.offered_changed().await;
                Ok(CreateSession::Created)
            }
            Err(error) if is_unique_violation(&error) => Ok(CreateSession::Duplicate),
            Err(error) => Err(error.into()),
        }
    }

    /// One session.
    pub async fn session(&self, session_id: &str) -> Result<Option<Session>, StoreError> {
        with_pool!(self, reader, |pool| {
            let row = sqlx::query(
                "SELECT session_id, status, protocol_id, post_id, host_public_key, guest_public_key, session_nonce, \
                 guest_signature, host_report, guest_report, created_at, updated_at FROM sessions WHERE session_id = $1",
            )
            .bind(session_id)
            .fetch_optional(pool)
            .await?;
            Ok(row.as_ref().map(session_of).transpose()?)
        })
    }

    /// Ends a matched session, closes its invitation and records `report` (the ending
    /// party's winner), all in one transaction: nothing is written unless all of it is.
    pub async fn end_session(
        &self,
        session_id: &str,
        status: SessionStatus,
        report: Option<(Role, Winner)>,
        receipt: Option<&WriteReceipt>,
        now: i64,
    ) -> Result<EndSession, StoreError> {
        let mut tx = self.begin_write(receipt).await?;
        let outcome = with_tx!(tx, |conn| {
            // Ends once: a concurrent end (on any instance) waits for this row, then finds
            // it no longer matched.
            let ended = sqlx::query(
                "UPDATE sessions SET status = $1, updated_at = $2 WHERE session_id = $3 AND status = 'matched'",
            )
            .bind(status.as_str())
            .bind(now)
            .bind(session_id)
            .execute(&mut *conn)
            .await?;
            if ended.rows_affected() == 0 {
                return Ok(EndSession::AlreadyEnded);
            }
            let reported = match report {
                Some((party, winner)) => {
                    record_report!(&mut *conn, session_id, party, winner, now)
                }
                None => true,
            };
            if !reported {
                return Ok(EndSession::ReportConflicts);
            }
            sqlx::query(
                "UPDATE invitations SET status = 'closed' \
                 WHERE post_id = (SELECT post_id FROM sessions WHERE session_id = $1) AND status = 'matched'",
            )
            .bind(session_id)
            .execute(&mut *conn)
            .await?;
            EndSession::Ended
        });
        tx.commit().await?;
        Ok(outcome)
    }

    /// Records one party's result; `false` if that party already reported another winner.
    pub async fn report_result(
        &self,
        session_id: &str,
        party: Role,
        winner: Winner,
        receipt: Option<&WriteReceipt>,
        now: i64,
    ) -> Result<bool, StoreError> {
        let mut tx = self.begin_write(receipt).await?;
        let recorded = with_tx!(tx, |conn| record_report!(
            conn, session_id, party, winner, now
        ));
        if recorded {
            tx.commit().await?;
        }
        Ok(recorded)
    }
}

fn session_of(row: &impl Columns) -> Result<Session, sqlx::Error> {
    let report = |column: &str| -> Result<Option<Winner>, sqlx::Error> {
        let text = row.maybe_text(column)?;
        Ok(text.as_deref().and_then(Winner::parse))
    };
    let (host_report, guest_report) = (report("host_report")?, report("guest_report")?);
    let (outcome, winner) = match (host_report, guest_report) {
        (Some(host), Some(guest)) if host == guest => ("agreed", Some(host)),
        (Some(_), Some(_)) => ("disputed", None),
        _ => ("pending", None),
    };
    let status = row.text("status")?;
    Ok(Session {
        session_id: row.text("session_id")?,
        status: SessionStatus::parse(&status).unwrap_or(SessionStatus::Matched),
        protocol_id: row.text("protocol_id")?,
        post_id: row.text("post_id")?,
        host_public_key: row.text("host_public_key")?,
        guest_public_key: row.text("guest_public_key")?,
        session_nonce: Some(row.text("session_nonce")?),
        guest_signature: Some(row.text("guest_signature")?),
        created_at: Some(iso8601(row.int("created_at")?)),
        updated_at: Some(iso8601(row.int("updated_at")?)),
        result: Some(SessionResult {
            host_report,
            guest_report,
            outcome: outcome.to_string(),
            winner,
        }),
        rating_count: 0,
    })
}

#[cfg(test)]
mod tests {
    use sqlx::Row;

    use super::*;

    /// A store holding one matched session `s1` (its invitation `p1` matched).
    async fn one_matched_session() -> Store {
        let store = Store::open("sqlite::memory:").await.unwrap();
        sqlx::raw_sql(
            "INSERT INTO protocols VALUES ('pr', 'n', '', 'protocol', '{}', NULL, 0);
             INSERT INTO invitations (post_id, public_key, protocol_id, invitation_type, message, tags, \
             iroh_ticket, transport, transport_info, transport_binding_signature, host_control_mode, options, \
             status, created_at, expires_at) VALUES ('p1', 'h', 'pr', 'supply', '', '[]', 't', 'iroh', '{}', \
             's', 'hybrid', '{}', 'matched', 0, 1);
             INSERT INTO sessions (session_id, post_id, protocol_id, host_public_key, guest_public_key, \
             session_nonce, host_signature, guest_signature, status, created_at, updated_at) \
             VALUES ('s1', 'p1', 'pr', 'h', 'g', 'n', 'hs', 'gs', 'matched', 0, 0);",
        )
        .execute(store.sqlite_writer())
        .await
        .unwrap();
        store
    }

    #[tokio::test]
    async fn an_end_and_its_winner_are_written_together_or_not_at_all() {
        let store = one_matched_session().await;
        assert!(
            store
                .report_result("s1", Role::Host, Winner::Host, None, 1)
                .await
                .unwrap()
        );
        let conflicting = store
            .end_session(
                "s1",
                SessionStatus::Closed,
                Some((Role::Host, Winner::Guest)),
                None,
                2,
            )
            .await
            .unwrap();
        assert_eq!(conflicting, EndSession::ReportConflicts);
        let session = store.session("s1").await.unwrap().unwrap();
        assert_eq!(
            session.status,
            SessionStatus::Matched,
            "nothing half-written"
        );

        let ended = store
            .end_session(
                "s1",
                SessionStatus::Closed,
                Some((Role::Guest, Winner::Host)),
                None,
                3,
            )
            .await
            .unwrap();
        assert_eq!(ended, EndSession::Ended);
        let session = store.session("s1").await.unwrap().unwrap();
        assert_eq!(session.status, SessionStatus::Closed);
        let result = session.result.unwrap();
        assert_eq!(
            (result.outcome.as_str(), result.winner),
            ("agreed", Some(Winner::Host))
        );
        let status: String = sqlx::query("SELECT status FROM invitations WHERE post_id = 'p1'")
            .fetch_one(store.sqlite_writer())
            .await
            .unwrap()
            .get("status");
        assert_eq!(status, "closed");
        assert_eq!(
            store
                .end_session("s1", SessionStatus::Failed, None, None, 4)
                .await
                .unwrap(),
            EndSession::AlreadyEnded
        );
    }
}
