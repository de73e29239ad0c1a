//! `aigenora guest --protocol-dir DIR --iroh-ticket T`: dial a host directly, with no
//! server and no handshake (the host replays our first frame as the engine's first message).

use serde_json::{Map, Value};

use super::pipeline::{Connect, Handshake, Play, run_side};
use super::reports::record_failed_start;
use super::{PlaySettings, Protocol, SessionDir, SessionEnd, SessionError};
use crate::records::SessionRecord;
use crate::spec::{self, Role};
use crate::transport::Ticket;

/// Plays one session as a direct guest.
pub async fn guest(
    protocol: Protocol,
    ticket: Ticket,
    options: Map<String, Value>,
    settings: PlaySettings,
    session_dir: SessionDir,
) -> Result<SessionEnd, SessionError> {
    let played = async {
        spec::validate_options(protocol.spec.value(), &options).map_err(SessionError::Options)?;
        session_dir.record_start(
            Role::Guest,
            SessionRecord {
                mode: Some("direct".into()),
                protocol_dir: Some(protocol.dir.clone()),
                protocol_id: Some(protocol.spec.protocol_id()),
                ..SessionRecord::default()
            },
        );
        let play = Play::new(Role::Guest, protocol, options, settings, &session_dir);
        run_side(
            play,
            Connect::Dial(ticket),
            Handshake::Skip,
            None,
            String::new(),
        )
        .await
    };
    played
        .await
        .inspect_err(|error| record_failed_start(&session_dir, error))
}
