//! Interop: a hand of Upgrade (Tractor), both ways. Led by our agent on our hooks, with three
//! reference members who verify every step and read the views our leader makes; and led by
//! the reference on its hooks, with our member at the table. Nobody sees another's hand; our
//! leader refuses a declaration that is not of the level's rank with its reason; a level card
//! declares trumps; the declarer takes the kitty and buries eight; and the hand is played
//! card by card to its score, which every seat sees.

use serde_json::{Value, json};

use crate::room_seats::{
    LIMIT, Seat, act_when_current, dealt, ended, lowest_card, our_leaders_table,
    reference_leaders_table, refused, seat_of,
};
use crate::support::net::wait_until;

/// Where the hand is: its number, the declarations made, whether the kitty is buried and
/// how many cards the tricks hold.
fn progress(view: &Value) -> (u64, usize, bool, usize) {
    let played = |plays: &Value| -> usize {
        plays.as_array().map_or(0, |plays| {
            plays
                .iter()
                .map(|p| p["cards"].as_array().map_or(0, Vec::len))
                .sum()
        })
    };
    let in_tricks: usize = view["trick_history"]
        .as_array()
        .map_or(0, |tricks| tricks.iter().map(|t| played(&t["plays"])).sum());
    (
        view["hand_number"].as_u64().unwrap_or(0),
        view["declarations"].as_object().map_or(0, |d| d.len()),
        view["phase"] == "playing" || view["phase"] == "completed",
        in_tricks + played(&view["current_trick"]),
    )
}

/// Whether a card is a trump in the view's hand: a joker, a card of the level's rank or of
/// the trump suit.
fn is_trump(view: &Value, card: &Value) -> bool {
    card["suit"] == "joker"
        || card["rank"] == view["level_rank"]
        || card["suit"] == view["trump_suit"]
}

/// The effective suit of a card: "trump" or its own.
fn suit_of(view: &Value, card: &Value) -> String {
    if is_trump(view, card) {
        "trump".to_string()
    } else {
        card["suit"].as_str().unwrap().to_string()
    }
}

/// The lowest single card the seat may play: of the led effective suit when it holds one.
fn lowest_legal(view: &Value) -> String {
    let hand = view["my_hand"].as_array().unwrap();
    let led = view["current_trick"][0]["shape"]["suit"].as_str();
    lowest_card(
        hand,
        |c| Some(suit_of(view, c).as_str()) == led,
        |c| (is_trump(view, c), c["rank"].as_u64()),
    )
}

/// One hand (the match's only one) from its declarations to its score: the first seat
/// holding a card of the level's rank declares with it, the others pass; the declarer
/// buries its first eight other cards; then every seat plays its lowest legal single in
/// turn. `seats[0]` is the leader, whose view says who acts; `hands` are the seats' first
/// views.
fn play_hand(seats: &[Seat], hands: &[(String, Value)]) {
    let level = &hands[0].1["level_rank"];
    let declaring = hands.iter().find_map(|(key, view)| {
        let card = view["my_hand"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| &c["rank"] == level && c["suit"] != "joker")?;
        Some((key.clone(), card.clone()))
    });
    for (made, (key, _)) in hands.iter().enumerate() {
        let action = match &declaring {
            Some((declarer, card)) if declarer == key => {
                json!({"kind": "declare_trump", "card_ids": [card["card_id"]]})
            }
            _ => json!({"kind": "pass_declare"}),
        };
        act_when_current(
            seats,
            key,
            |_| action.clone(),
            (progress, (1, made, false, 0)),
        );
    }
    let (_, view) = seats[0].seen().unwrap();
    assert_eq!(view["phase"], "bury", "{view}");
    let declarer = view["declarer"].as_str().unwrap().to_string();
    match &declaring {
        Some((key, card)) => {
            assert_eq!(&declarer, key);
            assert_eq!(view["trump_suit"], card["suit"]);
        }
        None => assert_eq!(view["trump_suit"], Value::Null),
    }
    let kept: Vec<Value> = declaring
        .iter()
        .map(|(_, card)| card["card_id"].clone())
        .collect();
    let seat = seat_of(seats, &declarer);
    let buried: Vec<Value> = wait_until(LIMIT, || {
        let (_, own) = seat.seen()?;
        let hand = own["my_hand"].as_array()?;
        (hand.len() == 33).then(|| {
            hand.iter()
                .map(|c| c["card_id"].clone())
                .filter(|id| !kept.contains(id))
                .take(8)
                .collect()
        })
    })
    .expect("the declarer took the kitty");
    let bury = json!({"kind": "bury", "card_ids": buried});
    act_when_current(
        seats,
        &declarer,
        |_| bury.clone(),
        (progress, (1, 4, false, 0)),
    );
    for played in 0..100 {
        let (_, view) = seats[0].seen().unwrap();
        let current = view["current_player"].as_str().unwrap().to_string();
        let play = |own: &Value| json!({"kind": "play", "card_ids": [lowest_legal(own)]});
        act_when_current(seats, &current, play, (progress, (1, 4, true, played)));
    }
    for seat in seats {
        let (outcome, view) = ended(seat);
        let result = &view["last_result"];
        let winner = result["controlling_team"].clone();
        assert_eq!(outcome, winner, "{view}");
        let points = result["defender_points"].as_u64().unwrap();
        let declarers = &view["declarer_team"];
        assert_eq!(
            winner == *declarers,
            points < 80,
            "the defenders take control with 80: {view}"
        );
        assert_eq!(view["kitty_revealed"].as_array().unwrap().len(), 8);
    }
}

#[test]
fn reference_members_play_a_hand_at_our_leaders_upgrade_table() {
    let net = crate::support::net::Net::start();
    let seats = our_leaders_table(&net, "upgrade-tractor-v1", r#"{"max_hands": 1}"#);
    let hands = dealt(&seats, 25);
    let not_level = hands[0].1["my_hand"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["rank"] != hands[0].1["level_rank"] && c["suit"] != "joker")
        .unwrap()["card_id"]
        .clone();
    // Our leader refuses its own declaration off the level's rank.
    let action = json!({"kind": "declare_trump", "card_ids": [not_level]});
    refused(
        &seats[0],
        &action.to_string(),
        "cards of this hand's level (2)",
    );
    play_hand(&seats, &hands);
}

#[test]
fn our_member_plays_a_hand_at_a_reference_leaders_upgrade_table() {
    let net = crate::support::net::Net::start();
    let seats = reference_leaders_table(&net, "upgrade-tractor-v1", r#"{"max_hands": 1}"#);
    let hands = dealt(&seats, 25);
    play_hand(&seats, &hands);
}
