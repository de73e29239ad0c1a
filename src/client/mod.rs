//! The community REST client: every call signed exactly like the reference client
//! (docs/rest-api.md#signed-requests), compact JSON bodies, no redirects, no proxies, answers
//! read up to a size cap (a hostile server cannot make the client buffer without bound), and
//! errors that carry the server's own reason.

mod agents;
mod fetch;
mod groups;
mod invitations;
mod meta;
mod protocols;
mod retry;
mod sessions;
#[cfg(test)]
pub(crate) mod stub;

use std::sync::Arc;
use std::time::Duration;

use governor::{DefaultDirectRateLimiter, Quota};
use reqwest::Method;
use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::api::{API_PREFIX, ErrorBody};
use crate::identity::Identity;

pub use agents::Registered;
pub use fetch::{FetchError, FetchedProtocol, fetch_protocol};
pub use protocols::ProtocolRegistered;
pub use retry::retrying;

/// How long one request may take, end to end.
pub const REQUEST_TIMEOUT: Duration = Duration::from_secs(30);
/// Largest answer read: the biggest legitimate one (a page of 100 invitations, a spec of at
/// most the server's 1 MiB body limit) is well below it.
pub const MAX_RESPONSE_BYTES: usize = 4 * 1024 * 1024;
/// A pooled connection idle for longer is not used again: half the idle time our server
/// allows, so that a request never goes out on a connection the server has already closed
/// while the close was lost on the way (it would be reset).
const POOL_IDLE: Duration = Duration::from_secs(5);
/// How much of a non-JSON error body is shown (as the reference does).
const SHOWN_BODY_CHARS: usize = 500;

/// Why a call failed.
#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    #[error("invalid server URL {url:?}: {reason}")]
    BadUrl { url: String, reason: String },
    #[error("{method} {target} failed: cannot reach {server}: {reason}")]
    Unreachable {
        method: Method,
        target: String,
        server: String,
        reason: String,
    },
    #[error("{method} {target} failed: HTTP {status}: {reason}")]
    Status {
        method: Method,
        target: String,
        status: u16,
        /// The server's `error` code, when it sent the standard error body.
        code: Option<String>,
        reason: String,
        /// How long the server asked us to wait (`Retry-After` in seconds).
        retry_after: Option<Duration>,
    },
    #[error("{method} {target}: unexpected response: {reason}")]
    BadResponse {
        method: Method,
        target: String,
        reason: String,
    },
    #[error("{method} {url} failed: the answer is larger than {limit} bytes")]
    TooLarge {
        method: Method,
        url: String,
        limit: usize,
    },
    #[error("invalid {what} {value:?} (expected 1-128 characters of A-Za-z0-9_-)")]
    InvalidId { what: &'static str, value: String },
}

impl ClientError {
    /// The HTTP status of a refused call (e.g. 409 for "already closed").
    pub fn status(&self) -> Option<u16> {
        match self {
            ClientError::Status { status, .. } => Some(*status),
            _ => None,
        }
    }

    /// The server's `error` code of a refused call (e.g. `session_ended`).
    pub fn code(&self) -> Option<&str> {
        match self {
            ClientError::Status { code, .. } => code.as_deref(),
            _ => None,
        }
    }
}

/// A response: status and raw body.
#[derive(Debug)]
pub(crate) struct Reply {
    status: u16,
    body: bytes::Bytes,
    retry_after: Option<Duration>,
}

/// A signed client of one community server, acting as one identity.
#[derive(Debug, Clone)]
pub struct RestClient {
    http: reqwest::Client,
    server: String,
    identity: Identity,
    /// Requests wait here first, when the client paces itself ([`RestClient::paced`]).
    pace: Option<Arc<DefaultDirectRateLimiter>>,
}

impl RestClient {
    /// A client of `server` (e.g. `http://127.0.0.1:41000`; a trailing `/` is ignored).
    pub fn new(server: &str, identity: Identity) -> Result<RestClient, ClientError> {
        let server = server.trim_end_matches('/').to_string();
        let bad = |reason: &str| ClientError::BadUrl {
            url: server.clone(),
            reason: reason.to_string(),
        };
        let url = reqwest::Url::parse(&server).map_err(|e| bad(&e.to_string()))?;
        if !matches!(url.scheme(), "http" | "https") || url.query().is_some() {
            return Err(bad("expected http://host[:port] or https://host[:port]"));
        }
        let http = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .no_proxy()
            .timeout(REQUEST_TIMEOUT)
            .pool_idle_timeout(POOL_IDLE)
            .build()
            .map_err(|e| bad(&e.to_string()))?;
        Ok(RestClient {
            http,
            server,
            identity,
            pace: None,
        })
    }

