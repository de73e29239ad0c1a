//! [`IrohChannel`]: the blocking [`Channel`] the engine thread uses over an iroh session.
//!
//! Tokio tasks on the caller's runtime do the I/O: a reader (lines → `_sys` layer → a bounded
//! queue of business frames), a writer (the only task touching the send stream) and, once
//! started, the heartbeat pinger and watchdog. The engine side waits on those queues from a
//! plain thread: by driving the session's runtime itself ([`IrohChannel::driven`], see
//! [`SessionDriver`]) or, beside a multi-threaded runtime ([`IrohChannel::new`]), by
//! sleeping while the workers run the tasks. It must not be called from inside an async task.
//!
//! Ending cleanly (the reference can lose its last frame here): [`Channel::close`] runs the
//! sequence in [`super::shutdown`], which never cuts off a peer that is still consuming
//! (bounded by the close grace). `recv` always hands out every frame already received before
//! it reports [`ChannelError::Closed`]; from then on `send` reports it too, without waiting
//! for the peer's connection close to arrive (it follows the end of its stream by a round
//! trip or more).

use std::future::Future;
use std::sync::Arc;
use std::time::{Duration, Instant};

use iroh::endpoint::{Connection, ConnectionError, SendStream, VarInt, WriteError};
use serde_json::Value;
use tokio::runtime::Handle;
use tokio::sync::{Notify, Semaphore, mpsc, oneshot, watch};
use tokio::task::AbortHandle;

use super::drive::{Attached, SessionDriver};
use super::endpoint::PeerLink;
use super::heartbeat::{
    EventSink, HeartbeatConfig, Received, RttStats, SysLayer, run_pinger, run_watchdog,
};
use super::lines::{Line, LineReader, encode_line, parse_text};
use super::path::PathWatch;
use super::shutdown::{CLOSE_DONE, PeerProgress, close_budget, close_cleanly, watch_peer_closing};
use super::{Bell, BellSlot, Channel, ChannelError, MAX_FRAME_BYTES};

/// Business frames received but not yet taken by the engine (the reference's queue size).
/// When full, reading pauses and QUIC flow control holds the peer back.
const RECEIVE_QUEUE_FRAMES: usize = 128;
/// Bytes of long (not yet parsed) lines waiting for the engine: with the frame count, this
/// bounds what a peer that sends faster than the engine takes can make us hold (short
/// lines are at most `RECEIVE_QUEUE_FRAMES` × 4 KiB before parsing).
const RECEIVE_QUEUE_BYTES: usize = 16 * 1024 * 1024;
/// Bytes of frames the writer may still hold before a new one waits (`send`) or is refused
/// (`post`): a peer that stops reading is found out here instead of growing our memory. A
/// frame into an empty backlog always goes, so one frame of any size fits.
const POST_BACKLOG_BYTES: usize = 8 * 1024 * 1024;
/// Posted frames the writer may still hold, whatever their size.
const POST_BACKLOG_FRAMES: usize = 1024;
/// Frames `send` leaves with the writer without waiting for them to be written: the engine
/// thread goes on at once (no hand-over back from the writer per frame), and a peer that
/// stops reading makes it wait here, as a blocked write would, once this many pile up.
const SEND_WINDOW_FRAMES: usize = 64;
/// How often a `send` waiting for room in the backlog checks that the writer still runs.
const WRITER_CHECK: Duration = Duration::from_millis(200);
/// How long `close` waits for the peer.
const CLOSE_GRACE: Duration = Duration::from_secs(3);
/// Extra time the engine thread allows the writer beyond its close budget.
const CLOSE_SLACK: Duration = Duration::from_secs(1);
/// Application close code when the channel is dropped without `close`.
const CLOSE_ABANDONED: u32 = 2;

type Reply = oneshot::Sender<Result<(), ChannelError>>;

/// The answer to the peer's latest ping, waiting for the writer: at most one is ever
/// pending (a newer ping replaces it), so a peer that pings without reading our answers
/// cannot make them pile up.
type PendingPong = Arc<std::sync::Mutex<Option<Vec<u8>>>>;

