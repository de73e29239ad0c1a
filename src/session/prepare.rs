//! Getting a protocol ready for a guest that only knows its id: a built-in with that id, the
//! local library, or a fetch from the community server (which writes a hooks skeleton the
//! user must fill in before joining).

use std::path::PathBuf;

use super::SessionError;
use crate::client::{RestClient, fetch_protocol};
use crate::data_dir::DataDir;
use crate::hooks::skeleton;
use crate::spec::Spec;

/// Where a protocol came from, and its directory.
#[derive(Debug, Clone)]
pub struct PreparedProtocol {
    pub dir: PathBuf,
    pub spec: Spec,
    /// `builtin`, `library` or `fetched`.
    pub source: &'static str,
    /// True when this call wrote a fresh hooks.py skeleton.
    pub skeleton_written: bool,
}

/// Finds or fetches `protocol_id` and checks it can run (spec gate, hooks present and not a
/// skeleton unless `allow_skeleton`).
pub async fn prepare_protocol(
    client: &RestClient,
    data_dir: &DataDir,
    protocol_id: &str,
    allow_skeleton: bool,
) -> Result<PreparedProtocol, SessionError> {
    let builtin = crate::protocols::BUILTINS
        .iter()
        .find(|b| b.spec().protocol_id() == protocol_id);
    let (dir, source) = if let Some(builtin) = builtin {
        let dir = crate::protocols::materialize(builtin, data_dir.root())
            .map_err(|e| SessionError::io(format!("cannot write built-in {}", builtin.alias), e))?;
        (dir, "builtin")
    } else if data_dir
        .protocol_dir(protocol_id)
        .join("spec.json")
        .is_file()
    {
        (data_dir.protocol_dir(protocol_id), "library")
    } else {
        let fetched = fetch_protocol(client, data_dir, protocol_id).await?;
        (fetched.dir, "fetched")
    };
    let spec = Spec::load_runnable(&dir.join("spec.json"))?;
    if spec.protocol_id() != protocol_id {
        return Err(SessionError::ProtocolMismatch {
            found: spec.protocol_id(),
            dir,
            expected: protocol_id.to_string(),
        });
    }
    let skeleton_written = skeleton::write_scaffold(&spec, &dir).map_err(|e| {
        SessionError::io(
            format!("cannot write hooks skeleton into {}", dir.display()),
            e,
        )
    })?;
    skeleton::ensure_implemented(&dir, allow_skeleton).map_err(|error| {
        SessionError::HooksNotReady(if skeleton_written {
            format!(
                "protocol fetched to {}; hooks.py is a freshly generated skeleton. {error}",
                dir.display()
            )
        } else {
            error
        })
    })?;
    Ok(PreparedProtocol {
        dir,
        spec,
        source,
        skeleton_written,
    })
}
