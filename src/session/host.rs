//! `aigenora host`: publish a signed invitation, keep it alive, serve the first guest that
//! completes the handshake, play, and report the end.

use std::num::NonZeroU32;
use std::time::Duration;

use serde_json::{Map, Value};
use tokio::sync::oneshot;

use super::lease::{Lease, Renewal};
use super::pipeline::{Connect, Handshake, Play, run_side};
use super::reports::record_failed_start;
use super::{PlaySettings, Protocol, ProtocolSource, SessionDir, SessionEnd, SessionError};
use crate::api::invitation::{InvitationType, NewInvitation};
use crate::client::RestClient;
use crate::hooks::python_hooks::PythonHooks;
use crate::hooks::{Hooks, HostMetadata, InitContext};
use crate::records::{Event, SessionRecord, SessionStatus};
use crate::spec::{self, Role};
use crate::transport::SessionEndpoint;

/// The reference renews every 120 s; invitations live 300 s on the server.
pub const RENEW_EVERY: Duration = Duration::from_secs(120);
/// The most sessions a second a host asks its server about while it checks dialers (in
/// bursts of as many): half the server's default per-key rate, so that checks queue on the
/// host instead of earning it 429s, and the invitation's renewals and the session's end
/// (which are not paced) always find room.
pub const HOST_CHECKS_PER_SECOND: NonZeroU32 = NonZeroU32::new(5).unwrap();

/// Everything `host` needs.
pub struct HostRequest {
    pub client: RestClient,
    pub protocol: Protocol,
    /// Where the protocol came from, when it was prepared by id (`host --protocol`).
    pub source: Option<ProtocolSource>,
    /// `--options` (checked against the spec); empty means the hooks' default options.
    pub options: Map<String, Value>,
    pub settings: PlaySettings,
    pub session_dir: SessionDir,
    /// Stop renewing the invitation after this long in total (`None`: never renew).
    pub renew_for: Option<Duration>,
    pub renew_every: Duration,
    /// Told the post id once the invitation is published (in-process callers, the demo).
    pub on_invited: Option<oneshot::Sender<String>>,
}

/// Hosts one session to its end. `Err` when it never got as far as a game (bad options,
/// the server refusing the invitation, a failed handshake); why is recorded in the session
/// dir too, and a published invitation is withdrawn.
pub async fn host(request: HostRequest) -> Result<SessionEnd, SessionError> {
    let dir = request.session_dir.clone();
    host_and_play(request)
        .await
        .inspect_err(|error| record_failed_start(&dir, error))
}

async fn host_and_play(request: HostRequest) -> Result<SessionEnd, SessionError> {
    let HostRequest {
        client,
        protocol,
        source,
        options,
        settings,
        session_dir,
        renew_for,
        renew_every,
        on_invited,
    } = request;
    let protocol_id = protocol.spec.protocol_id();
    session_dir.record_start(
        Role::Host,
        SessionRecord {
            protocol_dir: Some(protocol.dir.clone()),
            protocol_id: Some(protocol_id.clone()),
            protocol_source: source.map(|source| source.as_str().to_string()),
            local_control_mode: Some(settings.control_mode),
            ..SessionRecord::default()
        },
    );
    let metadata = {
        let (protocol, options) = (protocol.clone(), options.clone());
        tokio::task::spawn_blocking(move || probe_metadata(&protocol, &options))
            .await
            .map_err(|e| SessionError::Stopped {
                what: "the metadata probe",
                detail: e.to_string(),
            })??
    };
    let options = advertised_options(options, &metadata);
    spec::validate_options(protocol.spec.value(), &options).map_err(SessionError::Options)?;

    let endpoint = SessionEndpoint::bind(&settings.relay).await?;
    let ticket = endpoint.ticket().await?.to_string();
    let mut invitation = NewInvitation::signed(client.identity(), &protocol_id, &ticket);
    invitation.message = metadata.name.clone();
    invitation.tags = metadata.tags.clone();
    invitation.invitation_type = InvitationType::parse(&metadata.invite_type).unwrap_or_default();
    invitation.host_control_mode = settings.control_mode;
    invitation.options = options.clone();
    let lease = client.create_invitation(&invitation).await?;
    let post_id = lease.post_id.clone();
    let _ = session_dir.update(|record| {
        record.post_id = Some(post_id.clone());
        record.status = Some(SessionStatus::Hosting);
    });
    let events = session_dir.events().clone();
    events.emit(Event::InviteCreated {
        post_id: post_id.clone(),
        protocol_id: protocol_id.clone(),
        expires_at: lease.expires_at.clone(),
    });
    for line in [
        "invite_created: true".to_string(),
        format!("post_id: {post_id}"),
        "waiting_for_peer: true".to_string(),
    ] {
        (settings.display)(Role::Host, &line);
    }
    if let Some(invited) = on_invited {
        let _ = invited.send(post_id.clone());
    }
    let renewal = Renewal {
        renew_for,
        every: renew_every,
    };
    let lease = Lease::keep(client.clone(), &lease, events.clone(), renewal);
    let handshake = Handshake::Host {
        server: client.paced(HOST_CHECKS_PER_SECOND),
        post_id: post_id.clone(),
        protocol_id,
        control_mode: settings.control_mode,
    };
    let play = Play::new(Role::Host, protocol, options, settings, &session_dir);
    let connect = Connect::Accept {
        endpoint,
        lease: Some(lease),
    };
    let played = run_side(play, connect, handshake, Some(&client), post_id.clone()).await;
    if played.is_err() {
        let _ = client.cancel_invitation(&post_id).await;
    }
    played
}

/// What the invitation advertises and both engines use: the user's options, completed by
/// the options the hooks resolved (e.g. a balance table behind a preset name), so a guest
/// plays with exactly the host's numbers. The reference uses the hooks' options only when
/// the user gave none.
fn advertised_options(user: Map<String, Value>, metadata: &HostMetadata) -> Map<String, Value> {
    let mut options = metadata.default_options.clone();
    options.extend(user);
    options
}

/// `proto_init` + `proto_host_metadata` on a throw-away state dir, as the reference does
/// before publishing (display name, tags, invitation type, default options). Hooks missing
/// one the flow mode needs are refused here, before anything is published.
fn probe_metadata(
    protocol: &Protocol,
    options: &Map<String, Value>,
) -> Result<HostMetadata, SessionError> {
    let scratch =
        tempfile::tempdir().map_err(|e| SessionError::io("cannot create a scratch dir", e))?;
    let mut hooks = PythonHooks::load_for(&protocol.dir, &protocol.spec)?;
    let context = InitContext {
        options,
        role: Role::Host,
        args: &[],
        state_dir: scratch.path(),
        decision: None,
        pass_decision: false,
        timing: protocol.spec.value().get("timing").cloned(),
    };
    hooks.init(&context)?;
    Ok(hooks.host_metadata()?)
}
