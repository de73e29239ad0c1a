"""The per-session state-dir files hooks work with: key files, snapshot.json, details.jsonl,
strategy.json, events.jsonl (and, re-exported, the decision/ directory bus)."""
from __future__ import annotations

import _thread
import os
from pathlib import Path

TYPE_CHECKING = False  # typing costs every process ~2 ms to import; annotations are strings
if TYPE_CHECKING:
    from typing import Any

from aigenora.proto.decision_bus import DecisionBus, DecisionTimeoutError
from aigenora.proto.events import EventBus
from aigenora.proto.files import (
    append_jsonl,
    clone_json,
    deep_merge,
    read_json,
    read_jsonl,
    store_json,
    update_json,
    utc_now,
    write_json_atomic,
    write_text_atomic,
)


class StateStore:
    """Small plain-text values, one file per key, directly in the state dir."""

    def __init__(self, state_dir: str | Path):
        self.path = Path(state_dir)
        self.path.mkdir(mode=0o700, parents=True, exist_ok=True)

    def write(self, key: str, value: str | int) -> None:
        write_text_atomic(self.path / key, str(value))

    def read(self, key: str, default: str | None = None) -> str | None:
        target = self.path / key
        if not target.exists():
            return default
        return target.read_text(encoding="utf-8")

    def read_int(self, key: str, default: int = 0) -> int:
        text = self.read(key)
        if text is None or text == "":
            return default
        return int(text)


class SnapshotBus:
    """snapshot.json: the current session picture, kept in memory and written behind
    (atomically, at most ~20 times a second; see files.store_json)."""

    def __init__(self, state_dir: str | Path):
        self.path = Path(state_dir) / "snapshot.json"
        self._lock = _thread.allocate_lock()

    def read(self) -> dict:
        data = read_json(self.path, {})
        return data if isinstance(data, dict) else {}

    def write(self, snapshot: dict) -> None:
        """Replace the whole snapshot (stamped with `updated_at`)."""
        document = dict(snapshot)
        document["updated_at"] = utc_now()
        with self._lock:
            store_json(self.path, document)

    def update(self, patch: dict | None = None, **fields: Any) -> dict:
        """Deep-merge `patch` and keyword fields into the snapshot; returns the new snapshot."""
        changes = dict(patch or {})
        changes.update(fields)
        changes = clone_json(changes)
        changes["updated_at"] = utc_now()

        def merge(current: Any) -> dict:
            return deep_merge(current if isinstance(current, dict) else {}, changes)

        with self._lock:
            update_json(self.path, merge)
            return self.read()

    def set_phase(self, phase: str, summary: str | None = None, **structured: Any) -> dict:
        """Set `phase`, and `last_event` when a summary or structured fields are given."""
        changes: dict[str, Any] = {"phase": phase}
        event: dict[str, Any] = {}
        if summary is not None:
            event["summary"] = summary
        if structured:
            event["structured"] = structured
        if event:
            changes["last_event"] = event
        return self.update(changes)

    def record_event(self, summary: str, **structured: Any) -> dict:
        return self.update(last_event={"summary": summary, "structured": structured})


class DetailLog:
    """details.jsonl: an append-only, one-record-per-line history kept by the protocol."""

    def __init__(self, state_dir: str | Path):
        self.path = Path(state_dir) / "details.jsonl"
        self._lock = _thread.allocate_lock()

    def append(self, entry: dict | None = None, **fields: Any) -> dict:
        """Append a record (a `ts` is added unless given); returns the record."""
        record = dict(entry or {})
        record.update(fields)
        record.setdefault("ts", utc_now())
        with self._lock:
            append_jsonl(self.path, record)
        return record

    def read_all(self) -> list[dict]:
        return read_jsonl(self.path)


class StrategyStore:
    """strategy.json: the free-form standing instructions a human or agent gives its hooks,
    with every change audited in strategy_events.jsonl."""

    def __init__(self, state_dir: str | Path, default: dict | None = None):
        root = Path(state_dir)
        root.mkdir(mode=0o700, parents=True, exist_ok=True)
        self.path = root / "strategy.json"
        self.events_path = root / "strategy_events.jsonl"
        self._lock = _thread.allocate_lock()
        if default is not None and not self.path.exists():
            write_json_atomic(self.path, default)

    def read(self) -> dict:
        data = read_json(self.path, {})
        return data if isinstance(data, dict) else {}

    def get(self, key: str, default: Any = None) -> Any:
        return self.read().get(key, default)

    def write(self, strategy: dict, *, _meta: dict | None = None) -> None:
        if not isinstance(strategy, dict):
            raise TypeError("strategy must be a JSON object (dict)")
        with self._lock:
            before = self.read()
            write_json_atomic(self.path, strategy)
            self._audit("set", before, strategy, _meta)

    def merge(self, patch: dict, *, _meta: dict | None = None) -> dict:
        if not isinstance(patch, dict):
            raise TypeError("patch must be a JSON object (dict)")
        with self._lock:
            before = self.read()
            after = deep_merge(before, patch)
            write_json_atomic(self.path, after)
            self._audit("merge", before, after, _meta)
            return after

    def read_events(self) -> list[dict]:
        return read_jsonl(self.events_path)

    def _audit(self, op: str, before: dict, after: dict, meta: dict | None) -> None:
        record: dict[str, Any] = {"ts": utc_now(), "op": op, "before": before, "after": after}
        if meta:
            record["_meta"] = meta
        try:
            append_jsonl(self.events_path, record)
        except OSError:
            pass


def commit_hash(choice: str | int, nonce: str | None = None) -> tuple[str, str]:
    """(nonce, sha256 hex of "<choice>:<nonce>"), drawing a 16-hex nonce when none is given."""
    import hashlib  # here, not at the top: loading OpenSSL costs every process ~2 ms

    nonce = nonce or os.urandom(8).hex()
    return nonce, hashlib.sha256(f"{choice}:{nonce}".encode("utf-8")).hexdigest()


def verify_commit(choice: str | int, nonce: str, expected_hash: str) -> bool:
    return commit_hash(choice, nonce)[1] == expected_hash


__all__ = [
    "StateStore",
    "SnapshotBus",
    "DetailLog",
    "StrategyStore",
    "EventBus",
    "DecisionBus",
    "DecisionTimeoutError",
    "commit_hash",
    "verify_commit",
]