/// Work for the writer task.
enum Outgoing {
    /// One encoded `_sys` line (a ping), outside the [`Backlog`].
    Sys(Vec<u8>),
    /// One encoded business line (`send` or `post`); its bytes leave the [`Backlog`] once
    /// written.
    Queued(Vec<u8>),
    /// Write the [`PendingPong`], if it is still there.
    Pong,
    /// Finish the stream and end the connection cleanly.
    Finish { grace: Duration, done: Reply },
}

/// What was sent or posted and not written yet (frames, bytes), and why writing a frame
/// failed, if it did (nobody waits for each frame's answer, so the next send reports it).
#[derive(Default)]
struct Backlog {
    queued: std::sync::Mutex<(usize, usize)>,
    /// Signalled whenever the writer has written a frame.
    drained: Notify,
    failed: std::sync::Mutex<Option<ChannelError>>,
}

/// Whether a frame waits for room in the backlog (`send`) or is refused (`post`).
#[derive(Clone, Copy, PartialEq)]
enum WhenFull {
    Wait,
    Refuse,
}

impl Backlog {
    fn lock(&self) -> std::sync::MutexGuard<'_, (usize, usize)> {
        self.queued
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn failure(&self) -> Option<ChannelError> {
        self.failed
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }

    fn written(&self, bytes: usize, result: Result<(), ChannelError>) {
        let mut queued = self.lock();
        queued.0 = queued.0.saturating_sub(1);
        queued.1 = queued.1.saturating_sub(bytes);
        if let Err(error) = result {
            *self
                .failed
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner) = Some(error);
        }
        drop(queued);
        self.drained.notify_waiters();
    }
}

/// How the thread using a channel waits for its tasks.
enum Waiter {
    /// The tasks run on a multi-threaded runtime's workers; the thread only sleeps.
    Threaded(Handle),
    /// The thread drives the session's runtime itself while it waits, attached as its engine
    /// for as long as the channel lives. What it sends leaves when it next waits, together
    /// with whatever it sent since (one datagram for a burst of frames), or, when it goes to
    /// a hook or a person instead, at the main thread's next look at the runtime (see
    /// [`super::drive`]).
    Driven(Attached),
}

impl Waiter {
    fn handle(&self) -> &Handle {
        match self {
            Waiter::Threaded(handle) => handle,
            Waiter::Driven(engine) => engine.handle(),
        }
    }

    fn block_on<F: Future>(&self, future: F) -> F::Output {
        match self {
            Waiter::Threaded(handle) => handle.block_on(future),
            Waiter::Driven(engine) => engine.block_on(future),
        }
    }
}

/// A [`Channel`] over one iroh bidirectional stream.
pub struct IrohChannel {
    waiter: Waiter,
    connection: Connection,
    outgoing: mpsc::UnboundedSender<Outgoing>,
    incoming: mpsc::UnboundedReceiver<Line>,
    credits: Arc<Semaphore>,
    byte_credits: Arc<Semaphore>,
    sys: Arc<SysLayer>,
    backlog: Arc<Backlog>,
    /// The bell the reader rings on each arrival ([`Channel::ring_on_arrival`]).
    arrival_bell: BellSlot,
    io_tasks: Vec<AbortHandle>,
    heartbeat_tasks: Vec<AbortHandle>,
    recv_timeout: Option<Duration>,
    ended: Option<ChannelError>,
    closed_locally: bool,
    /// Keeps recording the connection's path while the channel lives.
    _path: Option<PathWatch>,
}

impl IrohChannel {
    /// Starts the reader and writer for `link` on `runtime`. `_sys` frames are filtered and
    /// pings answered from now on; our own pings only start with
    /// [`start_heartbeat`](Self::start_heartbeat).
    pub fn new(link: PeerLink, runtime: &Handle) -> IrohChannel {
        IrohChannel::with_frame_limit(link, runtime, MAX_FRAME_BYTES)
    }

    /// [`new`](Self::new) for the engine thread of a session run by `driver`: the calling
    /// thread becomes the session's engine thread until the channel is dropped, and drives
    /// the session's runtime while it waits (see [`SessionDriver`]).
    pub fn driven(link: PeerLink, driver: &SessionDriver) -> IrohChannel {
        IrohChannel::start(link, Waiter::Driven(driver.attach()), MAX_FRAME_BYTES)
    }

