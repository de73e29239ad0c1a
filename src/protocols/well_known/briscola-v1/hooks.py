"""Briscola (the network's briscola-v1 contract) for the mental_poker engine. A 40-card Italian
deck (A 2 3 4 5 6 7 J Q K in four suits), three cards each. The trump suit is the same every
game: clubs, the suit of the deck's first card in its canonical order. The host leads every
trick and the guest follows with any card: the trick goes to the higher trump, else to the
higher card of the led suit (A > 3 > K > Q > J > 7 > 6 > 5 > 4 > 2), else to the leader.
After each trick, while the stock lasts, each side draws one card on its turn (host first),
which takes the whole turn. Cards are worth A 11, 3 10, K 4, Q 3, J 2 (120 in all); when the
stock and both hands are empty the side with more points wins (60-60 is a draw). Every peer
play is checked: the guest never leads, and nobody plays while a refill is due.

The automatic player leads its cheapest card (no points, no trump), wins a trick with the
card that gains most (its own ace or three when it takes the trick safely; a low trump only
for a trick worth taking) and otherwise throws its least valuable card, and once the stock
is empty (the unseen cards are then the opponent's hand) searches the rest of the game
exactly. Options (aigenora.proto.cards): `strategy` (best, random), `seed`, `moves`.
Decisions name a move: {"action_seq": 3, "move": "AC"} or "draw"."""
from __future__ import annotations

from aigenora.proto.cards import SUIT_NAMES, SUITS, CardGame, Move

RANKS = ["A", "2", "3", "4", "5", "6", "7", "J", "Q", "K"]
# Trick strength by rank index: A > 3 > K > Q > J > 7 > 6 > 5 > 4 > 2.
STRENGTH = [10, 1, 9, 2, 3, 4, 5, 6, 7, 8]
POINTS = [11, 0, 10, 0, 0, 0, 0, 2, 3, 4]
HAND = 3
TRUMP = 0  # clubs
# What keeping a trump is worth to the automatic player, beyond its points.
TRUMP_KEEP = 4


def trick_taker(lead: tuple[int, int], follow: tuple[int, int]) -> str:
    """Who takes a trick: "host" (the leader) or "guest"."""
    if lead[1] == follow[1]:
        return "host" if STRENGTH[lead[0]] > STRENGTH[follow[0]] else "guest"
    return "guest" if follow[1] == TRUMP else "host"


def keep_value(card: tuple[int, int]) -> int:
    return TRUMP_KEEP + STRENGTH[card[0]] if card[1] == TRUMP else 0


def endgame(host: tuple, guest: tuple, lead: tuple[int, int] | None) -> int:
    """The host's points minus the guest's over the rest of the game, both playing their best
    with every card known (host to lead when `lead` is None, else guest to follow it)."""
    if lead is None:
        if not host:
            return 0
        return max(endgame(host[:i] + host[i + 1:], guest, card) for i, card in enumerate(host))
    best = None
    for i, card in enumerate(guest):
        points = POINTS[lead[0]] + POINTS[card[0]]
        value = (points if trick_taker(lead, card) == "host" else -points) + endgame(
            host, guest[:i] + guest[i + 1:], None)
        best = value if best is None else min(best, value)
    return best


