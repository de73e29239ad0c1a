//! The `_sys` layer under the engine: heartbeat pings, pong replies, RTT stats and the
//! silence watchdog (docs/p2p-wire.md#heartbeat).
//!
//! Frames carrying a `_sys` key never reach the engine. Pings are answered whenever their
//! `probe_id` is a 1–64 character string, whether or not our own heartbeat runs (the
//! reference probes RTT even with its heartbeat off). Pings are only sent once the engine
//! starts the heartbeat, i.e. after the handshake, exactly like the reference. The watchdog
//! only reports (`peer_unresponsive`, `peer_resumed`); it never ends the session.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, MutexGuard, OnceLock, PoisonError};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use serde_json::Value;

use crate::records::Event;
use crate::wire::sys::Sys;

/// Receives transport events ([`Event::PeerUnresponsive`], [`Event::PeerResumed`]), e.g. to
/// append them to `events.jsonl`. Called from a runtime worker thread: keep it quick.
pub type EventSink = Arc<dyn Fn(Event) + Send + Sync>;

/// How often the watchdog looks at the silence.
const WATCHDOG_TICK: Duration = Duration::from_secs(1);
/// How often `peer_unresponsive` is repeated while the peer stays silent.
const REEMIT_INTERVAL: Duration = Duration::from_secs(30);
/// Unanswered pings remembered for RTT matching; older ones are forgotten.
const MAX_PENDING_PROBES: usize = 64;

/// When to ping and when to call the peer unresponsive.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HeartbeatConfig {
    /// Time between our pings (the first one goes out after one interval).
    pub interval: Duration,
    /// Silence after which `peer_unresponsive` is reported.
    pub timeout: Duration,
}

impl HeartbeatConfig {
    /// The reference CLI's defaults: `--heartbeat-interval 10 --heartbeat-timeout 30`.
    pub const REFERENCE_DEFAULT: HeartbeatConfig = HeartbeatConfig {
        interval: Duration::from_secs(10),
        timeout: Duration::from_secs(30),
    };

    /// Reads the CLI's seconds the way the reference does: an interval of 0 (or less, or not a
    /// number) disables the heartbeat (`None`); a timeout of 0 or less means 3 × interval.
    pub fn from_seconds(interval: f64, timeout: f64) -> Option<HeartbeatConfig> {
        let interval = Duration::try_from_secs_f64(interval)
            .ok()
            .filter(|d| !d.is_zero())?;
        let timeout = Duration::try_from_secs_f64(timeout)
            .ok()
            .filter(|d| !d.is_zero())
            .unwrap_or_else(|| interval.saturating_mul(3));
        Some(HeartbeatConfig { interval, timeout })
    }
}

/// Round-trip times measured from our pings and the peer's pongs.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct RttStats {
    /// Pongs matched so far.
    pub samples: u64,
    /// The latest round trip.
    pub last: Option<Duration>,
    /// Exponentially weighted average (0.75 old, 0.25 new), like the reference.
    pub smoothed: Option<Duration>,
}

/// What to do with a frame that arrived from the peer.
#[derive(Debug, PartialEq)]
pub(crate) enum Received {
    /// A business frame for the engine.
    Business(Value),
    /// A `_sys` frame that needs this answer.
    Reply(Value),
    /// A `_sys` frame fully handled here.
    Absorbed,
}

/// Shared state of the `_sys` layer (reader task, pinger, watchdog, channel).
pub(crate) struct SysLayer {
    state: Mutex<SysState>,
    events: OnceLock<EventSink>,
    probe_prefix: String,
}

struct SysState {
    last_heard: Instant,
    unresponsive: bool,
    next_reemit: Instant,
    probe_seq: u64,
    pending: VecDeque<(String, Instant)>,
    rtt: RttStats,
}

impl SysLayer {
    pub(crate) fn new() -> Self {
        let now = Instant::now();
        SysLayer {
            state: Mutex::new(SysState {
                last_heard: now,
                unresponsive: false,
                next_reemit: now,
                probe_seq: 0,
                pending: VecDeque::new(),
                rtt: RttStats::default(),
            }),
            events: OnceLock::new(),
            probe_prefix: format!("{:012x}", rand::random::<u64>() & 0xffff_ffff_ffff),
        }
    }

