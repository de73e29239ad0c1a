"""In-test stand-in for the flow engine: plays a protocol's host and guest hooks against each
other in the order our flow engine calls them (the join/ready exchange, then the flow mode's
loop, as in src/engine/), then summarises the state dirs they leave behind. Runs in-process
with our SDK, or as a script (`python driver.py JOB.json`) under any interpreter/SDK for
differential runs."""
from __future__ import annotations

import contextlib
import hashlib
import importlib.util
import io
import json
import random
import secrets
import sys
import time
from pathlib import Path
from typing import Any

from spec_check import check_message

H2G, G2H = "host_to_guest", "guest_to_host"
# Values that differ between runs by nature (time, randomness of ids and nonces).
VOLATILE_KEYS = {
    "ts", "updated_at", "started_at", "release_at", "deadline_at", "release_at_epoch",
    "deadline_at_epoch", "request_ts", "decision_id", "nonce", "hash",
}


class Halt(Exception):
    """The driven session stopped in a way the real engine reports as a failure."""


def load_hooks(protocol_dir: Path) -> Any:
    """Execute `<dir>/hooks.py` as a fresh module and instantiate its `Hooks` class."""
    from aigenora.proto.hooks import ProtocolHooks

    path = Path(protocol_dir) / "hooks.py"
    name = "driven_hooks_" + hashlib.sha256(str(path.resolve()).encode()).hexdigest()[:16]
    module_spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(module_spec)
    module_spec.loader.exec_module(module)
    hooks = module.Hooks()
    if not isinstance(hooks, ProtocolHooks):
        raise TypeError("Hooks must inherit aigenora.proto.hooks.ProtocolHooks")
    return hooks


def decision_config(spec: dict, control_mode: str) -> dict | None:
    """The config the engine hands to proto_init for a control mode."""
    declared = spec.get("decision") or {}
    timeout = declared.get("timeout_seconds", 120)
    if control_mode == "autonomous":
        return None
    if control_mode == "human":
        return {"mode": "manual", "control_mode": "human", "timeout_seconds": timeout,
                "timeout_action": "abort", "require_explicit": True}
    return {"mode": "auto", "control_mode": "hybrid", "timeout_seconds": timeout,
            "timeout_action": declared.get("timeout_action", "fallback")}


def as_result(value: Any) -> Any:
    from aigenora.proto.hooks import HookResult

    if isinstance(value, HookResult):
        return value
    return HookResult(response=value) if isinstance(value, dict) else HookResult()


def winner_of(*messages: Any) -> str | None:
    for msg in messages:
        if isinstance(msg, dict):
            for key in ("winner", "game_winner"):
                if msg.get(key) in ("host", "guest", "draw"):
                    return msg[key]
    return None


