//! A realtime game's contract (`flow.realtime` of an `authoritative_realtime` spec): the tick
//! rate and the input windows both sides must agree on, and the frames the mode's engine
//! builds. This build lints the mode (so the network's realtime samples validate and
//! register) but does not run it; the bounds live here once for the linter and the model.

use std::ops::RangeInclusive;

use serde_json::{Map, Value};

use super::group::strict_integer;
use crate::spec::message::Direction;

/// The integer settings, each required, with its bounds.
pub const SETTINGS: [(&str, RangeInclusive<i64>); 5] = [
    ("tick_rate_hz", 1..=60),
    ("input_delay_ticks", 1..=120),
    ("snapshot_every_ticks", 1..=60),
    ("max_command_lead_ticks", 1..=600),
    ("max_commands_per_frame", 1..=1024),
];

/// The keys `flow.realtime` may hold; any other is an error (the reference refuses them too).
pub const KEYS: [&str; 6] = [
    "tick_rate_hz",
    "input_delay_ticks",
    "snapshot_every_ticks",
    "max_command_lead_ticks",
    "max_commands_per_frame",
    "disconnect_policy",
];

/// The frames the mode's engine builds: action, direction and every field it sends.
pub const ENGINE_FRAMES: [(&str, Direction, &[&str]); 6] = [
    (
        "rt_join",
        Direction::GuestToHost,
        &[
            "action",
            "wire_version",
            "ruleset_hash",
            "match_config_hash",
        ],
    ),
    (
        "rt_command",
        Direction::GuestToHost,
        &["action", "seq", "target_tick", "commands", "command_hash"],
    ),
    (
        "rt_ready",
        Direction::HostToGuest,
        &[
            "action",
            "wire_version",
            "ruleset_hash",
            "match_config_hash",
            "config",
            "frame",
        ],
    ),
    ("rt_reject", Direction::HostToGuest, &["action", "reason"]),
    (
        "rt_command_ack",
        Direction::HostToGuest,
        &[
            "action",
            "seq",
            "target_tick",
            "status",
            "received_at_tick",
            "command_hash",
            "reason",
        ],
    ),
    ("rt_frame", Direction::HostToGuest, &["action", "frame"]),
];

/// What the host does when the guest disconnects.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, strum::EnumString, strum::IntoStaticStr, strum::VariantNames,
)]
#[strum(serialize_all = "snake_case")]
pub enum DisconnectPolicy {
    Abort,
    Continue,
}

/// `flow.realtime`, read from a spec that passed the linter.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RealtimeRules {
    pub tick_rate_hz: u16,
    pub input_delay_ticks: u16,
    pub snapshot_every_ticks: u16,
    pub max_command_lead_ticks: u16,
    pub max_commands_per_frame: u16,
    pub disconnect_policy: DisconnectPolicy,
}

impl RealtimeRules {
    /// Reads `flow.realtime` of a linted spec; `Err` names the key that does not fit.
    pub fn read(realtime: &Map<String, Value>) -> Result<RealtimeRules, &'static str> {
        let mut values = [0u16; 5];
        for ((key, range), slot) in SETTINGS.iter().zip(&mut values) {
            *slot = realtime
                .get(*key)
                .and_then(strict_integer)
                .filter(|n| range.contains(n))
                .ok_or(*key)? as u16;
        }
        let [
            tick_rate_hz,
            input_delay_ticks,
            snapshot_every_ticks,
            lead,
            max_commands_per_frame,
        ] = values;
        if lead < input_delay_ticks {
            return Err("max_command_lead_ticks");
        }
        Ok(RealtimeRules {
            tick_rate_hz,
            input_delay_ticks,
            snapshot_every_ticks,
            max_command_lead_ticks: lead,
            max_commands_per_frame,
            disconnect_policy: realtime
                .get("disconnect_policy")
                .and_then(Value::as_str)
                .and_then(|p| p.parse().ok())
                .ok_or("disconnect_policy")?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn settings_read_and_the_lead_must_cover_the_input_delay() {
        let mut realtime = json!({
            "tick_rate_hz": 10, "input_delay_ticks": 3, "snapshot_every_ticks": 1,
            "max_command_lead_ticks": 30, "max_commands_per_frame": 64,
            "disconnect_policy": "abort"
        });
        let rules = RealtimeRules::read(realtime.as_object().unwrap()).unwrap();
        assert_eq!(rules.disconnect_policy, DisconnectPolicy::Abort);
        assert_eq!((rules.tick_rate_hz, rules.max_command_lead_ticks), (10, 30));
        realtime["max_command_lead_ticks"] = json!(2);
        assert_eq!(
            RealtimeRules::read(realtime.as_object().unwrap()),
            Err("max_command_lead_ticks")
        );
        realtime["max_command_lead_ticks"] = json!(30);
        realtime["tick_rate_hz"] = json!(61);
        assert_eq!(
            RealtimeRules::read(realtime.as_object().unwrap()),
            Err("tick_rate_hz")
        );
    }
}