    /// [`new`](Self::new), accepting lines of at most `max_frame_bytes` from the peer (a
    /// longer one ends the channel as malformed): for a peer whose frames are known to be
    /// small, such as a room's member seen from its leader.
    pub fn with_frame_limit(
        link: PeerLink,
        runtime: &Handle,
        max_frame_bytes: usize,
    ) -> IrohChannel {
        IrohChannel::start(link, Waiter::Threaded(runtime.clone()), max_frame_bytes)
    }

    fn start(link: PeerLink, waiter: Waiter, max_frame_bytes: usize) -> IrohChannel {
        let runtime = waiter.handle().clone();
        let PeerLink {
            connection,
            send,
            mut lines,
            path,
        } = link;
        lines.set_limit(max_frame_bytes.min(MAX_FRAME_BYTES));
        let (outgoing, queue) = mpsc::unbounded_channel();
        let (deliver, incoming) = mpsc::unbounded_channel();
        let (peer_done_tx, peer_done_rx) = watch::channel(false);
        let (peer_closing_tx, peer_closing_rx) = watch::channel(false);
        let peer = PeerProgress {
            done: peer_done_rx,
            closing: peer_closing_rx,
        };
        let credits = Arc::new(Semaphore::new(RECEIVE_QUEUE_FRAMES));
        let byte_credits = Arc::new(Semaphore::new(RECEIVE_QUEUE_BYTES));
        let sys = Arc::new(SysLayer::new());
        let pong = PendingPong::default();
        let backlog = Arc::new(Backlog::default());
        let arrival_bell = BellSlot::default();
        let reader = Reader {
            arrival_bell: arrival_bell.clone(),
            lines,
            sys: sys.clone(),
            deliver,
            credits: credits.clone(),
            byte_credits: byte_credits.clone(),
            outgoing: outgoing.clone(),
            pong: pong.clone(),
        };
        // The writer is not aborted on drop: it flushes and finishes the stream, and ends
        // by itself once every sender of its queue is gone.
        let writer = Writer {
            send,
            connection: connection.clone(),
            pong,
            backlog: backlog.clone(),
            broken: None,
        };
        runtime.spawn(writer.run(queue, Some(peer)));
        let io_tasks = vec![
            runtime.spawn(reader.run(peer_done_tx)).abort_handle(),
            runtime
                .spawn(watch_peer_closing(connection.clone(), peer_closing_tx))
                .abort_handle(),
        ];
        IrohChannel {
            waiter,
            connection,
            outgoing,
            incoming,
            credits,
            byte_credits,
            sys,
            backlog,
            arrival_bell,
            io_tasks,
            heartbeat_tasks: Vec::new(),
            recv_timeout: None,
            ended: None,
            closed_locally: false,
            _path: path,
        }
    }

    /// Makes `recv` give up with [`ChannelError::Timeout`] after `timeout` of silence
    /// (handshake steps with a budget). By default `recv` waits forever, like the reference.
    pub fn with_recv_timeout(mut self, timeout: Duration) -> Self {
        self.recv_timeout = Some(timeout);
        self
    }

    /// Starts pinging every `config.interval` and watching for `config.timeout` of silence,
    /// reporting to `events`. Call it after the handshake (the reference never pings before
    /// `_session_ready`) and only when the reference would (see docs/p2p-wire.md#heartbeat).
    /// Starting again replaces the previous heartbeat; the first event sink stays.
    pub fn start_heartbeat(&mut self, config: HeartbeatConfig, events: EventSink) {
        self.stop_heartbeat();
        if self.closed_locally {
            return;
        }
        self.sys.start_watching(events);
        let outgoing = self.outgoing.clone();
        let send_ping = move |ping: Value| match encode_line(&ping) {
            Ok(bytes) => outgoing.send(Outgoing::Sys(bytes)).is_ok(),
            Err(_) => false,
        };
        let runtime = self.waiter.handle();
        self.heartbeat_tasks = vec![
            runtime
                .spawn(run_pinger(self.sys.clone(), config.interval, send_ping))
                .abort_handle(),
            runtime
                .spawn(run_watchdog(self.sys.clone(), config.timeout))
                .abort_handle(),
        ];
    }

