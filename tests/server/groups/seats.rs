//! Admission and seats: both signatures over the current epoch's statement, the lowest free
//! seat, the same seat again, late join as the contract says, a full table, and members
//! that go silent losing their seat.

use std::time::Duration;

use aigenora::api::group::{GroupStatus, MemberStatus, NewMember};
use aigenora::identity::Identity;

use super::{COMMUNITY_ROOM, Room, TEXAS_HOLDEM, reference_spec, refusal, wait_until};
use crate::support::server::TestServer;

#[tokio::test]
async fn an_admission_needs_both_signatures_over_the_current_epoch() {
    let server = TestServer::start(&[]);
    let room = Room::open(&server, reference_spec(COMMUNITY_ROOM)).await;
    let (member, client) = server.registered("member").await;
    let group = room.read().await;
    let nonce = "n0nce_-X";
    let statement = group.admission_statement(member.public_key(), nonce);
    let leader_signature = room.owner.sign_hex(statement.as_bytes());

    let forger = Identity::generate();
    let forged_leader = NewMember::signed(
        &member,
        &group,
        nonce,
        &forger.sign_hex(statement.as_bytes()),
    );
    let mut forged_member = NewMember::signed(&member, &group, nonce, &leader_signature);
    forged_member.member_signature = forger.sign_hex(statement.as_bytes());
    let mut other_nonce = NewMember::signed(&member, &group, nonce, &leader_signature);
    other_nonce.join_nonce = "another".into();
    let mut wrong_epoch = NewMember::signed(&member, &group, nonce, &leader_signature);
    wrong_epoch.leader_epoch = 1;
    let mut bad_nonce = NewMember::signed(&member, &group, nonce, &leader_signature);
    bad_nonce.join_nonce = "a:b".into();
    for (what, body, expected) in [
        (
            "forged leader signature",
            forged_leader,
            (400, "invalid_admission_signature"),
        ),
        (
            "forged member signature",
            forged_member,
            (400, "invalid_admission_signature"),
        ),
        (
            "signatures over another nonce",
            other_nonce,
            (400, "invalid_admission_signature"),
        ),
        ("another epoch", wrong_epoch, (409, "epoch_mismatch")),
        (
            "a nonce with a separator",
            bad_nonce,
            (400, "invalid_join_nonce"),
        ),
    ] {
        let (status, code) = refusal(client.admit_member(room.id(), &body).await);
        assert_eq!((status, code.as_str()), expected, "{what}");
    }
    assert_eq!(
        room.read().await.participant_count,
        1,
        "nothing was admitted"
    );
    assert_eq!(
        refusal(room.join(&room.owner, &room.owner_client).await),
        (400, "leader_cannot_join".into())
    );
    let admitted = client
        .admit_member(
            room.id(),
            &NewMember::signed(&member, &group, nonce, &leader_signature),
        )
        .await
        .unwrap();
    assert_eq!(admitted.seat, 1);
    assert_eq!(admitted.public_key, member.public_key());
}

#[tokio::test]
async fn seats_are_the_lowest_free_ones_and_come_back_to_returning_members() {
    let server = TestServer::start(&[]);
    let room = Room::open(&server, reference_spec(COMMUNITY_ROOM)).await;
    let mut members = Vec::new();
    for name in ["a", "b", "c", "d"] {
        members.push(server.registered(name).await);
    }
    let [(a, a_client), (b, b_client), (c, c_client), (d, d_client)] = &members[..] else {
        unreachable!()
    };
    let a_seat = room.join(a, a_client).await.unwrap();
    assert_eq!(room.join(b, b_client).await.unwrap().seat, 2);
    assert_eq!(room.join(c, c_client).await.unwrap().seat, 3);
    let version = room.read().await.membership_version;
    let again = room.join(a, a_client).await.unwrap();
    assert_eq!(
        (again.seat, &again.member_id),
        (1, &a_seat.member_id),
        "the same seat again"
    );
    assert_eq!(
        room.read().await.membership_version,
        version,
        "no change, no new version"
    );

    let left = b_client.leave_group(room.id()).await.unwrap();
    assert_eq!(
        left.member(b.public_key()).unwrap().status,
        MemberStatus::Left
    );
    assert_eq!(
        (left.participant_count, left.membership_version),
        (3, version + 1)
    );
    assert_eq!(
        refusal(b_client.heartbeat_member(room.id()).await),
        (409, "member_left".into())
    );
    let d_seat = room.join(d, d_client).await.unwrap();
    assert_eq!(d_seat.seat, 2, "the lowest free seat");
    let b_back = room.join(b, b_client).await.unwrap();
    assert_eq!(b_back.seat, 4, "its seat is taken: the lowest free one");
    let c_id = c_client
        .leave_group(room.id())
        .await
        .unwrap()
        .member(c.public_key())
        .unwrap()
        .member_id
        .clone();
    let c_back = room.join(c, c_client).await.unwrap();
    assert_eq!(
        (c_back.seat, c_back.member_id),
        (3, c_id),
        "its own seat, still free"
    );
    assert_eq!(
        refusal(room.owner_client.leave_group(room.id()).await),
        (409, "leader_cannot_leave".into())
    );

    // Late join: a running room with allow_late_join takes new members.
    room.owner_client
        .set_group_status(room.id(), 0, GroupStatus::Active)
        .await
        .unwrap();
    let (late, late_client) = server.registered("late").await;
    assert_eq!(room.join(&late, &late_client).await.unwrap().seat, 5);
    let group = room.read().await;
    let seats: Vec<(u32, MemberStatus)> = group
        .members
        .iter()
        .filter(|m| m.status == MemberStatus::Active)
        .map(|m| (m.seat, m.status))
        .collect();
    assert_eq!(seats.len(), 6);
    assert_eq!(group.participant_count, 6);
}

