//! The push stream of one session (server-sent events): `state` (the whole session view)
//! on connect and whenever the snapshot, the decision window, the room or the status
//! changes, and
//! `event` for every events.jsonl line, with the byte offset of the line's end as its id so a
//! reconnecting page resumes where it left off (Last-Event-ID) instead of replaying
//! everything. A fresh page gets only the recent events (a bounded tail of the file, however
//! long the session's log has grown). The files are looked at every 10 ms; a session that
//! ended gets one last `state`, and its stream stays open until the page, having it, closes
//! the stream (at most [`END_HOLD`]): that close is how [`linger`] knows the end arrived
//! before the process exits. At most [`MAX_STREAMS`] are open at once.

use std::collections::VecDeque;
use std::convert::Infallible;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use axum::response::sse::Event;
use futures_util::Stream;

use crate::control::Target;
use crate::control::view::{Stamp, session_view, stamps, view_files};
use crate::layout::jsonl::{Tail, TailLine, recent_start};

const POLL: Duration = Duration::from_millis(10);
/// Events sent to a fresh page (no Last-Event-ID): the latest ones only, found within the
/// last [`HISTORY_BYTES`] of the file.
const HISTORY: usize = 200;
const HISTORY_BYTES: u64 = 256 * 1024;
/// Longest events.jsonl line a page is sent (longer ones are left out).
const MAX_EVENT_LINE: usize = 256 * 1024;
/// Streams one controller serves at once (a page needs one).
pub const MAX_STREAMS: usize = 16;
/// How long a stream that delivered its session's end waits for the page to close it.
const END_HOLD: Duration = Duration::from_secs(5);
/// How often a stream waiting for its page to close writes a comment: a write to a page that
/// closed fails, which ends the stream.
const END_PROBE: Duration = Duration::from_millis(20);

/// Streams open now, in this process.
static OPEN_STREAMS: AtomicUsize = AtomicUsize::new(0);

/// Counts a stream as open for as long as it lives.
pub struct Open;

impl Open {
    /// A place for one more stream, unless [`MAX_STREAMS`] are open.
    pub fn try_new() -> Option<Open> {
        OPEN_STREAMS
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |open| {
                (open < MAX_STREAMS).then_some(open + 1)
            })
            .ok()
            .map(|_| Open)
    }
}

impl Drop for Open {
    fn drop(&mut self) {
        OPEN_STREAMS.fetch_sub(1, Ordering::SeqCst);
    }
}

/// Waits (at most `limit`) until every open stream has delivered its session's end and its
/// page has closed it, so a page watching a session whose process is about to exit sees how
/// it ended (a stream that ended on its own side could still hold the last bytes unsent).
pub fn linger(limit: Duration) {
    let started = Instant::now();
    while OPEN_STREAMS.load(Ordering::SeqCst) > 0 && started.elapsed() < limit {
        std::thread::sleep(Duration::from_millis(10));
    }
}

struct Follow {
    _open: Open,
    target: Target,
    events: Tail,
    /// A fresh page: only the last [`HISTORY`] events of the first look are sent.
    fresh: bool,
    stamps: Vec<Stamp>,
    queue: VecDeque<Event>,
    first: bool,
    /// When the session's end was read, once it was: nothing is looked at after it.
    ended: Option<Instant>,
}

impl Follow {
    /// Queues what changed since the last look.
    fn look(&mut self) {
        let stamps = stamps(&view_files(&self.target.dir));
        let mut fresh: Vec<Event> = self
            .events
            .read()
            .into_iter()
            .filter_map(|line| match line {
                TailLine::Text { text, end } => Some(
                    Event::default()
                        .event("event")
                        .id(end.to_string())
                        .data(text.replace('\r', "")),
                ),
                TailLine::Skipped { .. } => None,
            })
            .collect();
        if self.fresh {
            fresh.drain(..fresh.len().saturating_sub(HISTORY));
            self.fresh = false;
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
            if over {
                self.ended = Some(Instant::now());
            }
        }
        self.first = false;
    }
}

/// The stream of one session (holding `open`, its place among the open streams), resuming
/// after the event whose id was `last_id` when given.
pub fn follow(
    open: Open,
    target: Target,
    last_id: Option<u64>,
) -> impl Stream<Item = Result<Event, Infallible>> {
    let path = target.dir.events_file();
    let length = std::fs::metadata(&path).map_or(0, |m| m.len());
    let (offset, fresh) = match last_id.filter(|&id| id <= length) {
        Some(id) => (id, false),
        None => (recent_start(&path, HISTORY_BYTES), true),
    };
    let state = Follow {
        _open: open,
        events: Tail::from_offset(path, MAX_EVENT_LINE, offset),
        fresh,
        target,
        stamps: Vec::new(),
        queue: VecDeque::new(),
        first: true,
        ended: None,
    };
    futures_util::stream::unfold(state, |mut state| async move {
        loop {
            if let Some(event) = state.queue.pop_front() {
                return Some((Ok(event), state));
            }
            if let Some(ended) = state.ended {
                if ended.elapsed() >= END_HOLD {
                    return None;
                }
                tokio::time::sleep(END_PROBE).await;
                return Some((Ok(Event::default().comment("")), state));
            }
            state.look();
            if state.queue.is_empty() {
                tokio::time::sleep(POLL).await;
            }
        }
    })
}
