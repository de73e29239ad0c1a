"""Reversi / Othello (the network's reversi-v1 contract) for the session_loop engine. The
board starts with the central 2 x 2 cross; the guest (black, X) moves first. A move must
bracket a straight line of the opponent's stones between the new stone and one of the
mover's own, and flips every bracketed stone; a side with no such move passes. The host
(white, O) checks each guest move or pass, makes its own and answers with a round_result
carrying both counts. The game ends when neither side can move; more stones wins.

The automatic player searches ahead (alpha-beta, `think_ms` per move), valuing corners and
edges, avoiding the cells that hand a corner over, and counting how many moves each side
keeps. Options: `board_size` (6 to 8, default 8), and the ones every board game reads (aigenora.proto.boards):
`moves` (this side's cells in order, e.g. "d3 c4"), `think_ms`, `seed`, each also as
`host_<name>` or `guest_<name>` for one side. Cells are named by column letter and row number
from the top: {"turn": 1, "cell": "d3"}; a forced pass is played without asking."""
from __future__ import annotations

from aigenora.proto.boards import COLUMN_LETTERS, BoardGame, cell_name, other, parse_cell, render, wire_winner
from aigenora.proto.options import option
from aigenora.proto.search import WIN

MARKS = {"guest": "X", "host": "O", None: "."}
PASS = "pass"
DIRECTIONS = ((-1, -1), (-1, 0), (-1, 1), (0, -1), (0, 1), (1, -1), (1, 0), (1, 1))
SIZES = range(6, 9)
MOBILITY = 5


def cell_weights(size: int) -> list[int]:
    """How much holding each cell is worth: corners most, edges some, and the cells next to
    an empty corner (which let the opponent take it) less than nothing."""
    last, weights = size - 1, []
    for row in range(size):
        for col in range(size):
            edge_row, edge_col = row in (0, last), col in (0, last)
            near_row, near_col = row in (1, last - 1), col in (1, last - 1)
            if edge_row and edge_col:
                weights.append(100)
            elif near_row and near_col:
                weights.append(-50)
            elif (edge_row and near_col) or (edge_col and near_row):
                weights.append(-20)
            elif edge_row or edge_col:
                weights.append(10)
            else:
                weights.append(1)
    return weights


class Board:
    """The rules, and what the automatic player needs (aigenora.proto.search). A move is a
    cell index, row * size + col (row 0 is the top row), or PASS."""

    def __init__(self, size: int):
        self.size = size
        self.cells: list[str | None] = [None] * (size * size)
        middle = size // 2
        for row, col, side in ((middle - 1, middle - 1, "host"), (middle - 1, middle, "guest"),
                               (middle, middle - 1, "guest"), (middle, middle, "host")):
            self.cells[row * size + col] = side
        self.to_move = "guest"
        self.history: list[tuple[int | str, list[int]]] = []  # (move, the stones it flipped)
        self.rays = [self._rays(cell) for cell in range(size * size)]
        self.weights = cell_weights(size)
        self._placings: dict[str, list[int]] = {}

    def _rays(self, cell: int) -> list[list[int]]:
        size, (row, col) = self.size, divmod(cell, self.size)
        rays = []
        for d_row, d_col in DIRECTIONS:
            ray, r, c = [], row + d_row, col + d_col
            while 0 <= r < size and 0 <= c < size:
                ray.append(r * size + c)
                r, c = r + d_row, c + d_col
            if len(ray) >= 2:
                rays.append(ray)
        return rays

    def flips(self, cell: int, side: str) -> list[int]:
        """The stones a stone of `side` on `cell` would flip (none: not a legal move)."""
        if self.cells[cell] is not None:
            return []
        cells, flipped = self.cells, []
        for ray in self.rays[cell]:
            run = []
            for other_cell in ray:
                stone = cells[other_cell]
                if stone is None:
                    break
                if stone == side:
                    flipped.extend(run)
                    break
                run.append(other_cell)
        return flipped

    def placings(self, side: str) -> list[int]:
        """The cells `side` can play (cached until the board changes)."""
        found = self._placings.get(side)
        if found is None:
            found = [cell for cell in range(len(self.cells)) if self.flips(cell, side)]
            self._placings[side] = found
        return found

    def legal(self) -> list[int | str]:
        return self.placings(self.to_move) or [PASS]

    def moves(self) -> list[int | str]:
        weights = self.weights
        return sorted(self.legal(), key=lambda move: -weights[move] if move != PASS else 0)

    def play(self, move: int | str) -> None:
        side, flipped = self.to_move, []
        if move != PASS:
            flipped = self.flips(move, side)
            self.cells[move] = side
            for cell in flipped:
                self.cells[cell] = side
        self.history.append((move, flipped))
        self.to_move = other(side)
        self._placings = {}

    def undo(self) -> None:
        move, flipped = self.history.pop()
        self.to_move = other(self.to_move)
        if move != PASS:
            self.cells[move] = None
            opponent = other(self.to_move)
            for cell in flipped:
                self.cells[cell] = opponent
        self._placings = {}

    def last_flipped(self) -> int:
        return len(self.history[-1][1]) if self.history else 0

    def count(self, side: str) -> int:
        return self.cells.count(side)

    def winner(self) -> str | None:
        if self.placings("guest") or self.placings("host"):
            return None
        guest, host = self.count("guest"), self.count("host")
        return "draw" if guest == host else "guest" if guest > host else "host"

    def outcome(self) -> int | None:
        winner = self.winner()
        if winner is None:
            return None
        return 0 if winner == "draw" else WIN if winner == self.to_move else -WIN

    def evaluate(self) -> int:
        me, weights, score = self.to_move, self.weights, 0
        for cell, stone in enumerate(self.cells):
            if stone is not None:
                score += weights[cell] if stone == me else -weights[cell]
        return score + MOBILITY * (len(self.placings(me)) - len(self.placings(other(me))))

    def rows(self) -> list[list[str]]:
        size = self.size
        return [[MARKS[stone] for stone in self.cells[row * size:(row + 1) * size]]
                for row in range(size)]


