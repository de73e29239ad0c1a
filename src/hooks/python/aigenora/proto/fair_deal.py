"""Deals nobody can stack at our four-seat tables (between our clients; an extension beyond the
reference SDK's API, stdlib only).

Before a deal the leader commits to its own seed (`commitment`, in every seat's view); each
seat of ours that announced itself to the leader (the leader's session lists them in
`fair_deal_seats`) adds a fresh seed of its own (the action `{"kind": "deal_seed", "hand",
"seed"}`); the deck is shuffled from all of them (`deck_seed`); and once the hand is over the
view opens the leader's seed, so each of those seats deals the hand again with the table's own
code and compares the cards it was dealt (`proto_group_check_deal`). A table with nobody to
wait for (no seat announced itself: a reference member never does) deals at once from the
leader's seed alone, exactly as before.

A table takes part with two lines: `@fair_deals` on its hooks class and `@dealing(<labels>)` on
the method that deals a hand, which takes the deck's seed as its keyword `seed` (the labels
name its keyword arguments that tell one hand from the next, as `table_seed` uses them). While
the seeds are awaited the state is dealt from the leader's seed alone but nobody sees a card,
no seat may act, and members coming or going wait; the last seed swaps the real deck in.

The wait is bounded: every deal carries `seed_seconds` (the room's option
`fair_deal_seed_seconds`, 1 to 120, 20 by default), after which our leader's session takes a
seat still awaited out of the room with the reason `fair_deal_seed_timeout` (its seat is then
away, so the deal goes on from the seeds that came) and awaits that seat's seeds no more."""
from __future__ import annotations

import copy
import functools
import hashlib
import json

from aigenora.proto import deck as cards
from aigenora.proto.options import whole_option

PREFIX = "aigenora-fair-deal-v1"
SEED_ACTION = "deal_seed"
SEED_HEX = 64
EMPTY_DECK = {"seed": "", "catalog": {}, "pile": [], "hands": {}, "zones": {}}
# How long a deal waits for its seeds (the room's option, in seconds: default, least, most).
SEED_SECONDS = ("fair_deal_seed_seconds", 20, 1, 120)
# Why our leader's session took a seat out of the room: its seed did not come in time (the
# leader's session says the same, src/session/room/fair_deal.rs).
SEED_TIMEOUT = "fair_deal_seed_timeout"


def commitment(seed: str) -> str:
    """What the leader shows of its seed before the deal."""
    return hashlib.sha256(f"{PREFIX}:commit:{seed}".encode("utf-8")).hexdigest()


def deck_seed(leader_seed: str, contributions: dict) -> str:
    """The deck's seed: the leader's seed mixed with every seat's seed (by public key); the
    leader's seed itself when no seat added one."""
    if not contributions:
        return leader_seed
    mixed = ":".join([PREFIX, "deck", leader_seed, *(contributions[key] for key in sorted(contributions))])
    return hashlib.sha256(mixed.encode("utf-8")).hexdigest()


def is_seed(value) -> bool:
    """Whether `value` is a seat's seed: 64 lowercase hex characters."""
    return isinstance(value, str) and len(value) == SEED_HEX and all(c in "0123456789abcdef" for c in value)


def dealing(*labels: str):
    """Marks a table's deal method (which takes the deck's seed as `seed`): every call commits
    to a fresh leader's seed and waits for the announced seats' seeds before the real deck."""
    def mark(deal):
        @functools.wraps(deal)
        def committed(self, *args, **kwargs):
            return self.fair_deal_begin(deal, [kwargs[name] for name in labels], args, kwargs)
        committed.fair_deal_dealing = True
        return committed
    return mark


