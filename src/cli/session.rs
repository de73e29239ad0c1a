//! `aigenora session ...`: this machine's sessions (list, events, abort, and steering one:
//! decide, snapshot, strategy) and the server's record of one (get, status).

use std::process::ExitCode;

use clap::Subcommand;

use std::time::Duration;

use super::GlobalArgs;
use super::remote::{Remote, print_json};
use super::session_control::{self, StrategyChange};
use crate::api::session::{Session, SessionStatus};
use crate::control::Target;
use crate::decision::submit::Submitter;

/// Which local session a command acts on.
#[derive(Debug, Clone, clap::Args)]
pub struct Which {
    /// The session directory (see `session list`); default: the newest session.
    #[arg(long, value_name = "DIR")]
    pub state_dir: Option<std::path::PathBuf>,
}

impl Which {
    fn target(&self, global: &GlobalArgs) -> anyhow::Result<Target> {
        Target::resolve(self.state_dir.as_deref(), &global.data_dir())
    }
}
use crate::terminal::escape_control;

#[derive(Debug, Subcommand)]
pub enum SessionCommand {
    /// List this machine's sessions (newest first).
    List {
        #[arg(long)]
        json: bool,
    },
    /// Print a session's events; --follow keeps printing until the session ends.
    Events {
        #[command(flatten)]
        which: Which,
        #[arg(long, short)]
        follow: bool,
        /// Print the events.jsonl lines as they are.
        #[arg(long)]
        json: bool,
    },
    /// Stop a running session (the process records the abort; the peer sees it leave).
    Abort {
        #[command(flatten)]
        which: Which,
        #[arg(long)]
        json: bool,
    },
    /// Answer the open decision window: a move (`rock`, `42`) or a decision object
    /// (`{"round": 0, "choice": "rock"}`). Prints what happened: played, queued for a later
    /// window, refused (and why; the window stays open) or too late.
    Decide {
        /// The move or decision JSON (or use --decision).
        #[arg(
            value_name = "MOVE|JSON",
            required_unless_present = "decision",
            conflicts_with = "decision"
        )]
        value: Option<String>,
        /// The decision, as the reference client spells it.
        #[arg(long, value_name = "JSON")]
        decision: Option<String>,
        #[command(flatten)]
        which: Which,
        /// Your id, kept with the decision (with --idempotency-key, a retry is not counted twice).
        #[arg(long)]
        agent_id: Option<String>,
        #[arg(long)]
        idempotency_key: Option<String>,
        /// Seconds to wait for the engine to take the decision.
        #[arg(long, default_value_t = 5.0, value_name = "SECONDS")]
        wait: f64,
        /// The window you answer (its `seq`, as `session snapshot` shows it): refused as too
        /// late unless that window is still open. Without it, the window open now.
        #[arg(long, value_name = "SEQ")]
        window: Option<u64>,
        #[arg(long)]
        json: bool,
    },
    /// Rooms: submit one action (a JSON object). It is queued in the session directory and
    /// the member sends it to the room's leader, one at a time, until its receipt arrives.
    Action {
        /// The action, e.g. '{"kind": "send", "text": "hello"}'.
        #[arg(
            long,
            value_name = "JSON",
            required_unless_present = "action_file",
            conflicts_with = "action_file"
        )]
        action: Option<String>,
        /// Read the action from a file (at most 1 MiB).
        #[arg(long, value_name = "FILE")]
        action_file: Option<std::path::PathBuf>,
        #[command(flatten)]
        which: Which,
        #[arg(long)]
        json: bool,
    },
    /// Show what the hooks publish (phase, score, last event) and the open decision window.
    Snapshot {
        #[command(flatten)]
        which: Which,
        /// Print again on every change until the session ends.
        #[arg(long, short)]
        follow: bool,
        #[arg(long)]
        json: bool,
    },
    /// Show the hooks' strategy.json, or replace (--set) or deep-merge (--merge) it.
    Strategy {
        #[command(flatten)]
        which: Which,
        #[arg(long, value_name = "JSON", conflicts_with = "merge")]
        set: Option<String>,
        #[arg(long, value_name = "JSON")]
        merge: Option<String>,
        #[arg(long)]
        json: bool,
    },
    /// Serve the browser controller on 127.0.0.1 for this machine's sessions (or the one
    /// given); prints its address with the access token, and runs until interrupted.
    Web {
        /// Serve only this session directory.
        #[arg(long, value_name = "DIR")]
        state_dir: Option<std::path::PathBuf>,
        /// Port to listen on (0: any free port).
        #[arg(long, default_value_t = 0)]
        port: u16,
        /// Print the address as JSON (`{"url": ...}`).
        #[arg(long)]
        json: bool,
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
        SessionCommand::Events {
            which,
            follow,
            json,
        } => super::session_local::events(&which.target(global)?.dir, follow, json),
        SessionCommand::Abort { which, json } => {
            super::session_local::abort(&which.target(global)?.dir, json)
        }
        SessionCommand::Decide {
            value,
            decision,
            which,
            agent_id,
            idempotency_key,
            wait,
            window,
            json,
        } => {
            let Some(wait) = Duration::try_from_secs_f64(wait)
                .ok()
                .filter(|w| w.as_secs() <= 600)
            else {
                anyhow::bail!("--wait must be between 0 and 600 seconds");
            };
            let submitter = Submitter {
                origin: "cli".into(),
                agent_id,
                idempotency_key,
                answering: window,
            };
            let text = value.or(decision).unwrap_or_default();
            session_control::decide(&which.target(global)?, &text, submitter, wait, json)
        }
        SessionCommand::Web {
            state_dir,
            port,
            json,
        } => {
            let scope = match state_dir {
                Some(dir) => crate::control::web::Scope::One(Target::at(&dir)?.dir),
                None => crate::control::web::Scope::All(global.data_dir()),
            };
            session_control::web(scope, port, json)
        }
        SessionCommand::Snapshot {
            which,
            follow,
            json,
        } => session_control::snapshot(&which.target(global)?, json, follow),
        SessionCommand::Action {
            action,
            action_file,
            which,
            json,
        } => super::room_action::submit(&which.target(global)?, action, action_file, json),
        SessionCommand::Strategy {
            which,
            set,
            merge,
            json,
        } => {
            let object = |text: &str| match serde_json::from_str::<serde_json::Value>(text) {
                Ok(serde_json::Value::Object(object)) => Ok(object),
                _ => Err(anyhow::anyhow!("the strategy must be a JSON object")),
            };
            let change = match (set, merge) {
                (Some(set), _) => StrategyChange::Set(object(&set)?),
                (None, Some(merge)) => StrategyChange::Merge(object(&merge)?),
                (None, None) => StrategyChange::Show,
            };
            session_control::strategy(&which.target(global)?, change, json)
        }
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
            let session =
                remote.run(remote.client.set_session_status(&session_id, status, None))?;
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
