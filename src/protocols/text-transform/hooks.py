"""Text-transform hooks for the request_response engine: the guest sends one request (from
its options, or a submitted decision), the host applies the operation and answers once."""
from __future__ import annotations

from pathlib import Path

TYPE_CHECKING = False  # typing costs every process ~2 ms to import; annotations are strings
if TYPE_CHECKING:
    from typing import Any

from aigenora.proto.hooks import HookResult, ProtocolHooks
from aigenora.proto.options import option

OUTPUT_LIMIT = 16000  # bytes, as declared for result.output
OPERATIONS = {
    "upper": str.upper,
    "lower": str.lower,
    "title": str.title,
    "reverse": lambda text: text[::-1],
    "word_count": lambda text: str(len(text.split())),
    "char_count": lambda text: str(len(text)),
}


class Hooks(ProtocolHooks):
    SUPPORTED_CONTROL_MODES = ("autonomous", "hybrid", "human")
    DECISION_SCHEMA = {"match_key": "action_seq", "value_field": "text"}

    def proto_init(self, options, role, args, state_dir: Path, decision_config: dict[str, Any] | None = None):
        super().proto_init(options, role, args, state_dir, decision_config)
        self.text = option(options, "text", "Hello from Aigenora")
        self.operation = option(options, "operation", "upper")
        if self.operation not in OPERATIONS:
            raise ValueError(f"operation must be one of {', '.join(OPERATIONS)}")

    def proto_host_metadata(self):
        return ("Text Transform", "service,text", "supply", {})

    def proto_guest_first_action(self):
        request = {"action": "request", "operation": self.operation, "text": self.text}
        if self.control_mode == "human":
            request.update(self._human_request())
        elif self.bus is not None and self.decision_mode == "auto":
            decision = self._consume_hybrid("action_seq", 1) or {}
            request.update(self._valid_parts(decision))
        self.snapshot.update(phase="waiting_result", request=request)
        return request

    def _valid_parts(self, decision: dict) -> dict:
        parts = {}
        if decision.get("operation") in OPERATIONS:
            parts["operation"] = decision["operation"]
        if isinstance(decision.get("text"), str):
            parts["text"] = decision["text"]
        return parts

    def _human_request(self) -> dict:
        decision = self._await_human_decision("action_seq", 1)
        parts = self._valid_parts(decision)
        if "operation" not in parts or "text" not in parts:
            self._reject_human_decision("action_seq", 1, decision,
                                        "need a text and an operation of " + ", ".join(OPERATIONS))
        return parts

    def proto_host_handle(self, msg):
        if msg.get("action") != "request":
            return HookResult({"action": "error", "reason": "unexpected_message"}, abort=True)
        output = OPERATIONS[msg["operation"]](msg["text"])
        if len(output.encode("utf-8")) > OUTPUT_LIMIT:
            return HookResult({"action": "error", "reason": "output_too_large"}, abort=True)
        result = {"action": "result", "operation": msg["operation"], "output": output}
        self._record(msg, result)
        return HookResult(result, completed=True)

    def proto_guest_handle(self, msg):
        if msg.get("action") == "result":
            self._record(self.snapshot.read().get("request") or {}, msg)
            return HookResult(completed=True)
        self.snapshot.set_phase("aborted", summary=f"host error: {msg.get('reason')}")
        return HookResult(abort=True)

    def _record(self, request: dict, result: dict) -> None:
        self.details.append(type="transform", operation=result["operation"],
                            input=request.get("text"), output=result["output"])
        self.snapshot.update(phase="done", result=result, last_event={
            "summary": f"{result['operation']}: {result['output'][:60]}",
            "structured": {"operation": result["operation"]},
        })

    def proto_display(self, msg, direction):
        if msg.get("action") == "request":
            return f"Request: {msg['operation']} of {msg['text']!r}"
        if msg.get("action") == "result":
            return f"Result: {msg['output']}"
        return None
