//! Getting a protocol ready for a side that only knows its id (`join`, `host --protocol`): a
//! built-in with that id, the local library, or a fetch from the community server. Hooks come
//! with it: ours for a well-known contract, else the library's own, else a skeleton the user
//! must fill in first.

use std::path::PathBuf;

use super::SessionError;
use crate::client::{RestClient, fetch_protocol};
use crate::hooks::skeleton;
use crate::layout::DataDir;
use crate::protocols::well_known::{self, Installed, ProvidedHooks, provide_hooks};
use crate::spec::Spec;

/// Where a protocol (and its hooks) came from.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, strum::IntoStaticStr, strum::EnumString, strum::Display,
)]
#[strum(serialize_all = "kebab-case")]
pub enum ProtocolSource {
    /// A built-in: our spec and hooks.
    Builtin,
    /// A well-known contract: the spec from the library or the server, our hooks.
    WellKnown,
    /// The local library's spec and hooks.
    Library,
    /// A spec fetched now, with hooks the library already had (or a skeleton).
    Fetched,
}

impl ProtocolSource {
    /// `builtin`, `well-known`, `library` or `fetched` (session.json's `protocol_source`).
    pub fn as_str(self) -> &'static str {
        self.into()
    }
}

/// Where a protocol came from, and its directory.
#[derive(Debug, Clone)]
pub struct PreparedProtocol {
    pub dir: PathBuf,
    pub spec: Spec,
    pub source: ProtocolSource,
    /// True when this call wrote a fresh hooks.py skeleton.
    pub skeleton_written: bool,
}

/// What the side preparing a protocol would do in a room, should the contract be one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RoomPart {
    /// Nothing: this side plays one-to-one sessions only (`host --direct`), so a room
    /// contract is refused like any mode this build does not run.
    None,
    /// Follow it as a member (`join`): no hooks are needed.
    Member,
    /// Lead it (`host`): the hooks run here.
    Leader,
}

/// Finds or fetches `protocol_id` and checks it can run (spec gate, hooks present and not a
/// skeleton unless `allow_skeleton`); a room contract passes the gate for a side that takes
/// `room` part in it, and a member's needs no hooks.
pub async fn prepare_protocol(
    client: &RestClient,
    data_dir: &DataDir,
    protocol_id: &str,
    allow_skeleton: bool,
    room: RoomPart,
) -> Result<PreparedProtocol, SessionError> {
    let builtin = crate::protocols::BUILTINS
        .iter()
        .find(|b| b.spec().protocol_id() == protocol_id);
    let (dir, source) = if let Some(builtin) = builtin {
        let dir = crate::protocols::materialize(builtin, data_dir)
            .map_err(|e| SessionError::io(format!("cannot write built-in {}", builtin.alias), e))?;
        (dir, ProtocolSource::Builtin)
    } else if data_dir
        .protocol_dir(protocol_id)
        .join("spec.json")
        .is_file()
    {
        (data_dir.protocol_dir(protocol_id), ProtocolSource::Library)
    } else {
        let fetched = fetch_protocol(client, data_dir, protocol_id).await?;
        (fetched.dir, ProtocolSource::Fetched)
    };
    let spec_path = dir.join("spec.json");
    let spec = Spec::load_checked(&spec_path)?;
    let is_room = spec.capabilities().room;
    let member_only = is_room && room == RoomPart::Member;
    if !(is_room && room != RoomPart::None) {
        spec.ensure_runnable()
            .map_err(|error| crate::spec::SpecFileError {
                path: spec_path.clone(),
                error,
            })?;
    }
    if spec.protocol_id() != protocol_id {
        return Err(SessionError::ProtocolMismatch {
            found: spec.protocol_id(),
            dir,
            expected: protocol_id.to_string(),
        });
    }
    if member_only {
        // A member runs no hooks while it follows; ours for a well-known room are still put
        // in place (never over the user's own), ready for when this identity leads the room.
        let source = match well_known::by_id(protocol_id) {
            Some(entry) if source != ProtocolSource::Builtin => {
                match well_known::install(entry, &dir).map_err(|e| {
                    SessionError::io(format!("cannot write hooks into {}", dir.display()), e)
                })? {
                    Installed::KeptOwn => source,
                    _ => ProtocolSource::WellKnown,
                }
            }
            _ => source,
        };
        return Ok(PreparedProtocol {
            dir,
            spec,
            source,
            skeleton_written: false,
        });
    }
    let provided = if source == ProtocolSource::Builtin {
        ProvidedHooks::Existing
    } else {
        provide_hooks(&spec, &dir).map_err(|e| {
            SessionError::io(format!("cannot write hooks into {}", dir.display()), e)
        })?
    };
    let source = match provided {
        ProvidedHooks::WellKnown(_) => ProtocolSource::WellKnown,
        _ => source,
    };
    let skeleton_written = provided == ProvidedHooks::Skeleton;
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
