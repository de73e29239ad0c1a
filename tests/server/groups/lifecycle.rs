//! A room's life: opened by its invitation's owner with the contract's policy, read by id
//! and by invitation, started, closed (its invitation leaves the list), and what refuses
//! to open one.

use aigenora::api::group::{EMPTY_CHECKPOINT_HASH, GroupStatus, LeaderHeartbeat, MemberStatus};
use aigenora::api::invitation::BrowseFilter;
use aigenora::client::RestClient;
use aigenora::identity::Identity;

use super::{COMMUNITY_ROOM, Room, TEXAS_HOLDEM, invitation, policy, reference_spec, refusal};
use crate::support::server::{TestServer, fake_ticket, register_test_protocol};

async fn offered(client: &RestClient) -> Vec<String> {
    let list = client.browse(&BrowseFilter::default()).await.unwrap();
    list.results.into_iter().map(|item| item.post_id).collect()
}

#[tokio::test]
async fn a_room_goes_from_lobby_to_active_to_closed_and_its_invitation_leaves_the_list() {
    let server = TestServer::start(&[]);
    let room = Room::open(&server, reference_spec(COMMUNITY_ROOM)).await;
    let g = &room.group;
    let owner = room.owner.public_key();
    assert_eq!(g.group_id.len(), 32);
    assert!(
        g.group_id
            .bytes()
            .all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase())
    );
    assert_eq!(
        (g.status, g.leader_epoch, g.membership_version),
        (GroupStatus::Lobby, 0, 1)
    );
    assert_eq!(
        (g.checkpoint_seq, g.checkpoint_hash.as_str()),
        (0, EMPTY_CHECKPOINT_HASH)
    );
    assert_eq!(g.leader_public_key, owner);
    assert_eq!(
        (g.min_participants, g.max_participants, g.allow_late_join),
        (2, 32, true)
    );
    assert_eq!((g.participant_count, g.leader_lease_seconds), (1, 15));
    assert!(!g.lease_expired() && g.leader_lease_expires_at > g.server_time);
    let seat_zero = g.member(owner).unwrap();
    assert_eq!(
        (seat_zero.seat, seat_zero.status),
        (0, MemberStatus::Active)
    );
    let invitation = room.owner_client.invitation(&room.post_id).await.unwrap();
    assert_eq!(Some(&g.iroh_ticket), invitation.iroh_ticket.as_ref());
    assert_eq!(
        Some(&g.transport_binding_signature),
        invitation.transport_binding_signature.as_ref()
    );

    let (member, client) = server.registered("member").await;
    let by_post = client.group_by_post(&room.post_id).await.unwrap();
    assert_eq!(by_post.group_id, g.group_id);
    assert_eq!(by_post.protocol_id, invitation.protocol_id);
    let admitted = room.join(&member, &client).await.unwrap();
    assert_eq!((admitted.seat, admitted.membership_version), (1, 2));
    assert_eq!(admitted.member_id.len(), 32);

    let active = room
        .owner_client
        .set_group_status(room.id(), 0, GroupStatus::Active)
        .await
        .unwrap();
    assert_eq!(
        (active.status, active.participant_count),
        (GroupStatus::Active, 2)
    );
    assert_eq!(
        refusal(
            room.owner_client
                .set_group_status(room.id(), 0, GroupStatus::Lobby)
                .await
        ),
        (409, "invalid_transition".into())
    );
    assert_eq!(
        refusal(
            client
                .set_group_status(room.id(), 0, GroupStatus::Closed)
                .await
        ),
        (403, "not_leader".into()),
        "only the leader changes the status"
    );
    // A running room with late join stays offered while its leader heartbeats.
    let before = room
        .owner_client
        .invitation(&room.post_id)
        .await
        .unwrap()
        .expires_at;
    tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    let beat = LeaderHeartbeat::signed(
        &room.owner,
        &active,
        0,
        EMPTY_CHECKPOINT_HASH,
        &fake_ticket(8),
    );
    let renewed = room
        .owner_client
        .renew_leader(room.id(), &beat)
        .await
        .unwrap();
    assert_eq!(renewed.iroh_ticket, fake_ticket(8));
    let after = room
        .owner_client
        .invitation(&room.post_id)
        .await
        .unwrap()
        .expires_at;
    assert!(after > before, "{after:?} > {before:?}");
    assert_eq!(offered(&client).await, vec![room.post_id.clone()]);

    let closed = room
        .owner_client
        .set_group_status(room.id(), 0, GroupStatus::Closed)
        .await
        .unwrap();
    assert_eq!(closed.status, GroupStatus::Closed);
    assert!(
        offered(&client).await.is_empty(),
        "a closed room is not offered"
    );
    assert_eq!(refusal(client.invitation(&room.post_id).await).0, 409);
    assert_eq!(
        refusal(room.owner_client.renew_leader(room.id(), &beat).await),
        (409, "group_closed".into())
    );
    assert_eq!(
        refusal(
            room.owner_client
                .set_group_status(room.id(), 0, GroupStatus::Active)
                .await
        ),
        (409, "invalid_transition".into())
    );
    let (late, late_client) = server.registered("late").await;
    assert_eq!(
        refusal(room.join(&late, &late_client).await),
        (409, "group_closed".into())
    );
    assert_eq!(
        refusal(client.group("0123456789abcdef0123456789abcdef").await),
        (404, "not_found".into())
    );
}

