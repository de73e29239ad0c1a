//! An in-process duplex: two [`Channel`] ends joined by queues, for `protocol test`.
//!
//! [`turn_taking_duplex`] also makes the two sides take turns: a side runs from the moment
//! it receives a frame until it waits for the next one, and only then may the other side
//! go on. Both sides of a self-play call hooks in one Python interpreter, so running them
//! strictly in turn means the GIL never changes hands under contention; every hand-over is
//! one wake-up of the side whose frame is ready. The protocol flows are turn-based already
//! (a side waits for its peer's frame before it acts), so nothing they do changes.

use std::collections::VecDeque;
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use serde_json::Value;

use super::{Bell, Channel, ChannelError};

/// One end of an in-memory duplex.
pub struct MemoryChannel {
    link: Arc<Link>,
    /// This end's index; the peer is `1 - side`.
    side: usize,
    recv_timeout: Option<Duration>,
    /// Set once `recv` has reported that the peer closed.
    peer_ended: bool,
}

struct Link {
    state: Mutex<LinkState>,
    changed: Condvar,
}

struct LinkState {
    /// Frames waiting for each end.
    inbox: [VecDeque<Value>; 2],
    /// Whether each end may still send (false after `close` or drop).
    sending: [bool; 2],
    /// Whether each end still exists.
    present: [bool; 2],
    /// Whether the ends take turns (see the module docs).
    takes_turns: bool,
    /// On a turn-taking duplex, the end that is running, if any.
    turn: Option<usize>,
    /// What each end rings when something arrives for it ([`Channel::ring_on_arrival`]).
    bells: [Option<Arc<Bell>>; 2],
}

impl LinkState {
    fn ring(&self, side: usize) {
        if let Some(bell) = &self.bells[side] {
            bell.ring();
        }
    }
}

impl Link {
    fn lock(&self) -> MutexGuard<'_, LinkState> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Waits for a change until `deadline` (`None`: for as long as it takes).
    fn wait<'a>(
        &self,
        state: MutexGuard<'a, LinkState>,
        deadline: Option<Instant>,
    ) -> MutexGuard<'a, LinkState> {
        match deadline {
            None => self
                .changed
                .wait(state)
                .unwrap_or_else(PoisonError::into_inner),
            Some(deadline) => {
                let left = deadline.saturating_duration_since(Instant::now());
                match self.changed.wait_timeout(state, left) {
                    Ok((guard, _)) => guard,
                    Err(poisoned) => poisoned.into_inner().0,
                }
            }
        }
    }
}

/// Two connected ends: what one sends, the other receives, in order. Both run freely.
pub fn duplex() -> (MemoryChannel, MemoryChannel) {
    pair(false)
}

/// Two connected ends that take turns (see the module docs).
pub fn turn_taking_duplex() -> (MemoryChannel, MemoryChannel) {
    pair(true)
}

fn pair(takes_turns: bool) -> (MemoryChannel, MemoryChannel) {
    let link = Arc::new(Link {
        state: Mutex::new(LinkState {
            inbox: [VecDeque::new(), VecDeque::new()],
            sending: [true; 2],
            present: [true; 2],
            takes_turns,
            turn: None,
            bells: [None, None],
        }),
        changed: Condvar::new(),
    });
    let end = |side| MemoryChannel {
        link: link.clone(),
        side,
        recv_timeout: None,
        peer_ended: false,
    };
    (end(0), end(1))
}

/// Waits for, and takes, one end's first turn of a turn-taking duplex: its work before its
/// first receive (hooks initialisation, say) then takes turns too.
pub struct FirstTurn {
    link: Arc<Link>,
    side: usize,
}

impl FirstTurn {
    pub fn take(self) {
        let mut state = self.link.lock();
        if !state.takes_turns {
            return;
        }
        while state.turn.is_some_and(|holder| holder != self.side) {
            state = self.link.wait(state, None);
        }
        state.turn = Some(self.side);
    }
}

impl MemoryChannel {
    /// The handle to this end's first turn (to take on the thread that will use the end).
    pub fn first_turn(&self) -> FirstTurn {
        FirstTurn {
            link: self.link.clone(),
            side: self.side,
        }
    }

    /// Makes `recv` give up with [`ChannelError::Timeout`] after `timeout` of silence.
    pub fn with_recv_timeout(mut self, timeout: Duration) -> Self {
        self.recv_timeout = Some(timeout);
        self
    }

