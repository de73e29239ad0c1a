//! Lint of the two authoritative modes' sections: `flow.group` (a room's seats, start,
//! recovery and limits, its optional side channels) and `flow.realtime` (the tick and input
//! windows, and the frames the realtime engine builds). Both sections are closed: a key the
//! mode does not define is an error, because every client must read a room alike.

use serde_json::{Map, Value};

use super::flow::EngineFrames;
use super::{Check, Findings, join, kind};
use crate::spec::flow::group::{self, PeerRouting, RecoveryMode, StartPolicy, strict_integer};
use crate::spec::flow::realtime;
use crate::spec::pyrepr::py_repr_str;

/// `flow.group` of an `authoritative_group` spec.
pub fn lint_group(flow: &Map<String, Value>, findings: &mut Findings) {
    let Some(group) = section(flow, "group", Check::GroupSection, findings) else {
        return;
    };
    closed(
        group,
        &group::KEYS,
        "flow.group",
        Check::GroupUnknownField,
        findings,
    );
    let seats = ["min_participants", "max_participants"].map(|key| {
        let path = format!("flow.group.{key}");
        let value = group.get(key);
        let seats = value.and_then(strict_integer);
        match seats {
            Some(n) if group::PARTICIPANTS.contains(&n) => Some(n),
            _ => {
                findings.add(
                    Check::GroupParticipants,
                    path,
                    format!("must be an integer from 2 to 32, found {}", shown(value)),
                );
                None
            }
        }
    });
    if let [Some(min), Some(max)] = seats
        && min > max
    {
        findings.add(
            Check::GroupParticipantsInverted,
            "flow.group.min_participants",
            format!("{min} is above max_participants {max}"),
        );
    }
    if !group.get("allow_late_join").is_some_and(Value::is_boolean) {
        findings.add(
            Check::GroupPolicy,
            "flow.group.allow_late_join",
            format!(
                "must be true or false, found {}",
                shown(group.get("allow_late_join"))
            ),
        );
    }
    policy::<RecoveryMode>(group, "recovery_mode", findings);
    policy::<StartPolicy>(group, "start_policy", findings);
    for (key, range) in [
        ("checkpoint_every_events", group::CHECKPOINT_EVERY_EVENTS),
        ("max_action_bytes", group::MAX_ACTION_BYTES),
        ("max_events_per_action", group::MAX_EVENTS_PER_ACTION),
    ] {
        match group.get(key) {
            None | Some(Value::Null) => {}
            Some(value) if strict_integer(value).is_some_and(|n| range.contains(&n)) => {}
            Some(value) => findings.add(
                Check::GroupLimit,
                format!("flow.group.{key}"),
                format!(
                    "must be an integer from {} to {}, found {}",
                    range.start(),
                    range.end(),
                    shown(Some(value))
                ),
            ),
        }
    }
    match group.get("peer_channels") {
        None | Some(Value::Null) => {}
        Some(Value::Object(peer)) => lint_peer_channels(peer, findings),
        Some(other) => findings.add(
            Check::PeerChannels,
            "flow.group.peer_channels",
            format!("expected an object, found {}", kind(other)),
        ),
    }
}

fn lint_peer_channels(peer: &Map<String, Value>, findings: &mut Findings) {
    const PATH: &str = "flow.group.peer_channels";
    closed(
        peer,
        &group::PEER_CHANNEL_KEYS,
        PATH,
        Check::GroupUnknownField,
        findings,
    );
    match peer.get("enabled") {
        Some(Value::Bool(true)) => {}
        Some(Value::Bool(false)) => {
            for key in peer.keys().filter(|key| *key != "enabled") {
                if group::PEER_CHANNEL_KEYS.contains(&key.as_str()) {
                    findings.add(
                        Check::PeerChannels,
                        join(PATH, key),
                        "side channels are disabled, so only `enabled` may be given",
                    );
                }
            }
            return;
        }
        other => {
            return findings.add(
                Check::PeerChannels,
                join(PATH, "enabled"),
                format!("must be true or false, found {}", shown(other)),
            );
        }
    }
    policy_at::<PeerRouting>(peer, "routing", PATH, Check::PeerChannels, findings);
    match peer.get("channels") {
        Some(Value::Array(names)) if group::PEER_CHANNEL_COUNT.contains(&names.len()) => {
            for (index, name) in names.iter().enumerate() {
                let path = format!("{PATH}.channels[{index}]");
                match name.as_str() {
                    Some(text) if !group::is_channel_slug(text) => findings.add(
                        Check::PeerChannels,
                        path,
                        format!(
                            "{} is not a lowercase slug (a-z, then a-z, 0-9, _ or -; at most 32)",
                            py_repr_str(text)
                        ),
                    ),
                    Some(_) if names[..index].contains(name) => {
                        findings.add(Check::PeerChannels, path, "names a channel twice")
                    }
                    Some(_) => {}
                    None => findings.add(
                        Check::PeerChannels,
                        path,
                        format!("expected a channel name, found {}", kind(name)),
                    ),
                }
            }
        }
        other => findings.add(
            Check::PeerChannels,
            join(PATH, "channels"),
            format!("must list 1 to 16 channel names, found {}", shown(other)),
        ),
    }
    if let Some(value) = peer.get("max_message_bytes")
        && !strict_integer(value).is_some_and(|n| group::PEER_MESSAGE_BYTES.contains(&n))
    {
        findings.add(
            Check::PeerChannels,
            join(PATH, "max_message_bytes"),
            format!(
                "must be an integer from 256 to 65536, found {}",
                shown(Some(value))
            ),
        );
    }
}

