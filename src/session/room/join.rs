//! `join` on a room invitation, as a member: the room is found on the server by its
//! invitation and its ticket's binding checked, the member dials the leader, is admitted,
//! and follows the room until it ends — every envelope verified and recorded, its own actions
//! taken from the session directory's `room-actions.jsonl` (what `aigenora session action`
//! appends), a heartbeat to the server every [`HEARTBEAT`] so its seat stays its own. The
//! last verified view and checkpoint are kept in `room.json`.

use std::collections::VecDeque;
use std::path::Path;
use std::time::Duration;

use serde_json::{Map, Value, json};
use tokio::runtime::Handle;

use super::admission::{member_admit, verify_binding};
use super::member::{ActionSource, FollowEnd, Follower, MemberEvents};
use super::rest::RestControl;
use crate::api::invitation::Invitation;
use crate::client::RestClient;
use crate::engine::{DisplaySink, Outcome};
use crate::layout::{Tail, TailLine};
use crate::records::{Event, SessionRecord};
use crate::room::Replica;
use crate::room::replica::Verified;
use crate::session::{PreparedProtocol, SessionDir, SessionEnd, SessionError};
use crate::spec::{ControlMode, Role};
use crate::transport::{
    DEFAULT_CONNECT_TIMEOUT, IrohChannel, RelayChoice, SessionEndpoint, Ticket,
};
use crate::wire::group::Receipt;

/// How often a member tells the server it is still there.
pub const HEARTBEAT: Duration = Duration::from_secs(5);
/// The file of actions waiting to be sent, in the session directory.
pub const ACTIONS_FILE: &str = "room-actions.jsonl";
/// The member's last verified view and checkpoint, in the session directory.
pub const ROOM_FILE: &str = "room.json";
/// The longest line of the actions file.
pub const MAX_ACTION_LINE: usize = 1024 * 1024;

/// What `join` needs to take part in a room.
pub struct RoomJoin {
    pub client: RestClient,
    pub invitation: Invitation,
    pub prepared: PreparedProtocol,
    pub control_mode: ControlMode,
    pub relay: RelayChoice,
    pub display: DisplaySink,
    pub session_dir: SessionDir,
}

impl RoomJoin {
    pub async fn run(self) -> Result<SessionEnd, SessionError> {
        let post_id = self.invitation.post_id.clone();
        let refuse = |reason: String| SessionError::Invitation {
            post_id: post_id.clone(),
            reason,
        };
        let group = self
            .client
            .group_by_post(&post_id)
            .await
            .map_err(|e| refuse(format!("no room on the server for it ({e})")))?;
        if group.protocol_id != self.invitation.protocol_id {
            return Err(refuse("its room plays another protocol".into()));
        }
        verify_binding(&group).map_err(refuse)?;
        let ticket: Ticket = group
            .iroh_ticket
            .parse()
            .map_err(|error| SessionError::Ticket {
                post_id: post_id.clone(),
                error,
            })?;
        self.session_dir.record_start(
            Role::Guest,
            SessionRecord {
                post_id: Some(post_id.clone()),
                protocol_id: Some(group.protocol_id.clone()),
                protocol_dir: Some(self.prepared.dir.clone()),
                protocol_source: Some(self.prepared.source.as_str().to_string()),
                local_control_mode: Some(self.control_mode),
                ..SessionRecord::default()
            },
        );
        (self.display)(
            Role::Guest,
            &format!("[join] room {} of invitation {post_id}", group.group_id),
        );
        let endpoint = SessionEndpoint::bind(&self.relay).await?;
        let link = match endpoint.dial(&ticket, DEFAULT_CONNECT_TIMEOUT).await {
            Ok(link) => link,
            Err(error) => {
                endpoint.shutdown().await;
                return Err(error.into());
            }
        };
        let channel = IrohChannel::new(link, &Handle::current());
        let heartbeats = {
            let client = self.client.clone();
            let group_id = group.group_id.clone();
            tokio::spawn(async move {
                let mut every = tokio::time::interval(HEARTBEAT);
                loop {
                    every.tick().await;
                    let _ = client.heartbeat_member(&group_id).await;
                }
            })
        };
        let follow = {
            let control = RestControl::new(self.client.clone(), Handle::current());
            let identity = self.client.identity().clone();
            let dir = self.session_dir.clone();
            let control_mode = self.control_mode;
            tokio::task::spawn_blocking(move || {
                follow(channel, control, identity, group, dir, control_mode)
            })
        };
        let ended = follow.await;
        heartbeats.abort();
        endpoint.shutdown().await;
        let result = match ended {
            Ok(Ok(FollowEnd::Completed(outcome))) => Ok(Outcome {
                completed: true,
                winner: None,
                reason: outcome,
                metadata: None,
            }),
            Ok(Ok(FollowEnd::LeaderGone(reason))) => Ok(Outcome {
                completed: false,
                winner: None,
                reason: Some(format!("leader_disconnected: {reason}")),
                metadata: None,
            }),
            Ok(Err(reason)) => Err(refuse(reason)),
            Err(panic) => Err(SessionError::Stopped {
                what: "the room member",
                detail: panic.to_string(),
            }),
        };
        Ok(SessionEnd {
            session_dir: self.session_dir.root().to_path_buf(),
            session_id: self.invitation.post_id.clone(),
            post_id,
            result,
        })
    }
}

