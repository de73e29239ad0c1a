//! Interop: a Contract Bridge board, both ways. Led by our agent on our hooks, with three
//! reference members who verify every step and read the views our leader makes; and led by
//! the reference on its hooks, with our member at the table. Nobody sees another's hand; our
//! leader refuses an illegal call with its reason; the auction sets the contract; dummy's
//! cards reach every seat only with the opening lead; and the board is played card by card,
//! declarer playing dummy's, to its score, which every seat sees.

use serde_json::{Value, json};

use crate::room_seats::{
    LIMIT, Seat, act_when_current, dealt, ended, lowest_card, our_leaders_table,
    reference_leaders_table, refused,
};
use crate::support::net::wait_until;

/// Where the board is: the calls made and the cards played.
fn progress(view: &Value) -> (usize, usize) {
    (
        view["auction"].as_array().map_or(0, Vec::len),
        cards_played(view),
    )
}

/// How many cards the view shows played.
fn cards_played(view: &Value) -> usize {
    let tricks = view["trick_history"].as_array().map_or(0, Vec::len);
    tricks * 4 + view["current_trick"].as_array().map_or(0, Vec::len)
}

/// The lowest card the seat may play to the trick in its view: the led suit when it holds
/// it, else any.
fn lowest_legal(view: &Value) -> String {
    let hand = view["playable_hand"].as_array().unwrap();
    let led = &view["current_trick"][0]["card"]["suit"];
    lowest_card(hand, |c| &c["suit"] == led, |c| c["rank"].as_u64())
}

/// The board from its first call to its score: the dealer bids 1NT and the others pass
/// (board 1: North, seat 0, deals and declares), then every seat plays its lowest legal card
/// in turn, declarer also dummy's. `seats[0]` is the leader, whose view says who acts;
/// `hands` are the seats' first views. Checks that dummy reaches every seat with the opening
/// lead and that every seat sees the board end with its score.
fn play_board(seats: &[Seat], hands: &[(String, Value)]) {
    let north = hands[0].0.clone();
    assert_eq!(hands[0].1["dealer"], north.as_str(), "board 1: North deals");
    let bid = json!({"kind": "bid", "level": 1, "denomination": "nt"});
    act_when_current(seats, &north, |_| bid.clone(), (progress, (0, 0)));
    for calls in 1..4 {
        let (_, view) = seats[0].seen().unwrap();
        let current = view["current_player"].as_str().unwrap().to_string();
        act_when_current(
            seats,
            &current,
            |_| json!({"kind": "pass"}),
            (progress, (calls, 0)),
        );
    }
    let (_, view) = seats[0].seen().unwrap();
    assert_eq!(view["phase"], "playing", "{view}");
    assert_eq!(view["declarer"], north.as_str());
    let dummy = view["dummy"].as_str().unwrap().to_string();
    let dummy_cards = &hands.iter().find(|(key, _)| *key == dummy).unwrap().1["my_hand"];
    for seat in seats {
        assert_eq!(seat.seen().unwrap().1["dummy_hand"], json!([]));
    }
    for played in 0..52 {
        let (_, view) = seats[0].seen().unwrap();
        let current = view["current_player"].as_str().unwrap().to_string();
        let play = |own: &Value| json!({"kind": "play", "card_id": lowest_legal(own)});
        act_when_current(seats, &current, play, (progress, (4, played)));
        if played == 0 {
            for seat in seats {
                let shown = wait_until(LIMIT, || {
                    let (_, view) = seat.seen()?;
                    (view["dummy_revealed"] == true).then(|| view["dummy_hand"].clone())
                })
                .expect("dummy goes on the table with the opening lead");
                assert_eq!(
                    &shown, dummy_cards,
                    "every seat sees dummy's thirteen cards"
                );
            }
        }
    }
    for seat in seats {
        let (outcome, view) = ended(seat);
        assert_eq!(view["trick_history"].as_array().unwrap().len(), 13);
        let tricks = &view["tricks"];
        let ns = tricks["ns"].as_u64().unwrap();
        assert_eq!(ns + tricks["ew"].as_u64().unwrap(), 13, "{tricks}");
        let made = ns >= 7;
        let expected = if made { "ns_made" } else { "ns_down" };
        assert_eq!(outcome, expected, "1NT needs seven tricks: {tricks}");
        let scorer = if made { "ns" } else { "ew" };
        assert!(view["scores"][scorer].as_u64().unwrap() > 0, "{view}");
    }
}

#[test]
fn reference_members_play_a_board_at_our_leaders_bridge_table() {
    let net = crate::support::net::Net::start();
    let seats = our_leaders_table(&net, "contract-bridge-v1", r#"{"board_number": 1}"#);
    let hands = dealt(&seats, 13);
    // Our leader refuses its own double of no bid.
    refused(&seats[0], r#"{"kind": "double"}"#, "no bid to double");
    play_board(&seats, &hands);
}

#[test]
fn our_member_plays_a_board_at_a_reference_leaders_bridge_table() {
    let net = crate::support::net::Net::start();
    let seats = reference_leaders_table(&net, "contract-bridge-v1", "{}");
    let hands = dealt(&seats, 13);
    play_board(&seats, &hands);
}
