"""Connect Four (the network's connect4-v1 contract) for the session_loop engine. The guest
(red, X) moves first by naming a column; the stone drops to the lowest empty cell. The host
(yellow, O) checks the move, drops its own stone and answers with a round_result. Four in a
row (across, down or diagonal) wins; a full board is a draw.

The automatic player searches ahead (alpha-beta, `think_ms` per move) and scores a board by
the four-cell lines each side could still complete. Options: `cols` and `rows` (the board,
default 7 x 6), and the ones every board game reads (aigenora.proto.boards): `moves` (this
side's columns in order, e.g. "3,3,2"), `think_ms`, `seed`, each also as `host_<name>` or
`guest_<name>` for one side. Decisions name a column: {"turn": 5, "col": 3}."""
from __future__ import annotations

from aigenora.proto.boards import BoardGame, other, render, wire_winner
from aigenora.proto.options import option
from aigenora.proto.search import WIN

MARKS = {"guest": "X", "host": "O", None: "."}
LINE = 4
# A four-cell line holding stones of one side only, scored by how many it holds.
LINE_SCORES = (0, 1, 8, 64)
SIZES = range(4, 11)


def four_cell_lines(rows: int, cols: int) -> list[tuple[tuple[int, int], ...]]:
    """Every line of four cells on the board, as (row, col) cells."""
    lines = []
    for row in range(rows):
        for col in range(cols):
            for d_row, d_col in ((0, 1), (1, 0), (1, 1), (1, -1)):
                end_row, end_col = row + d_row * (LINE - 1), col + d_col * (LINE - 1)
                if 0 <= end_row < rows and 0 <= end_col < cols:
                    lines.append(tuple((row + d_row * i, col + d_col * i) for i in range(LINE)))
    return lines


class Board:
    """The rules, and what the automatic player needs (aigenora.proto.search). Row 0 is the
    top row; a move is a column number."""

    def __init__(self, rows: int, cols: int):
        self.height, self.width = rows, cols
        self.cells: list[list[str | None]] = [[None] * cols for _ in range(rows)]
        self.filled = [0] * cols
        self.to_move = "guest"
        self.history: list[tuple[int, str | None]] = []  # (column, winner after the move)
        self.lines = four_cell_lines(rows, cols)
        self.centre_first = sorted(range(cols), key=lambda col: abs(2 * col - (cols - 1)))

    def legal(self) -> list[int]:
        return [col for col in range(self.width) if self.filled[col] < self.height]

    def moves(self) -> list[int]:
        return [col for col in self.centre_first if self.filled[col] < self.height]

    def landing_row(self, col: int) -> int:
        return self.height - 1 - self.filled[col]

    def last_row(self) -> int:
        """The row of the stone dropped last."""
        return self.height - self.filled[self.history[-1][0]]

    def play(self, col: int) -> None:
        row, side = self.landing_row(col), self.to_move
        self.cells[row][col] = side
        self.filled[col] += 1
        if self._four_through(row, col, side):
            winner = side
        elif len(self.history) + 1 == self.height * self.width:
            winner = "draw"
        else:
            winner = None
        self.history.append((col, winner))
        self.to_move = other(side)

    def undo(self) -> None:
        col, _ = self.history.pop()
        self.filled[col] -= 1
        self.cells[self.landing_row(col)][col] = None
        self.to_move = other(self.to_move)

    def _four_through(self, row: int, col: int, side: str) -> bool:
        for d_row, d_col in ((0, 1), (1, 0), (1, 1), (1, -1)):
            count = 1
            for sign in (1, -1):
                r, c = row + sign * d_row, col + sign * d_col
                while 0 <= r < self.height and 0 <= c < self.width and self.cells[r][c] == side:
                    count += 1
                    r, c = r + sign * d_row, c + sign * d_col
            if count >= LINE:
                return True
        return False

    def winner(self) -> str | None:
        return self.history[-1][1] if self.history else None

    def outcome(self) -> int | None:
        winner = self.winner()
        return None if winner is None else 0 if winner == "draw" else -WIN

    def evaluate(self) -> int:
        """Lines only the side to move can still complete, minus the opponent's."""
        me, cells, score = self.to_move, self.cells, 0
        for line in self.lines:
            mine = theirs = 0
            for row, col in line:
                stone = cells[row][col]
                if stone is not None:
                    if stone == me:
                        mine += 1
                    else:
                        theirs += 1
            if not theirs:
                score += LINE_SCORES[mine]
            elif not mine:
                score -= LINE_SCORES[theirs]
        return score

    def rows(self) -> list[list[str]]:
        return [[MARKS[stone] for stone in row] for row in self.cells]


class Hooks(BoardGame):
    NAME = "Connect Four"
    TAGS = "game,connect4,board"
    DECISION_SCHEMA = {"match_key": "turn", "value_field": "col", "strategy_field": "col"}
    PIECES = {"X": "red", "O": "yellow"}
    MOVES_BY = "column"

    def read_settings(self, source):
        self.cols = option(source, "cols", 7, int)
        self.rows = option(source, "rows", 6, int)
        if self.cols not in SIZES or self.rows not in SIZES:
            raise ValueError(f"a {self.cols} x {self.rows} board is not playable (4 to 10 each way)")

    def settings(self):
        return {"cols": self.cols, "rows": self.rows}

    def new_position(self):
        return Board(self.rows, self.cols)

    def label(self, move):
        return move

    def parse_label(self, token):
        if not token.isdigit() or int(token) >= self.cols:
            raise ValueError(f"moves: {token!r} is not a column (0 to {self.cols - 1})")
        return int(token)

    def columns(self):
        return [str(col) for col in range(self.cols)]

    def cell_of(self, move):
        return self.position.landing_row(move), move

    def move_message(self, turn, move):
        return {"action": "move", "turn": turn, "col": move}

    def move_in(self, msg):
        return msg["col"]

    def refusal(self, move):
        return "invalid_column" if not 0 <= move < self.cols else "column_full"

    def result_message(self, turn, player, move):
        winner = self.position.winner()
        return {"action": "round_result", "turn": turn, "col": move, "row": self.position.last_row(),
                "player": player, "game_over": winner is not None, "winner": wire_winner(winner)}

    def result_problem(self, msg):
        if msg["row"] != self.position.last_row():
            return f"the stone in column {msg['col']} lands in row {self.position.last_row()}, not {msg['row']}"
        return None

    def board_text(self):
        return render(self.position.rows(), self.columns())
