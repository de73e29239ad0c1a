"""Test-side message check against a spec's `messages` (the subset of field types our
protocols and the reference built-ins use), so driven games also prove their wire shape."""
from __future__ import annotations

import re

_PATTERNS = {
    "hash": re.compile(r"[0-9a-f]{64}"),
    "nonce": re.compile(r"[0-9a-f]{16,64}"),
    "id": re.compile(r"[A-Za-z0-9_.:-]{1,128}"),
}


class MessageError(AssertionError):
    """A message does not match its spec schema."""


def _schema_for(spec: dict, msg: dict, direction: str) -> dict:
    action = msg.get("action")
    matches = [
        schema for schema in spec.get("messages") or []
        if isinstance(schema, dict)
        and schema.get("direction") in ("both", direction)
        and action in ((schema.get("fields") or {}).get("action") or {}).get("values", [])
    ]
    if len(matches) != 1:
        raise MessageError(f"{len(matches)} schemas for action={action!r} direction={direction}: {msg}")
    return matches[0]


def _field_error(schema: dict, value) -> str | None:
    kind = schema.get("type")
    if kind == "integer":
        if not isinstance(value, int) or isinstance(value, bool):
            return "expected integer"
        if "min" in schema and value < schema["min"]:
            return f"below min {schema['min']}"
        if "max" in schema and value > schema["max"]:
            return f"above max {schema['max']}"
        return None
    if kind == "enum":
        return None if isinstance(value, str) and value in schema.get("values", []) else f"{value!r} not in enum"
    if kind == "boolean":
        return None if isinstance(value, bool) else "expected boolean"
    if kind == "text":
        limit = schema.get("max_length", 2000)
        ok = isinstance(value, str) and len(value.encode("utf-8")) <= limit
        return None if ok else f"expected text <= {limit} bytes"
    if kind in _PATTERNS:
        ok = isinstance(value, str) and _PATTERNS[kind].fullmatch(value)
        return None if ok else f"expected {kind}"
    if kind == "json":
        return None
    if kind == "array":
        if not isinstance(value, list):
            return "expected array"
        for item in value:
            problem = _field_error(schema.get("items") or {}, item)
            if problem:
                return f"item: {problem}"
        return None
    return f"unsupported field type {kind!r}"


def check_message(spec: dict, msg: dict, direction: str) -> None:
    """Raise MessageError unless `msg` matches exactly one schema for `direction`."""
    if not isinstance(msg, dict):
        raise MessageError(f"message must be an object: {msg!r}")
    fields = _schema_for(spec, msg, direction)["fields"]
    problems = [f"unknown field: {key}" for key in msg if key not in fields]
    for key, schema in fields.items():
        if key not in msg:
            if schema.get("required") is True:
                problems.append(f"missing required field: {key}")
            continue
        problem = _field_error(schema, msg[key])
        if problem:
            problems.append(f"{key}: {problem}")
    if problems:
        raise MessageError(f"{direction} {msg}: " + "; ".join(problems))
