//! `aigenora guest --protocol-dir DIR --iroh-ticket T`: dial a host directly, with no
//! server and no handshake (the host replays our first frame as the engine's first message).

use serde_json::{Map, Value, json};

use super::reports::record_end;
use super::runner::{PreloadedHooks, run_engine};
use super::{PlaySettings, Protocol, SessionDir, SessionEnd, patch};
use crate::engine::iso_now;
use crate::spec::{self, Role};
use crate::transport::{DEFAULT_CONNECT_TIMEOUT, IrohChannel, SessionEndpoint, Ticket};

/// Plays one session as a direct guest.
pub async fn guest(
    protocol: Protocol,
    ticket: Ticket,
    options: Map<String, Value>,
    settings: PlaySettings,
    session_dir: SessionDir,
) -> Result<SessionEnd, String> {
    spec::validate_options(protocol.spec.value(), &options).map_err(|e| format!("options: {e}"))?;
    let _ = session_dir.update(patch(json!({
        "role": "guest",
        "mode": "direct",
        "status": "starting",
        "protocol_dir": protocol.dir,
        "protocol_id": protocol.spec.protocol_id(),
        "started_at": iso_now(),
        "pid": std::process::id(),
    })));
    let hooks = PreloadedHooks::start(&protocol);
    let endpoint = SessionEndpoint::bind(&settings.relay)
        .await
        .map_err(|e| e.to_string())?;
    let link = endpoint
        .dial(&ticket, DEFAULT_CONNECT_TIMEOUT)
        .await
        .map_err(|e| e.to_string())?;
    let runtime = tokio::runtime::Handle::current();
    let display = settings.display.clone();
    let dir = session_dir.clone();
    let result = tokio::task::spawn_blocking(move || {
        let mut channel = IrohChannel::new(link, &runtime);
        run_engine(
            Role::Guest,
            &protocol,
            hooks,
            options,
            &settings,
            &dir,
            &mut channel,
        )
    })
    .await
    .map_err(|e| format!("session thread stopped: {e}"))?;
    endpoint.shutdown().await;
    let end = SessionEnd {
        session_dir: session_dir.root().to_path_buf(),
        session_id: String::new(),
        post_id: String::new(),
        result,
    };
    record_end(&end, &session_dir);
    display(Role::Guest, "done");
    Ok(end)
}
