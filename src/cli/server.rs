//! `aigenora server`: run the community server until SIGINT/SIGTERM, with every limit of
//! docs/SECURITY.md as a flag (defaults from [`crate::server::config`]).

use std::io::IsTerminal;
use std::net::SocketAddr;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::Context;
use clap::Args;

use super::GlobalArgs;
use crate::relay::{self, RelayOptions, TlsFiles};
use crate::server::config::*;
use crate::server::{self, ServerConfig};
use crate::transport::RelayChoice;

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
    /// Seconds a room leader's lease lasts after each heartbeat or claim (3-300); leaders
    /// heartbeat every third of it, and a member may claim the room once it ran out.
    #[arg(long, default_value_t = DEFAULT_GROUP_LEASE.as_secs(), value_name = "SECONDS",
          value_parser = clap::value_parser!(u64).range(*GROUP_LEASE_SECS.start()..=*GROUP_LEASE_SECS.end()))]
    pub group_lease: u64,
    /// Seconds a room member may go without a heartbeat before its seat is freed (tests
    /// shorten it).
    #[arg(long, default_value_t = DEFAULT_GROUP_MEMBER_TIMEOUT.as_secs_f64(), hide = true, value_parser = seconds)]
    pub group_member_timeout_seconds: f64,
    /// Also run an iroh relay in this process, clients connecting at ADDR (plain HTTP, or
    /// HTTPS with --relay-tls-cert and --relay-tls-key), with STUN on UDP port 3478 of the
    /// same address. `aigenora relay` runs one on its own, with more settings.
    #[arg(long, value_name = "ADDR")]
    pub relay_listen: Option<SocketAddr>,
    /// PEM certificate chain of the relay started with --relay-listen.
    #[arg(long, value_name = "FILE", requires_all = ["relay_listen", "relay_tls_key"])]
    pub relay_tls_cert: Option<std::path::PathBuf>,
    /// PEM private key of that certificate.
    #[arg(long, value_name = "FILE", requires = "relay_tls_cert")]
    pub relay_tls_key: Option<std::path::PathBuf>,
    /// The relay this server recommends to clients (in GET /api/v1/version): its public
    /// URL. Default with --relay-listen: http://ADDR when ADDR is a specific IP address
    /// and TLS is off.
    #[arg(long, value_name = "URL")]
    pub relay_url: Option<RelayChoice>,
}

impl ServerArgs {
    /// The relay to run beside the server, if any.
    fn embedded_relay(&self) -> Option<RelayOptions> {
        let listen = self.relay_listen?;
        let tls = match (&self.relay_tls_cert, &self.relay_tls_key) {
            (Some(cert), Some(key)) => Some(TlsFiles {
                cert: cert.clone(),
                key: key.clone(),
            }),
            _ => None,
        };
        Some(RelayOptions::at(listen, tls))
    }

    /// `--relay-url`, else the embedded relay's own address when clients can use it as is.
    fn recommended_relay(&self) -> anyhow::Result<Option<String>> {
        match (&self.relay_url, self.relay_listen) {
            (Some(RelayChoice::Custom(url)), _) => Ok(Some(url.to_string())),
            (Some(other), _) => anyhow::bail!("--relay-url takes an http(s) URL, not `{other}`"),
            (None, None) => Ok(None),
            (None, Some(_)) if self.relay_tls_cert.is_some() => anyhow::bail!(
                "--relay-url is needed with --relay-tls-cert: the URL with the name the certificate is for"
            ),
            (None, Some(listen)) if listen.ip().is_unspecified() || listen.port() == 0 => {
                anyhow::bail!(
                    "--relay-url is needed when --relay-listen is {listen}: the address clients reach the relay at"
                )
            }
            (None, Some(listen)) => Ok(Some(
                format!("http://{listen}")
                    .parse::<RelayChoice>()?
                    .to_string(),
            )),
        }
    }

    fn config(&self, database_url: String) -> ServerConfig {
        let mut config = ServerConfig::new(self.listen, database_url);
        config.database_connections = self.database_connections;
        config.pow_difficulty = self.pow_difficulty;
        config.invitation_ttl = Duration::from_secs(self.invitation_ttl_seconds);
        config.group_lease = Duration::from_secs(self.group_lease);
        config.group_member_timeout = Duration::from_secs_f64(self.group_member_timeout_seconds);
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
        None => server::sqlite_url(&global.data_dir().server_database()),
    };
    let mut config = args.config(database_url);
    config.relay_url = args.recommended_relay()?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    runtime.block_on(async {
        // The relay first: a taken port or a bad certificate stops us before the database
        // is opened.
        let mut relay = match args.embedded_relay() {
            Some(options) => Some(relay::start(options).await?),
            None => None,
        };
        let handle = server::serve(config.clone()).await?;
        let signal = server::shutdown_signal();
        println!(
            "aigenora server listening on {} (database: {})",
            handle.url(),
            server::store::redacted(&config.database_url)
        );
        if let Some(relay) = &relay {
            println!("{}", super::relay::describe(relay));
        }
        if let Some(url) = &config.relay_url {
            println!("recommending relay {url}");
        }
        let relay_failed = async {
            match relay.as_mut() {
                Some(relay) => Some(relay.failed().await),
                None => std::future::pending().await,
            }
        };
        let failed = tokio::select! {
            () = signal => None,
            failed = relay_failed => failed,
        };
        tracing::info!("shutting down");
        handle.shutdown().await?;
        if let Some(failed) = failed {
            return Err(anyhow::Error::from(failed).context("the relay stopped"));
        }
        if let Some(relay) = relay {
            relay.shutdown().await?;
        }
        anyhow::Ok(())
    })?;
    Ok(ExitCode::SUCCESS)
}

/// Logs to stderr; `RUST_LOG` overrides the default `info` level.
pub(super) fn init_logging() {
    // The relay crate warns about every client that hangs up; that is no news.
    let filter = tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| {
        tracing_subscriber::EnvFilter::new("info,iroh_relay::server::client=error")
    });
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(std::io::stderr().is_terminal())
        .try_init();
}
