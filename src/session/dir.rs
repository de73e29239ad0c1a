//! A networked session's directory, `<data>/sessions/<role>-<ms>/`: `session.json` (status
//! and identifiers, rewritten atomically), `events.jsonl` (what happened, in order), the
//! daemon's logs, and the engine's own state dir inside.

use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use crate::engine::Outcome;
use crate::records::{EventLog, SessionRecord, SessionStatus, iso_now};
use crate::spec::Role;

pub const SESSION_FILE: &str = "session.json";
pub const EVENTS_FILE: &str = "events.jsonl";

/// One session directory.
#[derive(Debug, Clone)]
pub struct SessionDir {
    root: PathBuf,
    events: EventLog,
}

/// Claims a fresh `<base>/<role>-<unix ms>/` (suffixed `-N` when that name is taken), mode
/// 0700 inside a base that is 0700 too: `create_dir` is atomic, so two sides or processes
/// starting in the same millisecond never share a directory.
fn claim_role_dir(base: &Path, role: Role) -> std::io::Result<PathBuf> {
    claim_dir(base, role.as_str())
}

/// A new owner-only directory `<prefix>-<ms>` (with a suffix if taken) in `base`, which is
/// made private first.
pub fn claim_dir(base: &Path, prefix: &str) -> std::io::Result<PathBuf> {
    use std::os::unix::fs::DirBuilderExt;
    crate::layout::ensure_private_data_dir(base)?;
    let stamp = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default()
        .as_millis();
    for attempt in 0u32.. {
        let name = if attempt == 0 {
            format!("{prefix}-{stamp}")
        } else {
            format!("{prefix}-{stamp}-{attempt}")
        };
        let dir = base.join(name);
        match std::fs::DirBuilder::new()
            .mode(crate::layout::files::PRIVATE_DIR)
            .create(&dir)
        {
            Ok(()) => return Ok(dir),
            Err(error) if error.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(error) => return Err(error),
        }
    }
    unreachable!("some suffix is free")
}

impl SessionDir {
    /// Creates a fresh `<data>/sessions/<role>-<ms>/`.
    pub fn create(data_dir: &Path, role: Role) -> std::io::Result<SessionDir> {
        crate::layout::ensure_private_data_dir(data_dir)?;
        SessionDir::create_in(&data_dir.join("sessions"), role)
    }

    /// Creates a fresh `<base>/<role>-<ms>/` (self-play lays its sides out under any base).
    pub fn create_in(base: &Path, role: Role) -> std::io::Result<SessionDir> {
        claim_role_dir(base, role).map(SessionDir::open)
    }

