//! Protocol calls: register, read one (bundle first, then the record), list the directory.

use reqwest::Method;
use serde_json::Value;

use super::{ClientError, RestClient};
use crate::api::protocol::{NewProtocol, ProtocolList, ProtocolRecord, spec_of_response};
use crate::api::query_string;

/// The outcome of a protocol registration: stored now, or already known (409).
#[derive(Debug, Clone, PartialEq)]
pub enum ProtocolRegistered {
    New(ProtocolRecord),
    AlreadyRegistered(Value),
}

impl RestClient {
    /// `POST /protocols`.
    pub async fn register_protocol(
        &self,
        protocol: &NewProtocol,
    ) -> Result<ProtocolRegistered, ClientError> {
        let target = "/api/v1/protocols";
        let reply = self
            .call(Method::POST, target, Some(protocol), &[200, 201, 409])
            .await?;
        if reply.status() == 409 {
            return Ok(ProtocolRegistered::AlreadyRegistered(
                reply.json(Method::POST, target).unwrap_or(Value::Null),
            ));
        }
        Ok(ProtocolRegistered::New(reply.json(Method::POST, target)?))
    }

    /// The spec stored under `protocol_id`: `GET /protocols/{id}/bundle`, and on 404
    /// `GET /protocols/{id}` (the reference's order). Not yet checked against the id.
    pub async fn protocol_spec(&self, protocol_id: &str) -> Result<Value, ClientError> {
        let bundle = format!("/api/v1/protocols/{protocol_id}/bundle");
        let reply = self
            .call(Method::GET, &bundle, None::<&()>, &[200, 404])
            .await?;
        let (reply, target) = if reply.status() == 404 {
            let target = format!("/api/v1/protocols/{protocol_id}");
            (
                self.call(Method::GET, &target, None::<&()>, &[200]).await?,
                target,
            )
        } else {
            (reply, bundle)
        };
        let body: Value = reply.json(Method::GET, &target)?;
        spec_of_response(body).map_err(|reason| ClientError::BadResponse {
            method: Method::GET,
            target,
            reason,
        })
    }

    /// `GET /protocols/{id}`.
    pub async fn protocol(&self, protocol_id: &str) -> Result<ProtocolRecord, ClientError> {
        let target = format!("/api/v1/protocols/{protocol_id}");
        self.call(Method::GET, &target, None::<&()>, &[200])
            .await?
            .json(Method::GET, &target)
    }

    /// `GET /protocols?limit=&cursor=&q=`: one page of the directory, newest first.
    pub async fn list_protocols(
        &self,
        limit: u32,
        cursor: Option<&str>,
        query: Option<&str>,
    ) -> Result<ProtocolList, ClientError> {
        let mut pairs = vec![("limit", limit.to_string())];
        if let Some(cursor) = cursor {
            pairs.push(("cursor", cursor.to_string()));
        }
        if let Some(query) = query {
            pairs.push(("q", query.to_string()));
        }
        let target = format!("/api/v1/protocols{}", query_string(&pairs));
        self.call(Method::GET, &target, None::<&()>, &[200])
            .await?
            .json(Method::GET, &target)
    }
}
