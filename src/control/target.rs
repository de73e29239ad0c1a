//! Which session a `session` command acts on: the directory given with `--state-dir` (a
//! session dir or its engine dir), else the newest session under the data dir; and where its
//! engine keeps the decision files.

use std::path::{Path, PathBuf};

use crate::records::SessionRecord;
use crate::session::{SESSION_FILE, SessionDir, list_sessions};

/// One session as the local commands see it.
#[derive(Debug, Clone)]
pub struct Target {
    /// The session dir (session.json, events.jsonl).
    pub root: PathBuf,
    pub record: SessionRecord,
}

impl Target {
    /// `--state-dir` when given, else the newest session of the data dir.
    pub fn resolve(state_dir: Option<&Path>, data_dir: &Path) -> anyhow::Result<Target> {
        match state_dir {
            Some(dir) => Target::at(dir),
            None => {
                let (root, record) =
                    list_sessions(data_dir).into_iter().next().ok_or_else(|| {
                        anyhow::anyhow!(
                            "no sessions in {} (pass --state-dir)",
                            data_dir.join("sessions").display()
                        )
                    })?;
                Ok(Target { root, record })
            }
        }
    }

    /// A session dir, or an engine dir inside one.
    pub fn at(dir: &Path) -> anyhow::Result<Target> {
        if !dir.is_dir() {
            anyhow::bail!("no session directory at {}", dir.display());
        }
        let root = if dir.join(SESSION_FILE).is_file() {
            dir.to_path_buf()
        } else {
            match dir
                .parent()
                .filter(|parent| parent.join(SESSION_FILE).is_file())
            {
                Some(parent) => parent.to_path_buf(),
                None => dir.to_path_buf(),
            }
        };
        let record = SessionDir::open(&root).read();
        Ok(Target { root, record })
    }

    /// The engine's state dir (snapshot.json, decision/), once the engine has started.
    pub fn engine_dir(&self) -> Option<PathBuf> {
        if let Some(dir) = self.record.state_dir.clone().filter(|dir| dir.is_dir()) {
            return Some(dir);
        }
        if self.root.join("decision").is_dir() || self.root.join("snapshot.json").is_file() {
            return Some(self.root.clone());
        }
        let role = self.record.role?;
        let mut children: Vec<PathBuf> = std::fs::read_dir(&self.root)
            .ok()?
            .flatten()
            .map(|entry| entry.path())
            .filter(|path| {
                path.is_dir()
                    && path
                        .file_name()
                        .is_some_and(|name| name.to_string_lossy().starts_with(role.as_str()))
            })
            .collect();
        children.sort();
        children.pop()
    }

    /// A name for the session in listings and URLs: its directory's name.
    pub fn name(&self) -> String {
        self.root
            .file_name()
            .map(|name| name.to_string_lossy().into_owned())
            .unwrap_or_default()
    }
}
