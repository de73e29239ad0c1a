//! The community server (`aigenora server`): the REST API of docs/rest-api.md over axum,
//! signed requests, registration with proof of work, protocols, invitations, sessions and
//! rooms' control plane, stored with sqlx (SQLite by default), with the limits of
//! docs/SECURITY.md for an open network. Start it in-process with [`serve`].

pub mod clock;
pub mod config;
mod cursor;
mod error;
mod groups;
mod page_cache;
mod rate_limit;
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

pub use config::{
    CHALLENGE_TTL, DEFAULT_LISTEN, DEFAULT_POW_DIFFICULTY, HttpLimits, INVITATION_TTL,
    MAX_ACTIVE_INVITATIONS, MAX_BODY_BYTES, Quotas, Rate, RateLimits, SIGNATURE_WINDOW_SECS,
    ServerConfig,
};
use page_cache::PageCache;
use rate_limit::RateLimiters;
use replay::ReplayGuard;
use store::{Store, StoreError};

/// How often expired rows are deleted and idle rate-limit entries forgotten.
const HOUSEKEEPING_EVERY: Duration = Duration::from_secs(60);

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
    #[error("the server task failed: {0}")]
    Task(String),
}

/// The limits and policies handlers apply.
#[derive(Debug, Clone)]
pub(crate) struct Limits {
    pub pow_difficulty: u8,
    pub invitation_ttl_ms: i64,
    pub max_body_bytes: usize,
    pub body_timeout: Duration,
    pub signature_window_secs: i64,
    pub quotas: Quotas,
    /// A room leader's lease, in ms.
    pub group_lease_ms: i64,
    /// A room member without a heartbeat for this long (ms) has left.
    pub group_member_timeout_ms: i64,
}

/// What every handler shares.
pub(crate) struct AppState {
    pub store: Store,
    pub replay: ReplayGuard,
    pub rate_limits: RateLimiters,
    pub limits: Limits,
    /// Current answers of the offered-invitations list.
    pub offered_pages: PageCache,
    /// The relay recommended in `GET /api/v1/version`.
    pub relay_url: Option<String>,
}

/// A running server. Dropping it also stops the server (without waiting).
#[derive(Debug)]
pub struct ServerHandle {
    addr: SocketAddr,
    stop: oneshot::Sender<()>,
    task: JoinHandle<Result<(), ServerError>>,
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

    /// Stops accepting, gives in-flight requests the shutdown grace period, stores the
    /// replay guard's pending request ids, checkpoints and closes the database.
    pub async fn shutdown(self) -> Result<(), ServerError> {
        let ServerHandle { stop, task, .. } = self;
        let _ = stop.send(());
        match task.await {
            Ok(result) => result,
            Err(join) => Err(ServerError::Task(join.to_string())),
        }
    }
}

/// Binds the listening address first (so a taken port leaves the database untouched), then
/// opens the database, seeds the built-in protocols, and serves in the background.
pub async fn serve(config: ServerConfig) -> Result<ServerHandle, ServerError> {
    let bind = |source| ServerError::Bind {
        addr: config.listen,
        source,
    };
    let listener = TcpListener::bind(config.listen).await.map_err(bind)?;
    let addr = listener.local_addr().map_err(bind)?;
    let store = Store::open_with(&config.database_url, config.database_connections).await?;
    let backend = store.backend();
    seed::seed_builtin_protocols(&store).await?;
    let (replay, replay_writer) = ReplayGuard::start(store.clone(), clock::now_ms()).await?;
    let state = Arc::new(AppState {
        store: store.clone(),
        replay,
        rate_limits: RateLimiters::new(&config.rates, &store),
        limits: Limits {
            pow_difficulty: config.pow_difficulty,
            invitation_ttl_ms: millis(config.invitation_ttl),
            max_body_bytes: config.max_body_bytes,
            body_timeout: config.http.body_timeout,
            signature_window_secs: SIGNATURE_WINDOW_SECS,
            quotas: config.quotas,
            group_lease_ms: millis(config.group_lease.clamp(
                Duration::from_secs(*config::GROUP_LEASE_SECS.start()),
                Duration::from_secs(*config::GROUP_LEASE_SECS.end()),
            )),
            group_member_timeout_ms: millis(config.group_member_timeout).max(1),
        },
        offered_pages: PageCache::default(),
        relay_url: config.relay_url.clone(),
    });
    let housekeeping = tokio::spawn(housekeeping(state.clone()));
    let app = routes::router(state.clone());
    let (stop, stopped) = oneshot::channel::<()>();
    let http_limits = config.http;
    let task = tokio::spawn(async move {
        crate::http_server::serve(listener, app, http_limits, async move {
            let _ = stopped.await;
        })
        .await;
        housekeeping.abort();
        state.replay.flush().await;
        let _ = replay_writer.await;
        store.close().await?;
        tracing::info!("database checkpointed and closed");
        Ok(())
    });
    tracing::info!(
        %addr,
        backend,
        database = %store::redacted(&config.database_url),
        "community server listening"
    );
    Ok(ServerHandle { addr, stop, task })
}

fn millis(duration: Duration) -> i64 {
    i64::try_from(duration.as_millis()).unwrap_or(i64::MAX)
}

/// Deletes expired request ids, challenges and rate-limit rows (one instance at a time on
/// a shared database), and forgets idle in-memory rate-limit entries.
async fn housekeeping(state: Arc<AppState>) {
    let mut every = tokio::time::interval(HOUSEKEEPING_EVERY);
    loop {
        every.tick().await;
        state.rate_limits.forget_idle();
        match state.store.housekeep(clock::now_ms()).await {
            Ok(true) => {}
            Ok(false) => tracing::debug!("another instance is deleting expired rows"),
            Err(error) => tracing::warn!(%error, "could not delete expired rows"),
        }
    }
}

/// Registers SIGINT and SIGTERM now; the future completes on either. The handlers are
/// installed when this is called, not when it is first awaited: a SIGTERM sent right after
/// `aigenora server` (or `relay`) announces itself (a supervisor's rolling restart) is a
/// graceful stop too, never the default kill.
pub(crate) fn shutdown_signal() -> impl Future<Output = ()> {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        let interrupt = signal(SignalKind::interrupt()).ok();
        let terminate = signal(SignalKind::terminate()).ok();
        async move {
            let wait = async |signal: Option<tokio::signal::unix::Signal>| match signal {
                Some(mut signal) => {
                    signal.recv().await;
                }
                None => std::future::pending::<()>().await,
            };
            tokio::select! {
                () = wait(interrupt) => {}
                () = wait(terminate) => {}
            }
        }
    }
    #[cfg(not(unix))]
    async {
        let _ = tokio::signal::ctrl_c().await;
    }
}
