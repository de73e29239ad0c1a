//! Interop: a Contract Bridge board, both ways. Led by our agent on our hooks, with three
//! reference members who verify every step and read the views our leader makes; and led by
//! the reference on its hooks, with our member at the table. Nobody sees another's hand; our
//! leader refuses an illegal call with its reason; the auction sets the contract; dummy's
//! cards reach every seat only with the opening lead; and the board is played card by card,
//! declarer playing dummy's, to its score, which every seat sees.

use serde_json::{Value, json};

use crate::room_seats::{LIMIT, Seat, dealt, json_at, our_follower, our_leaders_table};
use crate::support::net::wait_until;
use crate::support::reference::reference_contract;

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

/// The board from its first call to its score: the dealer bids 1NT and the others pass
/// (board 1: North, seat 0, deals and declares), then every seat plays its lowest legal card
/// in turn, declarer also dummy's. `seats[0]` is the leader, whose view says who acts;
/// `hands` are the seats' first views. Checks that dummy reaches every seat with the opening
/// lead and that every seat sees the board end with its score.
fn play_board(seats: &[Seat], hands: &[(String, Value)]) {
    let north = hands[0].0.clone();
    assert_eq!(hands[0].1["dealer"], north.as_str(), "board 1: North deals");
    let bid = json!({"kind": "bid", "level": 1, "denomination": "nt"});
    act_when_current(seats, &north, &bid, (0, 0));
    for calls in 1..4 {
        let (_, view) = seats[0].seen().unwrap();
        let current = view["current_player"].as_str().unwrap().to_string();
        act_when_current(seats, &current, &json!({"kind": "pass"}), (calls, 0));
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
        let seat = seat_of(seats, &current);
        let card = wait_until(LIMIT, || {
            let (_, own) = seat.seen()?;
            (cards_played(&own) == played).then(|| lowest_legal(&own))
        })
        .expect("the seat to play sees the table");
        let action = json!({"kind": "play", "card_id": card});
        act_when_current(seats, &current, &action, (4, played));
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
        let outcome = wait_until(LIMIT, || {
            let room = json_at(&seat.view())?;
            (room["completed"] == true).then(|| room["outcome"].clone())
        })
        .expect("every seat saw the board end");
        let (_, view) = seat.seen().unwrap();
        assert_eq!(view["phase"], "completed", "{view}");
        assert_eq!(view["trick_history"].as_array().unwrap().len(), 13);
        let tricks = &view["tricks"];
        let ns = tricks["ns"].as_u64().unwrap();
        assert_eq!(ns + tricks["ew"].as_u64().unwrap(), 13, "{tricks}");
        let made = ns >= 7;
        let expected = if made { "ns_made" } else { "ns_down" };
        assert_eq!(outcome, expected, "1NT needs seven tricks: {tricks}");
        let scorer = if made { "ns" } else { "ew" };
        assert!(view["scores"][scorer].as_u64().unwrap() > 0, "{view}");
        let events = std::fs::read_to_string(seat.dir().join("events.jsonl")).unwrap();
        assert!(!events.contains("frame_rejected"), "{events}");
    }
}

#[test]
fn reference_members_play_a_board_at_our_leaders_bridge_table() {
    let net = crate::support::net::Net::start();
    let seats = our_leaders_table(&net, "contract-bridge-v1", r#"{"board_number": 1}"#);
    let hands = dealt(&seats, 13);
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
    play_board(&seats, &hands);
}

#[test]
fn our_member_plays_a_board_at_a_reference_leaders_bridge_table() {
    let net = crate::support::net::Net::start();
    let table = reference_contract("contract-bridge-v1");
    let host = net.reference_agent("host");
    host.register_protocol(&table.protocol_id);
    let dir = host.protocol_dir(&table.protocol_id);
    let (hosting, process) =
        host.daemon(&["host", "--protocol-dir", dir.to_str().unwrap(), "--no-web"]);
    let post_id = hosting["post_id"].as_str().unwrap().to_string();
    let mut seats = vec![Seat::Theirs {
        agent: host,
        process,
    }];
    seats.push(our_follower(&net, "ours", &post_id));
    for name in ["south", "west"] {
        let agent = net.reference_agent(name);
        agent.register_protocol(&table.protocol_id);
        let (_, process) = agent.daemon(&["join", &post_id, "--no-web"]);
        seats.push(Seat::Theirs { agent, process });
    }
    let hands = dealt(&seats, 13);
    play_board(&seats, &hands);
}
