//! Honest reference games, recorded frame by frame (`tests/vectors/mental_poker/*_game.json`),
//! replayed through our public record and audit as a third party would: the audit passes,
//! the transcript root is byte-identical to the one both reference sides signed, and both
//! signatures verify over our root.

use serde_json::Value;

use crate::engine::mental_poker::audit::audit;
use crate::engine::mental_poker::deck::{BlobA, BlobB};
use crate::engine::mental_poker::ot::{Layer, OtBinding};
use crate::engine::mental_poker::table::Table;
use crate::engine::mental_poker::vectors::game;
use crate::engine::mental_poker::wire::{
    Opening, Play, Setup, Witness, parse_ot, parse_witnesses, sorted,
};
use crate::hooks::DealPlan;
use crate::hooks::mental_poker::universe_from_value;
use crate::identity::verify_hex;
use crate::spec::Role;

/// Rebuilds a recorded game's table from its frames; returns the table and both openings
/// and witness lists.
pub(crate) fn replay(
    record: &Value,
    deal: DealPlan,
) -> (Table, Opening, Opening, Vec<Witness>, Vec<Witness>) {
    let frames: Vec<(Role, &Value)> = record["frames"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                Role::parse(f["from"].as_str().unwrap()).unwrap(),
                &f["frame"],
            )
        })
        .collect();
    let of = |action: &str| {
        frames
            .iter()
            .find(|(_, f)| f["action"] == action)
            .unwrap()
            .1
    };
    let setup_a = Setup::<BlobA>::parse(of("mp_setup_a"), None).unwrap();
    let setup_b = Setup::<BlobB>::parse(of("mp_setup_b"), Some(setup_a.blobs.len())).unwrap();
    let binding = OtBinding {
        protocol_id: record["protocol"].as_str().unwrap().into(),
        session_id: record["session_id"].as_str().unwrap().into(),
    };
    let mut table = Table::new(binding, setup_a, setup_b).unwrap();
    let deals = table.deal_plan(deal).unwrap().len();
    let (mut openings, mut witnesses) = (Vec::new(), Vec::new());
    let mut transfers = 0;
    for (from, frame) in &frames {
        match frame["action"].as_str().unwrap() {
            "mp_ot_request" => {
                let (id, z) = parse_ot(frame, "z").unwrap();
                let card = table.ledger.next_stock().unwrap();
                table.open_ot(*from, &id, z, card).unwrap();
            }
            "mp_ot_response" => {
                let (id, y) = parse_ot(frame, "y").unwrap();
                let ot = table.close_ot(&id, y).unwrap().id;
                transfers += 1;
                if transfers > deals {
                    table.record_draw(ot);
                }
            }
            "mp_play" => {
                let play = Play::parse(frame, table.deck_size()).unwrap();
                table.check_play(*from, &play).unwrap();
                table.record_play(*from, play);
            }
            "mp_pass" => table.record_pass(*from),
            "mp_opening" => {
                openings.push((*from, Opening::parse(frame, Layer::of(*from)).unwrap()));
                if openings.len() == 2 {
                    openings.sort_by_key(|(role, _)| *role != Role::Host);
                    table.record_openings(&openings[0].1, &openings[1].1);
                }
            }
            "mp_witness" => {
                witnesses.push((*from, sorted(parse_witnesses(frame, *from).unwrap())));
                if witnesses.len() == 2 {
                    witnesses.sort_by_key(|(role, _)| *role != Role::Host);
                    table.record_witnesses(&witnesses[0].1, &witnesses[1].1);
                }
            }
            _ => {}
        }
    }
    let (host_w, guest_w) = (witnesses[0].1.clone(), witnesses[1].1.clone());
    let mut openings = openings.into_iter().map(|(_, opening)| opening);
    (
        table,
        openings.next().unwrap(),
        openings.next().unwrap(),
        host_w,
        guest_w,
    )
}

fn replays_to_the_signed_root(name: &str, deal: DealPlan) {
    let record = game(name);
    let (table, host, guest, host_w, guest_w) = replay(&record, deal);
    let universe = universe_from_value(&record["universe"]).unwrap();
    let all: Vec<Witness> = host_w.into_iter().chain(guest_w).collect();
    audit(&table, &host, &guest, &all, &universe, None).expect("the honest game passes our audit");
    let root = table.root();
    assert_eq!(
        hex::encode(root),
        record["transcript_hash"].as_str().unwrap()
    );
    for side in ["host", "guest"] {
        let key = record[format!("{side}_public_key")].as_str().unwrap();
        let signature = record[format!("{side}_signature")].as_str().unwrap();
        assert!(
            verify_hex(key, &root, signature).is_ok(),
            "{side}'s receipt"
        );
    }
}

#[test]
fn a_reference_crazy_eights_game_replays_through_our_audit() {
    replays_to_the_signed_root("crazy_eights", DealPlan { host: 5, guest: 5 });
}

#[test]
fn a_reference_briscola_game_replays_through_our_audit() {
    replays_to_the_signed_root("briscola", DealPlan { host: 3, guest: 3 });
}
