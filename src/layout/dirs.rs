//! Where everything lives on disk, named once: a data dir holds the identity, the protocol
//! library, the server's default database and the sessions; a session dir holds what a
//! side records about its session; an engine dir holds what the engine and its hooks keep
//! while they play. Each is a type with one method per file it holds, so no other module
//! spells a file name.

use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use serde::Serialize;

use crate::spec::Role;

use super::files::{PRIVATE_DIR, ensure_private_data_dir};

/// A data directory (which one is decided by [`crate::config::resolve_data_dir`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(transparent)]
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

    /// Makes sure the data dir exists and only its owner can enter it.
    pub fn ensure_private(&self) -> std::io::Result<()> {
        ensure_private_data_dir(&self.root)
    }

    /// `key.json`, the agent's identity.
    pub fn key_file(&self) -> PathBuf {
        self.root.join("key.json")
    }

    /// `config.json`, the settings `aigenora config` keeps (the server URL).
    pub fn config_file(&self) -> PathBuf {
        self.root.join("config.json")
    }

    /// `skills.json`, every copy of the agent guide `skill install` placed.
    pub fn skills_file(&self) -> PathBuf {
        self.root.join("skills.json")
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

    /// `sessions/`, one directory per hosted or joined session.
    pub fn sessions_root(&self) -> PathBuf {
        self.root.join("sessions")
    }

    /// Claims a fresh `sessions/<role>-<ms>/`, the data dir and `sessions/` made private
    /// first.
    pub fn claim_session(&self, role: Role) -> std::io::Result<SessionDir> {
        self.ensure_private()?;
        SessionDir::claim_in(&self.sessions_root(), role)
    }

    /// Every session dir (one with a `session.json`), newest first by the time in its name,
    /// whatever its role.
    pub fn sessions(&self) -> Vec<SessionDir> {
        let Ok(entries) = std::fs::read_dir(self.sessions_root()) else {
            return Vec::new();
        };
        let mut sessions: Vec<SessionDir> = entries
            .flatten()
            .map(|entry| SessionDir::open(entry.path()))
            .filter(SessionDir::holds_a_session)
            .collect();
        sessions
            .sort_by(|a, b| (claimed_at(&b.root), &b.root).cmp(&(claimed_at(&a.root), &a.root)));
        sessions
    }
}

/// One session's directory, `<data>/sessions/<role>-<ms>/` (or any directory laid out the
/// same way, as `protocol test` lays out each side).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(transparent)]
pub struct SessionDir {
    root: PathBuf,
}

impl SessionDir {
    /// An existing session directory.
    pub fn open(root: impl Into<PathBuf>) -> SessionDir {
        SessionDir { root: root.into() }
    }