    /// An existing session directory.
    pub fn open(root: impl Into<PathBuf>) -> SessionDir {
        let root = root.into();
        SessionDir {
            events: EventLog::to_file(root.join(EVENTS_FILE)),
            root,
        }
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Where the session's events are written (engine, heartbeat, renewal, handshake).
    pub fn events(&self) -> &EventLog {
        &self.events
    }

    /// A fresh engine state dir inside this session (`<role>-<ms>/`).
    pub fn engine_state_dir(&self, role: Role) -> std::io::Result<PathBuf> {
        claim_role_dir(&self.root, role)
    }

    /// `session.json` (empty when missing or unreadable).
    pub fn read(&self) -> SessionRecord {
        read_record(&self.root)
    }

    /// Records that this process starts playing `role`: `status: starting`, the start time
    /// and the pid, on top of `details`. A write failure is not fatal: the session can still
    /// be played.
    pub fn record_start(&self, role: Role, details: SessionRecord) {
        let _ = self.update(|record| {
            *record = SessionRecord {
                role: Some(role),
                status: Some(SessionStatus::Starting),
                started_at: Some(iso_now()),
                pid: Some(std::process::id()),
                ..details
            }
        });
    }

    /// Records how the engine ended: `closed` (completed), `aborted` (ended without
    /// completing) or `crashed` (an error stopped this side), with the winner and reason.
    pub fn record_outcome<E: std::fmt::Display>(&self, result: &Result<Outcome, E>) {
        let (status, reason) = match result {
            Ok(outcome) if outcome.completed => (SessionStatus::Closed, outcome.reason.clone()),
            Ok(outcome) => (SessionStatus::Aborted, outcome.reason.clone()),
            Err(error) => (SessionStatus::Crashed, Some(error.to_string())),
        };
        let winner = result.as_ref().ok().and_then(|o| o.winner);
        let _ = self.update(|record| {
            record.status = Some(status);
            record.completed = Some(status == SessionStatus::Closed);
            record.winner = winner;
            record.ended_at = Some(iso_now());
            record.end_reason = reason;
        });
    }

    /// Applies `change` to `session.json` and rewrites it atomically (keys this build does
    /// not know are kept).
    pub fn update(&self, change: impl FnOnce(&mut SessionRecord)) -> std::io::Result<()> {
        let mut record = self.read();
        change(&mut record);
        crate::layout::write_atomic(
            &self.root.join(SESSION_FILE),
            record.to_json_pretty().as_bytes(),
        )
    }
}

fn read_record(root: &Path) -> SessionRecord {
    std::fs::read_to_string(root.join(SESSION_FILE))
        .map(|text| SessionRecord::parse(&text))
        .unwrap_or_default()
}

/// When a session dir was claimed, from its name `<role>-<unix ms>[-N]`: (ms, N). Names
/// that do not follow it sort as the oldest.
fn claimed_at(dir: &Path) -> (u128, u32) {
    let name = dir
        .file_name()
        .map(|n| n.to_string_lossy())
        .unwrap_or_default();
    let mut parts = name.split('-').skip(1);
    let stamp = parts.next().and_then(|ms| ms.parse().ok()).unwrap_or(0);
    let suffix = parts.next().and_then(|n| n.parse().ok()).unwrap_or(0);
    (stamp, suffix)
}

/// Every session under a data dir, newest first (by the time in its name, whatever its
/// role), with its `session.json`.
pub fn list_sessions(data_dir: &Path) -> Vec<(PathBuf, SessionRecord)> {
    let Ok(entries) = std::fs::read_dir(data_dir.join("sessions")) else {
        return Vec::new();
    };
    let mut sessions: Vec<(PathBuf, SessionRecord)> = entries
        .flatten()
        .map(|entry| entry.path())
        .filter(|path| path.join(SESSION_FILE).is_file())
        .map(|path| {
            let record = read_record(&path);
            (path, record)
        })
        .collect();
    sessions.sort_by(|a, b| (claimed_at(&b.0), &b.0).cmp(&(claimed_at(&a.0), &a.0)));
    sessions
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn session_files_merge_and_list() {
        let data = tempfile::tempdir().unwrap();
        let dir = SessionDir::create(data.path(), Role::Host).unwrap();
        dir.record_start(
            Role::Host,
            SessionRecord {
                post_id: Some("p".into()),
                ..SessionRecord::default()
            },
        );
        dir.update(|record| record.status = Some(SessionStatus::Closed))
            .unwrap();
        let record = dir.read();
        assert_eq!(record.status, Some(SessionStatus::Closed));
        assert_eq!(record.role, Some(Role::Host));
        assert_eq!(record.post_id.as_deref(), Some("p"));
        assert_eq!(record.pid, Some(std::process::id()));
        let listed = list_sessions(data.path());
        assert_eq!(listed.len(), 1);
        assert_eq!(listed[0].1, record);
        assert!(
            listed[0]
                .0
                .file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with("host-")
        );
    }

    #[test]
    fn the_newest_session_comes_first_whatever_its_role() {
        let data = tempfile::tempdir().unwrap();
        let sessions = data.path().join("sessions");
        for name in ["host-1000", "guest-2000", "guest-2000-1", "guest-999"] {
            std::fs::create_dir_all(sessions.join(name)).unwrap();
            std::fs::write(sessions.join(name).join(SESSION_FILE), "{}").unwrap();
        }
        let names: Vec<String> = list_sessions(data.path())
            .into_iter()
            .map(|(dir, _)| dir.file_name().unwrap().to_string_lossy().into_owned())
            .collect();
        assert_eq!(
            names,
            ["guest-2000-1", "guest-2000", "host-1000", "guest-999"]
        );
    }
}
