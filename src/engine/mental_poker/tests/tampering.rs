//! Cheats on the wire: one side (or a man in the middle) changes what it sends. Each ends
//! the game with its exact reason on the side that catches it, and the other side learns why
//! (the test spec declares every reason in its `error` message).

use std::sync::{Arc, Mutex};

use serde_json::Value;

use super::game::{CardHooks, Ended, Side, Strategy, Tamper, deck, play, spec, spec_with_reasons};
use crate::hooks::DealPlan;

/// A side with these hooks that rewrites what it sends with `tamper`.
pub(super) fn tampering(
    hooks: CardHooks,
    tamper: impl FnMut(&mut Value) -> bool + Send + 'static,
) -> Side {
    let tamper: Tamper = Box::new(tamper);
    Side {
        tamper: Some(tamper),
        ..Side::honest(hooks)
    }
}

pub(super) fn hooks(strategy: Strategy) -> CardHooks {
    CardHooks::new(deck(12), DealPlan { host: 3, guest: 3 }, strategy)
}

/// Runs the game and checks that `catcher` stopped with `reason` (told to the other side).
pub(super) fn caught(host: Side, guest: Side, catcher: &str, reason: &str) -> (Ended, Ended) {
    let dir = tempfile::tempdir().unwrap();
    let (host, guest) = play(&spec(), host, guest, dir.path());
    let (catching, other) = if catcher == "host" {
        (&host, &guest)
    } else {
        (&guest, &host)
    };
    assert_eq!(
        catching.reason(),
        Some(reason),
        "{catcher}: {:?}",
        catching.result
    );
    let aborted = catching.events_named("mental_poker_aborted");
    assert_eq!(aborted[0]["reason"], reason);
    assert_eq!(
        other.reason(),
        Some(format!("peer_error: {reason}").as_str())
    );
    (host, guest)
}

/// Applies `change` to the first frame with `action` (and to no other).
pub(super) fn first(
    action: &'static str,
    mut change: impl FnMut(&mut Value) + Send + 'static,
) -> impl FnMut(&mut Value) -> bool + Send {
    let mut done = false;
    move |frame: &mut Value| {
        if !done && frame["action"] == action {
            change(frame);
            done = true;
        }
        true
    }
}

fn flip_hex(text: &str, at: usize) -> String {
    let mut chars: Vec<char> = text.chars().collect();
    chars[at] = if chars[at] == '0' { '1' } else { '0' };
    chars.into_iter().collect()
}

fn flip_every_blob(frame: &mut Value) {
    for blob in frame["blobs"].as_array_mut().unwrap() {
        *blob = flip_hex(blob.as_str().unwrap(), 40).into();
    }
}

#[test]
fn a_tampered_host_layer_does_not_open_for_the_guest() {
    let host = tampering(hooks(Strategy::Pass), first("mp_setup_a", flip_every_blob));
    caught(
        host,
        Side::honest(hooks(Strategy::Pass)),
        "guest",
        "card_open_failed",
    );
}

#[test]
fn one_tampered_blob_never_dealt_is_found_by_the_audit() {
    // Nothing is dealt, so no transfer opens the blob: only the audit sees it. The host's
    // audit cannot map the guest's wrapping of it back to a blob it made; the guest's (which
    // holds the tampered blob) cannot open it.
    let nothing_dealt = || CardHooks::new(deck(8), DealPlan { host: 0, guest: 0 }, Strategy::Pass);
    let host = tampering(
        nothing_dealt(),
        first("mp_setup_a", |frame| {
            let blob = frame["blobs"][5].as_str().unwrap();
            frame["blobs"][5] = flip_hex(blob, 40).into();
        }),
    );
    let dir = tempfile::tempdir().unwrap();
    let (host, guest) = play(&spec(), host, Side::honest(nothing_dealt()), dir.path());
    assert_eq!(
        host.reason(),
        Some("derive_id_map_failed"),
        "{:?}",
        host.result
    );
    assert!(
        matches!(
            guest.reason(),
            Some("inner_open_failed" | "peer_error: derive_id_map_failed")
        ),
        "{:?}",
        guest.result
    );
    for side in [&host, &guest] {
        assert_eq!(side.signed_hash(), None, "no receipt after a failed audit");
    }
    let count = |action: &str| {
        host.events_named("protocol_message")
            .into_iter()
            .filter(|m| m["msg"]["action"] == action)
            .count()
    };
    assert_eq!(count("mp_ot_request"), 0, "no card was dealt");
    assert_eq!(count("mp_opening"), 2, "both sides opened");
}

#[test]
fn a_tampered_guest_layer_does_not_open_for_the_host() {
    let guest = tampering(hooks(Strategy::Pass), first("mp_setup_b", flip_every_blob));
    caught(
        Side::honest(hooks(Strategy::Pass)),
        guest,
        "host",
        "card_open_failed",
    );
}

