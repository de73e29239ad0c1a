//! [`SessionDriver`]: a one-to-one session's runtime, driven by the engine's own thread while
//! it waits for the peer, so a frame's arrival wakes one thread instead of three.
//!
//! On a multi-threaded runtime a crossing wakes a runtime worker on the sender's side (its
//! writer task), one on the receiver's (the socket), and then the receiver's engine thread.
//! Here the session's runtime has one core (a current-thread runtime) that two threads take
//! turns holding:
//! - the engine thread, whenever it waits for something of the session's (the peer's next
//!   frame, room in the send window, the end of the close): it drives the runtime itself, so
//!   the socket's readiness wakes it directly, and what it sent since its last wait leaves
//!   first (a burst of frames in one datagram); for the first [`SPIN`] of each wait it does
//!   not even sleep (see [`spin_then_park`]);
//! - the process's main thread ([`SessionDriver::run`]) the rest of the time: before the
//!   engine starts (connecting, the handshake), after it ends (the report), and whenever the
//!   engine has been away from the runtime for a while (a hook that thinks, a person deciding)
//!   — so pings are answered, the heartbeat watched, the frames the engine sent before it
//!   went away sent, and the connection kept however long the engine is busy elsewhere.
//!
//! The main thread does not hand the core over on every wait (that would be the very wake
//! this saves): it looks every [`CHECK_EVERY`] (backing off to [`CHECK_AT_MOST`] while the
//! engine sits in one long wait, whose end wakes it) and takes the core only when the engine
//! has neither waited nor been waiting since its last look; each look also gives a free
//! runtime one turn. The engine asks for the core back when it next waits.
//!
//! The lines the session appends (its events, the hooks' logs) are held while the engine
//! works and written when the runtime goes idle, after the step's frames left; while the
//! main thread holds the core (the engine away) they are written at once
//! ([`crate::records::write_behind`]).

use std::future::Future;
use std::pin::pin;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::SeqCst};
use std::sync::{Arc, Condvar, Mutex};
use std::task::Poll;
use std::time::{Duration, Instant};

use tokio::runtime::Runtime;
use tokio::sync::Notify;

use crate::records::write_behind;

/// How long the engine may stay away from the runtime before the main thread drives it.
const CHECK_EVERY: Duration = Duration::from_millis(2);
/// The longest the main thread sleeps between looks while the engine is in one long wait
/// (it also notices the session's end, a signal, within this).
const CHECK_AT_MOST: Duration = Duration::from_millis(50);

/// How long the engine looks for the peer's answer before it sleeps until one arrives: on
/// loopback or a LAN a round's answer comes within it; a longer wait costs this much CPU once.
const SPIN: Duration = Duration::from_millis(1);

/// How long [`SessionDriver::finish`] waits for the engine's thread to end.
const FINISH_WAIT: Duration = Duration::from_secs(5);

tokio::task_local! {
    /// The driver of the session future running under [`SessionDriver::run`].
    static CURRENT: SessionDriver;
}

/// A current-thread runtime shared by the process's main thread and a session's engine
/// thread (see the module's documentation). Cheap to clone.
#[derive(Clone)]
pub struct SessionDriver(Arc<Shared>);

