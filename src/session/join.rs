//! `aigenora join <post_id>`: check the invitation and its binding signature, get the
//! protocol ready, dial the host, verify its session proof, register the session with the
//! server, play, and report the end.

use serde_json::json;

use super::handshake::GuestSide;
use super::host::announce_peer;
use super::reports::record_failed_start;
use super::runner::{Handshaken, Play, conclude, dial, play_over};
use super::{PlaySettings, Protocol, SessionDir, SessionEnd, prepare_protocol};
use crate::api::session::NewSession;
use crate::client::RestClient;
use crate::data_dir::DataDir;
use crate::identity::{self, new_session_nonce};
use crate::spec::{self, Role};
use crate::transport::Ticket;

/// Everything `join` needs.
pub struct JoinRequest {
    pub client: RestClient,
    pub data_dir: DataDir,
    pub post_id: String,
    pub settings: PlaySettings,
    pub session_dir: SessionDir,
    /// Run hooks even if they are an unfilled skeleton (testing only).
    pub allow_skeleton: bool,
}

/// Joins one invitation and plays it to the end. `Err` when the game never started; why is
/// recorded in the session dir too.
pub async fn join(request: JoinRequest) -> Result<SessionEnd, String> {
    let dir = request.session_dir.clone();
    join_and_play(request)
        .await
        .inspect_err(|error| record_failed_start(&dir, "start_failed", error))
}

async fn join_and_play(request: JoinRequest) -> Result<SessionEnd, String> {
    let JoinRequest {
        client,
        data_dir,
        post_id,
        settings,
        session_dir,
        allow_skeleton,
    } = request;
    let identity = client.identity().clone();
    let invitation = client
        .invitation(&post_id)
        .await
        .map_err(|e| e.to_string())?;
    if invitation.public_key == identity.public_key() {
        return Err(format!(
            "invitation {post_id} is your own; join it from another identity"
        ));
    }
    if invitation.protocol_id.is_empty() {
        return Err(format!("invitation {post_id} names no protocol_id"));
    }
    let ticket: Ticket = invitation
        .verified_ticket()
        .map_err(|e| format!("invitation {post_id}: {e}"))?
        .parse()
        .map_err(|e: crate::transport::TicketError| format!("invitation {post_id}: {e}"))?;
    let prepared =
        prepare_protocol(&client, &data_dir, &invitation.protocol_id, allow_skeleton).await?;
    let options = invitation.options.clone();
    spec::validate_options(prepared.spec.value(), &options).map_err(|e| {
        format!(
            "the host's options do not fit protocol {}: {e}",
            invitation.protocol_id
        )
    })?;
    let protocol = Protocol {
        dir: prepared.dir.clone(),
        spec: prepared.spec,
    };
    session_dir.record_start(
        Role::Guest,
        json!({
            "post_id": post_id,
            "protocol_id": invitation.protocol_id,
            "protocol_dir": protocol.dir,
            "protocol_source": prepared.source,
            "local_control_mode": settings.control_mode.as_str(),
            "peer_control_mode": invitation.host_control_mode.as_str(),
        }),
    );
    (settings.display)(
        Role::Guest,
        &format!("[join] protocol_dir: {}", protocol.dir.display()),
    );

    let play = Play::new(Role::Guest, protocol, options, settings, &session_dir);
    let (endpoint, link) = dial(&play.settings, &ticket, session_dir.events()).await?;
    let runtime = tokio::runtime::Handle::current();
    let display = play.settings.display.clone();
    let (id, guest_client) = (post_id.clone(), client.clone());
    let played = play_over(endpoint, link, play, move |channel, play| {
        let side = GuestSide {
            identity: &identity,
            post_id: &id,
            host_public_key: &invitation.public_key,
            protocol_id: &invitation.protocol_id,
            control_mode: play.settings.control_mode,
            nonce: new_session_nonce(),
        };
        let proof = side.request_proof(channel).map_err(|e| e.to_string())?;
        let canonical = side.canonical();
        let session = NewSession {
            post_id: id.clone(),
            host_public_key: invitation.public_key.clone(),
            guest_public_key: identity.public_key().to_string(),
            protocol_id: invitation.protocol_id.clone(),
            session_nonce: side.nonce.clone(),
            host_signature: proof.host_signature,
            guest_signature: identity.sign_hex(canonical.as_bytes()),
        };
        let session_id = identity::session_id(&canonical);
        let created = runtime
            .block_on(guest_client.create_session(&session))
            .map_err(|e| format!("handshake failed: {e}"))?;
        if created.session_id != session_id {
            return Err(format!(
                "handshake failed: the server named the session {}, expected {session_id}",
                created.session_id
            ));
        }
        side.send_ready(channel, &session_id)
            .map_err(|e| e.to_string())?;
        let peer_mode = proof
            .host_control_mode
            .unwrap_or(invitation.host_control_mode);
        announce_peer(
            &play.session_dir,
            &play.settings,
            Role::Guest,
            &session_id,
            &invitation.public_key,
            peer_mode.as_str(),
            &invitation.protocol_id,
        );
        Ok(Handshaken {
            session_id,
            replay: None,
            heartbeat: true,
        })
    })
    .await;
    let (session_id, result) = match played {
        Ok(played) => played,
        Err(handshake_error) => {
            record_failed_start(&session_dir, "handshake_failed", &handshake_error);
            return Err(handshake_error);
        }
    };
    let end = SessionEnd {
        session_dir: session_dir.root().to_path_buf(),
        session_id,
        post_id,
        result,
    };
    Ok(conclude(end, Some(&client), &session_dir, &display, Role::Guest).await)
}
