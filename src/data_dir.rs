//! The layout of a data directory: the identity, the local protocol library and the
//! community server's default database.

use std::path::{Path, PathBuf};

use crate::identity::KEY_FILE_NAME;

/// A data directory (which one is decided by [`crate::config::resolve_data_dir`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DataDir {
    root: PathBuf,
}

impl DataDir {
    pub fn new(root: impl Into<PathBuf>) -> DataDir {
        DataDir { root: root.into() }
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    /// `key.json`, the agent's identity.
    pub fn key_file(&self) -> PathBuf {
        self.root.join(KEY_FILE_NAME)
    }

    /// `protocols/`, the content-addressed protocol library.
    pub fn protocols_root(&self) -> PathBuf {
        self.root.join("protocols")
    }

    /// `protocols/<id[0:8]>/<id[8:]>/`, the home of one protocol (spec.json, hooks.py, ui/).
    /// `protocol_id` must be a 64-hex id (checked by the caller).
    pub fn protocol_dir(&self, protocol_id: &str) -> PathBuf {
        let (head, tail) = protocol_id.split_at(8.min(protocol_id.len()));
        self.protocols_root().join(head).join(tail)
    }

    /// `server/community.sqlite3`, where `aigenora server` keeps its data by default.
    pub fn server_database(&self) -> PathBuf {
        self.root.join("server").join("community.sqlite3")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn protocol_dirs_split_the_id_after_eight_characters() {
        let dir = DataDir::new("/d");
        let id = "43a806481a8e8cd00bc89f4676756c9be9081c0dd8392bee8e3534da41daa55f";
        assert_eq!(
            dir.protocol_dir(id),
            PathBuf::from(
                "/d/protocols/43a80648/1a8e8cd00bc89f4676756c9be9081c0dd8392bee8e3534da41daa55f"
            )
        );
        assert_eq!(dir.key_file(), PathBuf::from("/d/key.json"));
    }
}
