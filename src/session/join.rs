//! `aigenora join <post_id>`: check the invitation and its binding signature, get the
//! protocol ready, then run the guest's side: dial the host, verify its session proof,
//! register the session with the server, play, and report the end.

use super::pipeline::{Connect, Handshake, Play, run_side};
use super::reports::recording_failed_start;
use super::{PlaySettings, Protocol, SessionEnd, SessionError, SessionRecorder, prepare_protocol};
use crate::client::RestClient;
use crate::layout::DataDir;
use crate::records::SessionRecord;
use crate::spec::{CheckedOptions, Role};
use crate::transport::Ticket;

/// Everything `join` needs.
pub struct JoinRequest {
    pub client: RestClient,
    pub data_dir: DataDir,
    pub post_id: String,
    pub settings: PlaySettings,
    pub session_dir: SessionRecorder,
    /// Run hooks even if they are an unfilled skeleton (testing only).
    pub allow_skeleton: bool,
}

/// Joins one invitation and plays it to the end. `Err` when the game never started; why is
/// recorded in the session dir too.
pub async fn join(request: JoinRequest) -> Result<SessionEnd, SessionError> {
    let dir = request.session_dir.clone();
    recording_failed_start(&dir, join_and_play(request)).await
}

async fn join_and_play(request: JoinRequest) -> Result<SessionEnd, SessionError> {
    let JoinRequest {
        client,
        data_dir,
        post_id,
        settings,
        session_dir,
        allow_skeleton,
    } = request;
    let invitation = client.invitation(&post_id).await?;
    let refuse = |reason: &str| SessionError::Invitation {
        post_id: post_id.clone(),
        reason: reason.to_string(),
    };
    if invitation.public_key == client.identity().public_key() {
        return Err(refuse("is your own; join it from another identity"));
    }
    if invitation.protocol_id.is_empty() {
        return Err(refuse("names no protocol_id"));
    }
    // The contract first: a mode this build does not run is refused before the ticket
    // is even read.
    let prepared = prepare_protocol(
        &client,
        &data_dir,
        &invitation.protocol_id,
        allow_skeleton,
        super::RoomPart::Member,
    )
    .await?;
    if prepared.spec.capabilities().room {
        let window_times = settings.window_times(&prepared.spec, &invitation.options);
        let room = super::room::join::RoomJoin {
            client,
            invitation,
            prepared,
            control_mode: settings.control_mode,
            window_times,
            relay: settings.relay.clone(),
            display: settings.display.clone(),
            on_room: settings.on_room.clone(),
            session_dir,
        };
        return room.run().await;
    }
    let ticket: Ticket = invitation
        .verified_ticket()
        .map_err(|e| refuse(&e.to_string()))?
        .parse()
        .map_err(|error| SessionError::Ticket {
            post_id: post_id.clone(),
            error,
        })?;
    let options = CheckedOptions::check(prepared.spec.value(), invitation.options.clone())
        .map_err(|error| SessionError::HostOptions {
            protocol_id: invitation.protocol_id.clone(),
            error,
        })?;
    let protocol = Protocol {
        dir: prepared.dir.clone(),
        spec: prepared.spec,
    };
    session_dir.record_start(
        Role::Guest,
        SessionRecord {
            post_id: Some(post_id.clone()),
            protocol_id: Some(invitation.protocol_id.clone()),
            protocol_dir: Some(protocol.dir.clone()),
            protocol_source: Some(prepared.source.as_str().to_string()),
            local_control_mode: Some(settings.control_mode),
            peer_control_mode: Some(invitation.host_control_mode),
            ..SessionRecord::default()
        },
    );
    (settings.display)(
        Role::Guest,
        &format!(
            "[join] protocol_dir: {} ({})",
            protocol.dir.display(),
            prepared.source.as_str()
        ),
    );
    let handshake = Handshake::Guest {
        server: client.clone(),
        post_id: post_id.clone(),
        host_public_key: invitation.public_key.clone(),
        protocol_id: invitation.protocol_id.clone(),
        control_mode: settings.control_mode,
        host_control_mode: invitation.host_control_mode,
    };
    let play = Play::new(Role::Guest, protocol, options, settings, &session_dir);
    run_side(play, Connect::Dial(ticket), handshake).await
}
