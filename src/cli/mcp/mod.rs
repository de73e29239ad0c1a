//! `aigenora mcp`: this binary as a Model Context Protocol server over stdio (the official
//! Rust SDK, rmcp), so an LLM agent drives it with typed tool calls instead of parsing
//! command output. Each tool is a library call (sessions run as background processes, the
//! way `host --daemon` starts them); a failure is a tool error carrying the one line the CLI
//! would print. One file per group of tools; the sessions are also resources
//! (`resources.rs`), followed for subscribers (`watch.rs`).

mod community;
mod contracts;
mod identity;
mod play;
mod progress;
mod resources;
mod sessions;
mod watch;

use std::process::ExitCode;
use std::sync::Arc;

use anyhow::Context;
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::model::{
    CallToolResult, ContentBlock, Implementation, ListResourceTemplatesResult, ListResourcesResult,
    PaginatedRequestParams, ReadResourceRequestParams, ReadResourceResponse,
    ResourceUpdatedNotificationParam, ServerCapabilities, ServerConfig, SubscribeRequestParams,
    SubscriptionFilter, UnsubscribeRequestParams,
};
use rmcp::service::{RequestContext, SubscriptionContext};
use rmcp::{ErrorData, RoleServer, ServerHandler, ServiceExt, tool_handler};
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

/// The MCP server: the data dir and server the tools act on, the tools, and the sessions
/// its client follows.
#[derive(Clone)]
pub struct Aigenora {
    global: Arc<GlobalArgs>,
    tool_router: ToolRouter<Self>,
    subscriptions: watch::Subscriptions,
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
            subscriptions: watch::Subscriptions::default(),
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
        let capabilities = ServerCapabilities::builder()
            .enable_tools()
            .enable_resources()
            .enable_resources_subscribe()
            .build();
        ServerConfig::new(capabilities)
            .with_server_info(Implementation::new("aigenora", crate::skill::VERSION))
            .with_instructions(INSTRUCTIONS)
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        let data_dir = self.data_dir();
        let listed = blocking(move || Ok(resources::list(&data_dir)))
            .await
            .map_err(|error| ErrorData::internal_error(error.to_string(), None))?;
        Ok(ListResourcesResult::with_all_items(listed))
    }

    async fn list_resource_templates(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, ErrorData> {
        Ok(ListResourceTemplatesResult::with_all_items(
            resources::templates(),
        ))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        let data_dir = self.data_dir();
        let read = tokio::task::spawn_blocking(move || {
            resources::read(&resources::SessionUri::parse(&request.uri, &data_dir)?)
        })
        .await
        .map_err(|error| ErrorData::internal_error(error.to_string(), None))??;
        Ok(read.into())
    }

    #[allow(
        deprecated,
        reason = "clients of the 2025 protocol versions subscribe this way"
    )]
    async fn subscribe(
        &self,
        request: SubscribeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        let session = resources::SessionUri::parse(&request.uri, &self.data_dir())?;
        if let Some(stop) = self.subscriptions.subscribe(&session.uri)? {
            // Its state before the answer: whatever changes once the client has it is reported.
            let watcher = watch::Watcher::new(vec![session]);
            let peer = context.peer;
            tokio::spawn(watcher.run(stop, move |uri| {
                let peer = peer.clone();
                async move {
                    let updated = ResourceUpdatedNotificationParam::new(uri);
                    peer.notify_resource_updated(updated).await.is_ok()
                }
            }));
        }
        Ok(())
    }

    #[allow(
        deprecated,
        reason = "clients of the 2025 protocol versions subscribe this way"
    )]
    async fn unsubscribe(
        &self,
        request: UnsubscribeRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        if self.subscriptions.unsubscribe(&request.uri) {
            Ok(())
        } else {
            Err(ErrorData::invalid_params(
                "not subscribed to that resource",
                None,
            ))
        }
    }

    fn accepted_subscription_filter(
        &self,
        requested: &SubscriptionFilter,
    ) -> Option<SubscriptionFilter> {
        let sessions = resources::sessions_among(
            requested.resource_subscriptions.as_deref(),
            &self.data_dir(),
            self.subscriptions.room(),
        );
        // Their state now, before the acknowledgment: whatever changes once the client
        // holds it is reported.
        self.subscriptions.remember(&sessions);
        let mut accepted = SubscriptionFilter::default();
        accepted.resource_subscriptions = Some(sessions.into_iter().map(|s| s.uri).collect());
        Some(accepted)
    }

    async fn listen(&self, context: SubscriptionContext) -> Result<(), ErrorData> {
        let sessions = resources::sessions_among(
            context.accepted().resource_subscriptions.as_deref(),
            &self.data_dir(),
            watch::MAX_WATCHED,
        );
        let _held = self.subscriptions.hold(sessions.len())?;
        let sink = context.sink().clone();
        let watcher = self.subscriptions.watcher(sessions);
        let following = watcher.run(self.subscriptions.stopper(), move |uri| {
            let sink = sink.clone();
            async move { sink.notify_resource_updated(uri).await.is_ok() }
        });
        tokio::select! {
            () = context.cancelled() => {}
            () = following => {}
        }
        Ok(())
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
        let server = Aigenora::new(global.clone());
        let subscriptions = server.subscriptions.clone();
        let service = server
            .serve((tokio::io::stdin(), stdout))
            .await
            .context("starting the MCP session")?;
        let served = service.waiting().await;
        subscriptions.stop_all();
        served.context("serving MCP")?;
        anyhow::Ok(())
    })?;
    Ok(ExitCode::SUCCESS)
}
