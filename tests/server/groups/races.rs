//! Races: twenty members claiming one expired lease at once elect exactly one leader, and
//! twenty keys joining a four-seat table at once fill its three free seats, each its own —
//! on one server (the backend under test) and on two instances sharing one PostgreSQL
//! database, their requests spread over both.

use std::collections::HashSet;

use aigenora::api::group::{CertifiedCheckpoint, ClaimLeader, MemberStatus};
use aigenora::client::RestClient;
use aigenora::identity::Identity;

use super::{COMMUNITY_ROOM, Room, TEXAS_HOLDEM, lease_expired, reference_spec};
use crate::support::postgres::Backend;
use crate::support::server::{TestServer, fake_ticket};

/// Load from one address: no per-address limits, a cheap proof of work, a short lease.
const BURSTY: &[&str] = &[
    "--address-rate",
    "0",
    "--connections-per-address",
    "0",
    "--challenges-per-address",
    "1000",
    "--pow-difficulty",
    "1",
    "--group-lease",
    "3",
];

/// `n` registered keys, each with a client of one of `servers` in turn.
async fn keys(servers: &[&TestServer], n: usize) -> Vec<(Identity, RestClient)> {
    let registrations = (0..n).map(|i| {
        let identity = Identity::generate();
        let client = servers[i % servers.len()].client(&identity);
        async move {
            client.register(&format!("k{i}"), "").await.unwrap();
            (identity, client)
        }
    });
    futures_util::future::join_all(registrations).await
}

async fn twenty_claimants_elect_one_leader(servers: &[&TestServer]) {
    let room = Room::open(servers[0], reference_spec(COMMUNITY_ROOM)).await;
    let members = keys(servers, 20).await;
    for (member, client) in &members {
        room.join(member, client).await.unwrap();
    }
    let group = lease_expired(&room.owner_client, room.id()).await;
    assert_eq!(group.participant_count, 21);
    let certified =
        CertifiedCheckpoint::sign(&room.owner, &group, 3, &"e".repeat(64), 21, &"c".repeat(64));
    let claims = members.iter().enumerate().map(|(i, (member, client))| {
        let claim = ClaimLeader::signed(member, &group, &certified, &fake_ticket(100 + i as u32));
        let group_id = room.id();
        async move {
            (
                member.public_key().to_string(),
                client.claim_leader(group_id, &claim).await,
            )
        }
    });
    let mut winners = Vec::new();
    for (key, outcome) in futures_util::future::join_all(claims).await {
        match outcome {
            Ok(group) => winners.push((key, group)),
            Err(error) => {
                assert_eq!(error.status(), Some(409), "{error}");
                assert!(
                    matches!(
                        error.code(),
                        Some("epoch_mismatch" | "claim_lost" | "lease_active")
                    ),
                    "{error}"
                );
            }
        }
    }
    assert_eq!(winners.len(), 1, "exactly one claim wins");
    let (winner, won) = &winners[0];
    assert_eq!((won.leader_epoch, &won.leader_public_key), (1, winner));
    let stored = room.read().await;
    assert_eq!(
        (stored.leader_epoch, &stored.leader_public_key),
        (1, winner)
    );
    assert_eq!(stored.checkpoint_seq, 3);
}

async fn twenty_joiners_fill_three_seats(servers: &[&TestServer]) {
    let room = Room::open(servers[0], reference_spec(TEXAS_HOLDEM)).await;
    let joiners = keys(servers, 20).await;
    let admissions = joiners.iter().map(|(member, client)| {
        let room = &room;
        async move { room.join(member, client).await }
    });
    let mut seats = Vec::new();
    for outcome in futures_util::future::join_all(admissions).await {
        match outcome {
            Ok(admitted) => seats.push(admitted.seat),
            Err(error) => assert_eq!(
                (error.status(), error.code()),
                (Some(409), Some("group_full")),
                "{error}"
            ),
        }
    }
    seats.sort();
    assert_eq!(seats, vec![1, 2, 3], "three free seats, each taken once");
    let group = room.read().await;
    assert_eq!(group.participant_count, 4);
    let active: HashSet<u32> = group
        .members
        .iter()
        .filter(|m| m.status == MemberStatus::Active)
        .map(|m| m.seat)
        .collect();
    assert_eq!(active, HashSet::from([0, 1, 2, 3]));
    assert_eq!(group.membership_version, 4, "one version per admission");
}

#[tokio::test]
async fn twenty_concurrent_claimants_elect_exactly_one_leader() {
    let server = TestServer::start(BURSTY);
    twenty_claimants_elect_one_leader(&[&server]).await;
}

#[tokio::test]
async fn twenty_concurrent_joiners_of_a_four_seat_table_take_three_distinct_seats() {
    let server = TestServer::start(BURSTY);
    twenty_joiners_fill_three_seats(&[&server]).await;
}

#[tokio::test]
async fn two_instances_on_one_database_elect_exactly_one_leader() {
    let first = TestServer::start_with(Backend::Postgres, BURSTY);
    let second = first.another_instance(BURSTY);
    twenty_claimants_elect_one_leader(&[&first, &second]).await;
}

#[tokio::test]
async fn two_instances_on_one_database_never_overfill_a_table() {
    let first = TestServer::start_with(Backend::Postgres, BURSTY);
    let second = first.another_instance(BURSTY);
    twenty_joiners_fill_three_seats(&[&first, &second]).await;
}
