"""Runs a user policy script (`<state_dir>/policy_scripts/<id>.py`) in a child interpreter:
JSON in on stdin, a decision out on stdout, under a hard timeout."""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

TYPE_CHECKING = False  # typing costs every process ~2 ms to import; annotations are strings
if TYPE_CHECKING:
    from typing import Any

_SCRIPT_ID = re.compile(r"^[a-zA-Z0-9_-]+$")


def python_interpreter() -> str:
    """The interpreter for child scripts: `AIGENORA_PYTHON` if set (an embedding binary sets it,
    since its own sys.executable is not Python), else sys.executable."""
    return os.environ.get("AIGENORA_PYTHON") or sys.executable


def find_script(script_id: str, state_dir: str | Path) -> Path | None:
    """The local script for a safe id, or None (ids are restricted so they cannot escape the dir)."""
    if not isinstance(script_id, str) or not _SCRIPT_ID.match(script_id):
        return None
    path = Path(state_dir) / "policy_scripts" / f"{script_id}.py"
    return path if path.exists() else None


def run_script(
    strategy: dict,
    context: dict,
    *,
    state_dir: str | Path,
    schema: dict | None = None,
    timeout_ms: int = 1000,
) -> dict:
    """Run the script named by `strategy.script_id`; returns {ok, decision?, reason?, ...}."""
    script_id = strategy.get("script_id")
    if not script_id:
        return {"ok": False, "reason": "no_script_id"}
    path = find_script(script_id, state_dir)
    if path is None:
        return {"ok": False, "reason": "script_not_found", "script_id": script_id}
    payload = {
        "schema": schema or {},
        "context": context,
        "strategy": strategy,
        "params": strategy.get("params") or {},
    }
    try:
        child = subprocess.run(
            [python_interpreter(), str(path)],
            input=json.dumps(payload, ensure_ascii=False),
            capture_output=True,
            text=True,
            encoding="utf-8",
            timeout=timeout_ms / 1000.0,
        )
    except subprocess.TimeoutExpired:
        return {"ok": False, "reason": "policy_timeout", "script_id": script_id,
                "timeout_ms": timeout_ms}
    except Exception as error:  # noqa: BLE001 - any launch failure is a script error
        return {"ok": False, "reason": "script_error", "detail": f"{type(error).__name__}: {error}"}
    return _parse_output(child)


def _parse_output(child: subprocess.CompletedProcess) -> dict[str, Any]:
    if child.returncode != 0:
        return {"ok": False, "reason": "script_error", "returncode": child.returncode,
                "stderr": (child.stderr or "")[-500:]}
    text = child.stdout.strip()
    if not text:
        return {"ok": False, "reason": "empty_output"}
    try:
        result = json.loads(text)
    except ValueError as error:
        return {"ok": False, "reason": "invalid_json", "detail": str(error)}
    if not isinstance(result, dict):
        return {"ok": False, "reason": "invalid_json", "detail": "output is not an object"}
    if result.get("ok") is False:
        return result
    if not result.get("decision"):
        return {"ok": False, "reason": "no_decision_in_output"}
    return {"ok": True, "decision": result["decision"], "confidence": result.get("confidence"),
            "reason": result.get("reason")}
