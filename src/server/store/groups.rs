//! Rooms: a room's row and its members, read whole, and changed whole inside one write
//! transaction that locks the room's row with its first statement (so concurrent changes of
//! one room, on any instance, run one after the other, each seeing the one before). What a
//! change means is decided outside the store ([`crate::server::group_rules`]) on the state
//! read under that lock; the store writes back what differs, with a compare-and-set on the
//! room's epoch, status and lease, and renews or closes the room's invitation.

use super::{Columns, Store, StoreError, is_unique_violation, with_pool, with_tx};
use crate::api::group::{GroupStatus, MemberStatus, RecoveryMode, StartPolicy};
use crate::server::replay::WriteReceipt;

/// The columns of a room row.
const GROUP_COLUMNS: &str = "group_id, post_id, protocol_id, owner_key, min_participants, max_participants, \
     allow_late_join, recovery_mode, start_policy, status, leader_key, leader_epoch, lease_expires_at, \
     iroh_ticket, transport_binding_signature, membership_version, checkpoint_seq, checkpoint_hash, \
     created_at, updated_at";

/// The columns of a member row.
const MEMBER_COLUMNS: &str =
    "public_key, member_id, seat, status, join_nonce, joined_at, last_seen_at";

/// Inserts a member or updates its seat, status, nonce and last sighting (a macro, to run
/// on either backend's connection).
macro_rules! upsert_member {
    ($conn:expr, $group_id:expr, $member:expr) => {{
        let member: &MemberRow = $member;
        sqlx::query(sqlx::AssertSqlSafe(format!(
            "INSERT INTO group_members (group_id, {MEMBER_COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8) \
             ON CONFLICT (group_id, public_key) DO UPDATE SET seat = excluded.seat, status = excluded.status, \
             join_nonce = excluded.join_nonce, last_seen_at = excluded.last_seen_at"
        )))
        .bind($group_id)
        .bind(&member.public_key)
        .bind(&member.member_id)
        .bind(i64::from(member.seat))
        .bind(member.status.as_str())
        .bind(&member.join_nonce)
        .bind(member.joined_at)
        .bind(member.last_seen_at)
        .execute($conn)
        .await?;
    }};
}

/// A stored room (times in Unix ms).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GroupRow {
    pub group_id: String,
    pub post_id: String,
    pub protocol_id: String,
    pub owner_key: String,
    pub min_participants: u32,
    pub max_participants: u32,
    pub allow_late_join: bool,
    pub recovery_mode: RecoveryMode,
    pub start_policy: StartPolicy,
    pub status: GroupStatus,
    pub leader_key: String,
    pub leader_epoch: u64,
    pub lease_expires_at: i64,
    pub iroh_ticket: String,
    pub transport_binding_signature: String,
    pub membership_version: u64,
    pub checkpoint_seq: u64,
    pub checkpoint_hash: String,
    pub created_at: i64,
    pub updated_at: i64,
}

/// A stored member of a room.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MemberRow {
    pub public_key: String,
    pub member_id: String,
    pub seat: u32,
    pub status: MemberStatus,
    pub join_nonce: String,
    pub joined_at: i64,
    pub last_seen_at: i64,
}

/// A room with every key that ever held a seat in it, by seat.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GroupState {
    pub group: GroupRow,
    pub members: Vec<MemberRow>,
}

/// What a change does to the room's invitation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InvitationEffect {
    Keep,
    /// Offered until then (if it is still offered at all).
    Renew {
        expires_at: i64,
    },
    /// No longer offered (`closed`).
    Close,
}

/// How a change of a room ended.
#[derive(Debug)]
pub enum GroupUpdate<T, E> {
    /// There is no such room.
    Missing,
    /// The rules refused it; nothing was written.
    Refused(E),
    /// Written.
    Done(T),
    /// The room's epoch, status or lease changed between the read and the write (nothing
    /// written). Under the row lock this cannot happen; the compare-and-set is kept anyway.
    Lost,
}

