"""intervention_intents.jsonl: one-shot instructions waiting for a future decision window
(queued by the whisper bridge, turned into decisions when their window opens)."""
from __future__ import annotations

import os
from pathlib import Path

TYPE_CHECKING = False  # typing costs every process ~2 ms to import; annotations are strings
if TYPE_CHECKING:
    from typing import Any

from aigenora.proto.files import append_jsonl, read_jsonl, state_file, utc_now


class InterventionIntentStore:
    """Append-only intent records plus status records (`materialized`, `failed`, `expired`)."""

    FILE_NAME = "intervention_intents.jsonl"

    def __init__(self, state_dir: str | Path):
        self.state_dir = state_dir if isinstance(state_dir, Path) else Path(state_dir)
        self.file = state_file(state_dir, self.FILE_NAME)

    def append(
        self,
        intent: dict,
        *,
        origin: str = "whisper_bridge",
        agent_id: str | None = None,
        caused_by_whisper_id: str | None = None,
    ) -> dict:
        """Queue an intent as `pending`; returns the stored record with its `intent_id`."""
        record = {
            "intent_id": f"int_{os.urandom(8).hex()}",
            "ts": utc_now(),
            "status": "pending",
            "scope": intent.get("scope", "once"),
            "target_policy": intent.get("target_policy", "next"),
            "value": intent.get("value"),
            "policy": intent.get("policy"),
            "created_match_key": intent.get("created_match_key"),
            "created_match_value": intent.get("created_match_value"),
            "ttl_windows": intent.get("ttl_windows", 3),
            "_meta": {
                "origin": origin,
                "agent_id": agent_id,
                "caused_by_whisper_id": caused_by_whisper_id,
            },
        }
        append_jsonl(self.file, record)
        return record

    def read_all(self) -> list[dict]:
        return [record for record in read_jsonl(self.file) if isinstance(record, dict)]

    def mark(self, intent_id: str, status: str, *, reason: str | None = None,
             detail: dict | None = None) -> None:
        """Record a new status for an intent (the last status record wins)."""
        record: dict[str, Any] = {
            "intent_id": intent_id, "ts": utc_now(), "status": status, "status_event": status,
        }
        if reason:
            record["reason"] = reason
        if detail:
            record["detail"] = detail
        append_jsonl(self.file, record)

    def effective_status(self, intent_id: str) -> str:
        last = None
        for record in self.read_all():
            if record.get("intent_id") == intent_id:
                last = record
        return last.get("status", "pending") if last else "unknown"

    def pending_for_window(self, match_key: str, match_value: Any) -> list[dict]:
        """Still-pending intents aimed at this window: `current` ones created for it, and `next`
        ones created 1..ttl_windows windows earlier (or whose origin window is not a number)."""
        originals: dict[str, dict] = {}
        status: dict[str, str] = {}
        for record in self.read_all():
            ident = record.get("intent_id")
            if not ident:
                continue
            if ident not in originals and record.get("scope"):
                originals[ident] = record
            if record.get("status"):
                status[ident] = record["status"]
        due = []
        for ident, intent in originals.items():
            if status.get(ident, "pending") == "pending" and _aims_at(intent, match_value):
                due.append(intent)
        return due


def _aims_at(intent: dict, match_value: Any) -> bool:
    created = intent.get("created_match_value")
    target = intent.get("target_policy")
    if target == "current":
        return created == match_value
    if target != "next":
        return False
    if created is None or not isinstance(created, int) or not isinstance(match_value, int):
        return True
    return 1 <= match_value - created <= intent.get("ttl_windows", 3)
