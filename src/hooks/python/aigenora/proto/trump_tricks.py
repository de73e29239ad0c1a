"""Trick games with a trump rank as well as a trump suit, the Upgrade (Tractor) family played
with two packs and their jokers: the effective suit of a card, the order within a suit, the
shape of a play (a single, an identical pair, a tractor of consecutive pairs, or a throw), what
a follower must play, which play wins a trick, and the cards that count. An extension beyond
the reference SDK's API (stdlib only), for our Upgrade table's leader and its automatic seats.

Cards have the face shape of `aigenora.proto.deck`; jokers are suit "joker", rank 16 (small)
and 17 (big). Every card of the trump rank, both jokers and the trump suit (if there is one)
form one effective suit, "trump", ordered from the trump suit's two up through the other
suits' rank cards (equal to each other), the trump suit's rank card, the small and the big
joker; the rank is left out of every other suit, so the cards either side of it are adjacent."""
from __future__ import annotations

from collections import Counter

TRUMP = "trump"
COUNTING = {5: 5, 10: 10, 13: 10}
SUITS = ("clubs", "diamonds", "hearts", "spades")


def card_points(cards: list[dict]) -> int:
    """What the cards count: 5 for a five, 10 for a ten or a king."""
    return sum(COUNTING.get(card["rank"], 0) for card in cards)


def face(card: dict) -> tuple[str, int]:
    return card["suit"], card["rank"]