impl Store {
    /// Stores a new room and its first member; `false` if its invitation has a room already.
    pub async fn create_group(
        &self,
        state: &GroupState,
        receipt: &WriteReceipt,
    ) -> Result<bool, StoreError> {
        let mut tx = self.begin_write(Some(receipt)).await?;
        let g = &state.group;
        let inserted = with_tx!(tx, |conn| {
            let inserted = sqlx::query(sqlx::AssertSqlSafe(format!(
                "INSERT INTO groups ({GROUP_COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, \
                 $11, $12, $13, $14, $15, $16, $17, $18, $19, $20)"
            )))
            .bind(&g.group_id)
            .bind(&g.post_id)
            .bind(&g.protocol_id)
            .bind(&g.owner_key)
            .bind(i64::from(g.min_participants))
            .bind(i64::from(g.max_participants))
            .bind(i64::from(g.allow_late_join))
            .bind(<&str>::from(g.recovery_mode))
            .bind(<&str>::from(g.start_policy))
            .bind(g.status.as_str())
            .bind(&g.leader_key)
            .bind(int(g.leader_epoch))
            .bind(g.lease_expires_at)
            .bind(&g.iroh_ticket)
            .bind(&g.transport_binding_signature)
            .bind(int(g.membership_version))
            .bind(int(g.checkpoint_seq))
            .bind(&g.checkpoint_hash)
            .bind(g.created_at)
            .bind(g.updated_at)
            .execute(&mut *conn)
            .await;
            match inserted {
                Err(error) if is_unique_violation(&error) => false,
                Err(error) => return Err(error.into()),
                Ok(_) => {
                    for member in &state.members {
                        upsert_member!(&mut *conn, &g.group_id, member);
                    }
                    true
                }
            }
        });
        if inserted {
            tx.commit().await?;
        }
        Ok(inserted)
    }

    /// One room, by its id.
    pub async fn group(&self, group_id: &str) -> Result<Option<GroupState>, StoreError> {
        self.group_where("group_id", group_id).await
    }

    /// The room of an invitation.
    pub async fn group_by_post(&self, post_id: &str) -> Result<Option<GroupState>, StoreError> {
        self.group_where("post_id", post_id).await
    }

    async fn group_where(
        &self,
        column: &'static str,
        value: &str,
    ) -> Result<Option<GroupState>, StoreError> {
        let group_sql = format!("SELECT {GROUP_COLUMNS} FROM groups WHERE {column} = $1");
        let members_sql = format!(
            "SELECT {MEMBER_COLUMNS} FROM group_members WHERE group_id = $1 ORDER BY seat, joined_at"
        );
        with_pool!(self, reader, |pool| {
            let Some(row) = sqlx::query(sqlx::AssertSqlSafe(group_sql))
                .bind(value)
                .fetch_optional(pool)
                .await?
            else {
                return Ok(None);
            };
            let group = group_of(&row)?;
            let rows = sqlx::query(sqlx::AssertSqlSafe(members_sql))
                .bind(&group.group_id)
                .fetch_all(pool)
                .await?;
            let members = rows.iter().map(member_of).collect::<Result<_, _>>()?;
            Ok(Some(GroupState { group, members }))
        })
    }

    /// Changes one room: locks its row, reads it whole, lets `decide` change it (or refuse),
    /// and writes back what differs, with the invitation effect `decide` asks for; all in
    /// one transaction with the request's id.
    pub async fn update_group<T, E>(
        &self,
        group_id: &str,
        receipt: &WriteReceipt,
        now: i64,
        decide: impl FnOnce(&mut GroupState) -> Result<(T, InvitationEffect), E>,
    ) -> Result<GroupUpdate<T, E>, StoreError> {
        let mut tx = self.begin_write(Some(receipt)).await?;
        let lock_sql = format!(
            "UPDATE groups SET updated_at = updated_at WHERE group_id = $1 RETURNING {GROUP_COLUMNS}"
        );
        let members_sql = format!(
            "SELECT {MEMBER_COLUMNS} FROM group_members WHERE group_id = $1 ORDER BY seat, joined_at"
        );
        let before = with_tx!(tx, |conn| {
            // The first statement takes the row lock: a concurrent change of this room (on
            // any instance) waits here, then reads what the one before it committed.
            let Some(row) = sqlx::query(sqlx::AssertSqlSafe(lock_sql))
                .bind(group_id)
                .fetch_optional(&mut *conn)
                .await?
            else {
                return Ok(GroupUpdate::Missing);
            };
            let group = group_of(&row)?;
            let rows = sqlx::query(sqlx::AssertSqlSafe(members_sql))
                .bind(group_id)
                .fetch_all(&mut *conn)
                .await?;
            let members = rows.iter().map(member_of).collect::<Result<_, _>>()?;
            GroupState { group, members }
        });
        let mut after = before.clone();
        let (answer, effect) = match decide(&mut after) {
            Ok(decided) => decided,
            Err(refusal) => return Ok(GroupUpdate::Refused(refusal)),
        };
        if !write_back(&mut tx, &before, &after, effect, now).await? {
            return Ok(GroupUpdate::Lost);
        }
        tx.commit().await?;
        if effect != InvitationEffect::Keep {
            self.offered_changed().await;
        }
        Ok(GroupUpdate::Done(answer))
    }
}

