"""Two-player card games over the mental_poker engine: the engine deals, draws and checks every
card; a game built on `CardGame` keeps only its rules and its automatic player. An extension
beyond the reference SDK's API (stdlib only), shared by our Crazy Eights and Briscola hooks.

The base class names every legal action of a turn by a label a person can type ("7H", "8S:C"
for an eight calling clubs, "draw", "pass") and takes this side's action from, in order: a
person's decision (human control, or hybrid when one was submitted) in the `action_seq` window
whose `move` must be one of those labels (the desk refuses any other and keeps the window
open); the `moves` script; else the game's automatic player (`strategy` "best", or "random"
seeded by `seed`). It follows both sides' turns from the public events (plays, draws, passes),
checks the peer's plays against the rules, and publishes the table for people and controllers:
`board_text`, `hand`, `legal`, `to_move`, `last_move`, `winner` in snapshot.json, and one
display line per move."""
from __future__ import annotations

TYPE_CHECKING = False  # typing costs every process ~2 ms to import; annotations are strings
if TYPE_CHECKING:
    from typing import Any

from aigenora.proto.hooks import ProtocolHooks
from aigenora.proto.mental_poker import ValidationResult
from aigenora.proto.options import seeded_rng, side_option

SUITS = ["C", "D", "H", "S"]
SUIT_NAMES = ["clubs", "diamonds", "hearts", "spades"]
STRATEGIES = ("best", "random")


def other(side: str) -> str:
    return "host" if side == "guest" else "guest"


class Move:
    """One legal action of a turn and its label. `card` is (rank, suit) for a play."""

    __slots__ = ("kind", "id_b", "card", "call_suit", "label")

    def __init__(self, kind: str, label: str, id_b: str | None = None,
                 card: tuple[int, int] | None = None, call_suit: int | None = None):
        self.kind, self.label, self.id_b, self.card, self.call_suit = kind, label, id_b, card, call_suit

    def __repr__(self) -> str:
        return f"Move({self.label!r})"

    def action(self) -> dict:
        """The action the engine takes (proto_mp_choose_action's answer)."""
        if self.kind != "play":
            return {"kind": self.kind}
        action = {"kind": "play", "id_b": self.id_b}
        if self.call_suit is not None:
            action["call_suit"] = self.call_suit
        return action

    def listed(self) -> dict:
        """The action as snapshot.json's `legal_actions` lists it (a decision can copy it)."""
        entry = {"move": self.label, **self.action()}
        if self.card is not None:
            entry.update(rank=self.card[0], suit=self.card[1])
        return entry


