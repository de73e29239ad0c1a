//! Every event a side records in `events.jsonl`, as one enum: the event's name is its
//! variant, its `data` object its fields (in the order written). Reading gives back a
//! [`RecordedEvent`], which keeps the lines this build does not know (the hooks' own events,
//! a newer peer's) as they are.

use std::path::Path;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::decision::{Choices, TimeoutAction, WindowMode, WindowOutcome};
use crate::spec::ControlMode;
use crate::spec::Role;

/// Which way a protocol message went.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum MessageDirection {
    Sent,
    Received,
}

/// How packets to the peer travel (iroh's connection type).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum PathKind {
    /// Straight to the peer's address (UDP, holes punched where NATs are in the way).
    Direct,
    /// Through a relay server.
    Relay,
    /// Both: a direct address not yet confirmed, and the relay.
    Mixed,
    /// No working path (yet).
    None,
}

/// Who told a member how its action ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ReceiptSource {
    /// The leader's receipt.
    Leader,
    /// The room's last checkpoint, verified, which counts the action as taken: the room ended
    /// and its receipt never came (the leader stopped first).
    TerminalCheckpoint,
}

/// One event. Optional fields are left out of the line when `None`; an event whose data
/// ends up empty is written without `data`, as the reference does.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", content = "data", rename_all = "snake_case")]
pub enum Event {
    /// The host published its invitation.
    InviteCreated {
        post_id: String,
        protocol_id: String,
        expires_at: String,
    },
    InvitationRenewed {
        post_id: String,
        expires_at: String,
    },
    /// The server refused a renewal for good (matched, cancelled or expired), or kept
    /// answering "later" until the invitation expired: renewing stops, and the host stops
    /// waiting once no handshake is under way.
    InvitationRenewFailed {
        post_id: String,
        error: String,
    },
    /// The host's renewal budget (`--invitation-ttl-minutes`) ran out.
    InvitationRenewStopped {
        post_id: String,
        reason: String,
    },
    /// The peer's connection and stream are open (before the handshake).
    PeerConnected {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        connection: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        dial_ms: Option<f64>,
    },
    /// How packets to the peer travel: recorded once the connection has a path, then at
    /// every change (e.g. from the relay to a direct path once holes are punched).
    PathChanged {
        path: PathKind,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        addr: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        relay_url: Option<String>,
    },
    /// A room's leader admitted this member (the server gave it its seat).
    GroupMemberAdmitted {
        group_id: String,
        leader_public_key: String,
        member_id: String,
        seat: u32,
    },
    /// A room's leader did not admit a dialer (no valid `join` in time, a bad signature, a
    /// seat the server would not give); `node_id` is the dialer's throw-away iroh id.
    GroupAdmissionRefused {
        node_id: String,
        reason: String,
    },
    /// A member checked the hand it was dealt against the leader's opened deal
    /// (docs/fair-deals.md): it is the committed deal.
    DealVerified {
        hand: String,
        commitment: String,
        seed: String,
    },
    /// A member checked the hand it was dealt against the leader's opened deal, and it is not
    /// the committed deal: why, and the evidence (the commitment, the opened seed, every
    /// seat's seed, the cards the committed deal gives this seat and the cards it was dealt).
    DealMismatch {
        hand: String,
        reason: String,
        commitment: String,
        seed: String,
        contributions: Map<String, Value>,
        expected: Vec<Value>,
        seen: Vec<Value>,
    },
    /// A verified envelope of the room's leader.
    GroupFrameReceived {
        group_id: String,
        leader_epoch: u64,
        seq: u64,
        frame_hash: String,
    },
    /// The leader let a member's channel go (it broke, fell silent, or sent what a member
    /// may not); the member keeps its seat and may come back.
    GroupMemberDisconnected {
        public_key: String,
        reason: String,
    },
    /// The leader took a member out of the room: the server no longer lists it as active
    /// (it left, or stopped heartbeating).
    GroupMemberLeft {
        public_key: String,
    },
    /// This leader lost its lease (the server fenced its epoch, or it could not renew it)
    /// and stopped leading.
    GroupLeaderFenced {
        reason: String,
    },
    /// The server refused or missed this member's heartbeat (its seat is at risk).
    GroupMemberHeartbeatFailed {
        reason: String,
    },
    /// The channel to the room's leader ended; the member asks the server what became of
    /// the room.
    GroupLeaderDisconnected {
        group_id: String,
        leader_epoch: u64,
        seq: u64,
    },
    /// This member took the room over: it leads `leader_epoch` from its checkpoint `seq`.
    GroupLeadershipClaimed {
        group_id: String,
        leader_epoch: u64,
        seq: u64,
    },
    /// A member that came back to this new leader had verified more of the old epoch than
    /// the checkpoint `claimed_seq` the room was claimed with: the new epoch starts from
    /// the checkpoint `seq` it handed over.
    GroupCheckpointHandedOver {
        seq: u64,
        claimed_seq: u64,
    },
    /// A checkpoint a member handed this new leader did not verify (it was not used).
    GroupCheckpointRefused {
        public_key: String,
        reason: String,
    },
    /// The room has a new leader, whom this member follows.
    GroupLeaderChanged {
        group_id: String,
        leader_public_key: String,
        leader_epoch: u64,
    },
    /// The leader's answer to one of this member's actions.
    GroupActionReceipt {
        status: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        client_seq: Option<u64>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        reason: Option<String>,
        /// `terminal_checkpoint` when no receipt came before the room ended and its last
        /// checkpoint counts the action as taken; absent for the leader's own receipt.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        source: Option<ReceiptSource>,
    },
    /// A table seat's own hook (`proto_group_choices`, `proto_group_autoplay`) failed or
    /// returned something unusable: the seat shows no choices for that step, plays nothing.
    GroupSeatHookFailed {
        hook: String,
        seq: u64,
        reason: String,
    },
    /// A host refused a dialer (failed or skipped handshake, unconfirmed session) and keeps
    /// waiting for its guest.
    GuestRefused {
        reason: String,
    },
    /// The handshake completed: who the peer is.
    PeerJoined {
        session_id: String,
        peer_public_key: String,
        peer_control_mode: ControlMode,
        protocol_id: String,
    },
    /// The heartbeat heard nothing for `elapsed` seconds.
    PeerUnresponsive {
        elapsed: f64,
    },
    /// The peer was heard again after [`Event::PeerUnresponsive`].
    PeerResumed {},
    ProtocolMessage {
        direction: MessageDirection,
        msg: Value,
    },
    /// A frame that failed validation (`direction` is the spec's, or `both` in free mode).
    MessageRejected {
        direction: String,
        error: String,
        msg: Value,
    },
    /// The peer sent an `error` frame: it is leaving, and says why.
    PeerError {
        round: u64,
        reason: String,
    },
    /// A reveal did not match its commitment.
    CommitMismatchDetected {
        round: u64,
        role: Role,
        expected: String,
        actual: Value,
    },
    /// The shadow judge's round result differs from the host's.
    BalanceMismatchDetected {
        round: u64,
        role: Role,
        mismatches: Value,
    },
    /// A decision window opened: this side waits for a person's move (human), or for an
    /// override of the agent's `intended` move (hybrid), until `deadline_at`.
    DecisionWindowOpened {
        match_key: String,
        match_value: Value,
        mode: WindowMode,
        value_field: String,
        choices: Choices,
        deadline_at: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        intended: Option<Value>,
    },
    /// A line of decisions.jsonl could not be read (not UTF-8, not a decision, too long);
    /// the lines after it are read as usual.
    DecisionLineSkipped {
        reason: String,
    },
    /// A submitted decision was refused (`reason`); the window stays open.
    DecisionRefused {
        match_key: String,
        match_value: Value,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        decision_id: Option<String>,
        reason: String,
    },
    /// A decision window closed: how, and what was played.
    DecisionWindowClosed {
        match_key: String,
        match_value: Value,
        outcome: WindowOutcome,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        decision: Option<Value>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        origin: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        action: Option<TimeoutAction>,
    },
    /// mental_poker: both layers of the deck are on the table.
    MpSetupCompleted {
        role: Role,
        deck_size: usize,
    },
    /// mental_poker: `who` drew the card `id_b` (an oblivious transfer; only its owner
    /// learns the face).
    DrawCompleted {
        who: Role,
        id_b: String,
    },
    /// mental_poker: a play passed its checks (the peer's: keys, face, ledger and rules).
    PlayVerified {
        who: Role,
        id_b: String,
    },
    /// mental_poker: the peer's play failed a check (`reason`: the check, or the rules').
    PlayRejected {
        who: Role,
        reason: String,
    },
    PassExchanged {
        who: Role,
    },
    AuditStarted {},
    AuditPassed {},
    /// The end-of-game audit found cheating or broken material; no receipt is signed.
    AuditFailed {
        reason: String,
        evidence: Value,
    },
    /// This side signed the transcript root (only ever after its audit passed).
    MpTerminalReceiptSigned {
        transcript_hash: String,
    },
    MpTerminalReceiptVerified {
        transcript_hash: String,
        peer_signature_ok: bool,
    },
    /// Our audit passed and our receipt went out, but the peer's never came: the game's
    /// result stands without its signature.
    MpTerminalReceiptMissing {
        transcript_hash: String,
        /// `peer_timeout` or `peer_disconnected`.
        reason: String,
    },
    /// A mental-poker game ended early: one structured reason, and what exactly happened.
    MentalPokerAborted {
        reason: String,
        detail: String,
    },
    /// A mental-poker game is over with both receipts verified.
    GameOver {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        outcome: Option<String>,
        audit_status: String,
    },
    /// This side's session is over (engine, end of session, or an abort).
    SessionEnded {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        completed: Option<bool>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        reason: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        peer_reason: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        error: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        detail: Option<String>,
    },
    /// Telling the server the session's status failed (the session itself is unaffected).
    SessionCloseFailed {
        error: String,
    },
    /// Telling the server the winner failed.
    SessionResultFailed {
        error: String,
    },
    /// The session never got to play: bad options, the server, the protocol, the connection.
    StartFailed {
        error: String,
    },
    /// The handshake with the peer failed.
    HandshakeFailed {
        error: String,
    },
}