struct Shared {
    /// Always there until the driver is dropped (see [`Drop`]).
    runtime: Option<Runtime>,
    /// The engine thread is inside [`Attached::block_on`].
    engine_driving: AtomicBool,
    /// How many times the engine has started to wait: unchanged between two looks of the
    /// main thread, and not waiting now, means the engine has been away for a whole look.
    engine_waits: AtomicU64,
    /// An engine thread is [`Attached`].
    engine_attached: AtomicBool,
    /// The main thread sleeps longer than [`CHECK_EVERY`] between looks (the engine sat in
    /// one long wait): the engine wakes it when that wait ends, so what the engine sends
    /// before it goes away next still leaves within a look.
    main_resting: AtomicBool,
    /// The main thread holds the core until told [`Shared::want`].
    /// (Shared with the write-behind's hold: while the main thread holds the core, the
    /// engine is away from the exchange and what it appends is written at once.)
    main_holds: Arc<AtomicBool>,
    /// The engine wants the core back.
    want: Notify,
    /// Wakes the main thread's look early (the engine ended).
    look: (Mutex<()>, Condvar),
    /// The session's appended lines wait for the runtime to go idle (see
    /// [`crate::records::write_behind`]): its step's frames have left by then. Let go by
    /// [`SessionDriver::finish`] (or with the driver), after which lines are written at once.
    lines_held: Mutex<Option<write_behind::Hold>>,
}

impl SessionDriver {
    pub fn new() -> std::io::Result<SessionDriver> {
        let main_holds = Arc::new(AtomicBool::new(false));
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .on_thread_park(write_behind::flush)
            .build()?;
        Ok(SessionDriver(Arc::new(Shared {
            runtime: Some(runtime),
            engine_driving: AtomicBool::new(false),
            engine_waits: AtomicU64::new(0),
            engine_attached: AtomicBool::new(false),
            main_resting: AtomicBool::new(false),
            main_holds: main_holds.clone(),
            want: Notify::new(),
            look: (Mutex::new(()), Condvar::new()),
            lines_held: Mutex::new(Some(write_behind::Hold::new(main_holds))),
        })))
    }

    /// The driver of the session this task runs in, if it runs under [`SessionDriver::run`].
    pub fn current() -> Option<SessionDriver> {
        CURRENT.try_with(SessionDriver::clone).ok()
    }

    /// Runs `session` to its end on the calling (main) thread, which drives the runtime
    /// whenever the engine does not; every line the session appended is written when this
    /// returns.
    pub fn run<F: Future>(&self, session: F) -> F::Output {
        let out = self.drive(session);
        write_behind::flush();
        out
    }

    fn drive<F: Future>(&self, session: F) -> F::Output {
        let shared = &self.0;
        let mut session = pin!(CURRENT.scope(self.clone(), session));
        let mut seen_waits = u64::MAX;
        let mut pause = CHECK_EVERY;
        loop {
            let waits = shared.engine_waits.load(SeqCst);
            let engine_away = !shared.engine_driving.load(SeqCst) && waits == seen_waits;
            if !shared.engine_attached.load(SeqCst) || engine_away {
                if let Some(out) = self.hold_core(session.as_mut()) {
                    return out;
                }
                seen_waits = u64::MAX;
                pause = CHECK_EVERY;
                continue;
            }
            // The engine drives, or did since the last look: see whether the session has
            // ended (without the core, when the engine holds it). When the core is free, this
            // also gives the runtime one turn (the yield): whatever the bookkeeping above
            // believes, the runtime is never left undriven for longer than a look.
            let peek = async {
                tokio::task::yield_now().await;
                std::future::poll_fn(|cx| Poll::Ready(session.as_mut().poll(cx))).await
            };
            if let Poll::Ready(out) = shared.runtime().block_on(peek) {
                return out;
            }
            pause = if waits == seen_waits {
                (pause * 2).min(CHECK_AT_MOST)
            } else {
                CHECK_EVERY
            };
            seen_waits = waits;
            let (lock, look) = &shared.look;
            let guard = lock.lock().unwrap_or_else(|p| p.into_inner());
            if shared.engine_attached.load(SeqCst) {
                shared.main_resting.store(pause > CHECK_EVERY, SeqCst);
                // A wait that ended before the engine could see us resting: look again soon.
                if !shared.engine_driving.load(SeqCst) {
                    pause = CHECK_EVERY;
                }
                drop(look.wait_timeout(guard, pause));
                shared.main_resting.store(false, SeqCst);
            }
        }
    }

