//! The community server (`aigenora server`): the REST API of docs/rest-api.md over axum,
//! signed requests, registration with proof of work, protocols, invitations and sessions,
//! stored with sqlx (SQLite by default). Start it in-process with [`serve`].

pub mod clock;
mod cursor;
mod error;
mod page_cache;
mod replay;
mod routes;
mod seed;
mod signature;
pub mod store;

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use tokio::net::TcpListener;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

use page_cache::PageCache;
use replay::ReplayCache;
use store::{Store, StoreError};

/// Where `aigenora server` listens unless told otherwise.
pub const DEFAULT_LISTEN: &str = "127.0.0.1:41000";
/// Leading zero bytes the registration proof of work needs (the reference solves 2 in ~0.1 s).
pub const DEFAULT_POW_DIFFICULTY: u8 = 2;
/// An invitation is offered this long after its creation or last renewal.
pub const INVITATION_TTL: Duration = Duration::from_secs(300);
/// Largest request body accepted.
pub const MAX_BODY_BYTES: usize = 1024 * 1024;
/// Offered invitations one key may have at a time.
pub const MAX_ACTIVE_INVITATIONS: i64 = 3;
/// Accepted distance between a request's X-Timestamp and the server clock.
pub const SIGNATURE_WINDOW_SECS: i64 = 300;
/// How long a registration nonce stays usable.
pub const CHALLENGE_TTL: Duration = Duration::from_secs(300);

/// How to run a server.
#[derive(Debug, Clone)]
pub struct ServerConfig {
    /// Address to bind; port 0 picks a free port (see [`ServerHandle::addr`]).
    pub listen: SocketAddr,
    /// `sqlite://PATH` (created if missing) or `sqlite::memory:`.
    pub database_url: String,
    pub pow_difficulty: u8,
    pub invitation_ttl: Duration,
    pub max_body_bytes: usize,
}

impl ServerConfig {
    /// Defaults for everything but where to listen and which database to use.
    pub fn new(listen: SocketAddr, database_url: impl Into<String>) -> ServerConfig {
        ServerConfig {
            listen,
            database_url: database_url.into(),
            pow_difficulty: DEFAULT_POW_DIFFICULTY,
            invitation_ttl: INVITATION_TTL,
            max_body_bytes: MAX_BODY_BYTES,
        }
    }
}

/// `sqlite://` URL of a database file.
pub fn sqlite_url(path: &std::path::Path) -> String {
    format!("sqlite://{}", path.display())
}

/// Why a server could not start or stop cleanly.
#[derive(Debug, thiserror::Error)]
pub enum ServerError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("cannot listen on {addr}: {source}")]
    Bind {
        addr: SocketAddr,
        source: std::io::Error,
    },
    #[error("the server stopped with an error: {0}")]
    Serve(std::io::Error),
}

/// The limits and policies handlers apply.
#[derive(Debug, Clone)]
pub(crate) struct Limits {
    pub pow_difficulty: u8,
    pub invitation_ttl_ms: i64,
    pub max_body_bytes: usize,
    pub signature_window_secs: i64,
}

/// What every handler shares.
pub(crate) struct AppState {
    pub store: Store,
    pub replay: ReplayCache,
    pub limits: Limits,
    /// Current answers of the offered-invitations list.
    pub offered_pages: PageCache,
}

/// A running server. Dropping it also stops the server (without waiting).
#[derive(Debug)]
pub struct ServerHandle {
    addr: SocketAddr,
    stop: oneshot::Sender<()>,
    task: JoinHandle<Result<(), std::io::Error>>,
}

impl ServerHandle {
    /// The bound address (the real port when the config asked for port 0).
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// `http://ADDR`, ready for a [`crate::client::RestClient`].
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Stops accepting, finishes in-flight requests, closes the database.
    pub async fn shutdown(self) -> Result<(), ServerError> {
        let ServerHandle { stop, task, .. } = self;
        let _ = stop.send(());
        match task.await {
            Ok(result) => result.map_err(ServerError::Serve),
            Err(join) => Err(ServerError::Serve(std::io::Error::other(join.to_string()))),
        }
    }
}

/// Opens the database, seeds the built-in protocols, binds, and serves in the background.
pub async fn serve(config: ServerConfig) -> Result<ServerHandle, ServerError> {
    let store = Store::open(&config.database_url).await?;
    seed::seed_builtin_protocols(&store).await?;
    let bind = |source| ServerError::Bind {
        addr: config.listen,
        source,
    };
    let listener = TcpListener::bind(config.listen).await.map_err(bind)?;
    let addr = listener.local_addr().map_err(bind)?;
    let state = Arc::new(AppState {
        store: store.clone(),
        replay: ReplayCache::default(),
        limits: Limits {
            pow_difficulty: config.pow_difficulty,
            invitation_ttl_ms: i64::try_from(config.invitation_ttl.as_millis()).unwrap_or(i64::MAX),
            max_body_bytes: config.max_body_bytes,
            signature_window_secs: SIGNATURE_WINDOW_SECS,
        },
        offered_pages: PageCache::default(),
    });
    let app = routes::router(state);
    let (stop, stopped) = oneshot::channel::<()>();
    let task = tokio::spawn(async move {
        let served = axum::serve(listener, app)
            .with_graceful_shutdown(async move {
                let _ = stopped.await;
            })
            .await;
        store.close().await;
        served
    });
    tracing::info!(%addr, database = %config.database_url, "community server listening");
    Ok(ServerHandle { addr, stop, task })
}

/// Serves until SIGINT or SIGTERM, then shuts down gracefully.
pub async fn run_until_signal(handle: ServerHandle) -> Result<(), ServerError> {
    shutdown_signal().await;
    tracing::info!("shutting down");
    handle.shutdown().await
}

async fn shutdown_signal() {
    let interrupt = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let terminate = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut signal) => {
                signal.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let terminate = std::future::pending::<()>();
    tokio::select! {
        () = interrupt => {}
        () = terminate => {}
    }
}
