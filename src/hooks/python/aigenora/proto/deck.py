"""A leader's private deck for room card games: the standard cards in the network's face shape
and a deck shuffled from a secret seed, dealt into hands and named zones. An extension beyond
the reference SDK's API (stdlib only), shared by our four-seat tables.

The deck is plain JSON so it can live in a room's state, which only the leader holds; members
see cards only through what a view copies out of it (`hand`, `zone`); a card played moves from
a hand to a zone (`play`). The shuffle is a Fisher-Yates driven by HMAC-SHA256 of the seed
with rejection sampling, so it is unbiased and the same seed always gives the same order
(tests pin a seed with `deal_seed`; play draws a fresh one, `table_seed`)."""
from __future__ import annotations

import hashlib
import hmac
import secrets

SUIT_ORDER = ("clubs", "diamonds", "hearts", "spades")
SUIT_LETTER = {"clubs": "C", "diamonds": "D", "hearts": "H", "spades": "S"}
FACE_LABEL = {11: "J", 12: "Q", 13: "K", 14: "A"}
RED_SUITS = frozenset({"diamonds", "hearts"})
ACE_HIGH = range(2, 15)


def card_face(suit: str, rank: int) -> dict:
    """One card as the network's tables show it: rank 2-14 (ace high), suit, code and colour."""
    label = FACE_LABEL.get(rank, str(rank)) + SUIT_LETTER[suit]
    return {"code": label, "suit": suit, "rank": rank, "label": label,
            "color": "red" if suit in RED_SUITS else "black"}


def standard_faces() -> list[dict]:
    """The 52 cards, suit by suit, each suit from two to ace."""
    return [card_face(suit, rank) for suit in SUIT_ORDER for rank in ACE_HIGH]


def joker_faces() -> list[dict]:
    """The two jokers in the network's face shape: suit "joker", rank 16 (small) and 17 (big)."""
    return [{"code": "SJ", "suit": "joker", "rank": 16, "label": "Small Joker", "color": "black"},
            {"code": "BJ", "suit": "joker", "rank": 17, "label": "Big Joker", "color": "red"}]


def fresh_seed() -> str:
    """A seed nobody else can guess, for a deal the leader keeps to itself."""
    return secrets.token_hex(32)


def shuffled(items: list, seed: str) -> list:
    """A copy of `items` in the order `seed` determines."""
    if not isinstance(seed, str) or not seed or len(seed.encode("utf-8")) > 256:
        raise ValueError("a deck seed must be 1-256 UTF-8 bytes")
    order = list(items)
    stream = _RandomStream(seed)
    for top in range(len(order) - 1, 0, -1):
        pick = stream.below(top + 1)
        order[top], order[pick] = order[pick], order[top]
    return order


def table_seed(options: dict, *labels) -> str:
    """The seed of one deal: from the `deal_seed` option and the deal's `labels` (hand or
    board number, restarts) when a test pins it, else a fresh secret."""
    pinned = options.get("deal_seed")
    if isinstance(pinned, str) and pinned:
        return ":".join([pinned, *map(str, labels)])
    return fresh_seed()


def new_deck(faces: list[dict], seed: str, copies: int = 1) -> dict:
    """A shuffled deck of `copies` packs of `faces` (each card's `copy` says which pack): every
    card gets an id that names nothing about its face. A face is flat (its values are text,
    numbers, booleans or null), so a copy of a card is a copy of one dict (`_copy`)."""
    for face in faces:
        nested = [key for key, value in face.items() if isinstance(value, (dict, list))]
        if nested:
            raise ValueError(f"a card face is flat, but {nested[0]!r} of {face.get('code', face)!r} is not")
    catalog = {}
    for index, (pack, face) in enumerate((pack, face) for pack in range(copies) for face in faces):
        card_id = hmac.new(seed.encode("utf-8"), f"card:{index}".encode(), hashlib.sha256).hexdigest()[:24]
        catalog[card_id] = {**face, "card_id": card_id, "copy": pack}
    return {"seed": seed, "catalog": catalog, "pile": shuffled(list(catalog), seed),
            "hands": {}, "zones": {}}


def deal(deck: dict, owner: str, count: int = 1) -> None:
    """`count` cards from the top of the pile into `owner`'s hand."""
    deck["hands"].setdefault(owner, []).extend(_take(deck, count))


def reveal(deck: dict, zone: str, count: int) -> list[dict]:
    """`count` cards from the top of the pile into a zone; the cards moved."""
    moved = _take(deck, count)
    deck["zones"].setdefault(zone, []).extend(moved)
    return cards(deck, moved)


def play(deck: dict, owner: str, card_id: str, zone: str) -> dict:
    """Moves one card from `owner`'s hand to a zone; a copy of the card."""
    held = deck["hands"].get(owner, [])
    if card_id not in held:
        raise ValueError("that card is not in the hand")
    held.remove(card_id)
    deck["zones"].setdefault(zone, []).append(card_id)
    return _copy(deck["catalog"][card_id])


def play_many(deck: dict, owner: str, card_ids: list, zone: str) -> list[dict]:
    """Moves several cards from `owner`'s hand to a zone, all or none; copies of the cards."""
    held = deck["hands"].get(owner, [])
    if len(set(card_ids)) != len(card_ids) or any(card_id not in held for card_id in card_ids):
        raise ValueError("every card must be a different card in the hand")
    return [play(deck, owner, card_id, zone) for card_id in card_ids]


def move(deck: dict, card_id: str, source: str, target: str) -> dict:
    """Moves one card from one zone to another (a discard claimed into a meld, a unit to the
    discard pile); returns a copy of the card."""
    if card_id not in deck["zones"].get(source, []):
        raise ValueError(f"that card is not in the zone {source}")
    deck["zones"][source].remove(card_id)
    deck["zones"].setdefault(target, []).append(card_id)
    return _copy(deck["catalog"][card_id])


def hand(deck: dict, owner: str) -> list[dict]:
    """Copies of the cards in `owner`'s hand (none if it was not dealt)."""
    return cards(deck, deck["hands"].get(owner, []))


def zone(deck: dict, name: str) -> list[dict]:
    """Copies of the cards in a zone, in the order they arrived."""
    return cards(deck, deck["zones"].get(name, []))


def cards(deck: dict, card_ids: list) -> list[dict]:
    catalog = deck["catalog"]
    return [_copy(catalog[card_id]) for card_id in card_ids]


def _copy(card: dict) -> dict:
    """A card of the catalog, copied: a view or an event never shares a dict with the state.
    One level is all there is (`new_deck` takes flat faces only); `copy.deepcopy` cost a
    view most of its time."""
    return dict(card)


def _take(deck: dict, count: int) -> list:
    if count < 1 or count > len(deck["pile"]):
        raise ValueError(f"cannot take {count} cards from a pile of {len(deck['pile'])}")
    taken = deck["pile"][-count:][::-1]
    del deck["pile"][-count:]
    return taken


class _RandomStream:
    """Uniform integers from HMAC-SHA256(seed, counter) blocks."""

    def __init__(self, seed: str):
        self._key = seed.encode("utf-8")
        self._counter = 0

    def below(self, bound: int) -> int:
        # Reject the top sliver of the 64-bit range so every value is equally likely.
        limit = (1 << 64) - (1 << 64) % bound
        while True:
            block = hmac.new(self._key, self._counter.to_bytes(8, "big"), hashlib.sha256).digest()
            self._counter += 1
            value = int.from_bytes(block[:8], "big")
            if value < limit:
                return value % bound
