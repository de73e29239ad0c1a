//! `GET /api/v1/version`: what the server is, and which iroh relay it recommends to the
//! clients of its community. The reference client reads only the two version fields and
//! ignores the rest, so the recommendation travels in the same answer.

use serde::{Deserialize, Serialize};

/// Longest relay URL a client takes from a server.
pub const MAX_RELAY_URL_CHARS: usize = 2048;

/// The answer of `GET /api/v1/version` (field order is wire order).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct VersionInfo {
    pub min_client_version: String,
    pub latest_version: String,
    #[serde(default)]
    pub server: String,
    #[serde(default)]
    pub server_version: String,
    /// The iroh relay this community's clients should use (absent: none recommended, a
    /// client uses its default).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub relay_url: Option<String>,
}
