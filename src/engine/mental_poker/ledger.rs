//! Where every card (by id-B) is: in the stock, in a hand, or played by someone. Both sides
//! keep the same ledger from the same public events, so it never holds a face. It is also
//! the nullifier: a card can be played only from its player's hand, once.

use super::abort::Reason;
use crate::spec::Role;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Place {
    Stock,
    Hand(Role),
    Played(Role),
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Ledger {
    places: Vec<Place>,
}

impl Ledger {
    /// A deck of `size` cards, all in the stock.
    pub fn new(size: usize) -> Ledger {
        Ledger {
            places: vec![Place::Stock; size],
        }
    }

    /// The card every draw takes: the lowest id-B still in the stock.
    pub fn next_stock(&self) -> Option<usize> {
        self.places.iter().position(|place| *place == Place::Stock)
    }

    /// Moves a stock card into `who`'s hand (the caller planned it from the stock).
    pub fn deal(&mut self, id_b: usize, who: Role) {
        debug_assert_eq!(self.places[id_b], Place::Stock);
        self.places[id_b] = Place::Hand(who);
    }

    /// Whether `who` may play `id_b` now: not a card it already played, and in its hand.
    pub fn check_play(&self, who: Role, id_b: usize) -> Result<(), Reason> {
        match self.places.get(id_b) {
            Some(Place::Played(by)) if *by == who => Err(Reason::CardAlreadyPlayed),
            Some(Place::Hand(holder)) if *holder == who => Ok(()),
            _ => Err(Reason::CardNotInHand),
        }
    }

    /// Moves a card from `who`'s hand to the played pile (after [`Ledger::check_play`]).
    pub fn play(&mut self, who: Role, id_b: usize) {
        debug_assert_eq!(self.places[id_b], Place::Hand(who));
        self.places[id_b] = Place::Played(who);
    }

    /// The id-Bs at `place`, in id order.
    pub fn at(&self, place: Place) -> Vec<usize> {
        (0..self.places.len())
            .filter(|&id| self.places[id] == place)
            .collect()
    }

    pub fn played(&self) -> Vec<usize> {
        (0..self.places.len())
            .filter(|&id| matches!(self.places[id], Place::Played(_)))
            .collect()
    }

    pub fn hand_size(&self, who: Role) -> usize {
        self.places
            .iter()
            .filter(|place| **place == Place::Hand(who))
            .count()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_card_moves_stock_hand_played_once() {
        let mut ledger = Ledger::new(3);
        assert_eq!(ledger.next_stock(), Some(0));
        ledger.deal(0, Role::Guest);
        ledger.deal(1, Role::Host);
        assert_eq!(ledger.next_stock(), Some(2));
        assert_eq!(ledger.check_play(Role::Host, 0), Err(Reason::CardNotInHand));
        assert_eq!(ledger.check_play(Role::Guest, 0), Ok(()));
        ledger.play(Role::Guest, 0);
        assert_eq!(
            ledger.check_play(Role::Guest, 0),
            Err(Reason::CardAlreadyPlayed)
        );
        assert_eq!(ledger.check_play(Role::Host, 0), Err(Reason::CardNotInHand));
        assert_eq!(ledger.check_play(Role::Host, 9), Err(Reason::CardNotInHand));
        assert_eq!(ledger.at(Place::Hand(Role::Host)), vec![1]);
        assert_eq!(ledger.played(), vec![0]);
        assert_eq!(ledger.hand_size(Role::Guest), 0);
    }
}
