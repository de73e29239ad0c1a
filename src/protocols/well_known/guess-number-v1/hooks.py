"""Guess Number (the network's guess-number-v1 contract) for the session_loop engine: the host
keeps a secret number in [range_min, range_max] (default 1 to 100), the guest guesses, and
the host answers each wrong guess with a hint (higher / lower). A right guess wins for the
guest; when `max_attempts` (default 7) guesses are used up the host wins. game_over reveals
the secret, and the guest then checks that every hint it got agrees with it.

The host's secret: options `secret`, a person's decision in human control
({"setup": 0, "secret": 42}), else random. The guest bisects the range still possible;
`moves` (e.g. "50 25", also `guest_moves`) scripts its guesses, `seed` makes random play
reproducible. Guess decisions: {"attempt": 1, "number": 50}."""
from __future__ import annotations

from pathlib import Path

TYPE_CHECKING = False  # typing costs every process ~2 ms to import; annotations are strings
if TYPE_CHECKING:
    from typing import Any

from aigenora.proto.choices import RoundChoices
from aigenora.proto.hooks import HookResult, ProtocolHooks
from aigenora.proto.options import option, seeded_rng, side_option


class Hooks(RoundChoices, ProtocolHooks):
    SUPPORTED_CONTROL_MODES = ("autonomous", "hybrid", "human")
    DECISION_SCHEMA = {"match_key": "attempt", "value_field": "number", "numeric": True,
                       "strategy_field": "number"}

    def proto_init(self, options, role, args, state_dir: Path, decision_config: dict[str, Any] | None = None):
        super().proto_init(options, role, args, state_dir, decision_config)
        self.range_min = option(options, "range_min", 1, int)
        self.range_max = option(options, "range_max", 100, int)
        if self.range_min > self.range_max:
            raise ValueError("range_min must not be greater than range_max")
        self.max_attempts = option(options, "max_attempts", 7, int)
        self.script = [int(word) for word in str(side_option(options, role, "moves", "")).replace(",", " ").split()]
        self.rng = seeded_rng(options, role)
        self.attempts = 0
        self.low, self.high = self.range_min, self.range_max
        self.hints: list[tuple[int, str]] = []
        self.secret = self._choose_secret(options) if role == "host" else None
        self._publish()

    def _choose_secret(self, options: dict) -> int:
        secret = options.get("secret")
        if secret is None and self.control_mode == "human":
            self.snapshot.set_phase("setup_required", summary="Choose the secret number",
                                    range_min=self.range_min, range_max=self.range_max)
            decision = self._await_human_decision("setup", 0)
            secret = decision.get("secret")
            if not isinstance(secret, int) or not self.range_min <= secret <= self.range_max:
                self._reject_human_decision("setup", 0, decision, f"secret must be an integer "
                                            f"from {self.range_min} to {self.range_max}")
        elif secret is None:
            secret = self.rng.randint(self.range_min, self.range_max)
        if not self.range_min <= secret <= self.range_max:
            raise ValueError(f"secret must lie in [{self.range_min}, {self.range_max}]")
        return secret

    def _publish(self) -> None:
        self.snapshot.update(range_min=self.range_min, range_max=self.range_max,
                             max_attempts=self.max_attempts, attempts=self.attempts,
                             low=self.low, high=self.high)

    def proto_host_metadata(self):
        return ("Guess Number", "game,guess-number", "supply", {
            "range_min": self.range_min, "range_max": self.range_max,
            "max_attempts": self.max_attempts})

    # -- handshake ----------------------------------------------------------------------

    def proto_guest_join_message(self):
        return {"action": "join", "max_attempts": self.max_attempts}

    def proto_host_handle_join(self, msg):
        self.snapshot.update(phase="playing")
        return HookResult({"action": "ready", "range_min": self.range_min,
                           "range_max": self.range_max, "max_attempts": self.max_attempts})

    def proto_guest_handle_ready(self, msg):
        self.range_min, self.range_max = msg["range_min"], msg["range_max"]
        self.max_attempts = msg["max_attempts"]
        self.low, self.high = self.range_min, self.range_max
        self._publish()
        self.snapshot.update(phase="playing")

    # -- the host: keeper of the secret ---------------------------------------------------

    def proto_host_handle(self, msg):
        if msg.get("action") != "guess" or msg["attempt"] != self.attempts + 1:
            return self._stop("unexpected_action")
        number = msg["number"]
        if not self.range_min <= number <= self.range_max:
            return self._stop("invalid_guess")
        self.attempts += 1
        if number == self.secret or self.attempts >= self.max_attempts:
            winner = "guest" if number == self.secret else "host"
            self._record(number, "correct" if winner == "guest" else self._hint(number), winner)
            return HookResult({"action": "game_over", "winner": winner, "secret_number": self.secret,
                               "total_attempts": self.attempts}, completed=True)
        result = self._hint(number)
        self._record(number, result, None)
        return HookResult({"action": "hint", "attempt": msg["attempt"], "result": result,
                           "attempts_used": self.attempts})

    def _hint(self, number: int) -> str:
        return "higher" if number < self.secret else "lower"

    def _stop(self, reason: str) -> HookResult:
        self.snapshot.set_phase("aborted", summary=f"refused the guess: {reason}")
        return HookResult({"action": "error", "reason": reason}, abort=True)

    # -- the guest: the guesser -----------------------------------------------------------

    def proto_guest_first_action(self):
        return self._guess()

    def proto_guest_handle(self, msg):
        action = msg.get("action")
        if action == "hint":
            self.attempts = msg["attempts_used"]
            if msg["result"] == "higher":
                self.low = max(self.low, self.last_guess + 1)
            elif msg["result"] == "lower":
                self.high = min(self.high, self.last_guess - 1)
            self.hints.append((self.last_guess, msg["result"]))
            self._record(self.last_guess, msg["result"], None)
            return HookResult(self._guess())
        if action == "game_over":
            self.attempts = msg["total_attempts"]
            self._check_hints(msg["secret_number"])
            self._record(self.last_guess, "correct" if msg["winner"] == "guest" else "missed", msg["winner"])
            return HookResult(completed=True)
        self.snapshot.set_phase("aborted", summary=f"the host stopped: {msg.get('reason')}")
        return HookResult(abort=True)

    def _guess(self) -> dict:
        attempt = self.attempts + 1
        low, high = (self.low, self.high) if self.low <= self.high else (self.range_min, self.range_max)
        legal = range(self.range_min, self.range_max + 1)
        number = self.decide_round(attempt, legal, self.script, lambda: (low + high) // 2,
                                   f"number must be an integer from {self.range_min} to {self.range_max}",
                                   step=attempt - 1)
        self.last_guess = number
        self.snapshot.update(legal={"min": self.range_min, "max": self.range_max})
        return {"action": "guess", "attempt": attempt, "number": number}

    def _check_hints(self, secret: int) -> None:
        """The contract's cheat detection: every hint must agree with the revealed secret."""
        lies = [(number, hint) for number, hint in self.hints
                if hint != ("higher" if number < secret else "lower")]
        self.details.append(type="hint_check", secret_number=secret, consistent=not lies,
                            contradicting=[{"number": n, "hint": h} for n, h in lies],
                            summary="every hint agrees with the secret" if not lies
                            else f"{len(lies)} hint(s) contradict the secret {secret}")
        self.snapshot.update(hints_consistent=not lies)
        if lies:
            print(f"warning: the host's hints contradict its secret {secret}: {lies}", flush=True)

    # -- records and display --------------------------------------------------------------

    def _record(self, number: int, result: str, winner: str | None) -> None:
        self.details.append(type="guess", attempt=self.attempts, number=number, result=result,
                            game_over=winner is not None, winner=winner or "none",
                            summary=f"#{self.attempts}: {number} -> {result}")
        summary = (f"Game over: {winner} wins" if winner else
                   f"#{self.attempts}: {number} -> {result}, range [{self.low}, {self.high}]")
        self._publish()
        self.snapshot.update(phase="game_over" if winner else "playing", last_event={
            "summary": summary, "structured": {"attempt": self.attempts, "number": number,
                                               "result": result, "winner": winner or "none"}})

    def proto_display(self, msg, direction):
        action = msg.get("action")
        if action == "guess":
            return f"Guess #{msg['attempt']}: {msg['number']}"
        if action == "hint":
            text = f"  -> {msg['result']} ({msg['attempts_used']} of {self.max_attempts} used)"
            if self.role == "guest":
                text += f"\nyour next guess: {self.range_min} to {self.range_max} (still possible: {self._window_after(msg)})"
            return text
        if action == "game_over":
            return f"Game over: {msg['winner']} wins, the secret was {msg['secret_number']}"
        if action == "error":
            return f"refused: {msg['reason']}"
        return None

    def _window_after(self, hint: dict) -> str:
        low, high = self.low, self.high
        if hint["result"] == "higher":
            low = max(low, self.last_guess + 1)
        elif hint["result"] == "lower":
            high = min(high, self.last_guess - 1)
        return f"{low} to {high}" if low <= high else "nothing (the hints contradict each other)"