    /// Runs `gone` once the connection to the peer is closed (the peer left or died), e.g.
    /// to stop waiting for a person's move the peer will never see.
    pub fn when_peer_gone(&mut self, gone: impl FnOnce() + Send + 'static) {
        let connection = self.connection.clone();
        let task = self.waiter.handle().spawn(async move {
            connection.closed().await;
            gone();
        });
        self.io_tasks.push(task.abort_handle());
    }

    /// Round-trip times measured by the heartbeat so far.
    pub fn rtt(&self) -> RttStats {
        self.sys.rtt()
    }

    fn stop_heartbeat(&mut self) {
        for task in self.heartbeat_tasks.drain(..) {
            task.abort();
        }
    }

    /// The next business frame, waiting until `deadline` (forever when `None`); `Ok(None)`
    /// when nothing came in time.
    fn next_frame(&mut self, deadline: Option<Instant>) -> Result<Option<Value>, ChannelError> {
        loop {
            if let Some(ended) = &self.ended {
                return Err(ended.clone());
            }
            let wait = deadline.map(|at| at.saturating_duration_since(Instant::now()));
            let Some(line) = self.take_incoming(wait)? else {
                return Ok(None);
            };
            if let Some(frame) = self.deliver(line)? {
                return Ok(Some(frame));
            }
        }
    }

    /// The next line, waiting at most `wait` (`Ok(None)` when nothing came in time).
    fn take_incoming(&mut self, wait: Option<Duration>) -> Result<Option<Line>, ChannelError> {
        let gone = || ChannelError::Closed("channel reader stopped".into());
        match self.incoming.try_recv() {
            Ok(line) => return Ok(Some(line)),
            Err(mpsc::error::TryRecvError::Disconnected) => return Err(gone()),
            Err(mpsc::error::TryRecvError::Empty) if wait == Some(Duration::ZERO) => {
                return Ok(None);
            }
            Err(mpsc::error::TryRecvError::Empty) => {}
        }
        let incoming = &mut self.incoming;
        let line = match wait {
            None => self.waiter.block_on(incoming.recv()),
            Some(timeout) => {
                let next = self
                    .waiter
                    .block_on(async { tokio::time::timeout(timeout, incoming.recv()).await });
                match next {
                    Ok(line) => line,
                    Err(_) => return Ok(None),
                }
            }
        };
        line.map(Some).ok_or_else(gone)
    }

    /// Turns a received line into a frame (parsing a long one now), remembering the end of
    /// the stream. `Ok(None)`: a long line that turned out to be `_sys` traffic, skipped.
    fn deliver(&mut self, line: Line) -> Result<Option<Value>, ChannelError> {
        if !matches!(line, Line::End(_)) {
            self.credits.add_permits(1);
        }
        let line = match line {
            Line::Text(text) => {
                self.byte_credits.add_permits(text.len());
                parse_text(&text)
            }
            line => line,
        };
        match line {
            Line::Frame(frame) if frame.get("_sys").is_some() => Ok(None),
            Line::Frame(frame) => Ok(Some(frame)),
            Line::Text(_) => unreachable!("parsed above"),
            Line::Malformed(reason) => Err(ChannelError::Malformed(reason)),
            Line::End(reason) => {
                let ended = ChannelError::Closed(reason);
                self.ended = Some(ended.clone());
                Err(ended)
            }
        }
    }
}

impl IrohChannel {
    /// Hands one frame to the writer without waiting for it to be written. A backlog of
    /// [`SEND_WINDOW_FRAMES`] (`send`) or [`POST_BACKLOG_FRAMES`] frames, or of
    /// [`POST_BACKLOG_BYTES`], makes `send` wait for the writer and `post` refuse; a write
    /// that failed earlier is reported here.
    fn enqueue(&mut self, frame: &Value, when_full: WhenFull) -> Result<(), ChannelError> {
        if self.closed_locally {
            return Err(ChannelError::Closed("channel closed locally".into()));
        }
        if let Some(ended) = &self.ended {
            return Err(ended.clone());
        }
        let writer_gone = || ChannelError::Closed("channel writer stopped".into());
        let bytes = encode_line(frame)?;
        let frame_limit = match when_full {
            WhenFull::Wait => SEND_WINDOW_FRAMES,
            WhenFull::Refuse => POST_BACKLOG_FRAMES,
        };
        loop {
            // Made before looking, so a frame written meanwhile still wakes the wait below.
            let drained = self.backlog.drained.notified();
            let mut queued = self.backlog.lock();
            if let Some(failed) = self.backlog.failure() {
                return Err(failed);
            }
            let (frames, held) = *queued;
            let full =
                frames > 0 && (frames >= frame_limit || held + bytes.len() > POST_BACKLOG_BYTES);
            if !full {
                queued.0 += 1;
                queued.1 += bytes.len();
                break;
            }
            drop(queued);
            if when_full == WhenFull::Refuse {
                return Err(ChannelError::Backlog {
                    frames,
                    bytes: held,
                });
            }
            if self.outgoing.is_closed() {
                return Err(writer_gone());
            }
            self.waiter
                .block_on(async { tokio::time::timeout(WRITER_CHECK, drained).await })
                .ok();
        }
        self.outgoing
            .send(Outgoing::Queued(bytes))
            .map_err(|_| writer_gone())
    }
}

