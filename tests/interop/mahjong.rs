//! Interop: a Classical Mahjong hand, both ways. Led by our agent on our hooks, with three
//! reference members who verify every step and read the views our leader makes; and led by
//! the reference on its hooks, with our member at the table. Nobody sees another's tiles; our
//! leader refuses a discard out of turn and an answer from the discarder with their reasons;
//! every discard's claim window is answered by the three other seats; and the hand is played
//! to its empty wall, which every seat sees, with the match's end.

use serde_json::{Value, json};

use crate::room_seats::{
    LIMIT, Seat, act_when_current, dealt, ended, our_leaders_table, reference_leaders_table,
    refused, seats_after,
};
use crate::support::net::wait_until;

/// More actions than a hand with 83 tiles to draw takes (a discard and three answers each).
const MOST_ACTIONS: usize = 400;

/// Where a view is in the hand: its phase, the tiles left, the answers in, who acts.
fn progress(view: &Value) -> (Value, u64, u64, String) {
    (
        view["phase"].clone(),
        view["wall_count"].as_u64().unwrap_or(0),
        view["claim_response_count"].as_u64().unwrap_or(0),
        view["current_player"].as_str().unwrap_or("").to_string(),
    )
}

/// The seat of `key` acts with `choose`'s action once its view has caught up with the
/// leader's (`seats[0]`).
fn act(seats: &[Seat], key: &str, choose: impl Fn(&Value) -> Value) {
    let (_, leading) = seats[0].seen().unwrap();
    act_when_current(seats, key, choose, (progress, progress(&leading)));
}

/// The first tile of the seat's own hand, discarded.
fn discard_first(view: &Value) -> Value {
    json!({"kind": "discard", "card_id": view["my_hand"][0]["card_id"]})
}

/// Seat 0, the dealer, holds fourteen tiles and the others thirteen, none seeing another's.
fn dealt_tiles(seats: &[Seat]) {
    dealt(&seats[1..], 13);
    let view = wait_until(LIMIT, || {
        let (_, view) = seats[0].seen()?;
        (view["my_hand"].as_array()?.len() == 14).then_some(view)
    })
    .expect("the dealer holds fourteen tiles");
    assert_eq!(view["wall_count"], 136 - 53, "{view}");
}

/// The hand played to its end: each seat to act discards its first tile and every other seat
/// passes on it, until the wall is empty; checked in every seat's view.
fn play_hand(seats: &[Seat]) {
    for _ in 0..MOST_ACTIONS {
        let (_, view) = seats[0].seen().unwrap();
        if view["phase"] == "completed" {
            break;
        }
        if view["phase"] == "discard" {
            act(
                seats,
                view["current_player"].as_str().unwrap(),
                discard_first,
            );
            continue;
        }
        let discarder = view["last_discard"]["public_key"].as_str().unwrap();
        for key in seats_after(&view, discarder) {
            act(seats, key, |_| json!({"kind": "pass_claim"}));
        }
    }
    for seat in seats {
        let (outcome, view) = ended(seat);
        assert_eq!(outcome, "draw", "nobody won, every score is level: {view}");
        assert_eq!(view["wall_count"], 0, "{view}");
        assert_eq!(view["last_result"]["kind"], "wall_exhausted", "{view}");
        let rivers: usize = view["rivers"]
            .as_object()
            .unwrap()
            .values()
            .map(|river| river.as_array().unwrap().len())
            .sum();
        assert_eq!(
            rivers, 84,
            "the dealer's first discard and one per tile drawn"
        );
        assert!(
            view["scores"]
                .as_object()
                .unwrap()
                .values()
                .all(|score| score == 25000),
            "{view}"
        );
    }
}

#[test]
fn reference_members_play_a_hand_at_our_leaders_mahjong_table() {
    let net = crate::support::net::Net::start();
    let seats = our_leaders_table(&net, "classical-mahjong-v1", r#"{"max_hands": 1}"#);
    dealt_tiles(&seats);
    refused(
        &seats[1],
        r#"{"kind": "discard", "card_id": "x"}"#,
        "not your turn",
    );
    let (_, view) = seats[0].seen().unwrap();
    act(
        &seats,
        view["current_player"].as_str().unwrap(),
        discard_first,
    );
    refused(
        &seats[0],
        r#"{"kind": "pass_claim"}"#,
        "you cannot answer this discard",
    );
    play_hand(&seats);
}

#[test]
fn our_member_plays_a_hand_at_a_reference_leaders_mahjong_table() {
    let net = crate::support::net::Net::start();
    let seats = reference_leaders_table(&net, "classical-mahjong-v1", r#"{"max_hands": 1}"#);
    dealt_tiles(&seats);
    play_hand(&seats);
}
