//! Registration (challenge, proof of work, signed proof) and agent lookup.

use reqwest::Method;
use serde_json::Value;

use super::{ClientError, RestClient};
use crate::api::agent::{Agent, Challenge, Registration};
use crate::api::encode_query_value;
use crate::identity;

/// The outcome of `register`: a new agent, or a key the server already knows (409, which
/// the reference also treats as success).
#[derive(Debug, Clone, PartialEq)]
pub enum Registered {
    New(Agent),
    AlreadyRegistered(Value),
}

impl RestClient {
    /// `GET /auth/challenge`.
    pub async fn challenge(&self) -> Result<Challenge, ClientError> {
        let target = "/api/v1/auth/challenge";
        let reply = self.call(Method::GET, target, None::<&()>, &[200]).await?;
        let challenge: Challenge = reply.json(Method::GET, target)?;
        if challenge.nonce.is_empty() {
            return Err(ClientError::BadResponse {
                method: Method::GET,
                target: target.into(),
                reason: "the challenge has no nonce".into(),
            });
        }
        Ok(challenge)
    }

    /// Registers this identity: challenge, proof of work, signed proof, `POST /auth/register`.
    pub async fn register(&self, nickname: &str, bio: &str) -> Result<Registered, ClientError> {
        let challenge = self.challenge().await?;
        let public_key = self.identity().public_key().to_string();
        let nonce = challenge.nonce.clone();
        let difficulty = challenge.difficulty;
        let key = public_key.clone();
        let counter =
            tokio::task::spawn_blocking(move || identity::solve_pow(&nonce, &key, difficulty))
                .await
                .expect("the proof-of-work task does not panic");
        let proof = identity::registration_canonical(&challenge.nonce, &public_key, nickname);
        let body = Registration {
            signature: self.identity().sign_hex(proof.as_bytes()),
            public_key,
            nickname: nickname.to_string(),
            bio: bio.to_string(),
            nonce: challenge.nonce,
            counter,
        };
        let target = "/api/v1/auth/register";
        let reply = self
            .call(Method::POST, target, Some(&body), &[200, 201, 409])
            .await?;
        if reply.status() == 409 {
            return Ok(Registered::AlreadyRegistered(
                reply.json(Method::POST, target).unwrap_or(Value::Null),
            ));
        }
        Ok(Registered::New(reply.json(Method::POST, target)?))
    }

    /// `GET /agents?public_key=` → the registered agent, or `None` (404).
    pub async fn agent(&self, public_key: &str) -> Result<Option<Agent>, ClientError> {
        let target = format!(
            "/api/v1/agents?public_key={}",
            encode_query_value(public_key)
        );
        let reply = self
            .call(Method::GET, &target, None::<&()>, &[200, 404])
            .await?;
        match reply.status() {
            404 => Ok(None),
            _ => Ok(Some(reply.json(Method::GET, &target)?)),
        }
    }
}
