"""Reading a protocol's options in hooks: a value or its default, a seeded RNG per side, and
scripts of moves. An extension beyond the reference SDK's API (stdlib only)."""
from __future__ import annotations

import re

TYPE_CHECKING = False  # typing costs every process ~2 ms to import; annotations are strings
if TYPE_CHECKING:
    from typing import Any, Callable, Sequence


def option(options: dict, name: str, default: Any, kind: Callable[[Any], Any] | None = None) -> Any:
    """options[name], converted by `kind` (e.g. int) when given; `default` when the option is
    absent or null."""
    value = options.get(name)
    if value is None:
        return default
    return kind(value) if kind is not None else value


def whole_option(options: dict, name: str, default: int, low: int, high: int) -> int:
    """options[name] (or `default` when absent) as a whole number from `low` to `high`;
    ValueError naming the range for anything else, a bool included."""
    value = options.get(name, default)
    if not isinstance(value, int) or isinstance(value, bool) or not low <= value <= high:
        raise ValueError(f"{name} must be between {low} and {high}")
    return value


def side_option(options: dict, role: str, name: str, default: Any,
                kind: Callable[[Any], Any] | None = None) -> Any:
    """This side's value of a setting both sides read from the same options: options
    "<role>_<name>" (e.g. host_moves) when set, else options[name], else `default`."""
    own = options.get(f"{role}_{name}")
    if own is not None:
        return kind(own) if kind is not None else own
    return option(options, name, default, kind)


def seeded_rng(options: dict, role: str) -> random.Random:
    """This side's RNG: seeded by options.seed and the role, so a seeded game repeats exactly
    while host and guest still draw differently; unseeded without options.seed. It is made
    on first use: importing random costs every process ~0.6 ms, and scripted games never draw."""
    seed = options.get("seed")
    return _FirstUseRandom(f"{seed}:{role}" if seed is not None else None)


class _FirstUseRandom:
    """Stands for a random.Random(seed) and creates it on the first attribute looked up."""

    __slots__ = ("_seed", "_rng")

    def __init__(self, seed: str | None):
        self._seed = seed
        self._rng = None

    def __getattr__(self, name: str) -> Any:
        if name in self.__slots__:  # not set yet (an instance copied without __init__)
            raise AttributeError(name)
        if self._rng is None:
            import random

            self._rng = random.Random(self._seed) if self._seed is not None else random.Random()
        return getattr(self._rng, name)


def script_option(options: dict, name: str, tokens: Sequence[str], noun: str = "move",
                  role: str | None = None) -> list[str]:
    """The tokens of options[name], a comma/space separated script such as "rock, Paper",
    lowercased; [] when the option is unset. With `role`, "<role>_<name>" comes first (see
    side_option). ValueError names any token not in `tokens`."""
    script = side_option(options, role, name, None) if role else options.get(name)
    if not script:
        return []
    words = [word.lower() for word in re.split(r"[\s,]+", str(script)) if word]
    unknown = sorted({word for word in words if word not in tokens})
    if unknown:
        raise ValueError(f"{name}: unknown {noun}(s) {', '.join(unknown)}; use {', '.join(tokens)}")
    return words
