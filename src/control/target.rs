//! Which session a `session` command acts on: the directory given with `--state-dir` (a
//! session dir or its engine dir), else the newest session under the data dir; and where its
//! engine keeps the decision files.

use std::path::{Path, PathBuf};

use crate::layout::{DataDir, EngineDir, SessionDir};
use crate::records::SessionRecord;
use crate::session::{list_sessions, read_record};

/// One session as the local commands see it.
#[derive(Debug, Clone)]
pub struct Target {
    /// The session dir (session.json, events.jsonl).
    pub dir: SessionDir,
    pub record: SessionRecord,
}

impl Target {
    /// `--state-dir` when given, else the newest session of the data dir.
    pub fn resolve(state_dir: Option<&Path>, data_dir: &DataDir) -> anyhow::Result<Target> {
        match state_dir {
            Some(dir) => Target::at(dir),
            None => {
                let (dir, record) =
                    list_sessions(data_dir).into_iter().next().ok_or_else(|| {
                        anyhow::anyhow!(
                            "no sessions in {} (pass --state-dir)",
                            data_dir.sessions_root().display()
                        )
                    })?;
                Ok(Target { dir, record })
            }
        }
    }

    /// A session dir, or an engine dir inside one.
    pub fn at(dir: &Path) -> anyhow::Result<Target> {
        if !dir.is_dir() {
            anyhow::bail!("no session directory at {}", dir.display());
        }
        let here = SessionDir::open(dir);
        let session = if here.holds_a_session() {
            here
        } else {
            dir.parent()
                .map(SessionDir::open)
                .filter(SessionDir::holds_a_session)
                .unwrap_or(here)
        };
        let record = read_record(&session);
        Ok(Target {
            dir: session,
            record,
        })
    }

    /// The engine dir (snapshot.json, decision/), once the engine has started.
    pub fn engine_dir(&self) -> Option<EngineDir> {
        if let Some(dir) = self.record.state_dir.clone().filter(|dir| dir.is_dir()) {
            return Some(EngineDir::open(dir));
        }
        let here = EngineDir::open(self.dir.root());
        if here.decision_dir().is_dir() || here.snapshot_file().is_file() {
            return Some(here);
        }
        let role = self.record.role?;
        let mut children: Vec<PathBuf> = std::fs::read_dir(self.dir.root())
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
        children.pop().map(EngineDir::open)
    }

    /// A name for the session in listings and URLs: its directory's name.
    pub fn name(&self) -> String {
        self.dir
            .root()
            .file_name()
            .map(|name| name.to_string_lossy().into_owned())
            .unwrap_or_default()
    }
}