#[test]
fn a_blob_of_the_wrong_length_is_refused_at_setup() {
    // 60-byte blobs would carry a second plaintext (a card that opens two ways) or a mark.
    let host = tampering(
        hooks(Strategy::Pass),
        first("mp_setup_a", |frame| {
            let blob = frame["blobs"][0].as_str().unwrap();
            frame["blobs"][0] = format!("{blob}{}", "00".repeat(16)).into();
        }),
    );
    caught(
        host,
        Side::honest(hooks(Strategy::Pass)),
        "guest",
        "bad_blob",
    );
}

#[test]
fn replaying_the_peers_play_is_not_a_card_in_hand() {
    let seen: Arc<Mutex<Option<Value>>> = Arc::default();
    let record = seen.clone();
    let host = tampering(hooks(Strategy::PlayLowest), move |frame| {
        if frame["action"] == "mp_play" {
            *record.lock().unwrap() = Some(frame.clone());
        }
        true
    });
    let guest = tampering(
        hooks(Strategy::PlayLowest),
        first("mp_play", move |frame| {
            *frame = seen.lock().unwrap().clone().unwrap()
        }),
    );
    caught(host, guest, "host", "card_not_in_hand");
}

#[test]
fn playing_a_card_twice_is_caught() {
    let mut earlier: Option<Value> = None;
    let guest = tampering(hooks(Strategy::PlayLowest), move |frame| {
        if frame["action"] == "mp_play" {
            match &earlier {
                None => earlier = Some(frame.clone()),
                Some(played) => *frame = played.clone(),
            }
        }
        true
    });
    caught(
        Side::honest(hooks(Strategy::PlayLowest)),
        guest,
        "host",
        "card_already_played",
    );
}

#[test]
fn playing_a_card_never_dealt_is_caught() {
    for id in ["11", "12", "999", "07"] {
        let guest = tampering(
            hooks(Strategy::PlayLowest),
            first("mp_play", move |frame| frame["id_b"] = id.into()),
        );
        caught(
            Side::honest(hooks(Strategy::PlayLowest)),
            guest,
            "host",
            "card_not_in_hand",
        );
    }
}

#[test]
fn a_wrong_face_is_caught() {
    let host = tampering(
        hooks(Strategy::PlayLowest),
        first("mp_play", |frame| {
            let rank = frame["rank"].as_u64().unwrap();
            frame["rank"] = ((rank + 1) % 12).into();
        }),
    );
    caught(
        host,
        Side::honest(hooks(Strategy::PlayLowest)),
        "guest",
        "card_face_mismatch",
    );
}

#[test]
fn a_wrong_key_of_the_players_own_layer_does_not_open() {
    let host = tampering(
        hooks(Strategy::PlayLowest),
        first("mp_play", |frame| {
            frame["k_inner"] = flip_hex(frame["k_inner"].as_str().unwrap(), 0).into()
        }),
    );
    caught(
        host,
        Side::honest(hooks(Strategy::PlayLowest)),
        "guest",
        "invalid_keys_or_blob",
    );
}

#[test]
fn a_key_of_the_checkers_layer_must_be_the_one_it_made() {
    let host = tampering(
        hooks(Strategy::PlayLowest),
        first("mp_play", |frame| {
            frame["k_outer"] = flip_hex(frame["k_outer"].as_str().unwrap(), 0).into()
        }),
    );
    caught(
        host,
        Side::honest(hooks(Strategy::PlayLowest)),
        "guest",
        "own_layer_key_mismatch",
    );
    let guest = tampering(
        hooks(Strategy::PlayLowest),
        first("mp_play", |frame| {
            frame["k_inner"] = flip_hex(frame["k_inner"].as_str().unwrap(), 0).into()
        }),
    );
    caught(
        Side::honest(hooks(Strategy::PlayLowest)),
        guest,
        "host",
        "own_layer_key_mismatch",
    );
}

#[test]
fn a_changed_answer_does_not_open_the_sealed_key() {
    let host = tampering(
        hooks(Strategy::Pass),
        first("mp_ot_response", |frame| {
            frame["y"] = flip_hex(frame["y"].as_str().unwrap(), 500).into()
        }),
    );
    caught(
        host,
        Side::honest(hooks(Strategy::Pass)),
        "guest",
        "ot_open_failed",
    );
}

#[test]
fn answers_out_of_range_or_not_canonical_are_refused() {
    let too_big = "f".repeat(512);
    for bad in [
        too_big,
        "0".repeat(512),
        "A".repeat(512),
        "0x".to_string() + &"1".repeat(510),
    ] {
        let host = tampering(
            hooks(Strategy::Pass),
            first("mp_ot_response", move |frame| {
                frame["y"] = bad.clone().into()
            }),
        );
        caught(
            host,
            Side::honest(hooks(Strategy::Pass)),
            "guest",
            "ot_value_out_of_range",
        );
    }
}

