//! The browser controller: one page, served on 127.0.0.1 only, for this machine's sessions
//! (all of a data dir with `aigenora session web`, or the one session of `host|join --web`).
//! Every API call carries a random token (one for the server's session list, one per
//! session for its state, stream and decisions); Host and Origin must be this server's own;
//! POSTs must be `application/json`. The page follows a session through a server-sent event
//! stream fed from the session's files (events, snapshot, the open decision window) within
//! milliseconds, and answers decision windows through the same checked submission as
//! `session decide`; a room's page queues actions as `session action` does. Connections are capped and timed like the community server's
//! ([`LIMITS`]); tokens are checked before any body is read; event streams are capped.

mod guard;
mod room;
mod routes;
mod sessions;
mod stream;

use crate::layout::SessionDir;
use std::net::SocketAddr;
use std::sync::Arc;

pub use sessions::{Scope, session_token};
pub use stream::linger;

/// Where `host|join --web` keeps its controller's address (with the token) in the session dir.
pub const URL_FILE: &str = "controller.url";

/// What one server serves.
pub struct Controller {
    pub scope: Scope,
    /// The token for the session list.
    pub token: String,
    /// The address it listens on, once bound.
    pub addr: SocketAddr,
}

impl Controller {
    /// The page's address, with the list token in the fragment (never sent to a server).
    pub fn url(&self) -> String {
        format!("http://{}/#token={}", self.addr, self.token)
    }
}

/// Binds 127.0.0.1:`port` (0: any free port) and returns the controller and the server
/// future to run.
pub async fn bind(
    scope: Scope,
    port: u16,
) -> std::io::Result<(
    Arc<Controller>,
    impl std::future::Future<Output = std::io::Result<()>>,
)> {
    if let Scope::One(root) = &scope {
        session_token(root)?;
    }
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", port)).await?;
    let controller = Arc::new(Controller {
        scope,
        token: sessions::random_token(),
        addr: listener.local_addr()?,
    });
    let app = routes::router(controller.clone());
    let serving = crate::http_server::serve(listener, app, LIMITS, std::future::pending());
    Ok((controller, async move {
        serving.await;
        Ok(())
    }))
}

/// The controller's connection limits: a person's page needs a handful of connections (the
/// list, the stream, a decision), so anything beyond a few dozen, or idle or slow for
/// seconds, is someone else's and is dropped.
pub const LIMITS: crate::http_server::HttpLimits = crate::http_server::HttpLimits {
    header_timeout: std::time::Duration::from_secs(5),
    body_timeout: std::time::Duration::from_secs(5),
    io_timeout: std::time::Duration::from_secs(30),
    max_connections: 64,
    connections_per_address: 0,
    shutdown_grace: std::time::Duration::from_secs(1),
};

/// Serves one session from a thread of its own (`host|join --web`); returns the page's
/// address once it listens.
pub fn serve_in_background(session: SessionDir) -> std::io::Result<String> {
    let (ready, bound) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let runtime = match tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
        {
            Ok(runtime) => runtime,
            Err(error) => return drop(ready.send(Err(error))),
        };
        runtime.block_on(async move {
            match bind(Scope::One(session), 0).await {
                Ok((controller, serving)) => {
                    let _ = ready.send(Ok(controller.url()));
                    let _ = serving.await;
                }
                Err(error) => drop(ready.send(Err(error))),
            }
        });
    });
    bound
        .recv()
        .unwrap_or_else(|_| Err(std::io::Error::other("the controller thread stopped")))
}
