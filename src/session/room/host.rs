//! `host` on a room contract, as its leader: an invitation and its room on the server, a
//! lobby that admits members until the start policy is met, then the hub — every member's
//! actions applied in order, the leader's own taken from the session directory's
//! `room-actions.jsonl`, late arrivals admitted and announced — while a heartbeat renews the
//! leader's lease (and the invitation) with the newest checkpoint a member acknowledged. The
//! room is marked active when it starts and closed when its hooks end it.

use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Map, Value};
use tokio::runtime::Handle;

use super::RoomControl;
use super::admission::leader_admit;
use super::join::{QueuedActions, ROOM_FILE};
use super::leader::Hub;
use super::member::ActionSource;
use super::rest::RestControl;
use crate::api::group::{
    EMPTY_CHECKPOINT_HASH, Group, GroupStatus, LeaderHeartbeat, NewGroup, StartPolicy,
};
use crate::api::invitation::NewInvitation;
use crate::client::RestClient;
use crate::engine::{DisplaySink, Outcome};
use crate::hooks::python_hooks::PythonHooks;
use crate::hooks::{Hooks, InitContext};
use crate::identity::Identity;
use crate::records::{Event, SessionRecord};
use crate::room::authority::{Authority, Receipt, Start};
use crate::room::checkpoint::RoomMember;
use crate::session::{Protocol, ProtocolSource, SessionDir, SessionEnd, SessionError};
use crate::spec::flow::group::GroupRules;
use crate::spec::{Flow, Role};
use crate::transport::{IrohChannel, RelayChoice, SessionEndpoint};

/// How long the hub waits between passes when nothing arrived.
const IDLE: Duration = Duration::from_millis(2);

/// What `host` needs to lead a room.
pub struct RoomHost {
    pub client: RestClient,
    pub protocol: Protocol,
    /// Where the protocol came from, when it was prepared by id (`host --protocol`).
    pub source: Option<ProtocolSource>,
    pub options: Map<String, Value>,
    pub relay: RelayChoice,
    pub display: DisplaySink,
    pub session_dir: SessionDir,
}

/// The checkpoint floor the heartbeat reports: (seq, checkpoint hash).
type Floor = Arc<Mutex<(u64, String)>>;

