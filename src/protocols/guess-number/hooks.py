"""Guess-the-number hooks for the session_loop engine: the host keeps the secret and answers
each guess with higher / lower / correct; the guest narrows the range (bisection by default)."""
from __future__ import annotations

from pathlib import Path

TYPE_CHECKING = False  # typing costs every process ~2 ms to import; annotations are strings
if TYPE_CHECKING:
    from typing import Any

from aigenora.proto.hooks import HookResult, ProtocolHooks
from aigenora.proto.options import option, seeded_rng


class Hooks(ProtocolHooks):
    SUPPORTED_CONTROL_MODES = ("autonomous", "hybrid", "human")
    DECISION_SCHEMA = {
        "match_key": "attempt",
        "value_field": "number",
        "numeric": True,
        "strategy_field": "number",
    }

    def proto_init(self, options, role, args, state_dir: Path, decision_config: dict[str, Any] | None = None):
        super().proto_init(options, role, args, state_dir, decision_config)
        self.range_min = option(options, "range_min", 1, int)
        self.range_max = option(options, "range_max", 100, int)
        if self.range_min > self.range_max:
            raise ValueError("range_min must not be greater than range_max")
        self.max_attempts = option(options, "max_attempts", 7, int)
        self.guess_strategy = option(options, "guess_strategy", "bisect")
        self.rng = seeded_rng(options, role)
        self.attempts = 0
        self.low, self.high = self.range_min, self.range_max
        self.secret = None
        if role == "host":
            self.secret = options.get("secret")
            if self.secret is None:
                self.secret = self.rng.randint(self.range_min, self.range_max)
            if not self.range_min <= self.secret <= self.range_max:
                raise ValueError(f"secret must lie in [{self.range_min}, {self.range_max}]")
        self._publish_range()

    def _publish_range(self) -> None:
        self.snapshot.update(
            range_min=self.range_min, range_max=self.range_max, max_attempts=self.max_attempts,
            attempts=self.attempts, low=self.low, high=self.high,
        )

    def proto_host_metadata(self):
        return ("Guess the Number", "game,guess-number", "supply", {
            "range_min": self.range_min, "range_max": self.range_max, "max_attempts": self.max_attempts,
        })

    # -- host: the referee ----------------------------------------------------------------

    def proto_host_handle_join(self, msg):
        self.snapshot.update(phase="playing")
        return HookResult({
            "action": "ready", "range_min": self.range_min, "range_max": self.range_max,
            "max_attempts": self.max_attempts,
        })

    def proto_host_handle(self, msg):
        if msg.get("action") != "guess":
            return HookResult({"action": "error", "reason": "unexpected_message"}, abort=True)
        if msg["attempt"] != self.attempts + 1:
            return HookResult({"action": "error", "reason": "wrong_attempt"}, abort=True)
        if not self.range_min <= msg["number"] <= self.range_max:
            return HookResult({"action": "error", "reason": "out_of_range"}, abort=True)
        self.attempts += 1
        number = msg["number"]
        result = "correct" if number == self.secret else "higher" if number < self.secret else "lower"
        over = result == "correct" or self.attempts >= self.max_attempts
        answer = {
            "action": "answer", "attempt": msg["attempt"], "result": result,
            "attempts_used": self.attempts, "game_over": over,
            "winner": ("guest" if result == "correct" else "host") if over else "none",
        }
        if over:
            answer["secret"] = self.secret
        self._record(number, answer)
        return HookResult(answer, completed=over)

    # -- guest: the guesser ---------------------------------------------------------------

    def proto_guest_handle_ready(self, msg):
        self.range_min, self.range_max = msg["range_min"], msg["range_max"]
        self.low, self.high = self.range_min, self.range_max
        self.max_attempts = msg["max_attempts"]
        self._publish_range()
        self.snapshot.update(phase="playing")

    def proto_guest_first_action(self):
        return self._guess()

    def proto_guest_handle(self, msg):
        if msg.get("action") != "answer":
            self.snapshot.set_phase("aborted", summary=f"host error: {msg.get('reason')}")
            return HookResult(abort=True)
        number = self.last_guess
        if msg["result"] == "higher":
            self.low = max(self.low, number + 1)
        elif msg["result"] == "lower":
            self.high = min(self.high, number - 1)
        self.attempts = msg["attempts_used"]
        self._record(number, msg)
        if msg["game_over"]:
            return HookResult(completed=True)
        return HookResult(self._guess())

    def _guess(self) -> dict:
        attempt = self.attempts + 1
        if self.control_mode == "human":
            number = self._human_guess(attempt)
        else:
            number = self._automatic_guess(attempt)
            if self.bus is not None and self.decision_mode == "auto":
                decision = self._consume_hybrid("attempt", attempt)
                chosen = (decision or {}).get("number")
                if isinstance(chosen, int) and not isinstance(chosen, bool):
                    number = max(self.range_min, min(self.range_max, chosen))
        self.last_guess = number
        return {"action": "guess", "attempt": attempt, "number": number}

    def _human_guess(self, attempt: int) -> int:
        decision = self._await_human_decision("attempt", attempt)
        number = decision.get("number")
        if not isinstance(number, int) or isinstance(number, bool):
            self._reject_human_decision("attempt", attempt, decision, "number must be an integer")
        if not self.range_min <= number <= self.range_max:
            self._reject_human_decision("attempt", attempt, decision,
                                        f"number must lie in [{self.range_min}, {self.range_max}]")
        return number

    def _automatic_guess(self, attempt: int) -> int:
        strategy = self.strategy.read()
        low, high = (self.low, self.high) if self.low <= self.high else (self.range_min, self.range_max)
        if strategy.get("mode") == "fixed" and isinstance(strategy.get("number"), int):
            number = strategy["number"]
        elif strategy.get("mode") == "seq" and strategy.get("sequence"):
            number = int(strategy["sequence"][(attempt - 1) % len(strategy["sequence"])])
        elif self.guess_strategy == "random":
            number = self.rng.randint(low, high)
        else:
            number = (low + high) // 2
        number = max(self.range_min, min(self.range_max, number))
        self._emit_strategy_applied(attempt, strategy or None, number)
        return number

    # -- records --------------------------------------------------------------------------

    def _record(self, number: int, answer: dict) -> None:
        self.details.append(
            type="answer", attempt=answer["attempt"], number=number, result=answer["result"],
            attempts_used=answer["attempts_used"], game_over=answer["game_over"],
            winner=answer["winner"],
            summary=f"#{answer['attempt']}: {number} -> {answer['result']}",
        )
        over = answer["game_over"]
        summary = (f"Game over: {answer['winner']} wins (secret {answer.get('secret')})" if over
                   else f"#{answer['attempt']}: {number} is too {'low' if answer['result'] == 'higher' else 'high'}")
        self.snapshot.update(
            phase="game_over" if over else "playing", attempts=answer["attempts_used"],
            low=self.low, high=self.high,
            last_event={"summary": summary, "structured": {
                "attempt": answer["attempt"], "number": number, "result": answer["result"],
                "game_over": over, "winner": answer["winner"],
            }},
        )

    def proto_display(self, msg, direction):
        if msg.get("action") == "guess":
            return f"Guess #{msg['attempt']}: {msg['number']}"
        if msg.get("action") == "answer":
            text = f"  -> {msg['result']} ({msg['attempts_used']} used)"
            if msg["game_over"]:
                text += f"\nGame over: {msg['winner']} wins, the secret was {msg['secret']}"
            return text
        return None