    /// This end, with every outgoing frame passed through `rewrite` first: a peer that
    /// records, tampers with or swaps what it sends (tests, the adversarial suite).
    pub fn rewriting_sends(
        self,
        rewrite: impl FnMut(&mut Value) + Send + 'static,
    ) -> RewritingSends {
        RewritingSends {
            inner: self,
            rewrite: Box::new(rewrite),
        }
    }

    fn peer(&self) -> usize {
        1 - self.side
    }

    /// Waits for the next frame until `deadline` (`Ok(None)`: none came in time). On a
    /// turn-taking duplex, gives up the turn while waiting and holds it again on return.
    fn next_frame(&mut self, deadline: Option<Instant>) -> Result<Option<Value>, ChannelError> {
        let (side, peer) = (self.side, self.peer());
        let mut state = self.link.lock();
        if state.takes_turns {
            // This side's turn ends: the peer may take it (and the frames sent meanwhile).
            if state.turn == Some(side) {
                state.turn = None;
            }
            self.link.changed.notify_all();
        }
        loop {
            let ready = !state.inbox[side].is_empty()
                || !state.sending[peer]
                || deadline.is_some_and(|d| Instant::now() >= d);
            if !ready {
                state = self.link.wait(state, deadline);
                continue;
            }
            if state.takes_turns {
                if state.turn.is_some() {
                    // Something to return, once the peer has finished its turn.
                    state = self.link.wait(state, None);
                    continue;
                }
                state.turn = Some(side);
            }
            return match state.inbox[side].pop_front() {
                Some(frame) => Ok(Some(frame)),
                None if !state.sending[peer] => {
                    self.peer_ended = true;
                    Err(ChannelError::Closed("peer closed the channel".into()))
                }
                None => Ok(None),
            };
        }
    }
}

impl Channel for MemoryChannel {
    fn send(&mut self, frame: &Value) -> Result<(), ChannelError> {
        let peer = self.peer();
        let mut state = self.link.lock();
        if !state.sending[self.side] {
            return Err(ChannelError::Closed("channel closed locally".into()));
        }
        if !state.present[peer] {
            return Err(ChannelError::Closed("peer is gone".into()));
        }
        if self.peer_ended {
            return Err(ChannelError::Closed("peer closed the channel".into()));
        }
        state.inbox[peer].push_back(frame.clone());
        state.ring(peer);
        // A turn-taking peer cannot go on before this side waits, which wakes it then.
        if !state.takes_turns {
            self.link.changed.notify_all();
        }
        Ok(())
    }

    fn recv(&mut self) -> Result<Value, ChannelError> {
        let deadline = self.recv_timeout.map(|timeout| Instant::now() + timeout);
        self.next_frame(deadline)?.ok_or(ChannelError::Timeout)
    }

    fn recv_timeout(&mut self, timeout: Duration) -> Result<Option<Value>, ChannelError> {
        self.next_frame(Some(Instant::now() + timeout))
    }

    fn close(&mut self) -> Result<(), ChannelError> {
        let mut state = self.link.lock();
        state.sending[self.side] = false;
        state.ring(self.peer());
        drop(state);
        self.link.changed.notify_all();
        Ok(())
    }

    fn ring_on_arrival(&mut self, bell: Arc<Bell>) {
        let mut state = self.link.lock();
        bell.ring();
        state.bells[self.side] = Some(bell);
    }
}

impl Drop for MemoryChannel {
    fn drop(&mut self) {
        let side = self.side;
        let mut state = self.link.lock();
        state.sending[side] = false;
        state.present[side] = false;
        if state.turn == Some(side) {
            state.turn = None;
        }
        state.ring(1 - side);
        drop(state);
        self.link.changed.notify_all();
    }
}

/// A [`MemoryChannel`] end that rewrites what it sends ([`MemoryChannel::rewriting_sends`]).
pub struct RewritingSends {
    inner: MemoryChannel,
    rewrite: Box<dyn FnMut(&mut Value) + Send>,
}

impl Channel for RewritingSends {
    fn send(&mut self, frame: &Value) -> Result<(), ChannelError> {
        let mut frame = frame.clone();
        (self.rewrite)(&mut frame);
        self.inner.send(&frame)
    }

    fn recv(&mut self) -> Result<Value, ChannelError> {
        self.inner.recv()
    }