class Session:
    """Both sides of one driven session plus the wire transcript."""

    def __init__(self, spec: dict, protocol_dir: Path, base: Path, options: dict,
                 guest_options: dict | None, control_mode: str, prepare: dict | None,
                 hooks_dirs: dict | None = None):
        self.spec = spec
        self.mode = (spec.get("flow") or {}).get("mode") or "session_loop"
        self.transcript: list[dict] = []
        self.display: list[str] = []
        self.sides = {}
        for role in ("host", "guest"):
            state_dir = base / role
            state_dir.mkdir(parents=True, exist_ok=True)
            _prepare_state_dir(state_dir, (prepare or {}).get(role) or {})
            hooks = load_hooks((hooks_dirs or {}).get(role, protocol_dir))
            config = None if self.mode == "free" else decision_config(spec, control_mode)
            own = guest_options if role == "guest" and guest_options is not None else options
            hooks.proto_init(dict(own), role, [], state_dir, config)
            hooks.timing = spec.get("timing")
            hooks.snapshot.update(
                phase="waiting_peer", role=role,
                protocol_id=spec.get("protocol_id") or spec.get("name") or "",
                protocol_name=spec.get("name") or "", started_at=time.time(),
                last_event={"summary": "Waiting for peer", "structured": {"role": role}},
            )
            if role == "host" or self.mode == "free":
                self.metadata = hooks.proto_host_metadata()
            self.sides[role] = hooks
        self.host, self.guest = self.sides["host"], self.sides["guest"]

    def send(self, sender: str, msg: dict, validate_as: str | None = None) -> dict:
        """Validate, display on both sides and record one frame."""
        direction = validate_as or (H2G if sender == "host" else G2H)
        check_message(self.spec, msg, direction)
        receiver = "guest" if sender == "host" else "host"
        for role, way in ((sender, "sent"), (receiver, "received")):
            text = self.sides[role].proto_display(msg, way)
            if text:
                self.display.append(f"[{role}] {text}")
        self.transcript.append({"from": sender, "msg": msg})
        return msg

    def phase(self, role: str, phase: str, summary: str, **structured: Any) -> None:
        self.sides[role].snapshot.set_phase(phase, summary=summary, **structured)

    def handshake(self) -> None:
        join = self.send("guest", self.guest.proto_guest_join_message())
        ready = as_result(self.host.proto_host_handle_join(join))
        if ready.response is None:
            raise Halt("host join hook did not return ready response")
        self.send("host", ready.response)
        if ready.completed or ready.abort:
            raise Halt("host ended the session during the handshake")
        self.guest.proto_guest_handle_ready(ready.response)


def _prepare_state_dir(state_dir: Path, files: dict) -> None:
    """Pre-seed what a human/agent would have written: strategy.json, decisions, other files."""
    for name, text in (files.get("files") or {}).items():
        (state_dir / name).parent.mkdir(parents=True, exist_ok=True)
        (state_dir / name).write_text(text, encoding="utf-8")
    if "strategy" in files:
        (state_dir / "strategy.json").write_text(json.dumps(files["strategy"]), encoding="utf-8")
    if files.get("decisions"):
        (state_dir / "decision").mkdir(exist_ok=True)
        lines = "".join(json.dumps(record) + "\n" for record in files["decisions"])
        (state_dir / "decision" / "decisions.jsonl").write_text(lines, encoding="utf-8")


# -- flow modes ------------------------------------------------------------------------------

def run_session_loop(s: Session) -> dict:
    s.handshake()
    msg = s.guest.proto_guest_first_action()
    if not msg:
        s.phase("guest", "game_over", "Guest ended after handshake")
        return {"completed": {"host": False, "guest": False}, "outcome": None}
    s.send("guest", msg)
    for _ in range(10000):
        result = as_result(s.host.proto_host_handle(msg))
        if not result.response:
            s.phase("host", "game_over", "Session completed")
            return {"completed": {"host": result.completed, "guest": False}, "outcome": None}
        reply = s.send("host", result.response)
        if result.completed or result.abort:
            reason = "abort" if result.abort else "completed"
            s.phase("host", "aborted" if result.abort else "game_over", "Session ended", reason=reason)
            answer = as_result(s.guest.proto_guest_handle(reply))
            if answer.response:
                s.send("guest", answer.response)
            s.phase("guest", "game_over", "Session completed")
            return {"completed": {"host": result.completed, "guest": answer.completed},
                    "outcome": winner_of(reply)}
        answer = as_result(s.guest.proto_guest_handle(reply))
        if not answer.response:
            s.phase("guest", "game_over", "Session completed")
            return {"completed": {"host": False, "guest": answer.completed}, "outcome": winner_of(reply)}
        msg = s.send("guest", answer.response)
        if answer.completed or answer.abort:
            raise Halt("guest ended with a message the host still has to answer")
    raise Halt("session_loop did not finish in 10000 exchanges")


def run_request_response(s: Session) -> dict:
    s.handshake()
    request = s.guest.proto_guest_first_action()
    if not request:
        raise Halt("guest did not send a request")
    s.send("guest", request)
    result = as_result(s.host.proto_host_handle(request))
    if result.response is None:
        raise Halt("host did not return a response")
    response = s.send("host", result.response)
    s.guest.proto_guest_handle(response)
    for role in ("host", "guest"):
        s.phase(role, "game_over", "Request-response completed")
    return {"completed": {"host": True, "guest": True}, "outcome": winner_of(response)}


