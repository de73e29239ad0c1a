"""Coin-flip hooks for the simultaneous_round engine: each side contributes a committed bit,
the host XORs the two revealed bits into the coin and keeps the score over `flips` flips."""
from __future__ import annotations

import random
import re
from pathlib import Path
from typing import Any

from aigenora.proto.hooks import HookResult, ProtocolHooks


def parse_bits(script: Any) -> list[int]:
    """The bits of a comma/space separated script of 0s and 1s; ValueError otherwise."""
    if not script:
        return []
    tokens = [token for token in re.split(r"[\s,]+", str(script)) if token]
    if any(token not in ("0", "1") for token in tokens):
        raise ValueError("bits: use 0 and 1 separated by commas or spaces")
    return [int(token) for token in tokens]


def is_bit(value: Any) -> bool:
    return value in (0, 1) and not isinstance(value, bool)


class Hooks(ProtocolHooks):
    SUPPORTED_CONTROL_MODES = ("autonomous", "hybrid", "human")
    DECISION_SCHEMA = {"match_key": "round", "value_field": "bit", "numeric": True, "strategy_field": "bit"}

    def proto_init(self, options, role, args, state_dir: Path, decision_config: dict[str, Any] | None = None):
        super().proto_init(options, role, args, state_dir, decision_config)
        self.flips = int(options.get("flips") or 1)
        self.script = parse_bits(options.get("bits"))
        seed = options.get("seed")
        self.rng = random.Random(f"{seed}:{role}") if seed is not None else random.Random()
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
        if self.control_mode == "human":
            decision = self._await_human_decision("round", round_index)
            if not is_bit(decision.get("bit")):
                self._reject_human_decision("round", round_index, decision, "bit must be 0 or 1")
            return decision["bit"]
        bit = self._automatic_bit(round_index)
        if self.bus is not None and self.decision_mode == "auto":
            decision = self._consume_hybrid("round", round_index)
            if decision and is_bit(decision.get("bit")):
                return decision["bit"]
        return bit

    def _automatic_bit(self, round_index: int) -> int:
        strategy = self.strategy.read()
        if self.script:
            bit, source = self.script[round_index % len(self.script)], {"mode": "script"}
        elif strategy.get("mode") == "fixed" and is_bit(strategy.get("bit")):
            bit, source = strategy["bit"], strategy
        elif strategy.get("mode") == "seq" and [b for b in strategy.get("sequence") or [] if is_bit(b)]:
            sequence = [b for b in strategy["sequence"] if is_bit(b)]
            bit, source = sequence[round_index % len(sequence)], strategy
        else:
            bit, source = self.rng.randint(0, 1), strategy or None
        self._emit_strategy_applied(round_index, source, bit)
        return bit

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

    def proto_guest_handle(self, msg):
        if msg.get("action") == "round_result":
            self.wins = {"host": msg["host_wins"], "guest": msg["guest_wins"]}
            self._record(msg)
        return HookResult()

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

    def proto_display(self, msg, direction):
        if msg.get("action") != "round_result":
            return None
        text = (f"Flip {msg['round'] + 1}: {msg['host_bit']} xor {msg['guest_bit']} = {msg['coin']}"
                f" -> {msg['round_winner']} (score {msg['host_wins']}-{msg['guest_wins']})")
        if msg["game_over"]:
            text += f"\nMatch over: {msg['game_winner']}"
        return text
