//! How a server is configured: where it listens, which database it uses, and every limit it
//! applies to an open network (proof of work, request rates, quotas, timeouts, connection
//! cap), each with the default docs/SECURITY.md states.

use std::net::SocketAddr;
use std::num::NonZeroU32;
use std::time::Duration;

pub use crate::http_server::HttpLimits;

/// Where `aigenora server` listens unless told otherwise.
pub const DEFAULT_LISTEN: &str = "127.0.0.1:41000";
/// Leading zero bytes the registration proof of work needs: 3 bytes is 2^24 hashes on
/// average, about a second for native code (our client) and ~15 s for the pure-Python
/// reference client. The reference understands whole bytes only (`int(difficulty)`).
pub const DEFAULT_POW_DIFFICULTY: u8 = 3;
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

/// How long a room's leader holds its lease after its last heartbeat (or claim). The
/// reference leader heartbeats every third of it; clients accept 3-300 s.
pub const DEFAULT_GROUP_LEASE: Duration = Duration::from_secs(15);
/// The lease lengths a server may be configured with, in seconds.
pub const GROUP_LEASE_SECS: std::ops::RangeInclusive<u64> = 3..=300;
/// A room member that sent nothing for this long (three of the reference's 5 s member
/// heartbeats) has left: its seat is free again.
pub const DEFAULT_GROUP_MEMBER_TIMEOUT: Duration = Duration::from_secs(30);

/// Signed requests per second one verified key may make, and its burst.
pub const DEFAULT_KEY_RATE: (u32, u32) = (10, 20);
/// Requests per second one address may make, and its burst.
pub const DEFAULT_ADDRESS_RATE: (u32, u32) = (50, 100);
/// Protocols one key may register.
pub const DEFAULT_PROTOCOLS_PER_KEY: u32 = 100;
/// Total bytes of specs one key may register.
pub const DEFAULT_PROTOCOL_BYTES_PER_KEY: u64 = 4 * 1024 * 1024;
/// Outstanding registration challenges per address.
pub const DEFAULT_CHALLENGES_PER_ADDRESS: u32 = 8;
/// Default [`HttpLimits`] of the community server, in seconds: header, body, read/write, shutdown grace.
pub const DEFAULT_HEADER_TIMEOUT_SECS: f64 = 10.0;
pub const DEFAULT_BODY_TIMEOUT_SECS: f64 = 10.0;
pub const DEFAULT_IO_TIMEOUT_SECS: f64 = 30.0;
pub const DEFAULT_SHUTDOWN_GRACE_SECS: f64 = 5.0;
/// Open connections at most.
pub const DEFAULT_MAX_CONNECTIONS: usize = 512;
/// Open connections one address (IPv6: one /64) may hold; more are closed at once. With
/// the body limit this bounds what one address can make the server hold before any
/// signature is verified (32 bodies of at most 1 MiB).
pub const DEFAULT_CONNECTIONS_PER_ADDRESS: usize = 32;
/// Largest body of a registration request (`/api/v1/auth/*`): a nickname, a bio of at
/// most 280 characters, a nonce, a proof and a signature.
pub const MAX_AUTH_BODY_BYTES: usize = 8 * 1024;
/// PostgreSQL connections one instance opens for requests (plus half as many for request
/// ids and rate counts): several instances share the database's `max_connections`.
pub const DEFAULT_DATABASE_CONNECTIONS: u32 = 16;

/// A sustained rate and the burst allowed on top of it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rate {
    pub per_second: NonZeroU32,
    pub burst: NonZeroU32,
}

impl Rate {
    /// `per_second` requests per second with bursts of `burst`; `None` when either is 0
    /// (no limit).
    pub fn new(per_second: u32, burst: u32) -> Option<Rate> {
        Some(Rate {
            per_second: NonZeroU32::new(per_second)?,
            burst: NonZeroU32::new(burst)?,
        })
    }
}

