//! The leader's lease: heartbeats fenced by the epoch and never moving the checkpoint floor
//! back, claims refused while the lease runs, without a certified checkpoint or below the
//! floor, the new epoch after a claim, and `abort` rooms failing instead.

use aigenora::api::group::{CertifiedCheckpoint, ClaimLeader, GroupStatus, LeaderHeartbeat};
use aigenora::api::invitation::BrowseFilter;

use super::{COMMUNITY_ROOM, Room, edited_spec, lease_expired, reference_spec, refusal};
use crate::support::server::{TestServer, fake_ticket};

/// A 64-hex hash made of one repeated digit.
fn hash(digit: char) -> String {
    std::iter::repeat_n(digit, 64).collect()
}

#[tokio::test]
async fn heartbeats_are_fenced_and_the_checkpoint_floor_never_goes_back() {
    let server = TestServer::start(&["--group-lease", "3"]);
    let room = Room::open(&server, reference_spec(COMMUNITY_ROOM)).await;
    assert_eq!(room.group.leader_lease_seconds, 3);
    let (member, client) = server.registered("member").await;
    room.join(&member, &client).await.unwrap();
    let group = room.read().await;
    let owner = &room.owner_client;
    let beat = |seq, digit| {
        LeaderHeartbeat::signed(&room.owner, &group, seq, &hash(digit), &fake_ticket(9))
    };

    // The first real checkpoint may replace the empty floor at sequence number 0.
    assert_eq!(
        owner
            .renew_leader(room.id(), &beat(0, 'a'))
            .await
            .unwrap()
            .checkpoint_hash,
        hash('a')
    );
    let renewed = owner.renew_leader(room.id(), &beat(5, 'b')).await.unwrap();
    assert_eq!(
        (renewed.checkpoint_seq, renewed.checkpoint_hash.as_str()),
        (5, hash('b').as_str())
    );
    assert_eq!(
        refusal(owner.renew_leader(room.id(), &beat(4, 'c')).await),
        (409, "checkpoint_behind".into())
    );
    assert_eq!(
        refusal(owner.renew_leader(room.id(), &beat(5, 'c')).await),
        (409, "checkpoint_conflict".into())
    );
    owner.renew_leader(room.id(), &beat(5, 'b')).await.unwrap();
    let mut unbound = beat(6, 'd');
    unbound.iroh_ticket = fake_ticket(10);
    assert_eq!(
        refusal(owner.renew_leader(room.id(), &unbound).await),
        (400, "invalid_binding_signature".into())
    );
    let mut bad_hash = beat(6, 'd');
    bad_hash.checkpoint_hash = hash('D');
    assert_eq!(
        refusal(owner.renew_leader(room.id(), &bad_hash).await),
        (400, "invalid_checkpoint".into())
    );
    let mut other_epoch = beat(6, 'd');
    other_epoch.leader_epoch = 1;
    assert_eq!(
        refusal(owner.renew_leader(room.id(), &other_epoch).await),
        (409, "epoch_mismatch".into())
    );
    let by_member = LeaderHeartbeat::signed(&member, &group, 6, &hash('d'), &fake_ticket(11));
    assert_eq!(
        refusal(client.renew_leader(room.id(), &by_member).await),
        (403, "not_leader".into())
    );
    let floor = room.read().await;
    assert_eq!(
        (floor.checkpoint_seq, floor.checkpoint_hash.as_str()),
        (5, hash('b').as_str())
    );

    // The leader stops; the member takes over from a checkpoint the leader certified.
    let expired = lease_expired(&client, room.id()).await;
    let certified = CertifiedCheckpoint::sign(&room.owner, &expired, 7, &hash('e'), 2, &hash('f'));
    let claimed = client
        .claim_leader(
            room.id(),
            &ClaimLeader::signed(&member, &expired, &certified, &fake_ticket(12)),
        )
        .await
        .unwrap();
    assert_eq!(
        (claimed.leader_epoch, claimed.leader_public_key.as_str()),
        (1, member.public_key())
    );
    assert_eq!(
        (claimed.checkpoint_seq, claimed.checkpoint_hash.as_str()),
        (7, hash('f').as_str())
    );
    assert_eq!(claimed.iroh_ticket, fake_ticket(12));
    assert!(!claimed.lease_expired());

    // The old leader is fenced off; the new one heartbeats in its epoch.
    assert_eq!(
        refusal(owner.renew_leader(room.id(), &beat(8, '1')).await),
        (409, "epoch_mismatch".into())
    );
    let stale_leader =
        LeaderHeartbeat::signed(&room.owner, &claimed, 8, &hash('1'), &fake_ticket(9));
    assert_eq!(
        refusal(owner.renew_leader(room.id(), &stale_leader).await),
        (403, "not_leader".into())
    );
    assert_eq!(
        refusal(
            owner
                .set_group_status(room.id(), 0, GroupStatus::Active)
                .await
        ),
        (409, "epoch_mismatch".into())
    );
    let beat = LeaderHeartbeat::signed(&member, &claimed, 8, &hash('2'), &fake_ticket(12));
    assert_eq!(
        client
            .renew_leader(room.id(), &beat)
            .await
            .unwrap()
            .checkpoint_seq,
        8
    );
    let active = client
        .set_group_status(room.id(), 1, GroupStatus::Active)
        .await
        .unwrap();
    assert_eq!(active.status, GroupStatus::Active);
}

