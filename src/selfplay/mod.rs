//! Self-play (`protocol test`): the host and guest engines of one protocol dir, each on its
//! own thread with its own hooks instance, joined by a turn-taking in-memory duplex: the
//! sides run one at a time (as the flows do anyway), on one CPU, sharing one interpreter.
//! Each side gets the same directory layout as a networked side: `<role>-<ms>/` with
//! `session.json` and the engine's `events.jsonl`, the engine state dir inside it.

pub mod adversarial;
mod cpu;
pub mod room;

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::engine::{
    self, DecisionSettings, DisplaySink, EngineError, LocalInput, Outcome, ScriptStep,
    ScriptedInput, SessionBinding,
};
use crate::hooks::interpreter;
use crate::hooks::python_hooks::PythonHooks;
use crate::layout::{EngineDir, SessionDir};
use crate::records::SessionRecord;
use crate::session::{EngineStart, SessionRecorder};
use crate::spec::{CheckedOptions, ControlMode};
use crate::spec::{Role, Spec};
use crate::transport::memory::{MemoryChannel, turn_taking_duplex};
use crate::transport::{Channel, ChannelError};

/// What to play.
#[derive(Clone)]
pub struct SelfPlay {
    pub protocol_dir: PathBuf,
    pub spec: Spec,
    pub options: CheckedOptions,
    /// Parent of the `host-<ms>` / `guest-<ms>` side dirs.
    pub state_base: PathBuf,
    pub control_mode: ControlMode,
    /// `--think-seconds`: how long each side's decision windows wait for a person (`None`:
    /// the defaults, under which a hybrid window nobody watches does not wait).
    pub think: Option<Duration>,
    pub pace: Duration,
    /// How long both sides together may take.
    pub timeout: Duration,
    pub display: DisplaySink,
}

/// One side's result and where its files are.
pub struct SideReport {
    pub role: Role,
    pub result: Result<Outcome, EngineError>,
    /// The side's directory: `session.json` and the engine's `events.jsonl`.
    pub session_dir: SessionDir,
    /// The engine dir inside it (snapshot.json and the hooks' own files).
    pub state_dir: EngineDir,
}

impl SideReport {
    /// The side's events file.
    pub fn events_file(&self) -> PathBuf {
        self.session_dir.events_file()
    }
}

