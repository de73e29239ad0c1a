//! A room's contract (`flow.group` of an `authoritative_group` spec): how many seats, when the
//! room starts, whether late arrivals may sit down, what happens when the leader dies, and
//! the limits every action and checkpoint stay within. The bounds live here once, for the
//! linter that reports them and the model that reads a linted spec into [`GroupRules`].

use std::ops::RangeInclusive;

use serde_json::{Map, Value};

/// Seats a room may declare: at least two, at most 32 (`min ≤ max`).
pub const PARTICIPANTS: RangeInclusive<i64> = 2..=32;
/// `checkpoint_every_events`: how many events between two full checkpoints (default 20).
pub const CHECKPOINT_EVERY_EVENTS: RangeInclusive<i64> = 1..=256;
/// `max_action_bytes`: the largest canonical action a member may submit (default 8192).
pub const MAX_ACTION_BYTES: RangeInclusive<i64> = 256..=65536;
/// `max_events_per_action`: how many events one action may produce (default 64).
pub const MAX_EVENTS_PER_ACTION: RangeInclusive<i64> = 1..=256;
/// `peer_channels.max_message_bytes` (default 16384).
pub const PEER_MESSAGE_BYTES: RangeInclusive<i64> = 256..=65536;
/// How many side channels a room may name.
pub const PEER_CHANNEL_COUNT: RangeInclusive<usize> = 1..=16;
/// The longest side-channel name.
pub const PEER_CHANNEL_NAME_MAX: usize = 32;

/// The keys `flow.group` may hold; any other is an error (the reference refuses them too).
pub const KEYS: [&str; 9] = [
    "min_participants",
    "max_participants",
    "allow_late_join",
    "recovery_mode",
    "start_policy",
    "checkpoint_every_events",
    "max_action_bytes",
    "max_events_per_action",
    "peer_channels",
];
/// The keys `flow.group.peer_channels` may hold.
pub const PEER_CHANNEL_KEYS: [&str; 4] = ["enabled", "routing", "channels", "max_message_bytes"];

/// What a new leader does with the game when the old one died.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    serde::Serialize,
    serde::Deserialize,
    strum::EnumString,
    strum::IntoStaticStr,
    strum::Display,
    strum::VariantNames,
)]
#[strum(serialize_all = "snake_case")]
#[serde(rename_all = "snake_case")]
pub enum RecoveryMode {
    /// Continue from the last certified checkpoint, exactly.
    Exact,
    /// Restore the checkpoint, and the hooks restart the round in play.
    RestartRound,
    /// No failover: the room fails.
    Abort,
}

/// When the lobby becomes a running room.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    serde::Serialize,
    serde::Deserialize,
    strum::EnumString,
    strum::IntoStaticStr,
    strum::Display,
    strum::VariantNames,
)]
#[strum(serialize_all = "snake_case")]
#[serde(rename_all = "snake_case")]
pub enum StartPolicy {
    /// As soon as `min_participants` members are ready.
    MinReady,
    /// When every seat (`max_participants`) is taken and ready.
    Full,
    /// Like `full`, and the seats never change afterwards (a card table).
    FixedFull,
}

/// Who receives a member's side-channel message.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, strum::EnumString, strum::IntoStaticStr, strum::VariantNames,
)]
#[strum(serialize_all = "snake_case")]
pub enum PeerRouting {
    AllMembers,
    /// The hooks' `proto_group_peer_routes` decide.
    Hook,
}

/// Member-to-member side channels, when the room enables them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PeerChannels {
    pub routing: PeerRouting,
    pub channels: Vec<String>,
    pub max_message_bytes: u32,
}

/// `flow.group`, read from a spec that passed the linter.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GroupRules {
    pub min_participants: u8,
    pub max_participants: u8,
    pub allow_late_join: bool,
    pub recovery_mode: RecoveryMode,
    pub start_policy: StartPolicy,
    pub checkpoint_every_events: u16,
    pub max_action_bytes: u32,
    pub max_events_per_action: u16,
    /// `None` when absent or disabled.
    pub peer_channels: Option<PeerChannels>,
}

impl GroupRules {
    /// How many members (the leader among them) the start policy waits for.
    pub fn members_to_start(&self) -> u8 {
        match self.start_policy {
            StartPolicy::MinReady => self.min_participants,
            StartPolicy::Full | StartPolicy::FixedFull => self.max_participants,
        }
    }
}

/// Whether `name` is a side-channel name: a lowercase letter, then letters, digits, `_` or
/// `-`, 32 characters at most.
pub fn is_channel_slug(name: &str) -> bool {
    let mut chars = name.chars();
    chars.next().is_some_and(|c| c.is_ascii_lowercase())
        && name.len() <= PEER_CHANNEL_NAME_MAX
        && chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_' || c == '-')
}

/// A JSON integer that is not a bool (Python's `int` test without its `bool` subclass).
pub fn strict_integer(value: &Value) -> Option<i64> {
    match value {
        Value::Number(number) => number.as_i64(),
        _ => None,
    }
}