def _commit(value: Any) -> tuple[str, str]:
    nonce = secrets.token_hex(8)
    return nonce, hashlib.sha256(f"{value}:{nonce}".encode("utf-8")).hexdigest()


def run_simultaneous_round(s: Session) -> dict:
    field = ((s.spec.get("flow") or {}).get("round") or {}).get("value_field") or "value"
    shadow = bool(s.spec.get("shadow_judge")) and callable(getattr(s.guest, "proto_round_judge_pure", None))
    s.handshake()
    states: dict[str, dict] = {"host": {}, "guest": {}}
    for round_num in range(100000):
        host_value = s.host.proto_round_value(round_num, states["host"])
        guest_value = s.guest.proto_round_value(round_num, states["guest"])
        host_nonce, host_hash = _commit(host_value)
        guest_nonce, guest_hash = _commit(guest_value)
        s.send("host", {"action": "commit", "round": round_num, "hash": host_hash})
        s.send("guest", {"action": "commit", "round": round_num, "hash": guest_hash})
        s.send("host", {"action": "reveal", "round": round_num, field: host_value, "nonce": host_nonce})
        s.send("guest", {"action": "reveal", "round": round_num, field: guest_value, "nonce": guest_nonce})
        judged = as_result(s.host.proto_round_judge(round_num, host_value, guest_value, states["host"]))
        if not judged.response:
            raise Halt("round judge returned no round_result")
        result = s.send("host", judged.response)
        if shadow:
            expected = s.guest.proto_round_judge_pure(round_num, host_value, guest_value, states["guest"])
            if any(expected.get(k) != result.get(k) for k in expected if k not in ("action", "round")):
                raise Halt(f"shadow judge mismatch in round {round_num}")
        s.guest.proto_guest_handle(result)
        if judged.completed or judged.abort:
            reason = "abort" if judged.abort else "completed"
            s.transcript.append({"from": "host", "msg": {"action": "end"}})
            s.phase("host", "aborted" if judged.abort else "game_over", "Session ended", reason=reason)
            # The engine's guest asks for its next value before it reads the end frame.
            s.guest.proto_round_value(round_num + 1, states["guest"])
            s.phase("guest", "game_over", "Session completed")
            return {"completed": {"host": judged.completed, "guest": True}, "outcome": winner_of(result)}
    raise Halt("simultaneous_round did not finish in 100000 rounds")


def run_free(s: Session, lines: list[list[str]]) -> dict:
    s.send("guest", {"action": "join"})
    s.send("host", {"action": "ready"})
    for role in ("host", "guest"):
        s.phase(role, "chatting", "Chat ready")
    seq = {"host": 0, "guest": 0}
    script = list(lines)
    if not any(text.strip() == "/quit" for _, text in script):
        script.append(["host", "/quit"])
    for sender, text in script:
        receiver = s.sides["guest" if sender == "host" else "host"]
        if text.strip() == "/quit":
            s.send(sender, {"action": "end"}, validate_as="both")
            s.sides[sender].proto_on_end()
            receiver.proto_on_end()
            break
        seq[sender] += 1
        msg = s.send(sender, {"action": "chat", "text": text, "seq": seq[sender]}, validate_as="both")
        s.sides[sender].proto_on_send(msg)
        receiver.proto_on_message(msg)
    for role in ("host", "guest"):
        s.phase(role, "ended", "Free mode session ended")
    return {"completed": {"host": True, "guest": True}, "outcome": None}


RUNNERS = {
    "session_loop": run_session_loop,
    "request_response": run_request_response,
    "simultaneous_round": run_simultaneous_round,
}


