//! The command line: one file per command group, each a function from parsed flags to an
//! exit code. Errors reach the user as one `error: ...` line (control characters escaped:
//! it may quote the server) and exit code 1.

mod daemon;
mod demo;
mod doctor;
mod identity;
mod invitation;
mod lint_output;
mod mcp;
mod play;
mod protocol;
mod protocol_diff;
mod protocol_remote;
mod protocol_test;
mod reference;
mod relay;
mod remote;
mod room_action;
mod server;
mod session;
mod session_control;
mod session_local;
mod skill;
mod spec_command;
mod validate;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Parser, Subcommand};

pub use spec_command::{SpecCommand, SpecProtocolCommand};

use crate::terminal::escape_control;

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
    /// Data directory (keys, protocol library, sessions). Default: $AIGENORA_DATA_DIR,
    /// $P2P_DATA_DIR, $AGENT_DIR, then ./.aigenora
    #[arg(long, global = true, value_name = "DIR")]
    pub data_dir: Option<PathBuf>,
    /// Community server URL. Default: $AIGENORA_SERVER, $P2P_SERVER, "server" in
    /// <data-dir>/config.json, then http://127.0.0.1:41000
    #[arg(long, global = true, value_name = "URL")]
    pub server: Option<String>,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Create this agent's identity (key.json) in the data directory.
    Init(identity::InitArgs),
    /// Register this identity on the community server under a nickname.
    Register(identity::RegisterArgs),
    /// Work with protocol contracts (hash, register, fetch, discover).
    #[command(subcommand)]
    Protocol(protocol::ProtocolCommand),
    /// List invitations offered on the community server.
    Browse(invitation::BrowseArgs),
    /// Withdraw one of your invitations.
    Cancel(invitation::CancelArgs),
    /// Host a protocol: publish an invitation and play the first guest that joins.
    Host(play::HostArgs),
    /// Join an invitation and play it.
    Join(play::JoinArgs),
    /// Dial a host's iroh ticket directly (no server, no handshake).
    Guest(play::GuestArgs),
    /// Sessions: this machine's (list, events, abort) and the server's (get, status).
    #[command(subcommand)]
    Session(session::SessionCommand),
    /// Run a whole session offline: a local server, two agents, a game over iroh.
    Demo(demo::DemoArgs),
    /// Run the community server (and, with --relay-listen, an iroh relay beside it).
    Server(server::ServerArgs),
    /// Run an iroh relay server, so peers behind NATs can reach each other.
    Relay(relay::RelayArgs),
    /// Lint a spec.json, or validate one message (and --options) against it.
    Validate(validate::ValidateArgs),
    /// The guide for LLM coding agents (SKILL.md and appendices): install it where Claude
    /// Code, Codex or OpenCode looks, update it, check it is current.
    #[command(subcommand)]
    Skill(skill::SkillCommand),
    /// What an agent checks first, offline: version, how to call this binary, the guide,
    /// the data dir, the interpreter, and each step still to take with its command.
    Bootstrap(doctor::BootstrapArgs),
    /// Check this install: identity, interpreter, relay setting and (unless --offline) the
    /// server — reachable, its version, this key registered — each problem with its fix.
    Doctor(doctor::DoctorArgs),
    /// Serve the Model Context Protocol on stdin/stdout: every command an agent needs as a
    /// typed tool (identity, contracts, community, play, sessions), the sessions as
    /// resources a client can subscribe to, and progress from `session_wait`.
    Mcp(mcp::McpArgs),
}

impl GlobalArgs {
    /// The data dir this command uses (see [`crate::config::resolve_data_dir`]).
    pub fn data_dir(&self) -> crate::layout::DataDir {
        crate::config::resolve_data_dir(self.data_dir.as_deref())
    }
}

/// The environment variable that turns on diagnostic logs (a `RUST_LOG`-style filter, e.g.
/// `iroh=debug`) for the commands that do not log by default (all but `server` and `relay`).
pub const LOG_ENV_VAR: &str = "AIGENORA_LOG";

impl Command {
    /// Whether the command writes into a directory the user chose for their own files (a
    /// scaffold or the agent guide into their project), where their umask decides the
    /// files' mode.
    fn writes_user_files(&self) -> bool {
        matches!(
            self,
            Command::Protocol(protocol::ProtocolCommand::Scaffold { .. }) | Command::Skill(_)
        )
    }
}

/// Runs a parsed command line in this process (the `aigenora-full` binary, which runs every
/// command) and turns its outcome into the process exit code.
pub fn run(cli: Cli) -> ExitCode {
    if !cli.command.writes_user_files() {
        // Whatever this process creates (in the data dir, and what hooks.py writes into its
        // state dir) is for this user only.
        crate::layout::keep_new_files_private();
    }
    if !matches!(cli.command, Command::Server(_) | Command::Relay(_))
        && let Ok(filter) = std::env::var(LOG_ENV_VAR)
    {
        let _ = tracing_subscriber::fmt()
            .with_env_filter(tracing_subscriber::EnvFilter::new(filter))
            .with_writer(std::io::stderr)
            .try_init();
    }
    let global = &cli.global;
    exit_code(match cli.command {
        Command::Init(args) => identity::init(args, global),
        Command::Register(args) => identity::register(args, global),
        Command::Protocol(command) => protocol::run(command, global),
        Command::Browse(args) => invitation::browse(args, global),
        Command::Cancel(args) => invitation::cancel(args, global),
        Command::Host(args) => play::host(args, global),
        Command::Join(args) => play::join(args, global),
        Command::Guest(args) => play::guest(args, global),
        Command::Session(command) => session::run(command, global),
        Command::Demo(args) => demo::run(args, global),
        Command::Server(args) => server::run(args, global),
        Command::Relay(args) => relay::run(args),
        Command::Validate(args) => validate::run(args),
        Command::Skill(command) => skill::run(command, global),
        Command::Bootstrap(args) => doctor::bootstrap(args, global),
        Command::Doctor(args) => doctor::doctor(args, global),
        Command::Mcp(args) => mcp::run(args, global),
    })
}

/// A command's outcome as the process exit code: an error reaches the user as one
/// `error: ...` line on stderr (control characters escaped: it may quote the server).
pub fn exit_code(outcome: anyhow::Result<ExitCode>) -> ExitCode {
    match outcome {
        Ok(code) => code,
        Err(error) => {
            eprintln!("error: {}", escape_control(&one_line(&error)));
            ExitCode::FAILURE
        }
    }
}

/// The error and its causes as one line, `outer: inner: ...`, leaving out a cause whose text
/// its wrapper already quotes (an error type that prints its source as part of itself).
fn one_line(error: &anyhow::Error) -> String {
    let mut line = String::new();
    for cause in error.chain() {
        let text = cause.to_string();
        if line.contains(&text) {
            continue;
        }
        if !line.is_empty() {
            line.push_str(": ");
        }
        line.push_str(&text);
    }
    line
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, thiserror::Error)]
    #[error("database error: {0}")]
    struct Quoting(#[from] std::io::Error);

    #[test]
    fn an_error_line_names_each_cause_once() {
        let quoting = anyhow::Error::from(Quoting(std::io::Error::other("disk full")));
        assert_eq!(one_line(&quoting), "database error: disk full");
        let layered = anyhow::Error::from(std::io::Error::other("disk full")).context("saving");
        assert_eq!(one_line(&layered), "saving: disk full");
    }
}
