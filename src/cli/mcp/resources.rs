//! Sessions as MCP resources: every session directory of the data dir is the resource
//! `aigenora://sessions/<directory name>`, and reading it returns the JSON `session_snapshot`
//! returns. A URI from a client is checked (scheme, length, one plain directory name, no
//! symbolic link, inside the data dir's sessions) before any path is built from it.

use rmcp::ErrorData;
use rmcp::model::{ReadResourceResult, Resource, ResourceContents, ResourceTemplate};

use super::super::session_control::snapshot_view;
use crate::control::Target;
use crate::layout::{DataDir, SessionDir};
use crate::session::list_sessions;

/// Every session resource's URI starts with this.
const PREFIX: &str = "aigenora://sessions/";
/// The session resources as an RFC 6570 template.
const TEMPLATE: &str = "aigenora://sessions/{session}";
/// Longest URI looked at.
const MAX_URI: usize = 256;
/// Most sessions one `resources/list` returns (the newest).
const MAX_LISTED: usize = 500;
const MIME: &str = "application/json";

/// Why a URI names no session of this data dir: the one line the client gets.
#[derive(Debug, thiserror::Error)]
pub enum UriError {
    #[error("resource URI longer than {MAX_URI} bytes")]
    TooLong,
    #[error("not a session URI: expected {TEMPLATE}")]
    Scheme,
    #[error("percent-encoded characters are not accepted in a session URI")]
    Encoded,
    #[error("a session URI names one session directory: no '/', '.' or '..'")]
    Path,
    #[error("a session name has only letters, digits, '-', '_' and '.'")]
    Characters,
    #[error("no session {0} in this data dir")]
    Unknown(String),
    #[error("session {0} is a symbolic link, not a session directory")]
    Link(String),
}

impl From<UriError> for ErrorData {
    fn from(error: UriError) -> ErrorData {
        match error {
            UriError::Unknown(_) => ErrorData::resource_not_found(error.to_string(), None),
            _ => ErrorData::invalid_params(error.to_string(), None),
        }
    }
}

/// A session resource a URI names, checked: the URI and the session's directory.
#[derive(Debug, Clone)]
pub struct SessionUri {
    pub uri: String,
    pub dir: SessionDir,
}

impl SessionUri {
    /// Checks `uri` against the sessions of `data_dir`.
    pub fn parse(uri: &str, data_dir: &DataDir) -> Result<SessionUri, UriError> {
        if uri.len() > MAX_URI {
            return Err(UriError::TooLong);
        }
        let name = uri.strip_prefix(PREFIX).ok_or(UriError::Scheme)?;
        if name.contains('%') {
            return Err(UriError::Encoded);
        }
        if name.is_empty() || name.starts_with('.') || name.contains(['/', '\\']) {
            return Err(UriError::Path);
        }
        if !name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-_.".contains(&b))
        {
            return Err(UriError::Characters);
        }
        let sessions = data_dir.sessions_root();
        let dir = SessionDir::open(sessions.join(name));
        let unknown = || UriError::Unknown(name.to_string());
        let meta = std::fs::symlink_metadata(dir.root()).map_err(|_| unknown())?;
        if meta.file_type().is_symlink() {
            return Err(UriError::Link(name.to_string()));
        }
        let record = std::fs::symlink_metadata(dir.session_file()).map_err(|_| unknown())?;
        if !meta.is_dir() || !record.is_file() {
            return Err(unknown());
        }
        // The sessions dir itself may be a link the user made; the session must still be
        // one of its entries.
        let inside = match (dir.root().canonicalize(), sessions.canonicalize()) {
            (Ok(dir), Ok(sessions)) => dir.parent() == Some(sessions.as_path()),
            _ => false,
        };
        if !inside {
            return Err(unknown());
        }
        Ok(SessionUri {
            uri: uri.to_string(),
            dir,
        })
    }
}

/// The newest sessions of `data_dir` as resources (links and odd names left out).
pub fn list(data_dir: &DataDir) -> Vec<Resource> {
    list_sessions(data_dir)
        .into_iter()
        .filter_map(|(dir, record)| {
            let name = dir.root().file_name()?.to_str()?.to_string();
            SessionUri::parse(&format!("{PREFIX}{name}"), data_dir).ok()?;
            let text = |value: Option<String>| value.unwrap_or_else(|| "?".into());
            let description = format!(
                "{} session, {}, protocol {}: its snapshot (status, phase, score, open decision window)",
                text(record.role.map(|role| role.as_str().to_string())),
                text(record.status.map(|status| status.as_str().to_string())),
                text(record.protocol_id),
            );
            Some(
                Resource::new(format!("{PREFIX}{name}"), name)
                    .with_description(description)
                    .with_mime_type(MIME),
            )
        })
        .take(MAX_LISTED)
        .collect()
}

/// The one template: any session by its directory name.
pub fn templates() -> Vec<ResourceTemplate> {
    vec![
        ResourceTemplate::new(TEMPLATE, "session")
            .with_description(
                "A session of this data dir by its directory name (as session_list shows it): \
                 the JSON session_snapshot returns.",
            )
            .with_mime_type(MIME),
    ]
}

/// A session's snapshot as the resource's one JSON text.
pub fn read(session: &SessionUri) -> Result<ReadResourceResult, ErrorData> {
    let target = Target::at(session.dir.root())
        .map_err(|error| ErrorData::resource_not_found(error.to_string(), None))?;
    let text = serde_json::to_string(&snapshot_view(&target))
        .map_err(|error| ErrorData::internal_error(error.to_string(), None))?;
    Ok(ReadResourceResult::new(vec![
        ResourceContents::text(text, session.uri.clone()).with_mime_type(MIME),
    ])
    // A live view: never to be served from a cache.
    .with_ttl_ms(0))
}

/// The session resources among `uris` (anything else left out), at most `limit`: what a
/// `subscriptions/listen` request is granted.
pub fn sessions_among(
    uris: Option<&[String]>,
    data_dir: &DataDir,
    limit: usize,
) -> Vec<SessionUri> {
    uris.unwrap_or_default()
        .iter()
        .filter_map(|uri| SessionUri::parse(uri, data_dir).ok())
        .take(limit)
        .collect()
}
