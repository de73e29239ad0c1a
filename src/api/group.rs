//! Rooms on the community server (`/api/v1/groups`): the server keeps a room's control plane —
//! its seats and members, who leads it in which epoch, the leader's lease and ticket, and
//! the newest checkpoint a member has acknowledged (the floor a failover may not go below).
//! It never sees a room's frames. Also the two statements both sides of an admission sign
//! and the statement a leader signs on every checkpoint, shared by the server, which checks
//! them, and the room's peers, which exchange them.

use serde::{Deserialize, Serialize};

use crate::identity::{self, Identity, TRANSPORT_IROH};

pub use crate::spec::flow::group::{RecoveryMode, StartPolicy};

/// The checkpoint hash of a room no member has acknowledged anything of yet.
pub const EMPTY_CHECKPOINT_HASH: &str =
    "0000000000000000000000000000000000000000000000000000000000000000";

/// Where a room is in its life: `lobby` until its leader starts it, `active` while it runs,
/// then `closed` (it ended) or `failed` (it cannot go on: its leader died in an `abort` room,
/// or the leader reported a failure).
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Serialize,
    Deserialize,
    strum::IntoStaticStr,
    strum::EnumString,
    strum::Display,
)]
#[strum(serialize_all = "snake_case")]
#[serde(rename_all = "snake_case")]
pub enum GroupStatus {
    Lobby,
    Active,
    Closed,
    Failed,
}

impl GroupStatus {
    pub fn as_str(self) -> &'static str {
        self.into()
    }

    /// `closed` and `failed` are final.
    pub fn is_open(self) -> bool {
        matches!(self, GroupStatus::Lobby | GroupStatus::Active)
    }
}

/// A member's place: `active` while it holds its seat, `left` once it left or stopped
/// heartbeating (its seat is free again; it gets it back on re-admission when still free).
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Serialize,
    Deserialize,
    strum::IntoStaticStr,
    strum::EnumString,
    strum::Display,
)]
#[strum(serialize_all = "snake_case")]
#[serde(rename_all = "snake_case")]
pub enum MemberStatus {
    Active,
    Left,
}

impl MemberStatus {
    pub fn as_str(self) -> &'static str {
        self.into()
    }
}

/// `POST /groups`: the owner of a room invitation opens its room. The policy must be the
/// one its registered contract declares.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NewGroup {
    pub post_id: String,
    pub min_participants: u32,
    pub max_participants: u32,
    pub allow_late_join: bool,
    pub recovery_mode: RecoveryMode,
}

/// One seat holder.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GroupMember {
    pub member_id: String,
    pub seat: u32,
    pub public_key: String,
    pub status: MemberStatus,
    pub joined_at: String,
}

/// A room as the server keeps it (every group endpoint answers with it, except admission).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Group {
    pub group_id: String,
    pub post_id: String,
    pub protocol_id: String,
    pub status: GroupStatus,
    pub leader_public_key: String,
    pub leader_epoch: u64,
    pub leader_lease_seconds: u64,
    /// ISO-8601, to compare with `server_time` (never with the reader's clock).
    pub leader_lease_expires_at: String,
    pub server_time: String,
    pub membership_version: u64,
    /// Active members, the leader included.
    pub participant_count: u64,
    pub min_participants: u32,
    pub max_participants: u32,
    pub allow_late_join: bool,
    pub recovery_mode: RecoveryMode,
    pub start_policy: StartPolicy,
    /// The floor: the newest checkpoint a member acknowledged, as the leader reported it.
    pub checkpoint_seq: u64,
    pub checkpoint_hash: String,
    /// The current leader's ticket and its signature over the transport binding.
    pub iroh_ticket: String,
    pub transport_binding_signature: String,
    pub members: Vec<GroupMember>,
    pub created_at: String,
    pub updated_at: String,
}

impl Group {
    /// The member with this key, whatever its status.
    pub fn member(&self, public_key: &str) -> Option<&GroupMember> {
        self.members.iter().find(|m| m.public_key == public_key)
    }

