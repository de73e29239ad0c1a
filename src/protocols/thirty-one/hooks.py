"""Thirty-One hooks for the mental_poker engine: a shedding race on a running count.

The engine deals, draws and checks every card (nobody sees the other's hand; the deck is
audited at the end); these hooks keep the rules: the count, the penalty after a 31, whose
plays are legal, and who won. Both sides keep the same count from the same public events:
their own plays, the peer's checked plays, and after each turn whether a card was played.

Automatic play follows `moves` when set (this side's labels in order, one per turn, repeated
when exhausted: a card such as "7H" or "10S", "draw" or "pass", each taken when it is legal at
that turn and the automatic choice taken otherwise; `host_moves`/`guest_moves` script one side
only), else `strategy` (shed the highest or the lowest legal card first). In human
control every turn waits for a decision `{"action_seq": n, "kind": "play", "id_b": "..."}`
(or `draw` / `pass`) and refuses one that breaks the rules; hybrid control plays a submitted
decision when there is one and the automatic choice otherwise."""
from __future__ import annotations

TYPE_CHECKING = False  # typing costs every process ~2 ms to import; annotations are strings
if TYPE_CHECKING:
    from typing import Any

from aigenora.proto.hooks import ProtocolHooks
from aigenora.proto.mental_poker import ValidationResult
from aigenora.proto.options import option, script_option

RANKS = ["1", "2", "3", "4", "5", "6", "7", "8", "9", "10"]
SUITS = ["C", "D", "H", "S"]
TARGET = 31
STRATEGIES = ("highest", "lowest")


def value(rank: int) -> int:
    """A card's worth: rank index 0-9 is worth 1-10."""
    return rank + 1


def card_name(rank: int, suit: int) -> str:
    return f"{RANKS[rank]}{SUITS[suit]}"


# What a `moves` script may name (lower case, as script_option reads it).
SCRIPT_TOKENS = [card_name(rank, suit).lower() for rank in range(len(RANKS))
                 for suit in range(len(SUITS))] + ["draw", "pass"]


