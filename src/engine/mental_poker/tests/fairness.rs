//! Neither side can guess the other's hand better than chance. Over many games, each side
//! makes the best guess its own knowledge allows: the guest knows the hooks' deck order and
//! which host blob each of its cards wraps, so it guesses that a card is the deck's card at
//! that position; the host knows its own (shuffled) deck and guesses that the guest did not
//! shuffle. Both must hit no more often than chance. The same test with our host shuffle
//! switched off (the reference's behaviour) must fail: the guest then names every card.

use super::cheats::Cheat;
use super::game::{CardHooks, Ended, Side, Strategy, deck, play, spec};
use crate::hooks::{Card, DealPlan};

const CARDS: u8 = 6;

/// Whether `hits` of `trials` guesses are consistent with guessing at chance: a card the
/// guesser does not hold is one of four faces, so a guess hits with probability at most 1/4;
/// five standard deviations above that is a false alarm once in millions of runs.
fn at_chance(hits: usize, trials: usize) -> bool {
    let (n, p) = (trials as f64, 1.0 / 4.0);
    (hits as f64) <= n * p + 5.0 * (n * p * (1.0 - p)).sqrt()
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
                DealPlan { host: 2, guest: 2 },
                Strategy::Pass,
            )
        };
        let host = Side {
            hooks: hooks(),
            cheats: host_cheats.clone(),
            tamper: None,
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
        trials += 2;
    }
    (guest_hits, host_hits, trials)
}

#[test]
fn neither_side_guesses_the_other_hand_better_than_chance() {
    let (guest_hits, host_hits, trials) = guess_hands(24, vec![]);
    assert!(
        at_chance(guest_hits, trials),
        "the guest named {guest_hits} of {trials} host cards"
    );
    assert!(
        at_chance(host_hits, trials),
        "the host named {host_hits} of {trials} guest cards"
    );
}

#[test]
fn without_the_host_shuffle_the_guest_names_every_card() {
    let (guest_hits, _, trials) = guess_hands(8, vec![Cheat::HostSkipsShuffle]);
    assert_eq!(guest_hits, trials, "the reference's unshuffled host layer");
    assert!(
        !at_chance(guest_hits, trials),
        "the fairness check must catch it"
    );
}
