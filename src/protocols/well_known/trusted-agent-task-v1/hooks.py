"""Trusted Agent Task (the network's trusted-agent-task-v1 contract) for the session_loop
engine: the guest hands the host a task and collects the result within one session.

The guest (options `task_goal`, `task_id`, `execution_class`): its join submits the task
(`task_submit`; with no `task_goal` it asks about `task_id` instead), then it asks for the
task's status. A task in a final state is acknowledged (`result_ack`) and the host's receipt
ends the session; a task still open, or an error, ends it too (ask again in a new session).

The host keeps the tasks of the session. A task runs when the guest first asks for its
status: in human control a person answers it ({"task_id": "t1", "result_state": "completed",
"summary": "..."}); in hybrid control such a decision is taken when one was submitted; else
the `task_reply` option is the summary of a completed task, and without one the task fails
(this host runs no executor of its own). Notes, inputs and cancellations are acknowledged;
artifact transfers are refused. The host ends the session after a receipt, a cancellation,
a refusal (except of the join) or the status of a task that is still open."""
from __future__ import annotations

import hashlib
import json
import time
from pathlib import Path

TYPE_CHECKING = False  # typing costs every process ~2 ms to import; annotations are strings
if TYPE_CHECKING:
    from typing import Any

from aigenora.proto.hooks import HookResult, ProtocolHooks
from aigenora.proto.options import option
from aigenora.proto.sdk import DecisionTimeoutError

FINAL = ("completed", "failed", "rejected", "cancelled", "expired")
RESULTS = ("completed", "failed")
TASK_LIFETIME_MS = 3_600_000
NO_EXECUTOR = ("this host runs no executor of its own: it answers tasks with the task_reply "
               "option or through a person (--control-mode human)")


