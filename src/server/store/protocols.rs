//! Protocols: the registered specs, content-addressed by protocol_id.

use super::{Columns, Store, StoreError, with_pool, with_tx};
use crate::api::protocol::{ProtocolRecord, ProtocolSummary};
use crate::server::clock::iso8601;
use crate::server::cursor::Position;
use crate::server::replay::WriteReceipt;

/// A protocol to store (already checked by the caller).
#[derive(Debug, Clone)]
pub struct NewProtocolRow<'a> {
    pub protocol_id: &'a str,
    pub name: &'a str,
    pub description: &'a str,
    pub protocol_type: &'a str,
    /// The spec as compact JSON text.
    pub spec_json: &'a str,
    /// `None` for the server's built-ins.
    pub registrant_key: Option<&'a str>,
}

/// What storing a protocol did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InsertProtocol {
    Inserted,
    /// Its id is already known.
    Exists,
    /// The registrant's quota does not leave room for it (nothing was stored).
    OverQuota,
}

/// What one registrant may store (see [`crate::server::config::Quotas`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProtocolQuota {
    pub count: u32,
    pub bytes: u64,
}

impl Store {
    /// Stores a protocol if its id is new and, for a registrant's protocol, if the
    /// registrant's protocols stay within `quota` (checked in the same statement).
    pub async fn insert_protocol(
        &self,
        protocol: &NewProtocolRow<'_>,
        quota: Option<ProtocolQuota>,
        receipt: Option<&WriteReceipt>,
        now: i64,
    ) -> Result<InsertProtocol, StoreError> {
        let mut tx = self.begin_write(receipt).await?;
        if let Some(registrant) = protocol.registrant_key {
            // The quota sums below must see every concurrent insert of this registrant.
            tx.lock("protocols", registrant).await?;
        }
        let (count, bytes) = quota.map_or((i64::MAX, i64::MAX), |quota| {
            (
                i64::from(quota.count),
                i64::try_from(quota.bytes).unwrap_or(i64::MAX),
            )
        });
        let outcome = with_tx!(tx, |conn| {
            let inserted = sqlx::query(
                "INSERT INTO protocols (protocol_id, name, description, protocol_type, spec_json, registrant_key, created_at) \
                 SELECT $1, $2, $3, $4, $5, $6, $7 \
                 WHERE $6 IS NULL OR (SELECT COUNT(*) < $8 AND COALESCE(SUM(OCTET_LENGTH(spec_json)), 0) + OCTET_LENGTH($5) <= $9 \
                                      FROM protocols WHERE registrant_key = $6) \
                 ON CONFLICT (protocol_id) DO NOTHING",
            )
            .bind(protocol.protocol_id)
            .bind(protocol.name)
            .bind(protocol.description)
            .bind(protocol.protocol_type)
            .bind(protocol.spec_json)
            .bind(protocol.registrant_key)
            .bind(now)
            .bind(count)
            .bind(bytes)
            .execute(&mut *conn)
            .await?;
            if inserted.rows_affected() == 1 {
                InsertProtocol::Inserted
            } else {
                let known: Option<(i32,)> =
                    sqlx::query_as("SELECT 1 FROM protocols WHERE protocol_id = $1")
                        .bind(protocol.protocol_id)
                        .fetch_optional(&mut *conn)
                        .await?;
                if known.is_some() {
                    InsertProtocol::Exists
                } else {
                    InsertProtocol::OverQuota
                }
            }
        });
        tx.commit().await?;
        Ok(outcome)
    }

    /// One protocol with its spec.
    pub async fn protocol(&self, protocol_id: &str) -> Result<Option<ProtocolRecord>, StoreError> {
        with_pool!(self, reader, |pool| {
            let row = sqlx::query(
                "SELECT protocol_id, name, description, protocol_type, spec_json, registrant_key, created_at \
                 FROM protocols WHERE protocol_id = $1",
            )
            .bind(protocol_id)
            .fetch_optional(pool)
            .await?;
            Ok(row.as_ref().map(record_of).transpose()?)
        })
    }

    /// Whether a protocol id is known.
    pub async fn protocol_exists(&self, protocol_id: &str) -> Result<bool, StoreError> {
        let row: Option<(i32,)> = with_pool!(self, reader, |pool| {
            sqlx::query_as("SELECT 1 FROM protocols WHERE protocol_id = $1")
                .bind(protocol_id)
                .fetch_optional(pool)
                .await?
        });
        Ok(row.is_some())
    }

    /// Up to `limit` protocols after `after`, newest first, optionally only those whose name
    /// or description contains `query` (case-insensitive). Each comes with its position.
    pub async fn list_protocols(
        &self,
        query: Option<&str>,
        after: Option<&Position>,
        limit: u32,
    ) -> Result<Vec<(ProtocolSummary, Position)>, StoreError> {
        let mut sql = String::from(
            "SELECT protocol_id, name, description, protocol_type, created_at FROM protocols WHERE 1 = 1",
        );
        let mut arguments: Vec<String> = Vec::new();
        if let Some(query) = query {
            arguments.push(format!("%{}%", escape_like(&query.to_lowercase())));
            let n = arguments.len();
            sql.push_str(&format!(
                " AND (LOWER(name) LIKE ${n} ESCAPE '\\' OR LOWER(description) LIKE ${n} ESCAPE '\\')"
            ));
        }
        if after.is_some() {
            let (at, id) = (arguments.len() + 1, arguments.len() + 2);
            sql.push_str(&format!(
                " AND (created_at < ${at} OR (created_at = ${at} AND protocol_id < ${id}))"
            ));
        }
        sql.push_str(" ORDER BY created_at DESC, protocol_id DESC LIMIT ");
        sql.push_str(&limit.to_string());
        with_pool!(self, reader, |pool| {
            let mut statement = sqlx::query(sqlx::AssertSqlSafe(sql));
            for argument in &arguments {
                statement = statement.bind(argument.as_str());
            }
            if let Some(position) = after {
                statement = statement
                    .bind(position.created_at)
                    .bind(position.id.as_str());
            }
            let rows = statement.fetch_all(pool).await?;
            rows.iter()
                .map(summary_of)
                .collect::<Result<_, _>>()
                .map_err(StoreError::from)
        })
    }
}

fn record_of(row: &impl Columns) -> Result<ProtocolRecord, sqlx::Error> {
    Ok(ProtocolRecord {
        protocol_id: row.text("protocol_id")?,
        name: row.text("name")?,
        description: row.text("description")?,
        protocol_type: row.text("protocol_type")?,
        spec_json: serde_json::from_str(&row.text("spec_json")?).unwrap_or_default(),
        public_key: row.maybe_text("registrant_key")?,
        created_at: Some(iso8601(row.int("created_at")?)),
    })
}

fn summary_of(row: &impl Columns) -> Result<(ProtocolSummary, Position), sqlx::Error> {
    let created_at = row.int("created_at")?;
    let protocol_id = row.text("protocol_id")?;
    let summary = ProtocolSummary {
        protocol_id: protocol_id.clone(),
        name: row.text("name")?,
        description: row.text("description")?,
        protocol_type: row.text("protocol_type")?,
        created_at: Some(iso8601(created_at)),
    };
    Ok((
        summary,
        Position {
            created_at,
            id: protocol_id,
        },
    ))
}

/// Escapes `%`, `_` and the escape character itself for a `LIKE ... ESCAPE '\'` pattern.
pub(super) fn escape_like(text: &str) -> String {
    text.replace('\\', "\\\\")
        .replace('%', "\\%")
        .replace('_', "\\_")
}