class Hooks(BoardGame):
    NAME = "Reversi"
    TAGS = "game,reversi,board"
    MOVE_ACTIONS = ("move", "pass")

    def read_settings(self, source):
        self.board_size = option(source, "board_size", 8, int)
        if self.board_size not in SIZES:
            raise ValueError(f"board_size {self.board_size} is not playable (6 to 8)")

    def settings(self):
        return {"board_size": self.board_size}

    def new_position(self):
        return Board(self.board_size)

    def label(self, move):
        if move is None or move == PASS:
            return "off the board" if move is None else PASS
        return cell_name(*divmod(move, self.board_size))

    def parse_label(self, token):
        return PASS if token.lower() == PASS else cell_name(*parse_cell(token, self.board_size))

    def score(self):
        return {"host": self.position.count("host"), "guest": self.position.count("guest")}

    def is_forced(self, move):
        return move == PASS

    def columns(self):
        return list(COLUMN_LETTERS[:self.board_size])

    def cell_of(self, move):
        return None if move == PASS else divmod(move, self.board_size)

    def move_message(self, turn, move):
        if move == PASS:
            return {"action": "pass", "turn": turn}
        row, col = divmod(move, self.board_size)
        return {"action": "move", "turn": turn, "row": row, "col": col}

    def move_in(self, msg):
        if msg["action"] == "pass" or msg.get("passed"):
            return PASS
        row, col, size = msg["row"], msg["col"], self.board_size
        return row * size + col if 0 <= row < size and 0 <= col < size else None

    def refusal(self, move):
        return "illegal_move"

    def result_message(self, turn, player, move):
        row, col = (0, 0) if move == PASS else divmod(move, self.board_size)
        winner = self.position.winner()
        return {"action": "round_result", "turn": turn, "row": row, "col": col, "player": player,
                "flipped": self.position.last_flipped(), "passed": move == PASS,
                "game_over": winner is not None, "winner": wire_winner(winner),
                "black": self.position.count("guest"), "white": self.position.count("host")}

    def closing_result(self, turn, move):
        """The guest's move ended the game: the host reports its pass, with the counts."""
        self._apply("host", PASS, turn + 1)
        return self.result_message(turn + 1, "host", PASS)

    def result_problem(self, msg):
        counts = (self.position.count("guest"), self.position.count("host"))
        if (msg["black"], msg["white"]) != counts:
            return f"it counts {msg['black']}-{msg['white']}, the board {counts[0]}-{counts[1]}"
        if msg["flipped"] != self.position.last_flipped():
            return f"it says {msg['flipped']} stones flipped, not {self.position.last_flipped()}"
        return None

    def board_text(self):
        counts = f"X {self.position.count('guest')}  O {self.position.count('host')}"
        return render(self.position.rows(), self.columns()) + "\n" + counts
