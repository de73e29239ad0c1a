//! Following session resources for a client: `resources/subscribe` (and a modern client's
//! `subscriptions/listen`) start watchers that look at a session's files every 150 ms and
//! send `notifications/resources/updated` when they change since the client was answered. At most 32 sessions are
//! watched per client; a watcher stops on unsubscribe, when its listen request ends, and
//! when the client goes away.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rmcp::ErrorData;
use tokio_util::sync::CancellationToken;

use super::resources::SessionUri;
use crate::control::view::{Stamp, stamps, view_files};
use crate::layout::SessionDir;

/// Most sessions one client watches at once.
pub const MAX_WATCHED: usize = 32;
/// How often a watcher looks at its sessions' files.
const POLL: Duration = Duration::from_millis(150);

/// What a session's files look like now, cheaply: the stamps of the files its snapshot is
/// read from, and of its events.
#[derive(Debug, PartialEq, Eq)]
struct Fingerprint(Vec<Stamp>);

impl Fingerprint {
    fn of(dir: &SessionDir) -> Fingerprint {
        let mut files = view_files(dir);
        files.push(dir.events_file());
        Fingerprint(stamps(&files))
    }
}

/// Sessions followed from the state they were in when the watcher was made.
pub struct Watcher {
    sessions: Vec<SessionUri>,
    seen: Vec<Fingerprint>,
}

impl Watcher {
    /// Follows `sessions` from their state now.
    pub fn new(sessions: Vec<SessionUri>) -> Watcher {
        let seen = sessions.iter().map(|s| Fingerprint::of(&s.dir)).collect();
        Watcher { sessions, seen }
    }

    /// Until `stop`, calls `changed` with a session's URI each time its files change; stops
    /// early when `changed` answers false (the client is gone).
    pub async fn run<F, Fut>(mut self, stop: CancellationToken, mut changed: F)
    where
        F: FnMut(String) -> Fut,
        Fut: Future<Output = bool>,
    {
        loop {
            tokio::select! {
                () = stop.cancelled() => return,
                () = tokio::time::sleep(POLL) => {}
            }
            for (session, last) in self.sessions.iter().zip(self.seen.iter_mut()) {
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
}

/// One client's watchers: each `resources/subscribe` URI with the token that stops it, how
/// many sessions its `subscriptions/listen` requests follow, and the state of the sessions
/// of a listen request when it was granted, for its watcher.
#[derive(Default)]
struct Watched {
    subscribed: HashMap<String, CancellationToken>,
    listening: usize,
    granted: HashMap<String, Fingerprint>,
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

    /// Keeps the state of a listen request's `sessions` as it is granted (before the client
    /// is told), for `watcher`.
    pub fn remember(&self, sessions: &[SessionUri]) {
        let mut watched = self.lock();
        // Only the latest grants matter; a request that never started leaves no heap behind.
        if watched.granted.len() + sessions.len() > MAX_WATCHED {
            watched.granted.clear();
        }
        for session in sessions {
            let seen = Fingerprint::of(&session.dir);
            watched.granted.insert(session.uri.clone(), seen);
        }
    }

    /// A watcher for a listen request's `sessions`, from the state `remember` kept of them
    /// (or their state now).
    pub fn watcher(&self, sessions: Vec<SessionUri>) -> Watcher {
        let mut watched = self.lock();
        let seen = sessions
            .iter()
            .map(|s| (watched.granted.remove(&s.uri)).unwrap_or_else(|| Fingerprint::of(&s.dir)))
            .collect();
        Watcher { sessions, seen }
    }

    /// Stops every watcher: the client went away.
    pub fn stop_all(&self) {
        self.root.cancel();
        self.lock().subscribed.clear();
    }
}