    /// Claims a fresh `<base>/<role>-<ms>/` (self-play lays its sides out under any base).
    pub fn claim_in(base: &Path, role: Role) -> std::io::Result<SessionDir> {
        claim_dir(base, role.as_str()).map(SessionDir::open)
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Whether a session was ever recorded here (its `session.json` exists).
    pub fn holds_a_session(&self) -> bool {
        self.session_file().is_file()
    }

    /// `session.json`: the side's status and identifiers, rewritten atomically.
    pub fn session_file(&self) -> PathBuf {
        self.root.join("session.json")
    }

    /// `events.jsonl`: what happened, in order.
    pub fn events_file(&self) -> PathBuf {
        self.root.join("events.jsonl")
    }

    /// `daemon.out.log`: a `--daemon` child's standard output.
    pub fn daemon_out_log(&self) -> PathBuf {
        self.root.join("daemon.out.log")
    }

    /// `daemon.err.log`: a `--daemon` child's standard error.
    pub fn daemon_err_log(&self) -> PathBuf {
        self.root.join("daemon.err.log")
    }

    /// `controller.token`: the browser controller's secret for this session.
    pub fn controller_token_file(&self) -> PathBuf {
        self.root.join("controller.token")
    }

    /// `room.json`: a room's newest verified step, as the member (or leader) sees it.
    pub fn room_file(&self) -> PathBuf {
        self.root.join("room.json")
    }

    /// `room-outbox.json`: a member's action in flight and its queue's settled offset.
    pub fn room_outbox_file(&self) -> PathBuf {
        self.root.join("room-outbox.json")
    }

    /// `room-actions.jsonl`: the room actions queued for this side to send, in order.
    pub fn room_actions_file(&self) -> PathBuf {
        self.root.join("room-actions.jsonl")
    }

    /// Claims a fresh engine dir `<role>-<ms>/` inside this session.
    pub fn claim_engine_dir(&self, role: Role) -> std::io::Result<EngineDir> {
        claim_dir(&self.root, role.as_str()).map(EngineDir::open)
    }

    /// `seat/`: the engine dir of a table seat of ours (its hooks' state, its decision
    /// windows), made private.
    pub fn seat_engine_dir(&self) -> std::io::Result<EngineDir> {
        let dir = EngineDir::open(self.root.join("seat"));
        super::files::create_private_dir(dir.root())?;
        Ok(dir)
    }

    /// `leader/`: the engine dir of a room's leader (its hooks' state), made private.
    pub fn leader_engine_dir(&self) -> std::io::Result<EngineDir> {
        let dir = EngineDir::open(self.root.join("leader"));
        super::files::create_private_dir(dir.root())?;
        Ok(dir)
    }
}

/// What the engine and the hooks of one side keep while they play: the snapshot, the
/// decision files, the strategy, a free-mode inbox, a mental-poker receipt.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(transparent)]
pub struct EngineDir {
    root: PathBuf,
}

impl EngineDir {
    pub fn open(root: impl Into<PathBuf>) -> EngineDir {
        EngineDir { root: root.into() }
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    /// `snapshot.json`: the phase, the hooks' state and the board a person is shown.
    pub fn snapshot_file(&self) -> PathBuf {
        self.root.join("snapshot.json")
    }

    /// `decision/`: the decision windows' files (see `records::DecisionFiles`).
    pub fn decision_dir(&self) -> PathBuf {
        self.root.join("decision")
    }

    /// `strategy.json`: what the hooks read as the side's strategy.
    pub fn strategy_file(&self) -> PathBuf {
        self.root.join("strategy.json")
    }

    /// `strategy_events.jsonl`: every change `session strategy` made, with before and after.
    pub fn strategy_events_file(&self) -> PathBuf {
        self.root.join("strategy_events.jsonl")
    }

    /// `inbox.jsonl`: lines another program appends for a free-mode side to send.
    pub fn inbox_file(&self) -> PathBuf {
        self.root.join("inbox.jsonl")
    }

    /// `transcript_receipt.json`: a mental-poker side's record of the game (public values
    /// only; the reference writes the same file).
    pub fn receipt_file(&self) -> PathBuf {
        self.root.join("transcript_receipt.json")
    }
}

/// A new owner-only directory `<prefix>-<ms>` in `base` (suffixed `-N` when that name is
/// taken), `base` made private first. `create_dir` is atomic, so two sides or processes
/// starting in the same millisecond never share a directory.
pub fn claim_dir(base: &Path, prefix: &str) -> std::io::Result<PathBuf> {
    use std::os::unix::fs::DirBuilderExt;
    ensure_private_data_dir(base)?;
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
        match std::fs::DirBuilder::new().mode(PRIVATE_DIR).create(&dir) {
            Ok(()) => return Ok(dir),
            Err(error) if error.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(error) => return Err(error),
        }
    }
    unreachable!("some suffix is free")
}

/// When a dir was claimed, from its name `<prefix>-<unix ms>[-N]`: (ms, N). Names that do
/// not follow it sort as the oldest.
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

    #[test]
    fn the_newest_session_comes_first_whatever_its_role() {
        let data = tempfile::tempdir().unwrap();
        let data_dir = DataDir::new(data.path());
        let sessions = data_dir.sessions_root();
        for name in [
            "host-1000",
            "guest-2000",
            "guest-2000-1",
            "guest-999",
            "host-5",
        ] {
            let session = SessionDir::open(sessions.join(name));
            std::fs::create_dir_all(session.root()).unwrap();
            if name != "host-5" {
                std::fs::write(session.session_file(), "{}").unwrap();
            }
        }
        let names: Vec<String> = data_dir
            .sessions()
            .into_iter()
            .map(|dir| {
                dir.root()
                    .file_name()
                    .unwrap()
                    .to_string_lossy()
                    .into_owned()
            })
            .collect();
        assert_eq!(
            names,
            ["guest-2000-1", "guest-2000", "host-1000", "guest-999"]
        );
    }

    #[test]
    fn claimed_dirs_are_private_and_never_shared() {
        use std::os::unix::fs::PermissionsExt;
        let data = tempfile::tempdir().unwrap();
        let data_dir = DataDir::new(data.path().join("d"));
        let first = data_dir.claim_session(Role::Host).unwrap();
        let second = data_dir.claim_session(Role::Host).unwrap();
        assert_ne!(first, second);
        let engine = first.claim_engine_dir(Role::Host).unwrap();
        assert!(engine.root().starts_with(first.root()));
        for dir in [data_dir.root(), first.root(), engine.root()] {
            let mode = std::fs::metadata(dir).unwrap().permissions().mode() & 0o777;
            assert_eq!(mode, 0o700, "{}", dir.display());
        }
    }
}
