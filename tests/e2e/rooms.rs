//! A room over the real network parts: our community server as its control plane (an
//! invitation, the room, both admission signatures, status), iroh on loopback for the
//! channels, our leader's hub on the reference's Community Room hooks, and two of our
//! members that are admitted, act, verify every envelope and see the room close.

use std::collections::VecDeque;
use std::time::{Duration, Instant};

use aigenora::api::group::{GroupStatus, NewGroup, RecoveryMode};
use aigenora::api::invitation::NewInvitation;
use aigenora::api::protocol::NewProtocol;
use aigenora::hooks::python_hooks::PythonHooks;
use aigenora::hooks::{Hooks, InitContext};
use aigenora::records::ReceiptSource;
use aigenora::room::Replica;
use aigenora::room::authority::{Authority, Start};
use aigenora::room::checkpoint::RoomMember;
use aigenora::room::replica::Verified;
use aigenora::session::room::RoomControl;
use aigenora::session::room::admission::{leader_admit, member_admit, verify_binding};
use aigenora::session::room::leader::Hub;
use aigenora::session::room::member::{FollowEnd, Follower, MemberEvents, Outbox};
use aigenora::session::room::rest::RestControl;
use aigenora::spec::{Flow, Role, Spec};
use aigenora::transport::{DEFAULT_CONNECT_TIMEOUT, IrohChannel, Ticket};
use aigenora::wire::group::Receipt;
use serde_json::{Map, Value, json};

use crate::support::reference::reference_contract;
use crate::support::server::TestServer;
use crate::support::transport::{offline_endpoint, runtime};

#[derive(Default)]
struct Seen {
    steps: usize,
    receipts: Vec<String>,
}

impl MemberEvents for Seen {
    fn step(&mut self, _verified: &Verified, _replica: &Replica) {
        self.steps += 1;
    }
    fn receipt(&mut self, receipt: &Receipt, _source: ReceiptSource, _action: &Map<String, Value>) {
        self.receipts.push(format!("{:?}", receipt.status));
    }
}

fn send(text: &str) -> Map<String, Value> {
    json!({"kind": "send", "text": text})
        .as_object()
        .unwrap()
        .clone()
}

