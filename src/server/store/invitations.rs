//! Invitations: create (with the per-key active limit), read, list, renew, cancel. An
//! invitation is offered only while `active` and unexpired; expiry is decided at read time.

use super::{Columns, Store, StoreError, with_pool, with_tx};
use crate::api::invitation::{
    ControlMode, Invitation, InvitationSummary, InvitationType, TransportInfo,
};
use crate::server::clock::iso8601;
use crate::server::cursor::Position;
use crate::server::replay::WriteReceipt;
use serde_json::{Map, Value};

/// The creator's agent record, if registered.
const WITH_AGENT: &str = "FROM invitations i LEFT JOIN agents a ON a.public_key = i.public_key";

/// Columns of a stored invitation plus the creator's agent record.
const SELECT: &str = "SELECT i.post_id, i.public_key, i.protocol_id, i.invitation_type, i.message, i.tags, \
     i.iroh_ticket, i.transport, i.transport_info, i.transport_binding_signature, i.host_control_mode, \
     i.options, i.status, i.created_at, i.expires_at, a.id AS agent_id, a.nickname";

/// The columns of a list item (no transport_info or options; pricing is stored apart).
const SELECT_SUMMARY: &str = "SELECT i.post_id, i.public_key, i.protocol_id, i.invitation_type, i.message, i.tags, \
     i.iroh_ticket, i.host_control_mode, i.pricing, i.status, i.created_at, i.expires_at, a.id AS agent_id, \
     a.nickname";

/// Where an invitation is in its life, as of a given moment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InvitationState {
    Active,
    Expired,
    Cancelled,
    /// A session was created from it (it stays matched, or closed once the session ends).
    Matched,
}

/// A validated invitation to store.
#[derive(Debug, Clone)]
pub struct NewInvitationRow {
    pub post_id: String,
    pub public_key: String,
    pub protocol_id: String,
    pub invitation_type: InvitationType,
    pub message: String,
    pub tags: Vec<String>,
    pub iroh_ticket: String,
    pub transport_info: TransportInfo,
    pub transport_binding_signature: String,
    pub host_control_mode: ControlMode,
    pub options: Map<String, Value>,
}

/// A stored invitation.
#[derive(Debug, Clone)]
pub struct InvitationRow {
    pub detail: Invitation,
    pub status: String,
    pub expires_at: i64,
}

impl InvitationRow {
    pub fn state(&self, now: i64) -> InvitationState {
        match self.status.as_str() {
            "active" if self.expires_at > now => InvitationState::Active,
            "active" => InvitationState::Expired,
            "cancelled" => InvitationState::Cancelled,
            _ => InvitationState::Matched,
        }
    }
}

/// One page of the offered list.
#[derive(Debug, Clone)]
pub struct OfferedPage {
    pub items: Vec<(InvitationSummary, Position)>,
    /// How many offered invitations match in total.
    pub total: i64,
    /// When the first matching invitation expires (Unix ms): until then, only a write can
    /// change this answer.
    pub changes_at: Option<i64>,
}

/// The browse filter, already validated.
#[derive(Debug, Clone, Default)]
pub struct OfferedFilter {
    pub protocol_id: Option<String>,
    pub invitation_type: Option<InvitationType>,
    pub tags: Vec<String>,
}

impl Store {
    /// Stores an invitation unless its creator already has `max_active` offered ones
    /// (`Ok(false)`): one conditional insert plus its tags, in one transaction on the writer.
    pub async fn insert_invitation(
        &self,
        row: &NewInvitationRow,
        max_active: i64,
        receipt: &WriteReceipt,
        now: i64,
        expires_at: i64,
    ) -> Result<bool, StoreError> {
        let mut tx = self.begin_write(Some(receipt)).await?;
        // The count below must see every concurrent insert of this key (other instances').
        tx.lock("invitations", &row.public_key).await?;
        with_tx!(tx, |conn| {
            let inserted = sqlx::query(
                "INSERT INTO invitations (post_id, public_key, protocol_id, invitation_type, message, tags, iroh_ticket, \
                 transport, transport_info, transport_binding_signature, host_control_mode, options, pricing, status, \
                 created_at, expires_at) \
                 SELECT $1, $2, $3, $4, $5, $6, $7, 'iroh', $8, $9, $10, $11, $12, 'active', $13, $14 \
                 WHERE (SELECT COUNT(*) FROM invitations WHERE public_key = $2 AND status = 'active' AND expires_at > $13) \
                 < $15",
            )
            .bind(&row.post_id)
            .bind(&row.public_key)
            .bind(&row.protocol_id)
            .bind(row.invitation_type.as_str())
            .bind(&row.message)
            .bind(compact(&row.tags))
            .bind(&row.iroh_ticket)
            .bind(compact(&row.transport_info))
            .bind(&row.transport_binding_signature)
            .bind(row.host_control_mode.as_str())
            .bind(compact(&row.options))
            .bind(row.options.get("pricing").map(compact))
            .bind(now)
            .bind(expires_at)
            .bind(max_active)
            .execute(&mut *conn)
            .await?;
            if inserted.rows_affected() == 0 {
                return Ok(false);
            }
            if !row.tags.is_empty() {
                let values: Vec<String> = (0..row.tags.len())
                    .map(|i| format!("($1, ${})", i + 2))
                    .collect();
                let sql = format!(
                    "INSERT INTO invitation_tags (post_id, tag) VALUES {}",
                    values.join(", ")
                );
                let mut statement = sqlx::query(sqlx::AssertSqlSafe(sql)).bind(&row.post_id);
                for tag in &row.tags {
                    statement = statement.bind(tag);
                }
                statement.execute(&mut *conn).await?;
            }
        });
        tx.commit().await?;
        self.offered_changed().await;
        Ok(true)
    }

