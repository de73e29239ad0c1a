//! Interop: the network's four-seat tables, led by the reference (this build cannot lead
//! one yet). Our member takes a seat at a reference leader's Texas Hold'em table beside two
//! reference members; the table starts only when all four seats are filled, our member
//! verifies the deal, and its view holds its own two cards and nobody else's.

use serde_json::Value;

use crate::room_seats::{LIMIT, Seat, our_follower};
use crate::support::net::wait_until;
use crate::support::reference::reference_contract;

fn json_at(path: &std::path::Path) -> Option<Value> {
    serde_json::from_str(&std::fs::read_to_string(path).ok()?).ok()
}

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