impl RoomHost {
    pub async fn run(self) -> Result<SessionEnd, SessionError> {
        let model = self
            .protocol
            .spec
            .model()
            .map_err(|error| crate::spec::SpecFileError {
                path: self.protocol.dir.join("spec.json"),
                error,
            })?;
        let Flow::Group(rules) = model.flow.clone() else {
            unreachable!("a room host is started for room contracts only")
        };
        let identity = self.client.identity().clone();
        let protocol_id = self.protocol.spec.protocol_id();
        self.session_dir.record_start(
            Role::Host,
            SessionRecord {
                protocol_dir: Some(self.protocol.dir.clone()),
                protocol_id: Some(protocol_id.clone()),
                protocol_source: self.source.map(|source| source.as_str().to_string()),
                ..SessionRecord::default()
            },
        );
        let mut endpoint = SessionEndpoint::bind(&self.relay).await?;
        let ticket = endpoint.ticket().await?.to_string();
        let mut offer = NewInvitation::signed(&identity, &protocol_id, &ticket);
        offer.options = self.options.clone();
        let lease_of_invitation = self.client.create_invitation(&offer).await?;
        let post_id = lease_of_invitation.post_id.clone();
        let group = self
            .client
            .create_group(&NewGroup {
                post_id: post_id.clone(),
                min_participants: rules.min_participants.into(),
                max_participants: rules.max_participants.into(),
                allow_late_join: rules.allow_late_join,
                recovery_mode: rules.recovery_mode,
            })
            .await?;
        let _ = self.session_dir.update(|record| {
            record.post_id = Some(post_id.clone());
            record.session_id = Some(group.group_id.clone());
        });
        self.session_dir.events().emit(Event::InviteCreated {
            post_id: post_id.clone(),
            protocol_id: protocol_id.clone(),
            expires_at: lease_of_invitation.expires_at.clone(),
        });
        (self.display)(Role::Host, &format!("post_id: {post_id}"));
        (self.display)(Role::Host, &format!("group_id: {}", group.group_id));
        let floor: Floor = Arc::new(Mutex::new((0, EMPTY_CHECKPOINT_HASH.to_string())));
        let heartbeats = tokio::spawn(lease(
            self.client.clone(),
            group.clone(),
            ticket.clone(),
            floor.clone(),
        ));
        let (admitted_tx, admitted_rx) = mpsc::channel::<(RoomMember, IrohChannel)>();
        let mut knocks = endpoint.knocks(usize::from(rules.max_participants))?;
        let accepting = {
            let control = Arc::new(RestControl::new(self.client.clone(), Handle::current()));
            let identity = identity.clone();
            let group = group.clone();
            tokio::spawn(async move {
                while let Ok(link) = knocks.next().await {
                    let channel = IrohChannel::new(link, &Handle::current());
                    let (control, identity, group, admitted) = (
                        control.clone(),
                        identity.clone(),
                        group.clone(),
                        admitted_tx.clone(),
                    );
                    tokio::task::spawn_blocking(move || {
                        let mut channel = channel;
                        if let Ok(member) = leader_admit(
                            &mut channel,
                            control.as_ref(),
                            &identity,
                            &group.group_id,
                            &group.protocol_id,
                            group.leader_epoch,
                        ) {
                            let _ = admitted.send((member, channel));
                        }
                    });
                }
            })
        };
        let leading = {
            let lead = Lead {
                control: RestControl::new(self.client.clone(), Handle::current()),
                client: self.client.clone(),
                runtime: Handle::current(),
                identity,
                group,
                rules,
                protocol: self.protocol.clone(),
                options: self.options.clone(),
                dir: self.session_dir.clone(),
                floor,
            };
            tokio::task::spawn_blocking(move || lead.run(admitted_rx))
        };
        let led = leading.await;
        accepting.abort();
        heartbeats.abort();
        endpoint.shutdown().await;
        let result = match led {
            Ok(Ok(outcome)) => Ok(Outcome {
                completed: true,
                winner: None,
                reason: outcome,
                metadata: None,
            }),
            Ok(Err(error)) => Err(error),
            Err(panic) => Err(SessionError::Stopped {
                what: "the room leader",
                detail: panic.to_string(),
            }),
        };
        Ok(SessionEnd {
            session_dir: self.session_dir.root().to_path_buf(),
            session_id: post_id.clone(),
            post_id,
            result,
        })
    }
}

/// The leader's lease: renewed every third of its length with the floor.
async fn lease(client: RestClient, group: Group, ticket: String, floor: Floor) {
    let every = Duration::from_secs((group.leader_lease_seconds / 3).max(1));
    let mut ticks = tokio::time::interval(every);
    loop {
        ticks.tick().await;
        let (seq, hash) = floor.lock().expect("the floor lock").clone();
        let beat = LeaderHeartbeat::signed(client.identity(), &group, seq, &hash, &ticket);
        let _ = client.renew_leader(&group.group_id, &beat).await;
    }
}

/// The leader's blocking side: the lobby, then the hub until the room ends.
struct Lead {
    control: RestControl,
    client: RestClient,
    runtime: Handle,
    identity: Identity,
    group: Group,
    rules: GroupRules,
    protocol: Protocol,
    options: Map<String, Value>,
    dir: SessionDir,
    floor: Floor,
}

