"""Turn-based board games over session_loop in which the guest moves first and the host
referees: the guest sends a move, the host checks and applies it, plays its own and answers
with a round_result; whoever finishes the game ends the session. An extension beyond the
reference SDK's API (stdlib only), shared by our Connect Four, Gomoku and Reversi hooks.

A game subclasses `BoardGame` and supplies a position (the rules; see `aigenora.proto.search`
for what the automatic player needs of it, plus `legal()`, `winner()`, `rows()` and
`to_move`) and the few methods that map moves to and from its messages and cells. The base
class keeps the turn count, asks for this side's moves in every control mode (a script, the
strategy file, a person's decision, or a time-boxed search), checks the peer's moves and
verdicts against its own copy of the board, and shows the board with the legal moves: as
text for terminals, and as cells for the browser controller (`board`, `board_layout`,
`legal_cells` and `last_move` in snapshot.json)."""
from __future__ import annotations

TYPE_CHECKING = False  # typing costs every process ~2 ms to import; annotations are strings
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Any

from aigenora.proto.choices import RoundChoices, spoken_list
from aigenora.proto.hooks import HookResult, ProtocolHooks
from aigenora.proto.options import seeded_rng, side_option
from aigenora.proto.search import best_move

COLUMN_LETTERS = "abcdefghijklmnopqrstuvwxyz"
# Legal moves listed in full in prompts and refusals up to this many.
LISTED_MOVES = 16


def other(side: str) -> str:
    return "host" if side == "guest" else "guest"


def cell_name(row: int, col: int) -> str:
    """A cell as a person names it: column letter, then row number from 1 (top row): "d3"."""
    return f"{COLUMN_LETTERS[col]}{row + 1}"


def parse_cell(text: str, size: int) -> tuple[int, int]:
    """(row, col) of a cell name such as "d3" (or "D3") on a size x size board."""
    word = str(text).strip().lower()
    if len(word) < 2 or word[0] not in COLUMN_LETTERS[:size] or not word[1:].isdigit():
        raise ValueError(f"{text!r} is not a cell (a column letter and a row number, e.g. c4)")
    row = int(word[1:]) - 1
    if not 0 <= row < size:
        raise ValueError(f"{text!r} is off the {size}x{size} board")
    return row, COLUMN_LETTERS.index(word[0])


def render(rows: list[list[str]], column_labels: list[str]) -> str:
    """A board as text: a header of column labels, then each row (its marks) numbered from 1."""
    width = len(str(len(rows)))
    lines = [" " * (width + 1) + " ".join(column_labels)]
    lines.extend(f"{number:>{width}} {' '.join(row)}" for number, row in enumerate(rows, 1))
    return "\n".join(lines)


def wire_winner(winner: str | None) -> str:
    """The `winner` field of a round_result: host, guest, or none (game going on or drawn)."""
    return winner if winner in ("host", "guest") else "none"