#[test]
fn a_room_runs_over_iroh_with_our_server_as_its_control_plane() {
    let server = TestServer::start(&[]);
    let rt = runtime();
    let (leader, leader_client) = rt.block_on(server.registered("leader"));
    let contract = reference_contract("community-room-v1");
    let dir = contract.spec.parent().unwrap().to_path_buf();
    let spec = Spec::load(&contract.spec).unwrap();
    rt.block_on(leader_client.register_protocol(&NewProtocol::for_spec(&spec)))
        .unwrap();
    let mut endpoint = rt.block_on(offline_endpoint());
    let ticket = rt.block_on(endpoint.ticket()).unwrap().to_string();
    let offer = NewInvitation::signed(&leader, &spec.protocol_id(), &ticket);
    let post_id = rt
        .block_on(leader_client.create_invitation(&offer))
        .unwrap()
        .post_id;
    let group = rt
        .block_on(leader_client.create_group(&NewGroup {
            post_id: post_id.clone(),
            min_participants: 2,
            max_participants: 32,
            allow_late_join: true,
            recovery_mode: RecoveryMode::Exact,
        }))
        .unwrap();

    // Two members find the room by its invitation, check its ticket's binding, dial it and
    // take part; each says one thing.
    let mut members = Vec::new();
    for (name, text) in [("ann", "hello from ann"), ("bob", "hello from bob")] {
        let (identity, client) = rt.block_on(server.registered(name));
        let handle = rt.handle().clone();
        let post_id = post_id.clone();
        members.push(std::thread::spawn(move || {
            let found = handle.block_on(client.group_by_post(&post_id)).unwrap();
            verify_binding(&found).unwrap();
            let ticket: Ticket = found.iroh_ticket.parse().unwrap();
            let dialer = handle.block_on(offline_endpoint());
            let link = handle
                .block_on(dialer.dial(&ticket, DEFAULT_CONNECT_TIMEOUT))
                .unwrap();
            let mut channel = IrohChannel::new(link, &handle);
            let control = RestControl::new(client, handle.clone());
            let seat = member_admit(
                &mut channel,
                &control,
                &identity,
                &found,
                "autonomous",
                None,
                false,
            )
            .unwrap();
            let mut replica = Replica::new(
                &found.group_id,
                identity.public_key(),
                &found.leader_public_key,
                0,
            );
            let mut actions: VecDeque<_> = vec![send(text)].into();
            let mut seen = Seen::default();
            let end = Follower::new(
                &mut channel,
                &mut replica,
                &identity,
                &mut actions,
                &mut seen,
                &mut Outbox::default(),
            )
            .run();
            drop(channel);
            handle.block_on(dialer.shutdown());
            (seat, end, seen, replica)
        }));
    }

    // The leader admits both channels, then starts the room with the server's members.
    let control = RestControl::new(leader_client.clone(), rt.handle().clone());
    let mut knocks = {
        let _inside = rt.enter();
        endpoint.knocks(4).unwrap()
    };
    let mut channels = Vec::new();
    for _ in 0..2 {
        let link = rt.block_on(knocks.next()).unwrap();
        let mut channel = IrohChannel::new(link, rt.handle());
        let member = leader_admit(
            &mut channel,
            &control,
            &leader,
            &group.group_id,
            &group.protocol_id,
            0,
        )
        .unwrap();
        channels.push((member, channel));
    }
    let listed: Vec<RoomMember> = control
        .group(&group.group_id)
        .unwrap()
        .members
        .iter()
        .map(RoomMember::from)
        .collect();
    assert_eq!(listed.len(), 3, "the leader and two members hold seats");
    let Flow::Group(rules) = spec.model().unwrap().flow.clone() else {
        panic!("a room")
    };
    let state = tempfile::tempdir().unwrap();
    let mut hooks = PythonHooks::load(&dir).unwrap();
    let options: Map<String, Value> = Map::new();
    hooks
        .init(&InitContext {
            options: &options,
            role: Role::Host,
            args: &[],
            state_dir: state.path(),
            decision: None,
            pass_decision: true,
            timing: None,
            desk: None,
        })
        .unwrap();
    let (authority, _) = Authority::new(
        hooks,
        rules,
        leader.clone(),
        &group.group_id,
        0,
        3,
        listed,
        Start::Fresh,
    )
    .unwrap();
    let mut hub = Hub::new(authority);
    for ((member, _), channel) in channels {
        hub.attach(&member.public_key, Box::new(channel)).unwrap();
    }
    let active = rt
        .block_on(leader_client.set_group_status(&group.group_id, 0, GroupStatus::Active))
        .unwrap();
    assert_eq!(active.status, GroupStatus::Active);
    let deadline = Instant::now() + Duration::from_secs(60);
    while hub.authority.seq < 2 && Instant::now() < deadline {
        hub.poll();
    }
    assert_eq!(hub.authority.seq, 2, "both members' messages became steps");
    // The owner (seat 0) closes the room.
    let (envelopes, _) = hub.authority.apply_input(
        leader.public_key(),
        1,
        json!({"kind": "close_room"}).as_object().unwrap(),
    );
    hub.broadcast(&envelopes);
    assert!(hub.authority.completed);
    let results: Vec<_> = members
        .into_iter()
        .map(|member| {
            while !member.is_finished() {
                hub.poll();
            }
            member.join().unwrap()
        })
        .collect();
    assert!(
        hub.authority.replicated_checkpoint().is_some(),
        "members' acks reached the leader"
    );
    hub.close();
    let closed = rt
        .block_on(leader_client.set_group_status(&group.group_id, 0, GroupStatus::Closed))
        .unwrap();
    assert_eq!(closed.status, GroupStatus::Closed);
    let mut seats = Vec::new();
    for (seat, end, seen, replica) in &results {
        assert_eq!(
            end.as_ref().unwrap(),
            &FollowEnd::Completed(Some("closed".into()))
        );
        assert_eq!(seen.receipts, ["Accepted"], "its one message was accepted");
        assert_eq!(seen.steps, 4, "the bootstrap, two messages and the close");
        let texts: Vec<&str> = replica.view.as_ref().unwrap()["messages"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|m| m["kind"] == "message")
            .filter_map(|m| m["text"].as_str())
            .collect();
        assert_eq!(texts.len(), 2, "{texts:?}");
        seats.push(seat.seat);
    }
    seats.sort();
    assert_eq!(seats, [1, 2]);
    rt.block_on(endpoint.shutdown());
}