def fair_deals(table: type) -> type:
    """The table's hooks class with fair deals: seeds taken, views and automatic play held
    back while they are awaited, the deal opened when the hand ends, and the members' check."""

    class FairTable(table):
        # Public keys of the seats that announced themselves (set by the leader's session),
        # and of those whose seed did not come in time, never awaited again.
        fair_deal_seats: list = []
        fair_deal_stalled: frozenset = frozenset()

        def fair_deal_announced(self, keys: list) -> None:
            """The leader's session: the seats of these public keys take part in fair deals
            (but a seat that let a deal wait out its time)."""
            self.fair_deal_seats = sorted((set(self.fair_deal_seats) | set(keys)) - self.fair_deal_stalled)

        def fair_deal_begin(self, deal, labels, args, kwargs) -> dict:
            leader_seed = cards.table_seed(self.options, *labels)
            committed = {"method": deal.__name__, "args": copy.deepcopy(list(args)),
                         "kwargs": copy.deepcopy(kwargs)}
            state = deal(self, *args, seed=leader_seed, **kwargs)
            if "fair_deal" in state:
                # The deal ended its own hand and dealt the next (blinds that put every seat
                # all in): the next hand's record stands.
                return state
            awaited = sorted(set(self.fair_deal_seats))
            seeding = bool(awaited) and state.get("phase") != "completed"
            state["fair_deal"] = {
                "hand": ":".join(map(str, labels)) or "1", "commitment": commitment(leader_seed),
                "leader_seed": leader_seed, "status": "seeding" if seeding else "dealt",
                "awaited": awaited if seeding else [], "contributions": {}, "deal": committed,
                "deferred": [], "opening": None, "seed_seconds": whole_option(self.options, *SEED_SECONDS),
            }
            return state

        # -- the leader --------------------------------------------------------------------

        def proto_group_handle(self, state, actor, action):
            fair = state.get("fair_deal")
            if isinstance(action, dict) and action.get("kind") == SEED_ACTION:
                return self.fair_deal_seed(state, actor["public_key"], action)
            if fair and fair["status"] == "seeding":
                raise ValueError(f"the cards are not dealt yet: {len(waiting(fair))} seat(s) still to add their seeds")
            return opened(fair, super().proto_group_handle(state, actor, action))

        def fair_deal_seed(self, state, key, action):
            fair = state.get("fair_deal")
            if not fair or fair["status"] != "seeding":
                raise ValueError("no deal is waiting for seeds now")
            if set(action) != {"kind", "hand", "seed"}:
                raise ValueError("a deal seed is {kind, hand, seed} and nothing else")
            if action["hand"] != fair["hand"]:
                raise ValueError(f"that seed is for hand {str(action['hand'])[:32]!r}; the deal waiting is hand {fair['hand']!r}")
            if not is_seed(action["seed"]):
                raise ValueError("a deal seed is 64 lowercase hex characters")
            if key not in fair["awaited"]:
                raise ValueError("this seat did not announce fair deals, so the deal does not take its seed")
            if key in fair["contributions"]:
                raise ValueError("this seat already added its seed to this deal")
            fair["contributions"][key] = action["seed"]
            result = {"state": state, "events": [{"kind": "fair_deal_seed_added", "public_key": key,
                                                  "hand": fair["hand"]}]}
            return self.fair_deal_dealt(result) if not waiting(fair) else result

        def fair_deal_dealt(self, result: dict) -> dict:
            """Every awaited seed is in: the real deck replaces the leader's, then what waited."""
            state = result["state"]
            fair = state["fair_deal"]
            state["deck"] = self.fair_deal_again(fair["deal"], deck_seed(fair["leader_seed"], fair["contributions"]))["deck"]
            deferred, fair["deferred"], fair["status"] = fair["deferred"], [], "dealt"
            events = result["events"] + [{"kind": "fair_deal_dealt", "hand": fair["hand"],
                                          "commitment": fair["commitment"], "contributions": dict(fair["contributions"])}]
            if hasattr(self, "substitute"):
                result = self.substitute({"state": state, "events": []})
                state, events = result["state"], events + result["events"]
            for hook, args in deferred:
                if result.get("completed"):
                    break
                result = opened(fair, getattr(super(), hook)(state, *args))
                state, events = result["state"], events + result["events"]
            return {**result, "state": state, "events": events}

        def fair_deal_again(self, committed: dict, seed: str) -> dict:
            """The table's own deal of `committed` (method and arguments) from `seed`."""
            marked = getattr(type(self), str(committed["method"]), None)
            if not getattr(marked, "fair_deal_dealing", False):
                raise ValueError(f"{str(committed['method'])[:64]!r} is not a deal method of this table")
            deal = marked.__wrapped__
            return deal(self, *copy.deepcopy(committed["args"]), seed=seed, **copy.deepcopy(committed["kwargs"]))

        def proto_group_member_joined(self, state, member):
            return self.fair_deal_membership("proto_group_member_joined", state, member)

        def proto_group_member_left(self, state, member, reason):
            # A seat that comes back announces itself again, unless it let a deal wait out its time.
            if reason == SEED_TIMEOUT:
                self.fair_deal_stalled = self.fair_deal_stalled | {member["public_key"]}
            self.fair_deal_seats = [key for key in self.fair_deal_seats if key != member["public_key"]]
            fair = state.get("fair_deal")
            if fair and fair["status"] == "seeding" and member["public_key"] in fair["awaited"] \
                    and member["public_key"] not in fair["contributions"]:
                fair["awaited"].remove(member["public_key"])
            return self.fair_deal_membership("proto_group_member_left", state, member, reason)

        def fair_deal_membership(self, hook, state, *args):
            fair = state.get("fair_deal")
            if not fair or fair["status"] != "seeding":
                return opened(fair, getattr(super(), hook)(state, *args))
            fair["deferred"].append([hook, list(args)])
            result = {"state": state, "events": []}
            return self.fair_deal_dealt(result) if not waiting(fair) else result

        def away_to_act(self, state):
            fair = state.get("fair_deal")
            return "" if fair and fair["status"] == "seeding" else super().away_to_act(state)

        # -- what a seat sees --------------------------------------------------------------

        def proto_group_view(self, state, viewer):
            fair = state.get("fair_deal")
            if not fair:
                return super().proto_group_view(state, viewer)
            seen = {**state, "deck": copy.deepcopy(EMPTY_DECK)} if fair["status"] == "seeding" else state
            return {**super().proto_group_view(seen, viewer), "fair_deal": public(fair)}

        def proto_group_autoplay(self, view, member):
            if seeding(view):
                return None
            return super().proto_group_autoplay(view, member)

        if hasattr(table, "proto_group_choices"):
            def proto_group_choices(self, view, member):
                if seeding(view):
                    return []
                return super().proto_group_choices(view, member)

        # -- a member of ours --------------------------------------------------------------

        def proto_group_check_deal(self, first_view, opening, viewer, own_seed=""):
            """Whether the hand this seat was dealt (`first_view`: its first view after the
            deal) is the committed deal, now that `opening` opened the leader's seed: a verdict
            `{verified, reason, expected, seen}`."""
            fair = first_view["fair_deal"]
            key = viewer["public_key"]
            seen = first_view.get("my_hand", [])
            expected = []
            reason = ""
            if commitment(opening.get("seed", "")) != fair["commitment"]:
                reason = "the opened seed is not the one the leader committed to"
            elif opening.get("contributions") != fair["contributions"]:
                reason = "the seeds opened are not the seeds the hand was dealt from"
            elif own_seed and fair["contributions"].get(key) != own_seed:
                reason = "this seat's seed is not in the deal"
            elif key in fair["awaited"] and key not in fair["contributions"]:
                reason = "the hand was dealt without this seat's seed"
            else:
                try:
                    again = self.fair_deal_again(fair["deal"], deck_seed(opening["seed"], fair["contributions"]))
                    expected = super().proto_group_view(again, viewer).get("my_hand", [])
                except (ValueError, KeyError, TypeError, AttributeError) as error:
                    reason = f"the committed deal cannot be dealt again: {error}"
                else:
                    if canonical(expected) != canonical(seen):
                        reason = "the cards dealt are not the committed deal's"
            return {"verified": not reason, "reason": reason, "hand": fair["hand"],
                    "commitment": fair["commitment"], "seed": opening.get("seed", ""),
                    "contributions": fair["contributions"], "expected": expected, "seen": seen}

    FairTable.__name__ = FairTable.__qualname__ = table.__name__
    FairTable.__doc__ = table.__doc__
    FairTable.__module__ = table.__module__
    return FairTable