    /// Whether the leader's lease had run out when the server answered.
    pub fn lease_expired(&self) -> bool {
        self.server_time >= self.leader_lease_expires_at
    }

    /// The admission statement of `member_public_key` with this nonce, for the room's
    /// current leader and epoch (what both sides of an admission sign).
    pub fn admission_statement(&self, member_public_key: &str, join_nonce: &str) -> String {
        admission_canonical(
            &self.group_id,
            &self.leader_public_key,
            member_public_key,
            &self.protocol_id,
            self.leader_epoch,
            join_nonce,
        )
    }
}

impl NewMember {
    /// `member`'s admission to `group` in its current epoch, with the leader's signature
    /// over the same statement (from the leader's admission frame).
    pub fn signed(
        member: &Identity,
        group: &Group,
        join_nonce: &str,
        leader_signature: &str,
    ) -> NewMember {
        let statement = group.admission_statement(member.public_key(), join_nonce);
        NewMember {
            join_nonce: join_nonce.to_string(),
            leader_epoch: group.leader_epoch,
            leader_signature: leader_signature.to_string(),
            member_signature: member.sign_hex(statement.as_bytes()),
        }
    }
}

/// `key`'s signature binding `ticket` to the room's protocol (the invitation's binding).
fn binding_signature(key: &Identity, ticket: &str, protocol_id: &str) -> String {
    let binding = identity::transport_binding_canonical(
        key.public_key(),
        TRANSPORT_IROH,
        ticket,
        protocol_id,
    );
    key.sign_hex(binding.as_bytes())
}

impl LeaderHeartbeat {
    /// The heartbeat of `leader` in `group`'s current epoch, with its ticket bound to the
    /// room's protocol and the newest checkpoint a member acknowledged.
    pub fn signed(
        leader: &Identity,
        group: &Group,
        checkpoint_seq: u64,
        checkpoint_hash: &str,
        ticket: &str,
    ) -> LeaderHeartbeat {
        LeaderHeartbeat {
            leader_epoch: group.leader_epoch,
            checkpoint_seq,
            checkpoint_hash: checkpoint_hash.to_string(),
            iroh_ticket: ticket.to_string(),
            transport_binding_signature: binding_signature(leader, ticket, &group.protocol_id),
        }
    }
}

/// A checkpoint as its leader certified it (see [`checkpoint_canonical`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CertifiedCheckpoint {
    pub seq: u64,
    pub checkpoint_hash: String,
    pub frame_hash: String,
    pub membership_version: u64,
    pub signature: String,
}

impl CertifiedCheckpoint {
    /// `leader` certifies a checkpoint of `group` in the room's current epoch.
    pub fn sign(
        leader: &Identity,
        group: &Group,
        seq: u64,
        frame_hash: &str,
        membership_version: u64,
        checkpoint_hash: &str,
    ) -> CertifiedCheckpoint {
        let statement = checkpoint_canonical(
            &group.group_id,
            leader.public_key(),
            group.leader_epoch,
            seq,
            frame_hash,
            membership_version,
            checkpoint_hash,
        );
        CertifiedCheckpoint {
            seq,
            checkpoint_hash: checkpoint_hash.to_string(),
            frame_hash: frame_hash.to_string(),
            membership_version,
            signature: leader.sign_hex(statement.as_bytes()),
        }
    }
}

impl ClaimLeader {
    /// `claimant`'s claim of `group`'s next epoch from `checkpoint`, with its own ticket.
    pub fn signed(
        claimant: &Identity,
        group: &Group,
        checkpoint: &CertifiedCheckpoint,
        ticket: &str,
    ) -> ClaimLeader {
        ClaimLeader {
            expected_epoch: group.leader_epoch,
            checkpoint_seq: checkpoint.seq,
            checkpoint_hash: checkpoint.checkpoint_hash.clone(),
            checkpoint_frame_hash: checkpoint.frame_hash.clone(),
            checkpoint_membership_version: checkpoint.membership_version,
            checkpoint_signature: checkpoint.signature.clone(),
            iroh_ticket: ticket.to_string(),
            transport_binding_signature: binding_signature(claimant, ticket, &group.protocol_id),
        }
    }
}

