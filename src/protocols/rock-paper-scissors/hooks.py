"""Rock-paper-scissors hooks for the simultaneous_round engine: each side picks a move (from
a `moves` script, strategy.json, a submitted decision or a seeded RNG) and the host judges.

Deterministic play: give each side `moves` (e.g. host "rock", guest "paper,scissors") or a
`seed`; with `termination: fixed_rounds` and `best_of: 99` that is a 99-round benchmark."""
from __future__ import annotations

import random
import re
from pathlib import Path
from typing import Any

from aigenora.proto.hooks import HookResult, ProtocolHooks

MOVES = ("rock", "paper", "scissors")
BEATS = {"rock": "scissors", "scissors": "paper", "paper": "rock"}
KEYWORDS = {
    "rock": ["rock", "石头"],
    "paper": ["paper", "布"],
    "scissors": ["scissors", "剪刀"],
}


def parse_moves(script: Any) -> list[str]:
    """The moves of a comma/space separated script; ValueError on anything else."""
    if not script:
        return []
    moves = [token.lower() for token in re.split(r"[\s,]+", str(script)) if token]
    unknown = sorted({move for move in moves if move not in MOVES})
    if unknown:
        raise ValueError(f"moves: unknown move(s) {', '.join(unknown)}; use rock, paper, scissors")
    return moves


def round_winner(host: str, guest: str) -> str:
    if host == guest:
        return "draw"
    return "host" if BEATS[host] == guest else "guest"