/// `flow.realtime` of an `authoritative_realtime` spec, and the frames its engine builds.
pub fn lint_realtime(flow: &Map<String, Value>, mut needs: EngineFrames) {
    let why = "authoritative_realtime";
    for (action, direction, keys) in realtime::ENGINE_FRAMES {
        needs.exact_fields(action, direction, keys, why);
    }
    let findings = &mut *needs.findings;
    let Some(section) = section(flow, "realtime", Check::RealtimeSection, findings) else {
        return;
    };
    closed(
        section,
        &realtime::KEYS,
        "flow.realtime",
        Check::RealtimeUnknownField,
        findings,
    );
    let mut setting = |key: &str| {
        let range = &realtime::SETTINGS.iter().find(|(k, _)| *k == key)?.1;
        let value = section.get(key);
        let number = value.and_then(strict_integer).filter(|n| range.contains(n));
        if number.is_none() {
            findings.add(
                Check::RealtimeSetting,
                format!("flow.realtime.{key}"),
                format!(
                    "required: an integer from {} to {}, found {}",
                    range.start(),
                    range.end(),
                    shown(value)
                ),
            );
        }
        number
    };
    let values: Vec<Option<i64>> = realtime::SETTINGS
        .iter()
        .map(|(key, _)| setting(key))
        .collect();
    if let (Some(delay), Some(lead)) = (values[1], values[3])
        && lead < delay
    {
        findings.add(
            Check::RealtimeLeadBelowDelay,
            "flow.realtime.max_command_lead_ticks",
            format!("{lead} is below input_delay_ticks {delay}"),
        );
    }
    policy_at::<realtime::DisconnectPolicy>(
        section,
        "disconnect_policy",
        "flow.realtime",
        Check::RealtimeSetting,
        findings,
    );
}

/// The mode's own section of `flow`, which must be an object.
fn section<'a>(
    flow: &'a Map<String, Value>,
    key: &str,
    check: Check,
    findings: &mut Findings,
) -> Option<&'a Map<String, Value>> {
    match flow.get(key) {
        Some(Value::Object(section)) => Some(section),
        other => {
            findings.add(
                check,
                join("flow", key),
                format!("required for this mode: an object, found {}", shown(other)),
            );
            None
        }
    }
}

/// Reports every key of a closed section that it does not define.
fn closed(
    map: &Map<String, Value>,
    known: &[&str],
    path: &str,
    check: Check,
    findings: &mut Findings,
) {
    for key in map.keys().filter(|key| !known.contains(&key.as_str())) {
        findings.add(
            check,
            join(path, key),
            format!("not a key of {path} (one of {})", known.join(", ")),
        );
    }
}

fn policy<T: std::str::FromStr + strum::VariantNames>(
    group: &Map<String, Value>,
    key: &str,
    findings: &mut Findings,
) {
    policy_at::<T>(group, key, "flow.group", Check::GroupPolicy, findings)
}

/// A key whose value must name one variant of `T`.
fn policy_at<T: std::str::FromStr + strum::VariantNames>(
    map: &Map<String, Value>,
    key: &str,
    path: &str,
    check: Check,
    findings: &mut Findings,
) {
    let value = map.get(key);
    if value
        .and_then(Value::as_str)
        .is_some_and(|text| text.parse::<T>().is_ok())
    {
        return;
    }
    findings.add(
        check,
        join(path, key),
        format!(
            "must be one of {}, found {}",
            T::VARIANTS.join(", "),
            shown(value)
        ),
    );
}

/// A value as a finding shows it: a string quoted, anything else by its kind.
fn shown(value: Option<&Value>) -> String {
    match value {
        None => "nothing".to_string(),
        Some(Value::String(text)) => py_repr_str(text),
        Some(Value::Number(number)) => number.to_string(),
        Some(Value::Bool(flag)) => flag.to_string(),
        Some(other) => kind(other).to_string(),
    }
}
