"""Rock-Paper-Scissors (the network's rps-v1 contract) for the simultaneous_round engine: each
round both sides commit to a move and reveal it (the engine runs the commit-reveal), and the
host judges: rock beats scissors, scissors beats paper, paper beats rock.

The match format is the host's, sent in ready: `termination` first_to_win (the first side
with `rounds_to_win` round wins; draws count for nobody) or fixed_rounds (exactly `best_of`
rounds, more wins takes it, equal wins draw). `rounds_to_win` defaults to a majority of
`best_of` (default 3). `round_delay_seconds` pauses the guest before every round after the
first. Autonomous moves are uniformly random (nothing to exploit); `moves` (e.g. "rock,paper",
also `host_moves`/`guest_moves`) scripts them, `seed` makes them reproducible. Decisions:
{"round": 0, "choice": "paper"}."""
from __future__ import annotations

import time
from pathlib import Path

TYPE_CHECKING = False  # typing costs every process ~2 ms to import; annotations are strings
if TYPE_CHECKING:
    from typing import Any

from aigenora.proto.choices import RoundChoices, spoken_list
from aigenora.proto.hooks import HookResult, ProtocolHooks
from aigenora.proto.options import option, script_option, seeded_rng
from aigenora.proto.rounds import ChoiceRounds

MOVES = ("rock", "paper", "scissors")
BEATS = {"rock": "scissors", "scissors": "paper", "paper": "rock"}
KEYWORDS = {"rock": ["rock", "stone"], "paper": ["paper"], "scissors": ["scissors"]}


def round_winner(host: str, guest: str) -> str:
    if host == guest:
        return "draw"
    return "host" if BEATS[host] == guest else "guest"


class Hooks(RoundChoices, ChoiceRounds, ProtocolHooks):
    CHOICES = MOVES
    SUPPORTED_CONTROL_MODES = ("autonomous", "hybrid", "human")
    CHOICE_KEYWORDS = KEYWORDS
    DECISION_SCHEMA = {"match_key": "round", "value_field": "choice", "choices": KEYWORDS,
                       "strategy_field": "fixed"}

    def proto_init(self, options, role, args, state_dir: Path, decision_config: dict[str, Any] | None = None):
        super().proto_init(options, role, args, state_dir, decision_config)
        self.best_of = option(options, "best_of", 3, int)
        self.termination = option(options, "termination", "first_to_win")
        self.rounds_to_win = option(options, "rounds_to_win", self.best_of // 2 + 1, int)
        self.round_delay = option(options, "round_delay_seconds", 0, int)
        self.script = script_option(options, "moves", MOVES, role=role)
        self.rng = seeded_rng(options, role)
        self.wins = {"host": 0, "guest": 0}
        self._publish_format()

    def _publish_format(self) -> None:
        self.snapshot.update(score=dict(self.wins), round=1, best_of=self.best_of,
                             rounds_to_win=self.rounds_to_win, termination=self.termination,
                             legal=list(MOVES))

    def proto_host_metadata(self):
        return ("Rock-Paper-Scissors", "game,rps", "supply", {
            "best_of": self.best_of, "termination": self.termination,
            "round_delay_seconds": self.round_delay})

    # -- handshake ----------------------------------------------------------------------

    def proto_guest_join_message(self):
        return {"action": "join", "best_of": self.best_of}

    def proto_host_handle_join(self, msg):
        self.snapshot.update(phase="playing")
        return HookResult({"action": "ready", "best_of": self.best_of,
                           "rounds_to_win": self.rounds_to_win, "termination": self.termination,
                           "round_delay_seconds": self.round_delay})

    def proto_guest_handle_ready(self, msg):
        self.best_of, self.rounds_to_win = msg["best_of"], msg["rounds_to_win"]
        self.termination, self.round_delay = msg["termination"], msg["round_delay_seconds"]
        self._publish_format()
        self.snapshot.update(phase="playing")

    # -- moves and verdicts ---------------------------------------------------------------

    def proto_round_value(self, round_index: int, state: dict) -> str:
        if self.role == "guest" and round_index > 0 and self.round_delay > 0:
            time.sleep(self.round_delay)
        return self.decide_round(round_index, MOVES, self.script, lambda: self.rng.choice(MOVES))

    def proto_round_judge(self, round_index, host_value, guest_value, state):
        winner = round_winner(host_value, guest_value)
        if winner != "draw":
            self.wins[winner] += 1
        over, game_winner = self._verdict(round_index + 1)
        result = {"action": "round_result", "round": round_index, "host_choice": host_value,
                  "guest_choice": guest_value, "round_winner": winner,
                  "host_wins": self.wins["host"], "guest_wins": self.wins["guest"],
                  "game_over": over, "game_winner": game_winner}
        self.record_round(result)
        return HookResult(result, completed=over)

    def _verdict(self, played: int) -> tuple[bool, str]:
        host, guest = self.wins["host"], self.wins["guest"]
        if self.termination == "first_to_win":
            if max(host, guest) < self.rounds_to_win:
                return False, "none"
            return True, "host" if host > guest else "guest"
        if played < self.best_of:
            return False, "none"
        return True, "host" if host > guest else "guest" if guest > host else "draw"

    def describe_round(self, result: dict) -> str:
        return (f"Round {result['round'] + 1}: host {result['host_choice']} vs guest "
                f"{result['guest_choice']} -> {result['round_winner']} "
                f"(score {result['host_wins']}-{result['guest_wins']})")

    def proto_display(self, msg, direction):
        """The round, and while the match goes on what the next round asks for."""
        text = super().proto_display(msg, direction)
        if text is not None and not msg["game_over"]:
            text += f"\nnext round: {spoken_list(MOVES)}"
        return text
