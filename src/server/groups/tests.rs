//! The rules on hand-made room states: seats, silence, the floor, transitions, abort.

use super::*;
use crate::api::group::{
    ClaimLeader, EMPTY_CHECKPOINT_HASH, GroupStatusUpdate, LeaderHeartbeat, NewMember,
    RecoveryMode, StartPolicy, admission_canonical,
};
use crate::identity::{self, Identity, TRANSPORT_IROH};
use crate::server::store::{GroupRow, MemberRow};

const TIMING: Timing = Timing {
    now: 100_000,
    lease_ms: 15_000,
    member_timeout_ms: 30_000,
    invitation_ttl_ms: 300_000,
};

fn room(leader: &Identity, max: u32, late_join: bool) -> GroupState {
    GroupState {
        group: GroupRow {
            group_id: "g".repeat(32),
            post_id: "p1".into(),
            protocol_id: "a".repeat(64),
            owner_key: leader.public_key().into(),
            min_participants: 2,
            max_participants: max,
            allow_late_join: late_join,
            recovery_mode: RecoveryMode::Exact,
            start_policy: StartPolicy::MinReady,
            status: GroupStatus::Lobby,
            leader_key: leader.public_key().into(),
            leader_epoch: 0,
            lease_expires_at: TIMING.now + TIMING.lease_ms,
            iroh_ticket: "t".into(),
            transport_binding_signature: String::new(),
            membership_version: 1,
            checkpoint_seq: 0,
            checkpoint_hash: EMPTY_CHECKPOINT_HASH.into(),
            created_at: 0,
            updated_at: 0,
        },
        members: vec![member_row(leader, 0, TIMING.now)],
    }
}

fn member_row(key: &Identity, seat: u32, last_seen_at: i64) -> MemberRow {
    MemberRow {
        public_key: key.public_key().into(),
        member_id: new_id(),
        seat,
        status: MemberStatus::Active,
        join_nonce: String::new(),
        joined_at: 0,
        last_seen_at,
    }
}

fn admission(state: &GroupState, leader: &Identity, member: &Identity) -> NewMember {
    let g = &state.group;
    let statement = admission_canonical(
        &g.group_id,
        &g.leader_key,
        member.public_key(),
        &g.protocol_id,
        g.leader_epoch,
        "n1",
    );
    NewMember {
        join_nonce: "n1".into(),
        leader_epoch: g.leader_epoch,
        leader_signature: leader.sign_hex(statement.as_bytes()),
        member_signature: member.sign_hex(statement.as_bytes()),
    }
}

fn join(state: &mut GroupState, leader: &Identity, member: &Identity) -> ApiResult<u32> {
    let body = admission(state, leader, member);
    admit(state, member.public_key(), &body, &TIMING).map(|a| a.member.seat)
}

fn code<T>(result: ApiResult<T>) -> &'static str {
    result.err().expect("refused").code
}

#[test]
fn seats_go_lowest_first_come_back_and_stop_at_the_room_size() {
    let leader = Identity::generate();
    let keys: Vec<Identity> = (0..4).map(|_| Identity::generate()).collect();
    let mut state = room(&leader, 4, false);
    assert_eq!(join(&mut state, &leader, &keys[0]), Ok(1));
    assert_eq!(join(&mut state, &leader, &keys[1]), Ok(2));
    assert_eq!(join(&mut state, &leader, &keys[0]), Ok(1), "idempotent");
    assert_eq!(state.group.membership_version, 3);
    leave(&mut state, keys[0].public_key()).unwrap();
    assert_eq!(join(&mut state, &leader, &keys[2]), Ok(1), "the freed seat");
    assert_eq!(
        join(&mut state, &leader, &keys[0]),
        Ok(3),
        "its seat is taken"
    );
    assert_eq!(code(join(&mut state, &leader, &keys[3])), "group_full");

    state.group.status = GroupStatus::Active;
    leave(&mut state, keys[1].public_key()).unwrap();
    assert_eq!(
        code(join(&mut state, &leader, &keys[3])),
        "late_join_closed"
    );
    assert_eq!(
        join(&mut state, &leader, &keys[1]),
        Ok(2),
        "its own seat, still free"
    );
    leave(&mut state, keys[1].public_key()).unwrap();
    let ids: std::collections::HashSet<&str> =
        state.members.iter().map(|m| m.member_id.as_str()).collect();
    assert_eq!(ids.len(), state.members.len(), "one id per key, kept");
}

