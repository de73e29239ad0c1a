//! [`SessionError`]: everything that can stop a networked session, one variant per cause,
//! keeping the typed errors of the layers below. The CLI prints it as one line.

use std::path::PathBuf;

use crate::client::{ClientError, FetchError};
use crate::engine::EngineError;
use crate::hooks::HookError;
use crate::spec::{OptionsError, SpecFileError};
use crate::transport::{TicketError, TransportError};

use super::handshake::HandshakeError;

/// Why a side's session could not start, or what stopped it.
#[derive(Debug, thiserror::Error)]
pub enum SessionError {
    #[error("options: {0}")]
    Options(#[source] OptionsError),
    #[error("the host's options do not fit protocol {protocol_id}: {error}")]
    HostOptions {
        protocol_id: String,
        #[source]
        error: OptionsError,
    },
    #[error(transparent)]
    Client(#[from] ClientError),
    #[error(transparent)]
    Transport(#[from] TransportError),
    #[error(transparent)]
    Handshake(#[from] HandshakeError),
    /// The server refused to record the session both sides signed.
    #[error("handshake failed: {0}")]
    SessionRegistration(#[source] ClientError),
    #[error("invitation {post_id}: {reason}")]
    Invitation { post_id: String, reason: String },
    /// A dialer registered a session for the host's invitation (so the server offers it to
    /// nobody else) and then failed the handshake.
    #[error(
        "invitation {post_id}: taken by session {session_id}, whose guest then failed the \
         handshake ({reason}); the session is reported failed"
    )]
    InvitationTaken {
        post_id: String,
        session_id: String,
        reason: String,
    },
    #[error("invitation {post_id}: {error}")]
    Ticket {
        post_id: String,
        #[source]
        error: TicketError,
    },
    #[error(transparent)]
    Fetch(#[from] FetchError),
    #[error(transparent)]
    Spec(#[from] SpecFileError),
    #[error("protocol hash mismatch: {dir} holds {found}, expected {expected}")]
    ProtocolMismatch {
        dir: PathBuf,
        found: String,
        expected: String,
    },
    /// hooks.py is missing or an unfilled skeleton.
    #[error("{0}")]
    HooksNotReady(String),
    #[error(transparent)]
    Hook(#[from] HookError),
    /// Boxed: engine errors carry the offending frame.
    #[error(transparent)]
    Engine(Box<EngineError>),
    #[error("{what}: {error}")]
    Io {
        what: String,
        #[source]
        error: std::io::Error,
    },
    /// A thread or task of the session stopped abnormally (a panic).
    #[error("{what} stopped: {detail}")]
    Stopped { what: &'static str, detail: String },
    /// `session abort`, SIGTERM or Ctrl-C.
    #[error("session aborted: {0}")]
    Aborted(&'static str),
}

impl From<EngineError> for SessionError {
    fn from(error: EngineError) -> SessionError {
        SessionError::Engine(Box::new(error))
    }
}

impl SessionError {
    pub(crate) fn io(what: impl Into<String>, error: std::io::Error) -> SessionError {
        SessionError::Io {
            what: what.into(),
            error,
        }
    }

    /// Whether the peer was reached and the handshake is what failed.
    pub fn is_handshake(&self) -> bool {
        matches!(
            self,
            SessionError::Handshake(_) | SessionError::SessionRegistration(_)
        )
    }
}
