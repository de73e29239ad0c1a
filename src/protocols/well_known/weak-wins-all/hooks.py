"""Weak Wins All (the network's weak-wins-all contract) for the simultaneous_round engine. Both
sides start with `total_points` (default 100) and bid some of what they have left each round
(the engine runs the commit-reveal); bids are spent. The lower bid wins the round and scores
both bids; equal bids score each side its own bid. The last of `total_rounds` (default 5)
rounds is all-in: each side's bid is whatever it has left. After the last round the higher
score wins; equal scores draw. A bid above what a side has left ends the match.

The automatic bidder spends about its share per round, leaning toward undercutting the
opponent's share, with some randomness; `moves` (e.g. "10 30 0", also `host_moves` /
`guest_moves`) scripts the bids, `seed` makes random play reproducible. Decisions:
{"round": 0, "bid": 12}; the all-in round is played without asking."""
from __future__ import annotations

from pathlib import Path

TYPE_CHECKING = False  # typing costs every process ~2 ms to import; annotations are strings
if TYPE_CHECKING:
    from typing import Any

from aigenora.proto.choices import RoundChoices
from aigenora.proto.hooks import HookResult, ProtocolHooks
from aigenora.proto.options import option, seeded_rng, side_option
from aigenora.proto.rounds import RoundResults

SIDES = ("host", "guest")


def other(side: str) -> str:
    return "guest" if side == "host" else "host"


class Hooks(RoundChoices, RoundResults, ProtocolHooks):
    SUPPORTED_CONTROL_MODES = ("autonomous", "hybrid", "human")
    DECISION_SCHEMA = {"match_key": "round", "value_field": "bid", "numeric": True,
                       "strategy_field": "bid"}

    def proto_init(self, options, role, args, state_dir: Path, decision_config: dict[str, Any] | None = None):
        super().proto_init(options, role, args, state_dir, decision_config)
        self.total_points = option(options, "total_points", 100, int)
        self.total_rounds = option(options, "total_rounds", 5, int)
        self.script = [int(word) for word in str(side_option(options, role, "moves", "")).replace(",", " ").split()]
        self.rng = seeded_rng(options, role)
        self._start()

    def _start(self) -> None:
        self.remaining = {side: self.total_points for side in SIDES}
        self.score = {side: 0 for side in SIDES}
        self.snapshot.update(total_points=self.total_points, total_rounds=self.total_rounds,
                             round=1, remaining=dict(self.remaining), score=dict(self.score))

    def proto_host_metadata(self):
        return ("Weak Wins All", "game,weak-wins-all", "supply", {
            "total_points": self.total_points, "total_rounds": self.total_rounds})

    def proto_guest_join_message(self):
        return {"action": "join", "total_points": self.total_points, "total_rounds": self.total_rounds}

    def proto_host_handle_join(self, msg):
        self._start()
        self.snapshot.update(phase="playing")
        return HookResult({"action": "ready", "total_points": self.total_points,
                           "total_rounds": self.total_rounds})

    def proto_guest_handle_ready(self, msg):
        self.total_points, self.total_rounds = msg["total_points"], msg["total_rounds"]
        self._start()
        self.snapshot.update(phase="playing")

    # -- bidding --------------------------------------------------------------------------

    def _last_round(self, round_index: int) -> bool:
        return round_index >= self.total_rounds - 1

    def proto_round_value(self, round_index: int, state: dict) -> int:
        left = self.remaining[self.role]
        if self._last_round(round_index):
            self.snapshot.update(legal={"min": left, "max": left})
            return left
        self.snapshot.update(legal={"min": 0, "max": left})
        return self.decide_round(round_index, range(left + 1), self.script,
                                 lambda: self._automatic_bid(round_index),
                                 f"bid must be an integer from 0 to {left}")

    def _automatic_bid(self, round_index: int) -> int:
        """Around the average of both sides' shares per round still to play, give or take."""
        rounds_left = self.total_rounds - round_index
        mine, theirs = self.remaining[self.role], self.remaining[other(self.role)]
        share = (mine + theirs) / (2 * rounds_left)
        return max(0, min(mine, round(share * self.rng.uniform(0.6, 1.3))))

    # -- judging --------------------------------------------------------------------------

    def proto_round_judge(self, round_index, host_value, guest_value, state):
        bids = {"host": host_value, "guest": guest_value}
        over_budget = [side for side in SIDES if bids[side] > self.remaining[side]]
        if over_budget:
            self.snapshot.set_phase("aborted", summary=f"{over_budget[0]} bid more than it has left")
            return HookResult({"action": "error", "round": round_index, "reason": "invalid_choice"},
                              abort=True)
        if self._last_round(round_index):
            bids = dict(self.remaining)  # all-in, whatever was revealed
        for side in SIDES:
            self.remaining[side] -= bids[side]
        if bids["host"] == bids["guest"]:
            winner = "draw"
            for side in SIDES:
                self.score[side] += bids[side]
        else:
            winner = "host" if bids["host"] < bids["guest"] else "guest"
            self.score[winner] += bids["host"] + bids["guest"]
        over = self._last_round(round_index)
        host, guest = self.score["host"], self.score["guest"]
        result = {"action": "round_result", "round": round_index, "host_bid": bids["host"],
                  "guest_bid": bids["guest"], "round_winner": winner, "host_score": host,
                  "guest_score": guest, "host_remaining": self.remaining["host"],
                  "guest_remaining": self.remaining["guest"], "game_over": over,
                  "game_winner": ("host" if host > guest else "guest" if guest > host else "draw")
                  if over else "none"}
        self._record(result)
        return HookResult(result, completed=over)

    def apply_round_result(self, result: dict) -> None:
        self.remaining = {side: result[f"{side}_remaining"] for side in SIDES}
        self.score = {side: result[f"{side}_score"] for side in SIDES}
        self._record(result)

    def _record(self, result: dict) -> None:
        number, over = result["round"] + 1, result["game_over"]
        self.details.append(type="round_result", round=number,
                            **{key: value for key, value in result.items() if key not in ("action", "round")},
                            summary=self.describe_round(result))
        self.snapshot.update(
            phase="game_over" if over else "playing", round=number if over else number + 1,
            remaining=dict(self.remaining), score=dict(self.score),
            last_event={"summary": self.describe_round(result), "structured": {
                "round": number, "winner": result["round_winner"], "game_over": over,
                "game_winner": result["game_winner"]}})

    def describe_round(self, result: dict) -> str:
        return (f"Round {result['round'] + 1}: host bids {result['host_bid']}, guest bids "
                f"{result['guest_bid']} -> {result['round_winner']} (score {result['host_score']}-"
                f"{result['guest_score']}, left {result['host_remaining']}-{result['guest_remaining']})")

    def proto_display(self, msg, direction):
        """The round, and while the match goes on what this side may bid next."""
        text = super().proto_display(msg, direction)
        if text is not None and not msg["game_over"]:
            left = msg[f"{self.role}_remaining"]
            text += (f"\nnext round (all-in): {left}" if self._last_round(msg["round"] + 1)
                     else f"\nnext bid: 0 to {left}")
        return text
