//! Neither side can guess the other's hand better than chance. Over many games, each side
//! makes the best guess its own knowledge allows: the guest knows the hooks' deck order and
//! which host blob each of its cards wraps, so it guesses that a card is the deck's card at
//! that position; the host knows its own (shuffled) deck and guesses that the guest did not
//! shuffle. With both shuffles uniform, each such guess hits with probability exactly
//! 1/CARDS, and both sides must hit no more often than that. The same test with our host
//! shuffle switched off (the reference's behaviour) must fail: the guest then names every
//! card.

use std::collections::BTreeMap;

use super::cheats::Cheat;
use super::game::{CardHooks, Ended, Side, Strategy, deck, play, spec};
use super::replay::replay;
use crate::engine::mental_poker::deck::{LayerKey, open_blob, open_card};
use crate::engine::mental_poker::vectors::game;
use crate::engine::mental_poker::wire::{Opening, OpeningItem};
use crate::hooks::mental_poker::universe_from_value;
use crate::hooks::{Card, DealPlan};
use crate::spec::Role;

/// The whole deck is dealt, half to each side: every card is guessed once per game. A game
/// costs in proportion to its cards and yields half a hit at chance whatever its size, so a
/// small deck over many games gives the tightest bound for the time.
const CARDS: u8 = 8;
const HAND: usize = CARDS as usize / 2;
const GAMES: usize = 40;

/// Whether `hits` over `games` are consistent with guessing at chance. A guess hits exactly
/// when a uniform shuffle leaves the guessed card where it was, with probability 1/CARDS; in
/// one game the HAND guesses of a side hit HAND/CARDS times on average, with the variance
/// of the fixed points of a uniform permutation among HAND given positions. The bound is
/// 3.5 standard deviations above the expected count (20 ± 4.3 here, so at most 35 hits): a
/// false alarm a few times in ten thousand runs, while a side that names one card in eight
/// more often than chance does (some 20 more hits) fails most runs.
fn at_chance(hits: usize, games: usize) -> bool {
    let (n, h, g) = (f64::from(CARDS), HAND as f64, games as f64);
    let mean = h / n;
    let variance = h * (1.0 / n) * (1.0 - 1.0 / n) + h * (h - 1.0) / (n * n * (n - 1.0));
    (hits as f64) <= g * mean + 3.5 * (g * variance).sqrt()
}

#[test]
fn the_chance_bound_is_tight() {
    assert!(at_chance(35, GAMES) && !at_chance(36, GAMES));
}

fn hand(side: &Ended) -> Vec<(usize, Card)> {
    let first = side.views.first().expect("a view after the deal");
    first
        .hand
        .iter()
        .map(|(id, card)| (id.parse().unwrap(), *card))
        .collect()
}

/// (the guest's hits on the host's hand, the host's hits on the guest's hand, trials each).
fn guess_hands(games: usize, host_cheats: Vec<Cheat>) -> (usize, usize, usize) {
    let (mut guest_hits, mut host_hits, mut trials) = (0, 0, 0);
    let universe = deck(CARDS);
    for _ in 0..games {
        let dir = tempfile::tempdir().unwrap();
        let hooks = || {
            CardHooks::new(
                universe.clone(),
                DealPlan {
                    host: HAND,
                    guest: HAND,
                },
                Strategy::Pass,
            )
        };
        let host = Side {
            cheats: host_cheats.clone(),
            ..Side::honest(hooks())
        };
        let (host, guest) = play(&spec(), host, Side::honest(hooks()), dir.path());
        assert!(host.result.as_ref().unwrap().completed);
        let order = guest.spy.guest_order.clone().expect("the guest's shuffle");
        let host_deck = host.spy.host_deck.clone().expect("the host's deck");
        for (id_b, card) in hand(&host) {
            guest_hits += usize::from(universe[order[id_b]] == card);
        }
        for (id_b, card) in hand(&guest) {
            host_hits += usize::from(host_deck[id_b] == card);
        }
        trials += HAND;
    }
    (guest_hits, host_hits, trials)
}

#[test]
fn neither_side_guesses_the_other_hand_better_than_chance() {
    let (guest_hits, host_hits, trials) = guess_hands(GAMES, vec![]);
    assert_eq!(trials, GAMES * HAND);
    assert!(
        at_chance(guest_hits, GAMES),
        "the guest named {guest_hits} of {trials} host cards"
    );
    assert!(
        at_chance(host_hits, GAMES),
        "the host named {host_hits} of {trials} guest cards"
    );
}

#[test]
fn without_the_host_shuffle_the_guest_names_every_card() {
    let (guest_hits, _, trials) = guess_hands(2, vec![Cheat::HostSkipsShuffle]);
    assert_eq!(guest_hits, trials, "the reference's unshuffled host layer");
    assert!(
        !at_chance(guest_hits, 2),
        "the fairness check must catch it"
    );
}

/// The layer keys an opening shows, by label index.
fn opened_keys(opening: &Opening) -> BTreeMap<usize, LayerKey> {
    opening
        .items
        .iter()
        .filter_map(|item| match item {
            OpeningItem::Key { label, key } => Some((label.index, key.clone())),
            OpeningItem::Token { .. } => None,
        })
        .collect()
}

/// The reference's own recorded games, not a simulation of them: what each game made public
/// shows that its host sealed the hooks' deck in order, so the guest, which knows where its
/// own shuffle put every host blob, could name every card the host held during the game.
#[test]
fn in_the_recorded_reference_games_the_guest_could_name_every_host_card() {
    for (name, deal) in [
        ("crazy_eights", DealPlan { host: 5, guest: 5 }),
        ("briscola", DealPlan { host: 3, guest: 3 }),
    ] {
        let record = game(name);
        let universe = universe_from_value(&record["universe"]).unwrap();
        let (table, host, guest, _, _) = replay(&record, deal);
        let (inner, outer) = (opened_keys(&host), opened_keys(&guest));
        // The guest's own knowledge: its shuffle (id-B → the host blob it wraps).
        let wraps = |id_b: usize| {
            let blob_a = open_blob(&outer[&id_b], &table.outer.blobs[id_b]).unwrap();
            (table.id_a_of(&blob_a).unwrap(), blob_a)
        };
        let host_cards: Vec<usize> = table
            .ots
            .iter()
            .filter(|ot| ot.id.requester == Role::Host)
            .map(|ot| ot.card)
            .collect();
        assert!(host_cards.len() >= deal.host, "{name}: the host's cards");
        let named = host_cards
            .iter()
            .filter(|&&id_b| {
                let (id_a, blob_a) = wraps(id_b);
                open_card(&inner[&id_a], &blob_a) == Some(universe[id_a])
            })
            .count();
        assert_eq!(named, host_cards.len(), "{name}: the guest's guesses");
        // And the whole host layer is the hooks' order: blob A number i holds card i.
        let in_order = (0..table.deck_size())
            .filter(|&id_b| {
                let (id_a, blob_a) = wraps(id_b);
                open_card(&inner[&id_a], &blob_a) == Some(universe[id_a])
            })
            .count();
        assert_eq!(in_order, universe.len(), "{name}: an unshuffled host layer");
    }
}