/// Why self-play could not produce two results.
#[derive(Debug, thiserror::Error)]
pub enum SelfPlayError {
    #[error("cannot create state dir {0}: {1}")]
    StateDir(PathBuf, std::io::Error),
    #[error(transparent)]
    Spec(#[from] crate::spec::SpecError),
    #[error(transparent)]
    Hooks(#[from] crate::hooks::HookError),
    #[error("protocol threads did not finish within {seconds} s: {stuck}")]
    Timeout { seconds: u64, stuck: String },
}

/// Wraps the guest's end of the duplex (the adversarial suite tampers with it).
pub type ChannelWrapper = Box<dyn FnOnce(MemoryChannel) -> Box<dyn Channel> + Send>;

impl SelfPlay {
    /// Plays one full session; both reports come back in host, guest order.
    pub fn run(&self) -> Result<[SideReport; 2], SelfPlayError> {
        self.run_with(Box::new(|channel| Box::new(channel)))
    }

    /// Like [`SelfPlay::run`], with the guest's channel wrapped. A spec this build cannot
    /// run is refused before any hooks load.
    pub fn run_with(&self, wrap_guest: ChannelWrapper) -> Result<[SideReport; 2], SelfPlayError> {
        self.spec.ensure_runnable()?;
        // Both sides' hooks load (and are checked for the mode's hooks) before any side starts.
        let hooks = [
            PythonHooks::load_for(&self.protocol_dir, &self.spec)?,
            PythonHooks::load_for(&self.protocol_dir, &self.spec)?,
        ];
        let (host_channel, guest_channel) = turn_taking_duplex();
        // Mental poker's sides spend their time in Rust cryptography spread over threads of
        // their own, which a pin would crowd onto one CPU; the other modes share one.
        let capabilities = self.spec.capabilities();
        let shared_cpu = cpu::current().filter(|_| capabilities.light_hooks);
        let (done_tx, done_rx) = mpsc::channel::<SideReport>();
        let waiting = [
            Arc::new(AtomicBool::new(false)),
            Arc::new(AtomicBool::new(false)),
        ];
        let first_turns = [host_channel.first_turn(), guest_channel.first_turn()];
        let sides: [(Role, Box<dyn Channel>); 2] = [
            (Role::Host, Box::new(host_channel)),
            (Role::Guest, wrap_guest(guest_channel)),
        ];
        let sides = sides
            .into_iter()
            .zip(first_turns)
            .zip(waiting.iter().cloned())
            .zip(hooks);
        for ((((role, inner), first_turn), waiting), mut hooks) in sides {
            let mut channel = Watched { inner, waiting };
            let side_dir = SessionRecorder::create_in(&self.state_base, role)
                .map_err(|e| SelfPlayError::StateDir(self.state_base.clone(), e))?;
            side_dir.record_start(
                role,
                SessionRecord {
                    mode: Some("self-play".into()),
                    protocol_dir: Some(self.protocol_dir.clone()),
                    protocol_id: Some(self.spec.protocol_id()),
                    local_control_mode: Some(self.control_mode),
                    ..SessionRecord::default()
                },
            );
            let start = EngineStart {
                role,
                options: self.options.clone(),
                control_mode: self.control_mode,
                pace: self.pace,
                display: self.display.clone(),
                decisions: DecisionSettings {
                    think: self.think,
                    ..DecisionSettings::default()
                },
                binding: SessionBinding::unbound(),
                // Both sides are ours; only a pace longer than the usual wait stretches it.
                peer_timeout: engine::DEFAULT_PEER_TIMEOUT.max(self.pace * 4),
                local_input: Box::new(move |_| chat_script(role)),
            };
            let config = side_dir
                .start_engine(&self.spec, start)
                .map_err(|e| SelfPlayError::StateDir(side_dir.root().to_path_buf(), e))?;
            let state_dir = config.state_dir.clone();
            let (spec, done) = (self.spec.clone(), done_tx.clone());
            std::thread::Builder::new()
                .name(format!("aigenora-{role}"))
                .spawn(move || {
                    cpu::stay_on(shared_cpu);
                    channel.wait(|_| first_turn.take());
                    let result = interpreter::with_thread_state(|| {
                        engine::run(&spec, &mut hooks, &mut channel, config)
                    });
                    side_dir.record_outcome(&result);
                    let _ = done.send(SideReport {
                        role,
                        result,
                        session_dir: side_dir.dir().clone(),
                        state_dir,
                    });
                })
                .expect("spawn a self-play thread");
        }
        drop(done_tx);
        collect(done_rx, self.timeout, &waiting)
    }
}

/// The scripted chat of a free-mode self-play: both greet, then the guest ends.
fn chat_script(role: Role) -> Box<dyn LocalInput> {
    let steps = match role {
        Role::Host => vec![ScriptStep::Say("hello from host".into())],
        Role::Guest => vec![
            ScriptStep::Say("hello from guest".into()),
            ScriptStep::AwaitPeer(1),
            ScriptStep::Say("/quit".into()),
        ],
    };
    Box::new(ScriptedInput::new(steps))
}

fn collect(
    done: mpsc::Receiver<SideReport>,
    timeout: Duration,
    waiting: &[Arc<AtomicBool>; 2],
) -> Result<[SideReport; 2], SelfPlayError> {
    let deadline = Instant::now() + timeout;
    let mut host = None;
    let mut guest = None;
    while host.is_none() || guest.is_none() {
        let left = deadline.saturating_duration_since(Instant::now());
        match done.recv_timeout(left) {
            Ok(report) if report.role == Role::Host => host = Some(report),
            Ok(report) => guest = Some(report),
            Err(_) => {
                let describe = |name: &str, missing: bool, waiting: &AtomicBool| {
                    missing.then(|| match waiting.load(Ordering::SeqCst) {
                        true => format!("{name} (waiting for its peer)"),
                        false => format!("{name} (stuck in its hooks)"),
                    })
                };
                let stuck: Vec<String> = [
                    describe("host", host.is_none(), &waiting[0]),
                    describe("guest", guest.is_none(), &waiting[1]),
                ]
                .into_iter()
                .flatten()
                .collect();
                return Err(SelfPlayError::Timeout {
                    seconds: timeout.as_secs(),
                    stuck: stuck.join(", "),
                });
            }
        }
    }
    Ok([host.expect("host reported"), guest.expect("guest reported")])
}

/// A side's channel that remembers whether the side is blocked waiting for its peer, so a
/// timeout can name the side that is actually stuck.
struct Watched {
    inner: Box<dyn Channel>,
    waiting: Arc<AtomicBool>,
}

impl Watched {
    fn wait<T>(&mut self, receive: impl FnOnce(&mut dyn Channel) -> T) -> T {
        self.waiting.store(true, Ordering::SeqCst);
        let result = receive(self.inner.as_mut());
        self.waiting.store(false, Ordering::SeqCst);
        result
    }
}

impl Channel for Watched {
    fn send(&mut self, frame: &Value) -> Result<(), ChannelError> {
        self.inner.send(frame)
    }

    fn recv(&mut self) -> Result<Value, ChannelError> {
        self.wait(|channel| channel.recv())
    }

    fn recv_timeout(&mut self, timeout: Duration) -> Result<Option<Value>, ChannelError> {
        self.wait(|channel| channel.recv_timeout(timeout))
    }

    fn close(&mut self) -> Result<(), ChannelError> {
        self.inner.close()
    }

    fn ring_on_arrival(&mut self, bell: Arc<crate::transport::Bell>) {
        self.inner.ring_on_arrival(bell);
    }
}

/// Display output prefixed with the side that printed it.
pub fn stdout_display() -> DisplaySink {
    Arc::new(|role, text| {
        for line in text.lines() {
            println!("[{role}] {}", crate::terminal::escape_display(line));
        }
    })
}
