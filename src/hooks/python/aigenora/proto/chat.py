"""Hooks for free-mode chat contracts: print the peer's lines, keep a bounded transcript in
snapshot.json for UIs and an append-only log in details.jsonl. Text is never interpreted.
A chat protocol's hooks.py subclasses ChatHooks and names itself in proto_host_metadata."""
from __future__ import annotations

from pathlib import Path

TYPE_CHECKING = False  # typing costs every process ~2 ms to import; annotations are strings
if TYPE_CHECKING:
    from typing import Any

from aigenora.proto.hooks import ProtocolHooks

# Lines kept in snapshot.json (details.jsonl keeps everything).
SNAPSHOT_LINES = 200


class ChatHooks(ProtocolHooks):
    SUPPORTED_CONTROL_MODES = ("autonomous", "hybrid", "human")

    def proto_init(self, options, role, args, state_dir: Path, decision_config: dict[str, Any] | None = None):
        super().proto_init(options, role, args, state_dir, decision_config)
        self.peer_role = "guest" if role == "host" else "host"
        self.last_peer_seq = 0
        self.snapshot.update(phase="chatting", peer_role=self.peer_role, messages=[])

    def proto_on_message(self, msg):
        if msg.get("action") != "chat":
            return
        seq = msg.get("seq")
        if not isinstance(seq, int) or seq <= self.last_peer_seq:
            return  # a replayed or out-of-order line
        self.last_peer_seq = seq
        text = msg.get("text", "")
        print(f"[{self.peer_role}] {text}", flush=True)
        self._keep("peer", seq, text)

    def proto_on_send(self, msg):
        if msg.get("action") == "chat" and isinstance(msg.get("seq"), int):
            self._keep("self", msg["seq"], msg.get("text", ""))

    def proto_on_end(self):
        print("[chat ended]", flush=True)
        self.snapshot.update(phase="ended", last_event={"summary": "Chat ended", "structured": {}})

    def _keep(self, source: str, seq: int, text: str) -> None:
        lines = list(self.snapshot.read().get("messages") or [])
        lines.append({"seq": seq, "from": source, "text": text})
        self.snapshot.update(
            messages=lines[-SNAPSHOT_LINES:],
            last_event={"summary": f"{source}: {text[:60]}",
                        "structured": {"from": source, "seq": seq, "text": text}},
        )
        self.details.append(direction="received" if source == "peer" else "sent", seq=seq, text=text)