#[tokio::test]
async fn a_claim_needs_an_expired_lease_a_certified_checkpoint_and_the_floor() {
    let server = TestServer::start(&["--group-lease", "3"]);
    let room = Room::open(&server, reference_spec(COMMUNITY_ROOM)).await;
    let (member, client) = server.registered("member").await;
    let (outsider, outsider_client) = server.registered("outsider").await;
    room.join(&member, &client).await.unwrap();
    let group = room.read().await;
    let beat = LeaderHeartbeat::signed(&room.owner, &group, 4, &hash('4'), &fake_ticket(9));
    room.owner_client
        .renew_leader(room.id(), &beat)
        .await
        .unwrap();
    let group = room.read().await;
    let claim = |checkpoint: &CertifiedCheckpoint| {
        ClaimLeader::signed(&member, &group, checkpoint, &fake_ticket(13))
    };
    let certified = CertifiedCheckpoint::sign(&room.owner, &group, 6, &hash('e'), 2, &hash('6'));
    assert_eq!(
        refusal(client.claim_leader(room.id(), &claim(&certified)).await),
        (409, "lease_active".into())
    );

    let group = lease_expired(&client, room.id()).await;
    let self_certified = CertifiedCheckpoint::sign(&member, &group, 6, &hash('e'), 2, &hash('6'));
    assert_eq!(
        refusal(
            client
                .claim_leader(room.id(), &claim(&self_certified))
                .await
        ),
        (400, "invalid_checkpoint_signature".into())
    );
    let mut next_epoch = group.clone();
    next_epoch.leader_epoch = 1;
    let other_epoch =
        CertifiedCheckpoint::sign(&room.owner, &next_epoch, 6, &hash('e'), 2, &hash('6'));
    assert_eq!(
        refusal(client.claim_leader(room.id(), &claim(&other_epoch)).await),
        (400, "invalid_checkpoint_signature".into()),
        "certified for another epoch"
    );
    let behind = CertifiedCheckpoint::sign(&room.owner, &group, 3, &hash('e'), 2, &hash('3'));
    assert_eq!(
        refusal(client.claim_leader(room.id(), &claim(&behind)).await),
        (409, "checkpoint_behind".into())
    );
    let mut wrong_epoch = claim(&certified);
    wrong_epoch.expected_epoch = 1;
    assert_eq!(
        refusal(client.claim_leader(room.id(), &wrong_epoch).await),
        (409, "epoch_mismatch".into())
    );
    let by_outsider = ClaimLeader::signed(&outsider, &group, &certified, &fake_ticket(14));
    assert_eq!(
        refusal(outsider_client.claim_leader(room.id(), &by_outsider).await),
        (403, "not_member".into())
    );
    let mut unbound = claim(&certified);
    unbound.iroh_ticket = fake_ticket(15);
    assert_eq!(
        refusal(client.claim_leader(room.id(), &unbound).await),
        (400, "invalid_binding_signature".into())
    );
    assert_eq!(
        room.read().await.leader_epoch,
        0,
        "no refused claim changed anything"
    );

    // The floor itself needs no certificate: it was certified when it was reported.
    let floor = CertifiedCheckpoint {
        seq: 4,
        checkpoint_hash: hash('4'),
        frame_hash: hash('0'),
        membership_version: 0,
        signature: "00".repeat(64),
    };
    let claimed = client
        .claim_leader(room.id(), &claim(&floor))
        .await
        .unwrap();
    assert_eq!((claimed.leader_epoch, claimed.checkpoint_seq), (1, 4));
    assert_eq!(
        refusal(client.claim_leader(room.id(), &claim(&floor)).await),
        (400, "already_leader".into())
    );
}

#[tokio::test]
async fn an_abort_room_fails_when_its_leader_dies_and_its_invitation_closes() {
    let server = TestServer::start(&["--group-lease", "3"]);
    let spec = edited_spec(COMMUNITY_ROOM, |spec| {
        spec["name"] = "Abort Room".into();
        spec["flow"]["group"]["recovery_mode"] = "abort".into();
    });
    let room = Room::open(&server, spec).await;
    assert_eq!(
        room.group.recovery_mode,
        aigenora::api::group::RecoveryMode::Abort
    );
    let (member, client) = server.registered("member").await;
    room.join(&member, &client).await.unwrap();
    let group = lease_expired(&client, room.id()).await;
    let certified = CertifiedCheckpoint::sign(&room.owner, &group, 0, &hash('e'), 2, &hash('0'));
    let claim = ClaimLeader::signed(&member, &group, &certified, &fake_ticket(16));
    assert_eq!(
        refusal(client.claim_leader(room.id(), &claim).await),
        (409, "recovery_abort".into())
    );
    let failed = room.read().await;
    assert_eq!(
        (failed.status, failed.leader_epoch),
        (GroupStatus::Failed, 0)
    );
    let listed = client.browse(&BrowseFilter::default()).await.unwrap();
    assert!(listed.results.is_empty(), "a failed room is not offered");
    assert_eq!(
        refusal(client.claim_leader(room.id(), &claim).await),
        (409, "group_closed".into())
    );
}
