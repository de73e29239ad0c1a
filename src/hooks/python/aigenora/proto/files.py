"""Low-level state-dir file primitives: atomic JSON documents, JSON-lines logs, deep merge, UTC stamps."""
from __future__ import annotations

import json
import os
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any


def utc_now() -> str:
    """Current time as ISO-8601 UTC with microseconds and a `+00:00` offset."""
    return datetime.now(timezone.utc).isoformat()


def compact(obj: Any) -> str:
    """One-line JSON as written to every `.jsonl` file (UTF-8 kept, no spaces)."""
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":"))


def _replace(source: Path, target: Path) -> None:
    # Windows refuses to replace a file another process is reading; back off briefly.
    delay = 0.05
    for attempt in range(6):
        try:
            os.replace(source, target)
            return
        except PermissionError:
            if attempt == 5:
                raise
            time.sleep(delay)
            delay *= 2


def write_json_atomic(path: Path, obj: Any, tmp: Path | None = None) -> None:
    """Write `obj` as indented JSON through a temporary sibling, then rename it into place."""
    path.parent.mkdir(parents=True, exist_ok=True)
    staging = tmp if tmp is not None else path.with_name(path.name + ".tmp")
    staging.write_text(json.dumps(obj, ensure_ascii=False, indent=2), encoding="utf-8")
    _replace(staging, path)


def read_json(path: Path, default: Any = None) -> Any:
    """Parse a JSON file; `default` when it is missing, unreadable or malformed."""
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return default


def append_jsonl(path: Path, record: Any) -> None:
    """Append one compact JSON record as a line, creating the directory if needed."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a", encoding="utf-8") as handle:
        handle.write(compact(record) + "\n")


def read_jsonl(path: Path) -> list[Any]:
    """Every parseable record of a JSON-lines file, skipping blank and broken lines."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError:
        return []
    records = []
    for line in lines:
        line = line.strip()
        if not line:
            continue
        try:
            records.append(json.loads(line))
        except ValueError:
            continue
    return records


def deep_merge(base: dict, patch: dict) -> dict:
    """A new dict: `patch` laid over `base`, merging nested dicts key by key."""
    merged = dict(base)
    for key, value in patch.items():
        current = merged.get(key)
        if isinstance(value, dict) and isinstance(current, dict):
            merged[key] = deep_merge(current, value)
        else:
            merged[key] = value
    return merged