    /// One invitation in any state.
    pub async fn invitation(&self, post_id: &str) -> Result<Option<InvitationRow>, StoreError> {
        with_pool!(self, reader, |pool| {
            let row = sqlx::query(sqlx::AssertSqlSafe(format!(
                "{SELECT} {WITH_AGENT} WHERE i.post_id = $1"
            )))
            .bind(post_id)
            .fetch_optional(pool)
            .await?;
            Ok(row.as_ref().map(invitation_of).transpose()?)
        })
    }

    /// Offered invitations matching `filter`, newest first, after `after`, at most `limit`;
    /// plus how many match in total and when the first of them expires.
    pub async fn offered_invitations(
        &self,
        filter: &OfferedFilter,
        after: Option<&Position>,
        limit: u32,
        now: i64,
    ) -> Result<OfferedPage, StoreError> {
        let (conditions, arguments) = offered_conditions(filter);
        // The totals ride along as uncorrelated subqueries (each evaluated once): one round
        // trip, and the page keeps its index order (no sort).
        let mut sql = format!(
            "{SELECT_SUMMARY}, (SELECT COUNT(*) FROM invitations i WHERE {conditions}) AS total, \
             (SELECT MIN(i.expires_at) FROM invitations i WHERE {conditions}) AS changes_at \
             {WITH_AGENT} WHERE {conditions}"
        );
        if after.is_some() {
            let (at, id) = (arguments.len() + 2, arguments.len() + 3);
            sql.push_str(&format!(
                " AND (i.created_at < ${at} OR (i.created_at = ${at} AND i.post_id < ${id}))"
            ));
        }
        sql.push_str(&format!(
            " ORDER BY i.created_at DESC, i.post_id DESC LIMIT {limit}"
        ));
        let (items, first) = with_pool!(self, reader, |pool| {
            let mut page = sqlx::query(sqlx::AssertSqlSafe(sql)).bind(now);
            for argument in &arguments {
                page = page.bind(argument.as_str());
            }
            if let Some(position) = after {
                page = page.bind(position.created_at).bind(position.id.as_str());
            }
            let rows = page.fetch_all(pool).await?;
            let first = match rows.first() {
                Some(row) => Some((row.int("total")?, row.maybe_int("changes_at")?)),
                None => None,
            };
            let items = rows.iter().map(summary_of).collect::<Result<Vec<_>, _>>()?;
            (items, first)
        });
        let (total, changes_at) = match first {
            Some(totals) => totals,
            None if after.is_none() => (0, None),
            None => self.count_offered(&conditions, &arguments, now).await?,
        };
        Ok(OfferedPage {
            items,
            total,
            changes_at,
        })
    }

    /// How many offered invitations match and when the first expires (for a page past the
    /// end, which has no rows to carry them).
    async fn count_offered(
        &self,
        conditions: &str,
        arguments: &[String],
        now: i64,
    ) -> Result<(i64, Option<i64>), StoreError> {
        let sql =
            format!("SELECT COUNT(*), MIN(i.expires_at) FROM invitations i WHERE {conditions}");
        Ok(with_pool!(self, reader, |pool| {
            let mut count =
                sqlx::query_as::<_, (i64, Option<i64>)>(sqlx::AssertSqlSafe(sql)).bind(now);
            for argument in arguments {
                count = count.bind(argument.as_str());
            }
            count.fetch_one(pool).await?
        }))
    }

    /// Extends an owner's offered invitation to `expires_at`; `false` if it is no longer
    /// offered or not theirs.
    pub async fn renew_invitation(
        &self,
        post_id: &str,
        owner: &str,
        receipt: &WriteReceipt,
        now: i64,
        expires_at: i64,
    ) -> Result<bool, StoreError> {
        let mut tx = self.begin_write(Some(receipt)).await?;
        let done = with_tx!(tx, |conn| sqlx::query(
            "UPDATE invitations SET expires_at = $1 \
             WHERE post_id = $2 AND public_key = $3 AND status = 'active' AND expires_at > $4",
        )
        .bind(expires_at)
        .bind(post_id)
        .bind(owner)
        .bind(now)
        .execute(conn)
        .await?
        .rows_affected());
        if done == 0 {
            return Ok(false);
        }
        tx.commit().await?;
        self.offered_changed().await;
        Ok(true)
    }