class CardGame(ProtocolHooks):
    """Base of a two-player mental-poker card game's Hooks. Options every game reads (each also
    as `host_<name>`/`guest_<name>` for one side only): `strategy` ("best" or "random"), `seed`
    (for a repeatable "random"), `moves` (this side's labels in order, each played when legal
    at its turn, else the automatic choice)."""

    SUPPORTED_CONTROL_MODES = ("autonomous", "hybrid", "human")
    DECISION_SCHEMA = {"match_key": "action_seq", "value_field": "move", "strategy_field": "move"}
    NAME = "Card game"
    TAGS = "game,cards"
    RANKS: list[str] = []

    # -- what a game provides -------------------------------------------------------------

    def read_settings(self, options: dict) -> None:
        """Take the game's own options."""

    def settings(self) -> dict:
        """The options the invitation advertises."""
        return {}

    def deck(self) -> list[tuple[int, int]]:
        raise NotImplementedError

    def hand_size(self) -> int:
        raise NotImplementedError

    def legal_moves(self, hand: dict[str, tuple[int, int]], state: dict) -> list[Move]:
        """This side's legal actions now (never empty)."""
        raise NotImplementedError

    def best_move(self, moves: list[Move], hand: dict[str, tuple[int, int]], state: dict) -> Move:
        """The automatic player's choice among `moves`."""
        raise NotImplementedError

    def rule_problem(self, who: str, card: tuple[int, int], call_suit: int | None,
                     state: dict) -> str | None:
        """Why the peer may not play `card` now (a short reason), or None."""
        raise NotImplementedError

    def on_play(self, who: str, card: tuple[int, int], call_suit: int | None) -> None:
        """A play by either side, once it is known to be legal."""
        raise NotImplementedError

    def after_turn(self, actor: str, kind: str, state: dict) -> None:
        """Every turn's end (kind: play, draw or pass), on both sides, in the same order."""

    def winner(self, state: dict) -> str | None:
        """host, guest, draw, or None while the game goes on."""
        raise NotImplementedError

    def table_lines(self) -> list[str]:
        """The public table as text (top card, trick, trump, points, ...)."""
        raise NotImplementedError

    def table_state(self) -> dict:
        """The public table as snapshot fields."""
        return {}

    # -- set-up ---------------------------------------------------------------------------

    def proto_init(self, options, role, args, state_dir, decision_config=None):
        super().proto_init(options, role, args, state_dir, decision_config)
        self.read_settings(options)
        self.strategy_name = str(side_option(options, role, "strategy", "best")).lower()
        if self.strategy_name not in STRATEGIES:
            raise ValueError(f"strategy: {self.strategy_name!r} is not one of {', '.join(STRATEGIES)}")
        tokens = str(side_option(options, role, "moves", "")).replace(",", " ").split()
        self.script = [token.upper() for token in tokens]
        self.rng = seeded_rng(options, role)
        self.turn = 0          # turns of both sides so far
        self.own_turns = 0     # this side's turns so far (the action_seq of the next one)
        self.plays_seen = 0
        self.hands_seen = {"host": 0, "guest": 0}
        self.transfers_before_play = 0
        self.transfers_seen = 0
        self.planned: tuple[int, list[Move], Move] | None = None
        self.last_move: dict | None = None
        self.game_winner: str | None = None
        self.snapshot.update(game=self.NAME, ranks=self.RANKS, suits=SUITS, winner="none")

    def proto_host_metadata(self):
        return (self.NAME, self.TAGS, "supply", self.settings())

    def proto_mp_deck_universe(self):
        return self.deck()

    def proto_mp_initial_deal(self, state):
        size = self.hand_size()
        self.transfers_before_play = 2 * size
        self.hands_seen = {"host": size, "guest": size}
        return {"host": size, "guest": size}

    # -- card names -----------------------------------------------------------------------

    def card_name(self, card: tuple[int, int]) -> str:
        return f"{self.RANKS[card[0]]}{SUITS[card[1]]}"

    def hand_of(self, state: dict) -> dict[str, tuple[int, int]]:
        return {id_b: (int(face[0]), int(face[1]))
                for id_b, face in (state.get("_mp_hand_cards") or {}).items()}

    def sorted_hand(self, hand: dict[str, tuple[int, int]]) -> list[tuple[str, tuple[int, int]]]:
        return sorted(hand.items(), key=lambda item: (item[1][1], item[1][0]))

    # -- this side's turn -----------------------------------------------------------------

    def _turn_moves(self, state: dict) -> tuple[list[Move], Move]:
        """This turn's legal moves and the automatic choice, worked out once per turn."""
        if self.planned is None or self.planned[0] != self.own_turns:
            hand = self.hand_of(state)
            moves = self.legal_moves(hand, state)
            self.planned = (self.own_turns, moves, self._automatic(moves, hand, state))
        return self.planned[1], self.planned[2]

    def _automatic(self, moves: list[Move], hand: dict, state: dict) -> Move:
        if self.script:
            wanted = self.script[self.own_turns % len(self.script)]
            for move in moves:
                if move.label.upper() == wanted:
                    return move
        if len(moves) == 1:
            return moves[0]
        if self.strategy_name == "random":
            return self.rng.choice(moves)
        return self.best_move(moves, hand, state)

    def proto_mp_legal_actions(self, state):
        moves, planned = self._turn_moves(state)
        # The agent's move, shown in a hybrid window (the SDK reads it as (window, value)).
        self._intended = (self.own_turns, planned.label)
        self._publish(state, to_move=self.role, legal=[move.label for move in moves])
        return [move.listed() for move in moves]

    def decision_choices(self, match_key, match_value):
        """The labels a person may pick in this turn's window."""
        if match_key != "action_seq" or self.planned is None or self.planned[0] != match_value:
            return None
        return [move.label for move in self.planned[1]]

    def proto_mp_choose_action(self, state):
        _, move = self._turn_moves(state)
        self._own_move(move, state)
        return move.action()

    def proto_mp_coerce_action(self, state, decision):
        """A person's decision: {"move": label}, or the reference's {"kind", "id_b", "call_suit"}."""
        if not isinstance(decision, dict):
            raise ValueError("a decision is an object with a move")
        moves, _ = self._turn_moves(state)
        move = self._find(moves, decision)
        if move is None:
            labels = ", ".join(m.label for m in moves)
            raise ValueError(f"not a legal move now; legal: {labels}")
        return move.action()

    def _find(self, moves: list[Move], decision: dict) -> Move | None:
        label = decision.get("move")
        if isinstance(label, str):
            wanted = label.strip().upper()
            return next((m for m in moves if m.label.upper() == wanted), None)
        kind, call = decision.get("kind"), decision.get("call_suit")
        for move in moves:
            if move.kind == kind and (kind != "play" or (
                    move.id_b == decision.get("id_b") and move.call_suit == call)):
                return move
        return None

    def proto_mp_apply_local_action(self, state, action):
        moves, _ = self._turn_moves(state)
        self._own_move(self._find(moves, action), state)

    def _own_move(self, move: Move, state: dict) -> None:
        self.own_turns += 1
        if move.kind == "play":
            self.on_play(self.role, move.card, move.call_suit)
            self._moved(self.role, "play", move.card, move.call_suit)

    # -- the peer's plays -----------------------------------------------------------------

    def proto_mp_validate_play(self, state, who, play_msg):
        card = (int(play_msg["rank"]), int(play_msg["suit"]))
        call = play_msg.get("call_suit")
        call = None if call is None else int(call)
        problem = self.rule_problem(who, card, call, state)
        if problem is not None:
            self.details.append(type="refused_play", who=who, card=self.card_name(card), reason=problem,
                                summary=f"refused the {who}'s {self.card_name(card)}: {problem}")
            return ValidationResult(False, problem)
        self.on_play(who, card, call)
        self._moved(who, "play", card, call)
        return ValidationResult(True)

    # -- every turn's end -----------------------------------------------------------------

    def proto_mp_check_winner(self, state):
        actor = "host" if self.turn % 2 == 0 else "guest"
        deck = state.get("_mp_deck_view")
        played = len(deck.played) if deck is not None else 0
        held = len(deck.hand_of(actor)) if deck is not None else 0
        if played > self.plays_seen:
            kind = "play"
        elif held > self.hands_seen[actor]:
            kind = "draw"
        else:
            kind = "pass"
        self.plays_seen = played
        if deck is not None:
            self.hands_seen = {side: len(deck.hand_of(side)) for side in ("host", "guest")}
        if kind != "play":
            self._moved(actor, kind)
        self.turn += 1
        self.after_turn(actor, kind, state)
        winner = self.winner(state)
        if winner is not None:
            self.game_winner = winner
        self._publish(state, to_move=None if winner else other(actor), legal=[])
        self.snapshot.update(legal_actions=[])
        return winner

    def _moved(self, who: str, kind: str, card: tuple[int, int] | None = None,
               call_suit: int | None = None) -> None:
        """Records a move of the current turn for the snapshot and details.jsonl."""
        text = kind if card is None else self.move_text(card, call_suit)
        self.last_move = {"turn": self.turn + 1, "player": who, "kind": kind, "move": text}
        self.details.append(type="move", turn=self.turn + 1, player=who, kind=kind, move=text,
                            summary=f"T{self.turn + 1} {who} {text}")

    def move_text(self, card: tuple[int, int], call_suit: int | None) -> str:
        text = self.card_name(card)
        return text if call_suit is None else f"{text} calling {SUIT_NAMES[call_suit]}"

    # -- what people see ------------------------------------------------------------------

    def _publish(self, state: dict, to_move: str | None, legal: list[str]) -> None:
        deck = state.get("_mp_deck_view")
        hand = self.sorted_hand(self.hand_of(state))
        opponent = other(self.role)
        counts = {"stock": len(deck.stock) if deck is not None else 0,
                  "opponent": len(deck.hand_of(opponent)) if deck is not None else 0}
        lines = self.table_lines()
        lines.append(f"stock {counts['stock']} · {opponent} holds {counts['opponent']}")
        lines.append("your hand: " + (" ".join(self.card_name(card) for _, card in hand) or "(empty)"))
        if self.game_winner is not None:
            lines.append(f"game over: {self.game_winner}" if self.game_winner != "draw" else "game over: draw")
        elif legal:
            lines.append("your move: " + ", ".join(legal))
        else:
            lines.append(f"{to_move} to move")
        if self.game_winner is not None:
            phase, summary = "game_over", f"Game over: {self.game_winner}"
        elif self.last_move is not None:
            phase = "playing"
            summary = f"{self.last_move['player']} played {self.last_move['move']}"
        else:
            phase, summary = "playing", "host to move"
        self.snapshot.update(
            phase=phase, turn=self.turn, board_text="\n".join(lines), to_move=to_move, legal=legal,
            cards=[self.card_name(card) for _, card in hand], last_move=self.last_move,
            hand=[{"id_b": id_b, "rank": card[0], "suit": card[1], "label": self.card_name(card)}
                  for id_b, card in hand],
            stock_count=counts["stock"], opponent_hand_count=counts["opponent"],
            winner=self.game_winner or "none", **self.table_state(),
            last_event={"summary": summary, "structured": {"turn": self.turn, "last_move": self.last_move}})

    def proto_display(self, msg, direction):
        """One line per move: who played which card, drew or passed."""
        action = msg.get("action")
        who = self.role if direction == "sent" else other(self.role)
        if action == "mp_play":
            call = msg.get("call_suit")
            card = (int(msg["rank"]), int(msg["suit"]))
            return f"T{self.turn + 1} {who}: {self.move_text(card, None if call is None else int(call))}"
        if action == "mp_ot_request":
            self.transfers_seen += 1
            if self.transfers_seen > self.transfers_before_play:
                return f"T{self.turn + 1} {who}: draws a card"
            return None
        if action == "mp_pass":
            return f"T{self.turn + 1} {who}: passes"
        if action == "error":
            return f"stopped: {msg.get('reason')}"
        return None