#[tokio::test]
async fn a_fixed_table_is_full_at_four_and_takes_no_late_joiners() {
    let server = TestServer::start(&[]);
    let room = Room::open(&server, reference_spec(TEXAS_HOLDEM)).await;
    let mut players = Vec::new();
    for name in ["p1", "p2", "p3", "p4", "p5"] {
        players.push(server.registered(name).await);
    }
    for (seat, (player, client)) in players[..3].iter().enumerate() {
        assert_eq!(
            room.join(player, client).await.unwrap().seat,
            seat as u32 + 1
        );
    }
    let (fourth, fourth_client) = &players[3];
    assert_eq!(
        refusal(room.join(fourth, fourth_client).await),
        (409, "group_full".into())
    );

    room.owner_client
        .set_group_status(room.id(), 0, GroupStatus::Active)
        .await
        .unwrap();
    let (p2, p2_client) = &players[1];
    p2_client.leave_group(room.id()).await.unwrap();
    assert_eq!(
        refusal(room.join(fourth, fourth_client).await),
        (409, "late_join_closed".into()),
        "a running table without late join takes nobody new, even with a free seat"
    );
    assert_eq!(
        room.join(p2, p2_client).await.unwrap().seat,
        2,
        "its own seat back"
    );
    let (fifth, fifth_client) = &players[4];
    assert_eq!(refusal(room.join(fifth, fifth_client).await).0, 409);
}

#[tokio::test]
async fn a_silent_member_is_marked_left_and_its_seat_goes_to_another() {
    let server = TestServer::start(&["--group-member-timeout-seconds", "3"]);
    let room = Room::open(&server, reference_spec(TEXAS_HOLDEM)).await;
    let mut players = Vec::new();
    for name in ["talker", "silent", "other", "newcomer"] {
        players.push(server.registered(name).await);
    }
    for (player, client) in &players[..3] {
        room.join(player, client).await.unwrap();
    }
    let (silent, silent_client) = &players[1];
    let (talker_client, other_client) = (&players[0].1, &players[2].1);
    let started = std::time::Instant::now();
    let group = loop {
        talker_client.heartbeat_member(room.id()).await.unwrap();
        other_client.heartbeat_member(room.id()).await.unwrap();
        let group = room.read().await;
        if group.member(silent.public_key()).unwrap().status == MemberStatus::Left {
            break group;
        }
        assert!(started.elapsed() < Duration::from_secs(15), "{group:?}");
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    assert_eq!(group.participant_count, 3, "the leader is never timed out");
    assert_eq!(
        group.member(room.owner.public_key()).unwrap().status,
        MemberStatus::Active
    );
    let (newcomer, newcomer_client) = &players[3];
    assert_eq!(
        room.join(newcomer, newcomer_client).await.unwrap().seat,
        2,
        "the silent member's seat"
    );
    assert_eq!(
        refusal(silent_client.heartbeat_member(room.id()).await),
        (409, "member_left".into())
    );
    assert_eq!(
        refusal(room.join(silent, silent_client).await),
        (409, "group_full".into())
    );
    let stored = wait_until(&room.owner_client, room.id(), Duration::from_secs(1), |g| {
        g.participant_count == 4
    })
    .await;
    assert_eq!(stored.member(newcomer.public_key()).unwrap().seat, 2);
}