/// Largest rejected frame an event keeps whole (compact JSON bytes); a larger one is kept as
/// its size and the start of its text, so a peer cannot grow events.jsonl by megabytes per
/// refused frame.
pub const MAX_REJECTED_FRAME_BYTES: usize = 4096;

/// What an event keeps of a peer's rejected frame: the frame when it is small, else
/// `{"_truncated": true, "bytes": N, "start": "…"}` (its size and first KiB of text).
pub fn kept_frame(frame: &Value) -> Value {
    let text = frame.to_string();
    if text.len() <= MAX_REJECTED_FRAME_BYTES {
        return frame.clone();
    }
    let mut end = 1024;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    serde_json::json!({"_truncated": true, "bytes": text.len(), "start": &text[..end]})
}

impl Event {
    /// `message_rejected` for `frame` (kept as [`kept_frame`] says).
    pub fn message_rejected(direction: &str, error: &str, frame: &Value) -> Event {
        let error: String = error.chars().take(1000).collect();
        Event::MessageRejected {
            direction: direction.to_string(),
            error,
            msg: kept_frame(frame),
        }
    }

    /// `session_ended` with only `completed` and `reason`, the engine's usual end.
    pub fn ended(completed: bool, reason: &str) -> Event {
        Event::SessionEnded {
            completed: Some(completed),
            reason: Some(reason.to_string()),
            peer_reason: None,
            error: None,
            detail: None,
        }
    }

