//! A peer that keeps the connection up but stops sending — before the opening of the
//! setup, mid-deal, mid-play, or swallowing its final receipt — never freezes our side: at
//! its deadline our side ends with `peer_timeout`, and when the game's result is already
//! known (everything audited, our receipt sent) it is recorded as the result.

use std::time::Duration;

use serde_json::Value;

use super::game::{CardHooks, Side, Strategy, deck, play, spec};
use crate::hooks::DealPlan;

const SHORT: Duration = Duration::from_millis(800);

fn hooks() -> CardHooks {
    CardHooks::new(
        deck(12),
        DealPlan { host: 3, guest: 3 },
        Strategy::PlayLowest,
    )
}

/// A side that goes silent from the first frame with `action` on (sending nothing more),
/// and waits as long as it likes itself.
fn silent_from(action: &'static str) -> Side {
    let mut silent = false;
    Side {
        tamper: Some(Box::new(move |frame: &mut Value| {
            silent |= frame["action"] == action;
            !silent
        })),
        hold_open: true,
        ..Side::honest(hooks())
    }
}

fn patient_host() -> Side {
    Side {
        peer_timeout: SHORT,
        ..Side::honest(hooks())
    }
}

#[test]
fn a_peer_silent_at_any_step_ends_our_side_with_peer_timeout() {
    for step in [
        "mp_setup_b",
        "mp_ot_request",
        "mp_play",
        "mp_opening",
        "mp_witness",
    ] {
        let dir = tempfile::tempdir().unwrap();
        let started = std::time::Instant::now();
        let (host, _guest) = play(&spec(), patient_host(), silent_from(step), dir.path());
        let outcome = host.result.as_ref().unwrap();
        assert_eq!(
            (outcome.completed, outcome.reason.as_deref()),
            (false, Some("peer_timeout")),
            "silent from {step}: {outcome:?}"
        );
        assert!(started.elapsed() < Duration::from_secs(60), "{step}");
        let ended = host.events_named("session_ended");
        assert_eq!(ended.last().unwrap()["reason"], "peer_timeout", "{step}");
    }
}

#[test]
fn a_winner_whose_final_receipt_is_swallowed_still_records_its_win() {
    let dir = tempfile::tempdir().unwrap();
    let (host, guest) = play(
        &spec(),
        patient_host(),
        silent_from("mp_terminal_receipt"),
        dir.path(),
    );
    let outcome = host.result.as_ref().unwrap();
    assert!(outcome.completed, "{outcome:?}");
    assert_eq!(
        outcome.winner.map(|w| w.as_str()),
        Some("host"),
        "the host plays first and wins"
    );
    assert!(
        outcome
            .reason
            .as_deref()
            .unwrap()
            .starts_with("peer_timeout"),
        "{outcome:?}"
    );
    let missing = host.events_named("mp_terminal_receipt_missing");
    assert_eq!(missing.len(), 1);
    assert_eq!(
        Some(missing[0]["transcript_hash"].as_str().unwrap().to_string()),
        guest.signed_hash()
    );
    // The silent side got the host's receipt and finished as usual.
    assert!(guest.result.as_ref().unwrap().completed);
}
