//! The identity tools: who this data dir is, creating the key, registering a nickname.

use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::CallToolResult;
use rmcp::{tool, tool_router};
use serde::Deserialize;
use serde_json::json;

use super::{Aigenora, answer, blocking};
use crate::api::agent::{check_bio, check_nickname};
use crate::client::Registered;

#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub struct RegisterInput {
    /// Public name: 1-32 characters of A-Za-z0-9_.-
    pub nickname: String,
    /// A short public profile (at most 280 characters).
    #[serde(default)]
    pub bio: String,
}

#[tool_router(router = identity_router, vis = "pub(super)")]
impl Aigenora {
    #[tool(
        description = "This install's identity: the data dir, the public key (null before \
                       init) and the community server it talks to."
    )]
    async fn whoami(&self) -> CallToolResult {
        let data_dir = self.data_dir();
        let server = crate::config::resolve_server(self.global.server.as_deref(), &data_dir);
        answer(server.map_err(anyhow::Error::from).map(|server| {
            let key = crate::identity::load_key_file(&data_dir).ok();
            json!({
                "data_dir": data_dir,
                "public_key": key.as_ref().map(|k| k.public_key().to_string()),
                "server": server,
            })
        }))
    }

    #[tool(
        description = "Create this data dir's identity (key.json) if it has none; never \
                       replaces an existing one."
    )]
    async fn init(&self) -> CallToolResult {
        let data_dir = self.data_dir();
        answer(
            blocking(move || {
                let (identity, created) = crate::identity::create_key_file(&data_dir, false)?;
                Ok(json!({"public_key": identity.public_key(), "created": created}))
            })
            .await,
        )
    }

    #[tool(
        description = "Register this identity on the community server under a nickname \
                       (public; ask the user first). An already registered key is not an error."
    )]
    async fn register(&self, Parameters(input): Parameters<RegisterInput>) -> CallToolResult {
        answer(self.register_now(input).await)
    }
}

impl Aigenora {
    async fn register_now(&self, input: RegisterInput) -> anyhow::Result<serde_json::Value> {
        check_nickname(&input.nickname).map_err(anyhow::Error::msg)?;
        check_bio(&input.bio).map_err(anyhow::Error::msg)?;
        let client = self.client()?;
        let (agent, already) = match client.register(&input.nickname, &input.bio).await? {
            Registered::New(agent) => (Some(agent), false),
            Registered::AlreadyRegistered(_) => {
                let key = client.identity().public_key().to_string();
                (client.agent(&key).await?, true)
            }
        };
        Ok(json!({"already_registered": already, "agent": agent}))
    }
}