    /// The event's name as written in the `type` field.
    pub fn name(&self) -> String {
        match serde_json::to_value(self) {
            Ok(Value::Object(line)) => line
                .get("type")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string(),
            _ => String::new(),
        }
    }

    /// The `type` and `data` of this event's line.
    pub(crate) fn into_parts(self) -> (String, Map<String, Value>) {
        let Ok(Value::Object(mut line)) = serde_json::to_value(&self) else {
            unreachable!("events serialize to objects");
        };
        let name = match line.remove("type") {
            Some(Value::String(name)) => name,
            _ => unreachable!("events are tagged by type"),
        };
        let data = match line.remove("data") {
            Some(Value::Object(data)) => data,
            _ => Map::new(),
        };
        (name, data)
    }
}

/// One line read back from an `events.jsonl`.
#[derive(Debug, Clone, PartialEq)]
pub struct RecordedEvent {
    pub ts: String,
    /// The event's `type`, known or not.
    pub name: String,
    /// Its `data` (an empty object when the line has none).
    pub data: Value,
    pub summary: Option<String>,
    /// The typed event, when this build knows the name and the data fits it.
    pub event: Option<Event>,
}

impl RecordedEvent {
    /// Parses one line; `None` for a line that is not a JSON object with a string `type`
    /// (a torn last line of a live file, or garbage).
    pub fn parse(line: &str) -> Option<RecordedEvent> {
        let Ok(Value::Object(mut line)) = serde_json::from_str::<Value>(line) else {
            return None;
        };
        let name = line.get("type")?.as_str()?.to_string();
        let text = |line: &mut Map<String, Value>, key: &str| match line.remove(key) {
            Some(Value::String(text)) => Some(text),
            _ => None,
        };
        let ts = text(&mut line, "ts").unwrap_or_default();
        let summary = text(&mut line, "summary");
        let data = match line.remove("data") {
            Some(Value::Object(data)) => Value::Object(data),
            _ => Value::Object(Map::new()),
        };
        let tagged = serde_json::json!({"type": name, "data": data});
        let event = serde_json::from_value(tagged).ok();
        Some(RecordedEvent {
            ts,
            name,
            data,
            summary,
            event,
        })
    }
}

