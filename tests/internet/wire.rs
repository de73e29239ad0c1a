//! A user-space link between two namespaces: a pair of TUN devices whose packets a few
//! threads carry across, each after a fixed delay, dropping a share of them, or all of them
//! while stalled. It delays everything on the link alike (the direct UDP path, relayed TCP,
//! the server's HTTP), as a long or lossy line would.

use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError, Sender, channel};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// `_IOW('T', 202, int)`.
const TUNSETIFF: libc::c_ulong = 0x4004_54ca;
/// How often idle threads look whether the wire is being taken down.
const TICK: Duration = Duration::from_millis(50);

/// What the wire does to each packet, in each direction.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Shape {
    /// One-way delay (the round trip across the wire is twice this).
    pub delay: Duration,
    /// Share of packets dropped, 0 to 1.
    pub loss: f64,
}

/// The running wire; dropping it stops its threads and removes both devices.
pub struct Wire {
    inside: String,
    outside: String,
    state: Arc<State>,
    threads: Vec<JoinHandle<()>>,
}

struct State {
    stop: AtomicBool,
    stalled: AtomicBool,
    delay_micros: AtomicU64,
    loss_per_million: AtomicU32,
    carried: AtomicU64,
    dropped: AtomicU64,
}

#[repr(C)]
struct InterfaceRequest {
    name: [u8; libc::IFNAMSIZ],
    flags: libc::c_short,
    _rest: [u8; 22],
}

fn open_tun(name: &str) -> OwnedFd {
    assert!(
        name.len() < libc::IFNAMSIZ,
        "interface name {name} is too long"
    );
    // SAFETY: a plain open of a device node; the result is checked.
    let fd = unsafe {
        libc::open(
            c"/dev/net/tun".as_ptr(),
            libc::O_RDWR | libc::O_CLOEXEC | libc::O_NONBLOCK,
        )
    };
    assert!(
        fd >= 0,
        "open /dev/net/tun: {}",
        std::io::Error::last_os_error()
    );
    // SAFETY: fd is a fresh descriptor we own.
    let fd = unsafe { OwnedFd::from_raw_fd(fd) };
    let mut request = InterfaceRequest {
        name: [0; libc::IFNAMSIZ],
        flags: (libc::IFF_TUN | libc::IFF_NO_PI) as libc::c_short,
        _rest: [0; 22],
    };
    request.name[..name.len()].copy_from_slice(name.as_bytes());
    // SAFETY: TUNSETIFF reads and writes an ifreq, which `request` is laid out as.
    let done = unsafe { libc::ioctl(fd.as_raw_fd(), TUNSETIFF as _, &mut request) };
    assert_eq!(
        done,
        0,
        "TUNSETIFF {name}: {}",
        std::io::Error::last_os_error()
    );
    fd
}

/// A small deterministic generator for the loss decisions (the same run drops the same
/// packets).
struct XorShift(u64);

impl XorShift {
    fn next_per_million(&mut self) -> u32 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 % 1_000_000) as u32
    }
}

impl Wire {
    /// Creates TUN devices `inside` and `outside` (move them into their namespaces next)
    /// and starts carrying packets between them.
    pub fn open(inside: &str, outside: &str, shape: Shape) -> Wire {
        let state = Arc::new(State {
            stop: AtomicBool::new(false),
            stalled: AtomicBool::new(false),
            delay_micros: AtomicU64::new(0),
            loss_per_million: AtomicU32::new(0),
            carried: AtomicU64::new(0),
            dropped: AtomicU64::new(0),
        });
        let wire_ends = [Arc::new(open_tun(inside)), Arc::new(open_tun(outside))];
        let mut wire = Wire {
            inside: inside.to_string(),
            outside: outside.to_string(),
            state,
            threads: Vec::new(),
        };
        wire.reshape(shape);
        for (from, to, seed) in [(0, 1, 0x9e37_79b9_7f4a_7c15), (1, 0, 0xd1b5_4a32_d192_ed03)] {
            let (send, receive) = channel();
            let (source, sink) = (wire_ends[from].clone(), wire_ends[to].clone());
            let (reading, writing) = (wire.state.clone(), wire.state.clone());
            wire.threads.push(std::thread::spawn(move || {
                read_side(&source, &send, &reading, XorShift(seed))
            }));
            wire.threads.push(std::thread::spawn(move || {
                write_side(&sink, &receive, &writing)
            }));
        }
        wire
    }

