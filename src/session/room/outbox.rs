//! A member's one action in flight, kept across channels and, when it has a file, across
//! restarts. After a reconnect, a failover or a restart of the member's process on the same
//! session directory, the action goes out again with the same `client_seq` and
//! `action_id`, so a leader that applied it already answers `duplicate` instead of applying
//! it twice; and the queue of actions resumes just past the last one settled, so none is
//! sent twice and none is lost.

use std::path::PathBuf;
use std::time::Instant;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::layout::SessionDir;

/// The action in flight.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Pending {
    pub client_seq: u64,
    pub action_id: String,
    pub action: Map<String, Value>,
    /// Where the action's queue resumes once it is settled (`None`: a queue in memory).
    pub end_offset: Option<u64>,
    /// When it was last sent, on this process's clock.
    #[serde(skip)]
    pub sent_at: Option<Instant>,
}

/// What the file holds.
#[derive(Debug, Default, Serialize, Deserialize)]
struct Saved {
    version: u32,
    committed_offset: u64,
    pending: Option<Pending>,
}

/// The member's action in flight and how far its queue has been settled.
#[derive(Debug, Default)]
pub struct Outbox {
    pending: Option<Pending>,
    committed_offset: u64,
    file: Option<PathBuf>,
}

impl Outbox {
    /// The outbox of a session directory: what an earlier process there left in flight
    /// (an unreadable file counts as empty).
    pub fn durable(session: &SessionDir) -> Outbox {
        let file = session.room_outbox_file();
        let saved: Saved = std::fs::read(&file)
            .ok()
            .and_then(|bytes| serde_json::from_slice(&bytes).ok())
            .unwrap_or_default();
        Outbox {
            pending: saved.pending,
            committed_offset: saved.committed_offset,
            file: Some(file),
        }
    }

    /// Where the queue of actions resumes: past the action in flight, or past the last one
    /// settled.
    pub fn resume_offset(&self) -> u64 {
        self.pending
            .as_ref()
            .and_then(|p| p.end_offset)
            .unwrap_or(self.committed_offset)
    }

    pub fn pending(&self) -> Option<&Pending> {
        self.pending.as_ref()
    }

    pub fn pending_mut(&mut self) -> Option<&mut Pending> {
        self.pending.as_mut()
    }

    /// A new action in flight.
    pub fn start(&mut self, pending: Pending) {
        self.pending = Some(pending);
        self.save();
    }

    /// The action in flight is settled (answered, or given up).
    pub fn settle(&mut self) {
        if let Some(pending) = self.pending.take()
            && let Some(end) = pending.end_offset
        {
            self.committed_offset = end;
        }
        self.save();
    }

    /// The action in flight and its `client_seq`, handed to a member that takes the room
    /// over and applies it itself.
    pub fn take(&mut self) -> Option<(u64, Map<String, Value>)> {
        let taken = self.pending.clone().map(|p| (p.client_seq, p.action));
        self.settle();
        taken
    }

    /// A new channel: the action in flight goes out again at once.
    pub fn rewind(&mut self) {
        if let Some(pending) = &mut self.pending {
            pending.sent_at = None;
        }
    }

    fn save(&self) {
        let Some(file) = &self.file else { return };
        let saved = Saved {
            version: 1,
            committed_offset: self.committed_offset,
            pending: self.pending.clone(),
        };
        if let Ok(bytes) = serde_json::to_vec(&saved) {
            let _ = crate::layout::write_atomic(file, &bytes);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pending(end: u64) -> Pending {
        Pending {
            client_seq: 3,
            action_id: "ab".repeat(16),
            action: serde_json::json!({"kind": "send"})
                .as_object()
                .unwrap()
                .clone(),
            end_offset: Some(end),
            sent_at: Some(Instant::now()),
        }
    }

    #[test]
    fn an_action_in_flight_survives_a_restart_with_its_seq_and_id() {
        let temp = tempfile::tempdir().unwrap();
        let dir = SessionDir::open(temp.path());
        let mut outbox = Outbox::durable(&dir);
        outbox.start(pending(40));
        let reopened = Outbox::durable(&dir);
        let again = reopened.pending().unwrap();
        assert_eq!(
            (again.client_seq, again.action_id.as_str(), again.sent_at),
            (3, "ab".repeat(16).as_str(), None)
        );
        assert_eq!(reopened.resume_offset(), 40);
    }

    #[test]
    fn a_settled_action_moves_the_queue_on_and_is_not_sent_again() {
        let temp = tempfile::tempdir().unwrap();
        let dir = SessionDir::open(temp.path());
        let mut outbox = Outbox::durable(&dir);
        outbox.start(pending(40));
        outbox.settle();
        let reopened = Outbox::durable(&dir);
        assert!(reopened.pending().is_none());
        assert_eq!(reopened.resume_offset(), 40);
    }

    #[test]
    fn a_damaged_file_is_an_empty_outbox() {
        let temp = tempfile::tempdir().unwrap();
        let dir = SessionDir::open(temp.path());
        std::fs::write(dir.room_outbox_file(), b"{not json").unwrap();
        let outbox = Outbox::durable(&dir);
        assert!(outbox.pending().is_none());
        assert_eq!(outbox.resume_offset(), 0);
    }
}
