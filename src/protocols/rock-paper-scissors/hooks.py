"""Rock-paper-scissors hooks for the simultaneous_round engine: each side picks a move (from
a `moves` script, strategy.json, a submitted decision or a seeded RNG) and the host judges.

Deterministic play: give each side `moves` (e.g. host "rock", guest "paper,scissors") or a
`seed`; with `termination: fixed_rounds` and `best_of: 99` that is a 99-round benchmark."""
from __future__ import annotations

from pathlib import Path

TYPE_CHECKING = False  # typing costs every process ~2 ms to import; annotations are strings
if TYPE_CHECKING:
    from typing import Any

from aigenora.proto.choices import RoundChoices
from aigenora.proto.hooks import HookResult, ProtocolHooks
from aigenora.proto.options import option, script_option, seeded_rng
from aigenora.proto.rounds import RoundResults

MOVES = ("rock", "paper", "scissors")
BEATS = {"rock": "scissors", "scissors": "paper", "paper": "rock"}
KEYWORDS = {
    "rock": ["rock", "石头"],
    "paper": ["paper", "布"],
    "scissors": ["scissors", "剪刀"],
}


def round_winner(host: str, guest: str) -> str:
    if host == guest:
        return "draw"
    return "host" if BEATS[host] == guest else "guest"


class Hooks(RoundChoices, RoundResults, ProtocolHooks):
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
        self.best_of = option(options, "best_of", 3, int)
        self.termination = option(options, "termination", "first_to_win")
        self.rounds_to_win = option(options, "rounds_to_win", self.best_of // 2 + 1, int)
        self.max_rounds = option(options, "max_rounds", 10 * self.best_of, int)
        self.script = script_option(options, "moves", MOVES)
        self.rng = seeded_rng(options, role)
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
        return self.decide_round(round_index, MOVES, self.script, lambda: self.rng.choice(MOVES))

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

    def apply_round_result(self, result: dict) -> None:
        self.wins = {"host": result["host_wins"], "guest": result["guest_wins"]}
        self._record(result)

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

    def describe_round(self, result: dict) -> str:
        return (f"Round {result['round'] + 1}: host {result['host_choice']} vs guest {result['guest_choice']}"
                f" -> {result['round_winner']} (score {result['host_wins']}-{result['guest_wins']})")