impl Channel for IrohChannel {
    /// Returns once the writer has the frame (see [`SEND_WINDOW_FRAMES`]); [`Channel::close`]
    /// waits until everything sent is written and acknowledged.
    fn send(&mut self, frame: &Value) -> Result<(), ChannelError> {
        self.enqueue(frame, WhenFull::Wait)
    }

    fn post(&mut self, frame: &Value) -> Result<(), ChannelError> {
        self.enqueue(frame, WhenFull::Refuse)
    }

    fn recv(&mut self) -> Result<Value, ChannelError> {
        let deadline = self.recv_timeout.map(|timeout| Instant::now() + timeout);
        self.next_frame(deadline)?.ok_or(ChannelError::Timeout)
    }

    fn recv_timeout(&mut self, timeout: Duration) -> Result<Option<Value>, ChannelError> {
        self.next_frame(Some(Instant::now() + timeout))
    }

    fn ring_on_arrival(&mut self, bell: Arc<Bell>) {
        self.arrival_bell.set(Arc::clone(&bell));
        // What arrived before the bell was set is waiting too.
        bell.ring();
    }

    /// Ends the session without cutting off a peer that is still consuming (see
    /// [`super::shutdown`]; waits at most the close grace plus two seconds). Frames already
    /// received stay available to `recv`. `Timeout` means the peer never acknowledged our
    /// last frames.
    fn close(&mut self) -> Result<(), ChannelError> {
        if std::mem::replace(&mut self.closed_locally, true) {
            return Ok(());
        }
        self.stop_heartbeat();
        let (done, outcome) = oneshot::channel();
        if self
            .outgoing
            .send(Outgoing::Finish {
                grace: CLOSE_GRACE,
                done,
            })
            .is_err()
        {
            return Ok(());
        }
        let budget = close_budget(CLOSE_GRACE) + CLOSE_SLACK;
        let result = self
            .waiter
            .block_on(async { tokio::time::timeout(budget, outcome).await })
            .ok()
            .and_then(Result::ok)
            .unwrap_or(Err(ChannelError::Timeout));
        self.connection
            .close(VarInt::from_u32(CLOSE_DONE), b"session over");
        result
    }
}

impl Drop for IrohChannel {
    /// Dropped without `close` (a panic, an early return): the writer still flushes what
    /// the engine already sent and finishes the stream, then the connection is closed, all
    /// off the caller's thread and bounded by the close budget.
    fn drop(&mut self) {
        self.stop_heartbeat();
        for task in self.io_tasks.drain(..) {
            task.abort();
        }
        if self.closed_locally {
            return;
        }
        let (done, finished) = oneshot::channel();
        let flushing = self
            .outgoing
            .send(Outgoing::Finish {
                grace: Duration::ZERO,
                done,
            })
            .is_ok();
        let connection = self.connection.clone();
        self.waiter.handle().spawn(async move {
            if flushing {
                let budget = close_budget(Duration::ZERO) + CLOSE_SLACK;
                let _ = tokio::time::timeout(budget, finished).await;
            }
            connection.close(VarInt::from_u32(CLOSE_ABANDONED), b"channel dropped");
        });
    }
}

