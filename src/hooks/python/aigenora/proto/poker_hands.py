"""Poker arithmetic for room card games: the best five-card hand among five to seven cards
(ranked directly, without trying every five-card subset), and the main and side pots of a hand
from what each seat put in. An extension beyond the reference SDK's API (stdlib only), used by
our Hold'em leader and its automatic seat.

A hand's rank is a list: its category (0 high card ... 8 straight flush) and then the card
ranks that break ties within it, so two ranks compare as Python lists do."""
from __future__ import annotations

from collections import Counter

CATEGORIES = ("high_card", "one_pair", "two_pair", "three_of_a_kind", "straight", "flush",
              "full_house", "four_of_a_kind", "straight_flush")
HIGH_CARD, ONE_PAIR, TWO_PAIR, TRIPS, STRAIGHT, FLUSH, FULL_HOUSE, QUADS, STRAIGHT_FLUSH = range(9)
ACE = 14


def hand_rank(cards: list[dict]) -> list[int]:
    """The rank of the best five-card hand in 5-7 distinct cards ({"rank": 2-14, "suit"})."""
    if not 5 <= len(cards) <= 7:
        raise ValueError("a poker hand is ranked from five to seven cards")
    faces = {(card["suit"], card["rank"]) for card in cards}
    if len(faces) != len(cards):
        raise ValueError("a poker hand cannot hold the same card twice")
    by_suit: dict[str, list[int]] = {}
    for suit, rank in faces:
        by_suit.setdefault(suit, []).append(rank)
    flush = next((sorted(ranks, reverse=True) for ranks in by_suit.values() if len(ranks) >= 5), None)
    if flush is not None:
        top = straight_top(flush)
        if top:
            return [STRAIGHT_FLUSH, top]
    counts = Counter(rank for _, rank in faces)
    # ranks grouped by how often they appear, most often first, then highest first
    groups = sorted(counts, key=lambda rank: (counts[rank], rank), reverse=True)
    sizes = [counts[rank] for rank in groups]
    if sizes[0] == 4:
        return [QUADS, groups[0], max(rank for rank in groups[1:])]
    if sizes[0] == 3 and len(sizes) > 1 and sizes[1] >= 2:
        return [FULL_HOUSE, groups[0], groups[1]]
    if flush is not None:
        return [FLUSH, *flush[:5]]
    top = straight_top(list(counts))
    if top:
        return [STRAIGHT, top]
    if sizes[0] == 3:
        return [TRIPS, groups[0], *sorted(groups[1:], reverse=True)[:2]]
    if sizes[0] == 2 and sizes[1] == 2:
        kicker = max(groups[2:])
        return [TWO_PAIR, groups[0], groups[1], kicker]
    if sizes[0] == 2:
        return [ONE_PAIR, groups[0], *sorted(groups[1:], reverse=True)[:3]]
    return [HIGH_CARD, *sorted(groups, reverse=True)[:5]]


def straight_top(ranks: list[int]) -> int:
    """The highest card of the best straight among `ranks` (the wheel A-5 counts as 5), or 0."""
    present = set(ranks)
    if ACE in present:
        present.add(1)
    for top in range(ACE, 4, -1):
        if all(rank in present for rank in range(top - 4, top + 1)):
            return top
    return 0


def category(rank: list[int]) -> str:
    return CATEGORIES[rank[0]]


def side_pots(contributions: dict[str, int], folded: set[str]) -> list[dict]:
    """The main pot and each side pot, smallest stake first: its amount and the seats still in
    the hand who can win it (sorted). A pot only folded seats paid into goes to the next pot's
    players, which cannot happen once uncalled chips were returned."""
    pots: list[dict] = []
    floor = 0
    for level in sorted({amount for amount in contributions.values() if amount > 0}):
        payers = [key for key, amount in contributions.items() if amount >= level]
        amount = (level - floor) * len(payers)
        floor = level
        eligible = sorted(key for key in payers if key not in folded)
        if eligible:
            pots.append({"amount": amount, "eligible": eligible})
        elif pots:
            pots[-1]["amount"] += amount
    return pots


def uncalled_excess(contributions: dict[str, int]) -> tuple[str, int] | None:
    """The seat that put in more than anyone else could match, and by how much."""
    ordered = sorted(contributions.items(), key=lambda item: item[1], reverse=True)
    if len(ordered) >= 2 and ordered[0][1] > ordered[1][1]:
        return ordered[0][0], ordered[0][1] - ordered[1][1]
    return None