    /// Withdraws an owner's active (possibly expired) invitation; `false` if not possible.
    pub async fn cancel_invitation(
        &self,
        post_id: &str,
        owner: &str,
        receipt: &WriteReceipt,
    ) -> Result<bool, StoreError> {
        let mut tx = self.begin_write(Some(receipt)).await?;
        let done = with_tx!(tx, |conn| {
            sqlx::query(
            "UPDATE invitations SET status = 'cancelled' WHERE post_id = $1 AND public_key = $2 AND status = 'active'",
        )
        .bind(post_id)
        .bind(owner)
        .execute(conn)
        .await?
        .rows_affected()
        });
        if done == 0 {
            return Ok(false);
        }
        tx.commit().await?;
        self.offered_changed().await;
        Ok(true)
    }
}

/// The WHERE clause of the offered list: `$1` is now, then one argument per filter value.
fn offered_conditions(filter: &OfferedFilter) -> (String, Vec<String>) {
    let mut conditions = String::from("i.status = 'active' AND i.expires_at > $1");
    let mut arguments = Vec::new();
    let next = |value: String, arguments: &mut Vec<String>| {
        arguments.push(value);
        arguments.len() + 1
    };
    if let Some(protocol_id) = &filter.protocol_id {
        let n = next(protocol_id.clone(), &mut arguments);
        conditions.push_str(&format!(" AND i.protocol_id = ${n}"));
    }
    if let Some(kind) = filter.invitation_type {
        let n = next(kind.as_str().to_string(), &mut arguments);
        conditions.push_str(&format!(" AND i.invitation_type = ${n}"));
    }
    if !filter.tags.is_empty() {
        let placeholders: Vec<String> = filter
            .tags
            .iter()
            .map(|tag| format!("${}", next(tag.clone(), &mut arguments)))
            .collect();
        conditions.push_str(&format!(
            " AND i.post_id IN (SELECT post_id FROM invitation_tags WHERE tag IN ({}) GROUP BY post_id \
             HAVING COUNT(*) = {})",
            placeholders.join(", "),
            filter.tags.len()
        ));
    }
    (conditions, arguments)
}

fn invitation_of(row: &impl Columns) -> Result<InvitationRow, sqlx::Error> {
    let json = |column: &str| -> Result<Value, sqlx::Error> {
        let text = row.text(column)?;
        Ok(serde_json::from_str(&text).unwrap_or(Value::Null))
    };
    let agent_id = row.maybe_int("agent_id")?;
    let status = row.text("status")?;
    let expires_at = row.int("expires_at")?;
    let ticket = row.text("iroh_ticket")?;
    let detail = Invitation {
        post_id: row.text("post_id")?,
        public_key: row.text("public_key")?,
        protocol_id: row.text("protocol_id")?,
        invitation_type: InvitationType::parse(&row.text("invitation_type")?).unwrap_or_default(),
        message: row.text("message")?,
        tags: serde_json::from_value(json("tags")?).unwrap_or_default(),
        status: status.clone(),
        host_control_mode: ControlMode::parse(&row.text("host_control_mode")?).unwrap_or_default(),
        transport: row.text("transport")?,
        iroh_ticket: Some(ticket),
        transport_info: serde_json::from_value(json("transport_info")?).ok(),
        transport_binding_signature: Some(row.text("transport_binding_signature")?),
        options: serde_json::from_value(json("options")?).unwrap_or_default(),
        created_at: Some(iso8601(row.int("created_at")?)),
        expires_at: Some(iso8601(expires_at)),
        registered: agent_id.is_some(),
        nickname: row.maybe_text("nickname")?,
        agent_id,
    };
    Ok(InvitationRow {
        detail,
        status,
        expires_at,
    })
}

/// A list item (with its position) from a [`SELECT_SUMMARY`] row.
fn summary_of(row: &impl Columns) -> Result<(InvitationSummary, Position), sqlx::Error> {
    let json = |column: &str| -> Result<Option<Value>, sqlx::Error> {
        let text = row.maybe_text(column)?;
        Ok(text.and_then(|text| serde_json::from_str(&text).ok()))
    };
    let agent_id = row.maybe_int("agent_id")?;
    let created_at = row.int("created_at")?;
    let post_id = row.text("post_id")?;
    let summary = InvitationSummary {
        post_id: post_id.clone(),
        public_key: row.text("public_key")?,
        protocol_id: row.text("protocol_id")?,
        invitation_type: InvitationType::parse(&row.text("invitation_type")?).unwrap_or_default(),
        message: row.text("message")?,
        tags: json("tags")?
            .and_then(|tags| serde_json::from_value(tags).ok())
            .unwrap_or_default(),
        status: row.text("status")?,
        host_control_mode: ControlMode::parse(&row.text("host_control_mode")?).unwrap_or_default(),
        iroh_ticket: Some(row.text("iroh_ticket")?),
        pricing: json("pricing")?,
        created_at: Some(iso8601(created_at)),
        expires_at: Some(iso8601(row.int("expires_at")?)),
        registered: agent_id.is_some(),
        nickname: row.maybe_text("nickname")?,
        agent_id,
    };
    Ok((
        summary,
        Position {
            created_at,
            id: post_id,
        },
    ))
}

fn compact(value: &impl serde::Serialize) -> String {
    serde_json::to_string(value).expect("stored documents always serialize")
}
