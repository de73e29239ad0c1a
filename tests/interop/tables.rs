//! Interop: the network's four-seat Texas Hold'em table, both ways. Our member takes a seat
//! at a reference leader's table beside two reference members; the table starts only when
//! all four seats are filled, our member verifies the deal, and its view holds its own two
//! cards and nobody else's. Our leader, on our hooks, deals to three reference members, who
//! verify every step; it refuses an action out of turn and the one-hand match ends when
//! everyone but the big blind folds. Beside one member of ours, whose seed the deal waits
//! for, reference members still play the hand to its end.

use crate::room_seats::{
    LIMIT, Seat, dealt, ended, json_at, our_follower, our_leaders_mixed_table, our_leaders_table,
};
use crate::support::net::wait_until;
use crate::support::reference::reference_contract;

#[test]
fn our_member_sits_at_a_reference_leaders_holdem_table() {
    let net = crate::support::net::Net::start();
    let table = reference_contract("texas-holdem-v1");
    let host = net.reference_agent("host");
    host.register_protocol(&table.protocol_id);
    let dir = host.protocol_dir(&table.protocol_id);
    let (hosting, _leader) =
        host.daemon(&["host", "--protocol-dir", dir.to_str().unwrap(), "--no-web"]);
    let post_id = hosting["post_id"].as_str().unwrap().to_string();
    let ours = our_follower(&net, "ours", &post_id);
    let mut theirs = Vec::new();
    for name in ["west", "north"] {
        let agent = net.reference_agent(name);
        agent.register_protocol(&table.protocol_id);
        let (_, process) = agent.daemon(&["join", &post_id, "--no-web"]);
        theirs.push(Seat::Theirs { agent, process });
    }
    let view = wait_until(LIMIT, || {
        let room = json_at(&ours.view())?;
        (room["view"]["my_hand"].as_array()?.len() == 2).then_some(room)
    })
    .expect("the table started with four seats and dealt our member two cards");
    assert_eq!(view["members"].as_array().unwrap().len(), 4, "{view}");
    let ours_text = view["view"].to_string();
    for seat in &theirs {
        let hand = wait_until(LIMIT, || {
            let snapshot = json_at(&seat.view())?;
            let hand = snapshot["group_view"]["my_hand"].as_array()?.clone();
            (hand.len() == 2).then_some(hand)
        })
        .expect("each reference member was dealt two cards");
        for card in hand {
            assert!(
                !ours_text.contains(&card.to_string()),
                "our member's view shows another seat's card {card}: {ours_text}"
            );
        }
    }
}

#[test]
fn reference_members_play_at_our_leaders_holdem_table() {
    let net = crate::support::net::Net::start();
    let seats = our_leaders_table(&net, "texas-holdem-v1", r#"{"max_hands": 1}"#);
    let hands = dealt(&seats, 2);
    let leader_view = &hands[0].1;
    let big_blind = leader_view["big_blind_player"]
        .as_str()
        .unwrap()
        .to_string();
    assert_ne!(
        leader_view["current_player"],
        hands[0].0.as_str(),
        "our leader holds the button, so seat 3 acts first"
    );
    seats[0].act(r#"{"kind": "check"}"#);
    let refused = wait_until(LIMIT, || {
        let receipts = seats[0].events("group_action_receipt");
        receipts.into_iter().find(|r| r["status"] == "rejected")
    })
    .expect("our leader refused its own action out of turn");
    assert!(
        refused["reason"]
            .as_str()
            .unwrap()
            .contains("not your turn"),
        "{refused}"
    );
    fold_to_the_big_blind(&seats);
    for seat in &seats[1..] {
        let done = wait_until(LIMIT, || {
            let room = json_at(&seat.view())?;
            (room["completed"] == true).then_some(room)
        })
        .expect("each reference member saw the match end");
        assert_eq!(done["outcome"], big_blind.as_str(), "{done}");
        assert_eq!(done["group_view"]["phase"], "completed", "{done}");
        let events = std::fs::read_to_string(seat.dir().join("events.jsonl")).unwrap();
        assert!(!events.contains("group_frame_rejected"), "{events}");
    }
}

/// Our leader deals fairly to our member beside two reference members: the deal waits for
/// our member's seed alone (the reference members never announce themselves), the reference
/// members play the hand to its end verifying every step, and our member verifies its deal.
#[test]
fn reference_members_play_beside_our_member_at_a_fair_deal() {
    let net = crate::support::net::Net::start();
    let seats = our_leaders_mixed_table(&net, "texas-holdem-v1", r#"{"max_hands": 1}"#, 1);
    let hands = dealt(&seats, 2);
    let ours = hands[1].0.as_str();
    let fair = &hands[0].1["fair_deal"];
    assert_eq!(fair["awaited"], serde_json::json!([ours]), "{fair}");
    let seeded: Vec<&String> = fair["contributions"].as_object().unwrap().keys().collect();
    assert_eq!(seeded, [ours], "{fair}");
    fold_to_the_big_blind(&seats);
    for seat in &seats[2..] {
        ended(seat);
    }
    let verified = wait_until(LIMIT, || {
        seats[1].events("deal_verified").into_iter().next()
    })
    .expect("our member verified its deal");
    assert_eq!(verified["commitment"], fair["commitment"], "{verified}");
    assert!(seats[1].events("deal_mismatch").is_empty());
}

/// Everyone but the big blind folds in turn; the last fold ends a one-hand match.
fn fold_to_the_big_blind(seats: &[Seat]) {
    for _ in 0..3 {
        let (_, view) = seats[0].seen().unwrap();
        let current = view["current_player"].as_str().unwrap().to_string();
        let actor = seats
            .iter()
            .position(|seat| seat.seen().is_some_and(|(key, _)| key == current))
            .expect("the seat to act is at the table");
        seats[actor].act(r#"{"kind": "fold"}"#);
        wait_until(LIMIT, || {
            let (_, after) = seats[0].seen()?;
            (after["current_player"] != current.as_str()).then_some(())
        })
        .expect("the fold was taken");
    }
}