/// `POST /groups/{group_id}/members`, signed by the member after the leader's admission
/// frame: both signatures over [`admission_canonical`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NewMember {
    pub join_nonce: String,
    pub leader_epoch: u64,
    pub leader_signature: String,
    pub member_signature: String,
}

/// The answer to an admission: the member's stable id and seat.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MemberAdmitted {
    pub group_id: String,
    pub member_id: String,
    pub seat: u32,
    pub public_key: String,
    pub status: MemberStatus,
    pub membership_version: u64,
}

/// `POST /groups/{group_id}/heartbeat`, by the leader of `leader_epoch`: renews its lease,
/// its ticket, and the checkpoint floor (never lower than before).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LeaderHeartbeat {
    pub leader_epoch: u64,
    pub checkpoint_seq: u64,
    pub checkpoint_hash: String,
    pub iroh_ticket: String,
    pub transport_binding_signature: String,
}

/// `POST /groups/{group_id}/claim-leader`, by a member once the lease ran out: the checkpoint
/// it restores from, certified by the leader of `expected_epoch` (see
/// [`checkpoint_canonical`]) or equal to the floor, and its own ticket.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ClaimLeader {
    pub expected_epoch: u64,
    pub checkpoint_seq: u64,
    pub checkpoint_hash: String,
    pub checkpoint_frame_hash: String,
    pub checkpoint_membership_version: u64,
    pub checkpoint_signature: String,
    pub iroh_ticket: String,
    pub transport_binding_signature: String,
}

/// `POST /groups/{group_id}/status`, by the leader: `active` once the lobby filled, then
/// `closed` or `failed`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GroupStatusUpdate {
    pub leader_epoch: u64,
    pub status: GroupStatus,
}

/// What the leader and the joining member both sign for an admission.
pub fn admission_canonical(
    group_id: &str,
    leader_public_key: &str,
    member_public_key: &str,
    protocol_id: &str,
    leader_epoch: u64,
    join_nonce: &str,
) -> String {
    format!(
        "aigenora-group-admission-v1:{group_id}:{leader_public_key}:{member_public_key}:\
         {protocol_id}:{leader_epoch}:{join_nonce}"
    )
}

/// What a leader signs for every checkpoint it certifies.
pub fn checkpoint_canonical(
    group_id: &str,
    leader_public_key: &str,
    leader_epoch: u64,
    seq: u64,
    frame_hash: &str,
    membership_version: u64,
    checkpoint_hash: &str,
) -> String {
    format!(
        "aigenora-group-checkpoint-v1:{group_id}:{leader_public_key}:{leader_epoch}:{seq}:\
         {frame_hash}:{membership_version}:{checkpoint_hash}"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_signed_statements_have_their_fixed_forms() {
        assert_eq!(
            admission_canonical("g1", "aa", "bb", "pp", 3, "n0"),
            "aigenora-group-admission-v1:g1:aa:bb:pp:3:n0"
        );
        assert_eq!(
            checkpoint_canonical("g1", "aa", 2, 17, "ff", 4, "cc"),
            "aigenora-group-checkpoint-v1:g1:aa:2:17:ff:4:cc"
        );
        assert_eq!(EMPTY_CHECKPOINT_HASH.len(), 64);
    }

    #[test]
    fn statuses_travel_in_snake_case() {
        assert_eq!(
            serde_json::to_string(&GroupStatus::Lobby).unwrap(),
            "\"lobby\""
        );
        let update: GroupStatusUpdate =
            serde_json::from_str(r#"{"leader_epoch":0,"status":"closed"}"#).unwrap();
        assert_eq!(update.status, GroupStatus::Closed);
        assert!(!update.status.is_open());
        let new: NewGroup = serde_json::from_str(
            r#"{"post_id":"p","min_participants":2,"max_participants":4,"allow_late_join":true,"recovery_mode":"restart_round"}"#,
        )
        .unwrap();
        assert_eq!(new.recovery_mode, RecoveryMode::RestartRound);
    }
}
