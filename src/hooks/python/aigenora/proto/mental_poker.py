"""Mental-poker types visible to hooks: the card-ownership ledger (DeckState) and the verdict a
rules hook returns for a peer's play (ValidationResult). Cryptography lives in the Rust engine."""
from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class DeckState:
    """Where every card id (id-B) currently is; faces are never stored here."""

    guest_hand: set[str] = field(default_factory=set)
    host_hand: set[str] = field(default_factory=set)
    stock: set[str] = field(default_factory=set)
    played: set[str] = field(default_factory=set)

    def hand_of(self, who: str) -> set[str]:
        if who == "host":
            return self.host_hand
        if who == "guest":
            return self.guest_hand
        raise ValueError(f"unknown owner: {who!r}")

    def deal_to(self, who: str, id_b: str) -> None:
        """Move a card from the stock into a hand."""
        hand = self.hand_of(who)
        if id_b not in self.stock:
            raise ValueError(f"deal_to: {id_b!r} not in stock")
        self.stock.discard(id_b)
        hand.add(id_b)

    def play(self, who: str, id_b: str) -> bool:
        """Move a card from a hand to the played pile; False if it is not in that hand."""
        hand = self.hand_of(who)
        if id_b not in hand or id_b in self.played:
            return False
        hand.discard(id_b)
        self.played.add(id_b)
        return True


@dataclass
class ValidationResult:
    """A rules verdict: ok, or rejected with a reason."""

    ok: bool
    reason: str | None = None