impl Lead {
    fn run(
        self,
        admitted: mpsc::Receiver<(RoomMember, IrohChannel)>,
    ) -> Result<Option<String>, SessionError> {
        let needed = match self.rules.start_policy {
            StartPolicy::MinReady => self.rules.min_participants,
            StartPolicy::Full | StartPolicy::FixedFull => self.rules.max_participants,
        };
        let mut lobby = Vec::new();
        while lobby.len() + 1 < usize::from(needed) {
            let Ok(arrived) = admitted.recv() else {
                return Err(SessionError::Stopped {
                    what: "the room's lobby",
                    detail: "no more arrivals".into(),
                });
            };
            lobby.push(arrived);
        }
        let listed = self
            .control
            .group(&self.group.group_id)
            .map_err(|e| self.io(e))?;
        let members: Vec<RoomMember> = listed
            .members
            .iter()
            .filter(|m| m.status == crate::api::group::MemberStatus::Active)
            .map(RoomMember::from)
            .collect();
        let hooks = self.hooks()?;
        let (authority, _) = Authority::new(
            hooks,
            self.rules.clone(),
            self.identity.clone(),
            &self.group.group_id,
            self.group.leader_epoch,
            listed.membership_version,
            members,
            Start::Fresh,
        )
        .map_err(|e| self.io(e.to_string()))?;
        let mut hub = Hub::new(authority);
        for (member, channel) in lobby {
            let _ = hub.attach(&member.public_key, Box::new(channel));
        }
        let _ = self.runtime.block_on(self.client.set_group_status(
            &self.group.group_id,
            self.group.leader_epoch,
            GroupStatus::Active,
        ));
        let mut own = QueuedActions::of(self.dir.root());
        let mut recorded = None;
        while !hub.authority.completed {
            let busy = hub.poll();
            while let Ok((member, channel)) = admitted.try_recv() {
                self.late(&mut hub, member, channel);
            }
            while let Some(action) = own.next_action() {
                let key = self.identity.public_key().to_string();
                let seq = hub
                    .authority
                    .checkpoint()
                    .and_then(|c| c.state.last_client_seq.get(&key).copied())
                    .unwrap_or(0)
                    + 1;
                let (envelopes, receipt) = hub.authority.apply_input(&key, seq, &action);
                hub.broadcast(&envelopes);
                self.record_receipt(&receipt);
            }
            if recorded != Some(hub.authority.seq) {
                recorded = Some(hub.authority.seq);
                self.record_step(&hub);
            }
            if !busy {
                std::thread::sleep(IDLE);
            }
        }
        for _ in 0..100 {
            if !hub.poll() {
                std::thread::sleep(IDLE);
            }
        }
        hub.close();
        let _ = self.runtime.block_on(self.client.set_group_status(
            &self.group.group_id,
            self.group.leader_epoch,
            GroupStatus::Closed,
        ));
        Ok(hub.authority.outcome.clone())
    }

    /// A member admitted after the start: added to the room (when new) and attached.
    fn late(&self, hub: &mut Hub<PythonHooks>, member: RoomMember, channel: IrohChannel) {
        if hub.authority.member(&member.public_key).is_none() {
            let version = self
                .control
                .group(&self.group.group_id)
                .map(|g| g.membership_version)
                .unwrap_or(0);
            match hub.authority.add_member(member.clone(), version) {
                Ok(envelopes) => hub.broadcast(&envelopes),
                Err(_) => return,
            }
        }
        let _ = hub.attach(&member.public_key, Box::new(channel));
    }

    fn hooks(&self) -> Result<PythonHooks, SessionError> {
        let mut hooks = PythonHooks::load_for(&self.protocol.dir, &self.protocol.spec)?;
        let state_dir = self.dir.root().join("leader");
        crate::layout::create_private_dir(&state_dir)
            .map_err(|e| SessionError::io("creating the leader's state dir", e))?;
        hooks.init(&InitContext {
            options: &self.options,
            role: Role::Host,
            args: &[],
            state_dir: &state_dir,
            decision: None,
            pass_decision: true,
            timing: None,
            desk: None,
        })?;
        Ok(hooks)
    }

    /// After a new step: the floor the lease reports, and `room.json`.
    fn record_step(&self, hub: &Hub<PythonHooks>) {
        if let Some(checkpoint) = hub.authority.replicated_checkpoint() {
            *self.floor.lock().expect("the floor lock") =
                (checkpoint.seq, checkpoint.checkpoint_hash.clone());
        }
        if let Some(checkpoint) = hub.authority.checkpoint() {
            let record = serde_json::json!({"group_id": checkpoint.group_id, "seq": checkpoint.seq,
                "members": checkpoint.state.members, "completed": checkpoint.state.completed,
                "outcome": checkpoint.state.outcome});
            let _ = crate::layout::write_atomic(
                &self.dir.root().join(ROOM_FILE),
                record.to_string().as_bytes(),
            );
        }
    }

    fn record_receipt(&self, receipt: &Receipt) {
        let (status, client_seq, reason) = match receipt {
            Receipt::Accepted { client_seq, .. } => ("accepted", *client_seq, None),
            Receipt::Duplicate { client_seq, .. } => ("duplicate", *client_seq, None),
            Receipt::Rejected { client_seq, reason } => {
                ("rejected", *client_seq, Some(reason.clone()))
            }
        };
        self.dir.events().emit(Event::GroupActionReceipt {
            status: status.into(),
            client_seq: Some(client_seq),
            reason,
        });
    }

    fn io(&self, what: String) -> SessionError {
        SessionError::Stopped {
            what: "the room leader",
            detail: what,
        }
    }
}
