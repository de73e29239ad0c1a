"""Choosing this side's value for a decision window (e.g. a round's move) from a fixed set of
legal values, alike in every control mode. An extension beyond the reference SDK's API; it
calls only hooks methods the reference also has, so it runs on top of either SDK."""
from __future__ import annotations

TYPE_CHECKING = False  # typing costs every process ~2 ms to import; annotations are strings
if TYPE_CHECKING:
    from typing import Any, Callable, Sequence


def is_legal(value: Any, legal: Sequence[Any]) -> bool:
    """Whether `value` is one of `legal`; a boolean never passes for 0 or 1."""
    return value in legal and not isinstance(value, bool)


def strategy_value(strategy: dict, field: str, index: int, legal: Sequence[Any]) -> Any:
    """The value strategy.json asks for in window `index`: mode "fixed" plays strategy[field],
    mode "seq" cycles through the legal entries of strategy["sequence"]; None otherwise."""
    mode = strategy.get("mode")
    if mode == "fixed" and is_legal(strategy.get(field), legal):
        return strategy[field]
    if mode == "seq":
        sequence = [value for value in strategy.get("sequence") or [] if is_legal(value, legal)]
        if sequence:
            return sequence[index % len(sequence)]
    return None


def spoken_list(values: Sequence[Any]) -> str:
    """The values as prose: "rock, paper or scissors"."""
    words = [str(value) for value in values]
    return " or ".join(filter(None, (", ".join(words[:-1]), words[-1])))


class RoundChoices:
    """Mixin for a ProtocolHooks subclass (`class Hooks(RoundChoices, ProtocolHooks)`) whose
    DECISION_SCHEMA names the decision: match_key (default "round"), value_field (default
    "choice") and strategy_field (default "fixed")."""

    def _decision_names(self) -> tuple[str, str, str]:
        """(match_key, value_field, strategy_field) of the decision schema."""
        schema = self.get_decision_schema()
        return (schema.get("match_key", "round"), schema.get("value_field", "choice"),
                schema.get("strategy_field", "fixed"))

    def decide_round(self, index: int, legal: Sequence[Any], script: Sequence[Any],
                     pick: Callable[[], Any], reason: str | None = None,
                     step: int | None = None) -> Any:
        """This side's value for window `index`. Human control: the submitted decision, which
        must be legal (else `_reject_human_decision` with `reason`). Otherwise the automatic
        value, which in hybrid control a legal decision already submitted replaces. `step`
        (default `index`) is this side's position in a script or strategy sequence, for games
        where the window key counts both sides' moves."""
        key, field, _ = self._decision_names()
        if self.control_mode == "human":
            decision = self._await_human_decision(key, index)
            if not is_legal(decision.get(field), legal):
                self._reject_human_decision(key, index, decision,
                                            reason or f"{field} must be {spoken_list(legal)}")
            return decision[field]
        value = self._automatic_round_value(index, legal, script, pick,
                                            index if step is None else step)
        if self.bus is not None and self.decision_mode == "auto":
            decision = self._consume_hybrid(key, index)
            if decision and is_legal(decision.get(field), legal):
                return decision[field]
        return value

    def _automatic_round_value(self, index: int, legal: Sequence[Any], script: Sequence[Any],
                               pick: Callable[[], Any], step: int) -> Any:
        """The first legal one of: the script (cycled by `step`), strategy.json, the coach
        hint in strategy.operator_hint (only with CHOICE_KEYWORDS to parse it); else `pick()`.
        Announced by a strategy_applied event."""
        if script and is_legal(script[step % len(script)], legal):
            value = script[step % len(script)]
            self._emit_strategy_applied(index, {"mode": "script"}, value)
            return value
        key, _, strategy_field = self._decision_names()
        strategy = self.strategy.read()
        value = strategy_value(strategy, strategy_field, step, legal)
        if value is None and self.CHOICE_KEYWORDS:
            override = self._resolve_whisper_override(key, index)
            if override and is_legal(override[0], legal):
                strategy, value = override[1], override[0]
        if value is None:
            value = pick()
        self._emit_strategy_applied(index, strategy or None, value)
        return value
