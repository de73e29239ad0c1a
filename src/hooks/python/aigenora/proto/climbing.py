"""Climbing games (the Dou Dizhu family, where each play must top the last one): the cards
with their jokers, what combination a set of cards makes, whether one play beats another, and
every play a hand could make. An extension beyond the reference SDK's API (stdlib only), for
our Landlord leader (which checks plays with it) and its automatic seat (which picks from it).

A card is `{"rank": "3".."A", "2", "Black Joker" | "Red Joker", "value": 3-17, "suit"}`, so
threes are lowest, then up to aces (14), twos (15) and the two jokers (16, 17). A combination
is `{"kind", "primary", "length", "tier"}`: tier 0 is a normal play, 1 a bomb of four to eight
cards of one rank, 2 a bomb of two to four jokers. A normal play beats only one of its own
kind and length with a higher primary rank; any bomb beats every normal play; between bombs a
higher tier wins, then more cards, then the higher rank."""
from __future__ import annotations

from collections import Counter
from typing import NamedTuple

RANKS = ("3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K", "A", "2")
SUITS = ("clubs", "diamonds", "hearts", "spades")
ACE, TWO, BLACK_JOKER, RED_JOKER = 14, 15, 16, 17
MIN_STRAIGHT, MIN_PAIR_STRAIGHT, MIN_PLANE = 5, 3, 2


def faces() -> list[dict]:
    """One pack of 54: each suit from three to two, then the black and the red joker."""
    pack = [{"rank": rank, "value": value, "suit": suit}
            for suit in SUITS for value, rank in enumerate(RANKS, start=3)]
    return pack + [{"rank": "Black Joker", "value": BLACK_JOKER, "suit": "joker"},
                   {"rank": "Red Joker", "value": RED_JOKER, "suit": "joker"}]


def combination(kind: str, primary: int, length: int, tier: int = 0) -> dict:
    return {"kind": kind, "primary": primary, "length": length, "tier": tier}


def classify(cards: list[dict]) -> dict:
    """The combination `cards` make; ValueError when they make none."""
    values = [card["value"] for card in cards]
    count = Counter(values)
    size = len(cards)
    if size >= 2 and all(card["suit"] == "joker" for card in cards):
        return combination("joker_bomb", max(values), size, 2)
    if size >= 4 and len(count) == 1:
        return combination("bomb", values[0], size, 1)
    shape = sorted(count.values())
    simple = {(1,): "single", (2,): "pair", (3,): "triple", (1, 3): "triple_single", (2, 3): "triple_pair"}
    if tuple(shape) in simple and size <= 5:
        return combination(simple[tuple(shape)], max(count, key=count.get), size)
    ranks = sorted(count)
    for per_rank, kind, least in ((1, "straight", MIN_STRAIGHT), (2, "pair_straight", MIN_PAIR_STRAIGHT)):
        if set(shape) == {per_rank} and len(ranks) >= least and ranks[-1] <= ACE and consecutive(ranks):
            return combination(kind, ranks[-1], size)
    plane = sorted(value for value, n in count.items() if n == 3 and value <= ACE)
    if len(plane) >= MIN_PLANE and consecutive(plane):
        wings = [n for value, n in count.items() if value not in plane]
        kind = {(): "airplane", (1,) * len(plane): "airplane_single",
                (2,) * len(plane): "airplane_pair"}.get(tuple(wings))
        if kind:
            return combination(kind, plane[-1], size)
    fours = [value for value, n in count.items() if n == 4]
    if len(fours) == 1:
        rest = [n for value, n in count.items() if value != fours[0]]
        if size == 6:
            return combination("four_two_single", fours[0], size)
        if size == 8 and rest == [2, 2]:
            return combination("four_two_pair", fours[0], size)
    raise ValueError("the cards are not a combination: single, pair, triple (alone, with a single "
                     "or a pair), straight, consecutive pairs, airplane (alone, with singles or "
                     "pairs), four with two singles or two pairs, or a bomb")


def beats(play: dict, previous: dict) -> bool:
    """Whether the combination `play` beats `previous`."""
    if play["tier"] != previous["tier"]:
        return play["tier"] > previous["tier"]
    if play["tier"]:
        return (play["length"], play["primary"]) > (previous["length"], previous["primary"])
    return (play["kind"], play["length"]) == (previous["kind"], previous["length"]) \
        and play["primary"] > previous["primary"]


def consecutive(values: list[int]) -> bool:
    return all(high == low + 1 for low, high in zip(values, values[1:]))


class Play(NamedTuple):
    """Cards from a hand and the combination they make."""
    cards: list
    combination: dict


def plays(hand: list[dict]) -> list[Play]:
    """Every combination `hand` can make, one play for each kind, length and primary rank:
    the core cards it needs, plus the attachments that cost least (the lowest ranks that are
    not the core's, taken first from ranks the play empties, never jokers)."""
    by_value: dict[int, list[dict]] = {}
    for card in sorted(hand, key=lambda c: (c["value"], c["suit"], c.get("copy", 0))):
        by_value.setdefault(card["value"], []).append(card)
    have = {value: len(held) for value, held in by_value.items()}
    found = []

    def add(core: dict, wings: int = 0, wing_size: int = 0) -> None:
        """`core` {value: count}; `wings` attachments of `wing_size` cards, each of another rank."""
        spare = sorted((value for value, n in have.items() if value not in core and value <= TWO
                        and n >= wing_size),
                       key=lambda value: (have[value] != wing_size, have[value] >= 4, value))
        if len(spare) < wings:
            return
        take = {**core, **{value: wing_size for value in spare[:wings]}}
        chosen = [card for value, n in take.items() for card in by_value[value][:n]]
        try:
            found.append(Play(chosen, classify(chosen)))
        except ValueError:  # (an attachment that would make another rank's triple, say)
            pass

    for value, n in have.items():
        for size in range(1, min(n, 3) + 1):
            if size == 1 or value <= TWO:
                add({value: size})
        if n >= 3 and value <= TWO:
            add({value: 3}, 1, 1)
            add({value: 3}, 1, 2)
        if n >= 4 and value <= TWO:
            add({value: 4}, 2, 1)
            add({value: 4}, 2, 2)
            for size in range(4, n + 1):
                add({value: size})
    jokers = by_value.get(BLACK_JOKER, []) + by_value.get(RED_JOKER, [])
    for size in range(2, len(jokers) + 1):
        lowest, highest = jokers[:size], jokers[-size:]
        for chosen in [lowest] + ([highest] if highest != lowest else []):
            found.append(Play(chosen, classify(chosen)))
    for per_rank, least in ((1, MIN_STRAIGHT), (2, MIN_PAIR_STRAIGHT), (3, MIN_PLANE)):
        for low in range(3, ACE + 1):
            high = low
            while high <= ACE and have.get(high, 0) >= per_rank:
                run = high - low + 1
                if run >= least:
                    core = {value: per_rank for value in range(low, high + 1)}
                    add(core)
                    if per_rank == 3:
                        add(core, run, 1)
                        add(core, run, 2)
                high += 1
    return found


def beating(hand: list[dict], previous: dict | None) -> list[Play]:
    """The plays from `hand` that may follow `previous` (any play when there is none)."""
    return [play for play in plays(hand) if previous is None or beats(play.combination, previous)]