    fn lock(&self) -> MutexGuard<'_, SysState> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn emit(&self, event: Event) {
        if let Some(sink) = self.events.get() {
            sink(event);
        }
    }

    /// Installs the event sink (the first one wins) and restarts the silence clock.
    pub(crate) fn start_watching(&self, events: EventSink) {
        let _ = self.events.set(events);
        let mut state = self.lock();
        state.last_heard = Instant::now();
        state.unresponsive = false;
    }

    /// Records that something (anything) arrived from the peer.
    pub(crate) fn heard_from_peer(&self) {
        let resumed = {
            let mut state = self.lock();
            state.last_heard = Instant::now();
            std::mem::take(&mut state.unresponsive)
        };
        if resumed {
            self.emit(Event::PeerResumed {});
        }
    }

    /// Sorts a received frame into business traffic or `_sys` handling.
    pub(crate) fn classify(&self, frame: Value) -> Received {
        if !Sys::claimed_by(&frame) {
            return Received::Business(frame);
        }
        match Sys::parse(&frame) {
            Some(Sys::Ping { probe_id, .. }) => Received::Reply(Sys::Pong { probe_id }.to_value()),
            Some(Sys::Pong { probe_id }) => {
                self.record_pong(&probe_id);
                Received::Absorbed
            }
            None => Received::Absorbed,
        }
    }

    fn record_pong(&self, probe_id: &str) {
        let mut state = self.lock();
        let Some(index) = state.pending.iter().position(|(id, _)| id == probe_id) else {
            return;
        };
        let Some((_, sent)) = state.pending.remove(index) else {
            return;
        };
        let rtt = sent.elapsed();
        let stats = &mut state.rtt;
        stats.samples += 1;
        stats.last = Some(rtt);
        stats.smoothed = Some(match stats.smoothed {
            None => rtt,
            Some(old) => old.mul_f64(0.75) + rtt.mul_f64(0.25),
        });
    }

    /// A fresh ping frame, remembered for RTT matching.
    pub(crate) fn next_ping(&self) -> Value {
        let mut state = self.lock();
        state.probe_seq += 1;
        let probe_id = format!("{}-{:x}", self.probe_prefix, state.probe_seq);
        if state.pending.len() >= MAX_PENDING_PROBES {
            state.pending.pop_front();
        }
        state.pending.push_back((probe_id.clone(), Instant::now()));
        let unix_seconds = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap_or_default()
            .as_secs_f64();
        Sys::Ping {
            probe_id,
            ts: Some(unix_seconds),
        }
        .to_value()
    }

    pub(crate) fn rtt(&self) -> RttStats {
        self.lock().rtt
    }

    /// One watchdog step: reports the peer unresponsive after `timeout` of silence, and again
    /// every [`REEMIT_INTERVAL`] while it stays silent.
    fn check_silence(&self, timeout: Duration, now: Instant) {
        let elapsed = {
            let mut state = self.lock();
            let elapsed = now.saturating_duration_since(state.last_heard);
            let due = if state.unresponsive {
                now >= state.next_reemit
            } else {
                elapsed > timeout
            };
            if !due {
                return;
            }
            state.unresponsive = true;
            state.next_reemit = now + REEMIT_INTERVAL;
            elapsed
        };
        let tenths = (elapsed.as_secs_f64() * 10.0).round() / 10.0;
        self.emit(Event::PeerUnresponsive { elapsed: tenths });
    }
}

/// Sends a ping every `interval` (first after one interval) until `send` reports the channel
/// can no longer write.
pub(crate) async fn run_pinger(
    layer: Arc<SysLayer>,
    interval: Duration,
    send: impl Fn(Value) -> bool,
) {
    let mut ticks = tokio::time::interval_at(tokio::time::Instant::now() + interval, interval);
    ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        ticks.tick().await;
        if !send(layer.next_ping()) {
            return;
        }
    }
}

