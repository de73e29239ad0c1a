//! `aigenora server`: run the community server until SIGINT/SIGTERM.

use std::io::IsTerminal;
use std::net::SocketAddr;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::Context;
use clap::Args;

use super::GlobalArgs;
use super::remote;
use crate::server::{self, DEFAULT_LISTEN, DEFAULT_POW_DIFFICULTY, ServerConfig};

#[derive(Debug, Args)]
pub struct ServerArgs {
    /// Address to listen on (port 0 picks a free port; the real one is printed).
    #[arg(long, default_value = DEFAULT_LISTEN, value_name = "ADDR")]
    pub listen: SocketAddr,
    /// Database URL. Default: sqlite://<data-dir>/server/community.sqlite3 (created on first start).
    #[arg(long, value_name = "URL")]
    pub database: Option<String>,
    /// Leading zero bytes the registration proof of work needs (each adds a factor of 256).
    #[arg(long, default_value_t = DEFAULT_POW_DIFFICULTY, value_parser = clap::value_parser!(u8).range(0..=4))]
    pub pow_difficulty: u8,
    /// How long an invitation stays offered after create/renew (tests shorten it).
    #[arg(long, default_value_t = server::INVITATION_TTL.as_secs(), hide = true)]
    pub invitation_ttl_seconds: u64,
}

pub fn run(args: ServerArgs, global: &GlobalArgs) -> anyhow::Result<ExitCode> {
    init_logging();
    let database_url = match args.database {
        Some(url) => url,
        None => server::sqlite_url(&remote::data_dir(global).server_database()),
    };
    let mut config = ServerConfig::new(args.listen, database_url);
    config.pow_difficulty = args.pow_difficulty;
    config.invitation_ttl = Duration::from_secs(args.invitation_ttl_seconds);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    runtime.block_on(async {
        let handle = server::serve(config.clone()).await?;
        println!(
            "aigenora server listening on {} (database: {})",
            handle.url(),
            config.database_url
        );
        server::run_until_signal(handle).await
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
