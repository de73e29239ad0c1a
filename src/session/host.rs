//! `aigenora host`: publish a signed invitation, keep it alive, serve the first guest that
//! completes the handshake, play, and report the end. A dialer that takes the invitation
//! (registers its session) and then fails the handshake costs the host that invitation
//! only: it offers a fresh one.

use std::num::NonZeroU32;
use std::time::Duration;

use serde_json::{Map, Value};
use tokio::sync::oneshot;

use super::lease::{Lease, Renewal};
use super::pipeline::{Connect, Handshake, Play, run_side};
use super::reports::recording_failed_start;
use super::{PlaySettings, Protocol, ProtocolSource, SessionEnd, SessionError, SessionRecorder};
use crate::api::invitation::NewInvitation;
use crate::client::RestClient;
use crate::hooks::python_hooks::PythonHooks;
use crate::hooks::{Hooks, HostMetadata, InitContext};
use crate::records::{Event, SessionRecord, SessionStatus};
use crate::spec::{CheckedOptions, Role};
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
    /// `--options` (checked against the spec); the hooks' default options fill the rest.
    pub options: CheckedOptions,
    pub settings: PlaySettings,
    pub session_dir: SessionRecorder,
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
    recording_failed_start(&dir, host_and_play(request)).await
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
        tokio::task::spawn_blocking(move || probe_metadata(&protocol, options.as_map()))
            .await
            .map_err(|e| SessionError::Stopped {
                what: "the metadata probe",
                detail: e.to_string(),
            })??
    };
    let options = options
        .under_defaults(protocol.spec.value(), &metadata.default_options)
        .map_err(SessionError::Options)?;

    let offer = Offer {
        client: &client,
        protocol: &protocol,
        options: &options,
        settings: &settings,
        session_dir: &session_dir,
        metadata: &metadata,
        renewal: Renewal {
            renew_for,
            every: renew_every,
        },
    };
    let mut on_invited = on_invited;
    let mut reoffers = 0;
    loop {
        let (connect, post_id) = offer.publish().await?;
        if let Some(invited) = on_invited.take() {
            let _ = invited.send(post_id.clone());
        }
        let handshake = Handshake::Host {
            server: client.clone(),
            checks: Box::new(client.paced(HOST_CHECKS_PER_SECOND)),
            post_id: post_id.clone(),
            protocol_id: protocol_id.clone(),
            control_mode: settings.control_mode,
        };
        let play = Play::new(
            Role::Host,
            protocol.clone(),
            options.clone(),
            settings.clone(),
            &session_dir,
        );
        let played = run_side(play, connect, handshake).await;
        match played {
            // The dialer's session is reported failed, which closed this invitation: offer
            // a fresh one, so a bad dialer costs the host one invitation, never its game.
            Err(taken @ SessionError::InvitationTaken { .. }) if reoffers < MAX_REOFFERS => {
                reoffers += 1;
                (settings.display)(Role::Host, &format!("invitation_taken: {taken}"));
            }
            Err(error) => {
                let _ = client.cancel_invitation(&post_id).await;
                return Err(error);
            }
            ended => return ended,
        }
    }
}

/// How many fresh invitations a host offers after dialers took one and failed their
/// handshake, before it gives up with that failure.
pub const MAX_REOFFERS: u32 = 10;

/// What publishing an invitation takes; one host may publish several in turn.
struct Offer<'a> {
    client: &'a RestClient,
    protocol: &'a Protocol,
    options: &'a CheckedOptions,
    settings: &'a PlaySettings,
    session_dir: &'a SessionRecorder,
    metadata: &'a HostMetadata,
    renewal: Renewal,
}

impl Offer<'_> {
    /// Binds an endpoint, publishes a signed invitation for its ticket, records and shows
    /// its post id, and starts keeping it: how the host will accept, and the post id.
    async fn publish(&self) -> Result<(Connect, String), SessionError> {
        let protocol_id = self.protocol.spec.protocol_id();
        let endpoint = SessionEndpoint::bind(&self.settings.relay).await?;
        let ticket = endpoint.ticket().await?.to_string();
        let mut invitation = NewInvitation::signed(self.client.identity(), &protocol_id, &ticket);
        invitation.message = self.metadata.name.clone();
        invitation.tags = self.metadata.tags.clone();
        invitation.invitation_type = self.metadata.invite_type;
        invitation.host_control_mode = self.settings.control_mode;
        invitation.options = self.options.as_map().clone();
        let lease = self.client.create_invitation(&invitation).await?;
        let post_id = lease.post_id.clone();
        let _ = self.session_dir.update(|record| {
            record.post_id = Some(post_id.clone());
            record.status = Some(SessionStatus::Hosting);
        });
        let events = self.session_dir.events().clone();
        events.emit(Event::InviteCreated {
            post_id: post_id.clone(),
            protocol_id,
            expires_at: lease.expires_at.clone(),
        });
        for line in [
            "invite_created: true".to_string(),
            format!("post_id: {post_id}"),
            "waiting_for_peer: true".to_string(),
        ] {
            (self.settings.display)(Role::Host, &line);
        }
        let lease = Lease::keep(self.client.clone(), &lease, events, self.renewal);
        let connect = Connect::Accept {
            endpoint,
            lease: Some(lease),
        };
        Ok((connect, post_id))
    }
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
        desk: None,
    };
    hooks.init(&context)?;
    let metadata = hooks.host_metadata()?;
    // The SDK's flusher may still owe a rewrite inside the scratch dir about to go.
    let _ = hooks.flush_files();
    Ok(metadata)
}
