"""Trick taking with the standard cards (the face shape of `aigenora.proto.deck`): which cards
a hand may play to a trick, and which card wins it. An extension beyond the reference SDK's
API (stdlib only), for our four-seat trick games' leaders and their automatic seats."""
from __future__ import annotations


def playable(hand: list[dict], trick: list[dict]) -> list[dict]:
    """The cards of `hand` that may go to `trick` (the cards played so far, the lead first):
    any card to lead; else the led suit when the hand has it, any card when it has none."""
    if not trick:
        return list(hand)
    led = trick[0]["suit"]
    following = [card for card in hand if card["suit"] == led]
    return following or list(hand)


def check_follows(hand: list[dict], card: dict, trick: list[dict]) -> None:
    """ValueError, with the rule, when `card` from `hand` may not go to `trick`."""
    if card not in playable(hand, trick):
        raise ValueError(f"you must follow the led suit ({trick[0]['suit']}) while you hold it")


def winner(trick: list[dict], trump: str | None) -> int:
    """The index of the card that wins a trick: the highest trump if any was played, else the
    highest card of the suit led (a discard of another suit never wins)."""
    if not trick:
        raise ValueError("an empty trick has no winner")
    led = trick[0]["suit"]

    def strength(index: int) -> tuple[int, int]:
        card = trick[index]
        return (2 if card["suit"] == trump else 1 if card["suit"] == led else 0, card["rank"])

    return max(range(len(trick)), key=strength)
