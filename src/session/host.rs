//! `aigenora host`: publish a signed invitation, keep it alive, serve the first guest that
//! completes the handshake, play, and report the end.

use std::time::{Duration, Instant};

use serde_json::{Map, Value, json};
use tokio::sync::oneshot;

use super::handshake::HostSide;
use super::reports::record_failed_start;
use super::runner::{Handshaken, Play, announce_connection, conclude, play_over};
use super::{PlaySettings, Protocol, SessionDir, SessionEnd, patch};
use crate::api::invitation::{InvitationType, NewInvitation};
use crate::client::RestClient;
use crate::engine::EventLog;
use crate::hooks::python_hooks::PythonHooks;
use crate::hooks::{Hooks, HostMetadata, InitContext};
use crate::spec::{self, Role};
use crate::transport::SessionEndpoint;

/// The reference renews every 120 s; invitations live 300 s on the server.
pub const RENEW_EVERY: Duration = Duration::from_secs(120);

/// Everything `host` needs.
pub struct HostRequest {
    pub client: RestClient,
    pub protocol: Protocol,
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
/// dir too.
pub async fn host(request: HostRequest) -> Result<SessionEnd, String> {
    let dir = request.session_dir.clone();
    host_and_play(request)
        .await
        .inspect_err(|error| record_failed_start(&dir, "start_failed", error))
}

async fn host_and_play(request: HostRequest) -> Result<SessionEnd, String> {
    let HostRequest {
        client,
        protocol,
        options,
        settings,
        session_dir,
        renew_for,
        renew_every,
        on_invited,
    } = request;
    let identity = client.identity().clone();
    let protocol_id = protocol.spec.protocol_id();
    session_dir.record_start(
        Role::Host,
        json!({
            "protocol_dir": protocol.dir,
            "protocol_id": protocol_id,
            "local_control_mode": settings.control_mode.as_str(),
        }),
    );
    let metadata = {
        let (protocol, options) = (protocol.clone(), options.clone());
        tokio::task::spawn_blocking(move || probe_metadata(&protocol, &options))
            .await
            .map_err(|e| format!("metadata probe stopped: {e}"))??
    };
    let options = advertised_options(options, &metadata);
    spec::validate_options(protocol.spec.value(), &options).map_err(|e| format!("options: {e}"))?;

    let mut endpoint = SessionEndpoint::bind(&settings.relay)
        .await
        .map_err(|e| e.to_string())?;
    let ticket = endpoint
        .ticket()
        .await
        .map_err(|e| e.to_string())?
        .to_string();
    let mut invitation = NewInvitation::signed(&identity, &protocol_id, &ticket);
    invitation.message = metadata.name.clone();
    invitation.tags = metadata.tags.clone();
    invitation.invitation_type = InvitationType::parse(&metadata.invite_type).unwrap_or_default();
    invitation.host_control_mode = settings.control_mode;
    invitation.options = options.clone();
    let lease = client
        .create_invitation(&invitation)
        .await
        .map_err(|e| e.to_string())?;
    let post_id = lease.post_id.clone();
    let events = session_dir.events().clone();
    events.emit(
        "invite_created",
        json!({"post_id": post_id, "protocol_id": protocol_id, "expires_at": lease.expires_at}),
        None,
    );
    let _ = session_dir.update(patch(json!({"post_id": post_id, "status": "hosting"})));
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
    let renewal = renew_for.map(|total| {
        tokio::spawn(keep_renewing(
            client.clone(),
            post_id.clone(),
            events.clone(),
            total,
            renew_every,
        ))
    });
    let play = Play::new(Role::Host, protocol, options, settings, &session_dir);
    let link = endpoint.accept_first().await;
    if let Some(renewal) = renewal {
        renewal.abort();
    }
    let link = link.map_err(|e| e.to_string())?;
    announce_connection(&events, &endpoint, &link, None);

    let display = play.settings.display.clone();
    let (id, mode) = (post_id.clone(), play.settings.control_mode);
    let played = play_over(endpoint, link, play, move |channel, play| {
        let side = HostSide {
            identity: &identity,
            post_id: &id,
            protocol_id: &protocol_id,
            control_mode: mode,
        };
        let shake = side.handshake(channel).map_err(|e| e.to_string())?;
        let guest_mode = shake.guest_control_mode.as_str();
        announce_peer(
            &play.session_dir,
            &play.settings,
            Role::Host,
            &shake.session_id,
            &shake.guest_public_key,
            guest_mode,
            &protocol_id,
        );
        let direct_guest = shake.replay.is_some();
        Ok(Handshaken {
            session_id: shake.session_id,
            replay: shake.replay,
            heartbeat: !direct_guest,
        })
    })
    .await;
    let (session_id, result) = match played {
        Ok(played) => played,
        Err(handshake_error) => {
            record_failed_start(&session_dir, "handshake_failed", &handshake_error);
            let _ = client.cancel_invitation(&post_id).await;
            return Err(handshake_error);
        }
    };
    let end = SessionEnd {
        session_dir: session_dir.root().to_path_buf(),
        session_id,
        post_id,
        result,
    };
    Ok(conclude(end, Some(&client), &session_dir, &display, Role::Host).await)
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
/// before publishing (display name, tags, invitation type, default options).
fn probe_metadata(
    protocol: &Protocol,
    options: &Map<String, Value>,
) -> Result<HostMetadata, String> {
    let scratch = tempfile::tempdir().map_err(|e| format!("cannot create a scratch dir: {e}"))?;
    let mut hooks = PythonHooks::load(&protocol.dir).map_err(|e| e.to_string())?;
    let context = InitContext {
        options,
        role: Role::Host,
        args: &[],
        state_dir: scratch.path(),
        decision: None,
        pass_decision: false,
        timing: protocol.spec.value().get("timing").cloned(),
    };
    hooks.init(&context).map_err(|e| e.to_string())?;
    hooks.host_metadata().map_err(|e| e.to_string())
}

/// Renews every `every` until `total` has passed or a renewal fails (the invitation was
/// matched, cancelled or expired).
async fn keep_renewing(
    client: RestClient,
    post_id: String,
    events: EventLog,
    total: Duration,
    every: Duration,
) {
    let started = Instant::now();
    loop {
        tokio::time::sleep(every).await;
        if started.elapsed() >= total {
            events.emit(
                "invitation_renew_stopped",
                json!({"post_id": post_id, "reason": "invitation TTL reached"}),
                None,
            );
            return;
        }
        match client.renew_invitation(&post_id).await {
            Ok(lease) => events.emit(
                "invitation_renewed",
                json!({"post_id": post_id, "expires_at": lease.expires_at}),
                None,
            ),
            Err(error) => {
                events.emit(
                    "invitation_renew_failed",
                    json!({"post_id": post_id, "error": error.to_string()}),
                    None,
                );
                return;
            }
        }
    }
}

/// Records and prints that a guest completed the handshake.
pub(crate) fn announce_peer(
    dir: &SessionDir,
    settings: &PlaySettings,
    role: Role,
    session_id: &str,
    peer_key: &str,
    peer_mode: &str,
    protocol_id: &str,
) {
    dir.events().emit(
        "peer_joined",
        json!({"session_id": session_id, "peer_public_key": peer_key, "peer_control_mode": peer_mode, "protocol_id": protocol_id}),
        None,
    );
    let _ = dir.update(patch(json!({"session_id": session_id, "peer_public_key": peer_key, "peer_control_mode": peer_mode})));
    (settings.display)(role, &format!("session_id: {session_id}"));
    (settings.display)(
        role,
        &format!("peer_joined: {}...", peer_key.get(..16).unwrap_or(peer_key)),
    );
}
