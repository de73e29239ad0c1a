"""events.jsonl: the session event stream that hooks, decision windows and the engine append to."""
from __future__ import annotations

from pathlib import Path

TYPE_CHECKING = False  # typing costs every process ~2 ms to import; annotations are strings
if TYPE_CHECKING:
    from typing import Any

from aigenora.proto.files import append_jsonl, read_jsonl, state_file, utc_now


class EventBus:
    """events.jsonl: the session's event stream for external agents and UIs."""

    def __init__(self, state_dir: str | Path):
        self.events_file = state_file(state_dir, "events.jsonl")

    def emit(self, event_type: str, data: dict | None = None, summary: str | None = None) -> None:
        record: dict[str, Any] = {"ts": utc_now(), "type": event_type}
        if data:
            record["data"] = data
        if summary:
            record["summary"] = summary
        append_jsonl(self.events_file, record)  # one write of a whole line

    def read_events(self, after_ts: str | None = None) -> list[dict]:
        events = read_jsonl(self.events_file)
        if after_ts is None:
            return events
        return [event for event in events if event.get("ts", "") > after_ts]