#[test]
fn a_transfer_out_of_sequence_is_refused_before_it_is_answered() {
    let guest = tampering(
        hooks(Strategy::Pass),
        first("mp_ot_request", |frame| frame["id"] = "guest-7".into()),
    );
    let (host, _) = caught(
        Side::honest(hooks(Strategy::Pass)),
        guest,
        "host",
        "unexpected_ot_id",
    );
    let answered = host
        .events_named("protocol_message")
        .iter()
        .any(|m| m["msg"]["action"] == "mp_ot_response");
    assert!(!answered, "no answer went out");
}

#[test]
fn a_spec_with_the_references_reasons_hears_the_coarse_one() {
    let spec = spec_with_reasons(&["play_rejected", "rule_rejected"]);
    let host = tampering(
        hooks(Strategy::PlayLowest),
        first("mp_play", |frame| {
            frame["suit"] = ((frame["suit"].as_u64().unwrap() + 1) % 4).into()
        }),
    );
    let dir = tempfile::tempdir().unwrap();
    let (host, guest) = play(
        &spec,
        host,
        Side::honest(hooks(Strategy::PlayLowest)),
        dir.path(),
    );
    assert_eq!(guest.reason(), Some("card_face_mismatch"));
    assert_eq!(host.reason(), Some("peer_error: play_rejected"));
    // A reason the spec cannot carry is not sent at all: the peer only sees us leave.
    let guest = tampering(
        hooks(Strategy::Pass),
        first("mp_setup_b", |frame| frame["blobs"][0] = "00".into()),
    );
    let dir = tempfile::tempdir().unwrap();
    let (host, guest) = play(
        &spec,
        Side::honest(hooks(Strategy::Pass)),
        guest,
        dir.path(),
    );
    assert_eq!(host.reason(), Some("bad_blob"));
    assert_eq!(guest.reason(), Some("peer_disconnected"));
}

/// Frames that break the shape of a setup, an opening or a witness list, or come out of turn.
#[test]
fn malformed_and_misplaced_frames_each_have_their_reason() {
    type Change = fn(&mut Value);
    let cases: [(&str, &'static str, Change, &str); 9] = [
        (
            "host",
            "mp_setup_a",
            |f| f["rsa_pub"] = r#"{"e":3,"n":"00"}"#.into(),
            "bad_rsa_key",
        ),
        (
            "host",
            "mp_setup_a",
            |f| f["sealed_keys"][0] = f["sealed_keys"][1].clone(),
            "bad_sealed_entry",
        ),
        (
            "host",
            "mp_setup_a",
            |f| f["blobs"][1] = f["blobs"][0].clone(),
            "duplicate_blob",
        ),
        (
            "guest",
            "mp_setup_b",
            |f| drop(f["blobs"].as_array_mut().unwrap().pop()),
            "setup_size_mismatch",
        ),
        (
            "guest",
            "mp_opening",
            |f| f["openings"][0] = "{}".into(),
            "malformed_opening",
        ),
        (
            "guest",
            "mp_opening",
            |f| drop(f["openings"].as_array_mut().unwrap().remove(0)),
            "keyset_mismatch",
        ),
        (
            "guest",
            "mp_witness",
            |f| f["witnesses"] = serde_json::json!(["x"]),
            "malformed_witness",
        ),
        (
            "guest",
            "mp_opening",
            |f| *f = serde_json::json!({"action": "mp_pass"}),
            "audit_refused",
        ),
        (
            "guest",
            "mp_ot_request",
            |f| *f = serde_json::json!({"action": "mp_pass"}),
            "unexpected_message",
        ),
    ];
    for (cheater, action, change, reason) in cases {
        let tampered = tampering(hooks(Strategy::Pass), first(action, change));
        let honest = Side::honest(hooks(Strategy::Pass));
        let (host, guest, catcher) = match cheater {
            "host" => (tampered, honest, "guest"),
            _ => (honest, tampered, "host"),
        };
        let dir = tempfile::tempdir().unwrap();
        let (host, guest) = play(&spec(), host, guest, dir.path());
        let catching = if catcher == "host" { &host } else { &guest };
        assert_eq!(
            catching.reason(),
            Some(reason),
            "{action}: {:?}",
            catching.result
        );
    }
}

#[test]
fn a_frame_the_spec_refuses_is_recorded_and_stops_the_game() {
    let guest = tampering(
        hooks(Strategy::PlayLowest),
        first("mp_play", |frame| frame["rank"] = "high".into()),
    );
    let (host, _) = caught(
        Side::honest(hooks(Strategy::PlayLowest)),
        guest,
        "host",
        "invalid_frame",
    );
    assert_eq!(host.events_named("message_rejected").len(), 1);
}

#[test]
fn a_deal_larger_than_the_deck_is_refused() {
    let greedy = || CardHooks::new(deck(8), DealPlan { host: 5, guest: 5 }, Strategy::Pass);
    let dir = tempfile::tempdir().unwrap();
    let (host, guest) = play(
        &spec(),
        Side::honest(greedy()),
        Side::honest(greedy()),
        dir.path(),
    );
    assert_eq!(host.reason(), Some("bad_deal_plan"));
    assert!(matches!(
        guest.reason(),
        Some("bad_deal_plan" | "peer_error: bad_deal_plan")
    ));
}
