//! Rooms over real HTTP (`/api/v1/groups`): a room's life and its invitation, admission and
//! seats, silent members, the leader's lease and heartbeats, failover claims, and races of
//! many joiners or claimants (on one server, and on two instances sharing PostgreSQL). The
//! rooms run the reference's own contracts: Community Room (late join) and Texas Hold'em
//! (four fixed seats, no late join).

mod leadership;
mod lifecycle;
mod races;
mod seats;

use std::time::{Duration, Instant};

use aigenora::api::group::{Group, MemberAdmitted, NewGroup, NewMember};
use aigenora::api::invitation::NewInvitation;
use aigenora::api::protocol::NewProtocol;
use aigenora::client::{ClientError, RestClient};
use aigenora::identity::Identity;
use aigenora::spec::Spec;
use serde_json::Value;

use crate::support::reference::reference_contract;
use crate::support::server::{TestServer, fake_ticket};

/// The reference's chat room: 2-32 seats, late join, exact recovery.
pub const COMMUNITY_ROOM: &str = "community-room-v1";
/// The reference's poker table: 4 fixed seats, no late join, restart_round recovery.
pub const TEXAS_HOLDEM: &str = "texas-holdem-v1";

/// A reference contract's spec.json, as JSON.
pub fn reference_spec(alias: &str) -> Value {
    let contract = reference_contract(alias);
    serde_json::from_slice(&std::fs::read(&contract.spec).unwrap()).unwrap()
}

/// The policy `POST /groups` must send for `spec`.
pub fn policy(spec: &Value, post_id: &str) -> NewGroup {
    let group = &spec["flow"]["group"];
    NewGroup {
        post_id: post_id.to_string(),
        min_participants: group["min_participants"].as_u64().unwrap() as u32,
        max_participants: group["max_participants"].as_u64().unwrap() as u32,
        allow_late_join: group["allow_late_join"].as_bool().unwrap(),
        recovery_mode: group["recovery_mode"].as_str().unwrap().parse().unwrap(),
    }
}

/// Registers `spec` through `client`; its protocol_id.
pub async fn register_spec(client: &RestClient, spec: &Value) -> String {
    let spec = Spec::from_value(spec.clone()).unwrap();
    let body = NewProtocol::for_spec(&spec);
    client.register_protocol(&body).await.unwrap();
    body.protocol_id
}

/// An offered invitation of a room and the room itself, opened by its owner (the leader).
pub struct Room {
    pub owner: Identity,
    pub owner_client: RestClient,
    pub post_id: String,
    pub group: Group,
}

impl Room {
    /// Registers an owner and `spec`, posts an invitation, opens its room.
    pub async fn open(server: &TestServer, spec: Value) -> Room {
        let (owner, owner_client) = server.registered("owner").await;
        let (post_id, spec) = invitation(&owner, &owner_client, spec).await;
        let policy = policy(&spec, &post_id);
        let group = owner_client.create_group(&policy).await.unwrap();
        Room {
            owner,
            owner_client,
            post_id,
            group,
        }
    }

    pub fn id(&self) -> &str {
        &self.group.group_id
    }

    /// The room as it is now.
    pub async fn read(&self) -> Group {
        self.owner_client.group(self.id()).await.unwrap()
    }

    /// Admits `member` through `client` the way a member does after the leader's admission
    /// frame (its leader is the owner unless `leader` says otherwise).
    pub async fn join(
        &self,
        member: &Identity,
        client: &RestClient,
    ) -> Result<MemberAdmitted, ClientError> {
        self.join_led_by(&self.owner, member, client).await
    }

    pub async fn join_led_by(
        &self,
        leader: &Identity,
        member: &Identity,
        client: &RestClient,
    ) -> Result<MemberAdmitted, ClientError> {
        let group = client.group(self.id()).await?;
        let nonce = aigenora::identity::new_session_nonce();
        let statement = group.admission_statement(member.public_key(), &nonce);
        let leader_signature = leader.sign_hex(statement.as_bytes());
        client
            .admit_member(
                self.id(),
                &NewMember::signed(member, &group, &nonce, &leader_signature),
            )
            .await
    }
}

/// Posts an invitation of `spec` (registered first) as `owner`: its post id and the spec.
pub async fn invitation(owner: &Identity, client: &RestClient, spec: Value) -> (String, Value) {
    let protocol_id = register_spec(client, &spec).await;
    let new = NewInvitation::signed(owner, &protocol_id, &fake_ticket(7));
    let post_id = client.create_invitation(&new).await.unwrap().post_id;
    (post_id, spec)
}

/// The HTTP status and error code of a refused call.
pub fn refusal<T: std::fmt::Debug>(result: Result<T, ClientError>) -> (u16, String) {
    let error = result.expect_err("the call must be refused");
    (
        error.status().unwrap_or(0),
        error.code().unwrap_or_default().to_string(),
    )
}

/// Polls the room until `done` holds (at most `limit`), returning it then.
pub async fn wait_until(
    client: &RestClient,
    group_id: &str,
    limit: Duration,
    mut done: impl FnMut(&Group) -> bool,
) -> Group {
    let started = Instant::now();
    loop {
        let group = client.group(group_id).await.unwrap();
        if done(&group) {
            return group;
        }
        assert!(
            started.elapsed() < limit,
            "the room did not get there within {limit:?}: {group:?}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Waits until the room's leader lease has run out by the server's clock.
pub async fn lease_expired(client: &RestClient, group_id: &str) -> Group {
    wait_until(
        client,
        group_id,
        Duration::from_secs(20),
        Group::lease_expired,
    )
    .await
}

/// A spec of a room as the reference's, changed by `edit` (a new protocol_id).
pub fn edited_spec(alias: &str, edit: impl FnOnce(&mut Value)) -> Value {
    let mut spec = reference_spec(alias);
    edit(&mut spec);
    spec
}