def request_digest(goal: str, execution_class: str, manifest: dict | None) -> str:
    """SHA-256 of the request's canonical JSON; the host compares digests to tell a retry of
    a task from a different task reusing its id."""
    body = {"execution_class": execution_class, "input_manifest": manifest, "task_goal": goal}
    text = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class Hooks(ProtocolHooks):
    SUPPORTED_CONTROL_MODES = ("autonomous", "hybrid", "human")
    DECISION_SCHEMA = {"match_key": "task_id", "value_field": "summary"}

    def proto_init(self, options, role, args, state_dir: Path, decision_config: dict[str, Any] | None = None):
        super().proto_init(options, role, args, state_dir, decision_config)
        self.goal = option(options, "task_goal", None, str)
        self.task_id = option(options, "task_id", None, str) or f"task-{int(time.time() * 1000)}"
        self.execution_class = option(options, "execution_class", "assist")
        self.reply = option(options, "task_reply", None, str)
        self.tasks: dict[str, dict] = {}
        self.snapshot.update(phase="waiting_peer", tasks={})

    def proto_host_metadata(self):
        return ("Trusted Agent Task", "collab,trusted-agent-task", "supply", {})

    # -- the guest: hand over a task, collect its result -----------------------------------

    def proto_guest_join_message(self):
        if self.goal is None:
            return self._status_query()
        return {"action": "task_submit", "task_id": self.task_id,
                "request_digest": request_digest(self.goal, self.execution_class, None),
                "task_goal": self.goal, "execution_class": self.execution_class,
                "expires_at_ms": int(time.time() * 1000) + TASK_LIFETIME_MS}

    def _status_query(self) -> dict:
        return {"action": "status_query", "task_id": self.task_id, "after_event_id": 0}

    def proto_guest_handle_ready(self, msg):
        self._note_answer(msg)

    def proto_guest_first_action(self):
        return self._status_query()

    def proto_guest_handle(self, msg):
        self._note_answer(msg)
        if msg["action"] == "task_status" and msg["state"] in FINAL:
            return HookResult({"action": "result_ack", "task_id": msg["task_id"]})
        return HookResult(completed=True)

    def _note_answer(self, msg: dict) -> None:
        action = msg["action"]
        state = msg.get("state") or msg.get("result_state") or msg.get("error_code")
        summary = msg.get("summary") or msg.get("detail") or ""
        self.details.append(type=action, task_id=msg.get("task_id"), state=state, message=msg,
                            summary=f"{action}: {state}" + (f" ({summary})" if summary else ""))
        self.snapshot.update(phase="playing", task={"task_id": msg.get("task_id", self.task_id),
                                                    "state": state, "summary": summary},
                             last_event={"summary": f"{action}: {state}", "structured": msg})

    # -- the host: keep the tasks, answer every request -----------------------------------

    def proto_host_handle_join(self, msg):
        return self._answer(msg, joining=True)

    def proto_host_handle(self, msg):
        return self._answer(msg, joining=False)

    def _answer(self, msg: dict, joining: bool) -> HookResult:
        action = msg["action"]
        task = self.tasks.get(msg.get("task_id"))
        if action == "task_submit":
            return HookResult(self._submit(msg))
        if task is None:
            return self._refuse("unknown_task", f"no task {msg.get('task_id')} here", joining)
        if action == "status_query":
            if task["state"] == "queued":
                self._run(task)
            status = self._status(task, msg["after_event_id"])
            return HookResult(status, completed=task["state"] not in FINAL and not joining)
        if action == "result_ack":
            if task["state"] not in RESULTS:
                return self._refuse("task_state_conflict", f"task is {task['state']}", joining)
            return HookResult({"action": "receipt", "task_id": task["task_id"],
                               "result_state": task["state"], "summary": task["summary"],
                               "result_manifest": task["manifest"]}, completed=not joining)
        if action == "cancel_request":
            if task["state"] not in FINAL:
                self._advance(task, "cancelled", msg.get("reason") or "cancelled by the guest")
            return HookResult({"action": "cancel_ack", "task_id": task["task_id"],
                               "state": task["state"]}, completed=not joining)
        if action == "agent_note":
            duplicate = any(note["note_id"] == msg["note_id"] for note in task["notes"])
            if not duplicate:
                task["notes"].append({"note_id": msg["note_id"], "text": msg["note_text"]})
                print(f"[note on {task['task_id']}] {msg['note_text']}", flush=True)
            return HookResult({"action": "note_ack", "task_id": task["task_id"],
                               "note_id": msg["note_id"], "duplicate": duplicate})
        if action == "input_submit":
            task["inputs"][msg["input_id"]] = msg["answer"]
            return HookResult({"action": "input_ack", "task_id": task["task_id"],
                               "input_id": msg["input_id"]})
        return self._refuse("adapter_error", "artifact transfer is not supported by this host", joining)

    def _submit(self, msg: dict) -> dict:
        known = self.tasks.get(msg["task_id"])
        if known is not None:
            same = known["digest"] == msg["request_digest"]
            return self._received(known, same, "duplicate" if same else "idempotency_conflict")
        task = {"task_id": msg["task_id"], "digest": msg["request_digest"], "goal": msg["task_goal"],
                "execution_class": msg["execution_class"], "state": "received", "revision": 0,
                "events": [], "notes": [], "inputs": {}, "summary": "", "manifest": {}}
        self.tasks[task["task_id"]] = task
        if msg["expires_at_ms"] < time.time() * 1000:
            self._advance(task, "expired", "the task expired before it arrived")
            return self._received(task, False, "message_expired")
        self._advance(task, "queued", "accepted")
        return self._received(task, True, "ok")

    def _received(self, task: dict, accepted: bool, reason: str) -> dict:
        return {"action": "task_received", "task_id": task["task_id"], "accepted": accepted,
                "state": task["state"], "reason_code": reason, "revision": task["revision"]}

    def _run(self, task: dict) -> None:
        """Answers the task: a person's decision, else the task_reply option, else failure."""
        self._advance(task, "running", "started")
        decision = self._decision_for(task)
        if decision is not None:
            state = decision.get("result_state") if decision.get("result_state") in RESULTS else "completed"
            self._advance(task, state, str(decision.get("summary", "")))
        elif self.reply is not None:
            self._advance(task, "completed", self.reply)
        else:
            self._advance(task, "failed", NO_EXECUTOR)
        task["summary"] = task["events"][-1]["detail"]
        task["manifest"] = {"summary": task["summary"], "execution_class": task["execution_class"]}

    def _decision_for(self, task: dict) -> dict | None:
        if self.control_mode == "human":
            self._advance(task, "waiting_local_operator", "waiting for the operator")
            print(f"[task {task['task_id']}] {task['goal']}", flush=True)
            try:
                return self._await_human_decision("task_id", task["task_id"])
            except DecisionTimeoutError:
                return {"result_state": "failed", "summary": "the operator did not answer in time"}
        return self._consume_hybrid("task_id", task["task_id"])

    def _advance(self, task: dict, state: str, detail: str) -> None:
        task["state"] = state
        task["revision"] += 1
        task["events"].append({"event_id": task["revision"], "state": state, "detail": detail})
        self.details.append(type="task_state", task_id=task["task_id"], state=state, detail=detail,
                            summary=f"{task['task_id']}: {state}")
        self.snapshot.update(phase="playing", tasks={task["task_id"]: {
            "state": state, "goal": task["goal"], "revision": task["revision"]}})

    def _status(self, task: dict, after: int) -> dict:
        status = {"action": "task_status", "task_id": task["task_id"], "state": task["state"],
                  "revision": task["revision"],
                  "events": [event for event in task["events"] if event["event_id"] > after],
                  "notes": list(task["notes"])}
        if task["state"] in RESULTS:
            status["result_manifest"] = task["manifest"]
        return status

    def _refuse(self, code: str, detail: str, joining: bool) -> HookResult:
        self.details.append(type="refused", error_code=code, detail=detail, summary=f"refused: {code}")
        return HookResult({"action": "error", "error_code": code, "detail": detail[:500]},
                          completed=not joining)

    def proto_display(self, msg, direction):
        action = msg.get("action")
        state = msg.get("state") or msg.get("result_state") or msg.get("error_code") or ""
        detail = msg.get("summary") or msg.get("detail") or msg.get("task_goal") or ""
        task = msg.get("task_id", "")
        return f"{direction} {action} {task} {state}".rstrip() + (f": {detail}" if detail else "")
