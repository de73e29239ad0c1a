//! Interop: a Classical Mahjong hand, both ways. Led by our agent on our hooks, with three
//! reference members who verify every step and read the views our leader makes; and led by
//! the reference on its hooks, with our member at the table. Nobody sees another's tiles; our
//! leader refuses a discard out of turn and an answer from the discarder with their reasons;
//! every discard's claim window is answered by the three other seats. At our table the hand is
//! played to its empty wall, which every seat sees, with the match's end; at the reference's,
//! one go-round of scripted discards reaches every seat (our seats playing the reference's
//! table to its end by themselves is `reference_tables`).

use serde_json::{Value, json};

use crate::room_seats::{
    LIMIT, Seat, act_when_current, dealt, ended, our_leaders_table, reference_leaders_table,
    refused, seats_after,
};
use crate::support::net::wait_until;

/// More discards than a hand with 83 tiles to draw takes.
const MOST_DISCARDS: usize = 400;

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

/// Each seat to act discards its first tile and every other seat passes on it, for `discards`
/// discards or until the hand ends.
fn discard_and_pass(seats: &[Seat], discards: usize) {
    let mut made = 0;
    while made < discards {
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
            made += 1;
            continue;
        }
        let discarder = view["last_discard"]["public_key"].as_str().unwrap();
        for key in seats_after(&view, discarder) {
            act(seats, key, |_| json!({"kind": "pass_claim"}));
        }
    }
}

/// The tiles in every river of `view`.
fn river_tiles(view: &Value) -> usize {
    view["rivers"]
        .as_object()
        .unwrap()
        .values()
        .map(|river| river.as_array().unwrap().len())
        .sum()
}

/// The hand played to its end by [`discard_and_pass`] until the wall is empty; checked in
/// every seat's view.
fn play_hand(seats: &[Seat]) {
    discard_and_pass(seats, MOST_DISCARDS);
    for seat in seats {
        let (outcome, view) = ended(seat);
        assert_eq!(outcome, "draw", "nobody won, every score is level: {view}");
        assert_eq!(view["wall_count"], 0, "{view}");
        assert_eq!(view["last_result"]["kind"], "wall_exhausted", "{view}");
        assert_eq!(
            river_tiles(&view),
            84,
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
fn our_member_discards_and_passes_a_go_round_at_a_reference_leaders_mahjong_table() {
    let net = crate::support::net::Net::start();
    let seats = reference_leaders_table(&net, "classical-mahjong-v1", r#"{"max_hands": 1}"#);
    dealt_tiles(&seats);
    // Five discards: every seat, ours among them, discards once and answers three claim
    // windows, and the dealer starts the next go-round.
    discard_and_pass(&seats, 5);
    for seat in &seats {
        let view = wait_until(LIMIT, || {
            let (_, view) = seat.seen()?;
            (river_tiles(&view) == 5).then_some(view)
        })
        .expect("every seat sees the five discards");
        assert_eq!(view["wall_count"], 136 - 53 - 4, "four tiles drawn: {view}");
    }
}
