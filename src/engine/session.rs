//! One side's running session: the shared steps every flow mode is built from (validated
//! send and receive, display, events, snapshot phases).

use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde_json::{Map, Value, json};

use super::windows;
use super::{EngineConfig, EngineError, Outcome, init_context};
use crate::decision::{Desk, WindowStop};
use crate::hooks::{HookError, HookResult, Hooks, HostMetadata, Shown};
use crate::records::{Event, MessageDirection};
use crate::spec::{Direction, FlowMode, Role, Spec};
use crate::transport::{Channel, ChannelError};

pub(crate) struct Session<'a> {
    pub spec: &'a Spec,
    pub hooks: &'a mut dyn Hooks,
    channel: &'a mut dyn Channel,
    pub config: &'a EngineConfig,
    /// This side's decision windows (human and hybrid control).
    pub desk: Option<Arc<Desk>>,
    /// How long the peer's next frame may take ([`super::peer_wait`]).
    pub peer_wait: Duration,
}

impl<'a> Session<'a> {
    pub fn new(
        spec: &'a Spec,
        hooks: &'a mut dyn Hooks,
        channel: &'a mut dyn Channel,
        config: &'a EngineConfig,
    ) -> Session<'a> {
        Session {
            spec,
            hooks,
            channel,
            desk: None,
            peer_wait: super::peer_wait(spec, &config.options, config.peer_timeout),
            config,
        }
    }

    pub fn role(&self) -> Role {
        self.config.role
    }

    /// `proto_init`, the engine's snapshot skeleton, and the host metadata.
    pub fn start(&mut self, mode: FlowMode) -> Result<Option<HostMetadata>, EngineError> {
        let capabilities = mode.capabilities();
        self.hooks.init(&init_context(
            self.spec,
            self.config,
            capabilities.decision_windows,
            self.desk.clone(),
        ))?;
        let role = self.role().as_str();
        let started_at = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap_or_default()
            .as_secs_f64();
        let patch = json!({
            "phase": "waiting_peer",
            "role": role,
            "protocol_id": self.spec.value().get("protocol_id").and_then(Value::as_str).filter(|s| !s.is_empty()).unwrap_or(self.spec.name()),
            "protocol_name": self.spec.name(),
            "started_at": started_at,
            "last_event": {"summary": "Waiting for peer", "structured": {"role": role}},
        });
        self.hooks.snapshot_update(into_map(patch))?;
        if self.role() == Role::Host || capabilities.both_sides_describe {
            return Ok(Some(self.hooks.host_metadata()?));
        }
        Ok(None)
    }

    /// The direction of what this side sends.
    pub fn outbound(&self) -> Direction {
        Direction::sent_by(self.role())
    }

    /// The direction of what this side receives.
    pub fn inbound(&self) -> Direction {
        Direction::sent_by(self.role().peer())
    }

    /// Host: receives the guest's join and answers with `proto_host_handle_join`, which must
    /// return a ready message. Returns that result (it may also end the session).
    pub fn host_handshake(&mut self) -> Result<HookResult, EngineError> {
        let join = self.recv()?;
        let ready = self.hooks.host_handle_join(&join)?;
        let Some(message) = ready.response.clone() else {
            return Err(EngineError::Protocol(
                "host join hook (proto_host_handle_join) did not return a ready response".into(),
            ));
        };
        self.send_as("proto_host_handle_join", &message, self.outbound())?;
        Ok(ready)
    }

    /// Guest: sends `proto_guest_join_message` and hands the host's ready to
    /// `proto_guest_handle_ready`.
    pub fn guest_handshake(&mut self) -> Result<(), EngineError> {
        let join = self.hooks.guest_join_message()?.unwrap_or_default();
        self.send_as("proto_guest_join_message", &join, self.outbound())?;
        let ready = self.recv()?;
        self.hooks.guest_handle_ready(&ready)?;
        Ok(())
    }

    /// Validates, displays, records and sends a frame made by `source` (a hook or the engine).
    /// Returns the display text.
    pub fn send_as(
        &mut self,
        source: &str,
        frame: &Value,
        direction: Direction,
    ) -> Result<Option<String>, EngineError> {
        crate::spec::validate_message(self.spec.value(), frame, Some(direction), None).map_err(
            |error| EngineError::InvalidOutbound {
                source_name: source.to_string(),
                direction,
                error,
                frame: frame.clone(),
            },
        )?;
        let text = self.show(frame, Shown::Sent)?;
        self.emit_message(MessageDirection::Sent, frame, text.as_deref());
        self.send_raw(frame)?;
        Ok(text)
    }

    /// Sends a frame the protocol leaves unvalidated (`{"action":"end"}`, commit-mismatch notice).
    pub fn send_raw(&mut self, frame: &Value) -> Result<(), EngineError> {
        self.channel.send(frame).map_err(EngineError::Channel)
    }

    /// Receives the next frame without validating it, waiting at most [`Session::peer_wait`].
    pub fn recv_raw(&mut self) -> Result<Value, EngineError> {
        match self.channel.recv_timeout(self.peer_wait) {
            Ok(Some(frame)) => Ok(frame),
            Ok(None) => Err(EngineError::PeerTimeout(self.peer_wait)),
            Err(ChannelError::Malformed(reason)) => Err(EngineError::InvalidInbound {
                direction: self.inbound(),
                error: crate::spec::MessageError(reason),
                frame: Value::Null,
            }),
            Err(other) => Err(EngineError::Channel(other)),
        }
    }

    pub fn recv_raw_timeout(&mut self, timeout: Duration) -> Result<Option<Value>, EngineError> {
        self.channel
            .recv_timeout(timeout)
            .map_err(EngineError::Channel)
    }

    /// Validates, displays and records an inbound frame.
    pub fn accept(&mut self, frame: &Value, direction: Direction) -> Result<(), EngineError> {
        crate::spec::validate_message(self.spec.value(), frame, Some(direction), None).map_err(
            |error| EngineError::InvalidInbound {
                direction,
                error,
                frame: frame.clone(),
            },
        )?;
        let text = self.show(frame, Shown::Received)?;
        self.emit_message(MessageDirection::Received, frame, text.as_deref());
        Ok(())
    }

    /// Receives, validates, displays and records the next frame.
    pub fn recv(&mut self) -> Result<Value, EngineError> {
        let frame = self.recv_raw()?;
        self.accept(&frame, self.inbound())?;
        Ok(frame)
    }

    fn show(&mut self, frame: &Value, shown: Shown) -> Result<Option<String>, HookError> {
        let text = self.hooks.display(frame, shown)?.filter(|t| !t.is_empty());
        if let Some(text) = &text {
            (self.config.display)(self.role(), text);
        }
        Ok(text)
    }

    fn emit_message(&self, direction: MessageDirection, frame: &Value, summary: Option<&str>) {
        let event = Event::ProtocolMessage {
            direction,
            msg: frame.clone(),
        };
        self.config.events.emit_with_summary(event, summary);
    }

    pub fn emit(&self, event: Event) {
        self.config.events.emit(event);
    }

    pub fn phase(
        &mut self,
        phase: &str,
        summary: &str,
        structured: Value,
    ) -> Result<(), EngineError> {
        Ok(self
            .hooks
            .snapshot_phase(phase, summary, into_map(structured))?)
    }

    /// Ends with `session_ended` and a final snapshot phase.
    pub fn finish(
        &mut self,
        completed: bool,
        reason: &str,
        phase: &str,
        summary: &str,
    ) -> Result<(), EngineError> {
        if let Some(desk) = &self.desk {
            desk.finish();
        }
        self.emit(Event::ended(completed, reason));
        self.phase(phase, summary, json!({"reason": reason}))
    }

    /// Tells the peer why this side stops, with `{"action":"error","round","reason"}`, when
    /// the spec declares such a message in our direction (otherwise the peer only sees us
    /// leave, as with the reference). Delivery is best effort: we are leaving either way.
    pub fn tell_peer_why(&mut self, round: u64, reason: &str) {
        let frame = json!({"action": "error", "round": round, "reason": reason});
        // send_as validates first: a spec without such a message gets nothing sent.
        let _ = self.send_as("the engine (error)", &frame, self.outbound());
    }

    /// A decision window stopped this side (a deadline, a refused decision, an abort): the
    /// peer is told with the first `error` frame the spec accepts (our reason, else
    /// `aborted`, with or without a round), then the end is recorded. Not a crash.
    pub fn stopped_by_window(&mut self, stop: &WindowStop) -> Outcome {
        let (reason, detail, winner, round) = windows::stop_outcome(stop, self.role().peer());
        let frames = [reason.as_str(), "aborted"].into_iter().flat_map(|why| {
            [
                json!({"action": "error", "round": round, "reason": why}),
                json!({"action": "error", "reason": why}),
            ]
        });
        for frame in frames {
            let valid = crate::spec::validate_message(
                self.spec.value(),
                &frame,
                Some(self.outbound()),
                None,
            )
            .is_ok();
            if valid {
                let _ = self.send_as("the engine (error)", &frame, self.outbound());
                break;
            }
        }
        self.emit(windows::stop_event(&reason, &detail));
        let _ = self.phase("aborted", &detail, json!({"reason": reason}));
        windows::stopped(reason, winner)
    }

    /// The peer sent an `error` frame: it is leaving, and says why.
    pub fn peer_gave_up(&mut self, round: u64, reason: &str) -> Result<Outcome, EngineError> {
        self.emit(Event::PeerError {
            round,
            reason: reason.to_string(),
        });
        self.emit(Event::SessionEnded {
            completed: Some(false),
            reason: Some("peer_error".into()),
            peer_reason: Some(reason.to_string()),
            error: None,
            detail: None,
        });
        self.phase(
            "aborted",
            &format!("The peer stopped: {reason}"),
            json!({"round": round, "reason": reason}),
        )?;
        Ok(Outcome::ended(
            false,
            Some(&format!("peer_error: {reason}")),
        ))
    }

    pub fn pace(&self) {
        if !self.config.pace.is_zero() {
            std::thread::sleep(self.config.pace);
        }
    }

    /// The peer went away: recorded as an outcome, not an error. If it said why before it
    /// left (an `error` frame still queued, e.g. while we were sending), that reason wins.
    pub fn peer_disconnected(&mut self) -> Outcome {
        if let Some(last_words) = self.peer_last_words() {
            let reason = last_words
                .get("reason")
                .and_then(Value::as_str)
                .unwrap_or("unspecified")
                .to_string();
            let round = last_words.get("round").and_then(Value::as_u64).unwrap_or(0);
            self.emit(Event::ProtocolMessage {
                direction: MessageDirection::Received,
                msg: last_words,
            });
            if let Ok(outcome) = self.peer_gave_up(round, &reason) {
                return outcome;
            }
        }
        self.emit(Event::ended(false, "peer_disconnected"));
        let _ = self.phase(
            "aborted",
            "Peer disconnected",
            json!({"reason": "peer_disconnected"}),
        );
        Outcome::ended(false, Some("peer_disconnected"))
    }

    /// The peer sent nothing for `waited`: it is told why we stop with the first `error`
    /// frame the spec accepts (none: it only sees us leave), and the end is recorded.
    pub fn peer_timed_out(&mut self, waited: Duration) -> Outcome {
        let detail = format!("the peer sent nothing for {} s", waited.as_secs());
        for frame in [
            json!({"action": "error", "round": 0, "reason": "peer_timeout"}),
            json!({"action": "error", "reason": "peer_timeout"}),
        ] {
            if crate::spec::validate_message(self.spec.value(), &frame, Some(self.outbound()), None)
                .is_ok()
            {
                let _ = self.send_as("the engine (error)", &frame, self.outbound());
                break;
            }
        }
        self.emit(Event::SessionEnded {
            completed: Some(false),
            reason: Some("peer_timeout".into()),
            peer_reason: None,
            error: None,
            detail: Some(detail.clone()),
        });
        let _ = self.phase("aborted", &detail, json!({"reason": "peer_timeout"}));
        Outcome::ended(false, Some("peer_timeout"))
    }

    /// The last `error` frame the peer managed to send before its channel closed.
    fn peer_last_words(&mut self) -> Option<Value> {
        let mut last = None;
        while let Ok(Some(frame)) = self.channel.recv_timeout(Duration::ZERO) {
            let valid = crate::spec::validate_message(
                self.spec.value(),
                &frame,
                Some(self.inbound()),
                None,
            )
            .is_ok();
            if valid && frame.get("action").and_then(Value::as_str) == Some("error") {
                last = Some(frame);
            }
        }
        last
    }

    /// Writes what stopped this side to events.jsonl and the snapshot, so nothing is lost.
    pub fn record_failure(&mut self, error: &EngineError) {
        let text = error.to_string();
        if let EngineError::InvalidInbound {
            frame,
            error: reason,
            direction,
        } = error
        {
            self.emit(Event::message_rejected(
                direction.as_str(),
                &reason.0,
                frame,
            ));
        }
        let short: String = text.chars().take(200).collect();
        self.emit(Event::SessionEnded {
            completed: Some(false),
            reason: Some("engine_error".into()),
            peer_reason: None,
            error: Some(short.clone()),
            detail: None,
        });
        let _ = self.phase("aborted", &short, json!({"reason": "engine_error"}));
    }

    /// Closes our sending side so everything sent reaches the peer.
    pub fn close(&mut self) {
        let _ = self.channel.close();
    }
}

pub(crate) fn into_map(value: Value) -> Map<String, Value> {
    match value {
        Value::Object(map) => map,
        _ => Map::new(),
    }
}