class Hooks(ProtocolHooks):
    SUPPORTED_CONTROL_MODES = ("autonomous", "hybrid", "human")
    DECISION_SCHEMA = {
        "match_key": "action_seq",
        "value_field": "kind",
        "choices": {"play": "play", "draw": "draw", "pass": "pass"},
        "card_field": "id_b",
    }

    def card_name(self, card: tuple[int, int]) -> str:
        """A card's name (rank, suit) -> "7H": the SDK labels the published hand with it."""
        return card_name(*card)

    def proto_init(self, options, role, args, state_dir, decision_config=None):
        super().proto_init(options, role, args, state_dir, decision_config)
        self.hand_size = option(options, "hand_size", 5, int)
        self.strategy = option(options, "strategy", "highest")
        if self.strategy not in STRATEGIES:
            raise ValueError(f"strategy: {self.strategy!r} is not one of {', '.join(STRATEGIES)}")
        self.script = script_option(options, "moves", SCRIPT_TOKENS, role=role)
        self.own_turns = 0
        self.count = 0
        # The side that must draw a penalty card on its next turn, if any.
        self.penalty_for: str | None = None
        self.turn = 0
        self.plays_seen = 0
        self.snapshot.update(game="thirty_one", count=0, target=TARGET, ranks=RANKS, suits=SUITS)

    def proto_host_metadata(self):
        return ("Thirty-One", "game,cards,mental-poker", "supply",
                {"hand_size": self.hand_size, "strategy": self.strategy})

    # -- the deck -------------------------------------------------------------------------

    def proto_mp_deck_universe(self):
        return [(rank, suit) for rank in range(len(RANKS)) for suit in range(len(SUITS))]

    def proto_mp_initial_deal(self, state):
        return {"host": self.hand_size, "guest": self.hand_size}

    # -- the rules ------------------------------------------------------------------------

    def _penalty_due(self, state: dict) -> bool:
        deck = state.get("_mp_deck_view")
        return self.penalty_for == state.get("_mp_role") and bool(deck and deck.stock)

    def _playable(self, state: dict) -> list[tuple[str, int, int]]:
        cards = state.get("_mp_hand_cards") or {}
        return sorted((id_b, rank, suit) for id_b, (rank, suit) in cards.items()
                      if self.count + value(rank) <= TARGET)

    def _played(self, who: str, rank: int, suit: int, state: dict) -> None:
        """A play by `who` moves the count; exactly 31 resets it and owes the other a card."""
        self.count += value(rank)
        if self.count == TARGET:
            self.count = 0
            deck = state.get("_mp_deck_view")
            self.penalty_for = ("guest" if who == "host" else "host") if deck and deck.stock else None
        self.details.append(type="play", who=who, card=card_name(rank, suit), count=self.count)
        self.snapshot.update(count=self.count, penalty_for=self.penalty_for)

    def proto_mp_legal_actions(self, state):
        deck = state.get("_mp_deck_view")
        self.snapshot.update(count=self.count, penalty_for=self.penalty_for)
        if self._penalty_due(state):
            return [{"kind": "draw", "penalty": True}]
        plays = [{"kind": "play", "id_b": id_b, "rank": rank, "suit": suit, "value": value(rank)}
                 for id_b, rank, suit in self._playable(state)]
        if plays:
            return plays
        return [{"kind": "draw" if deck and deck.stock else "pass"}]

    def _scripted(self, legal: list[dict]) -> dict | None:
        """The legal action this turn's `moves` label names, if any."""
        if not self.script:
            return None
        wanted = self.script[self.own_turns % len(self.script)]
        for item in legal:
            label = item["kind"] if item["kind"] != "play" else card_name(item["rank"], item["suit"])
            if label.lower() == wanted:
                return item
        return None

    def proto_mp_choose_action(self, state):
        legal = self.proto_mp_legal_actions(state)
        choice = self._scripted(legal)
        if choice is None and legal[0]["kind"] == "play":
            pick = max if self.strategy == "highest" else min
            choice = pick(legal, key=lambda play: (play["value"], play["suit"], play["id_b"]))
        elif choice is None:
            choice = legal[0]
        if choice["kind"] != "play":
            return {"kind": choice["kind"]}
        self._played(state.get("_mp_role"), choice["rank"], choice["suit"], state)
        return {"kind": "play", "id_b": choice["id_b"]}

    def proto_mp_coerce_action(self, state, decision):
        action = super().proto_mp_coerce_action(state, decision)
        legal = self.proto_mp_legal_actions(state)
        if action["kind"] == "play":
            action.pop("call_suit", None)
            if not any(item.get("id_b") == action["id_b"] for item in legal):
                raise ValueError(f"that card would take the count past {TARGET}"
                                 if not self._penalty_due(state) else "a penalty card must be drawn first")
            return action
        if not any(item["kind"] == action["kind"] for item in legal):
            allowed = " or ".join(sorted({item["kind"] for item in legal}))
            raise ValueError(f"{action['kind']} is not allowed now ({allowed})")
        return action

    def proto_mp_apply_local_action(self, state, action):
        if action["kind"] == "play":
            rank, suit = state["_mp_hand_cards"][action["id_b"]]
            self._played(state.get("_mp_role"), rank, suit, state)

    def proto_mp_validate_play(self, state, who, play_msg):
        rank, suit = int(play_msg["rank"]), int(play_msg["suit"])
        if self.penalty_for == who and (state.get("_mp_deck_view") and state["_mp_deck_view"].stock):
            return ValidationResult(False, "penalty_draw_due")
        if self.count + value(rank) > TARGET:
            return ValidationResult(False, "count_over_31")
        self._played(who, rank, suit, state)
        return ValidationResult(True)

    def proto_mp_check_winner(self, state):
        deck = state.get("_mp_deck_view")
        actor = "host" if self.turn % 2 == 0 else "guest"
        self.turn += 1
        if actor == self.role:
            self.own_turns += 1
        played = len(deck.played) if deck else 0
        if played == self.plays_seen:
            # A draw or a pass: the count starts over, and a penalty is paid.
            self.count = 0
            if self.penalty_for == actor:
                self.penalty_for = None
            self.snapshot.update(count=0, penalty_for=self.penalty_for)
        self.plays_seen = played
        if deck is None:
            return None
        host, guest = len(deck.hand_of("host")), len(deck.hand_of("guest"))
        if host == 0 or guest == 0:
            winner = "host" if host == 0 else "guest"
        elif state.get("_mp_stalled"):
            winner = "host" if host < guest else "guest" if guest < host else "draw"
        else:
            return None
        self.snapshot.update(winner=winner)
        return winner

    def proto_display(self, msg, direction):
        action = msg.get("action")
        if action == "mp_play":
            return f"play {card_name(int(msg['rank']), int(msg['suit']))}"
        if action == "mp_pass":
            return "pass"
        if action == "error":
            return f"stopped: {msg.get('reason')}"
        return None