/// Writes what `decide` changed; `false` (nothing written) when the compare-and-set on the
/// room's epoch, status and lease as read finds the row changed.
async fn write_back(
    tx: &mut super::WriteTx<'_>,
    before: &GroupState,
    after: &GroupState,
    effect: InvitationEffect,
    now: i64,
) -> Result<bool, StoreError> {
    let (old, new) = (&before.group, &after.group);
    // Members leaving first: a seat they free may be taken in the same change.
    let mut changed: Vec<&MemberRow> = after
        .members
        .iter()
        .filter(|member| !before.members.contains(member))
        .collect();
    changed.sort_by_key(|member| member.status == MemberStatus::Active);
    let group_changed = old != new || !changed.is_empty();
    Ok(with_tx!(tx, |conn| {
        if group_changed {
            let updated = sqlx::query(
                "UPDATE groups SET status = $1, leader_key = $2, leader_epoch = $3, lease_expires_at = $4, \
                 iroh_ticket = $5, transport_binding_signature = $6, membership_version = $7, checkpoint_seq = $8, \
                 checkpoint_hash = $9, updated_at = $10 \
                 WHERE group_id = $11 AND leader_epoch = $12 AND status = $13 AND lease_expires_at = $14",
            )
            .bind(new.status.as_str())
            .bind(&new.leader_key)
            .bind(int(new.leader_epoch))
            .bind(new.lease_expires_at)
            .bind(&new.iroh_ticket)
            .bind(&new.transport_binding_signature)
            .bind(int(new.membership_version))
            .bind(int(new.checkpoint_seq))
            .bind(&new.checkpoint_hash)
            .bind(now)
            .bind(&old.group_id)
            .bind(int(old.leader_epoch))
            .bind(old.status.as_str())
            .bind(old.lease_expires_at)
            .execute(&mut *conn)
            .await?;
            if updated.rows_affected() == 0 {
                return Ok(false);
            }
        }
        for member in changed {
            upsert_member!(&mut *conn, &old.group_id, member);
        }
        match effect {
            InvitationEffect::Keep => {}
            InvitationEffect::Renew { expires_at } => {
                sqlx::query(
                    "UPDATE invitations SET expires_at = $1 WHERE post_id = $2 AND status = 'active'",
                )
                .bind(expires_at)
                .bind(&old.post_id)
                .execute(&mut *conn)
                .await?;
            }
            InvitationEffect::Close => {
                sqlx::query(
                    "UPDATE invitations SET status = 'closed' WHERE post_id = $1 AND status = 'active'",
                )
                .bind(&old.post_id)
                .execute(&mut *conn)
                .await?;
            }
        }
        true
    }))
}

/// A counter as the BIGINT it is stored as (counters stay far below `i64::MAX`).
fn int(value: u64) -> i64 {
    i64::try_from(value).unwrap_or(i64::MAX)
}

fn count(row: &impl Columns, column: &str) -> Result<u64, sqlx::Error> {
    Ok(u64::try_from(row.int(column)?).unwrap_or(0))
}

fn small(row: &impl Columns, column: &str) -> Result<u32, sqlx::Error> {
    Ok(u32::try_from(row.int(column)?).unwrap_or(0))
}

/// A stored enum word; only this server writes these columns.
fn word<T: std::str::FromStr>(row: &impl Columns, column: &str) -> Result<T, sqlx::Error> {
    let text = row.text(column)?;
    text.parse().map_err(|_| sqlx::Error::ColumnDecode {
        index: column.to_string(),
        source: format!("unexpected value {text:?}").into(),
    })
}

fn group_of(row: &impl Columns) -> Result<GroupRow, sqlx::Error> {
    Ok(GroupRow {
        group_id: row.text("group_id")?,
        post_id: row.text("post_id")?,
        protocol_id: row.text("protocol_id")?,
        owner_key: row.text("owner_key")?,
        min_participants: small(row, "min_participants")?,
        max_participants: small(row, "max_participants")?,
        allow_late_join: row.int("allow_late_join")? != 0,
        recovery_mode: word(row, "recovery_mode")?,
        start_policy: word(row, "start_policy")?,
        status: word(row, "status")?,
        leader_key: row.text("leader_key")?,
        leader_epoch: count(row, "leader_epoch")?,
        lease_expires_at: row.int("lease_expires_at")?,
        iroh_ticket: row.text("iroh_ticket")?,
        transport_binding_signature: row.text("transport_binding_signature")?,
        membership_version: count(row, "membership_version")?,
        checkpoint_seq: count(row, "checkpoint_seq")?,
        checkpoint_hash: row.text("checkpoint_hash")?,
        created_at: row.int("created_at")?,
        updated_at: row.int("updated_at")?,
    })
}

fn member_of(row: &impl Columns) -> Result<MemberRow, sqlx::Error> {
    Ok(MemberRow {
        public_key: row.text("public_key")?,
        member_id: row.text("member_id")?,
        seat: small(row, "seat")?,
        status: word(row, "status")?,
        join_nonce: row.text("join_nonce")?,
        joined_at: row.int("joined_at")?,
        last_seen_at: row.int("last_seen_at")?,
    })
}