    /// The device on router A's side.
    pub fn inside_name(&self) -> &str {
        &self.inside
    }

    /// The device on the public network's side.
    pub fn outside_name(&self) -> &str {
        &self.outside
    }

    /// Changes delay and loss from the next packet on.
    pub fn reshape(&self, shape: Shape) {
        let micros = u64::try_from(shape.delay.as_micros()).unwrap_or(u64::MAX);
        self.state.delay_micros.store(micros, Ordering::Relaxed);
        let loss = (shape.loss.clamp(0.0, 1.0) * 1_000_000.0) as u32;
        self.state.loss_per_million.store(loss, Ordering::Relaxed);
    }

    /// While stalled, every packet is dropped (both ways), as on a line that went dead.
    pub fn stall(&self, stalled: bool) {
        self.state.stalled.store(stalled, Ordering::Relaxed);
    }

    /// Packets carried and dropped so far (both ways).
    pub fn counts(&self) -> (u64, u64) {
        (
            self.state.carried.load(Ordering::Relaxed),
            self.state.dropped.load(Ordering::Relaxed),
        )
    }
}

impl Drop for Wire {
    fn drop(&mut self) {
        self.state.stop.store(true, Ordering::Relaxed);
        for thread in self.threads.drain(..) {
            let _ = thread.join();
        }
    }
}

fn read_side(
    source: &OwnedFd,
    send: &Sender<(Instant, Vec<u8>)>,
    state: &State,
    mut rng: XorShift,
) {
    let mut buffer = vec![0u8; 65_536];
    while !state.stop.load(Ordering::Relaxed) {
        let mut poll = libc::pollfd {
            fd: source.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        };
        // SAFETY: one valid pollfd.
        let ready = unsafe { libc::poll(&mut poll, 1, TICK.as_millis() as libc::c_int) };
        if ready <= 0 {
            continue;
        }
        loop {
            // SAFETY: reading into our own buffer of its length.
            let read =
                unsafe { libc::read(source.as_raw_fd(), buffer.as_mut_ptr().cast(), buffer.len()) };
            if read <= 0 {
                break;
            }
            let lost = state.stalled.load(Ordering::Relaxed)
                || rng.next_per_million() < state.loss_per_million.load(Ordering::Relaxed);
            if lost {
                state.dropped.fetch_add(1, Ordering::Relaxed);
                continue;
            }
            let delay = Duration::from_micros(state.delay_micros.load(Ordering::Relaxed));
            let packet = buffer[..read as usize].to_vec();
            if send.send((Instant::now() + delay, packet)).is_err() {
                return;
            }
        }
    }
}

fn write_side(sink: &OwnedFd, receive: &Receiver<(Instant, Vec<u8>)>, state: &State) {
    loop {
        match receive.recv_timeout(TICK) {
            Ok((due, packet)) => {
                let wait = due.saturating_duration_since(Instant::now());
                if !wait.is_zero() {
                    std::thread::sleep(wait);
                }
                // SAFETY: writing our own packet buffer; a full queue drops it, as a line would.
                let written =
                    unsafe { libc::write(sink.as_raw_fd(), packet.as_ptr().cast(), packet.len()) };
                if written > 0 {
                    state.carried.fetch_add(1, Ordering::Relaxed);
                } else {
                    state.dropped.fetch_add(1, Ordering::Relaxed);
                }
            }
            Err(RecvTimeoutError::Timeout) if state.stop.load(Ordering::Relaxed) => return,
            Err(RecvTimeoutError::Timeout) => {}
            Err(RecvTimeoutError::Disconnected) => return,
        }
    }
}