/// Longest events.jsonl line that is read (a rejected frame is kept small, see
/// [`Event::message_rejected`]; a line this long is someone else's).
const MAX_EVENT_LINE: usize = 16 << 20;

/// Every readable line of an events file, in order (nothing when it does not exist; a line
/// that is not UTF-8 or not an event is left out, never the ones after it).
pub fn read_events(path: &Path) -> Vec<RecordedEvent> {
    crate::layout::jsonl::read_lines(path, MAX_EVENT_LINE)
        .iter()
        .filter_map(|line| RecordedEvent::parse(line))
        .collect()
}

/// The first event of an events file that `wanted` accepts, parsing only the lines that
/// mention one of `types` (a waiting `--daemon` parent looks for its start event while the
/// session's frames are already being logged).
pub fn find_event(path: &Path, types: &[&str], wanted: impl Fn(&Event) -> bool) -> Option<Event> {
    crate::layout::jsonl::read_lines(path, MAX_EVENT_LINE)
        .iter()
        .filter(|line| types.iter().any(|kind| line.contains(kind)))
        .filter_map(|line| RecordedEvent::parse(line)?.event)
        .find(wanted)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn find_event_parses_only_lines_that_can_be_what_it_looks_for() {
        let dir = tempfile::tempdir().unwrap();
        let log = crate::records::EventLog::to_file(dir.path().join("events.jsonl"));
        log.emit(Event::ProtocolMessage {
            direction: MessageDirection::Received,
            msg: json!({"action": "say", "text": "peer_joined"}),
        });
        log.emit(Event::PeerResumed {});
        let path = dir.path().join("events.jsonl");
        let joined = |event: &Event| matches!(event, Event::PeerJoined { .. });
        assert_eq!(find_event(&path, &["peer_joined"], joined), None);
        log.emit(Event::PeerJoined {
            session_id: "s".into(),
            peer_public_key: "k".into(),
            peer_control_mode: ControlMode::Human,
            protocol_id: "p".into(),
        });
        let found = find_event(&path, &["peer_joined"], joined);
        assert!(matches!(found, Some(Event::PeerJoined { session_id, .. }) if session_id == "s"));
        let resumed = |event: &Event| matches!(event, Event::PeerResumed {});
        assert_eq!(
            find_event(&path, &["peer_joined"], resumed),
            None,
            "a line that mentions none of the types is not parsed"
        );
    }

    #[test]
    fn events_read_back_as_written() {
        let events = [
            Event::PeerJoined {
                session_id: "s".into(),
                peer_public_key: "k".into(),
                peer_control_mode: ControlMode::Human,
                protocol_id: "p".into(),
            },
            Event::PeerResumed {},
            Event::ended(false, "peer_disconnected"),
            Event::ProtocolMessage {
                direction: MessageDirection::Sent,
                msg: json!({"action": "move", "n": 1.5}),
            },
            Event::DecisionWindowOpened {
                match_key: "round".into(),
                match_value: json!(0),
                mode: WindowMode::Hybrid,
                value_field: "choice".into(),
                choices: Choices::OneOf {
                    values: vec![json!("rock"), json!("paper")],
                },
                deadline_at: "2026-12-01T00:00:10.000Z".into(),
                intended: Some(json!("rock")),
            },
            Event::DecisionRefused {
                match_key: "attempt".into(),
                match_value: json!(2),
                decision_id: None,
                reason: "number must be an integer".into(),
            },
            Event::DecisionWindowClosed {
                match_key: "round".into(),
                match_value: json!(0),
                outcome: WindowOutcome::TimedOut,
                decision: None,
                origin: None,
                action: Some(TimeoutAction::Forfeit),
            },
            Event::MentalPokerAborted {
                reason: "peeked_non_hand".into(),
                detail: "guest-0 took card 2".into(),
            },
            Event::AuditFailed {
                reason: "forged_token".into(),
                evidence: json!({"label": "h-0"}),
            },
            Event::GameOver {
                outcome: None,
                audit_status: "passed".into(),
            },
            Event::PlayVerified {
                who: Role::Guest,
                id_b: "7".into(),
            },
            Event::PathChanged {
                path: PathKind::Mixed,
                addr: Some("203.0.113.2:4000".into()),
                relay_url: Some("http://198.51.100.2:3340/".into()),
            },
        ];
        for event in events {
            let (name, data) = event.clone().into_parts();
            let line = json!({"ts": "t", "type": name, "data": data}).to_string();
            let read = RecordedEvent::parse(&line).unwrap();
            assert_eq!(read.name, name);
            assert_eq!(read.event, Some(event));
        }
    }

    #[test]
    fn names_and_data_have_the_reference_shape() {
        let (name, data) = Event::ended(true, "completed").into_parts();
        assert_eq!(name, "session_ended");
        assert_eq!(
            Value::Object(data),
            json!({"completed": true, "reason": "completed"})
        );
        let (name, data) = Event::PeerResumed {}.into_parts();
        assert_eq!((name.as_str(), data.len()), ("peer_resumed", 0));
        assert_eq!(
            Event::CommitMismatchDetected {
                round: 1,
                role: Role::Guest,
                expected: "a".into(),
                actual: json!("b")
            }
            .name(),
            "commit_mismatch_detected"
        );
    }

    #[test]
    fn unknown_and_broken_lines() {
        let hook =
            RecordedEvent::parse(r#"{"ts":"t","type":"strategy_applied","data":{"x":1}}"#).unwrap();
        assert_eq!(hook.name, "strategy_applied");
        assert_eq!(hook.data, json!({"x": 1}));
        assert_eq!(hook.event, None);
        assert_eq!(RecordedEvent::parse(r#"{"ts":"t","type":"se"#), None);
        assert_eq!(RecordedEvent::parse("[1]"), None);
    }
}
