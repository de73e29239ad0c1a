//! Cheats that need a side's secrets — peeking through a transfer, lying witnesses, dealer
//! cheats, forged openings and receipts — each ending with its exact reason. A side whose
//! audit fails never signs a receipt.

use super::cheats::{Cheat, Forgery};
use super::game::{CardHooks, Ended, Side, Strategy, deck, play, spec};
use super::replay::replay;
use crate::engine::mental_poker::Reason;
use crate::engine::mental_poker::audit::audit;
use crate::engine::mental_poker::deck::LayerKey;
use crate::engine::mental_poker::vectors::game;
use crate::engine::mental_poker::wire::Witness;
use crate::hooks::mental_poker::universe_from_value;
use crate::hooks::{Card, DealPlan};

/// An 8-card game, two cards each, both sides passing: the audit comes right after the deal.
fn quiet() -> CardHooks {
    CardHooks::new(deck(8), DealPlan { host: 2, guest: 2 }, Strategy::Pass)
}

fn cheating(hooks: CardHooks, cheats: Vec<Cheat>) -> Side {
    Side {
        cheats,
        ..Side::honest(hooks)
    }
}

fn run(host: Side, guest: Side) -> (Ended, Ended) {
    let dir = tempfile::tempdir().unwrap();
    play(&spec(), host, guest, dir.path())
}

/// This side stopped with `reason` and signed nothing.
fn stopped(side: &Ended, reason: &str) {
    assert_eq!(side.reason(), Some(reason), "{:?}", side.result);
    assert_eq!(side.signed_hash(), None, "no receipt after a failed audit");
}

#[test]
fn a_transfer_for_another_card_is_a_peek() {
    // The guest's first transfer asks for the key of the host's first card (id 2).
    let guest = cheating(quiet(), vec![Cheat::PeekAt(2)]);
    let (host, guest) = run(Side::honest(quiet()), guest);
    stopped(&host, "peeked_non_hand");
    stopped(&guest, "peeked_non_hand");
    let failed = host.events_named("audit_failed");
    assert_eq!(failed[0]["evidence"]["ot_id"], "guest-0");
    assert_eq!(failed[0]["evidence"]["id_b"], "2");
}

#[test]
fn a_peek_covered_by_a_lying_witness_is_a_bad_witness() {
    let guest = cheating(quiet(), vec![Cheat::PeekAt(2), Cheat::LyingWitness]);
    let (host, guest) = run(Side::honest(quiet()), guest);
    stopped(&host, "bad_witness");
    stopped(&guest, "bad_witness");
}

#[test]
fn the_host_peeking_at_the_guests_card_is_caught_too() {
    let host = cheating(quiet(), vec![Cheat::PeekAt(0)]);
    let (host, guest) = run(host, Side::honest(quiet()));
    stopped(&guest, "peeked_non_hand");
    stopped(&host, "peeked_non_hand");
}

#[test]
fn missing_extra_and_repeated_witnesses() {
    for (cheat, reason) in [
        (Cheat::SkipWitness, "witness_transcript_mismatch"),
        (Cheat::BogusWitness, "ot_snapshot_missing"),
        (Cheat::DuplicateWitness, "duplicate_witness_ot_id"),
    ] {
        let (host, guest) = run(
            Side::honest(quiet()),
            cheating(quiet(), vec![cheat.clone()]),
        );
        stopped(&host, reason);
        // The guest's own audit (of its honest list) passed; the host told it why not.
        assert_eq!(guest.events_named("audit_passed").len(), 1, "{cheat:?}");
        assert_eq!(
            guest.reason(),
            Some(format!("peer_error: {reason}").as_str())
        );
    }
}

#[test]
fn a_transfer_from_an_empty_stock_is_refused_before_it_is_answered() {
    let full_deal = || CardHooks::new(deck(4), DealPlan { host: 2, guest: 2 }, Strategy::Draw);
    let host = cheating(full_deal(), vec![Cheat::IgnoreEmptyStock]);
    let (host, guest) = run(host, Side::honest(full_deal()));
    assert_eq!(guest.reason(), Some("empty_stock"));
    let answered = guest
        .events_named("protocol_message")
        .iter()
        .filter(|m| m["direction"] == "sent" && m["msg"]["action"] == "mp_ot_response")
        .count();
    assert_eq!(
        answered, 2,
        "only the host's two deal transfers were answered"
    );
    assert_eq!(host.reason(), Some("peer_error: empty_stock"));
}

