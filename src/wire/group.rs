//! A room's fixed frames (the `_group` key names each): the admission exchange on a fresh
//! channel — the member's `join`, the leader's signed `admission` with a fresh challenge, the
//! member's `ready` proving its key on this very channel — and, once admitted, the member's
//! `input`, `ack` and `ping`, the leader's `receipt`, `pong` and `error`. Envelopes (the
//! authority's steps) are `room::envelope`.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

use super::{FrameError, parse, to_value};
use crate::identity::is_lower_hex_64;

/// The `_group` values of the authority's envelopes.
pub const ENVELOPE_KINDS: [&str; 4] = ["snapshot", "frame", "membership", "epoch_start"];

/// The `_group` value of a frame, if it has one.
pub fn kind_of(frame: &Value) -> Option<&str> {
    frame.get("_group").and_then(Value::as_str)
}

/// Whether `value` is 32 lowercase hex characters (a challenge, a nonce, an action id).
pub fn is_hex_32(value: &str) -> bool {
    value.len() == 32
        && value
            .bytes()
            .all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

/// M→L, the first frame on a channel.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "_group", rename = "join")]
pub struct Join {
    pub group_id: String,
    pub member_public_key: String,
    pub join_nonce: String,
    pub member_control_mode: String,
}

/// L→M: the leader's signature over the admission statement, and a challenge for `ready`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "_group", rename = "admission")]
pub struct Admission {
    pub group_id: String,
    pub protocol_id: String,
    pub leader_public_key: String,
    pub leader_epoch: u64,
    pub join_nonce: String,
    pub channel_challenge: String,
    pub leader_signature: String,
}

/// M→L, after the server admitted the member: its seat, signed on this channel's challenge.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "_group", rename = "ready")]
pub struct Ready {
    pub group_id: String,
    pub protocol_id: String,
    pub leader_epoch: u64,
    pub member_public_key: String,
    pub member_id: String,
    pub seat: u32,
    pub join_nonce: String,
    pub channel_challenge: String,
    pub member_signature: String,
    /// The member's newest certified checkpoint, handed to a leader of a newer epoch than
    /// the one that certified it (outside the signed statement: the old leader's
    /// certificate vouches for it). A reference leader ignores the extra key.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub checkpoint: Option<Map<String, Value>>,
    /// The member takes part in fair deals (docs/fair-deals.md): the leader's tables wait
    /// for its seed before they deal. Outside the signed statement; a reference leader
    /// ignores the key.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub fair_deal: bool,
}

impl Ready {
    /// What `member_signature` signs: a fixed prefix, then the canonical JSON of the
    /// channel's facts.
    pub fn statement(&self) -> Vec<u8> {
        let facts = json!({
            "group_id": self.group_id,
            "protocol_id": self.protocol_id,
            "leader_epoch": self.leader_epoch,
            "member_public_key": self.member_public_key,
            "member_id": self.member_id,
            "seat": self.seat,
            "join_nonce": self.join_nonce,
            "channel_challenge": self.channel_challenge,
        });
        let mut bytes = b"aigenora-group-channel-ready-v1:".to_vec();
        bytes.extend(
            crate::room::json::canonical(&facts)
                .expect("small, integer-only facts")
                .into_bytes(),
        );
        bytes
    }
}

/// M→L: one action, resent with the same `action_id` until its receipt arrives.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "_group", rename = "input")]
pub struct Input {
    pub group_id: String,
    pub leader_epoch: u64,
    pub actor_public_key: String,
    pub client_seq: u64,
    pub action_id: String,
    pub action: Map<String, Value>,
}

/// M→L: the member holds step `seq` (and its checkpoint).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "_group", rename = "ack")]
pub struct Ack {
    pub group_id: String,
    pub leader_epoch: u64,
    pub seq: u64,
    pub frame_hash: String,
    pub checkpoint_hash: String,
}

/// What became of an input.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ReceiptStatus {
    Accepted,
    Duplicate,
    Rejected,
}

/// L→M: the answer to one input.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "_group", rename = "receipt")]
pub struct Receipt {
    pub status: ReceiptStatus,
    /// A rejected input may name none (the reference echoes what it was sent).
    pub client_seq: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub authority_seq: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub frame_hash: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub completed: Option<bool>,
    pub action_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// A rejection that a resend may fix (a stale epoch): the member keeps the action.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retryable: Option<bool>,
}