/// The reader task: lines from the peer, through the `_sys` layer, to the engine's queue.
struct Reader {
    /// Rung after each line handed to the receiving side, once one is set.
    arrival_bell: BellSlot,
    lines: LineReader,
    sys: Arc<SysLayer>,
    deliver: mpsc::UnboundedSender<Line>,
    credits: Arc<Semaphore>,
    byte_credits: Arc<Semaphore>,
    outgoing: mpsc::UnboundedSender<Outgoing>,
    pong: PendingPong,
}

impl Reader {
    async fn run(mut self, peer_done: watch::Sender<bool>) {
        loop {
            let line = match self.lines.next().await {
                Line::End(reason) => {
                    let _ = self.deliver.send(Line::End(reason));
                    self.arrival_bell.ring();
                    peer_done.send_replace(true);
                    return;
                }
                Line::Frame(frame) => {
                    self.sys.heard_from_peer();
                    match self.sys.classify(frame) {
                        Received::Business(frame) => Line::Frame(frame),
                        Received::Reply(answer) => {
                            if let Ok(bytes) = encode_line(&answer) {
                                let replaced = self.pong.lock().unwrap().replace(bytes);
                                if replaced.is_none() {
                                    let _ = self.outgoing.send(Outgoing::Pong);
                                }
                            }
                            continue;
                        }
                        Received::Absorbed => continue,
                    }
                }
                Line::Text(text) => {
                    self.sys.heard_from_peer();
                    let Ok(bytes) = self.byte_credits.acquire_many(permits(text.len())).await
                    else {
                        return;
                    };
                    bytes.forget();
                    Line::Text(text)
                }
                Line::Malformed(reason) => {
                    self.sys.heard_from_peer();
                    Line::Malformed(reason)
                }
            };
            let Ok(credit) = self.credits.acquire().await else {
                return;
            };
            credit.forget();
            if self.deliver.send(line).is_err() {
                return;
            }
            self.arrival_bell.ring();
        }
    }
}

/// Semaphore permits for a line of `bytes` (a line is at most `MAX_FRAME_BYTES`, well
/// within `u32`).
fn permits(bytes: usize) -> u32 {
    u32::try_from(bytes).unwrap_or(u32::MAX)
}

/// The writer task: the only owner of the send stream.
struct Writer {
    send: SendStream,
    connection: Connection,
    pong: PendingPong,
    backlog: Arc<Backlog>,
    /// Why writing failed, once it has: every later line fails the same way.
    broken: Option<ChannelError>,
}

impl Writer {
    async fn run(
        mut self,
        mut queue: mpsc::UnboundedReceiver<Outgoing>,
        mut peer: Option<PeerProgress>,
    ) {
        while let Some(work) = queue.recv().await {
            match work {
                Outgoing::Sys(bytes) => {
                    let _ = self.write(&bytes).await;
                }
                Outgoing::Queued(bytes) => {
                    let result = self.write(&bytes).await;
                    self.backlog.written(bytes.len(), result);
                }
                Outgoing::Pong => {
                    let pong = self.pong.lock().unwrap().take();
                    if let Some(bytes) = pong {
                        let _ = self.write(&bytes).await;
                    }
                }
                Outgoing::Finish { grace, done } => {
                    self.broken = Some(ChannelError::Closed("channel closed locally".into()));
                    if let Some(peer) = peer.take() {
                        let closed =
                            close_cleanly(&mut self.send, &self.connection, peer, grace).await;
                        let _ = done.send(closed);
                    }
                }
            }
        }
    }

    async fn write(&mut self, bytes: &[u8]) -> Result<(), ChannelError> {
        if let Some(error) = &self.broken {
            return Err(error.clone());
        }
        let result = self
            .send
            .write_all(bytes)
            .await
            .map_err(|e| ChannelError::Closed(describe_write_error(&e)));
        if let Err(error) = &result {
            self.broken = Some(error.clone());
        }
        result
    }
}

fn describe_write_error(error: &WriteError) -> String {
    match error {
        WriteError::ConnectionLost(ConnectionError::ApplicationClosed(_)) => {
            "peer closed the connection".into()
        }
        WriteError::ConnectionLost(ConnectionError::TimedOut) => {
            "connection timed out (peer unreachable)".into()
        }
        WriteError::Stopped(code) => format!("peer stopped reading (code {code})"),
        other => format!("iroh stream write failed: {other}"),
    }
}
