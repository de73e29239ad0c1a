//! Interop: an Aether Sigil match, both ways. Led by our agent on our hooks, with three
//! reference members who verify every step and read the views our leader makes; and led by
//! the reference on its hooks, with our member at the table. Nobody sees another's hand; our
//! leader refuses an action out of turn and a card not in the hand with their reasons; and
//! the match is played, units summoned and sent at the next channeler, to the last one left.

use serde_json::{Value, json};

use crate::room_seats::{
    Seat, act_when_current, dealt, ended, our_leaders_table, reference_leaders_table, refused,
    seats_after,
};

/// Far more actions than a match of this test's plays takes.
const MOST_ACTIONS: usize = 400;

/// Ten life each (the contract's least), so the match is short.
const OPTIONS: &str = r#"{"starting_life": 10}"#;

/// What every seat's view shares: all but its own hand and identity.
fn public(view: &Value) -> Value {
    let mut shared = view.clone();
    let fields = shared.as_object_mut().unwrap();
    fields.remove("my_hand");
    fields.remove("you");
    shared
}

/// A simple legal action from the seat's own view: a unit it can pay for while its row has
/// room, else a ready unit sent at the next channeler still in, else the end of the turn.
fn simple_action(view: &Value) -> Value {
    let me = view["you"]["public_key"].as_str().unwrap();
    let energy = view["players"][me]["energy"].as_u64().unwrap();
    let units = view["units"][me].as_array().cloned().unwrap_or_default();
    let affordable = view["my_hand"]
        .as_array()
        .unwrap()
        .iter()
        .find(|card| card["card_type"] == "unit" && card["cost"].as_u64().unwrap() <= energy);
    if let (true, Some(card)) = (units.len() < 3, affordable) {
        return json!({"kind": "play_card", "card_id": card["card_id"]});
    }
    let ready = units
        .iter()
        .find(|unit| view["unit_state"][unit["card_id"].as_str().unwrap()]["exhausted"] == false);
    let Some(unit) = ready else {
        return json!({"kind": "end_turn"});
    };
    let target = seats_after(view, me)
        .into_iter()
        .find(|key| view["players"][*key]["defeated"] == false)
        .unwrap();
    json!({"kind": "attack", "unit_id": unit["card_id"], "target_public_key": target})
}

/// The seat to act, by the leader's view.
fn current(seats: &[Seat]) -> String {
    let (_, view) = seats[0].seen().unwrap();
    view["current_player"].as_str().unwrap().to_string()
}

/// The match played by `simple_action` to its end, checked in every seat's view.
fn play_match(seats: &[Seat]) {
    for _ in 0..MOST_ACTIONS {
        let (_, view) = seats[0].seen().unwrap();
        if view["phase"] == "completed" {
            break;
        }
        let leading = public(&view);
        act_when_current(seats, &current(seats), simple_action, (public, leading));
    }
    for seat in seats {
        let (outcome, view) = ended(seat);
        assert_eq!(view["winner"], outcome, "{view}");
        let players = view["players"].as_object().unwrap();
        for (key, player) in players {
            assert_eq!(player["defeated"], *key != outcome, "{view}");
        }
        let standing: usize = view["units"]
            .as_object()
            .unwrap()
            .values()
            .map(|row| row.as_array().unwrap().len())
            .sum();
        assert!(standing > 0, "the units summoned are on the table: {view}");
    }
}

#[test]
fn reference_members_play_a_match_at_our_leaders_aether_sigil_table() {
    let net = crate::support::net::Net::start();
    let seats = our_leaders_table(&net, "aether-sigil-v1", OPTIONS);
    dealt(&seats, 5);
    refused(
        &seats[1],
        r#"{"kind": "end_turn"}"#,
        "not your turn: seat 0",
    );
    refused(
        &seats[0],
        r#"{"kind": "play_card", "card_id": "nope"}"#,
        "card_id is not a card in your hand",
    );
    play_match(&seats);
}

#[test]
fn our_member_plays_a_match_at_a_reference_leaders_aether_sigil_table() {
    let net = crate::support::net::Net::start();
    let seats = reference_leaders_table(&net, "aether-sigil-v1", OPTIONS);
    dealt(&seats, 5);
    play_match(&seats);
}
