"""Gomoku, five in a row (the network's gomoku-v1 contract), for the session_loop engine. The
guest (black, X) places the first stone; the host (white, O) checks each guest move, places
its own stone and answers with a round_result. Five or more in a row (across, down or
diagonal) wins; a full board is a draw.

The automatic player looks at every five-cell line: a line only one side has stones in is
worth more the fuller it is. It wins when it can, blocks a line the opponent is about to
complete, and otherwise searches the most promising cells ahead (alpha-beta, `think_ms` per
move). Options: `board_size` (5 to 19, default 15), and the ones every board game reads
(aigenora.proto.boards): `moves` (this side's cells in order, e.g. "h8 h9"), `think_ms`,
`seed`, each also as `host_<name>` or `guest_<name>` for one side. Cells are named by column
letter and row number from the top: {"turn": 3, "cell": "h8"}."""
from __future__ import annotations

from aigenora.proto.boards import COLUMN_LETTERS, BoardGame, cell_name, other, parse_cell, render, wire_winner
from aigenora.proto.options import option
from aigenora.proto.search import WIN

MARKS = {"guest": "X", "host": "O", None: "."}
FIVE = 5
# A five-cell line holding stones of one side only, scored by how many it holds.
LINE_SCORES = (0, 1, 6, 40, 400)
# Cells searched at each step, the most promising first.
CANDIDATES = 10
SIZES = range(5, 20)