class BoardGame(RoundChoices, ProtocolHooks):
    """Base of a guest-first board game's Hooks. Options every game reads (each also as
    `host_<name>`/`guest_<name>` for one side only): `moves`, this side's moves in order
    (comma/space separated, skipped when illegal); `think_ms`, the automatic player's time
    per move; `seed`, for reproducible automatic play."""

    SUPPORTED_CONTROL_MODES = ("autonomous", "hybrid", "human")
    NAME = "Board game"
    TAGS = "game,board"
    # The guest's move messages; the host answers each with a round_result.
    MOVE_ACTIONS: tuple[str, ...] = ("move",)
    # Per-move time of the automatic player, in milliseconds.
    THINK_MS = 1000
    DECISION_SCHEMA = {"match_key": "turn", "value_field": "cell", "strategy_field": "cell"}
    # How a controller draws the marks of `rows()`: a colour name for each side's mark.
    PIECES = {"X": "black", "O": "white"}
    # What a move names: a "cell", or a "column" a stone drops down (any cell of it plays it).
    MOVES_BY = "cell"

    # -- what a game provides -------------------------------------------------------------

    def read_settings(self, source: dict) -> None:
        """Take the board settings from options (defaults allowed) or the host's ready."""
        raise NotImplementedError

    def settings(self) -> dict:
        """The board settings as join, ready and the invitation carry them."""
        raise NotImplementedError

    def new_position(self) -> Any:
        raise NotImplementedError

    def label(self, move: Any) -> Any:
        """A move as a decision carries it (a column number, a cell name, "pass")."""
        raise NotImplementedError

    def parse_label(self, token: str) -> Any:
        """A scripted move (one token of the `moves` option) as a label; ValueError if none."""
        raise NotImplementedError

    def columns(self) -> list[str]:
        """The column labels, left to right (the text board's header)."""
        raise NotImplementedError

    def cell_of(self, move: Any) -> tuple[int, int] | None:
        """The (row, col) where a legal move, not yet played, puts its stone; None for a
        move that puts none (a pass)."""
        raise NotImplementedError

    def move_message(self, turn: int, move: Any) -> dict:
        """The guest's message for its move."""
        raise NotImplementedError

    def move_in(self, msg: dict) -> Any:
        """The move a guest's move message, or a round_result, names."""
        raise NotImplementedError

    def refusal(self, move: Any) -> str:
        """The error reason for an illegal guest move."""
        raise NotImplementedError

    def result_message(self, turn: int, player: str, move: Any) -> dict:
        """The host's round_result after `player` made `move` at `turn`."""
        raise NotImplementedError

    def closing_result(self, turn: int, move: Any) -> dict:
        """The round_result when the guest's move at `turn` ended the game."""
        return self.result_message(turn, "guest", move)

    def result_problem(self, msg: dict) -> str | None:
        """Why a round_result disagrees with this side's board (beyond the move and the
        verdict, which the base class checks); None when it agrees."""
        return None

    def score(self) -> dict | None:
        """The position's score by side, when the game keeps one (Reversi's discs)."""
        return None

    def is_forced(self, move: Any) -> bool:
        """Whether a move that is the only legal one is played without asking (a pass)."""
        return False

    # -- set-up and handshake -------------------------------------------------------------

    def proto_init(self, options, role, args, state_dir: Path, decision_config: dict[str, Any] | None = None):
        super().proto_init(options, role, args, state_dir, decision_config)
        self.read_settings(options)
        tokens = str(side_option(options, role, "moves", "")).replace(",", " ").split()
        self.script = [self.parse_label(token) for token in tokens]
        self.think_seconds = side_option(options, role, "think_ms", self.THINK_MS, int) / 1000
        self.rng = seeded_rng(options, role)
        self.turn = 1
        self.own_moves = 0
        self._new_game()

    def _new_game(self) -> None:
        self.position = self.new_position()
        self.last_move: dict | None = None
        self.snapshot.update(settings=self.settings(), winner="none")
        self._publish("playing")

    def proto_host_metadata(self):
        return (self.NAME, self.TAGS, "supply", self.settings())

    def proto_guest_join_message(self):
        return {"action": "join", **self.settings()}

    def proto_host_handle_join(self, msg):
        self._new_game()
        return HookResult({"action": "ready", **self.settings(), "first": "guest"})

    def proto_guest_handle_ready(self, msg):
        self.read_settings(msg)
        self._new_game()

    # -- the guest ------------------------------------------------------------------------

    def proto_guest_first_action(self):
        return self._guest_turn()

    def _guest_turn(self) -> dict:
        move = self._own_move()
        self._apply("guest", move, self.turn)
        return self.move_message(self.turn, move)

    def proto_guest_handle(self, msg):
        action = msg.get("action")
        if action == "end":
            return HookResult(completed=True)
        if action != "round_result":
            self.snapshot.set_phase("aborted", summary=f"the host stopped: {msg.get('reason')}")
            return HookResult(abort=True)
        problem = self._take_result(msg)
        if problem is not None:
            self.details.append(type="rejected_result", turn=msg["turn"], reason=problem,
                                summary=f"the host's round_result is wrong: {problem}")
            self.snapshot.set_phase("aborted", summary=f"the host's round_result is wrong: {problem}")
            return HookResult(abort=True)
        if msg["game_over"]:
            return HookResult(completed=True)
        self.turn = msg["turn"] + 1
        return HookResult(self._guest_turn())

    def _take_result(self, msg: dict) -> str | None:
        """Applies the host's move of a round_result; why it cannot be right, or None."""
        move, player = self.move_in(msg), msg["player"]
        if player == "host":
            if msg["turn"] != self.turn + 1 or self.position.to_move != "host":
                return f"a host move at turn {msg['turn']} is out of turn"
            if move not in self.position.legal():
                return f"the host's move {self.label(move)} is illegal"
            self._apply("host", move, msg["turn"])
        elif msg["turn"] != self.turn or self.last_move is None or self.last_move["move"] != self.label(move):
            return "it reports a guest move this side did not make"
        over = self.position.winner() is not None
        if msg["game_over"] != over or msg["winner"] != wire_winner(self.position.winner()):
            return (f"it says game_over={msg['game_over']} winner={msg['winner']}, the board says "
                    f"game_over={over} winner={wire_winner(self.position.winner())}")
        return self.result_problem(msg)

    # -- the host -------------------------------------------------------------------------

    def proto_host_handle(self, msg):
        if msg.get("action") not in self.MOVE_ACTIONS or msg.get("turn") != self.turn:
            return self._refuse("not_your_turn", msg)
        move = self.move_in(msg)
        if self.position.to_move != "guest" or move not in self.position.legal():
            return self._refuse(self.refusal(move), msg)
        self._apply("guest", move, self.turn)
        if self.position.winner() is not None:
            return HookResult(self.closing_result(self.turn, move), completed=True)
        self.turn += 1
        move = self._own_move()
        self._apply("host", move, self.turn)
        result = self.result_message(self.turn, "host", move)
        self.turn += 1
        return HookResult(result, completed=self.position.winner() is not None)

    def _refuse(self, reason: str, msg: dict) -> HookResult:
        error = {"action": "error", "reason": reason}
        turn = msg.get("turn")
        if isinstance(turn, int) and not isinstance(turn, bool) and turn >= 1:
            error["turn"] = turn
        self.details.append(type="refused", reason=reason, msg=msg, summary=f"refused the guest's move: {reason}")
        self.snapshot.set_phase("aborted", summary=f"refused the guest's move: {reason}")
        return HookResult(error, abort=True)

    # -- choosing and making moves --------------------------------------------------------

    def _own_move(self) -> Any:
        """This side's next move: forced, else decided (script, strategy, person) or searched."""
        legal = self.position.legal()
        if len(legal) == 1 and self.is_forced(legal[0]):
            return legal[0]
        by_label = {self.label(move): move for move in legal}
        labels = list(by_label)
        _, field, _ = self._decision_names()
        reason = (f"{field} must be {spoken_list(labels)}" if len(labels) <= LISTED_MOVES
                  else f"{field} must be one of the {len(labels)} legal moves (snapshot.json: legal)")
        label = self.decide_round(self.turn, labels, self.script, self._searched_label, reason,
                                  step=self.own_moves)
        self.own_moves += 1
        return by_label[label]

    def decision_choices(self, match_key: str, match_value: Any) -> list | None:
        """The legal moves of the turn a window asks about, when it is this side's: the desk
        lists them to people (terminal, browser) and holds decisions to them."""
        if (match_value != self.turn or self.position.to_move != self.role
                or self.position.winner() is not None):
            return None
        return [self.label(move) for move in self.position.legal()]

    def _searched_label(self) -> Any:
        return self.label(best_move(self.position, self.think_seconds, shuffle=self.rng))

    def _apply(self, player: str, move: Any, turn: int) -> None:
        cell = self.cell_of(move)
        self.position.play(move)
        self.last_move = {"turn": turn, "player": player, "move": self.label(move)}
        if cell is not None:
            self.last_move.update(row=cell[0], col=cell[1])
        winner = self.position.winner()
        self.details.append(type="move", turn=turn, player=player, move=self.label(move),
                            game_over=winner is not None, winner=winner or "none",
                            summary=f"T{turn} {player} {self.label(move)}"
                                    + (f" -> game over: {winner}" if winner else ""))
        self._publish("game_over" if winner else "playing")

    def _publish(self, phase: str) -> None:
        """The board, whose move it is and (on this side's turn) its legal moves, for people
        and controllers: `board` (rows of marks, top row first), `board_layout` (column and
        row labels, each mark's colour, whether moves name cells or columns), `legal` (the
        moves' labels) and `legal_cells` (`{move, row, col}` for each legal move that puts a
        stone on the board), `last_move` (with its `row` and `col`)."""
        winner = self.position.winner()
        rows = self.position.rows()
        layout = {"columns": self.columns(), "rows": [str(number) for number in range(1, len(rows) + 1)],
                  "pieces": self.PIECES, "moves_by": self.MOVES_BY}
        snapshot = {"phase": phase, "turn": self.turn, "board": rows, "board_layout": layout,
                    "board_text": self.board_text(), "last_move": self.last_move, "legal_cells": []}
        score = self.score()
        if score is not None:
            snapshot["score"] = score
        if winner is None:
            mine = self.position.to_move == self.role
            legal = self.position.legal() if mine else []
            cells = [(self.label(move), self.cell_of(move)) for move in legal]
            snapshot.update(to_move=self.position.to_move, legal=[label for label, _ in cells],
                            legal_cells=[{"move": label, "row": cell[0], "col": cell[1]}
                                         for label, cell in cells if cell is not None])
            summary = (f"{self.last_move['player']} played {self.last_move['move']}" if self.last_move
                       else "guest to move")
        else:
            snapshot.update(to_move=None, legal=[], winner=winner)
            summary = f"Game over: {winner}" if winner != "draw" else "Game over: draw"
        snapshot["last_event"] = {"summary": summary, "structured": {
            "turn": self.turn, "last_move": self.last_move, "winner": winner or "none"}}
        self.snapshot.update(snapshot)

    # -- display --------------------------------------------------------------------------

    def board_text(self) -> str:
        """The board as text (the game's own labels and marks)."""
        raise NotImplementedError

    def proto_display(self, msg, direction):
        """A move or round_result as one line, then the board after it, then (on this side's
        turn) the legal moves; refusals as one line."""
        action = msg.get("action")
        if action == "error":
            return f"refused: {msg['reason']}"
        if action not in self.MOVE_ACTIONS and action != "round_result":
            return None
        pending = self._pending_move(msg, direction)
        if pending is not None:
            self.position.play(pending)
        try:
            return "\n".join(self._describe(msg) + [self.board_text()] + self._prompt())
        finally:
            if pending is not None:
                self.position.undo()

    def _pending_move(self, msg: dict, direction: str) -> Any:
        """A received move this side has not applied yet (display comes before the hook)."""
        if direction != "received":
            return None
        mover = "guest" if msg.get("action") in self.MOVE_ACTIONS else msg.get("player")
        if mover == self.role or mover != self.position.to_move or self.position.winner() is not None:
            return None
        move = self.move_in(msg)
        return move if move in self.position.legal() else None

    def _describe(self, msg: dict) -> list[str]:
        player = "guest" if msg.get("action") in self.MOVE_ACTIONS else msg["player"]
        line = f"T{msg['turn']} {player}: {self.label(self.move_in(msg))}"
        if msg.get("game_over"):
            line += f"  game over, winner: {msg['winner']}"
        return [line]

    def _prompt(self) -> list[str]:
        if self.position.winner() is not None or self.position.to_move != self.role:
            return []
        labels = [str(self.label(move)) for move in self.position.legal()]
        shown = ", ".join(labels) if len(labels) <= LISTED_MOVES else f"{len(labels)} moves"
        return [f"your move: {shown}"]