def seeding(view: dict) -> bool:
    """Whether a seat's view waits on the deal's seeds (no seat may act until it is dealt)."""
    return view.get("fair_deal", {}).get("status") == "seeding"


def waiting(fair: dict) -> list:
    """The awaited seats whose seed has not come."""
    return [key for key in fair["awaited"] if key not in fair["contributions"]]


def public(fair: dict) -> dict:
    """What every seat sees of the deal: the commitment, who is awaited and has added a seed
    (the seeds themselves once the deck is dealt), how long the seeds are awaited, the deal's
    arguments, and the last hand's opening. Never the leader's seed of a hand under way."""
    dealt = fair["status"] == "dealt"
    return {"hand": fair["hand"], "status": fair["status"], "commitment": fair["commitment"],
            "awaited": fair["awaited"], "contributed": sorted(fair["contributions"]),
            "contributions": fair["contributions"] if dealt else {}, "deal": fair["deal"],
            "opening": fair["opening"], "seed_seconds": fair["seed_seconds"]}


def opening(fair: dict) -> dict:
    """The hand's deal, opened: everything a seat needs to deal it again."""
    return {"hand": fair["hand"], "commitment": fair["commitment"], "seed": fair["leader_seed"],
            "contributions": fair["contributions"]}


def opened(before: dict | None, result: dict) -> dict:
    """`result` with the deal `before` opened in its state when that hand is over: the room
    ended, or the state holds the next hand's deal. A deal never dealt is not opened."""
    after = result["state"].get("fair_deal")
    if not before or before["status"] != "dealt" or after is None:
        return result
    if after["commitment"] != before["commitment"]:
        after["opening"] = opening(before)
    elif result.get("completed"):
        after["opening"] = opening(after)
    return result


def canonical(hand: list) -> str:
    return json.dumps(sorted(hand, key=lambda card: card.get("card_id", "")), sort_keys=True)
