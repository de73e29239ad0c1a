"""The decision/ directory: the file interface through which a human or agent feeds explicit
decisions into running hooks (state.json, decisions.jsonl, consumed.jsonl, finalized.json)."""
from __future__ import annotations

import _thread
import time
from pathlib import Path

TYPE_CHECKING = False  # typing costs every process ~2 ms to import; annotations are strings
if TYPE_CHECKING:
    from typing import Any

from aigenora.proto.events import EventBus
from aigenora.proto.files import (
    append_jsonl,
    read_json,
    read_jsonl,
    store_json,
    update_json,
    utc_now,
)

# Origins of decisions computed by a strategy rather than typed by someone.
GENERATED_ORIGINS = ("policy_runner", "script_runner")


class DecisionTimeoutError(Exception):
    """No decision arrived before the window's deadline."""


def decision_priority(record: dict) -> int:
    """Explicit submissions beat generated ones, which beat records without an origin."""
    origin = (record.get("_meta") or {}).get("origin") or ""
    if origin in GENERATED_ORIGINS:
        return 50
    return 100 if origin else 0


def decision_id(record: dict, position: int) -> str:
    """The record's `_meta.decision_id`, or a stable id derived from its position and content."""
    explicit = (record.get("_meta") or {}).get("decision_id")
    if explicit:
        return explicit
    import hashlib  # here, not at the top: loading OpenSSL costs every process ~2 ms
    import json

    canonical = json.dumps(record, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    digest = hashlib.sha256(canonical.encode("utf-8")).hexdigest()[:16]
    return f"legacy:{position}:{digest}"


class DecisionBus:
    """Reads submitted decisions for a window (match_key = match_value) and records what it used."""

    POLL_INTERVAL = 0.2

    def __init__(
        self,
        state_dir: str | Path,
        timeout: float = 120.0,
        timeout_action: str = "forfeit",
        fallback_value: dict | None = None,
        require_explicit: bool = False,
    ):
        self.dir = Path(state_dir) / "decision"
        self.dir.mkdir(mode=0o700, parents=True, exist_ok=True)
        self.state_file = self.dir / "state.json"
        self.decisions_file = self.dir / "decisions.jsonl"
        self.consumed_file = self.dir / "consumed.jsonl"
        self._finalized = self.dir / "finalized.json"
        self.timeout = timeout
        self.timeout_action = timeout_action
        self.fallback_value = fallback_value
        self.require_explicit = require_explicit
        self._lock = _thread.allocate_lock()
        self._consumed_offset = 0
        self._consumed_ids = {
            record.get("decision_id")
            for record in read_jsonl(self.consumed_file)
            if isinstance(record, dict) and record.get("decision_id")
        }

    # -- window state ------------------------------------------------------------------

    def publish_state(self, state_dict: dict) -> None:
        """Announce the open window in state.json (what a submitter should match)."""
        store_json(self.state_file, state_dict)

    def finalize_window(self, match_key: str, match_value: Any, reason: str = "consumed") -> None:
        self._write_finalized(match_key, match_value, reason)

    def is_finalized(self, match_key: str, match_value: Any) -> bool:
        closed = read_json(self._finalized_file(), {})
        return isinstance(closed, dict) and f"{match_key}:{match_value}" in closed

    def _finalized_file(self) -> Path:
        return self._finalized

    def _write_finalized(self, match_key: str, match_value: Any, reason: str) -> None:
        # Window keys and values are scalars (round numbers and the like): nothing to copy.
        entry = {
            "reason": reason,
            "ts": time.monotonic(),
            "match_key": match_key,
            "match_value": match_value,
        }

        def close(closed: Any) -> dict:
            closed = closed if isinstance(closed, dict) else {}
            closed[f"{match_key}:{match_value}"] = entry
            return closed

        update_json(self._finalized, close)

    # -- reading submissions -------------------------------------------------------------

    def _read_all_decisions(self) -> list[dict]:
        return [record for record in read_jsonl(self.decisions_file) if isinstance(record, dict)]

    def _open_candidates(self, match_key: str, match_value: Any) -> list[tuple[int, int, dict, str]]:
        """Unconsumed records for the window as (priority, position, record, id), best last."""
        candidates = []
        for position, record in enumerate(self._read_all_decisions()):
            if record.get(match_key) != match_value:
                continue
            ident = decision_id(record, position)
            if ident in self._consumed_ids:
                continue
            candidates.append((decision_priority(record), position, record, ident))
        candidates.sort(key=lambda item: (item[0], item[1]))
        return candidates

    def peek_latest_for_match(self, match_key: str, match_value: Any) -> dict | None:
        """The record consume_latest_for_match would take, without taking it."""
        with self._lock:
            candidates = self._open_candidates(match_key, match_value)
        return candidates[-1][2] if candidates else None

    def consume_latest_for_match(
        self, match_key: str, match_value: Any, *, consumer_id: str | None = None
    ) -> dict | None:
        """Take the best open record for the window; every other open one is marked superseded."""
        with self._lock:
            candidates = self._open_candidates(match_key, match_value)
            if not candidates:
                return None
            *losers, winner = candidates
            self._mark_consumed(winner[3], match_key, match_value, "consumed", consumer_id)
            for loser in losers:
                self._mark_consumed(loser[3], match_key, match_value, "superseded", consumer_id)
            return winner[2]

    def _mark_consumed(
        self, ident: str, match_key: str, match_value: Any, reason: str, consumer_id: str | None
    ) -> None:
        record = {
            "decision_id": ident,
            "match_key": match_key,
            "match_value": match_value,
            "consumer_id": consumer_id or "auto",
            "reason": reason,
            "ts": utc_now(),
        }
        try:
            append_jsonl(self.consumed_file, record)
        except OSError:
            pass
        self._consumed_ids.add(ident)

    def read_pending(self) -> list[dict]:
        """Legacy sequential reader: every record after the last one returned."""
        with self._lock:
            records = self._read_all_decisions()
            pending = records[self._consumed_offset:]
            self._consumed_offset = len(records)
            return pending

    def await_decision(self, match_key: str, match_value: Any, timeout: float | None = None) -> dict:
        """Legacy blocking reader: the next record for the window in file order."""
        deadline = time.monotonic() + (timeout or self.timeout)
        while time.monotonic() < deadline:
            with self._lock:
                records = self._read_all_decisions()
                for position in range(self._consumed_offset, len(records)):
                    if records[position].get(match_key) == match_value:
                        self._consumed_offset = position + 1
                        return records[position]
            time.sleep(self.POLL_INTERVAL)
        if self.timeout_action == "fallback" and self.fallback_value is not None:
            return self._fallback_record()
        raise DecisionTimeoutError(f"Decision timed out waiting for {match_key}={match_value}")

    def _fallback_record(self) -> dict:
        if self.fallback_value is None:
            return {}
        if isinstance(self.fallback_value, dict):
            return self.fallback_value
        return {"value": self.fallback_value}

    @staticmethod
    def submit(state_dir: str | Path, decision_dict: dict) -> None:
        """Append a decision record as an external submitter would."""
        append_jsonl(Path(state_dir) / "decision" / "decisions.jsonl", decision_dict)

    # -- hold-and-release window (human / manual) ------------------------------------------

    def await_latest_decision(
        self,
        match_key: str,
        match_value: Any,
        release_at: float,
        deadline_at: float,
        fallback_value: dict | None = None,
    ) -> dict:
        """Wait for the window: before `release_at` submissions may still change; after it the
        newest one is final; at `deadline_at` fall back, or raise when explicit input is required.
        Both times are `time.monotonic()` values."""
        if deadline_at < release_at:
            raise ValueError(f"deadline_at ({deadline_at}) must be >= release_at ({release_at})")
        events = EventBus(self.dir.parent)
        window = {"match_key": match_key, "match_value": match_value}
        mode = "human" if self.require_explicit else "manual"
        self.publish_state({
            **window, "mode": mode, "release_at": release_at, "deadline_at": deadline_at,
            "waiting_for": "decision",
        })
        events.emit("local_decision_window_started", data={
            **window, "mode": mode, "release_at": release_at, "deadline_at": deadline_at,
        })
        announced = False
        while True:
            now = time.monotonic()
            latest = self._newest_for(match_key, match_value)
            if now < release_at:
                if latest is not None:
                    kind = "local_decision_updated" if announced else "local_decision_ready"
                    events.emit(kind, data={**window, "decision": latest})
                    announced = True
                time.sleep(self.POLL_INTERVAL)
                continue
            if latest is None and now >= deadline_at:
                latest = self._newest_for(match_key, match_value)
            if latest is not None:
                self._write_finalized(match_key, match_value, "release")
                events.emit("local_decision_finalized", data={
                    **window, "reason": "release", "decision": latest,
                })
                return latest
            if now >= deadline_at:
                return self._expire_window(events, window, fallback_value)
            time.sleep(self.POLL_INTERVAL)

    def _newest_for(self, match_key: str, match_value: Any) -> dict | None:
        for record in reversed(self._read_all_decisions()):
            if record.get(match_key) == match_value:
                return record
        return None

    def _expire_window(self, events: EventBus, window: dict, fallback_value: dict | None) -> dict:
        match_key, match_value = window["match_key"], window["match_value"]
        if not self.require_explicit:
            chosen = fallback_value if fallback_value is not None else self._fallback_record()
            self._write_finalized(match_key, match_value, "fallback")
            events.emit("local_decision_fallback", data={
                **window, "reason": "fallback", "fallback": chosen,
            })
            return chosen
        self._write_finalized(match_key, match_value, "timeout")
        events.emit("human_decision_failed", data={**window, "reason": "timeout"})
        raise DecisionTimeoutError(
            f"Human decision timed out waiting for {match_key}={match_value}"
        )