def play(protocol_dir: Path, base: Path, options: dict | None = None, control_mode: str = "hybrid",
         seed: int | None = 7, prepare: dict | None = None, chat: list | None = None,
         guest_options: dict | None = None, hooks_dirs: dict | None = None) -> dict:
    """Play one session to its end; returns completion, outcome, transcript and printed text.
    `options` go to both sides unless `guest_options` gives the guest its own; `hooks_dirs`
    ({"host": dir, "guest": dir}) takes a side's hooks.py from another directory."""
    protocol_dir = Path(protocol_dir)
    spec = json.loads((protocol_dir / "spec.json").read_text(encoding="utf-8"))
    if seed is not None:
        random.seed(seed)
    printed = io.StringIO()
    try:
        with contextlib.redirect_stdout(printed):
            session = Session(spec, protocol_dir, Path(base), options or {}, guest_options,
                              control_mode, prepare, hooks_dirs)
            if session.mode == "free":
                result = run_free(session, chat or [])
            else:
                result = RUNNERS[session.mode](session)
    finally:
        # Like the engine, whether the session ended or failed: otherwise the background
        # writer may still be putting files into a state dir the test is removing.
        flush_files()
    result.update(transcript=session.transcript, display=session.display,
                  printed=printed.getvalue(), metadata=list(session.metadata))
    return result


def flush_files() -> None:
    """Complete every state file, as the engine does at the end of a session (our SDK writes
    its own JSON documents behind; the reference SDK, which has no such module, writes at once)."""
    flush_all = getattr(sys.modules.get("aigenora.proto.files"), "flush_all", None)
    if flush_all is not None:
        flush_all()


# -- summaries for differential comparison ---------------------------------------------------

def normalize(value: Any, key: str | None = None) -> Any:
    """Replace volatile values by their type name, recursively."""
    if key in VOLATILE_KEYS and value is not None:
        return f"<{type(value).__name__}>"
    if isinstance(value, dict):
        return {k: normalize(v, k) for k, v in value.items()}
    if isinstance(value, list):
        return [normalize(v) for v in value]
    return value


def summarize_dir(state_dir: Path) -> dict:
    """Every file under a state dir, parsed and normalised (JSON, JSON lines, or text)."""
    files = {}
    for path in sorted(p for p in state_dir.rglob("*") if p.is_file()):
        text = path.read_text(encoding="utf-8")
        name = path.relative_to(state_dir).as_posix()
        if path.suffix == ".jsonl":
            files[name] = [normalize(json.loads(line)) for line in text.splitlines() if line.strip()]
        elif path.suffix == ".json":
            files[name] = normalize(json.loads(text))
        else:
            files[name] = text
    return files


def summarize(result: dict, base: Path) -> dict:
    summary = {k: v for k, v in result.items() if k != "transcript"}
    summary["transcript"] = normalize(result["transcript"])
    summary["files"] = {role: summarize_dir(Path(base) / role) for role in ("host", "guest")}
    return summary


def graft_modules(paths: list[str]) -> None:
    """Make each file importable as `aigenora.proto.<stem>` (our SDK's extension modules on
    top of another SDK, so our built-ins run there too)."""
    import aigenora.proto

    for path in map(Path, paths):
        name = f"aigenora.proto.{path.stem}"
        module_spec = importlib.util.spec_from_file_location(name, path)
        module = importlib.util.module_from_spec(module_spec)
        sys.modules[name] = module
        module_spec.loader.exec_module(module)
        setattr(aigenora.proto, path.stem, module)


def main(job_path: str) -> None:
    """Run a JSON job: {sdk_path, sdk_extensions, protocol_dir, base, out} plus any keyword
    argument of play()."""
    job = json.loads(Path(job_path).read_text(encoding="utf-8"))
    sys.path.insert(0, job.pop("sdk_path"))
    graft_modules(job.pop("sdk_extensions", []))
    base, out = Path(job.pop("base")), Path(job.pop("out"))
    result = play(Path(job.pop("protocol_dir")), base, **job)
    import aigenora

    summary = summarize(result, base)
    summary["sdk_file"] = aigenora.__file__
    out.write_text(json.dumps(summary, ensure_ascii=False, indent=1), encoding="utf-8")


if __name__ == "__main__":
    main(sys.argv[1])