class Trumps:
    """The trumps of one hand: the trump rank (`level`, 2-14) and suit (None: no trump suit,
    only the rank cards and jokers are trumps)."""

    __slots__ = ("level", "suit", "_plain")

    def __init__(self, level: int, suit: str | None):
        if not isinstance(level, int) or isinstance(level, bool) or not 2 <= level <= 14:
            raise ValueError("the trump rank must be from 2 to 14")
        if suit is not None and suit not in SUITS:
            raise ValueError("the trump suit must be clubs, diamonds, hearts, spades or none")
        self.level, self.suit = level, suit
        self._plain = [rank for rank in range(2, 15) if rank != level]

    # -- single cards -----------------------------------------------------------------------

    def suit_of(self, card: dict) -> str:
        """The card's effective suit: "trump" or its own."""
        if card["suit"] == "joker" or card["rank"] == self.level or card["suit"] == self.suit:
            return TRUMP
        return card["suit"]

    def position(self, card: dict) -> int:
        """The card's place in its effective suit, from 0: consecutive places make tractors,
        and equal places are equally strong (the first played of them wins)."""
        suit, rank = face(card)
        if self.suit_of(card) != TRUMP:
            return self._plain.index(rank)
        top = len(self._plain) if self.suit is not None else 0
        if suit == "joker":
            return top + (2 if self.suit is not None else 1) + (rank - 16)
        if rank == self.level:
            return top + (1 if suit == self.suit else 0)
        return self._plain.index(rank)

    def side_top(self) -> int:
        """The place of the highest card of a side suit (its ace, or its king when the rank
        is aces)."""
        return len(self._plain) - 1

    def strength(self, card: dict) -> tuple[bool, int]:
        """Orders any two cards: trumps above the rest, then by place."""
        return self.suit_of(card) == TRUMP, self.position(card)

    # -- groups of cards --------------------------------------------------------------------

    def pairs(self, cards: list[dict]) -> list[list[dict]]:
        """Every identical pair among `cards` (one per face), weakest first."""
        by_face: dict = {}
        for card in cards:
            by_face.setdefault(face(card), []).append(card)
        found = [held[:2] for held in by_face.values() if len(held) >= 2]
        return sorted(found, key=lambda pair: self.strength(pair[0]))

    def tractors(self, cards: list[dict], length: int) -> list[list[dict]]:
        """Runs of `length` pairs in consecutive places of one effective suit among `cards`,
        one for each place a run can start from (of pairs equally placed, such as two other
        suits' rank pairs among trumps, the first), weakest first."""
        by_place: dict = {}
        for pair in self.pairs(cards):
            by_place.setdefault((self.suit_of(pair[0]), self.position(pair[0])), pair)
        found = []
        for suit, start in sorted(by_place, key=lambda place: (place[0] == TRUMP, place[1])):
            run = [by_place.get((suit, start + step)) for step in range(length)]
            if all(run):
                found.append([card for pair in run for card in pair])
        return found

    def shape(self, cards: list[dict]) -> dict:
        """A lead's shape: `kind` (single, pair, tractor with its `tractor_length`, or throw),
        `count`, effective `suit`, `pair_count` and the faces played (`signatures`).
        ValueError when the cards are not all of one effective suit."""
        if not cards:
            raise ValueError("a play needs at least one card")
        suits = {self.suit_of(card) for card in cards}
        if len(suits) != 1:
            raise ValueError("a lead must be all of one suit, trumps counting as one suit")
        faces = Counter(face(card) for card in cards)
        shape = {"kind": "throw", "count": len(cards), "suit": suits.pop(),
                 "pair_count": sum(count // 2 for count in faces.values()),
                 "signatures": [{"suit": suit, "rank": rank, "count": count}
                                for (suit, rank), count in sorted(faces.items())]}
        if len(cards) == 1:
            shape["kind"] = "single"
        elif len(cards) == 2 and len(faces) == 1:
            shape["kind"] = "pair"
        elif len(cards) >= 4 and set(faces.values()) == {2} and self.tractors(cards, len(faces)):
            shape.update(kind="tractor", tractor_length=len(faces))
        return shape

    def follow_shape(self, cards: list[dict]) -> dict:
        """A follower's shape: as `shape`, or `mixed` when it spans suits (it cannot win)."""
        try:
            return self.shape(cards)
        except ValueError:
            pairs = sum(count // 2 for count in Counter(face(card) for card in cards).values())
            return {"kind": "mixed", "count": len(cards), "suit": "mixed", "pair_count": pairs}

    # -- following and winning --------------------------------------------------------------

    def check_follow(self, hand: list[dict], chosen: list[dict], lead: dict) -> None:
        """ValueError, with the rule, when `chosen` from `hand` may not follow `lead` (a
        shape): as many cards as were led; all of the led suit the hand holds, up to that
        many; as many pairs of it as the lead has, while the hand holds them; and a tractor as
        long as a led tractor, while the hand holds one."""
        count, suit = lead["count"], lead["suit"]
        if len(chosen) != count:
            raise ValueError(f"play {count} card{'s' if count > 1 else ''}, as many as were led")
        held = [card for card in hand if self.suit_of(card) == suit]
        played = [card for card in chosen if self.suit_of(card) == suit]
        if len(played) != min(count, len(held)):
            raise ValueError(f"you must play your {suit} cards, up to {count}, while you hold them")
        if len(held) <= count:
            return
        owed = min(lead["pair_count"], len(self.pairs(held)))
        if len(self.pairs(played)) < owed:
            raise ValueError(f"you must follow with {owed} pair{'s' if owed > 1 else ''} of {suit} "
                             "while you hold them")
        length = lead.get("tractor_length", 0)
        if lead["kind"] == "tractor" and self.tractors(held, length) and not self.tractors(played, length):
            raise ValueError(f"you must follow a tractor with a tractor of {length} pairs while you hold one")

    def winner(self, plays: list[list[dict]]) -> int:
        """The index of the play that wins a trick (the lead first). Only a play of the lead's
        shape in the led suit or in trumps can win a single, pair or tractor: trumps beat the
        led suit, and within a suit the higher top card (a later equal one does not win). A
        throw is won by its leader unless it is ruffed: all trumps, with as many pairs as
        the throw, the highest such ruff winning."""
        lead = self.shape(plays[0])
        best, best_key = 0, (lead["suit"] == TRUMP, self._top(plays[0], lead))
        for index, cards in enumerate(plays[1:], start=1):
            shape = self.follow_shape(cards)
            if lead["kind"] == "throw":
                fits = (lead["suit"] != TRUMP and shape["suit"] == TRUMP
                        and shape["pair_count"] >= lead["pair_count"])
            else:
                fits = (shape["kind"] == lead["kind"] and shape["suit"] in (lead["suit"], TRUMP)
                        and shape.get("tractor_length") == lead.get("tractor_length"))
            key = (shape["suit"] == TRUMP, self._top(cards, lead)) if fits else None
            if key is not None and key > best_key:
                best, best_key = index, key
        return best

    def _top(self, cards: list[dict], lead: dict) -> int:
        """The place that ranks a play: its highest pair's when the lead has pairs, else its
        highest card's."""
        pairs = self.pairs(cards)
        ranked = [pair[0] for pair in pairs] if lead["pair_count"] and pairs else cards
        return max(self.position(card) for card in ranked)
