"""Coin Flip (the network's coin-flip-v1 contract) for the simultaneous_round engine: each round
the host commits to a side of the coin and the guest to its call, both revealed at once (the
engine runs the commit-reveal). The guest wins the flip when its call matches the host's
side, the host when it does not (the contract's win_conditions); the first side to
`rounds_to_win` flips (a majority of `best_of`, default 3) takes the match.

Autonomous play is a fair coin for both sides; `moves` (e.g. "heads tails", also
`host_moves`/`guest_moves`) scripts the calls, `seed` makes them reproducible. Decisions:
{"round": 0, "choice": "tails"}."""
from __future__ import annotations

from pathlib import Path

TYPE_CHECKING = False  # typing costs every process ~2 ms to import; annotations are strings
if TYPE_CHECKING:
    from typing import Any

from aigenora.proto.choices import RoundChoices, spoken_list
from aigenora.proto.hooks import HookResult, ProtocolHooks
from aigenora.proto.options import option, script_option, seeded_rng
from aigenora.proto.rounds import ChoiceRounds

SIDES = ("heads", "tails")
KEYWORDS = {"heads": ["heads", "head"], "tails": ["tails", "tail"]}


class Hooks(RoundChoices, ChoiceRounds, ProtocolHooks):
    CHOICES = SIDES
    SUPPORTED_CONTROL_MODES = ("autonomous", "hybrid", "human")
    CHOICE_KEYWORDS = KEYWORDS
    DECISION_SCHEMA = {"match_key": "round", "value_field": "choice", "choices": KEYWORDS,
                       "strategy_field": "fixed"}

    def proto_init(self, options, role, args, state_dir: Path, decision_config: dict[str, Any] | None = None):
        super().proto_init(options, role, args, state_dir, decision_config)
        self.best_of = option(options, "best_of", 3, int)
        self.rounds_to_win = self.best_of // 2 + 1
        self.script = script_option(options, "moves", SIDES, noun="call", role=role)
        self.rng = seeded_rng(options, role)
        self.wins = {"host": 0, "guest": 0}
        self._publish_format()

    def _publish_format(self) -> None:
        self.snapshot.update(score=dict(self.wins), round=1, best_of=self.best_of,
                             rounds_to_win=self.rounds_to_win, legal=list(SIDES))

    def proto_host_metadata(self):
        return ("Coin Flip", "game,coin-flip", "supply", {"best_of": self.best_of})

    def proto_guest_join_message(self):
        return {"action": "join", "best_of": self.best_of}

    def proto_host_handle_join(self, msg):
        self.snapshot.update(phase="playing")
        return HookResult({"action": "ready", "best_of": self.best_of,
                           "rounds_to_win": self.rounds_to_win})

    def proto_guest_handle_ready(self, msg):
        self.best_of, self.rounds_to_win = msg["best_of"], msg["rounds_to_win"]
        self._publish_format()
        self.snapshot.update(phase="playing")

    def proto_round_value(self, round_index: int, state: dict) -> str:
        return self.decide_round(round_index, SIDES, self.script, lambda: self.rng.choice(SIDES))

    def proto_round_judge(self, round_index, host_value, guest_value, state):
        winner = "guest" if guest_value == host_value else "host"
        self.wins[winner] += 1
        over = self.wins[winner] >= self.rounds_to_win
        result = {"action": "round_result", "round": round_index, "host_choice": host_value,
                  "guest_choice": guest_value, "round_winner": winner,
                  "host_wins": self.wins["host"], "guest_wins": self.wins["guest"],
                  "game_over": over, "game_winner": winner if over else "none"}
        self.record_round(result)
        return HookResult(result, completed=over)

    def describe_round(self, result: dict) -> str:
        outcome = "match" if result["host_choice"] == result["guest_choice"] else "no match"
        return (f"Flip {result['round'] + 1}: host {result['host_choice']}, guest calls "
                f"{result['guest_choice']} ({outcome}) -> {result['round_winner']} "
                f"(score {result['host_wins']}-{result['guest_wins']})")

    def proto_display(self, msg, direction):
        """The flip, and while the match goes on what the next flip asks for."""
        text = super().proto_display(msg, direction)
        if text is not None and not msg["game_over"]:
            text += f"\nnext flip: {spoken_list(SIDES)}"
        return text
