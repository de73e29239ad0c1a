"""Coin-flip hooks for the simultaneous_round engine: each side contributes a committed bit,
the host XORs the two revealed bits into the coin and keeps the score over `flips` flips."""
from __future__ import annotations

from pathlib import Path

TYPE_CHECKING = False  # typing costs every process ~2 ms to import; annotations are strings
if TYPE_CHECKING:
    from typing import Any

from aigenora.proto.choices import RoundChoices
from aigenora.proto.hooks import HookResult, ProtocolHooks
from aigenora.proto.options import option, script_option, seeded_rng
from aigenora.proto.rounds import RoundResults

BITS = (0, 1)


class Hooks(RoundChoices, RoundResults, ProtocolHooks):
    SUPPORTED_CONTROL_MODES = ("autonomous", "hybrid", "human")
    DECISION_SCHEMA = {"match_key": "round", "value_field": "bit", "numeric": True, "strategy_field": "bit"}

    def proto_init(self, options, role, args, state_dir: Path, decision_config: dict[str, Any] | None = None):
        super().proto_init(options, role, args, state_dir, decision_config)
        self.flips = option(options, "flips", 1, int)
        self.script = [int(bit) for bit in script_option(options, "bits", ("0", "1"), noun="bit")]
        self.rng = seeded_rng(options, role)
        self.wins = {"host": 0, "guest": 0}
        self.snapshot.update(flips=self.flips, flip=1, score=dict(self.wins))

    def proto_host_metadata(self):
        return ("Coin Flip", "game,coin-flip", "supply", {"flips": self.flips})

    def proto_host_handle_join(self, msg):
        self.snapshot.update(phase="playing")
        return HookResult({"action": "ready", "flips": self.flips})

    def proto_guest_handle_ready(self, msg):
        self.flips = msg["flips"]
        self.snapshot.update(flips=self.flips, phase="playing")

    # -- choosing a bit -------------------------------------------------------------------

    def proto_round_value(self, round_index: int, state: dict) -> int:
        return self.decide_round(round_index, BITS, self.script, lambda: self.rng.randint(0, 1))

    # -- judging --------------------------------------------------------------------------

    def proto_round_judge(self, round_index, host_value, guest_value, state):
        coin = "heads" if host_value ^ guest_value == 0 else "tails"
        winner = "host" if coin == "heads" else "guest"
        self.wins[winner] += 1
        over = round_index + 1 >= self.flips
        host, guest = self.wins["host"], self.wins["guest"]
        game_winner = "none"
        if over:
            game_winner = "host" if host > guest else "guest" if guest > host else "draw"
        result = {
            "action": "round_result", "round": round_index, "host_bit": host_value,
            "guest_bit": guest_value, "coin": coin, "round_winner": winner,
            "host_wins": host, "guest_wins": guest, "game_over": over, "game_winner": game_winner,
        }
        self._record(result)
        return HookResult(result, completed=over)

    def apply_round_result(self, result: dict) -> None:
        self.wins = {"host": result["host_wins"], "guest": result["guest_wins"]}
        self._record(result)

    def _record(self, result: dict) -> None:
        number = result["round"] + 1
        self.details.append(
            type="flip", flip=number, host_bit=result["host_bit"], guest_bit=result["guest_bit"],
            coin=result["coin"], winner=result["round_winner"], host_wins=result["host_wins"],
            guest_wins=result["guest_wins"], game_over=result["game_over"],
            game_winner=result["game_winner"],
            summary=f"Flip {number}: {result['coin']} -> {result['round_winner']}",
        )
        over = result["game_over"]
        self.snapshot.update(
            phase="game_over" if over else "playing",
            flip=number if over else number + 1,
            score={"host": result["host_wins"], "guest": result["guest_wins"]},
            last_event={
                "summary": (f"Match over: {result['game_winner']}" if over
                            else f"Flip {number}: {result['coin']}"),
                "structured": {"flip": number, "coin": result["coin"], "winner": result["round_winner"],
                               "game_over": over, "game_winner": result["game_winner"]},
            },
        )

    def describe_round(self, result: dict) -> str:
        return (f"Flip {result['round'] + 1}: {result['host_bit']} xor {result['guest_bit']} = "
                f"{result['coin']} -> {result['round_winner']} "
                f"(score {result['host_wins']}-{result['guest_wins']})")
