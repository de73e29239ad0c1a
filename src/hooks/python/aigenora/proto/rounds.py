"""The guest's and the display's side of the round_result messages a simultaneous_round host
sends. An extension beyond the reference SDK's API; it uses only what the reference also has,
so it runs on top of either SDK."""
from __future__ import annotations

TYPE_CHECKING = False  # typing costs every process ~2 ms to import; annotations are strings
if TYPE_CHECKING:
    from typing import Any

from aigenora.proto.hooks import HookResult

try:
    from aigenora.proto.hooks import displays_only
except ImportError:  # the reference's SDK: every message is displayed through the method
    def displays_only(*actions):
        return lambda method: method


class RoundResults:
    """Mixin for a ProtocolHooks subclass whose host judges each round into a round_result
    message carrying game_over and game_winner. The protocol provides
    `apply_round_result(result)` (the guest takes in the host's verdict) and
    `describe_round(result)` (one round as text); GAME_OVER labels the final line."""

    GAME_OVER = "Match over"

    def proto_guest_handle(self, msg: dict) -> HookResult:
        """The guest applies every round_result; other messages change nothing."""
        if msg.get("action") == "round_result":
            self.apply_round_result(msg)
        return HookResult()

    @displays_only("round_result")
    def proto_display(self, msg: dict, direction: str) -> Any:
        """A round_result as `describe_round`, and "<GAME_OVER>: <winner>" after the last one;
        None for other messages."""
        if msg.get("action") != "round_result":
            return None
        text = self.describe_round(msg)
        if msg["game_over"]:
            text += f"\n{self.GAME_OVER}: {msg['game_winner']}"
        return text


class ChoiceRounds(RoundResults):
    """RoundResults for contracts whose round_result names both choices and the running wins
    (host_choice, guest_choice, round_winner, host_wins, guest_wins, game_over, game_winner).
    Keeps `self.wins`, logs each round to details.jsonl and publishes the score, the round
    and (while the match goes on) CHOICES as the legal moves; the protocol provides
    `describe_round(result)`."""

    CHOICES: tuple = ()

    def apply_round_result(self, result: dict) -> None:
        self.wins = {"host": result["host_wins"], "guest": result["guest_wins"]}
        self.record_round(result)

    def record_round(self, result: dict) -> None:
        """Log and publish a judged round (the host calls it for its own verdicts)."""
        number, over = result["round"] + 1, result["game_over"]
        self.details.append(
            type="round_result", round=number, host_choice=result["host_choice"],
            guest_choice=result["guest_choice"], winner=result["round_winner"],
            host_wins=result["host_wins"], guest_wins=result["guest_wins"], game_over=over,
            game_winner=result["game_winner"], summary=self.describe_round(result))
        self.snapshot.update(
            phase="game_over" if over else "playing", round=number if over else number + 1,
            score={"host": result["host_wins"], "guest": result["guest_wins"]},
            legal=[] if over else list(self.CHOICES),
            last_event={"summary": self.describe_round(result), "structured": {
                "round": number, "winner": result["round_winner"], "game_over": over,
                "game_winner": result["game_winner"]}})
