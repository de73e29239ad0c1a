//! The command line: one file per command group, each a function from parsed flags to an
//! exit code. Errors reach the user as one `error: ...` line and exit code 1.

mod protocol;
mod protocol_test;
mod validate;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Parser, Subcommand};

/// Agent-to-agent protocols: validate and hash contracts, run hooks, host and join
/// peer-to-peer sessions, and run the community server.
#[derive(Debug, Parser)]
#[command(name = "aigenora", version, propagate_version = true)]
pub struct Cli {
    #[command(flatten)]
    pub global: GlobalArgs,
    #[command(subcommand)]
    pub command: Command,
}

/// Flags every command accepts.
#[derive(Debug, Clone, Args)]
pub struct GlobalArgs {
    /// Data directory (keys, protocol library, sessions). Default: ./.aigenora
    #[arg(long, global = true, value_name = "DIR")]
    pub data_dir: Option<PathBuf>,
    /// Community server URL. Default: $AIGENORA_SERVER, then http://127.0.0.1:41000
    #[arg(long, global = true, value_name = "URL")]
    pub server: Option<String>,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Work with protocol contracts (hash, ...).
    #[command(subcommand)]
    Protocol(protocol::ProtocolCommand),
    /// Lint a spec.json, or validate one message (and --options) against it.
    Validate(validate::ValidateArgs),
}

impl GlobalArgs {
    /// The data dir: `--data-dir`, else `AIGENORA_DATA_DIR`, `P2P_DATA_DIR`, `AGENT_DIR`,
    /// else `./.aigenora`.
    pub fn data_dir(&self) -> PathBuf {
        self.data_dir
            .clone()
            .or_else(|| {
                ["AIGENORA_DATA_DIR", "P2P_DATA_DIR", "AGENT_DIR"]
                    .iter()
                    .find_map(|name| std::env::var_os(name).filter(|v| !v.is_empty()))
                    .map(PathBuf::from)
            })
            .unwrap_or_else(|| PathBuf::from(".aigenora"))
    }
}

/// Runs a parsed command line and turns its outcome into the process exit code.
pub fn run(cli: Cli) -> ExitCode {
    let outcome = match cli.command {
        Command::Protocol(command) => protocol::run(command, &cli.global),
        Command::Validate(args) => validate::run(args),
    };
    match outcome {
        Ok(code) => code,
        Err(error) => {
            eprintln!("error: {error:#}");
            ExitCode::FAILURE
        }
    }
}