/// M→L liveness probe, and its answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "_group", rename = "ping")]
pub struct Ping {
    pub nonce: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "_group", rename = "pong")]
pub struct Pong {
    pub group_id: String,
    pub leader_epoch: u64,
    pub nonce: String,
}

/// L→M before the leader closes a channel it will not serve (a refused late join).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "_group", rename = "error")]
pub struct GroupError {
    pub reason: String,
}

macro_rules! frame {
    ($($ty:ident => $name:literal),* $(,)?) => {$(
        impl $ty {
            /// Parses the frame, refusing anything else with its reason.
            pub fn parse(value: &Value) -> Result<$ty, FrameError> {
                parse($name, value)
            }

            /// The frame as it travels.
            pub fn to_value(&self) -> Value {
                to_value(self)
            }
        }
    )*};
}

frame!(Join => "group join", Admission => "group admission", Ready => "group ready",
       Input => "group input", Ack => "group ack", Receipt => "group receipt",
       Ping => "group ping", Pong => "group pong", GroupError => "group error");

impl Join {
    /// The checks the leader makes before it answers: this room, a key, a nonce.
    pub fn check(&self, group_id: &str) -> Result<(), FrameError> {
        let bad = |reason: &str| {
            Err(FrameError {
                frame: "group join",
                reason: reason.to_string(),
            })
        };
        if self.group_id != group_id {
            return bad("it targets another room");
        }
        if !is_lower_hex_64(&self.member_public_key) {
            return bad("member_public_key is not 64 lowercase hex characters");
        }
        if self.join_nonce.is_empty() || self.join_nonce.len() > 64 {
            return bad("join_nonce must be 1-64 characters");
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_travel_with_their_group_tag_and_refuse_the_wrong_one() {
        let join = Join {
            group_id: "g".into(),
            member_public_key: "a".repeat(64),
            join_nonce: "0".repeat(32),
            member_control_mode: "hybrid".into(),
        };
        let value = join.to_value();
        assert_eq!(value["_group"], "join");
        assert_eq!(Join::parse(&value).unwrap(), join);
        assert!(Admission::parse(&value).is_err());
        assert!(join.check("g").is_ok());
        assert!(join.check("h").is_err());
        let receipt: Receipt = Receipt::parse(&json!({"_group": "receipt", "status": "rejected",
            "reason": "bad", "client_seq": null, "action_id": null}))
        .unwrap();
        assert_eq!(receipt.status, ReceiptStatus::Rejected);
        assert!(is_hex_32(&"ab".repeat(16)) && !is_hex_32(&"AB".repeat(16)));
    }

    #[test]
    fn the_ready_statement_is_the_prefix_and_the_sorted_facts() {
        let ready = Ready {
            group_id: "g".into(),
            protocol_id: "p".into(),
            leader_epoch: 2,
            member_public_key: "k".into(),
            member_id: "m".into(),
            seat: 3,
            join_nonce: "n".into(),
            channel_challenge: "c".into(),
            member_signature: String::new(),
            checkpoint: None,
            fair_deal: false,
        };
        let statement = "aigenora-group-channel-ready-v1:{\"channel_challenge\":\"c\",\"group_id\":\"g\",\"join_nonce\":\"n\",\"leader_epoch\":2,\"member_id\":\"m\",\"member_public_key\":\"k\",\"protocol_id\":\"p\",\"seat\":3}";
        assert_eq!(String::from_utf8(ready.statement()).unwrap(), statement);
        assert!(ready.to_value().get("checkpoint").is_none());
        assert!(ready.to_value().get("fair_deal").is_none());
        // A handed-over checkpoint and the fair-deal announcement travel beside the signed
        // facts, not inside them.
        let handing = Ready {
            checkpoint: Some(json!({"seq": 9}).as_object().unwrap().clone()),
            fair_deal: true,
            ..ready
        };
        assert_eq!(handing.to_value()["fair_deal"], true);
        assert_eq!(String::from_utf8(handing.statement()).unwrap(), statement);
        assert_eq!(Ready::parse(&handing.to_value()).unwrap(), handing);
    }
}