class Hooks(ProtocolHooks):
    SUPPORTED_CONTROL_MODES = ("autonomous", "hybrid", "human")
    CHOICE_KEYWORDS = KEYWORDS
    DECISION_SCHEMA = {
        "match_key": "round",
        "value_field": "choice",
        "choices": KEYWORDS,
        "strategy_field": "fixed",
    }

    def proto_init(self, options, role, args, state_dir: Path, decision_config: dict[str, Any] | None = None):
        super().proto_init(options, role, args, state_dir, decision_config)
        self.best_of = int(options.get("best_of") or 3)
        self.termination = options.get("termination") or "first_to_win"
        self.rounds_to_win = int(options.get("rounds_to_win") or self.best_of // 2 + 1)
        self.max_rounds = int(options.get("max_rounds") or 10 * self.best_of)
        self.script = parse_moves(options.get("moves"))
        seed = options.get("seed")
        self.rng = random.Random(f"{seed}:{role}") if seed is not None else random.Random()
        self.wins = {"host": 0, "guest": 0}
        self._publish_format()

    def _publish_format(self) -> None:
        self.snapshot.update(
            score=dict(self.wins), round=1, best_of=self.best_of,
            rounds_to_win=self.rounds_to_win, termination=self.termination,
            max_rounds=self.max_rounds,
        )

    def proto_host_metadata(self):
        return ("Rock-Paper-Scissors", "game,rps", "supply",
                {"best_of": self.best_of, "termination": self.termination})

    # -- handshake ----------------------------------------------------------------------

    def proto_host_handle_join(self, msg):
        self.snapshot.update(phase="playing")
        return HookResult({
            "action": "ready", "best_of": self.best_of, "rounds_to_win": self.rounds_to_win,
            "termination": self.termination, "max_rounds": self.max_rounds,
        })

    def proto_guest_handle_ready(self, msg):
        self.best_of = msg["best_of"]
        self.rounds_to_win = msg["rounds_to_win"]
        self.termination = msg["termination"]
        self.max_rounds = msg["max_rounds"]
        self._publish_format()
        self.snapshot.update(phase="playing")

    # -- choosing a move ------------------------------------------------------------------

    def proto_round_value(self, round_index: int, state: dict) -> str:
        if self.control_mode == "human":
            decision = self._await_human_decision("round", round_index)
            if decision.get("choice") not in MOVES:
                self._reject_human_decision("round", round_index, decision,
                                            "choice must be rock, paper or scissors")
            return decision["choice"]
        automatic = self._automatic_move(round_index)
        if self.bus is not None and self.decision_mode == "auto":
            decision = self._consume_hybrid("round", round_index)
            if decision and decision.get("choice") in MOVES:
                return decision["choice"]
        return automatic

    def _automatic_move(self, round_index: int) -> str:
        if self.script:
            move = self.script[round_index % len(self.script)]
            self._emit_strategy_applied(round_index, {"mode": "script"}, move)
            return move
        strategy = self.strategy.read()
        move = self._strategy_move(strategy, round_index)
        if move is None:
            override = self._resolve_whisper_override("round", round_index)
            if override and override[0] in MOVES:
                strategy, move = override[1], override[0]
        if move is None:
            move = self.rng.choice(MOVES)
        self._emit_strategy_applied(round_index, strategy or None, move)
        return move

    @staticmethod
    def _strategy_move(strategy: dict, round_index: int) -> str | None:
        mode = strategy.get("mode")
        if mode == "fixed" and strategy.get("fixed") in MOVES:
            return strategy["fixed"]
        if mode == "seq":
            sequence = [move for move in strategy.get("sequence") or [] if move in MOVES]
            if sequence:
                return sequence[round_index % len(sequence)]
        return None

    # -- judging --------------------------------------------------------------------------

    def proto_round_judge(self, round_index, host_value, guest_value, state):
        winner = round_winner(host_value, guest_value)
        if winner != "draw":
            self.wins[winner] += 1
        over, game_winner = self._match_state(round_index + 1)
        result = {
            "action": "round_result", "round": round_index,
            "host_choice": host_value, "guest_choice": guest_value, "round_winner": winner,
            "host_wins": self.wins["host"], "guest_wins": self.wins["guest"],
            "game_over": over, "game_winner": game_winner,
        }
        self._record(result)
        return HookResult(result, completed=over)

    def _match_state(self, played: int) -> tuple[bool, str]:
        host, guest = self.wins["host"], self.wins["guest"]
        if self.termination == "first_to_win":
            if max(host, guest) >= self.rounds_to_win:
                return True, "host" if host > guest else "guest"
            if played < self.max_rounds:
                return False, "none"
        elif played < self.best_of:
            return False, "none"
        return True, "host" if host > guest else "guest" if guest > host else "draw"

    def proto_guest_handle(self, msg):
        if msg.get("action") == "round_result":
            self.wins = {"host": msg["host_wins"], "guest": msg["guest_wins"]}
            self._record(msg)
        return HookResult()

    def _record(self, result: dict) -> None:
        number = result["round"] + 1
        score = f"{result['host_wins']}-{result['guest_wins']}"
        self.details.append(
            type="round_result", round=number, host_choice=result["host_choice"],
            guest_choice=result["guest_choice"], winner=result["round_winner"],
            host_wins=result["host_wins"], guest_wins=result["guest_wins"],
            game_over=result["game_over"], game_winner=result["game_winner"],
            summary=f"R{number}: {result['host_choice']} vs {result['guest_choice']} -> "
                    f"{result['round_winner']} ({score})",
        )
        over = result["game_over"]
        summary = (f"Match over: {result['game_winner']} ({score})" if over
                   else f"Round {number}: {result['round_winner']} ({score})")
        self.snapshot.update(
            phase="game_over" if over else "playing",
            score={"host": result["host_wins"], "guest": result["guest_wins"]},
            round=number if over else number + 1,
            last_event={"summary": summary, "structured": {
                "round": number, "winner": result["round_winner"],
                "game_over": over, "game_winner": result["game_winner"],
            }},
        )

    def proto_display(self, msg, direction):
        if msg.get("action") != "round_result":
            return None
        text = (f"Round {msg['round'] + 1}: host {msg['host_choice']} vs guest {msg['guest_choice']}"
                f" -> {msg['round_winner']} (score {msg['host_wins']}-{msg['guest_wins']})")
        if msg["game_over"]:
            text += f"\nMatch over: {msg['game_winner']}"
        return text
