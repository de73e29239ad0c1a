//! Room calls (`/api/v1/groups`): open a room, read it, admission, member and leader
//! heartbeats, leaving, a failover claim, status changes.

use reqwest::Method;

use super::{ClientError, RestClient};
use crate::api::group::{
    ClaimLeader, Group, GroupStatus, GroupStatusUpdate, LeaderHeartbeat, MemberAdmitted, NewGroup,
    NewMember,
};
use crate::api::is_url_safe_id;

impl RestClient {
    /// `POST /groups` (the invitation's owner) → the new room (201; 200 accepted too).
    pub async fn create_group(&self, group: &NewGroup) -> Result<Group, ClientError> {
        let target = "/api/v1/groups";
        self.call(Method::POST, target, Some(group), &[200, 201])
            .await?
            .json(Method::POST, target)
    }

    /// `GET /groups/{group_id}`.
    pub async fn group(&self, group_id: &str) -> Result<Group, ClientError> {
        self.get_group(&group_target(group_id, "")?).await
    }

    /// `GET /groups/by-post/{post_id}`: the room of an invitation.
    pub async fn group_by_post(&self, post_id: &str) -> Result<Group, ClientError> {
        if !is_url_safe_id(post_id) {
            return Err(ClientError::InvalidId {
                what: "post_id",
                value: post_id.to_string(),
            });
        }
        self.get_group(&format!("/api/v1/groups/by-post/{post_id}"))
            .await
    }

    async fn get_group(&self, target: &str) -> Result<Group, ClientError> {
        self.call(Method::GET, target, None::<&()>, &[200])
            .await?
            .json(Method::GET, target)
    }

    /// `POST /groups/{id}/members` (the member, after the leader's admission frame) → its
    /// member id and seat (201 for a key new to the room, 200 for one it knows).
    pub async fn admit_member(
        &self,
        group_id: &str,
        admission: &NewMember,
    ) -> Result<MemberAdmitted, ClientError> {
        let target = group_target(group_id, "/members")?;
        self.call(Method::POST, &target, Some(admission), &[200, 201])
            .await?
            .json(Method::POST, &target)
    }

    /// `POST /groups/{id}/members/heartbeat` with `{}` (an active member; 409
    /// `member_left` once the server counted it as gone: it must be admitted again).
    pub async fn heartbeat_member(&self, group_id: &str) -> Result<Group, ClientError> {
        self.post_empty(group_id, "/members/heartbeat").await
    }

    /// `POST /groups/{id}/leave` with `{}`: this member gives up its seat.
    pub async fn leave_group(&self, group_id: &str) -> Result<Group, ClientError> {
        self.post_empty(group_id, "/leave").await
    }

    /// `POST /groups/{id}/heartbeat` (the leader of `beat.leader_epoch`): lease, ticket and
    /// checkpoint floor renewed.
    pub async fn renew_leader(
        &self,
        group_id: &str,
        beat: &LeaderHeartbeat,
    ) -> Result<Group, ClientError> {
        self.post_group(group_id, "/heartbeat", beat).await
    }

    /// `POST /groups/{id}/claim-leader` (a member, once the lease ran out) → the room of
    /// the new epoch, led by this key.
    pub async fn claim_leader(
        &self,
        group_id: &str,
        claim: &ClaimLeader,
    ) -> Result<Group, ClientError> {
        self.post_group(group_id, "/claim-leader", claim).await
    }

    /// `POST /groups/{id}/status` (the leader of `leader_epoch`).
    pub async fn set_group_status(
        &self,
        group_id: &str,
        leader_epoch: u64,
        status: GroupStatus,
    ) -> Result<Group, ClientError> {
        let body = GroupStatusUpdate {
            leader_epoch,
            status,
        };
        self.post_group(group_id, "/status", &body).await
    }

    async fn post_empty(&self, group_id: &str, suffix: &str) -> Result<Group, ClientError> {
        self.post_group(group_id, suffix, &serde_json::Map::new())
            .await
    }

    async fn post_group(
        &self,
        group_id: &str,
        suffix: &str,
        body: &impl serde::Serialize,
    ) -> Result<Group, ClientError> {
        let target = group_target(group_id, suffix)?;
        self.call(Method::POST, &target, Some(body), &[200])
            .await?
            .json(Method::POST, &target)
    }
}

/// `/api/v1/groups/{group_id}{suffix}`, refusing ids that would need encoding.
fn group_target(group_id: &str, suffix: &str) -> Result<String, ClientError> {
    if !is_url_safe_id(group_id) {
        return Err(ClientError::InvalidId {
            what: "group_id",
            value: group_id.to_string(),
        });
    }
    Ok(format!("/api/v1/groups/{group_id}{suffix}"))
}
