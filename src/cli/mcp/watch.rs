//! Following session resources for a client: `resources/subscribe` (and a modern client's
//! `subscriptions/listen`) start watchers that look at a session's files every 150 ms and
//! send `notifications/resources/updated` when they change. At most 32 sessions are
//! watched per client; a watcher stops on unsubscribe, when its listen request ends, and
//! when the client goes away.

use std::collections::HashMap;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

use rmcp::ErrorData;
use tokio_util::sync::CancellationToken;

use super::resources::SessionUri;
use crate::control::Target;
use crate::records::DecisionFiles;
use crate::session::{EVENTS_FILE, SESSION_FILE};

/// Most sessions one client watches at once.
pub const MAX_WATCHED: usize = 32;
/// How often a watcher looks at its sessions' files.
const POLL: Duration = Duration::from_millis(150);

/// What a session's files look like now, cheaply: the size and modification time of each
/// file its snapshot is read from.
#[derive(Debug, PartialEq, Eq)]
struct Fingerprint(Vec<Option<(u64, SystemTime)>>);

impl Fingerprint {
    fn of(dir: &Path) -> Fingerprint {
        let mut files = vec![
            dir.join(SESSION_FILE),
            dir.join(EVENTS_FILE),
            dir.join(crate::session::room::record::ROOM_FILE),
        ];
        if let Some(engine) = Target::at(dir).ok().and_then(|target| target.engine_dir()) {
            files.push(engine.join("snapshot.json"));
            files.push(DecisionFiles::of(&engine).state());
        }
        Fingerprint(
            files
                .iter()
                .map(|file| {
                    let meta = std::fs::symlink_metadata(file).ok()?;
                    Some((meta.len(), meta.modified().ok()?))
                })
                .collect(),
        )
    }
}

/// Follows `sessions` until `stop`, calling `changed` with a session's URI each time its
/// files change; stops early when `changed` answers false (the client is gone).
pub async fn follow<F, Fut>(sessions: Vec<SessionUri>, stop: CancellationToken, mut changed: F)
where
    F: FnMut(String) -> Fut,
    Fut: Future<Output = bool>,
{
    let mut seen: Vec<Fingerprint> = sessions.iter().map(|s| Fingerprint::of(&s.dir)).collect();
    loop {
        tokio::select! {
            () = stop.cancelled() => return,
            () = tokio::time::sleep(POLL) => {}
        }
        for (session, last) in sessions.iter().zip(seen.iter_mut()) {
            let now = Fingerprint::of(&session.dir);
            if now != *last {
                *last = now;
                if !changed(session.uri.clone()).await {
                    return;
                }
            }
        }
    }
}

/// One client's watchers: each `resources/subscribe` URI with the token that stops it, and
/// how many sessions its `subscriptions/listen` requests follow.
#[derive(Default)]
struct Watched {
    subscribed: HashMap<String, CancellationToken>,
    listening: usize,
}

impl Watched {
    fn count(&self) -> usize {
        self.subscribed.len() + self.listening
    }
}

/// The watchers of the one client a stdio server has; all stop with `root`.
#[derive(Clone, Default)]
pub struct Subscriptions {
    watched: Arc<Mutex<Watched>>,
    root: CancellationToken,
}

/// A place held for a listen request's sessions, given back when it drops.
pub struct Held {
    watched: Arc<Mutex<Watched>>,
    count: usize,
}

impl Drop for Held {
    fn drop(&mut self) {
        let mut watched = self.watched.lock().unwrap_or_else(|e| e.into_inner());
        watched.listening -= self.count;
    }
}

fn too_many() -> ErrorData {
    ErrorData::invalid_params(
        format!("at most {MAX_WATCHED} sessions are watched per client (unsubscribe first)"),
        None,
    )
}

impl Subscriptions {
    fn lock(&self) -> std::sync::MutexGuard<'_, Watched> {
        self.watched.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// How many more sessions this client may watch.
    pub fn room(&self) -> usize {
        MAX_WATCHED.saturating_sub(self.lock().count())
    }

    /// A token for a new watcher of `uri`, or None when it is already watched; refused past
    /// the bound.
    pub fn subscribe(&self, uri: &str) -> Result<Option<CancellationToken>, ErrorData> {
        let mut watched = self.lock();
        if watched.subscribed.contains_key(uri) {
            return Ok(None);
        }
        if watched.count() >= MAX_WATCHED {
            return Err(too_many());
        }
        let token = self.stopper();
        watched.subscribed.insert(uri.to_string(), token.clone());
        Ok(Some(token))
    }

    /// Stops the watcher of `uri`; false when there was none.
    pub fn unsubscribe(&self, uri: &str) -> bool {
        let token = self.lock().subscribed.remove(uri);
        token.map(|token| token.cancel()).is_some()
    }

    /// Holds places for `count` sessions of a listen request, refused past the bound.
    pub fn hold(&self, count: usize) -> Result<Held, ErrorData> {
        let mut watched = self.lock();
        if watched.count() + count > MAX_WATCHED {
            return Err(too_many());
        }
        watched.listening += count;
        Ok(Held {
            watched: self.watched.clone(),
            count,
        })
    }

    /// A token for a watcher that stops with the client.
    pub fn stopper(&self) -> CancellationToken {
        self.root.child_token()
    }

    /// Stops every watcher: the client went away.
    pub fn stop_all(&self) {
        self.root.cancel();
        self.lock().subscribed.clear();
    }
}
