//! `aigenora session ...`: this machine's sessions (list, events, abort) and the server's
//! record of one (get, status).

use std::process::ExitCode;

use clap::Subcommand;

use super::GlobalArgs;
use super::remote::{Remote, print_json};
use crate::api::session::{Session, SessionStatus};
use crate::terminal::escape_control;

#[derive(Debug, Subcommand)]
pub enum SessionCommand {
    /// List this machine's sessions (newest first).
    List {
        #[arg(long)]
        json: bool,
    },
    /// Print a session's events.jsonl; --follow keeps printing until the session ends.
    Events {
        /// The session directory (see `session list`).
        #[arg(long, value_name = "DIR")]
        state_dir: std::path::PathBuf,
        #[arg(long, short)]
        follow: bool,
    },
    /// Stop a running session (the process records the abort; the peer sees it leave).
    Abort {
        /// The session directory (see `session list`).
        #[arg(long, value_name = "DIR")]
        state_dir: std::path::PathBuf,
    },
    /// Show a session registered on the community server.
    Get {
        session_id: String,
        /// Print the session as JSON.
        #[arg(long)]
        json: bool,
    },
    /// End a session you take part in (only once; a second end is refused with HTTP 409).
    Status {
        session_id: String,
        /// closed, failed or cancelled.
        #[arg(
            value_enum,
            required_unless_present = "status_flag",
            conflicts_with = "status_flag"
        )]
        status: Option<SessionStatus>,
        /// The same, spelled as the reference client spells it (`--status closed`).
        #[arg(long = "status", id = "status_flag", value_enum, value_name = "STATUS")]
        status_flag: Option<SessionStatus>,
        /// Print the updated session as JSON.
        #[arg(long)]
        json: bool,
    },
}

pub fn run(command: SessionCommand, global: &GlobalArgs) -> anyhow::Result<ExitCode> {
    match command {
        SessionCommand::List { json } => super::session_local::list(&global.data_dir(), json),
        SessionCommand::Events { state_dir, follow } => {
            super::session_local::events(&state_dir, follow)
        }
        SessionCommand::Abort { state_dir } => super::session_local::abort(&state_dir),
        SessionCommand::Get { session_id, json } => {
            let remote = Remote::connect(global)?;
            let session = remote.run(remote.client.session(&session_id))?;
            show(&session, json);
            Ok(ExitCode::SUCCESS)
        }
        SessionCommand::Status {
            session_id,
            status,
            status_flag,
            json,
        } => {
            let status = status
                .or(status_flag)
                .ok_or_else(|| anyhow::anyhow!("a status is required"))?;
            let remote = Remote::connect(global)?;
            let session = remote.run(remote.client.set_session_status(&session_id, status))?;
            if json {
                print_json(&session);
            } else {
                println!(
                    "[OK] session {session_id} status updated to {}",
                    status.as_str()
                );
            }
            Ok(ExitCode::SUCCESS)
        }
    }
}

fn show(session: &Session, as_json: bool) {
    if as_json {
        print_json(session);
        return;
    }
    println!("session_id: {}", escape_control(&session.session_id));
    println!("status: {}", session.status.as_str());
    println!("post_id: {}", escape_control(&session.post_id));
    println!("protocol_id: {}", escape_control(&session.protocol_id));
    println!("host: {}", escape_control(&session.host_public_key));
    println!("guest: {}", escape_control(&session.guest_public_key));
    if let Some(result) = &session.result {
        let winner = result.winner.map(|w| w.as_str()).unwrap_or("-");
        println!(
            "result: {} (winner: {winner})",
            escape_control(&result.outcome)
        );
    }
}
