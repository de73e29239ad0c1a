//! What a networked side records about its session, in its session dir
//! ([`crate::layout::SessionDir`]): `session.json` (status and identifiers, rewritten
//! atomically) and `events.jsonl` (what happened, in order).

use std::path::Path;

use crate::engine::Outcome;
use crate::layout::{DataDir, EngineDir, SessionDir};
use crate::records::{EventLog, SessionRecord, SessionStatus, iso_now};
use crate::spec::Role;

/// A session dir and the event log every part of the side appends to.
#[derive(Debug, Clone)]
pub struct SessionRecorder {
    dir: SessionDir,
    events: EventLog,
}

impl SessionRecorder {
    /// Claims a fresh `<data>/sessions/<role>-<ms>/`.
    pub fn create(data_dir: &DataDir, role: Role) -> std::io::Result<SessionRecorder> {
        data_dir.claim_session(role).map(SessionRecorder::open)
    }

    /// Claims a fresh `<base>/<role>-<ms>/` (self-play lays its sides out under any base).
    pub fn create_in(base: &Path, role: Role) -> std::io::Result<SessionRecorder> {
        SessionDir::claim_in(base, role).map(SessionRecorder::open)
    }

    /// Records into an existing session directory.
    pub fn open(dir: SessionDir) -> SessionRecorder {
        SessionRecorder {
            events: EventLog::to_file(dir.events_file()),
            dir,
        }
    }

    /// The session directory, with its files.
    pub fn dir(&self) -> &SessionDir {
        &self.dir
    }

    pub fn root(&self) -> &Path {
        self.dir.root()
    }

    /// Where the session's events are written (engine, heartbeat, renewal, handshake).
    pub fn events(&self) -> &EventLog {
        &self.events
    }

    /// A fresh engine dir inside this session (`<role>-<ms>/`).
    pub fn claim_engine_dir(&self, role: Role) -> std::io::Result<EngineDir> {
        self.dir.claim_engine_dir(role)
    }

    /// `session.json` (empty when missing or unreadable).
    pub fn read(&self) -> SessionRecord {
        read_record(&self.dir)
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
        crate::layout::write_atomic(&self.dir.session_file(), record.to_json_pretty().as_bytes())
    }
}

/// `session.json` of `dir` (empty when missing or unreadable).
pub fn read_record(dir: &SessionDir) -> SessionRecord {
    std::fs::read_to_string(dir.session_file())
        .map(|text| SessionRecord::parse(&text))
        .unwrap_or_default()
}

/// Every session under a data dir, newest first (by the time in its name, whatever its
/// role), with its `session.json`.
pub fn list_sessions(data_dir: &DataDir) -> Vec<(SessionDir, SessionRecord)> {
    data_dir
        .sessions()
        .into_iter()
        .map(|dir| {
            let record = read_record(&dir);
            (dir, record)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn session_files_merge_and_list() {
        let data = tempfile::tempdir().unwrap();
        let data_dir = DataDir::new(data.path());
        let dir = SessionRecorder::create(&data_dir, Role::Host).unwrap();
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
        let listed = list_sessions(&data_dir);
        assert_eq!(listed.len(), 1);
        assert_eq!(listed[0].1, record);
        assert_eq!(&listed[0].0, dir.dir());
        assert!(
            dir.root()
                .file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with("host-")
        );
    }
}