    /// Drives the runtime on the main thread until the session ends (`Some`) or the engine
    /// asks for the core (`None`).
    fn hold_core<F: Future>(&self, mut session: std::pin::Pin<&mut F>) -> Option<F::Output> {
        let shared = &self.0;
        shared.main_holds.store(true, SeqCst);
        if shared.engine_driving.load(SeqCst) {
            // The engine started to wait just now and did not see us holding: let it drive.
            shared.main_holds.store(false, SeqCst);
            return None;
        }
        let out = shared.runtime().block_on(async {
            tokio::select! {
                biased;
                out = session.as_mut() => Some(out),
                () = shared.want.notified() => None,
            }
        });
        shared.main_holds.store(false, SeqCst);
        out
    }

    /// Makes the calling thread the session's engine thread until the result is dropped
    /// (one engine per driver): from now on the main thread drives only while the engine is
    /// away, and again at once after.
    pub fn attach(&self) -> Attached {
        self.0.engine_attached.store(true, SeqCst);
        Attached(self.clone())
    }

    /// Ends the runtime here on the main thread once the engine's thread has let go of it
    /// (a session that ended abnormally may leave it finishing), waiting at most
    /// [`FINISH_WAIT`] for that thread, as dropping a runtime waits for its blocking threads.
    pub fn finish(self) {
        // Whatever happens to the engine's thread, nothing the process appends from now on
        // waits for a runtime that may never idle again.
        drop(
            self.0
                .lines_held
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .take(),
        );
        let deadline = Instant::now() + FINISH_WAIT;
        let mut shared = self.0;
        while Instant::now() < deadline {
            match Arc::try_unwrap(shared) {
                Ok(last) => return drop(last),
                Err(still_used) => shared = still_used,
            }
            std::thread::sleep(Duration::from_millis(5));
        }
    }
}

/// The engine thread's hold on its [`SessionDriver`] (see [`SessionDriver::attach`]).
pub struct Attached(SessionDriver);

impl Attached {
    /// Waits for `future`, driving the runtime meanwhile. Never call it from inside the
    /// runtime (a task).
    pub fn block_on<F: Future>(&self, future: F) -> F::Output {
        let shared = &(self.0).0;
        shared.engine_waits.fetch_add(1, SeqCst);
        shared.engine_driving.store(true, SeqCst);
        if shared.main_holds.load(SeqCst) {
            shared.want.notify_one();
        }
        let out = shared.runtime().block_on(spin_then_park(future));
        shared.engine_driving.store(false, SeqCst);
        if shared.main_resting.load(SeqCst) {
            shared.wake_main();
        }
        out
    }

    /// The runtime's handle, to spawn the session's tasks on.
    pub fn handle(&self) -> &tokio::runtime::Handle {
        (self.0).0.runtime().handle()
    }
}

/// Polls `future` and the runtime's sockets without sleeping for [`SPIN`], then waits as
/// usual: the peer's next frame usually arrives within it, and a thread that never went to
/// sleep needs no wake-up (on a virtual machine, one that slept costs an exit to the
/// hypervisor and an interrupt from the other core, several crossings' worth).
async fn spin_then_park<F: Future>(future: F) -> F::Output {
    let mut future = pin!(future);
    let deadline = Instant::now() + SPIN;
    let mut flushed = false;
    loop {
        let polled = std::future::poll_fn(|cx| Poll::Ready(future.as_mut().poll(cx))).await;
        if let Poll::Ready(out) = polled {
            return out;
        }
        if Instant::now() >= deadline {
            return future.await;
        }
        // One turn: the tasks run (what the engine sent leaves) and the sockets are read
        // without blocking.
        tokio::task::yield_now().await;
        if !flushed {
            // The step's frames have left: its lines can be written while we look.
            write_behind::flush();
            flushed = true;
        }
    }
}

impl Drop for Attached {
    /// The engine has ended: the main thread drives from now on, at once.
    fn drop(&mut self) {
        let shared = &(self.0).0;
        shared.engine_attached.store(false, SeqCst);
        shared.wake_main();
    }
}

