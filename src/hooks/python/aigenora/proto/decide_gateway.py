"""The single entry point for submitting a decision into a session's decision/ directory
(used by the CLI, the web UI and the strategy runners)."""
from __future__ import annotations

import os
from pathlib import Path

TYPE_CHECKING = False  # typing costs every process ~2 ms to import; annotations are strings
if TYPE_CHECKING:
    from typing import Any

from aigenora.proto.decision_bus import DecisionBus
from aigenora.proto.files import read_json, read_jsonl, utc_now

# Fields that name the window a decision belongs to, in lookup order.
MATCH_KEY_FIELDS = ("round", "turn", "attempt", "action_seq")


def find_match_key(state_dir: str | Path, decision: dict) -> tuple[str | None, Any]:
    """The window of a decision: a match field in the body, else the open window in state.json."""
    for field in MATCH_KEY_FIELDS:
        if decision.get(field) is not None:
            return field, decision[field]
    window = read_json(Path(state_dir) / "decision" / "state.json", {})
    if isinstance(window, dict):
        key, value = window.get("match_key"), window.get("match_value")
        if key is not None and value is not None:
            return key, value
    return None, None


def _outcome(ok: bool, reason: str | None, key: Any, value: Any, ident: str | None) -> dict:
    return {
        "ok": ok,
        "status": "ok" if ok else "rejected",
        "reason": reason,
        "match_key": key,
        "match_value": value,
        "decision_id": ident,
    }


def _previous_submission(state_dir: str, agent_id: str, idempotency_key: str) -> dict | None:
    records = read_jsonl(Path(state_dir) / "decision" / "decisions.jsonl")
    for record in reversed(records):
        meta = record.get("_meta", {}) if isinstance(record, dict) else {}
        if meta.get("agent_id") == agent_id and meta.get("idempotency_key") == idempotency_key:
            return meta
    return None


def submit_decision(
    state_dir: str | Path,
    decision: dict,
    *,
    origin: str,
    agent_id: str | None = None,
    idempotency_key: str | None = None,
    caused_by_whisper_id: str | None = None,
    require_match_key: bool = False,
    target_policy: str | None = None,
) -> dict:
    """Append `decision` (with an audit `_meta`) unless its window is unknown when required,
    already finalized, or the same agent already sent this idempotency key.

    Returns {ok, status, reason, match_key, match_value, decision_id}."""
    state_dir = str(state_dir)
    key, value = find_match_key(state_dir, decision)
    if require_match_key and key is None:
        return _outcome(False, "match_key_required", None, None, None)
    if key is not None and DecisionBus(state_dir).is_finalized(key, value):
        return _outcome(False, "decision_finalized", key, value, None)
    if idempotency_key and agent_id:
        earlier = _previous_submission(state_dir, agent_id, idempotency_key)
        if earlier is not None:
            return _outcome(True, "duplicate_idempotency", key, value, earlier.get("decision_id"))
    ident = f"dec_{os.urandom(8).hex()}"
    record = dict(decision)
    record["_meta"] = {
        "decision_id": ident,
        "origin": origin,
        "agent_id": agent_id,
        "idempotency_key": idempotency_key,
        "caused_by_whisper_id": caused_by_whisper_id,
        "target_policy": target_policy,
        "request_ts": utc_now(),
    }
    DecisionBus.submit(state_dir, record)
    return _outcome(True, None, key, value, ident)
