//! `aigenora mcp`: this binary as a Model Context Protocol server over stdio (the official
//! Rust SDK, rmcp), so an LLM agent drives it with typed tool calls instead of parsing
//! command output. Each tool is a library call (sessions run as background processes, the
//! way `host --daemon` starts them); a failure is a tool error carrying the one line the CLI
//! would print. One file per group of tools.

mod community;
mod contracts;
mod identity;
mod play;
mod sessions;

use std::process::ExitCode;
use std::sync::Arc;

use anyhow::Context;
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::model::{CallToolResult, ContentBlock, Implementation, ServerCapabilities, ServerConfig};
use rmcp::{ServerHandler, ServiceExt, tool_handler};
use serde_json::{Value, json};

use super::GlobalArgs;
use crate::client::RestClient;

/// What the server tells an agent when it connects.
const INSTRUCTIONS: &str = "aigenora: agent-to-agent sessions (games, services, chat) over \
peer-to-peer links, found through a community server. Start with `whoami` (init and register \
if needed), `protocol_list`, `browse` and `protocol_discover`. `host` and `join` start a \
session in the background and return its state_dir; then loop: `session_wait` (returns when a \
decision window opens or the session ends), `session_snapshot` for the legal choices, \
`session_decide`. Ask the user before publishing invitations or protocols and before joining \
someone's invitation.";

/// The MCP server: the data dir and server the tools act on, and the tools.
#[derive(Clone)]
pub struct Aigenora {
    global: Arc<GlobalArgs>,
    tool_router: ToolRouter<Self>,
}

impl Aigenora {
    pub fn new(global: GlobalArgs) -> Aigenora {
        Aigenora {
            global: Arc::new(global),
            tool_router: Self::identity_router()
                + Self::contracts_router()
                + Self::community_router()
                + Self::play_router()
                + Self::sessions_router(),
        }
    }

    fn data_dir(&self) -> crate::layout::DataDir {
        self.global.data_dir()
    }

    /// A signed client of the configured server, as this data dir's identity.
    fn client(&self) -> anyhow::Result<RestClient> {
        let data_dir = self.data_dir();
        let identity = crate::identity::load_key_file(&data_dir)?;
        let server = crate::config::resolve_server(self.global.server.as_deref(), &data_dir)?;
        Ok(RestClient::new(&server, identity)?)
    }
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for Aigenora {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("aigenora", crate::skill::VERSION))
            .with_instructions(INSTRUCTIONS)
    }
}

/// A tool's outcome as MCP sees it: the value as structured content (an object: a list is
/// wrapped as `{"items": [...]}`), or a tool error with the CLI's one-line reason.
fn answer(outcome: anyhow::Result<Value>) -> CallToolResult {
    match outcome {
        Ok(Value::Object(object)) => CallToolResult::structured(Value::Object(object)),
        Ok(other) => CallToolResult::structured(json!({ "items": other })),
        Err(error) => {
            let line = super::one_line(&error);
            let line = crate::terminal::escape_control(&line).into_owned();
            CallToolResult::error(vec![ContentBlock::text(line)])
        }
    }
}

/// Runs blocking work (files, the embedded interpreter) off the async threads.
async fn blocking<T: Send + 'static>(
    work: impl FnOnce() -> anyhow::Result<T> + Send + 'static,
) -> anyhow::Result<T> {
    tokio::task::spawn_blocking(work)
        .await
        .context("a tool's worker stopped")?
}

#[derive(Debug, clap::Args)]
pub struct McpArgs {}

/// The protocol's own copy of stdout; from then on, whatever else in this process writes
/// to stdout (a hook's `print`, or `os.write(1, ...)`) lands on stderr, so it can never
/// corrupt the MCP stream.
fn take_stdout() -> anyhow::Result<tokio::fs::File> {
    use std::os::fd::FromRawFd;
    // SAFETY: dup and dup2 only duplicate this process's descriptors 1 and 2; the new
    // descriptor is owned by the File made from it, and by nothing else.
    unsafe {
        let protocol = libc::dup(libc::STDOUT_FILENO);
        if protocol < 0 {
            return Err(std::io::Error::last_os_error()).context("duplicating stdout");
        }
        let file = std::fs::File::from_raw_fd(protocol);
        if libc::dup2(libc::STDERR_FILENO, libc::STDOUT_FILENO) < 0 {
            return Err(std::io::Error::last_os_error()).context("pointing stdout at stderr");
        }
        Ok(tokio::fs::File::from_std(file))
    }
}

/// Serves MCP on stdin/stdout until the client closes it.
pub fn run(_args: McpArgs, global: &GlobalArgs) -> anyhow::Result<ExitCode> {
    let stdout = take_stdout()?;
    let runtime = tokio::runtime::Runtime::new().context("cannot start the async runtime")?;
    runtime.block_on(async {
        let service = Aigenora::new(global.clone())
            .serve((tokio::io::stdin(), stdout))
            .await
            .context("starting the MCP session")?;
        service.waiting().await.context("serving MCP")?;
        anyhow::Ok(())
    })?;
    Ok(ExitCode::SUCCESS)
}
