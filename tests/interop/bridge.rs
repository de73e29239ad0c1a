//! Interop: a Contract Bridge board led by our agent on our hooks, with three reference
//! members who verify every step and read the views our leader makes. Nobody sees another's
//! hand; our leader refuses an illegal call with its reason; the auction sets the contract;
//! dummy's cards reach every seat only with the opening lead; and the board is played card by
//! card, declarer playing dummy's, to its score, which every reference member sees.

use serde_json::{Value, json};

use crate::room_seats::{LIMIT, Seat, dealt, json_at, our_leaders_table};
use crate::support::net::wait_until;

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
    let following: Vec<&Value> = hand.iter().filter(|c| &c["suit"] == led).collect();
    let choices = if following.is_empty() {
        hand.iter().collect()
    } else {
        following
    };
    let card = choices
        .into_iter()
        .min_by_key(|c| c["rank"].as_u64())
        .expect("a card to play");
    card["card_id"].as_str().unwrap().to_string()
}

/// The seat whose key is `key`.
fn seat_of<'a>(seats: &'a [Seat], key: &str) -> &'a Seat {
    seats
        .iter()
        .find(|seat| seat.seen().is_some_and(|(own, _)| own == key))
        .expect("the seat to act is at the table")
}

/// The seat of `key` acts once it sees what the leader sees (`played` cards, `calls` calls);
/// returns once the leader has taken the action.
fn act_when_current(seats: &[Seat], key: &str, action: &Value, (calls, played): (usize, usize)) {
    let seat = seat_of(seats, key);
    let progress = |view: &Value| {
        (
            view["auction"].as_array().map_or(0, Vec::len),
            cards_played(view),
        )
    };
    wait_until(LIMIT, || {
        let (_, view) = seat.seen()?;
        (progress(&view) == (calls, played)).then_some(())
    })
    .expect("the seat caught up with the leader");
    seat.act(&action.to_string());
    wait_until(LIMIT, || {
        let (_, view) = seats[0].seen()?;
        (progress(&view) != (calls, played)).then_some(())
    })
    .expect("the leader took the action");
}

#[test]
fn reference_members_play_a_board_at_our_leaders_bridge_table() {
    let net = crate::support::net::Net::start();
    let seats = our_leaders_table(&net, "contract-bridge-v1", r#"{"board_number": 1}"#);
    let hands = dealt(&seats, 13);
    let north = hands[0].0.clone();
    assert_eq!(hands[0].1["dealer"], north.as_str(), "board 1: North deals");
    seats[0].act(r#"{"kind": "double"}"#);
    let refused = wait_until(LIMIT, || {
        let receipts = seats[0].events("group_action_receipt");
        receipts.into_iter().find(|r| r["status"] == "rejected")
    })
    .expect("our leader refused its own double of no bid");
    assert!(
        refused["reason"]
            .as_str()
            .unwrap()
            .contains("no bid to double"),
        "{refused}"
    );
    let bid = json!({"kind": "bid", "level": 1, "denomination": "nt"});
    act_when_current(&seats, &north, &bid, (0, 0));
    for calls in 1..4 {
        let (_, view) = seats[0].seen().unwrap();
        let current = view["current_player"].as_str().unwrap().to_string();
        act_when_current(&seats, &current, &json!({"kind": "pass"}), (calls, 0));
    }
    let (_, view) = seats[0].seen().unwrap();
    assert_eq!(view["phase"], "playing", "{view}");
    assert_eq!(view["declarer"], north.as_str());
    let dummy = view["dummy"].as_str().unwrap().to_string();
    let dummy_cards = &hands.iter().find(|(key, _)| *key == dummy).unwrap().1["my_hand"];
    for seat in &seats {
        assert_eq!(seat.seen().unwrap().1["dummy_hand"], json!([]));
    }
    for played in 0..52 {
        let (_, view) = seats[0].seen().unwrap();
        let current = view["current_player"].as_str().unwrap().to_string();
        let seat = seat_of(&seats, &current);
        let card = wait_until(LIMIT, || {
            let (_, own) = seat.seen()?;
            (cards_played(&own) == played).then(|| lowest_legal(&own))
        })
        .expect("the seat to play sees the table");
        let action = json!({"kind": "play", "card_id": card});
        act_when_current(&seats, &current, &action, (4, played));
        if played == 0 {
            for seat in &seats[1..] {
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
    for seat in &seats[1..] {
        let done = wait_until(LIMIT, || {
            let room = json_at(&seat.view())?;
            (room["completed"] == true).then_some(room)
        })
        .expect("each reference member saw the board end");
        let view = &done["group_view"];
        assert_eq!(view["phase"], "completed", "{done}");
        let outcome = done["outcome"].as_str().unwrap();
        assert!(["ns_made", "ns_down"].contains(&outcome), "{done}");
        assert_eq!(view["trick_history"].as_array().unwrap().len(), 13);
        let tricks = &view["tricks"];
        assert_eq!(
            tricks["ns"].as_u64().unwrap() + tricks["ew"].as_u64().unwrap(),
            13
        );
        let made = tricks["ns"].as_u64().unwrap() >= 7;
        assert_eq!(
            outcome == "ns_made",
            made,
            "1NT needs seven tricks: {tricks}"
        );
        let scorer = if made { "ns" } else { "ew" };
        assert!(view["scores"][scorer].as_u64().unwrap() > 0, "{view}");
        let events = std::fs::read_to_string(seat.dir().join("events.jsonl")).unwrap();
        assert!(!events.contains("group_frame_rejected"), "{events}");
    }
}