    fn recv_timeout(&mut self, timeout: Duration) -> Result<Option<Value>, ChannelError> {
        self.inner.recv_timeout(timeout)
    }

    fn close(&mut self) -> Result<(), ChannelError> {
        self.inner.close()
    }

    fn ring_on_arrival(&mut self, bell: Arc<Bell>) {
        self.inner.ring_on_arrival(bell);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn frames_queued_before_close_are_still_delivered() {
        for (mut host, mut guest) in [duplex(), turn_taking_duplex()] {
            host.send(&json!({"action": "a"})).unwrap();
            host.send(&json!({"action": "end"})).unwrap();
            host.close().unwrap();
            drop(host);
            assert_eq!(guest.recv().unwrap(), json!({"action": "a"}));
            assert_eq!(guest.recv().unwrap(), json!({"action": "end"}));
            assert!(matches!(guest.recv(), Err(ChannelError::Closed(_))));
        }
    }

    #[test]
    fn a_send_a_close_and_a_drop_ring_the_peers_bell() {
        let (mut host, mut guest) = duplex();
        let bell = Arc::new(Bell::default());
        guest.ring_on_arrival(Arc::clone(&bell));
        assert!(bell.wait(Duration::ZERO), "set: rung at once");
        assert!(!bell.wait(Duration::ZERO));
        host.send(&json!({"n": 1})).unwrap();
        assert!(bell.wait(Duration::ZERO), "a frame rang");
        host.close().unwrap();
        assert!(bell.wait(Duration::ZERO), "the close rang");
        let (host, mut guest) = duplex();
        guest.ring_on_arrival(Arc::clone(&bell));
        assert!(bell.wait(Duration::ZERO));
        drop(host);
        assert!(bell.wait(Duration::ZERO), "the drop rang");
    }

    #[test]
    fn a_silent_peer_times_out() {
        let (_host, guest) = duplex();
        let mut guest = guest.with_recv_timeout(Duration::from_millis(10));
        assert_eq!(guest.recv(), Err(ChannelError::Timeout));
        let (_host, mut guest) = turn_taking_duplex();
        assert_eq!(guest.recv_timeout(Duration::from_millis(10)), Ok(None));
    }

    #[test]
    fn sending_after_the_peer_closed_is_refused_once_recv_said_so() {
        let (mut host, mut guest) = duplex();
        guest.close().unwrap();
        host.send(&json!({"action": "still listening?"})).unwrap();
        assert!(matches!(host.recv(), Err(ChannelError::Closed(_))));
        assert!(matches!(
            host.send(&json!({"action": "anyone?"})),
            Err(ChannelError::Closed(_))
        ));
    }

    #[test]
    fn sending_to_a_dropped_end_fails() {
        let (mut host, guest) = duplex();
        drop(guest);
        assert!(matches!(
            host.send(&json!({"action": "a"})),
            Err(ChannelError::Closed(_))
        ));
    }

    /// Each side logs "start" and "end" around its work between two receives (sending comes
    /// first); with turns no two sides' work ever overlaps, and every frame still arrives
    /// in order.
    #[test]
    fn turn_taking_sides_never_run_at_once() {
        let (host, guest) = turn_taking_duplex();
        let log = Arc::new(Mutex::new(Vec::<String>::new()));
        let play = |mut channel: MemoryChannel, name: &'static str, first: bool| {
            let log = log.clone();
            std::thread::spawn(move || {
                channel.first_turn().take();
                // Work goes on after the send, as an engine's does (display, events).
                let work = |channel: &mut MemoryChannel, round: u64| {
                    log.lock().unwrap().push(format!("{name} start"));
                    let _ = channel.send(&json!({"round": round})); // the last finds no peer
                    std::thread::sleep(Duration::from_millis(2));
                    log.lock().unwrap().push(format!("{name} end"));
                };
                if first {
                    work(&mut channel, 0);
                }
                for round in 0..5 {
                    let frame = channel.recv().unwrap();
                    assert_eq!(frame["round"], round);
                    work(&mut channel, round + u64::from(first));
                }
            })
        };
        let host = play(host, "host", true);
        let guest = play(guest, "guest", false);
        host.join().unwrap();
        guest.join().unwrap();
        let log = log.lock().unwrap();
        assert_eq!(log.len(), 22);
        for pair in log.chunks(2) {
            let side = pair[0].split(' ').next().unwrap();
            assert_eq!(pair, [format!("{side} start"), format!("{side} end")]);
        }
    }
}
