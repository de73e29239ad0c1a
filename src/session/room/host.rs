//! `host` on a room contract, as its leader: an invitation and its room on the server, a
//! lobby that admits members until the start policy is met, then the hub — every member's
//! actions applied in order, the leader's own taken from the session directory's
//! `room-actions.jsonl`, late arrivals admitted and announced — while a heartbeat renews the
//! leader's lease (and the invitation) with the newest checkpoint a member acknowledged. The
//! room is marked active when it starts and closed when its hooks end it.

use tokio::runtime::Handle;

use super::fair_deal::SeedWait;
use super::join::QueuedActions;
use super::lead::{Arrivals, Lead, leader_hooks};
use super::rest::RestControl;
use super::seat::{SeatSetup, TableSeat};
use crate::api::group::{GroupStatus, NewGroup};
use crate::api::invitation::NewInvitation;
use crate::client::RestClient;
use crate::decision::WindowTimes;
use crate::engine::{DisplaySink, Outcome};
use crate::records::{Event, SessionRecord};
use crate::room::authority::Start;
use crate::session::{OnRoom, Protocol, ProtocolSource, SessionEnd, SessionError, SessionRecorder};
use crate::spec::CheckedOptions;
use crate::spec::{ControlMode, Flow, Role};
use crate::transport::{RelayChoice, SessionEndpoint};

/// What `host` needs to lead a room.
pub struct RoomHost {
    pub client: RestClient,
    pub protocol: Protocol,
    /// Where the protocol came from, when it was prepared by id (`host --protocol`).
    pub source: Option<ProtocolSource>,
    pub options: CheckedOptions,
    pub relay: RelayChoice,
    pub display: DisplaySink,
    /// Who acts for this side: at a table, the leader's own seat plays by itself
    /// (`autonomous`) or through decision windows; actions queued in the session's queue
    /// are sent whatever the mode.
    pub control_mode: ControlMode,
    /// How long the leader's table seat's decision windows last (human and hybrid control).
    pub window_times: WindowTimes,
    /// Told the session dir once the room is under way (a person's terminal starts on it).
    pub on_room: Option<OnRoom>,
    pub session_dir: SessionRecorder,
}

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
                local_control_mode: Some(self.control_mode),
                ..SessionRecord::default()
            },
        );
        if let Some(on_room) = &self.on_room {
            on_room(self.session_dir.dir());
        }
        let mut endpoint = SessionEndpoint::bind(&self.relay).await?;
        let ticket = endpoint.ticket().await?.to_string();
        let mut offer = NewInvitation::signed(&identity, &protocol_id, &ticket);
        offer.options = self.options.as_map().clone();
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
        let (tasks, arrivals, lease) = super::lead::open(
            &mut endpoint,
            &self.client,
            &group,
            &ticket,
            usize::from(rules.max_participants),
            self.session_dir.events().clone(),
        )?;
        let mut lead = Lead {
            control: RestControl::new(self.client.clone(), Handle::current()),
            client: self.client.clone(),
            runtime: Handle::current(),
            identity,
            group,
            rules,
            own: QueuedActions::of(self.session_dir.dir()),
            dir: self.session_dir.clone(),
            lease,
            seat: None,
            seeds: SeedWait::default(),
        };
        let (protocol, options) = (self.protocol.clone(), self.options.clone());
        let (control_mode, times) = (self.control_mode, self.window_times);
        let led = tokio::task::spawn_blocking(move || {
            let hooks = leader_hooks(&protocol, options.as_map(), &lead.dir)?;
            lead.seat = TableSeat::open(
                SeatSetup {
                    protocol: &protocol,
                    options: options.as_map(),
                    recorder: &lead.dir,
                    control_mode,
                    times,
                },
                &hooks,
            )?;
            open_and_serve(lead, hooks, arrivals)
        })
        .await;
        drop(tasks);
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
        let end = SessionEnd {
            session_dir: self.session_dir.root().to_path_buf(),
            session_id: post_id.clone(),
            post_id,
            result,
        };
        crate::session::reports::record_end(&end, &self.session_dir);
        Ok(end)
    }
}

/// The lobby, then a fresh room until it ends.
fn open_and_serve(
    mut lead: Lead,
    hooks: crate::hooks::python_hooks::PythonHooks,
    arrivals: Arrivals,
) -> Result<Option<String>, SessionError> {
    let lobby = lead.lobby(&arrivals)?;
    super::fair_deal::announce(&hooks, &lobby);
    let mut hub = lead.hub(hooks, Start::Fresh)?;
    for arrival in lobby {
        let _ = hub.attach(&arrival.member.public_key, Box::new(arrival.channel));
    }
    lead.set_status(GroupStatus::Active);
    lead.serve(&mut hub, &arrivals)
}
