//! Protocols: the registered specs, content-addressed by protocol_id.

use sqlx::Row;
use sqlx::sqlite::SqliteRow;

use super::{Store, StoreError, is_unique_violation};
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
        let (count, bytes) = quota.map_or((i64::MAX, i64::MAX), |quota| {
            (
                i64::from(quota.count),
                i64::try_from(quota.bytes).unwrap_or(i64::MAX),
            )
        });
        let inserted = sqlx::query(
            "INSERT INTO protocols (protocol_id, name, description, protocol_type, spec_json, registrant_key, created_at) \
             SELECT $1, $2, $3, $4, $5, $6, $7 \
             WHERE $6 IS NULL OR (SELECT COUNT(*) < $8 AND COALESCE(SUM(OCTET_LENGTH(spec_json)), 0) + OCTET_LENGTH($5) <= $9 \
                                  FROM protocols WHERE registrant_key = $6)",
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
        .execute(tx.conn())
        .await;
        let outcome = match inserted {
            Ok(done) if done.rows_affected() == 1 => InsertProtocol::Inserted,
            Ok(_) => InsertProtocol::OverQuota,
            Err(error) if is_unique_violation(&error) => InsertProtocol::Exists,
            Err(error) => return Err(error.into()),
        };
        tx.commit().await?;
        Ok(outcome)
    }

    /// One protocol with its spec.
    pub async fn protocol(&self, protocol_id: &str) -> Result<Option<ProtocolRecord>, StoreError> {
        let row = sqlx::query(
            "SELECT protocol_id, name, description, protocol_type, spec_json, registrant_key, created_at \
             FROM protocols WHERE protocol_id = $1",
        )
        .bind(protocol_id)
        .fetch_optional(&self.reader)
        .await?;
        let Some(row) = row else { return Ok(None) };
        let spec_text: String = row.try_get("spec_json")?;
        Ok(Some(ProtocolRecord {
            protocol_id: row.try_get("protocol_id")?,
            name: row.try_get("name")?,
            description: row.try_get("description")?,
            protocol_type: row.try_get("protocol_type")?,
            spec_json: serde_json::from_str(&spec_text).unwrap_or_default(),
            public_key: row.try_get("registrant_key")?,
            created_at: Some(iso8601(row.try_get("created_at")?)),
        }))
    }

    /// Whether a protocol id is known.
    pub async fn protocol_exists(&self, protocol_id: &str) -> Result<bool, StoreError> {
        let row = sqlx::query("SELECT 1 FROM protocols WHERE protocol_id = $1")
            .bind(protocol_id)
            .fetch_optional(&self.reader)
            .await?;
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
        let mut statement = sqlx::query(sqlx::AssertSqlSafe(sql));
        for argument in &arguments {
            statement = statement.bind(argument.as_str());
        }
        if let Some(position) = after {
            statement = statement
                .bind(position.created_at)
                .bind(position.id.as_str());
        }
        let rows = statement.fetch_all(&self.reader).await?;
        rows.iter()
            .map(summary_of)
            .collect::<Result<_, _>>()
            .map_err(StoreError::from)
    }
}

fn summary_of(row: &SqliteRow) -> Result<(ProtocolSummary, Position), sqlx::Error> {
    let created_at: i64 = row.try_get("created_at")?;
    let protocol_id: String = row.try_get("protocol_id")?;
    let summary = ProtocolSummary {
        protocol_id: protocol_id.clone(),
        name: row.try_get("name")?,
        description: row.try_get("description")?,
        protocol_type: row.try_get("protocol_type")?,
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