#[test]
fn a_returning_member_of_a_running_table_gets_only_its_own_seat() {
    let leader = Identity::generate();
    let (a, b, c) = (
        Identity::generate(),
        Identity::generate(),
        Identity::generate(),
    );
    let mut state = room(&leader, 4, false);
    for key in [&a, &b] {
        join(&mut state, &leader, key).unwrap();
    }
    leave(&mut state, a.public_key()).unwrap();
    state.group.status = GroupStatus::Active;
    // Seat 1 held by someone else meanwhile (late join was open then): no other seat for a.
    state.members.push(member_row(&c, 1, TIMING.now));
    assert_eq!(code(join(&mut state, &leader, &a)), "late_join_closed");
    state.group.allow_late_join = true;
    assert_eq!(join(&mut state, &leader, &a), Ok(3));
}

#[test]
fn a_running_room_seats_newcomers_away_from_the_seats_of_those_who_left() {
    let leader = Identity::generate();
    let keys: Vec<Identity> = (0..4).map(|_| Identity::generate()).collect();
    let mut state = room(&leader, 4, true);
    join(&mut state, &leader, &keys[0]).unwrap();
    leave(&mut state, keys[0].public_key()).unwrap();
    let mut lobby = state.clone();
    assert_eq!(
        join(&mut lobby, &leader, &keys[1]),
        Ok(1),
        "the lobby reuses it"
    );
    state.group.status = GroupStatus::Active;
    assert_eq!(join(&mut state, &leader, &keys[1]), Ok(2));
    assert_eq!(join(&mut state, &leader, &keys[2]), Ok(3));
    assert_eq!(
        join(&mut state, &leader, &keys[3]),
        Ok(1),
        "once every seat was held, the free one"
    );
}

#[test]
fn admissions_need_the_current_leader_and_epoch_and_an_open_room() {
    let leader = Identity::generate();
    let member = Identity::generate();
    let mut state = room(&leader, 4, true);
    let mut body = admission(&state, &leader, &member);
    body.leader_signature = member.sign_hex(b"something else");
    assert_eq!(
        code(admit(&mut state, member.public_key(), &body, &TIMING)),
        "invalid_admission_signature"
    );
    let signed_for_epoch_0 = admission(&state, &leader, &member);
    state.group.leader_epoch = 1;
    let mut stale = signed_for_epoch_0.clone();
    assert_eq!(
        code(admit(&mut state, member.public_key(), &stale, &TIMING)),
        "epoch_mismatch"
    );
    stale.leader_epoch = 1;
    assert_eq!(
        code(admit(&mut state, member.public_key(), &stale, &TIMING)),
        "invalid_admission_signature",
        "signed for another epoch"
    );
    state.group.status = GroupStatus::Closed;
    assert_eq!(
        code(admit(&mut state, member.public_key(), &stale, &TIMING)),
        "group_closed"
    );
    assert_eq!(state.members.len(), 1, "nothing seated");
}

#[test]
fn silent_members_but_the_leader_leave_with_one_new_version() {
    let leader = Identity::generate();
    let (quiet, quieter, talking) = (
        Identity::generate(),
        Identity::generate(),
        Identity::generate(),
    );
    let mut state = room(&leader, 8, true);
    state.members[0].last_seen_at = 0;
    let long_ago = TIMING.now - TIMING.member_timeout_ms - 1;
    state.members.push(member_row(&quiet, 1, long_ago));
    state.members.push(member_row(&quieter, 2, 0));
    state.members.push(member_row(
        &talking,
        3,
        TIMING.now - TIMING.member_timeout_ms,
    ));
    let shown = view(&state, &TIMING);
    assert_eq!((shown.participant_count, shown.membership_version), (2, 2));
    assert_eq!(
        state.members[1].status,
        MemberStatus::Active,
        "a read changes nothing"
    );
    expire_members(&mut state, &TIMING);
    let statuses: Vec<MemberStatus> = state.members.iter().map(|m| m.status).collect();
    use MemberStatus::{Active, Left};
    assert_eq!(statuses, [Active, Left, Left, Active]);
    assert_eq!(state.group.membership_version, 2);
    assert_eq!(
        code(member_heartbeat(&mut state, quiet.public_key(), &TIMING)),
        "member_left"
    );
    let mut closed = room(&leader, 8, true);
    closed.members.push(member_row(&quiet, 1, 0));
    closed.group.status = GroupStatus::Closed;
    expire_members(&mut closed, &TIMING);
    assert_eq!(
        closed.members[1].status,
        MemberStatus::Active,
        "final rooms stay as they ended"
    );
}

