"""Mental-poker types and helpers visible to hooks: the card-ownership ledger (DeckState), the
verdict a rules hook returns for a peer's play (ValidationResult), the table view the engine
installs into the hooks' `state`, and the local choice of an action in every control mode.
Cryptography lives in the Rust engine; hooks only ever see card ids and their own faces."""
from __future__ import annotations

TYPE_CHECKING = False  # typing costs every process ~2 ms to import; annotations are strings
if TYPE_CHECKING:
    from typing import Any


class DeckState:
    """Where every card id (id-B) currently is; faces are never stored here. (Written out
    rather than a dataclass: importing dataclasses costs every process ~5 ms.)"""

    def __init__(self, guest_hand: set[str] | None = None, host_hand: set[str] | None = None,
                 stock: set[str] | None = None, played: set[str] | None = None):
        self.guest_hand = set() if guest_hand is None else guest_hand
        self.host_hand = set() if host_hand is None else host_hand
        self.stock = set() if stock is None else stock
        self.played = set() if played is None else played

    def __repr__(self) -> str:
        return (f"DeckState(guest_hand={self.guest_hand!r}, host_hand={self.host_hand!r}, "
                f"stock={self.stock!r}, played={self.played!r})")

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return ((self.guest_hand, self.host_hand, self.stock, self.played)
                == (other.guest_hand, other.host_hand, other.stock, other.played))

    __hash__ = None  # mutable, like the dataclass the reference uses

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


class ValidationResult:
    """A rules verdict: ok, or rejected with a reason."""

    __match_args__ = ("ok", "reason")

    def __init__(self, ok: bool, reason: str | None = None):
        self.ok, self.reason = ok, reason

    def __repr__(self) -> str:
        return f"ValidationResult(ok={self.ok!r}, reason={self.reason!r})"

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return (self.ok, self.reason) == (other.ok, other.reason)

    __hash__ = None


def install_table(state: dict, role: str, hand: list, host_hand: list, guest_hand: list,
                  stock: list, played: list, stalled: bool) -> None:
    """The engine's view of the table, as `state` keys: `_mp_role`, `_mp_hand` (this side's card
    ids), `_mp_hand_cards` (id -> (rank, suit)), `_mp_deck_view` (a DeckState) and, once both
    sides passed in a row, `_mp_stalled`. `hand` holds (id, rank, suit) triples."""
    cards = {id_b: (rank, suit) for id_b, rank, suit in hand}
    state["_mp_role"] = role
    state["_mp_hand"] = set(cards)
    state["_mp_hand_cards"] = cards
    state["_mp_deck_view"] = DeckState(set(guest_hand), set(host_hand), set(stock), set(played))
    if stalled:
        state["_mp_stalled"] = True


def select_local_action(hooks: Any, state: dict, action_seq: int) -> dict:
    """This side's action for its `action_seq`-th turn. The snapshot shows the hand and the legal
    actions; in human control the decision submitted for the window (checked by
    `proto_mp_coerce_action`, a bad one is rejected), in hybrid control a decision already
    submitted when it checks out, and otherwise `proto_mp_choose_action`. An explicit decision
    also goes through `proto_mp_apply_local_action`."""
    deck = state.get("_mp_deck_view")
    human = hooks.control_mode == "human"
    opponent = "guest" if state.get("_mp_role") == "host" else "host"
    hand = [{"id_b": id_b, "rank": int(face[0]), "suit": int(face[1])}
            for id_b, face in sorted((state.get("_mp_hand_cards") or {}).items())]
    card_name = getattr(hooks, "card_name", None)
    if callable(card_name):  # hooks that name their cards: controllers show (and play) the names
        for card in hand:
            card["label"] = card_name((card["rank"], card["suit"]))
    hooks.snapshot.update(
        phase="action_required" if human else "playing",
        action_seq=action_seq,
        hand=hand,
        legal_actions=hooks.proto_mp_legal_actions(state),
        stock_count=len(deck.stock) if deck is not None else 0,
        opponent_hand_count=len(deck.hand_of(opponent)) if deck is not None else 0,
        last_event={
            "summary": "Choose a card action" if human else "Selecting card action",
            "structured": {"action_seq": action_seq, "control_mode": hooks.control_mode},
        },
    )
    explicit = None
    if human:
        decision = hooks._await_human_decision("action_seq", action_seq)
        try:
            explicit = hooks.proto_mp_coerce_action(state, decision)
        except (KeyError, TypeError, ValueError) as exc:
            hooks._reject_human_decision("action_seq", action_seq, decision, str(exc))
    elif hooks.control_mode == "hybrid":
        decision = hooks._consume_hybrid("action_seq", action_seq)
        if decision is not None:
            try:
                explicit = hooks.proto_mp_coerce_action(state, decision)
            except (KeyError, TypeError, ValueError) as exc:
                from aigenora.proto.events import EventBus

                EventBus(hooks.state_dir).emit("local_decision_rejected", data={
                    "match_key": "action_seq", "match_value": action_seq,
                    "reason": str(exc), "decision": decision,
                })
    if explicit is None:
        return hooks.proto_mp_choose_action(state)
    hooks.proto_mp_apply_local_action(state, explicit)
    hooks.snapshot.update(
        phase="action_submitted",
        last_event={
            "summary": f"Submitted {explicit.get('kind', 'action')}",
            "structured": {"action_seq": action_seq, "action": explicit},
        },
    )
    return explicit
