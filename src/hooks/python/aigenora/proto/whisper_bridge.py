"""Whisper parsing: turns a coach's free-text hint ("always rock", "一直出布", "bid 30") into a
structured intent or command with keyword rules (bilingual, no LLM, no side effects)."""
from __future__ import annotations

import re

TYPE_CHECKING = False  # typing costs every process ~2 ms to import; annotations are strings
if TYPE_CHECKING:
    from typing import Any

# Trigger words. The exact word sets are part of the observable behaviour shared with the
# reference client, so a hint parses the same way on either implementation.
PERSIST_KEYWORDS: tuple[str, ...] = (
    "一直", "总是", "永远", "以后", "接下来都", "接下来", "持续", "保持", "固定", "循环",
    "重复", "每轮都", "每手都", "全都",
    "always", "keep", "forever", "from now on", "all future", "every", "persist", "sticky",
)
ONCE_KEYWORDS: tuple[str, ...] = (
    "这手", "这轮", "这一手", "这一轮", "下一手", "下一轮", "下次", "只", "仅", "就这次", "这一次",
    "this round", "this turn", "next", "once", "just this", "one time",
)
POLICY_KEYWORDS: dict[str, tuple[str, ...]] = {
    "mirror_previous_opponent": (
        "模仿对方上一轮", "模仿对方上一次", "跟着对方上一轮", "跟着对方出", "学对方上一轮",
        "学对方出", "对方出啥我出啥", "mirror", "copy opponent",
    ),
    "counter_previous_opponent": (
        "克制对方上一轮", "克制对方上一次", "打败对方上一轮", "克制上一轮", "打败上一轮",
        "克制对方", "counter", "beat opponent",
    ),
    "repeat_own_previous": ("重复自己上一轮", "重复上一轮的", "继续上一次", "repeat own"),
}
ONCE_POLICY_KEYWORDS: dict[str, tuple[str, ...]] = {
    "counter_once": ("下一轮克制", "下一手克制", "下次克制", "下一轮打败", "下一手打败"),
    "mirror_once": ("下一轮模仿", "下一手模仿", "下次模仿", "下一轮跟着", "下一手跟着"),
}
_NEXT_WORDS = ("下一轮", "下一手", "下次", "next", "下一局")
_CURRENT_WORDS = ("这轮", "这一轮", "这手", "这一手", "this round", "this turn")


def _normalize(text: str) -> str:
    return re.sub(r"\s+", " ", text.strip().lower())


def _mentions(text: str, words: tuple[str, ...]) -> bool:
    return any(word in text for word in words)


def detect_scope(text: str) -> str:
    """`once` when the hint names a single move, else `persist` (hints stick by default)."""
    return "once" if _mentions(_normalize(text), ONCE_KEYWORDS) else "persist"


def detect_target_policy(text: str) -> str:
    """Which window the hint aims at: `persist`, `next` or `current` (default `persist`)."""
    norm = _normalize(text)
    if _mentions(norm, PERSIST_KEYWORDS):
        return "persist"
    if _mentions(norm, _NEXT_WORDS):
        return "next"
    if _mentions(norm, _CURRENT_WORDS):
        return "current"
    return "persist"


def detect_policy(text: str) -> str | None:
    """A dynamic-policy id named by the hint; one-shot policies are checked first."""
    norm = _normalize(text)
    for table in (ONCE_POLICY_KEYWORDS, POLICY_KEYWORDS):
        for policy_id, words in table.items():
            if _mentions(norm, words):
                return policy_id
    return None


def match_choice(text: str, choice_keywords: dict[str, list[str]]) -> str | None:
    """The choice whose alias occurs in the text, trying longer aliases first."""
    norm = _normalize(text)
    aliases = [(alias.lower(), choice) for choice, names in choice_keywords.items() for alias in names]
    aliases.sort(key=lambda pair: len(pair[0]), reverse=True)
    for alias, choice in aliases:
        if alias and alias in norm:
            return choice
    return None


def extract_number(text: str) -> int | None:
    """The first run of digits in the text as an int, or None."""
    found = re.search(r"\d+", text)
    return int(found.group()) if found else None


def parse_whisper_to_intent(
    text: str,
    schema: dict | None = None,
    *,
    choice_keywords: dict[str, list[str]] | None = None,
    match_key: str = "round",
    match_value: Any = None,
) -> dict | None:
    """{scope, target_policy, value, policy, raw_text, confidence}, or None when nothing parses.
    Tried in order: a named policy, a choice alias, a number."""
    if not text or not text.strip():
        return None
    schema = dict(schema or {})
    if choice_keywords and not schema.get("choices"):
        schema["choices"] = choice_keywords
    choices = schema.get("choices")
    value_field = schema.get("value_field") or ("choice" if choices else "bid")
    scope = detect_scope(text)
    target = detect_target_policy(text)

    policy_id = detect_policy(text)
    if policy_id is not None:
        one_shot = policy_id in ONCE_POLICY_KEYWORDS
        return {
            "scope": "once" if one_shot else scope,
            "target_policy": "next" if one_shot else ("persist" if scope == "persist" else target),
            "value": None,
            "policy": {"mode": "policy", "policy": policy_id, "params": {}},
            "raw_text": text,
            "confidence": 0.85,
        }
    value: Any = match_choice(text, choices) if choices else None
    if value is None:
        value = extract_number(text)
    if value is None:
        return None
    return {
        "scope": scope,
        "target_policy": target,
        "value": {value_field: value},
        "policy": None,
        "raw_text": text,
        "confidence": 0.9,
    }


def parse_whisper_to_command(
    text: str,
    choice_keywords: dict[str, list[str]] | None,
    match_key: str = "round",
    match_value: Any = None,
) -> dict | None:
    """The older command form: {"type": "strategy"|"decide", "payload": {...}} or None.
    Choice protocols use `fixed` (strategy) / `choice` (decide); numeric ones use `bid`."""
    intent = parse_whisper_to_intent(
        text, None, choice_keywords=choice_keywords, match_key=match_key, match_value=match_value
    )
    if intent is None:
        return None
    persistent = intent["scope"] == "persist"
    if intent["policy"] is not None:
        return {"type": "strategy", "payload": intent["policy"]} if persistent else None
    value = intent["value"]
    field = "choice" if choice_keywords else "bid"
    picked = value.get(field) or next(iter(value.values()))
    if persistent:
        strategy_field = "fixed" if choice_keywords else "bid"
        return {"type": "strategy", "payload": {"mode": "fixed", strategy_field: picked}}
    return {"type": "decide", "payload": {match_key: match_value, field: picked}}
