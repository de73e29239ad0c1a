//! The contract tools: list, path, hash, validate, scaffold, test, fetch and register a
//! protocol — each the library call its CLI command makes.

use std::path::PathBuf;

use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::CallToolResult;
use rmcp::{tool, tool_router};
use serde::Deserialize;
use serde_json::{Map, Value, json};

use super::{Aigenora, answer, blocking};
use crate::api::protocol::NewProtocol;
use crate::client::{ProtocolRegistered, fetch_protocol};
use crate::spec::{self, Direction, Spec};

#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub struct ProtocolInput {
    /// A protocol directory, a built-in alias (rock-paper-scissors), or a contract of the
    /// library by protocol_id or well-known alias (rps-v1).
    pub protocol: String,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub struct SpecInput {
    /// Path to a spec.json.
    pub spec: PathBuf,
}

/// Which way a message travels.
#[derive(Debug, Clone, Copy, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum DirectionInput {
    HostToGuest,
    GuestToHost,
    Both,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub struct ValidateInput {
    /// Path to a spec.json.
    pub spec: PathBuf,
    /// Options to check against the spec's parameters.
    #[serde(default)]
    pub options: Option<Map<String, Value>>,
    /// A message to validate against the spec instead of linting it.
    #[serde(default)]
    pub message: Option<Map<String, Value>>,
    /// The direction the message travels.
    #[serde(default)]
    pub direction: Option<DirectionInput>,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub struct ScaffoldInput {
    /// A spec.json, a protocol directory, a built-in alias, or a contract of the library.
    pub protocol: String,
    /// The directory to create (spec.json is copied there, hooks.py written; an existing
    /// hooks.py is never overwritten).
    pub dir: PathBuf,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub struct TestInput {
    /// A protocol directory, a built-in alias, or a contract of the library.
    pub protocol: String,
    /// Options for both sides.
    #[serde(default)]
    pub options: Option<Map<String, Value>>,
    /// Also send malformed guest messages and check the host refuses each.
    #[serde(default)]
    pub adversarial: bool,
    /// Fail when both sides have not finished within this many seconds (default 60).
    #[serde(default)]
    pub timeout_seconds: Option<u64>,
}

#[tool_router(router = contracts_router, vis = "pub(super)")]
impl Aigenora {
    #[tool(description = "The built-in protocols and the well-known contracts this build plays.")]
    async fn protocol_list(&self) -> CallToolResult {
        answer(Ok(Value::Array(super::super::protocol::list_rows())))
    }

    #[tool(
        description = "The directory of a protocol (a built-in is written into the library); \
                       a contract not in the library yet says to fetch it."
    )]
    async fn protocol_path(&self, Parameters(input): Parameters<ProtocolInput>) -> CallToolResult {
        let data_dir = self.data_dir();
        answer(
            blocking(move || {
                let dir = crate::protocols::resolve(&input.protocol, &data_dir)
                    .map_err(anyhow::Error::msg)?;
                Ok(json!({"dir": dir}))
            })
            .await,
        )
    }

    #[tool(description = "The protocol_id of a spec.json (SHA-256 of its canonical contract).")]
    async fn protocol_hash(&self, Parameters(input): Parameters<SpecInput>) -> CallToolResult {
        answer(
            blocking(move || {
                let bytes = spec::read_limited(&input.spec)
                    .map_err(|e| anyhow::anyhow!("{e} ({})", input.spec.display()))?;
                let id = spec::protocol_id::protocol_id_of_bytes(&bytes)
                    .map_err(|e| anyhow::anyhow!("{e} ({})", input.spec.display()))?;
                Ok(json!({"protocol_id": id}))
            })
            .await,
        )
    }

    #[tool(
        description = "Lint a spec.json (every problem with its JSON path, line and column), \
                       or, given a message, validate that message exactly as the engine does."
    )]
    async fn protocol_validate(
        &self,
        Parameters(input): Parameters<ValidateInput>,
    ) -> CallToolResult {
        answer(blocking(move || validate(input)).await)
    }

    #[tool(
        description = "Copy a protocol's spec.json into a new directory and write a hooks.py \
                       skeleton to fill in."
    )]
    async fn protocol_scaffold(
        &self,
        Parameters(input): Parameters<ScaffoldInput>,
    ) -> CallToolResult {
        let global = self.global.clone();
        answer(
            blocking(move || {
                let hooks =
                    super::super::protocol::scaffold_into(&input.protocol, &input.dir, &global)?;
                Ok(json!({"hooks": hooks, "spec": input.dir.join("spec.json")}))
            })
            .await,
        )
    }

    #[tool(
        description = "Play a protocol against itself (host and guest in this process) and \
                       report both sides; optionally the adversarial suite."
    )]
    async fn protocol_test(&self, Parameters(input): Parameters<TestInput>) -> CallToolResult {
        let global = self.global.clone();
        answer(
            blocking(move || {
                let args = super::super::protocol_test::TestArgs {
                    protocol: input.protocol,
                    options: input.options.map(|o| Value::Object(o).to_string()),
                    state_base: None,
                    adversarial: input.adversarial,
                    allow_skeleton_hooks: false,
                    control_mode: crate::spec::ControlMode::Autonomous,
                    think_seconds: None,
                    pace: 0.0,
                    timeout: input.timeout_seconds.unwrap_or(60).min(600),
                    json: true,
                    actions: None,
                    actions_before_failover: 10,
                    max_actions: 50,
                };
                super::super::protocol_test::json_report(&args, &global)
            })
            .await,
        )
    }

    #[tool(
        description = "Download a contract by protocol_id or well-known alias, check its hash, \
                       and add it to the library with hooks (ours for a well-known contract, \
                       else a skeleton)."
    )]
    async fn protocol_fetch(&self, Parameters(input): Parameters<ProtocolInput>) -> CallToolResult {
        answer(self.fetch(&input.protocol).await)
    }

    #[tool(
        description = "Publish a spec.json on the community server (public: ask the user \
                       first). The hooks stay on this machine."
    )]
    async fn protocol_register(&self, Parameters(input): Parameters<SpecInput>) -> CallToolResult {
        answer(self.publish(input.spec).await)
    }
}