class Board:
    """The rules, and what the automatic player needs (aigenora.proto.search). A move is a
    cell index, row * size + col; row 0 is the top row."""

    def __init__(self, size: int):
        self.size = size
        cells = size * size
        self.cells: list[str | None] = [None] * cells
        self.to_move = "guest"
        self.history: list[tuple[int, str | None]] = []  # (cell, winner after the move)
        self.lines = self._five_cell_lines()
        self.lines_of: list[list[int]] = [[] for _ in range(cells)]
        for number, line in enumerate(self.lines):
            for cell in line:
                self.lines_of[cell].append(number)
        self.stones = {"guest": [0] * len(self.lines), "host": [0] * len(self.lines)}
        self.score = 0  # every line's worth, from the guest's side
        self.neighbours = [self._around(cell) for cell in range(cells)]
        self.near = [0] * cells  # stones within two cells

    def _five_cell_lines(self) -> list[tuple[int, ...]]:
        size, lines = self.size, []
        for row in range(size):
            for col in range(size):
                for d_row, d_col in ((0, 1), (1, 0), (1, 1), (1, -1)):
                    end_row, end_col = row + d_row * (FIVE - 1), col + d_col * (FIVE - 1)
                    if 0 <= end_row < size and 0 <= end_col < size:
                        lines.append(tuple((row + d_row * i) * size + col + d_col * i
                                           for i in range(FIVE)))
        return lines

    def _around(self, cell: int) -> list[int]:
        size, (row, col) = self.size, divmod(cell, self.size)
        return [r * size + c for r in range(max(0, row - 2), min(size, row + 3))
                for c in range(max(0, col - 2), min(size, col + 3)) if (r, c) != (row, col)]

    @staticmethod
    def _worth(guest: int, host: int) -> int:
        if host == 0:
            return LINE_SCORES[guest] if guest < FIVE else 0
        return -LINE_SCORES[host] if guest == 0 and host < FIVE else 0

    def legal(self) -> list[int]:
        return [cell for cell, stone in enumerate(self.cells) if stone is None]

    def play(self, cell: int) -> None:
        side = self.to_move
        self.cells[cell] = side
        own, guest, host, won = self.stones[side], self.stones["guest"], self.stones["host"], False
        for line in self.lines_of[cell]:
            before = self._worth(guest[line], host[line])
            own[line] += 1
            self.score += self._worth(guest[line], host[line]) - before
            won = won or own[line] == FIVE
        for near in self.neighbours[cell]:
            self.near[near] += 1
        full = len(self.history) + 1 == len(self.cells)
        self.history.append((cell, side if won else "draw" if full else None))
        self.to_move = other(side)

    def undo(self) -> None:
        cell, _ = self.history.pop()
        side = other(self.to_move)
        own, guest, host = self.stones[side], self.stones["guest"], self.stones["host"]
        for line in self.lines_of[cell]:
            before = self._worth(guest[line], host[line])
            own[line] -= 1
            self.score += self._worth(guest[line], host[line]) - before
        for near in self.neighbours[cell]:
            self.near[near] -= 1
        self.cells[cell] = None
        self.to_move = side

    def winner(self) -> str | None:
        return self.history[-1][1] if self.history else None

    def outcome(self) -> int | None:
        winner = self.winner()
        return None if winner is None else 0 if winner == "draw" else -WIN

    def evaluate(self) -> int:
        """The lines' worth for the side to move; a line it can complete next wins outright."""
        me = self.to_move
        for cell in self._candidates():
            for line in self.lines_of[cell]:
                if self.stones[me][line] == FIVE - 1 and self.stones[other(me)][line] == 0:
                    return WIN // 2
        return self.score if me == "guest" else -self.score

    def _candidates(self) -> list[int]:
        if not self.history:
            return [(self.size // 2) * self.size + self.size // 2]
        return [cell for cell, stone in enumerate(self.cells) if stone is None and self.near[cell]]

    def moves(self) -> list[int]:
        """A winning cell alone; else the cells that stop the opponent's five; else the
        most promising cells (what they build plus what they block)."""
        me, foe = self.to_move, other(self.to_move)
        mine, theirs = self.stones[me], self.stones[foe]
        scored, blocks = [], []
        for cell in self._candidates():
            attack = defence = 0
            for line in self.lines_of[cell]:
                if theirs[line] == 0:
                    if mine[line] == FIVE - 1:
                        return [cell]
                    attack += LINE_SCORES[mine[line] + 1] if mine[line] + 1 < FIVE else 0
                elif mine[line] == 0:
                    if theirs[line] == FIVE - 1:
                        blocks.append(cell)
                    defence += LINE_SCORES[theirs[line]]
            scored.append((attack + defence * 9 // 10, cell))
        if blocks:
            return sorted(set(blocks))
        scored.sort(reverse=True)
        return [cell for _, cell in scored[:CANDIDATES]]

    def rows(self) -> list[list[str]]:
        size = self.size
        return [[MARKS[stone] for stone in self.cells[row * size:(row + 1) * size]]
                for row in range(size)]


class Hooks(BoardGame):
    NAME = "Gomoku"
    TAGS = "game,gomoku,board"

    def read_settings(self, source):
        self.board_size = option(source, "board_size", 15, int)
        if self.board_size not in SIZES:
            raise ValueError(f"board_size {self.board_size} is not playable (5 to 19)")

    def settings(self):
        return {"board_size": self.board_size}

    def new_position(self):
        return Board(self.board_size)

    def label(self, move):
        return "off the board" if move is None else cell_name(*divmod(move, self.board_size))

    def parse_label(self, token):
        return cell_name(*parse_cell(token, self.board_size))

    def columns(self):
        return list(COLUMN_LETTERS[:self.board_size])

    def cell_of(self, move):
        return divmod(move, self.board_size)

    def move_message(self, turn, move):
        row, col = divmod(move, self.board_size)
        return {"action": "move", "turn": turn, "row": row, "col": col}

    def move_in(self, msg):
        row, col, size = msg["row"], msg["col"], self.board_size
        return row * size + col if 0 <= row < size and 0 <= col < size else None

    def refusal(self, move):
        return "out_of_bounds" if move is None else "occupied"

    def result_message(self, turn, player, move):
        row, col = divmod(move, self.board_size)
        winner = self.position.winner()
        return {"action": "round_result", "turn": turn, "row": row, "col": col, "player": player,
                "game_over": winner is not None, "winner": wire_winner(winner)}

    def board_text(self):
        return render(self.position.rows(), self.columns())
