//! Honest games between two of our engines: both audits pass, both sides sign the same root,
//! the ledger and hands add up, and secrets stay out of the events.

use super::game::{CardHooks, Side, Strategy, deck, play, spec};
use crate::hooks::DealPlan;

fn sides(cards: u8, deal: DealPlan, strategy: Strategy) -> (Side, Side) {
    let hooks = || Side::honest(CardHooks::new(deck(cards), deal, strategy));
    (hooks(), hooks())
}

#[test]
fn an_honest_game_ends_with_both_audits_passed_and_one_root() {
    let dir = tempfile::tempdir().unwrap();
    let deal = DealPlan { host: 3, guest: 3 };
    let (host, guest) = sides(12, deal, Strategy::PlayLowest);
    let (host, guest) = play(&spec(), host, guest, dir.path());
    let (h, g) = (
        host.result.as_ref().unwrap(),
        guest.result.as_ref().unwrap(),
    );
    assert!(h.completed && g.completed, "{h:?} {g:?}");
    assert_eq!(
        h.winner.map(|w| w.as_str()),
        Some("host"),
        "the host plays first"
    );
    assert_eq!(g.winner, h.winner);
    let root = host.signed_hash().expect("the host signed");
    assert_eq!(guest.signed_hash(), Some(root.clone()));
    for side in [&host, &guest] {
        assert_eq!(side.events_named("audit_passed").len(), 1);
        let verified = side.events_named("mp_terminal_receipt_verified");
        assert_eq!(verified[0]["transcript_hash"], root.as_str());
        let receipt =
            std::fs::read_to_string(side.state_dir.join("transcript_receipt.json")).unwrap();
        assert!(receipt.contains(&root));
    }
    // Each side saw its own three faces, and cards moved stock -> hand -> played.
    let first = &host.views[0];
    assert_eq!((first.hand.len(), first.stock.len()), (3, 6));
    assert_eq!(guest.views[0].guest_hand.len(), 3);
}

#[test]
fn passing_sides_stall_into_a_draw() {
    let dir = tempfile::tempdir().unwrap();
    let (host, guest) = sides(
        6,
        DealPlan { host: 2, guest: 2 },
        super::game::Strategy::Pass,
    );
    let (host, guest) = play(&spec(), host, guest, dir.path());
    for side in [&host, &guest] {
        let outcome = side.result.as_ref().unwrap();
        assert!(outcome.completed);
        assert_eq!(outcome.winner.map(|w| w.as_str()), Some("draw"));
        assert!(side.views.last().unwrap().stalled);
    }
    assert_eq!(host.signed_hash(), guest.signed_hash());
}

#[test]
fn draws_take_the_next_stock_card_privately() {
    let dir = tempfile::tempdir().unwrap();
    // Empty hands: both draw, then the host plays its card first.
    let (host, guest) = sides(8, DealPlan { host: 0, guest: 0 }, Strategy::PlayLowest);
    let (host, guest) = play(&spec(), host, guest, dir.path());
    assert!(host.result.as_ref().unwrap().completed);
    let draws = host.events_named("draw_completed");
    assert!(!draws.is_empty());
    assert_eq!(draws[0]["id_b"], "0", "the lowest id left in the stock");
    assert_eq!(draws[1]["id_b"], "1");
    assert_eq!(host.signed_hash(), guest.signed_hash());
}

/// The built-in Thirty-One lets its `error` message carry every reason the engine has.
#[test]
fn thirty_one_declares_every_abort_reason() {
    let spec = crate::protocols::find("thirty-one").unwrap().spec();
    let error = &spec.value()["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["name"] == "error")
        .unwrap()["fields"]["reason"]["values"];
    let all: Vec<&str> = crate::engine::mental_poker::Reason::ALL
        .iter()
        .map(|r| r.as_str())
        .collect();
    assert_eq!(error, &serde_json::json!(all));
}