impl Aigenora {
    async fn fetch(&self, protocol: &str) -> anyhow::Result<Value> {
        let id = crate::protocols::well_known::find(protocol)
            .map_or(protocol, |contract| contract.protocol_id)
            .to_string();
        let client = self.client()?;
        let data_dir = self.data_dir();
        let fetched = fetch_protocol(&client, &data_dir, &id).await?;
        let (fetched, provided) = blocking(move || {
            let provided =
                crate::protocols::well_known::provide_hooks(&fetched.spec, &fetched.dir)?;
            Ok((fetched, provided))
        })
        .await?;
        Ok(super::super::protocol_remote::fetched_json(
            &fetched, &provided,
        ))
    }

    async fn publish(&self, path: PathBuf) -> anyhow::Result<Value> {
        let spec = blocking(move || Ok(Spec::load_checked(&path)?)).await?;
        let body = NewProtocol::for_spec(&spec);
        let created = match self.client()?.register_protocol(&body).await? {
            ProtocolRegistered::New(_) => true,
            ProtocolRegistered::AlreadyRegistered(_) => false,
        };
        Ok(json!({"protocol_id": body.protocol_id, "created": created}))
    }
}

fn validate(input: ValidateInput) -> anyhow::Result<Value> {
    let shown = input.spec.display().to_string();
    let bytes = spec::read_limited(&input.spec).map_err(|e| anyhow::anyhow!("{e} ({shown})"))?;
    let Some(message) = input.message else {
        let report = spec::lint_bytes(&bytes, input.options.as_ref());
        return Ok(json!({
            "file": shown,
            "valid": report.errors() == 0,
            "protocol_id": report.protocol_id,
            "errors": report.errors(),
            "warnings": report.warnings(),
            "diagnostics": report.diagnostics,
        }));
    };
    let spec = Spec::from_bytes(&bytes).map_err(|e| anyhow::anyhow!("{e} ({shown})"))?;
    if let Some(options) = &input.options {
        spec::validate_options(spec.value(), options)?;
    }
    let direction = input.direction.map(|d| match d {
        DirectionInput::HostToGuest => Direction::HostToGuest,
        DirectionInput::GuestToHost => Direction::GuestToHost,
        DirectionInput::Both => Direction::Both,
    });
    let outcome = spec::validate_message(spec.value(), &Value::Object(message), direction, None);
    Ok(json!({
        "valid": outcome.is_ok(),
        "error": outcome.err().map(|e| e.to_string()),
    }))
}
