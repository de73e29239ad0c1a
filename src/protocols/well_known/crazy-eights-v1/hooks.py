"""Crazy Eights (the network's crazy-eights-v1 contract) for the mental_poker engine. Each side
is dealt `hand_size` cards (3 to 7, default 5) from a 52-card deck; the host plays first. A card
plays on the discard when it has the suit in force or the rank of the top card; an eight plays
on anything and names the suit in force (`call_suit`). The first play of the game takes any
card. A side that cannot play draws one card, which ends its turn, or passes when the stock
is empty. The first side to empty its hand wins; after two passes in a row the side holding
fewer cards wins (equal hands: no winner). Every peer play is checked against these rules.

The automatic player keeps its eights for when nothing else plays, plays the card that leaves
it the most follow-ups (and, when it can, a suit the opponent was seen to lack), and with an
eight calls the suit it holds most. Options: `hand_size`, and what every card game reads
(aigenora.proto.cards): `strategy` (best, random), `seed`, `moves`. Decisions name a move:
{"action_seq": 3, "move": "7H"}, "8S:D" (an eight calling diamonds), "draw" or "pass"."""
from __future__ import annotations

from aigenora.proto.cards import SUITS, CardGame, Move
from aigenora.proto.options import option

RANKS = ["2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K", "A"]
EIGHT = RANKS.index("8")
HAND_SIZES = range(3, 8)


class Hooks(CardGame):
    NAME = "Crazy Eights"
    TAGS = "game,crazy-eights,cards"
    RANKS = RANKS

    def read_settings(self, options):
        self.dealt = option(options, "hand_size", 5, int)
        if self.dealt not in HAND_SIZES:
            raise ValueError(f"hand_size {self.dealt} is not playable (3 to 7)")
        self.top: tuple[int, int] | None = None    # the discard's top card
        self.suit: int | None = None               # the suit in force (an eight's call)
        # Suits the opponent could not follow when it last had to draw or pass.
        self.lacks: set[int] = set()

    def settings(self):
        return {"hand_size": self.dealt}

    def deck(self):
        return [(rank, suit) for rank in range(len(RANKS)) for suit in range(len(SUITS))]

    def hand_size(self):
        return self.dealt

    # -- the rules ------------------------------------------------------------------------

    def plays_on_top(self, card: tuple[int, int]) -> bool:
        if self.top is None or card[0] == EIGHT:
            return True
        return card[1] == self.suit or card[0] == self.top[0]

    def legal_moves(self, hand, state):
        moves = []
        for id_b, card in self.sorted_hand(hand):
            if not self.plays_on_top(card):
                continue
            name = self.card_name(card)
            if card[0] == EIGHT:
                moves.extend(Move("play", f"{name}:{SUITS[call]}", id_b, card, call) for call in range(len(SUITS)))
            else:
                moves.append(Move("play", name, id_b, card))
        if moves:
            return moves
        deck = state.get("_mp_deck_view")
        return [Move("draw", "draw") if deck is not None and deck.stock else Move("pass", "pass")]

    def rule_problem(self, who, card, call_suit, state):
        if not self.plays_on_top(card):
            return "illegal_play"
        if card[0] == EIGHT and call_suit is None:
            return "missing_call_suit"
        if card[0] != EIGHT and call_suit is not None:
            return "unexpected_call_suit"
        return None

    def on_play(self, who, card, call_suit):
        self.top = card
        self.suit = call_suit if card[0] == EIGHT else card[1]
        if who != self.role:
            self.lacks.discard(card[1])

    def after_turn(self, actor, kind, state):
        if actor != self.role and kind != "play" and self.suit is not None:
            # It held no card of the suit in force, of the top's rank, nor an eight.
            self.lacks = {self.suit}

    def winner(self, state):
        deck = state.get("_mp_deck_view")
        if deck is None:
            return None
        host, guest = len(deck.hand_of("host")), len(deck.hand_of("guest"))
        if host == 0 or guest == 0:
            return "host" if host == 0 else "guest"
        if state.get("_mp_stalled"):
            return "host" if host < guest else "guest" if guest < host else None
        return None

    # -- the automatic player -------------------------------------------------------------

    def best_move(self, moves, hand, state):
        plain = [move for move in moves if move.card[0] != EIGHT]
        if plain:
            return max(plain, key=lambda move: self._follow_ups(move, hand))
        eights = [move for move in moves if move.card is not None]
        return max(eights, key=lambda move: self._call_value(move, hand))

    def _follow_ups(self, move: Move, hand: dict) -> tuple:
        """How good a plain play is: whether its suit is one the opponent lacks (it must draw
        unless it drew one), then the cards of ours it leaves playable next (then the higher
        card, for a fixed order)."""
        rank, suit = move.card
        rest = [card for id_b, card in hand.items() if id_b != move.id_b and card[0] != EIGHT]
        playable = sum(1 for card in rest if card[1] == suit or card[0] == rank)
        return (suit in self.lacks, playable, rank, -suit)

    def _call_value(self, move: Move, hand: dict) -> tuple:
        """How good an eight's call is: the suit we hold most, then one the opponent lacks."""
        rest = [card for id_b, card in hand.items() if id_b != move.id_b and card[0] != EIGHT]
        held = sum(1 for card in rest if card[1] == move.call_suit)
        return (held, move.call_suit in self.lacks, -move.call_suit, move.id_b)

    # -- what people see ------------------------------------------------------------------

    def table_lines(self):
        if self.top is None:
            return ["discard: (empty, any card plays)"]
        return [f"discard: {self.card_name(self.top)}  suit in force: {SUITS[self.suit]}"]

    def table_state(self):
        top = None if self.top is None else {"rank": self.top[0], "suit": self.top[1],
                                             "card": self.card_name(self.top)}
        return {"top_card": top, "current_suit": self.suit,
                "opponent_lacks": sorted(SUITS[suit] for suit in self.lacks)}