    /// This client (and its clones) sending at most `per_second` requests a second, in
    /// bursts of as many: requests over the rate wait their turn instead of being sent.
    /// A host paces itself below the server's per-key rate, so that dialers who make it ask
    /// the server about them cannot earn it 429s.
    pub fn paced(&self, per_second: std::num::NonZeroU32) -> RestClient {
        RestClient {
            pace: Some(Arc::new(governor::RateLimiter::direct(Quota::per_second(
                per_second,
            )))),
            ..self.clone()
        }
    }

    /// A client of the same server acting as another identity (connections are shared).
    pub fn with_identity(&self, identity: Identity) -> RestClient {
        RestClient {
            http: self.http.clone(),
            server: self.server.clone(),
            identity,
            pace: self.pace.clone(),
        }
    }

    pub fn server(&self) -> &str {
        &self.server
    }

    pub fn identity(&self) -> &Identity {
        &self.identity
    }

    /// Sends one signed request. `target` is `/api/v1/...` with its query, already encoded.
    pub(crate) async fn send(
        &self,
        method: Method,
        target: &str,
        body: Vec<u8>,
    ) -> Result<Reply, ClientError> {
        debug_assert!(target.starts_with(API_PREFIX), "targets are API paths");
        if let Some(pace) = &self.pace {
            pace.until_ready().await;
        }
        let signed = self.identity.sign_request(method.as_str(), target, &body);
        let mut request = self
            .http
            .request(method.clone(), format!("{}{target}", self.server))
            .header(reqwest::header::CONTENT_TYPE, "application/json");
        for (name, value) in signed.pairs() {
            request = request.header(name, value);
        }
        if !body.is_empty() {
            request = request.body(body);
        }
        let unreachable = |error: reqwest::Error| ClientError::Unreachable {
            method: method.clone(),
            target: target.to_string(),
            server: self.server.clone(),
            reason: innermost_reason(&error),
        };
        let mut response = request.send().await.map_err(unreachable)?;
        let status = response.status().as_u16();
        let retry_after = response
            .headers()
            .get(reqwest::header::RETRY_AFTER)
            .and_then(|value| value.to_str().ok())
            .and_then(|seconds| seconds.trim().parse::<u64>().ok())
            .map(Duration::from_secs);
        let too_large = || ClientError::TooLarge {
            method: method.clone(),
            url: format!("{}{target}", self.server),
            limit: MAX_RESPONSE_BYTES,
        };
        if response
            .content_length()
            .is_some_and(|length| length > MAX_RESPONSE_BYTES as u64)
        {
            return Err(too_large());
        }
        let mut body = bytes::BytesMut::new();
        while let Some(chunk) = response.chunk().await.map_err(unreachable)? {
            if body.len() + chunk.len() > MAX_RESPONSE_BYTES {
                return Err(too_large());
            }
            body.extend_from_slice(&chunk);
        }
        Ok(Reply {
            status,
            body: body.freeze(),
            retry_after,
        })
    }

    /// Sends a request and requires one of the `expected` statuses.
    pub(crate) async fn call(
        &self,
        method: Method,
        target: &str,
        body: Option<&(impl Serialize + ?Sized)>,
        expected: &[u16],
    ) -> Result<Reply, ClientError> {
        let bytes = match body {
            Some(body) => serde_json::to_vec(body).expect("request bodies always serialize"),
            None => Vec::new(),
        };
        let reply = self.send(method.clone(), target, bytes).await?;
        if expected.contains(&reply.status) {
            return Ok(reply);
        }
        let (code, reason) = match serde_json::from_slice::<ErrorBody>(&reply.body) {
            Ok(error) => (Some(error.error), error.message),
            Err(_) => (
                None,
                String::from_utf8_lossy(&reply.body)
                    .chars()
                    .take(SHOWN_BODY_CHARS)
                    .collect(),
            ),
        };
        Err(ClientError::Status {
            method,
            target: target.to_string(),
            status: reply.status,
            code,
            reason,
            retry_after: reply.retry_after,
        })
    }
}

impl Reply {
    pub(crate) fn status(&self) -> u16 {
        self.status
    }

    /// Parses the body as `T`, naming the call when it does not fit.
    pub(crate) fn json<T: DeserializeOwned>(
        &self,
        method: Method,
        target: &str,
    ) -> Result<T, ClientError> {
        serde_json::from_slice(&self.body).map_err(|e| ClientError::BadResponse {
            method,
            target: target.to_string(),
            reason: e.to_string(),
        })
    }
}

/// The most specific message in an error's source chain ("Connection refused ...").
fn innermost_reason(error: &(dyn std::error::Error + 'static)) -> String {
    let mut current = error;
    while let Some(source) = current.source() {
        current = source;
    }
    current.to_string()
}
