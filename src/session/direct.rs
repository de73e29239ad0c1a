//! `aigenora guest --protocol-dir DIR --iroh-ticket T`: dial a host directly, with no
//! server and no handshake (the host replays our first frame as the engine's first message).

use serde_json::{Map, Value, json};

use super::runner::{Handshaken, Play, conclude, dial, play_over};
use super::{PlaySettings, Protocol, SessionDir, SessionEnd};
use crate::spec::{self, Role};
use crate::transport::Ticket;

/// Plays one session as a direct guest.
pub async fn guest(
    protocol: Protocol,
    ticket: Ticket,
    options: Map<String, Value>,
    settings: PlaySettings,
    session_dir: SessionDir,
) -> Result<SessionEnd, String> {
    spec::validate_options(protocol.spec.value(), &options).map_err(|e| format!("options: {e}"))?;
    session_dir.record_start(
        Role::Guest,
        json!({
            "mode": "direct",
            "protocol_dir": protocol.dir,
            "protocol_id": protocol.spec.protocol_id(),
        }),
    );
    let play = Play::new(Role::Guest, protocol, options, settings, &session_dir);
    let (endpoint, link) = dial(&play.settings, &ticket, session_dir.events()).await?;
    let display = play.settings.display.clone();
    let no_handshake = |_: &mut _, _: &Play| {
        Ok(Handshaken {
            session_id: String::new(),
            replay: None,
            heartbeat: false,
        })
    };
    let (_, result) = play_over(endpoint, link, play, no_handshake).await?;
    let end = SessionEnd {
        session_dir: session_dir.root().to_path_buf(),
        session_id: String::new(),
        post_id: String::new(),
        result,
    };
    Ok(conclude(end, None, &session_dir, &display, Role::Guest).await)
}
