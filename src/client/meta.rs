//! `GET /version`: what the server is and the relay it recommends.

use reqwest::Method;

use super::{ClientError, RestClient};
use crate::api::meta::VersionInfo;

impl RestClient {
    /// `GET /version`; `None` from a server that has no such endpoint (404).
    pub async fn version(&self) -> Result<Option<VersionInfo>, ClientError> {
        let target = "/api/v1/version";
        let reply = self
            .call(Method::GET, target, None::<&()>, &[200, 404])
            .await?;
        if reply.status() == 404 {
            return Ok(None);
        }
        reply.json(Method::GET, target).map(Some)
    }
}
