//! Interop: a Four-player Landlord round, both ways. Led by our agent on our hooks, with three
//! reference members who verify every step and read the views our leader makes; and led by
//! the reference on its hooks, with our member at the table. Nobody sees another's hand; our
//! leader refuses an illegal bid and an action out of turn with their reasons; the bidding
//! makes a Landlord, whose eight-card bottom every seat sees; and the round is played, lead
//! and answer, to the first empty hand and its score, which every seat sees.

use serde_json::{Value, json};

use crate::room_seats::{
    LIMIT, Seat, act_when_current, dealt, ended, our_leaders_table, reference_leaders_table,
    refused, seat_of,
};
use crate::support::net::wait_until;

/// Far more actions than a round of this test's plays takes.
const MOST_ACTIONS: usize = 600;

/// Where a view is in the round: its phase, cards played, passes since the last play, who
/// acts.
fn progress(view: &Value) -> (Value, usize, u64, String) {
    (
        view["phase"].clone(),
        view["discard"].as_array().map_or(0, Vec::len),
        view["passes"].as_u64().unwrap_or(0),
        view["current_player"].as_str().unwrap_or("").to_string(),
    )
}

/// The cards of the hand in `view` whose value is `value`, at most `count` of them.
fn of_value(view: &Value, value: u64, count: usize) -> Vec<String> {
    view["my_hand"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|card| card["value"].as_u64() == Some(value))
        .take(count)
        .map(|card| card["card_id"].as_str().unwrap().to_string())
        .collect()
}

/// A simple legal action from the seat's own view: to lead, every card of its lowest rank
/// (a single, pair, triple or bomb); to answer a single, pair or triple, the lowest rank
/// (no joker pairs) that holds enough cards and beats it; otherwise pass.
fn simple_action(view: &Value) -> Value {
    let hand = view["my_hand"].as_array().unwrap();
    let mut values: Vec<u64> = hand.iter().filter_map(|c| c["value"].as_u64()).collect();
    values.sort_unstable();
    let last = &view["last_play"];
    if last.is_null() {
        return json!({"kind": "play", "card_ids": of_value(view, values[0], usize::MAX)});
    }
    let combination = &last["combination"];
    if !matches!(
        combination["kind"].as_str(),
        Some("single" | "pair" | "triple")
    ) {
        return json!({"kind": "pass"});
    }
    let count = combination["length"].as_u64().unwrap() as usize;
    let above = combination["primary"].as_u64().unwrap();
    let answer = values
        .iter()
        .filter(|&&value| value > above && (count == 1 || value <= 15))
        .find(|&&value| values.iter().filter(|&&v| v == value).count() >= count);
    match answer {
        Some(&value) => json!({"kind": "play", "card_ids": of_value(view, value, count)}),
        None => json!({"kind": "pass"}),
    }
}

/// The seat of `key` acts with `choose`'s action once its view has caught up with the
/// leader's (`seats[0]`); returns once the leader has taken the action.
fn act(seats: &[Seat], key: &str, choose: impl Fn(&Value) -> Value) {
    let (_, leading) = seats[0].seen().unwrap();
    act_when_current(seats, key, choose, (progress, progress(&leading)));
}

/// The seat to act, by the leader's view.
fn current(seats: &[Seat]) -> String {
    let (_, view) = seats[0].seen().unwrap();
    view["current_player"].as_str().unwrap().to_string()
}

/// The bids (seat 0 bids 1, seat 1 passes, seat 2 bids 3 and so becomes the Landlord at
/// once), the bottom every seat then sees, and the round played by `simple_action` to its
/// end, checked in every seat's view.
fn play_round(seats: &[Seat]) {
    let mut landlord = String::new();
    for value in [1, 0, 3] {
        landlord = current(seats);
        act(seats, &landlord, |_| json!({"kind": "bid", "value": value}));
    }
    for seat in seats {
        let view = wait_until(LIMIT, || {
            let (_, view) = seat.seen()?;
            (view["phase"] == "playing").then_some(view)
        })
        .expect("every seat sees the play begin");
        assert_eq!(view["landlord"], landlord.as_str(), "{view}");
        assert_eq!(
            view["current_player"],
            landlord.as_str(),
            "the Landlord leads"
        );
        assert_eq!(view["bottom_revealed"].as_array().unwrap().len(), 8);
        assert_eq!(view["hand_counts"][&landlord], 33, "{view}");
    }
    let (_, theirs) = seat_of(seats, &landlord).seen().unwrap();
    for card in seats[0].seen().unwrap().1["bottom_revealed"]
        .as_array()
        .unwrap()
    {
        assert!(
            theirs["my_hand"].as_array().unwrap().contains(card),
            "the bottom went to the Landlord's hand"
        );
    }
    for _ in 0..MOST_ACTIONS {
        let (_, view) = seats[0].seen().unwrap();
        if view["phase"] == "completed" {
            break;
        }
        act(seats, &current(seats), simple_action);
    }
    for seat in seats {
        let (outcome, view) = ended(seat);
        let winner = view["last_play"]["public_key"].as_str().unwrap();
        assert_eq!(
            view["hand_counts"][winner], 0,
            "the winner went out: {view}"
        );
        let landlord_won = winner == landlord;
        assert_eq!(outcome, if landlord_won { "landlord" } else { "farmers" });
        let scores = view["scores"].as_object().unwrap();
        let total: i64 = scores.values().map(|s| s.as_i64().unwrap()).sum();
        assert_eq!(total, 0, "the Landlord's gain is the Farmers' loss: {view}");
        assert_eq!(scores[&landlord].as_i64().unwrap() > 0, landlord_won);
        let base = 3 * (1_i64 << view["bombs"].as_u64().unwrap());
        assert_eq!(
            scores[&landlord].as_i64().unwrap().abs(),
            3 * base,
            "{view}"
        );
    }
}

#[test]
fn reference_members_play_a_round_at_our_leaders_landlord_table() {
    let net = crate::support::net::Net::start();
    let seats = our_leaders_table(&net, "four-player-landlord-v1", "{}");
    dealt(&seats, 25);
    let bid = r#"{"kind": "bid", "value": 4}"#;
    refused(&seats[0], bid, "a bid is 0 (pass), 1, 2 or 3");
    refused(
        &seats[0],
        r#"{"kind": "pass"}"#,
        "the bidding takes only bid",
    );
    play_round(&seats);
}

#[test]
fn our_member_plays_a_round_at_a_reference_leaders_landlord_table() {
    let net = crate::support::net::Net::start();
    let seats = reference_leaders_table(&net, "four-player-landlord-v1", "{}");
    dealt(&seats, 25);
    play_round(&seats);
}