/// Request rates per signing key and per client address (`None`: unlimited).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RateLimits {
    /// Signed requests of one verified key (the reference documents 10 requests/s).
    pub per_key: Option<Rate>,
    /// Every request from one address (an IPv6 address counts by its /64).
    pub per_address: Option<Rate>,
}

impl Default for RateLimits {
    fn default() -> RateLimits {
        RateLimits {
            per_key: Rate::new(DEFAULT_KEY_RATE.0, DEFAULT_KEY_RATE.1),
            per_address: Rate::new(DEFAULT_ADDRESS_RATE.0, DEFAULT_ADDRESS_RATE.1),
        }
    }
}

/// What one registered key may store.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Quotas {
    /// Protocols one key may register.
    pub protocols_per_key: u32,
    /// Total bytes of the (compact) specs one key may register.
    pub protocol_bytes_per_key: u64,
    /// Outstanding registration challenges per address; a new one replaces the oldest
    /// (each key has at most one: a new challenge replaces its previous one).
    pub challenges_per_address: u32,
}

impl Default for Quotas {
    fn default() -> Quotas {
        Quotas {
            protocols_per_key: DEFAULT_PROTOCOLS_PER_KEY,
            protocol_bytes_per_key: DEFAULT_PROTOCOL_BYTES_PER_KEY,
            challenges_per_address: DEFAULT_CHALLENGES_PER_ADDRESS,
        }
    }
}

/// The community server's connection limits by default.
pub fn default_http_limits() -> HttpLimits {
    HttpLimits {
        header_timeout: Duration::from_secs_f64(DEFAULT_HEADER_TIMEOUT_SECS),
        body_timeout: Duration::from_secs_f64(DEFAULT_BODY_TIMEOUT_SECS),
        io_timeout: Duration::from_secs_f64(DEFAULT_IO_TIMEOUT_SECS),
        max_connections: DEFAULT_MAX_CONNECTIONS,
        connections_per_address: DEFAULT_CONNECTIONS_PER_ADDRESS,
        shutdown_grace: Duration::from_secs_f64(DEFAULT_SHUTDOWN_GRACE_SECS),
    }
}

/// How to run a server.
#[derive(Debug, Clone)]
pub struct ServerConfig {
    /// Address to bind; port 0 picks a free port (see [`super::ServerHandle::addr`]).
    pub listen: SocketAddr,
    /// `sqlite://PATH` (created if missing), `sqlite::memory:`, or
    /// `postgres://USER[:PASSWORD]@HOST[:PORT]/DB` (several instances may share it).
    pub database_url: String,
    /// PostgreSQL only: connections for requests (and half as many, at least 2, for
    /// request ids and rate counts). SQLite sizes its pools by the cores.
    pub database_connections: u32,
    pub pow_difficulty: u8,
    pub invitation_ttl: Duration,
    pub max_body_bytes: usize,
    pub rates: RateLimits,
    pub quotas: Quotas,
    pub http: HttpLimits,
    /// The iroh relay recommended to clients (`GET /api/v1/version`), when there is one.
    pub relay_url: Option<String>,
    /// A room leader's lease ([`GROUP_LEASE_SECS`]; clamped into it at start).
    pub group_lease: Duration,
    /// How long a room member may go without a heartbeat before it counts as left.
    pub group_member_timeout: Duration,
}

impl ServerConfig {
    /// Defaults for everything but where to listen and which database to use.
    pub fn new(listen: SocketAddr, database_url: impl Into<String>) -> ServerConfig {
        ServerConfig {
            listen,
            database_url: database_url.into(),
            database_connections: DEFAULT_DATABASE_CONNECTIONS,
            pow_difficulty: DEFAULT_POW_DIFFICULTY,
            invitation_ttl: INVITATION_TTL,
            max_body_bytes: MAX_BODY_BYTES,
            rates: RateLimits::default(),
            quotas: Quotas::default(),
            http: default_http_limits(),
            relay_url: None,
            group_lease: DEFAULT_GROUP_LEASE,
            group_member_timeout: DEFAULT_GROUP_MEMBER_TIMEOUT,
        }
    }
}