impl GroupRules {
    /// Reads `flow.group` of a linted spec; `Err` names the key that does not fit (only a
    /// gap in the linter can cause it).
    pub fn read(group: &Map<String, Value>) -> Result<GroupRules, &'static str> {
        let integer = |key: &'static str, default: i64, range: RangeInclusive<i64>| {
            match group.get(key) {
                None | Some(Value::Null) => Some(default),
                Some(value) => strict_integer(value),
            }
            .filter(|n| range.contains(n))
            .ok_or(key)
        };
        let min = integer("min_participants", 0, PARTICIPANTS)?;
        let max = integer("max_participants", 0, PARTICIPANTS)?;
        if min > max {
            return Err("min_participants");
        }
        let word = |key: &'static str| group.get(key).and_then(Value::as_str).ok_or(key);
        Ok(GroupRules {
            min_participants: min as u8,
            max_participants: max as u8,
            allow_late_join: group
                .get("allow_late_join")
                .and_then(Value::as_bool)
                .ok_or("allow_late_join")?,
            recovery_mode: word("recovery_mode")?
                .parse()
                .map_err(|_| "recovery_mode")?,
            start_policy: word("start_policy")?.parse().map_err(|_| "start_policy")?,
            checkpoint_every_events: integer(
                "checkpoint_every_events",
                20,
                CHECKPOINT_EVERY_EVENTS,
            )? as u16,
            max_action_bytes: integer("max_action_bytes", 8192, MAX_ACTION_BYTES)? as u32,
            max_events_per_action: integer("max_events_per_action", 64, MAX_EVENTS_PER_ACTION)?
                as u16,
            peer_channels: match group.get("peer_channels") {
                None | Some(Value::Null) => None,
                Some(Value::Object(peer)) => read_peer_channels(peer)?,
                Some(_) => return Err("peer_channels"),
            },
        })
    }
}

fn read_peer_channels(peer: &Map<String, Value>) -> Result<Option<PeerChannels>, &'static str> {
    const KEY: &str = "peer_channels";
    if !peer.get("enabled").and_then(Value::as_bool).ok_or(KEY)? {
        return Ok(None);
    }
    let channels: Vec<String> = peer
        .get("channels")
        .and_then(Value::as_array)
        .ok_or(KEY)?
        .iter()
        .map(|name| {
            name.as_str()
                .filter(|n| is_channel_slug(n))
                .map(str::to_string)
        })
        .collect::<Option<_>>()
        .ok_or(KEY)?;
    let max_message_bytes = match peer.get("max_message_bytes") {
        None => 16384,
        Some(value) => strict_integer(value)
            .filter(|n| PEER_MESSAGE_BYTES.contains(n))
            .ok_or(KEY)?,
    };
    Ok(Some(PeerChannels {
        routing: peer
            .get("routing")
            .and_then(Value::as_str)
            .and_then(|r| r.parse().ok())
            .ok_or(KEY)?,
        channels,
        max_message_bytes: max_message_bytes as u32,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn read(value: Value) -> Result<GroupRules, &'static str> {
        GroupRules::read(value.as_object().unwrap())
    }

    #[test]
    fn a_card_table_reads_with_its_defaults_and_a_room_with_its_side_channels() {
        let table = read(json!({
            "min_participants": 4, "max_participants": 4, "allow_late_join": false,
            "recovery_mode": "restart_round", "start_policy": "fixed_full"
        }))
        .unwrap();
        assert_eq!(table.recovery_mode, RecoveryMode::RestartRound);
        assert_eq!(table.start_policy, StartPolicy::FixedFull);
        assert_eq!(
            (
                table.checkpoint_every_events,
                table.max_action_bytes,
                table.max_events_per_action
            ),
            (20, 8192, 64)
        );
        assert_eq!(table.peer_channels, None);
        let room = read(json!({
            "min_participants": 2, "max_participants": 32, "allow_late_join": true,
            "recovery_mode": "exact", "start_policy": "min_ready",
            "peer_channels": {"enabled": true, "routing": "hook", "channels": ["chat", "whisper-2"]}
        }))
        .unwrap();
        let peer = room.peer_channels.unwrap();
        assert_eq!(peer.routing, PeerRouting::Hook);
        assert_eq!(peer.max_message_bytes, 16384);
    }

    #[test]
    fn out_of_range_or_mistyped_keys_are_named() {
        let base = json!({
            "min_participants": 2, "max_participants": 3, "allow_late_join": true,
            "recovery_mode": "exact", "start_policy": "full"
        });
        for (key, value, named) in [
            ("min_participants", json!(4), "min_participants"),
            ("max_participants", json!(33), "max_participants"),
            ("max_participants", json!(true), "max_participants"),
            ("allow_late_join", json!(1), "allow_late_join"),
            ("recovery_mode", json!("restart"), "recovery_mode"),
            ("max_action_bytes", json!(255), "max_action_bytes"),
        ] {
            let mut group = base.clone();
            group[key] = value;
            assert_eq!(read(group), Err(named), "{key}");
        }
    }

    #[test]
    fn channel_names_are_lowercase_slugs() {
        for good in ["a", "chat", "team-2", "x_y"] {
            assert!(is_channel_slug(good), "{good}");
        }
        for bad in ["", "Chat", "2nd", "-a", "a b", &"a".repeat(33), "é"] {
            assert!(!is_channel_slug(bad), "{bad}");
        }
    }
}