class Hooks(CardGame):
    NAME = "Briscola"
    TAGS = "game,briscola,cards,trick-taking"
    RANKS = RANKS

    def read_settings(self, options):
        self.trick: list[tuple[str, tuple[int, int]]] = []
        self.points = {"host": 0, "guest": 0}
        self.tricks = 0
        self.last_trick: tuple[tuple[int, int], tuple[int, int], str] | None = None
        self.seen: set[tuple[int, int]] = set()

    def deck(self):
        return [(rank, suit) for rank in range(len(RANKS)) for suit in range(len(SUITS))]

    def hand_size(self):
        return HAND

    # -- the rules ------------------------------------------------------------------------

    def refill_due(self, held: int, state: dict) -> bool:
        deck = state.get("_mp_deck_view")
        return not self.trick and self.tricks > 0 and held < HAND and bool(deck and deck.stock)

    def legal_moves(self, hand, state):
        if self.refill_due(len(hand), state):
            return [Move("draw", "draw")]
        return [Move("play", self.card_name(card), id_b, card) for id_b, card in self.sorted_hand(hand)]

    def rule_problem(self, who, card, call_suit, state):
        if who == "guest" and not self.trick:
            return "guest_leads"
        if who == "host" and self.trick:
            return "host_plays_twice"
        deck = state.get("_mp_deck_view")
        if self.refill_due(len(deck.hand_of(who)) if deck is not None else HAND, state):
            return "refill_due"
        return None

    def on_play(self, who, card, call_suit):
        self.trick.append((who, card))
        self.seen.add(card)

    def after_turn(self, actor, kind, state):
        if len(self.trick) < 2:
            return
        lead, follow = self.trick[0][1], self.trick[1][1]
        taker = trick_taker(lead, follow)
        self.points[taker] += POINTS[lead[0]] + POINTS[follow[0]]
        self.tricks += 1
        self.last_trick = (lead, follow, taker)
        self.trick = []

    def winner(self, state):
        deck = state.get("_mp_deck_view")
        if deck is None or deck.stock or deck.hand_of("host") or deck.hand_of("guest"):
            return None
        host, guest = self.points["host"], self.points["guest"]
        return "host" if host > guest else "guest" if guest > host else "draw"

    # -- the automatic player -------------------------------------------------------------

    def best_move(self, moves, hand, state):
        deck = state.get("_mp_deck_view")
        if deck is not None and not deck.stock:
            return self._searched(moves, hand)
        if not self.trick:
            return min(moves, key=lambda move: (POINTS[move.card[0]] + keep_value(move.card),
                                                STRENGTH[move.card[0]]))
        lead = self.trick[0][1]
        return max(moves, key=lambda move: (self._follow_gain(lead, move.card), -STRENGTH[move.card[0]]))

    @staticmethod
    def _follow_gain(lead: tuple[int, int], card: tuple[int, int]) -> int:
        """What following `lead` with `card` is worth: the trick's points won or lost, less what
        a trump spent on it was worth keeping."""
        points = POINTS[lead[0]] + POINTS[card[0]]
        won = points if trick_taker(lead, card) == "guest" else -points
        return won - keep_value(card)

    def _searched(self, moves: list[Move], hand: dict) -> Move:
        """With the stock empty the unseen cards are the opponent's hand: search to the end."""
        mine = tuple(card for _, card in self.sorted_hand(hand))
        theirs = tuple(card for card in self.deck() if card not in self.seen and card not in hand.values())
        sign = 1 if self.role == "host" else -1
        lead = self.trick[0][1] if self.trick else None

        def value(move: Move) -> int:
            rest = tuple(card for card in mine if card != move.card)
            if lead is None:  # we are the host, leading
                return endgame(rest, theirs, move.card)
            points = POINTS[lead[0]] + POINTS[move.card[0]]
            trick = points if trick_taker(lead, move.card) == "host" else -points
            return sign * (trick + endgame(theirs, rest, None))

        return max(moves, key=lambda move: (value(move), -keep_value(move.card), -STRENGTH[move.card[0]]))

    # -- what people see ------------------------------------------------------------------

    def table_lines(self):
        lines = [f"trump: {SUIT_NAMES[TRUMP]} ({SUITS[TRUMP]})"]
        if self.trick:
            lines.append("trick: " + ", ".join(f"{who} {self.card_name(card)}" for who, card in self.trick))
        if self.last_trick is not None:
            lead, follow, taker = self.last_trick
            lines.append(f"last trick: {self.card_name(lead)} / {self.card_name(follow)} -> {taker} "
                         f"+{POINTS[lead[0]] + POINTS[follow[0]]}")
        lines.append(f"points: host {self.points['host']} · guest {self.points['guest']}")
        return lines

    def table_state(self):
        return {"briscola": TRUMP, "trump": SUITS[TRUMP], "score": dict(self.points),
                "points": dict(self.points), "completed_tricks": self.tricks,
                "current_trick": [{"who": who, "rank": card[0], "suit": card[1], "card": self.card_name(card)}
                                  for who, card in self.trick]}
