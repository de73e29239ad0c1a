"""Decision and strategy helpers every hooks object inherits: hybrid windows (never blocking
unless min_think_seconds > 0), strict human windows, timing in the snapshot, strategy feedback,
whisper overrides and the policy extension points."""
from __future__ import annotations

import time

TYPE_CHECKING = False  # typing costs every process ~2 ms to import; annotations are strings
if TYPE_CHECKING:
    from typing import Any

from aigenora.proto import policy_materializer
from aigenora.proto.decision_bus import DecisionBus, DecisionTimeoutError
from aigenora.proto.events import EventBus
from aigenora.proto.files import any_present, read_jsonl, state_file, write_now
from aigenora.proto.intervention_intent import InterventionIntentStore
from aigenora.proto.sdk import StrategyStore
from aigenora.proto.whisper_bridge import parse_whisper_to_command


class InvalidHumanDecisionError(ValueError):
    """A human submitted a decision that is not a legal move for the local side."""


class DecisionCancelledError(DecisionTimeoutError):
    """The session ended while a decision window was open."""


class DecisionWindows:
    """Mixin for ProtocolHooks; relies on the attributes set by its proto_init."""

    # -- timing ----------------------------------------------------------------------------

    @property
    def timing_enabled(self) -> bool:
        return self.timing is not None and self.timing.get("mode") != "none"

    def _update_timing_snapshot(self, match_key: str, match_value: Any, release_at: float,
                                deadline_at: float, phase: str = "waiting") -> None:
        """Publish a window's monotonic release/deadline (and wall-clock equivalents)."""
        mono, wall = time.monotonic(), time.time()
        self.snapshot.update(timing={
            "match_key": match_key,
            "match_value": match_value,
            "release_at": release_at,
            "deadline_at": deadline_at,
            "release_at_epoch": wall + max(0.0, release_at - mono),
            "deadline_at_epoch": wall + max(0.0, deadline_at - mono),
            "phase": phase,
        })

    def _clear_timing_snapshot(self) -> None:
        """Empty the snapshot's `timing` object once the window is over."""
        snapshot = self.snapshot.read()
        snapshot["timing"] = {}
        self.snapshot.write(snapshot)

    def _think_bounds(self) -> tuple[float, float]:
        """(min, max) seconds for a human window: options first, then spec timing, then the bus."""
        timing = self.timing if self.timing_enabled else {}
        min_think = float(self.options.get("min_think_seconds", timing.get("min_think_seconds", 0)) or 0)
        max_default = timing.get("max_think_seconds", self.bus.timeout)
        max_think = float(self.options.get("max_think_seconds", max_default) or self.bus.timeout)
        return min_think, max(max_think, min_think)

    # -- windows ---------------------------------------------------------------------------

    def _await_human_decision(self, match_key: str, match_value: Any) -> dict:
        """Hold a strict human window and return the submitted decision; no automatic fallback
        (DecisionTimeoutError at the deadline). Legality checks stay with the protocol."""
        if self.control_mode != "human" or self.bus is None:
            raise RuntimeError("strict human decision requested outside human control mode")
        write_now(self.snapshot.path)  # whoever decides sees the state as it is now
        window = self._desk_window("human", match_key, match_value)
        if window is not None:
            return self._await_desk(window, match_key, match_value)
        min_think, max_think = self._think_bounds()
        now = time.monotonic()
        release_at, deadline_at = now + min_think, now + max_think
        self._update_timing_snapshot(match_key, match_value, release_at, deadline_at, "waiting")
        try:
            return self.bus.await_latest_decision(
                match_key=match_key, match_value=match_value,
                release_at=release_at, deadline_at=deadline_at, fallback_value=None,
            )
        finally:
            self._clear_timing_snapshot()

    def _reject_human_decision(self, match_key: str, match_value: Any, decision: Any,
                               reason: str = "invalid") -> None:
        """Record the rejected submission and raise InvalidHumanDecisionError."""
        desk = getattr(self, "_aigenora_desk", None)
        if desk is not None:
            desk.rejected(match_key, match_value, reason)
        EventBus(self.state_dir).emit("human_decision_failed", data={
            "match_key": match_key, "match_value": match_value, "reason": reason, "decision": decision,
        })
        raise InvalidHumanDecisionError(f"invalid human decision for {match_key}={match_value}: {reason}")

    def _consume_hybrid(self, match_key: str, match_value: Any) -> dict | None:
        """Hybrid window: the best decision already submitted for this window, else None so the
        caller plays its automatic choice. Waits only while options.min_think_seconds > 0."""
        if self.bus is None:
            return None
        if self._desk_registered():
            if self._window_inputs_may_exist():
                self._materialize_pending_intents(match_key, match_value)
                self._materialize_active_policy(match_key, match_value)
            intended = getattr(self, "_intended", None)
            intended = intended[1] if intended and intended[0] == match_value else None
            desk = self._desk_window("hybrid", match_key, match_value, intended=intended)
            if desk is not None:
                if desk.get("closed"):
                    return None
                result = self._aigenora_desk.wait()
                return result.get("decision") if result.get("status") == "decided" else None
        events = EventBus(self.state_dir)
        window = {"match_key": match_key, "match_value": match_value}
        release_at = time.monotonic()
        deadline_at = release_at + float(self.options.get("min_think_seconds", 0) or 0)
        self.bus.publish_state({
            **window, "mode": "hybrid", "release_at": release_at, "deadline_at": deadline_at,
            "waiting_for": "decision",
        })
        events.emit("local_decision_window_started", data={
            **window, "mode": "hybrid", "release_at": release_at, "deadline_at": deadline_at,
        })
        if deadline_at > release_at or self._window_inputs_may_exist():
            self._materialize_pending_intents(match_key, match_value)
            self._materialize_active_policy(match_key, match_value)
            decision = self._await_hybrid_decision(match_key, match_value, deadline_at)
            if decision is not None:
                self.bus.finalize_window(match_key, match_value, "consumed")
                events.emit("local_decision_consumed", data={
                    **window, "decision": decision, "origin": (decision.get("_meta") or {}).get("origin"),
                })
                return decision
        self.bus.finalize_window(match_key, match_value, "fallback")
        events.emit("local_decision_fallback", data={**window, "reason": "no_decision"})
        return None

    # -- the engine's desk (inside the binary) ------------------------------------------------

    def _desk_registered(self) -> bool:
        """Whether the engine handed this side a desk (set on the hooks before proto_init)."""
        return getattr(self, "_aigenora_desk", None) is not None

    def _desk_window(self, mode: str, match_key: str, match_value: Any, intended: Any = None) -> dict | None:
        """Open a window on the engine's desk: None without one (a plain interpreter), else
        the window, or {"closed": True} when no window may open (the game is over)."""
        desk = getattr(self, "_aigenora_desk", None)
        if desk is None:
            return None
        schema = self.get_decision_schema() or {}
        field = schema.get("value_field") or "choice"
        listed = None
        setup = match_key == schema.get("setup_match_key")
        if setup:
            field = schema.get("setup_value_field") or field
        else:
            choices = schema.get("choices")
            if isinstance(choices, (dict, list, tuple)):
                listed = list(choices)
        bounds = None
        narrowed = getattr(self, "decision_choices", None)
        if callable(narrowed):
            found = narrowed(match_key, match_value)
            if isinstance(found, dict):
                bounds = found
            elif isinstance(found, (list, tuple)):
                listed = list(found)
        return desk.open({
            "mode": mode, "match_key": match_key, "match_value": match_value,
            "value_field": field, "listed": listed, "bounds": bounds,
            "numeric": bool(schema.get("numeric")) or setup, "intended": intended,
        })

    def _await_desk(self, window: dict, match_key: str, match_value: Any) -> dict:
        """Wait on the desk's human window; the timing snapshot shows its deadline meanwhile."""
        if window.get("closed"):
            raise DecisionCancelledError(f"no decision window for {match_key}={match_value}: the session is over")
        now, wall = time.monotonic(), time.time()
        deadline = now + max(0.0, float(window["deadline_at"]) - wall)
        self._update_timing_snapshot(match_key, match_value, now, deadline, "waiting")
        write_now(self.snapshot.path)
        try:
            result = self._aigenora_desk.wait()
        finally:
            self._clear_timing_snapshot()
        if result.get("status") == "decided":
            return result["decision"]
        if result.get("status") == "cancelled":
            raise DecisionCancelledError(f"the session ended while waiting for {match_key}={match_value}")
        raise DecisionTimeoutError(f"Human decision timed out waiting for {match_key}={match_value}")

    def _await_hybrid_decision(self, match_key: str, match_value: Any, deadline_at: float) -> dict | None:
        """The best decision submitted for the window, polling until `deadline_at`."""
        consumer = f"hybrid:{self.role}"
        poll = getattr(self.bus, "POLL_INTERVAL", 0.2)
        while True:
            decision = self.bus.consume_latest_for_match(match_key, match_value, consumer_id=consumer)
            if decision is not None or time.monotonic() >= deadline_at:
                return decision
            time.sleep(poll)

    def _window_inputs_may_exist(self) -> bool:
        """Whether a window could find a queued intent, a policy/script strategy or a submitted
        decision. False only when the SDK's own stores and steps are in use and none of the
        files they read exists (intervention_intents.jsonl, strategy.json,
        decision/decisions.jsonl): each step would find nothing, so a window with no time to
        wait skips them (three file reads and a score of calls, every round)."""
        steps = type(self)
        if (type(self.bus) is not DecisionBus or type(self.strategy) is not StrategyStore
                or steps._materialize_pending_intents is not DecisionWindows._materialize_pending_intents
                or steps._materialize_active_policy is not DecisionWindows._materialize_active_policy):
            return True
        return any_present((state_file(self.state_dir, InterventionIntentStore.FILE_NAME),
                            self.strategy.path, self.bus.decisions_file))

    def _materialize_pending_intents(self, match_key: str, match_value: Any) -> None:
        try:
            policy_materializer.materialize_pending_intents(self, match_key, match_value)
        except Exception:  # noqa: BLE001 - intents are advisory; the game goes on
            pass

    def _materialize_active_policy(self, match_key: str, match_value: Any) -> None:
        try:
            policy_materializer.materialize_active_policy(self, match_key, match_value)
        except Exception:  # noqa: BLE001 - a failing policy falls back to the automatic choice
            pass

    # -- strategy feedback and whispers ----------------------------------------------------

    def _emit_strategy_applied(self, round_index: int, strategy: dict | None, result: Any) -> None:
        """Tell observers which strategy produced this move (None = the default)."""
        self._intended = (round_index, result)
        try:
            EventBus(self.state_dir).emit("strategy_applied", {
                "round": round_index, "strategy": strategy or {}, "result": result,
            })
        except Exception:  # noqa: BLE001 - feedback only
            pass

    def _resolve_whisper_override(self, match_key: str, match_value: Any) -> tuple[Any, dict] | None:
        """A fixed move from strategy.operator_hint, as (value, parsed command), or None."""
        try:
            hint = (self.strategy.read() or {}).get("operator_hint")
        except Exception:  # noqa: BLE001 - an unreadable strategy means no hint
            return None
        if not isinstance(hint, str) or not hint.strip():
            return None
        command = parse_whisper_to_command(
            hint, self.CHOICE_KEYWORDS, match_key=match_key, match_value=match_value
        )
        if command is None or command.get("type") != "strategy":
            return None
        fixed = (command.get("payload") or {}).get("fixed")
        return None if fixed is None else (fixed, command)

    def _read_last_details(self, n: int = 1) -> list[dict]:
        """The last `n` records of details.jsonl (fewer if the file is shorter)."""
        records = read_jsonl(self.state_dir / "details.jsonl")
        return records[-n:] if n > 0 else records

    # -- policy extension points (protocols override) --------------------------------------

    def get_decision_schema(self) -> dict:
        """DECISION_SCHEMA, else one derived from CHOICE_KEYWORDS, else {}."""
        if self.DECISION_SCHEMA:
            return self.DECISION_SCHEMA
        if self.CHOICE_KEYWORDS:
            return {"match_key": "round", "value_field": "choice", "choices": self.CHOICE_KEYWORDS}
        return {}

    def build_decision_context(self, match_key: str, match_value: Any) -> dict:
        """The history/legal moves a policy needs; unsupported unless the protocol provides it."""
        return {"supported": False, "reason": "unsupported_context"}

    def run_policy(self, strategy: dict, context: dict) -> dict:
        """Compute a decision for a named policy; unsupported unless the protocol provides it."""
        return {"ok": False, "reason": "unsupported_policy"}