/// Checks the silence once a second, forever (the channel aborts it).
pub(crate) async fn run_watchdog(layer: Arc<SysLayer>, timeout: Duration) {
    let mut ticks =
        tokio::time::interval_at(tokio::time::Instant::now() + WATCHDOG_TICK, WATCHDOG_TICK);
    loop {
        ticks.tick().await;
        layer.check_silence(timeout, Instant::now());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    type Recorded = Arc<Mutex<Vec<Event>>>;

    fn recording_layer() -> (SysLayer, Recorded) {
        let layer = SysLayer::new();
        let seen = Arc::new(Mutex::new(Vec::new()));
        let sink = seen.clone();
        layer.start_watching(Arc::new(move |event: Event| {
            sink.lock().unwrap().push(event)
        }));
        (layer, seen)
    }

    #[test]
    fn cli_seconds_follow_the_reference() {
        assert_eq!(HeartbeatConfig::from_seconds(0.0, 30.0), None);
        assert_eq!(HeartbeatConfig::from_seconds(-1.0, 30.0), None);
        assert_eq!(HeartbeatConfig::from_seconds(f64::NAN, 30.0), None);
        let config = HeartbeatConfig::from_seconds(2.0, 0.0).unwrap();
        assert_eq!(config.timeout, Duration::from_secs(6));
        assert_eq!(
            HeartbeatConfig::from_seconds(10.0, 30.0),
            Some(HeartbeatConfig::REFERENCE_DEFAULT)
        );
    }

    #[test]
    fn pings_with_a_valid_probe_id_get_a_pong() {
        let layer = SysLayer::new();
        let ping = json!({"_sys": "ping", "probe_id": "abc-1", "ts": 1.5});
        assert_eq!(
            layer.classify(ping),
            Received::Reply(json!({"_sys": "pong", "probe_id": "abc-1"}))
        );
        for bad in [
            json!({"_sys": "ping"}),
            json!({"_sys": "ping", "probe_id": ""}),
            json!({"_sys": "ping", "probe_id": 7}),
            json!({"_sys": "ping", "probe_id": "é".repeat(65)}),
        ] {
            assert_eq!(layer.classify(bad), Received::Absorbed);
        }
        assert_eq!(
            layer.classify(json!({"_sys": "ping", "probe_id": "é".repeat(64)})),
            Received::Reply(json!({"_sys": "pong", "probe_id": "é".repeat(64)}))
        );
    }

    #[test]
    fn every_sys_frame_is_filtered_and_business_passes() {
        let layer = SysLayer::new();
        assert_eq!(
            layer.classify(json!({"_sys": "whatever"})),
            Received::Absorbed
        );
        assert_eq!(
            layer.classify(json!({"action": "move"})),
            Received::Business(json!({"action": "move"}))
        );
        assert_eq!(
            layer.classify(json!([1, 2])),
            Received::Business(json!([1, 2]))
        );
    }

    #[test]
    fn pongs_for_our_pings_update_rtt() {
        let layer = SysLayer::new();
        let ping = layer.next_ping();
        let id = ping["probe_id"].as_str().unwrap().to_string();
        assert!(id.len() <= crate::wire::sys::MAX_PROBE_ID_CHARS);
        assert!(ping["ts"].as_f64().unwrap() > 1.0e9);
        assert_eq!(
            layer.classify(json!({"_sys": "pong", "probe_id": "unknown"})),
            Received::Absorbed
        );
        assert_eq!(layer.rtt().samples, 0);
        layer.classify(json!({"_sys": "pong", "probe_id": id}));
        let rtt = layer.rtt();
        assert_eq!(rtt.samples, 1);
        assert_eq!(rtt.last, rtt.smoothed);
    }

    #[test]
    fn silence_is_reported_then_repeated_then_resumed() {
        let (layer, seen) = recording_layer();
        let start = Instant::now();
        layer.check_silence(Duration::from_secs(3), start + Duration::from_secs(2));
        assert!(seen.lock().unwrap().is_empty());
        layer.check_silence(Duration::from_secs(3), start + Duration::from_secs(4));
        layer.check_silence(Duration::from_secs(3), start + Duration::from_secs(5));
        assert_eq!(seen.lock().unwrap().len(), 1);
        layer.check_silence(Duration::from_secs(3), start + Duration::from_secs(35));
        layer.heard_from_peer();
        let events = seen.lock().unwrap().clone();
        let names: Vec<String> = events.iter().map(Event::name).collect();
        assert_eq!(
            names,
            ["peer_unresponsive", "peer_unresponsive", "peer_resumed"]
        );
        assert!(matches!(events[0], Event::PeerUnresponsive { elapsed } if elapsed >= 4.0));
    }
}
