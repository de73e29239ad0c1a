"""Mahjong's tiles and hands for a room leader's table: the 34 faces in the network's shape, the
winning shapes (four sets and a pair, seven pairs, thirteen orphans), the chows a discard
allows, the classical-core score patterns, and how far a hand is from winning (`shanten`), which
an automatic seat steers by. An extension beyond the reference SDK's API (stdlib only).

A hand is worked on as a tuple of 34 counts, one per face, in the order of `CODES`: the
characters (m), dots (p) and bamboo (s) from one to nine, then the four winds and three
dragons."""
from __future__ import annotations

from functools import lru_cache

SUITS = {"characters": "m", "dots": "p", "bamboo": "s"}
WINDS = ("east", "south", "west", "north")
DRAGONS = ("red", "green", "white")
HONOURS = WINDS + DRAGONS
CODES = tuple(f"{rank}{letter}" for letter in SUITS.values() for rank in range(1, 10)) + HONOURS
INDEX = {code: index for index, code in enumerate(CODES)}
NUMBERED = 27  # the first honour's index
ORPHANS = frozenset(index for index in range(len(CODES)) if index >= NUMBERED or index % 9 in (0, 8))


def faces() -> list[dict]:
    """The 34 faces as the network's tables show them (four copies of each make the wall)."""
    numbered = [{"code": f"{rank}{letter}", "suit": suit, "rank": rank, "label": f"{rank} {suit}",
                 "kind": "numbered"} for suit, letter in SUITS.items() for rank in range(1, 10)]
    honours = [{"code": code, "suit": "wind" if code in WINDS else "dragon", "rank": 0,
                "label": code.title(), "kind": "honor"} for code in HONOURS]
    return numbered + honours


def counts(tiles: list[dict]) -> tuple:
    """The 34 counts of `tiles` (each a face with its `code`)."""
    made = [0] * len(CODES)
    for tile in tiles:
        made[INDEX[tile["code"]]] += 1
    return tuple(made)


def is_honour(index: int) -> bool:
    return index >= NUMBERED


def win_kind(concealed: list[dict], melds: int) -> str | None:
    """The winning shape of a hand's concealed tiles beside `melds` declared sets, or None."""
    held = counts(concealed)
    if sum(held) != 3 * (4 - melds) + 2:
        return None
    if melds == 0 and {i for i, n in enumerate(held) if n} == ORPHANS and max(held) == 2:
        return "thirteen_orphans"
    if melds == 0 and all(n % 2 == 0 for n in held):  # (four of a face make two pairs)
        return "seven_pairs"
    if any(n >= 2 and _all_sets(_less(held, i, 2)) for i, n in enumerate(held)):
        return "standard"
    return None


@lru_cache(maxsize=4096)
def _all_sets(held: tuple) -> bool:
    """Whether the counts split into pungs and chows with nothing left."""
    first = next((i for i, n in enumerate(held) if n), None)
    if first is None:
        return True
    if held[first] >= 3 and _all_sets(_less(held, first, 3)):
        return True
    return _chow_at(held, first) and _all_sets(_less_chow(held, first))


def chows(concealed: list[dict], discard: dict) -> list[tuple[str, str]]:
    """Every pair of codes in the hand that makes a run of three with the discard."""
    index = INDEX[discard["code"]]
    if is_honour(index):
        return []
    held = counts(concealed)
    rank = index % 9
    made = []
    for start in range(max(0, rank - 2), min(rank, 6) + 1):
        others = [index - rank + r for r in range(start, start + 3) if r != rank]
        if all(held[i] for i in others):
            made.append((CODES[others[0]], CODES[others[1]]))
    return made


def patterns(tiles: list[dict], win: str, meld_kinds: list[str], self_draw: bool, concealed: bool) -> list[dict]:
    """The classical-core profile's patterns for a won hand (`tiles`: every tile, melds too),
    each a code and its points; the hand is worth their sum."""
    found = [("winning_hand", 1)]
    found += [("self_draw", 1)] if self_draw else []
    found += [("concealed_hand", 1)] if concealed else []
    found += {"seven_pairs": [("seven_pairs", 4)], "thirteen_orphans": [("thirteen_orphans", 13)]}.get(win, [])
    if win == "standard" and len(meld_kinds) == 4 and "chow" not in meld_kinds:
        found.append(("all_pungs", 3))
    indices = [INDEX[tile["code"]] for tile in tiles]
    suits = {i // 9 for i in indices if not is_honour(i)}
    honours = any(is_honour(i) for i in indices)
    if len(suits) == 1:
        found.append(("mixed_one_suit", 3) if honours else ("pure_one_suit", 6))
    if indices and not any(i in ORPHANS for i in indices):
        found.append(("all_simples", 1))
    return [{"code": code, "points": points} for code, points in found]


def shanten(held: tuple, melds: int) -> int:
    """How many tiles a hand (its concealed counts, beside `melds` declared sets) lacks to be
    one tile from winning: -1 is a winning hand, 0 waits on a tile. The least over the three
    shapes (seven pairs and thirteen orphans only with no declared set)."""
    best = _standard_shanten(held, 4 - melds)
    if melds == 0:
        best = min(best, 6 - sum(n // 2 for n in held))
        orphans = [held[i] for i in sorted(ORPHANS)]
        best = min(best, 13 - sum(1 for n in orphans if n) - (1 if any(n >= 2 for n in orphans) else 0))
    return best


def _standard_shanten(held: tuple, sets_needed: int) -> int:
    """Two for every set still missing, less one for each partial set and for a pair."""
    best = 2 * sets_needed
    for pair in [None, *(i for i, n in enumerate(held) if n >= 2)]:
        rest = held if pair is None else _less(held, pair, 2)
        sets, partials = _groups(rest, sets_needed)
        best = min(best, 2 * (sets_needed - sets) - partials - (pair is not None))
    return best


@lru_cache(maxsize=65536)
def _groups(held: tuple, room: int) -> tuple[int, int]:
    """The best (sets, partial sets) the counts make, at most `room` of them together, sets
    first (each set is worth two partials)."""
    first = next((i for i, n in enumerate(held) if n), None)
    if first is None or room == 0:
        return (0, 0)
    options = [_groups(_less(held, first, 1), room)]  # one of the face left alone
    if held[first] >= 3:
        sets, partials = _groups(_less(held, first, 3), room - 1)
        options.append((sets + 1, partials))
    if _chow_at(held, first):
        sets, partials = _groups(_less_chow(held, first), room - 1)
        options.append((sets + 1, partials))
    shapes = [[first, first]] if held[first] >= 2 else []
    if not is_honour(first):
        shapes += [[first, first + step] for step in (1, 2) if first % 9 + step < 9 and held[first + step]]
    for shape in shapes:
        rest = list(held)
        for i in shape:
            rest[i] -= 1
        sets, partials = _groups(tuple(rest), room - 1)
        options.append((sets, partials + 1))
    return max(options, key=lambda made: (2 * made[0] + made[1], made[0]))


def _chow_at(held: tuple, first: int) -> bool:
    return not is_honour(first) and first % 9 <= 6 and held[first + 1] > 0 and held[first + 2] > 0


def _less(held: tuple, index: int, n: int) -> tuple:
    return held[:index] + (held[index] - n,) + held[index + 1:]


def _less_chow(held: tuple, first: int) -> tuple:
    return _less(_less(_less(held, first, 1), first + 1, 1), first + 2, 1)

