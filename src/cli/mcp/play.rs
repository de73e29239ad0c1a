//! The play tools: host or join a session in the background. A session outlives the tool
//! call (and this server: `session_abort` signals its own process), so each starts the way
//! `host --daemon` / `join --daemon` do — this binary re-run in the background, answering
//! once the session is under way with its state_dir.

use std::process::Stdio;
use std::time::Duration;

use anyhow::{Context, bail};
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::CallToolResult;
use rmcp::{tool, tool_router};
use serde::Deserialize;
use serde_json::{Map, Value};

use super::{Aigenora, answer};
use crate::identity::is_lower_hex_64;

/// Longest a start may take: the daemon's own wait (30 s for an invitation, 60 s for a
/// handshake, or `AIGENORA_DAEMON_STARTUP_TIMEOUT`) plus a margin.
const START_LIMIT: Duration = Duration::from_secs(180);

/// Who decides this side's moves.
#[derive(Debug, Clone, Copy, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ControlModeInput {
    /// The hooks make every move.
    Autonomous,
    /// The hooks propose each move; a decision sent in time replaces it.
    Hybrid,
    /// Every move waits for a decision (`session_decide`).
    Human,
}

/// How this side plays (shared by host and join).
#[derive(Debug, Default, Deserialize, schemars::JsonSchema)]
pub struct PlayInput {
    /// Default: hybrid.
    #[serde(default)]
    pub control_mode: Option<ControlModeInput>,
    /// Seconds each decision window waits for a decision.
    #[serde(default)]
    pub think_seconds: Option<f64>,
    /// iroh relays: default, disabled (direct addresses only) or a relay URL. Default: the
    /// one the server recommends.
    #[serde(default)]
    pub relay: Option<String>,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub struct HostInput {
    /// A protocol directory, a built-in alias, a contract of the library, or a protocol_id /
    /// well-known alias to get from the server.
    pub protocol: String,
    /// Options for the game (default: the hooks' own).
    #[serde(default)]
    pub options: Option<Map<String, Value>>,
    #[serde(flatten)]
    pub play: PlayInput,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub struct JoinInput {
    /// The invitation to join (from `browse`).
    pub post_id: String,
    #[serde(flatten)]
    pub play: PlayInput,
}

impl PlayInput {
    fn arguments(&self) -> Vec<String> {
        let mut arguments = vec!["--no-prompt".to_string()];
        if let Some(mode) = self.control_mode {
            let mode = match mode {
                ControlModeInput::Autonomous => "autonomous",
                ControlModeInput::Hybrid => "hybrid",
                ControlModeInput::Human => "human",
            };
            arguments.extend(["--control-mode".into(), mode.into()]);
        }
        if let Some(seconds) = self.think_seconds {
            arguments.extend(["--think-seconds".into(), seconds.to_string()]);
        }
        if let Some(relay) = &self.relay {
            arguments.extend(["--relay".into(), relay.clone()]);
        }
        arguments
    }
}

#[tool_router(router = play_router, vis = "pub(super)")]
impl Aigenora {
    #[tool(
        description = "Publish an invitation (public: ask the user first) and play the first \
                       guest in the background. Returns {status: hosting, post_id, state_dir, \
                       pid}; follow it with session_wait and the other session tools."
    )]
    async fn host(&self, Parameters(input): Parameters<HostInput>) -> CallToolResult {
        answer(self.host_now(input).await)
    }

    #[tool(
        description = "Join an invitation and play it in the background. Returns {status: \
                       joining, session_id, state_dir, pid} once the handshake is done."
    )]
    async fn join(&self, Parameters(input): Parameters<JoinInput>) -> CallToolResult {
        let mut arguments = vec!["join".to_string(), input.post_id];
        arguments.extend(input.play.arguments());
        answer(self.start_daemon(arguments).await)
    }
}

impl Aigenora {
    async fn host_now(&self, input: HostInput) -> anyhow::Result<Value> {
        // A name the library can resolve is hosted from there; an id or well-known alias
        // it does not hold yet is prepared from the server, as `host --protocol` does.
        let local = crate::protocols::locate(&input.protocol, &self.data_dir());
        let remote_name = is_lower_hex_64(&input.protocol)
            || crate::protocols::well_known::find(&input.protocol).is_some();
        let flag = match (local, remote_name) {
            (Ok(_), _) => "--protocol-dir",
            (Err(_), true) => "--protocol",
            (Err(reason), false) => bail!(reason),
        };
        let mut arguments = vec!["host".into(), flag.into(), input.protocol];
        if let Some(options) = input.options {
            arguments.extend(["--options".into(), Value::Object(options).to_string()]);
        }
        arguments.extend(input.play.arguments());
        self.start_daemon(arguments).await
    }

    /// `aigenora <arguments> --daemon` with this server's data dir and server, and its
    /// one-line JSON answer.
    async fn start_daemon(&self, arguments: Vec<String>) -> anyhow::Result<Value> {
        let executable = std::env::current_exe().context("cannot find this binary")?;
        let mut command = tokio::process::Command::new(executable);
        command.arg("--data-dir").arg(self.data_dir().root());
        if let Some(server) = &self.global.server {
            command.args(["--server", server]);
        }
        command
            .args(&arguments)
            .arg("--daemon")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        let output = tokio::time::timeout(START_LIMIT, command.output())
            .await
            .context("the session did not start in time")?
            .context("cannot start the session")?;
        let stdout = String::from_utf8_lossy(&output.stdout);
        let report = stdout
            .lines()
            .rev()
            .find_map(|line| serde_json::from_str::<Value>(line).ok());
        match report {
            Some(report) if report["status"] != "error" => Ok(report),
            Some(report) => {
                let reason = report["error"].as_str().or(report["reason"].as_str());
                bail!("{}", reason.unwrap_or("the session failed to start"))
            }
            None => {
                let stderr = String::from_utf8_lossy(&output.stderr);
                let line = stderr.lines().rev().find(|l| !l.trim().is_empty());
                bail!(
                    "{}",
                    line.map_or("the session failed to start", |l| l
                        .trim_start_matches("error: "))
                )
            }
        }
    }
}