fn beat(leader: &Identity, state: &GroupState, seq: u64, hash: &str) -> LeaderHeartbeat {
    let binding = identity::transport_binding_canonical(
        leader.public_key(),
        TRANSPORT_IROH,
        "t2",
        &state.group.protocol_id,
    );
    LeaderHeartbeat {
        leader_epoch: state.group.leader_epoch,
        checkpoint_seq: seq,
        checkpoint_hash: hash.into(),
        iroh_ticket: "t2".into(),
        transport_binding_signature: leader.sign_hex(binding.as_bytes()),
    }
}

#[test]
fn the_floor_only_moves_forward_and_the_invitation_stays_while_the_room_is_open() {
    let leader = Identity::generate();
    let mut state = room(&leader, 4, false);
    let key = leader.public_key().to_string();
    let (a, b) = ("a".repeat(64), "b".repeat(64));
    let first = beat(&leader, &state, 0, &a);
    let effect = leader_heartbeat(&mut state, &key, &first, &TIMING);
    assert_eq!(
        effect,
        Ok(InvitationEffect::Renew {
            expires_at: TIMING.now + TIMING.invitation_ttl_ms
        })
    );
    assert_eq!(
        state.group.checkpoint_hash, a,
        "the empty floor is replaced"
    );
    let other = beat(&leader, &state, 0, &b);
    assert_eq!(
        code(leader_heartbeat(&mut state, &key, &other, &TIMING)),
        "checkpoint_conflict"
    );
    let forward = beat(&leader, &state, 3, &b);
    leader_heartbeat(&mut state, &key, &forward, &TIMING).unwrap();
    let back = beat(&leader, &state, 2, &a);
    assert_eq!(
        code(leader_heartbeat(&mut state, &key, &back, &TIMING)),
        "checkpoint_behind"
    );
    assert_eq!(
        (state.group.checkpoint_seq, state.group.iroh_ticket.as_str()),
        (3, "t2")
    );
    state.group.status = GroupStatus::Active;
    assert_eq!(
        leader_heartbeat(&mut state, &key, &forward, &TIMING),
        Ok(InvitationEffect::Keep),
        "a running table without late join is not offered any more"
    );
}

#[test]
fn statuses_move_forward_only() {
    let leader = Identity::generate();
    let key = leader.public_key().to_string();
    use GroupStatus::{Active, Closed, Failed, Lobby};
    for (from, to, allowed) in [
        (Lobby, Active, true),
        (Lobby, Closed, true),
        (Active, Failed, true),
        (Active, Closed, true),
        (Active, Lobby, false),
        (Active, Active, false),
        (Closed, Active, false),
        (Failed, Closed, false),
    ] {
        let mut state = room(&leader, 4, true);
        state.group.status = from;
        let update = GroupStatusUpdate {
            leader_epoch: 0,
            status: to,
        };
        let outcome = set_status(&mut state, &key, &update);
        assert_eq!(outcome.is_ok(), allowed, "{from} -> {to}");
        if allowed {
            assert_eq!(state.group.status, to);
            let closes = !to.is_open();
            assert_eq!(outcome.unwrap() == InvitationEffect::Close, closes);
        }
    }
}

#[test]
fn an_abort_room_fails_instead_of_changing_leader() {
    let leader = Identity::generate();
    let member = Identity::generate();
    let mut state = room(&leader, 4, true);
    state.group.recovery_mode = RecoveryMode::Abort;
    state.members.push(member_row(&member, 1, TIMING.now));
    state.group.lease_expires_at = TIMING.now;
    let claim = ClaimLeader {
        expected_epoch: 0,
        checkpoint_seq: 0,
        checkpoint_hash: EMPTY_CHECKPOINT_HASH.into(),
        checkpoint_frame_hash: "f".repeat(64),
        checkpoint_membership_version: 2,
        checkpoint_signature: String::new(),
        iroh_ticket: "t3".into(),
        transport_binding_signature: String::new(),
    };
    let outcome = super::claim(&mut state, member.public_key(), &claim, &TIMING);
    assert_eq!(
        outcome,
        Ok((ClaimOutcome::Aborted, InvitationEffect::Close))
    );
    assert_eq!(
        (state.group.status, state.group.leader_epoch),
        (GroupStatus::Failed, 0)
    );
}
