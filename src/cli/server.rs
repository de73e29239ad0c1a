//! `aigenora server`: run the community server until SIGINT/SIGTERM, with every limit of
//! docs/SECURITY.md as a flag (defaults from [`crate::server::config`]).

use std::io::IsTerminal;
use std::net::SocketAddr;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::Context;
use clap::Args;

use super::GlobalArgs;
use super::remote;
use crate::server::config::*;
use crate::server::{self, ServerConfig};

#[derive(Debug, Args)]
pub struct ServerArgs {
    /// Address to listen on (port 0 picks a free port; the real one is printed).
    #[arg(long, default_value = DEFAULT_LISTEN, value_name = "ADDR")]
    pub listen: SocketAddr,
    /// Database URL: sqlite://PATH or postgres://USER[:PASSWORD]@HOST[:PORT]/DB (several
    /// instances may share one PostgreSQL database; see docs/deploy.md).
    /// Default: sqlite://<data-dir>/server/community.sqlite3 (created on first start).
    #[arg(long, value_name = "URL")]
    pub database: Option<String>,
    /// PostgreSQL connections this instance opens for requests, plus half as many (at least
    /// 2) for request ids and rate counts; the instances together must stay under the
    /// database's max_connections. SQLite ignores it.
    #[arg(long, default_value_t = DEFAULT_DATABASE_CONNECTIONS, value_name = "N",
          value_parser = clap::value_parser!(u32).range(1..=10_000))]
    pub database_connections: u32,
    /// Leading zero bytes the registration proof of work needs (each adds a factor of 256;
    /// 3 is about a second of native hashing, ~15 s for the Python reference client).
    #[arg(long, default_value_t = DEFAULT_POW_DIFFICULTY, value_parser = clap::value_parser!(u8).range(0..=4))]
    pub pow_difficulty: u8,
    /// Signed requests per second one key may make (0: no limit).
    #[arg(long, default_value_t = DEFAULT_KEY_RATE.0, value_name = "N")]
    pub key_rate: u32,
    /// Requests one key may make at once above its rate.
    #[arg(long, default_value_t = DEFAULT_KEY_RATE.1, value_name = "N")]
    pub key_burst: u32,
    /// Requests per second one address (IPv6: one /64) may make (0: no limit).
    #[arg(long, default_value_t = DEFAULT_ADDRESS_RATE.0, value_name = "N")]
    pub address_rate: u32,
    /// Requests one address may make at once above its rate.
    #[arg(long, default_value_t = DEFAULT_ADDRESS_RATE.1, value_name = "N")]
    pub address_burst: u32,
    /// Protocols one key may register.
    #[arg(long, default_value_t = DEFAULT_PROTOCOLS_PER_KEY, value_name = "N")]
    pub protocols_per_key: u32,
    /// Total bytes of specs one key may register.
    #[arg(long, default_value_t = DEFAULT_PROTOCOL_BYTES_PER_KEY, value_name = "BYTES")]
    pub protocol_bytes_per_key: u64,
    /// Outstanding registration challenges per address (a new one replaces the oldest).
    #[arg(long, default_value_t = DEFAULT_CHALLENGES_PER_ADDRESS, value_name = "N",
          value_parser = clap::value_parser!(u32).range(1..))]
    pub challenges_per_address: u32,
    /// Open connections at most (the server stops accepting while at the cap).
    #[arg(long, default_value_t = DEFAULT_MAX_CONNECTIONS, value_name = "N")]
    pub max_connections: usize,
    /// Open connections one address (IPv6: one /64) may hold; more are closed at once
    /// (0: no cap; behind a reverse proxy every client shares the proxy's address).
    #[arg(long, default_value_t = DEFAULT_CONNECTIONS_PER_ADDRESS, value_name = "N")]
    pub connections_per_address: usize,
    /// Seconds a request's headers may take to arrive; also how long an idle connection stays open.
    #[arg(long, default_value_t = DEFAULT_HEADER_TIMEOUT_SECS, value_name = "SECONDS", value_parser = seconds)]
    pub header_timeout: f64,
    /// Seconds a request's whole body may take to arrive.
    #[arg(long, default_value_t = DEFAULT_BODY_TIMEOUT_SECS, value_name = "SECONDS", value_parser = seconds)]
    pub body_timeout: f64,
    /// Seconds a connection may make no read or write progress before it is closed.
    #[arg(long, default_value_t = DEFAULT_IO_TIMEOUT_SECS, value_name = "SECONDS", value_parser = seconds)]
    pub io_timeout: f64,
    /// Seconds in-flight requests get on SIGTERM/SIGINT before their connections are dropped.
    #[arg(long, default_value_t = DEFAULT_SHUTDOWN_GRACE_SECS, value_name = "SECONDS", value_parser = seconds)]
    pub shutdown_grace: f64,
    /// How long an invitation stays offered after create/renew (tests shorten it).
    #[arg(long, default_value_t = server::INVITATION_TTL.as_secs(), hide = true)]
    pub invitation_ttl_seconds: u64,
}

impl ServerArgs {
    fn config(&self, database_url: String) -> ServerConfig {
        let mut config = ServerConfig::new(self.listen, database_url);
        config.database_connections = self.database_connections;
        config.pow_difficulty = self.pow_difficulty;
        config.invitation_ttl = Duration::from_secs(self.invitation_ttl_seconds);
        config.rates = RateLimits {
            per_key: Rate::new(self.key_rate, self.key_burst),
            per_address: Rate::new(self.address_rate, self.address_burst),
        };
        config.quotas = Quotas {
            protocols_per_key: self.protocols_per_key,
            protocol_bytes_per_key: self.protocol_bytes_per_key,
            challenges_per_address: self.challenges_per_address,
        };
        config.http = HttpLimits {
            header_timeout: Duration::from_secs_f64(self.header_timeout),
            body_timeout: Duration::from_secs_f64(self.body_timeout),
            io_timeout: Duration::from_secs_f64(self.io_timeout),
            max_connections: self.max_connections,
            connections_per_address: self.connections_per_address,
            shutdown_grace: Duration::from_secs_f64(self.shutdown_grace),
        };
        config
    }
}

/// A positive number of seconds (fractions allowed), at most a day.
fn seconds(text: &str) -> Result<f64, String> {
    match text.parse::<f64>() {
        Ok(value) if value > 0.0 && value <= 86_400.0 => Ok(value),
        _ => Err("expected a number of seconds above 0 and at most 86400".into()),
    }
}

pub fn run(args: ServerArgs, global: &GlobalArgs) -> anyhow::Result<ExitCode> {
    init_logging();
    let database_url = match &args.database {
        Some(url) => url.clone(),
        None => server::sqlite_url(&remote::data_dir(global).server_database()),
    };
    let config = args.config(database_url);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    runtime.block_on(async {
        let handle = server::serve(config.clone()).await?;
        let url = handle.url();
        let stopped = server::run_until_signal(handle);
        println!(
            "aigenora server listening on {url} (database: {})",
            server::store::redacted(&config.database_url)
        );
        stopped.await
    })?;
    Ok(ExitCode::SUCCESS)
}

/// Logs to stderr; `RUST_LOG` overrides the default `info` level.
fn init_logging() {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(std::io::stderr().is_terminal())
        .try_init();
}
