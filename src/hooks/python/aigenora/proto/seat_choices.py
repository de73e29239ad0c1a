"""A table seat's legal actions as the choices `proto_group_choices` returns: each
`{"label", "action"}`, a free amount as `"amount": {"field", "min", "max"}`, cards to pick when
their combinations are too many to list as `"pick": {"field", "from": [{"value", "label"}],
"min", "max"}` (the action then lacks that field), labels a person reads ("Call 20", "Play
7♠"), and the bounds every list keeps.
An extension beyond the reference SDK's API (stdlib only), shared by our four-seat tables; the
member that runs them records the list in `room.json` and checks it again (at most
MAX_CHOICES entries, labels of at most MAX_LABEL bytes)."""
from __future__ import annotations

from aigenora.proto import table_view

MAX_CHOICES = 256
MAX_LABEL = 120
MAX_PICK_ITEMS = 64


def choice(label: str, action: dict, amount: tuple[str, int, int] | None = None) -> dict:
    """One choice; `amount` is (field, min, max) for an action with a free amount."""
    entry = {"label": short(label), "action": action}
    if amount is not None:
        field, low, high = amount
        entry["amount"] = {"field": field, "min": low, "max": high}
    return entry


def card_pick(label: str, action: dict, cards: list[dict], low: int, high: int) -> dict:
    """A choice that leaves `low` to `high` of `cards` (at most MAX_PICK_ITEMS, each with its
    `card_id`) to pick, their ids put in the action's `card_ids`."""
    return {"label": short(label), "action": action,
            "pick": {"field": "card_ids", "min": low, "max": high,
                     "from": [{"value": card["card_id"], "label": card_label(card)}
                              for card in cards[:MAX_PICK_ITEMS]]}}


def short(label: str) -> str:
    """`label` cut to MAX_LABEL bytes (on a character boundary, with an ellipsis)."""
    if len(label.encode()) <= MAX_LABEL:
        return label
    while len((label + "…").encode()) > MAX_LABEL:
        label = label[:-1]
    return label + "…"


def card_label(card: dict) -> str:
    """A card as a person reads it: rank and suit symbol as the table draws it (7♠, Q♥, 10♦),
    a joker or any card of no standard suit by its rank or label."""
    if card.get("suit") in table_view.SUIT_SYMBOLS:
        return table_view.card_text(table_view.card(card))
    rank = card.get("rank")
    return str(rank if isinstance(rank, str) else card.get("label", rank))


def cards_label(verb: str, cards: list[dict]) -> str:
    """`verb` and the cards, e.g. "Play 7♠ 7♥"."""
    return short(f"{verb} {' '.join(card_label(card) for card in cards)}")


def bounded(choices: list[dict], keep: dict | None = None, most: int = MAX_CHOICES) -> list[dict]:
    """At most `most` of `choices`, in their order; beyond that the last ones are left out,
    except `keep` (the automatic seat's own action), which takes the last place kept."""
    if len(choices) <= most:
        return choices
    kept = choices[:most]
    if keep is not None and all(entry["action"] != keep for entry in kept):
        wanted = next((entry for entry in choices if entry["action"] == keep), None)
        if wanted is not None:
            kept[-1] = wanted
    return kept
