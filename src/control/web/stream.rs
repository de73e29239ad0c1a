//! The push stream of one session (server-sent events): `state` (the whole session view)
//! on connect and whenever the snapshot, the decision window or the status changes, and
//! `event` for every events.jsonl line, with the line number as its id so a reconnecting page
//! resumes where it left off (Last-Event-ID) instead of replaying everything. The files are
//! looked at every 10 ms; a session that ended gets one last `state` and the stream ends.

use std::collections::VecDeque;
use std::convert::Infallible;
use std::io::{Read, Seek, SeekFrom};
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, SystemTime};

use axum::response::sse::Event;
use futures_util::Stream;

use crate::control::Target;
use crate::control::view::session_view;
use crate::records::DecisionFiles;
use crate::session::{EVENTS_FILE, SESSION_FILE};

const POLL: Duration = Duration::from_millis(10);
/// Events sent to a fresh page (no Last-Event-ID): the latest ones only.
const HISTORY: usize = 200;

/// A file's change stamp: its length and modification time.
type Stamp = Option<(u64, SystemTime)>;

fn stamp(path: &std::path::Path) -> Stamp {
    let meta = std::fs::metadata(path).ok()?;
    Some((meta.len(), meta.modified().ok()?))
}

/// Streams open now, in this process.
static OPEN_STREAMS: AtomicUsize = AtomicUsize::new(0);

/// Counts a stream as open for as long as it lives.
struct Open;

impl Open {
    fn new() -> Open {
        OPEN_STREAMS.fetch_add(1, Ordering::SeqCst);
        Open
    }
}

impl Drop for Open {
    fn drop(&mut self) {
        OPEN_STREAMS.fetch_sub(1, Ordering::SeqCst);
    }
}

/// Waits (at most `limit`) until every open stream has delivered its session's end and
/// closed, so a page watching a session whose process is about to exit sees how it ended.
pub fn linger(limit: Duration) {
    let started = std::time::Instant::now();
    while OPEN_STREAMS.load(Ordering::SeqCst) > 0 && started.elapsed() < limit {
        std::thread::sleep(Duration::from_millis(10));
    }
}

struct Follow {
    _open: Open,
    target: Target,
    events: PathBuf,
    offset: u64,
    /// Lines of events.jsonl read so far (event ids are 1-based line numbers).
    line: u64,
    /// Resume after this line.
    skip_to: Option<u64>,
    stamps: Vec<Stamp>,
    queue: VecDeque<Event>,
    first: bool,
    done: bool,
}

impl Follow {
    fn watched(&self) -> Vec<PathBuf> {
        let mut paths = vec![self.target.root.join(SESSION_FILE)];
        if let Some(engine) = Target::at(&self.target.root)
            .ok()
            .and_then(|t| t.engine_dir())
        {
            paths.push(engine.join("snapshot.json"));
            paths.push(DecisionFiles::of(&engine).state());
        }
        paths
    }

    /// Queues what changed since the last look.
    fn look(&mut self) {
        let stamps: Vec<Stamp> = self.watched().iter().map(|p| stamp(p)).collect();
        let mut fresh = Vec::new();
        self.read_events(&mut fresh);
        if self.first && self.skip_to.is_none() {
            fresh.drain(..fresh.len().saturating_sub(HISTORY));
        }
        // Events first: a page that sees the final state may stop listening.
        self.queue.extend(fresh);
        if stamps != self.stamps || self.first {
            self.stamps = stamps;
            let view = session_view(&self.target);
            let over = view["status"]
                .as_str()
                .is_some_and(|s| matches!(s, "closed" | "aborted" | "crashed" | "failed"));
            self.queue
                .push_back(Event::default().event("state").data(view.to_string()));
            self.done = over;
        }
        self.first = false;
    }

    fn read_events(&mut self, into: &mut Vec<Event>) {
        let Ok(mut file) = std::fs::File::open(&self.events) else {
            return;
        };
        if file.metadata().map(|m| m.len()).unwrap_or(0) <= self.offset {
            return;
        }
        let mut text = String::new();
        if file.seek(SeekFrom::Start(self.offset)).is_err()
            || file.read_to_string(&mut text).is_err()
        {
            return;
        }
        let complete = text.rfind('\n').map_or(0, |end| end + 1);
        self.offset += complete as u64;
        for line in text[..complete].lines() {
            self.line += 1;
            if self.skip_to.is_some_and(|after| self.line <= after) {
                continue;
            }
            into.push(
                Event::default()
                    .event("event")
                    .id(self.line.to_string())
                    // A stray carriage return (a foreign writer) cannot travel in SSE.
                    .data(line.replace('\r', "")),
            );
        }
    }
}

/// The stream of one session, resuming after event `last_id` when given.
pub fn follow(
    target: Target,
    last_id: Option<u64>,
) -> impl Stream<Item = Result<Event, Infallible>> {
    let state = Follow {
        _open: Open::new(),
        events: target.root.join(EVENTS_FILE),
        target,
        offset: 0,
        line: 0,
        skip_to: last_id,
        stamps: Vec::new(),
        queue: VecDeque::new(),
        first: true,
        done: false,
    };
    futures_util::stream::unfold(state, |mut state| async move {
        loop {
            if let Some(event) = state.queue.pop_front() {
                return Some((Ok(event), state));
            }
            if state.done {
                return None;
            }
            state.look();
            if state.queue.is_empty() {
                tokio::time::sleep(POLL).await;
            }
        }
    })
}