#[test]
fn a_deck_that_is_not_the_declared_universe_fails_both_audits() {
    let mut duplicated = deck(8);
    duplicated[1] = duplicated[0];
    let mut dealer = quiet();
    dealer.universe = duplicated;
    dealer.audit_universe = Some(deck(8));
    let (host, guest) = run(Side::honest(dealer), Side::honest(quiet()));
    stopped(&host, "deck_universe_mismatch");
    stopped(&guest, "deck_universe_mismatch");

    let mut short = quiet();
    short.universe = deck(7);
    short.audit_universe = Some(deck(8));
    let mut guest = quiet();
    guest.universe = deck(8);
    let (host, guest) = run(Side::honest(short), Side::honest(guest));
    stopped(&host, "deck_size_mismatch");
    stopped(&guest, "deck_size_mismatch");
}

#[test]
fn dealer_cheats_in_the_sealed_tables_and_openings() {
    // A side does not re-check the tokens of the table it sealed itself: the cheater passes
    // its own audit and hears from the honest side why the game does not count.
    for (host_cheats, guest_cheats, honest, reason) in [
        // g-7 is never taken in this game, so only the audit can see it.
        (
            vec![],
            vec![Cheat::PoisonSealed(7)],
            "host",
            "sealed_payload_poisoned",
        ),
        (vec![Cheat::ForgeToken(0)], vec![], "guest", "forged_token"),
    ] {
        let (host, guest) = run(
            cheating(quiet(), host_cheats),
            cheating(quiet(), guest_cheats),
        );
        let (honest, cheater) = if honest == "host" {
            (&host, &guest)
        } else {
            (&guest, &host)
        };
        stopped(honest, reason);
        assert_eq!(cheater.events_named("audit_passed").len(), 1);
        assert_eq!(
            cheater.reason(),
            Some(format!("peer_error: {reason}").as_str())
        );
    }
    // An opened outer key that does not open its blob breaks the id map for everyone.
    let (host, guest) = run(
        Side::honest(quiet()),
        cheating(quiet(), vec![Cheat::AlterOpeningKey(0)]),
    );
    stopped(&host, "derive_id_map_failed");
    stopped(&guest, "derive_id_map_failed");
}

#[test]
fn forged_receipts_are_refused() {
    for (forgery, reason) in [
        (Forgery::Signature, "receipt_signature_invalid"),
        (Forgery::Hash, "receipt_hash_mismatch"),
        (Forgery::Key, "receipt_key_mismatch"),
        (Forgery::Failed, "receipt_not_passed"),
    ] {
        let host = cheating(quiet(), vec![Cheat::ForgeReceipt(forgery)]);
        let (_host, guest) = run(host, Side::honest(quiet()));
        assert_eq!(guest.reason(), Some(reason), "{forgery:?}");
        assert!(guest.signed_hash().is_some(), "its own audit passed first");
    }
}

/// A play whose keys are not the ones opened for its card (a card that opens two ways, say)
/// fails the audit, even though the blob opened at play time.
#[test]
fn plays_are_bound_to_the_opened_keys() {
    let record = game("crazy_eights");
    let universe = universe_from_value(&record["universe"]).unwrap();
    let deal = DealPlan { host: 5, guest: 5 };
    let check = |change: &dyn Fn(&mut crate::engine::mental_poker::wire::Play)| {
        let (mut table, host, guest, host_w, guest_w) = replay(&record, deal);
        change(&mut table.plays[0].1);
        let all: Vec<Witness> = host_w.into_iter().chain(guest_w).collect();
        audit(&table, &host, &guest, &all, &universe, None)
            .unwrap_err()
            .reason
    };
    assert_eq!(
        check(&|play| play.k_inner = LayerKey::random()),
        Reason::PlayKeyMismatch
    );
    assert_eq!(
        check(&|play| play.k_outer = LayerKey::random()),
        Reason::PlayKeyMismatch
    );
    assert_eq!(
        check(&|play| play.card = Card {
            rank: 6,
            suit: (play.card.suit + 1) % 4
        }),
        Reason::PlayKeyMismatch
    );
}
