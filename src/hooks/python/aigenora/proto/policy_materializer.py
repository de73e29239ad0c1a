"""When a decision window opens: turn queued one-shot intents and the standing policy/script
strategy into decisions in decision/decisions.jsonl (never overriding an explicit decision)."""
from __future__ import annotations

TYPE_CHECKING = False  # typing costs every process ~2 ms to import; annotations are strings
if TYPE_CHECKING:
    from typing import Any

from aigenora.proto.decide_gateway import submit_decision
from aigenora.proto.decision_bus import GENERATED_ORIGINS
from aigenora.proto.events import EventBus
from aigenora.proto.intervention_intent import InterventionIntentStore


def _explicit_decision_waiting(hooks: Any, match_key: str, match_value: Any) -> bool:
    """True when someone already submitted a non-generated decision for this window."""
    if hooks.bus is None:
        return False
    pending = hooks.bus.peek_latest_for_match(match_key, match_value)
    if pending is None:
        return False
    origin = (pending.get("_meta") or {}).get("origin")
    return origin not in GENERATED_ORIGINS + (None,)


def _run_strategy(hooks: Any, strategy: dict, context: dict, schema: dict) -> tuple[dict, str]:
    """Run a policy (the protocol's run_policy) or a script; returns (result, origin)."""
    if strategy.get("mode", "policy") == "script":
        # Imported here: it brings in subprocess, which most sessions never need.
        from aigenora.proto import script_runner

        result = script_runner.run_script(
            strategy, context, state_dir=str(hooks.state_dir), schema=schema,
            timeout_ms=int(strategy.get("timeout_ms", 1000)),
        )
        return result, "script_runner"
    return hooks.run_policy(strategy, context), "policy_runner"


def _align_window(decision: dict, schema: dict, match_key: str, match_value: Any) -> bool:
    """Fill in the window field of a generated decision; False if it names another window."""
    field = schema.get("match_key", match_key)
    if field not in decision:
        decision[field] = match_value
        return True
    return decision[field] == match_value


def materialize_active_policy(hooks: Any, match_key: str, match_value: Any) -> None:
    """A strategy with mode `policy` or `script` produces this window's decision."""
    strategy = hooks.strategy.read() or {}
    if strategy.get("mode") not in ("policy", "script"):
        return
    events = EventBus(hooks.state_dir)
    window = {"match_key": match_key, "match_value": match_value}
    if _explicit_decision_waiting(hooks, match_key, match_value):
        events.emit("policy_skipped", data={**window, "reason": "explicit_decision_present"})
        return
    schema = hooks.get_decision_schema()
    context = hooks.build_decision_context(match_key, match_value)
    if not context.get("supported"):
        events.emit("policy_failed", data={**window, "reason": "unsupported_context"})
        return
    result, origin = _run_strategy(hooks, strategy, context, schema)
    if not result.get("ok"):
        reason = result.get("reason", "unknown")
        kind = "policy_timeout" if reason == "policy_timeout" else "policy_failed"
        events.emit(kind, data={**window, "reason": reason, "script_id": strategy.get("script_id")})
        return
    decision = result.get("decision") or {}
    if not _align_window(decision, schema, match_key, match_value):
        events.emit("policy_failed", data={
            **window, "reason": "match_mismatch", "got": decision[schema.get("match_key", match_key)],
        })
        return
    meta = strategy.get("_meta", {})
    written = submit_decision(
        str(hooks.state_dir), decision, origin=origin, agent_id=meta.get("agent_id"),
        caused_by_whisper_id=meta.get("caused_by_whisper_id"), require_match_key=True,
    )
    if written.get("ok"):
        events.emit("policy_generated", data={
            **window, "decision": decision, "decision_id": written.get("decision_id"),
            "origin": origin, "reason": result.get("reason"),
        })
    else:
        events.emit("policy_failed", data={**window, "reason": written.get("reason") or "submit_failed"})


def materialize_pending_intents(hooks: Any, match_key: str, match_value: Any) -> None:
    """Every queued intent aimed at this window becomes a decision (or is marked failed)."""
    store = InterventionIntentStore(hooks.state_dir)
    for intent in store.pending_for_window(match_key, match_value):
        events = EventBus(hooks.state_dir)
        try:
            _materialize_intent(hooks, store, events, intent, match_key, match_value)
        except Exception as error:  # noqa: BLE001 - an intent must never break the game
            store.mark(intent.get("intent_id"), "failed", reason=f"exception:{type(error).__name__}")
            events.emit("intent_failed", data={"intent_id": intent.get("intent_id"), "reason": str(error)})


def _materialize_intent(hooks: Any, store: InterventionIntentStore, events: EventBus,
                        intent: dict, match_key: str, match_value: Any) -> None:
    ident = intent.get("intent_id")
    meta = intent.get("_meta") or {}
    window = {"match_key": match_key, "match_value": match_value}

    def fail(reason: Any) -> None:
        store.mark(ident, "failed", reason=reason)
        events.emit("intent_failed", data={"intent_id": ident, "reason": reason})

    def submit(decision: dict, origin: str) -> dict:
        return submit_decision(
            str(hooks.state_dir), decision, origin=origin, agent_id=meta.get("agent_id"),
            caused_by_whisper_id=meta.get("caused_by_whisper_id"), require_match_key=True,
        )

    policy = intent.get("policy")
    if policy is None:
        if intent.get("value") is None:
            return
        written = submit({match_key: match_value, **intent["value"]}, "intent_materialize")
        if not written.get("ok"):
            store.mark(ident, "failed", reason=written.get("reason") or "submit_failed")
            events.emit("intent_failed", data={"intent_id": ident, "reason": written.get("reason")})
            return
        store.mark(ident, "materialized", reason="decision_written",
                   detail={"decision_id": written.get("decision_id")})
        events.emit("intent_materialized", data={
            "intent_id": ident, "decision_id": written.get("decision_id"), **window,
        })
        return

    if _explicit_decision_waiting(hooks, match_key, match_value):
        store.mark(ident, "materialized", reason="explicit_decision_present")
        events.emit("intent_materialized", data={"intent_id": ident, "reason": "explicit_decision_present"})
        return
    schema = hooks.get_decision_schema()
    context = hooks.build_decision_context(match_key, match_value)
    if not context.get("supported"):
        fail("unsupported_context")
        return
    result, origin = _run_strategy(hooks, policy, context, schema)
    if not result.get("ok"):
        fail(result.get("reason", "unknown"))
        return
    decision = result.get("decision") or {}
    if not _align_window(decision, schema, match_key, match_value):
        fail("match_mismatch")
        return
    written = submit(decision, origin)
    if not written.get("ok"):
        store.mark(ident, "failed", reason=written.get("reason") or "submit_failed")
        events.emit("intent_failed", data={"intent_id": ident, "reason": written.get("reason")})
        return
    store.mark(ident, "materialized", reason="policy_decision_written",
               detail={"decision_id": written.get("decision_id")})
    events.emit("intent_materialized", data={
        "intent_id": ident, "decision_id": written.get("decision_id"), **window, "origin": origin,
    })
    events.emit("policy_generated", data={
        **window, "decision": decision, "decision_id": written.get("decision_id"),
        "origin": origin, "reason": result.get("reason"), "source": "intent",
    })
