"""Game-tree search for two-player, full-information games: iterative-deepening negamax with
alpha-beta pruning inside a time budget. An extension beyond the reference SDK's API (stdlib
only); the board games among our well-known hooks use it for their autonomous moves.

A position is any object with:

- `moves()`: the legal moves of the side to move, best-looking first (ordering is what makes
  alpha-beta fast); never empty while the game goes on (a forced pass is a move);
- `play(move)` and `undo()`: make a move and take the last one back;
- `outcome()`: None while the game goes on, else the final score from the point of view of
  the side to move (`-WIN` when the side that just moved has won, 0 for a draw);
- `evaluate()`: a heuristic score from the point of view of the side to move, well inside
  (-WIN, WIN)."""
from __future__ import annotations

import time

TYPE_CHECKING = False  # typing costs every process ~2 ms to import; annotations are strings
if TYPE_CHECKING:
    from typing import Any

# A won game; quicker wins score higher (WIN minus the plies it takes).
WIN = 1_000_000


class _OutOfTime(Exception):
    """The deadline passed in the middle of a search iteration."""


class _Search:
    def __init__(self, position: Any, deadline: float):
        self.position = position
        self.deadline = deadline
        self.nodes = 0

    def negamax(self, depth: int, ply: int, alpha: float, beta: float) -> float:
        self.nodes += 1
        if self.nodes & 63 == 0 and time.monotonic() > self.deadline:
            raise _OutOfTime
        position = self.position
        final = position.outcome()
        if final is not None:
            return final + ply if final < 0 else final - ply if final > 0 else 0
        if depth == 0:
            return position.evaluate()
        best = -WIN * 2
        for move in position.moves():
            position.play(move)
            try:
                score = -self.negamax(depth - 1, ply + 1, -beta, -alpha)
            finally:
                position.undo()
            if score > best:
                best = score
            if best > alpha:
                alpha = best
            if alpha >= beta:
                break
        return best

    def root(self, moves: list, depth: int) -> tuple[Any, float]:
        """The best root move at `depth` and its score; `moves` in the order to try them."""
        best_move, alpha = moves[0], -WIN * 2
        for move in moves:
            self.position.play(move)
            try:
                score = -self.negamax(depth - 1, 1, -WIN * 2, -alpha)
            finally:
                self.position.undo()
            if score > alpha:
                best_move, alpha = move, score
        return best_move, alpha


def best_move(position: Any, seconds: float, max_depth: int = 64, shuffle: Any = None) -> Any:
    """The move the deepest search completed within `seconds` prefers (at least a one-ply
    search always completes). `shuffle` (a random.Random) varies the order of equally good
    root moves so repeated games differ."""
    moves = list(position.moves())
    if len(moves) == 1:
        return moves[0]
    if shuffle is not None:
        # Only among the first few candidates, keeping the position's ordering roughly.
        head = moves[:3]
        shuffle.shuffle(head)
        moves[:3] = head
    search = _Search(position, time.monotonic() + max(0.0, seconds))
    choice, _ = _complete_first_ply(search, moves)
    for depth in range(2, max_depth + 1):
        try:
            found, score = search.root(moves, depth)
        except _OutOfTime:
            break
        choice = found
        moves.remove(found)
        moves.insert(0, found)
        if abs(score) >= WIN // 2:
            break  # a forced result: searching deeper changes nothing
    return choice


def _complete_first_ply(search: _Search, moves: list) -> tuple[Any, float]:
    """A one-ply search that ignores the deadline, so there is always an answer."""
    deadline, search.deadline = search.deadline, float("inf")
    try:
        return search.root(moves, 1)
    finally:
        search.deadline = deadline