#[tokio::test]
async fn a_failed_room_closes_its_invitation_too() {
    let server = TestServer::start(&[]);
    let room = Room::open(&server, reference_spec(TEXAS_HOLDEM)).await;
    let failed = room
        .owner_client
        .set_group_status(room.id(), 0, GroupStatus::Failed)
        .await
        .unwrap();
    assert_eq!(failed.status, GroupStatus::Failed);
    assert!(offered(&room.owner_client).await.is_empty());
    assert_eq!(
        room.owner_client
            .invitation(&room.post_id)
            .await
            .unwrap()
            .status,
        "closed"
    );
}

#[tokio::test]
async fn only_the_owner_opens_a_room_with_its_contracts_policy_once() {
    let server = TestServer::start(&[]);
    let (owner, owner_client) = server.registered("owner").await;
    let (post_id, spec) = invitation(&owner, &owner_client, reference_spec(TEXAS_HOLDEM)).await;
    let (_, stranger) = server.registered("stranger").await;
    assert_eq!(
        refusal(stranger.create_group(&policy(&spec, &post_id)).await),
        (403, "not_owner".into())
    );
    let mismatches = [
        ("min_participants", {
            let mut p = policy(&spec, &post_id);
            p.min_participants = 2;
            p
        }),
        ("max_participants", {
            let mut p = policy(&spec, &post_id);
            p.max_participants = 5;
            p
        }),
        ("allow_late_join", {
            let mut p = policy(&spec, &post_id);
            p.allow_late_join = true;
            p
        }),
        ("recovery_mode", {
            let mut p = policy(&spec, &post_id);
            p.recovery_mode = aigenora::api::group::RecoveryMode::Exact;
            p
        }),
    ];
    for (field, body) in mismatches {
        let error = owner_client.create_group(&body).await.unwrap_err();
        assert_eq!(
            (error.status(), error.code()),
            (Some(400), Some("group_policy_mismatch")),
            "{field}"
        );
        assert!(error.to_string().contains(field), "{field}: {error}");
    }
    let group = owner_client
        .create_group(&policy(&spec, &post_id))
        .await
        .unwrap();
    assert_eq!((group.max_participants, group.allow_late_join), (4, false));
    assert_eq!(
        refusal(owner_client.create_group(&policy(&spec, &post_id)).await),
        (409, "group_exists".into())
    );
    assert_eq!(
        refusal(
            owner_client
                .create_group(&policy(&spec, "nosuchpost"))
                .await
        ),
        (404, "not_found".into())
    );

    // A one-to-one protocol has no room.
    let protocol_id = register_test_protocol(&owner_client, "Duel", 1).await;
    let new =
        aigenora::api::invitation::NewInvitation::signed(&owner, &protocol_id, &fake_ticket(3));
    let one_to_one = owner_client.create_invitation(&new).await.unwrap().post_id;
    assert_eq!(
        refusal(owner_client.create_group(&policy(&spec, &one_to_one)).await),
        (400, "not_a_group_protocol".into())
    );
    assert_eq!(
        refusal(owner_client.group_by_post(&one_to_one).await),
        (404, "not_found".into())
    );

    // An unregistered key cannot write at all (the signature gate).
    let unregistered = server.client(&Identity::generate());
    assert_eq!(
        refusal(unregistered.create_group(&policy(&spec, &post_id)).await),
        (403, "not_registered".into())
    );
}

#[test]
fn the_lease_flag_takes_3_to_300_seconds() {
    for lease in ["2", "301", "x"] {
        let output = crate::support::cli::aigenora()
            .args([
                "server",
                "--listen",
                "127.0.0.1:0",
                "--database",
                "sqlite::memory:",
            ])
            .args(["--group-lease", lease])
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{lease}: {stderr}");
        assert!(stderr.contains("--group-lease"), "{lease}: {stderr}");
    }
}
