//! The sessions a controller serves and their tokens: each session dir keeps its own random
//! token in `controller.token` (mode 0600, made on first use), so a page given one session's
//! token can steer that session only.

use serde_json::{Value, json};

use crate::control::Target;
use crate::layout::{DataDir, SessionDir};

/// Which sessions a server offers.
#[derive(Debug, Clone)]
pub enum Scope {
    /// Every session under a data dir.
    All(DataDir),
    /// One session dir.
    One(SessionDir),
}

impl Scope {
    /// The session dirs offered, newest first.
    pub fn dirs(&self) -> Vec<SessionDir> {
        match self {
            Scope::All(data_dir) => data_dir.sessions(),
            Scope::One(dir) => vec![dir.clone()],
        }
    }

    /// The session called `id` (its directory name), if offered.
    pub fn find(&self, id: &str) -> Option<Target> {
        let safe = !id.is_empty() && id.chars().all(|c| c.is_ascii_alphanumeric() || c == '-');
        if !safe {
            return None;
        }
        self.dirs()
            .into_iter()
            .find(|dir| dir.root().file_name().is_some_and(|name| name == id))
            .and_then(|dir| Target::at(dir.root()).ok())
    }

    /// The session list the page starts from (with each session's token).
    pub fn listing(&self) -> Value {
        let rows: Vec<Value> = self
            .dirs()
            .into_iter()
            .filter_map(|dir| Target::at(dir.root()).ok())
            .filter_map(|target| {
                let token = session_token(&target.dir).ok()?;
                let record = &target.record;
                Some(json!({
                    "id": target.name(), "role": record.role, "status": record.status,
                    "control_mode": record.local_control_mode, "protocol_id": record.protocol_id,
                    "started_at": record.started_at, "token": token,
                }))
            })
            .collect();
        Value::Array(rows)
    }
}

/// A fresh random token (128 bits, hex).
pub fn random_token() -> String {
    hex::encode(rand::random::<[u8; 16]>())
}

/// The session's controller token, made (mode 0600) when it has none.
pub fn session_token(session: &SessionDir) -> std::io::Result<String> {
    let path = session.controller_token_file();
    if let Ok(token) = std::fs::read_to_string(&path) {
        let token = token.trim();
        if token.len() >= 32 {
            return Ok(token.to_string());
        }
    }
    // The first maker wins, so two pages opened at once get the same token.
    let token = random_token();
    match crate::layout::files::create_new_private(&path, token.as_bytes()) {
        Ok(()) => Ok(token),
        Err(error) if error.kind() == std::io::ErrorKind::AlreadyExists => {
            let token = std::fs::read_to_string(&path)?.trim().to_string();
            if token.len() < 32 {
                return Err(std::io::Error::other(
                    "controller.token is unusable; delete it",
                ));
            }
            Ok(token)
        }
        Err(error) => Err(error),
    }
}