impl Shared {
    /// Ends the main thread's current pause between looks.
    fn wake_main(&self) {
        let (lock, look) = &self.look;
        let _guard = lock.lock().unwrap_or_else(|p| p.into_inner());
        look.notify_all();
    }

    fn runtime(&self) -> &Runtime {
        self.runtime
            .as_ref()
            .expect("the runtime lives as long as its driver")
    }
}

impl Drop for Shared {
    /// A runtime cannot be dropped from one of its own threads: if the engine's thread
    /// happens to let go of the driver last, the runtime stops in the background instead.
    fn drop(&mut self) {
        if let Some(runtime) = self.runtime.take()
            && tokio::runtime::Handle::try_current().is_ok()
        {
            runtime.shutdown_background();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicU32;

    /// Runs `engine` as the engine thread of a session under a fresh driver (a blocking
    /// thread attached to it, as `host` and `join` run theirs), the main thread driving.
    fn as_engine<T: Send + 'static>(engine: impl FnOnce(&Attached) -> T + Send + 'static) -> T {
        let driver = SessionDriver::new().unwrap();
        let out = driver.run(async {
            let driver = SessionDriver::current().expect("inside run");
            tokio::task::spawn_blocking(move || engine(&driver.attach()))
                .await
                .unwrap()
        });
        driver.finish();
        out
    }

    #[test]
    fn what_the_engine_appends_is_written_when_it_waits_while_it_is_away_and_at_the_end() {
        use crate::records::{Event, EventLog};
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("events.jsonl");
        let lines = move || {
            std::fs::read_to_string(&path)
                .unwrap_or_default()
                .lines()
                .count()
        };
        let log = EventLog::to_file(dir.path().join("events.jsonl"));
        let (count, engine_log) = (lines.clone(), log.clone());
        let (after_wait, away_for) = as_engine(move |engine| {
            engine_log.emit(Event::PeerResumed {});
            engine.block_on(tokio::time::sleep(Duration::from_millis(5)));
            let after_wait = count();
            engine_log.emit(Event::PeerResumed {});
            let away = Instant::now();
            while count() < 2 && away.elapsed() < Duration::from_secs(2) {
                std::thread::sleep(Duration::from_millis(1));
            }
            engine_log.emit(Event::PeerResumed {});
            (after_wait, away.elapsed())
        });
        assert_eq!(after_wait, 1, "written once the runtime went idle");
        assert!(
            away_for < Duration::from_millis(100),
            "written by the main thread's look while the engine was away: {away_for:?}"
        );
        assert_eq!(lines(), 3, "written by the end of the session");
    }

    /// CPU time the calling thread has used so far.
    fn thread_cpu() -> Duration {
        let mut usage = std::mem::MaybeUninit::<libc::rusage>::zeroed();
        // SAFETY: getrusage fills the rusage it is given; RUSAGE_THREAD is this thread's.
        assert_eq!(
            unsafe { libc::getrusage(libc::RUSAGE_THREAD, usage.as_mut_ptr()) },
            0
        );
        // SAFETY: initialised by the successful call above.
        let usage = unsafe { usage.assume_init() };
        let micros = |t: libc::timeval| t.tv_sec as u64 * 1_000_000 + t.tv_usec as u64;
        Duration::from_micros(micros(usage.ru_utime) + micros(usage.ru_stime))
    }

    #[test]
    fn a_wait_longer_than_the_spin_sleeps_after_it() {
        let (waited, cpu) = as_engine(|engine| {
            let (started, cpu) = (Instant::now(), thread_cpu());
            engine.block_on(tokio::time::sleep(Duration::from_millis(200)));
            (started.elapsed(), thread_cpu() - cpu)
        });
        assert!(waited >= Duration::from_millis(200), "{waited:?}");
        assert!(
            cpu < Duration::from_millis(50),
            "a 200 ms wait used {cpu:?} of CPU: it spun past {SPIN:?}"
        );
    }

    #[test]
    fn an_answer_within_the_spin_is_taken_as_it_comes() {
        let answers = as_engine(|engine| {
            (0..50u32)
                .map(|n| {
                    let (answer, answered) = tokio::sync::oneshot::channel();
                    std::thread::spawn(move || answer.send(n));
                    engine.block_on(answered).unwrap()
                })
                .collect::<Vec<_>>()
        });
        assert_eq!(answers, (0..50).collect::<Vec<_>>());
    }

    #[test]
    fn the_engine_thread_runs_the_sessions_tasks_while_it_waits() {
        let ran_here = as_engine(|engine| {
            engine.block_on(tokio::time::sleep(Duration::from_millis(20)));
            let task_thread = engine.block_on(async {
                tokio::time::sleep(Duration::from_millis(30)).await;
                tokio::spawn(async { std::thread::current().id() }).await
            });
            task_thread.unwrap() == std::thread::current().id()
        });
        assert!(
            ran_here,
            "a task spawned while the engine waits runs on the engine's thread"
        );
    }

    #[test]
    fn the_main_thread_drives_while_the_engine_is_away() {
        let ticks_while_away = as_engine(|engine| {
            let ticks = Arc::new(AtomicU32::new(0));
            let counter = ticks.clone();
            engine.handle().spawn(async move {
                let mut every = tokio::time::interval(Duration::from_millis(5));
                loop {
                    every.tick().await;
                    counter.fetch_add(1, SeqCst);
                }
            });
            engine.block_on(tokio::time::sleep(Duration::from_millis(10)));
            let before = ticks.load(SeqCst);
            // A hook that thinks, or a person deciding: no wait of the runtime's.
            std::thread::sleep(Duration::from_millis(300));
            ticks.load(SeqCst) - before
        });
        assert!(
            ticks_while_away >= 20,
            "the runtime went on without the engine: {ticks_while_away} ticks of 5 ms in 300 ms"
        );
    }

    #[test]
    fn what_the_engine_queues_after_a_long_wait_runs_soon_after_it_goes_away() {
        let delays = as_engine(|engine| {
            (0..10)
                .map(|_| {
                    // Long enough for the main thread to back off to its longest pause.
                    engine.block_on(tokio::time::sleep(Duration::from_millis(120)));
                    // A frame handed to the writer, then a hook: no wait of the runtime's.
                    let queued = Instant::now();
                    let ran = engine.handle().spawn(async { Instant::now() });
                    std::thread::sleep(Duration::from_millis(30));
                    engine
                        .block_on(ran)
                        .unwrap()
                        .saturating_duration_since(queued)
                })
                .collect::<Vec<_>>()
        });
        let late = delays.iter().filter(|d| **d > Duration::from_millis(20));
        assert!(
            late.count() <= 2,
            "the main thread looked within a few ms of the long wait's end: {delays:?}"
        );
    }

    #[test]
    fn a_session_that_ends_while_the_engine_waits_long_is_seen_soon() {
        let driver = SessionDriver::new().unwrap();
        let (end, ended) = tokio::sync::oneshot::channel::<()>();
        std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(100));
            end.send(()).unwrap();
        });
        let started = Instant::now();
        let finished_by = driver.run(async {
            let driver = SessionDriver::current().expect("inside run");
            let engine = tokio::task::spawn_blocking(move || {
                driver
                    .attach()
                    .block_on(tokio::time::sleep(Duration::from_secs(3)));
            });
            tokio::select! {
                _ = engine => "the engine",
                _ = ended => "the session",
            }
        });
        assert_eq!(finished_by, "the session");
        assert!(
            started.elapsed() < Duration::from_secs(1),
            "seen after {:?}",
            started.elapsed()
        );
        drop(driver);
    }
}