/// Admission, then the follow loop, on the blocking thread.
fn follow(
    mut channel: IrohChannel,
    control: RestControl,
    identity: crate::identity::Identity,
    group: crate::api::group::Group,
    dir: SessionDir,
    control_mode: ControlMode,
) -> Result<FollowEnd, String> {
    let seat = member_admit(
        &mut channel,
        &control,
        &identity,
        &group,
        control_mode.as_str(),
    )?;
    let _ = dir.update(|record| record.session_id = Some(group.group_id.clone()));
    dir.events().emit(Event::GroupMemberAdmitted {
        group_id: group.group_id.clone(),
        leader_public_key: group.leader_public_key.clone(),
        member_id: seat.member_id.clone(),
        seat: seat.seat,
    });
    let mut replica = Replica::new(
        &group.group_id,
        identity.public_key(),
        &group.leader_public_key,
        group.leader_epoch,
    );
    let mut actions = QueuedActions::of(dir.root());
    let mut recorder = Recorder {
        dir: dir.clone(),
        group_id: group.group_id.clone(),
    };
    let end = Follower::new(
        &mut channel,
        &mut replica,
        &identity,
        &mut actions,
        &mut recorder,
    )
    .run();
    let _ = crate::transport::Channel::close(&mut channel);
    end
}

/// Actions appended to a session's `room-actions.jsonl`, read as they arrive and handed out
/// one at a time (several appended at once all wait their turn).
pub(super) struct QueuedActions {
    tail: Tail,
    waiting: VecDeque<Map<String, Value>>,
}

impl QueuedActions {
    pub(super) fn of(dir: &Path) -> QueuedActions {
        QueuedActions {
            tail: Tail::new(dir.join(ACTIONS_FILE), MAX_ACTION_LINE),
            waiting: VecDeque::new(),
        }
    }
}

impl ActionSource for QueuedActions {
    fn next_action(&mut self) -> Option<Map<String, Value>> {
        if self.waiting.is_empty() {
            self.waiting
                .extend(self.tail.read().into_iter().filter_map(|line| {
                    match line {
                        TailLine::Text { text, .. } => {
                            serde_json::from_str::<Value>(&text).ok().and_then(|line| {
                                line.get("action").and_then(Value::as_object).cloned()
                            })
                        }
                        TailLine::Skipped { .. } => None,
                    }
                }));
        }
        self.waiting.pop_front()
    }
}

/// What the member records: events, and the last verified view and checkpoint.
struct Recorder {
    dir: SessionDir,
    group_id: String,
}

impl MemberEvents for Recorder {
    fn step(&mut self, verified: &Verified) {
        self.dir.events().emit(Event::GroupFrameReceived {
            group_id: self.group_id.clone(),
            leader_epoch: verified.envelope.core.leader_epoch,
            seq: verified.envelope.core.seq,
            frame_hash: verified.envelope.frame_hash.clone(),
        });
        write_room(self.dir.root(), verified);
    }

    fn receipt(&mut self, receipt: &Receipt, _action: &Map<String, Value>) {
        let status = serde_json::to_value(receipt.status)
            .ok()
            .and_then(|s| s.as_str().map(str::to_string));
        self.dir.events().emit(Event::GroupActionReceipt {
            status: status.unwrap_or_default(),
            client_seq: receipt.client_seq,
            reason: receipt.reason.clone(),
        });
    }
}

fn write_room(dir: &Path, verified: &Verified) {
    let record = json!({
        "group_id": verified.checkpoint.group_id,
        "leader_public_key": verified.checkpoint.leader_public_key,
        "leader_epoch": verified.checkpoint.leader_epoch,
        "seq": verified.envelope.core.seq,
        "members": verified.checkpoint.state.members,
        "view": verified.view,
        "events": verified.envelope.events,
        "completed": verified.envelope.core.completed,
        "outcome": verified.envelope.core.outcome,
    });
    let _ = crate::layout::write_atomic(&dir.join(ROOM_FILE), record.to_string().as_bytes());
}
