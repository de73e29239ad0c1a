//! Direct play, by explicit choice of both people involved: `aigenora host --direct` shows
//! its ticket and plays the first dialer; `aigenora guest --iroh-ticket T` dials such a host.
//! No server, no invitation, no handshake (a published invitation never plays this way).

use super::pipeline::{Connect, Handshake, Play, run_side};
use super::reports::recording_failed_start;
use super::{PlaySettings, Protocol, SessionEnd, SessionError, SessionRecorder};
use crate::records::{SessionRecord, SessionStatus};
use crate::spec::{CheckedOptions, Role};
use crate::transport::{SessionEndpoint, Ticket};

/// Hosts one direct session: the ticket is shown (`ticket: …`) for the guest to dial.
pub async fn host(
    protocol: Protocol,
    options: CheckedOptions,
    settings: PlaySettings,
    session_dir: SessionRecorder,
) -> Result<SessionEnd, SessionError> {
    let played = async {
        start(Role::Host, &protocol, &settings, &session_dir);
        let relay = settings.relay.clone();
        let display = settings.display.clone();
        let mut play = Play::new(Role::Host, protocol, options, settings, &session_dir);
        // Hooks that cannot play are refused before the ticket is shown.
        let (endpoint, ready) = tokio::join!(SessionEndpoint::bind(&relay), play.hooks_ready());
        let endpoint = endpoint?;
        if let Err(error) = ready {
            endpoint.shutdown().await;
            return Err(error);
        }
        let ticket = endpoint.ticket().await?;
        let _ = session_dir.update(|record| record.status = Some(SessionStatus::Hosting));
        for line in [format!("ticket: {ticket}"), "waiting_for_peer: true".into()] {
            display(Role::Host, &line);
        }
        let connect = Connect::Accept {
            endpoint,
            lease: None,
        };
        run_side(play, connect, Handshake::Skip).await
    };
    recording_failed_start(&session_dir, played).await
}

/// Plays one session as a direct guest of the host at `ticket`.
pub async fn guest(
    protocol: Protocol,
    ticket: Ticket,
    options: CheckedOptions,
    settings: PlaySettings,
    session_dir: SessionRecorder,
) -> Result<SessionEnd, SessionError> {
    let played = async {
        start(Role::Guest, &protocol, &settings, &session_dir);
        let play = Play::new(Role::Guest, protocol, options, settings, &session_dir);
        run_side(play, Connect::Dial(ticket), Handshake::Skip).await
    };
    recording_failed_start(&session_dir, played).await
}

/// Records that a direct side starts.
fn start(role: Role, protocol: &Protocol, settings: &PlaySettings, session_dir: &SessionRecorder) {
    session_dir.record_start(
        role,
        SessionRecord {
            mode: Some("direct".into()),
            protocol_dir: Some(protocol.dir.clone()),
            protocol_id: Some(protocol.spec.protocol_id()),
            local_control_mode: Some(settings.control_mode),
            ..SessionRecord::default()
        },
    );
}
