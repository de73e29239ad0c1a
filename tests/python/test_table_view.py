"""The table a person sees (`aigenora.proto.table_view` and each four-seat table's
`proto_group_table`): cards and tiles by face and suit, never codes; and for each of the six
tables, from real views of a dealt and partly played table, every seat in turn order with whose
turn it is, the seat's own hand card for card, the other hands face down (or shown where the
game shows them), and the step's events in words with names for keys; and every kind of event
each table emits over a game played to its end (its deals seeded, a seat away and back, a
change of leader) told in a sentence of its own, never in codes."""
from __future__ import annotations

import copy
import re
import unittest

from table_cases import our_table
from table_steps import MEMBERS

from aigenora.proto import deck, fair_deal, table_view, tiles

TABLES = ("texas-holdem-v1", "contract-bridge-v1", "four-player-landlord-v1", "upgrade-tractor-v1",
          "aether-sigil-v1", "classical-mahjong-v1")
SUITS = {"spades", "hearts", "diamonds", "clubs", "joker", "characters", "dots", "bamboo", "wind", "dragon",
         "plain"}
KEY = re.compile(r"[0-9a-f]{64}")
# Steps the automatic seats play before the views are read (a few actions into the deal).
STEPS = 9
# What a sentence never holds: JSON, an identifier's underscores, a card or tile code, a key.
CODES = re.compile(r"[{}\[\]_\"]|\b(10|[2-9AKQJ])[SHDC]\b|\b[1-9][mps]\b|[0-9a-f]{12}")
# The tables played to their end, and options that keep the longer matches short.
SHORT = {"texas-holdem-v1": {"max_hands": 2}, "upgrade-tractor-v1": {"max_hands": 2},
         "classical-mahjong-v1": {"max_hands": 2}}
# More actions than any of these matches takes.
MOST_ACTIONS = 3000


class Cards(unittest.TestCase):
    def test_cards_and_tiles_are_drawn_by_face_and_suit(self):
        ace, ten = deck.card_face("diamonds", 14), deck.card_face("hearts", 10)
        self.assertEqual(table_view.card(ace), {"suit": "diamonds", "face": "A"})
        self.assertEqual(table_view.card_text(table_view.card(ten)), "10♥")
        small, big = deck.joker_faces()
        self.assertEqual([table_view.card(small)["face"], table_view.card(big)["face"]], ["Small", "Big"])
        self.assertEqual(table_view.card({"rank": "Red Joker", "value": 17, "suit": "joker"})["face"], "Big")
        self.assertEqual(table_view.card({"rank": "10", "value": 10, "suit": "spades"}), {"suit": "spades", "face": "10"})
        faces = {face["code"]: face for face in tiles.faces()}
        self.assertEqual(table_view.card_text(table_view.card(faces["3s"])), "3 bamboo")
        self.assertEqual(table_view.card_text(table_view.card(faces["east"])), "East wind")
        self.assertEqual(table_view.card_text(table_view.card(faces["red"])), "Red dragon")
        named = table_view.card({"name": "Ember Whelp", "card_type": "unit", "cost": 1, "power": 2, "guard": 1})
        self.assertEqual(named, {"suit": "plain", "face": "Ember Whelp", "note": "cost 1, 2/1"})

    def test_an_event_reads_as_a_sentence_with_names_for_keys(self):
        names = {"aa" * 32: "Seat 0 (aaaaaa)", "bb" * 32: "Seat 1 (bbbbbb)"}
        call = {"kind": "holdem_action", "action": {"street": "flop", "public_key": "bb" * 32, "seat": 1,
                                                     "kind": "call", "amount": 20}}
        self.assertEqual(table_view.narrate(call, names), "Seat 1 (bbbbbb) calls, 20 in on the flop.")
        won = {"kind": "bridge_trick_won", "winner": "aa" * 32, "partnership": "ns", "trick_number": 3}
        self.assertEqual(table_view.narrate(won, names), "Seat 0 (aaaaaa) wins trick 3 for NS.")
        bid = {"kind": "bid", "public_key": "bb" * 32, "seat": 1, "level": 3, "denomination": "nt", "value": 14}
        self.assertEqual(table_view.narrate(bid, names), "Seat 1 (bbbbbb) bids 3NT.")
        discard = {"kind": "mahjong_discard", "public_key": "aa" * 32, "card_id": "f" * 24,
                   "card": {code: face for code, face in ((f["code"], f) for f in tiles.faces())}["red"]}
        self.assertEqual(table_view.narrate(discard, names), "Seat 0 (aaaaaa) discards Red dragon.")
        away = {"kind": "member_disconnected", "public_key": "bb" * 32, "reason": fair_deal.SEED_TIMEOUT}
        self.assertEqual(table_view.narrate(away, names),
                         "Seat 1 (bbbbbb) is away: its seed for the deal did not come in time.")
        changed = {"kind": "upgrade_hand_restarted_after_leader_change", "old_leader": "aa" * 32,
                   "new_leader": "bb" * 32, "hand_number": 2}
        self.assertEqual(table_view.narrate(changed, names),
                         "The leader changed from Seat 0 (aaaaaa) to Seat 1 (bbbbbb); the hand starts again.")
        unknown = {"kind": "house_rule", "public_key": "aa" * 32, "detail": {"level": "high"}, "card_id": "f" * 24}
        self.assertFalse(table_view.has_sentence("house_rule"))
        self.assertEqual(table_view.narrate(unknown, names), "Seat 0 (aaaaaa) house rule, detail level high.")
        self.assertLessEqual(len(table_view.narrate({"kind": "x", "text": "y" * 500}, names)),
                             table_view.LONGEST_LINE)


class Tables(unittest.TestCase):
    """Each table dealt with a pinned seed and played a few steps by its automatic seats."""

    def played(self, alias: str):
        hooks = our_table(self, alias, {"deal_seed": "table view"})
        state = hooks.proto_group_initial_state(copy.deepcopy(MEMBERS))
        events = []
        for step in range(STEPS):
            current = state.get("current_player")
            seat = next((m for m in MEMBERS if m["public_key"] == current), MEMBERS[step % 4])
            action = hooks.proto_group_autoplay(hooks.proto_group_view(copy.deepcopy(state), seat), seat)
            if action is None:
                continue
            result = hooks.proto_group_handle(state, seat, action)
            state, events = result["state"], result["events"]
        return hooks, state, events

    def test_each_table_shows_its_seats_hands_and_turn(self):
        for alias in TABLES:
            with self.subTest(alias):
                hooks, state, events = self.played(alias)
                self.assertTrue(events, f"{alias}: the steps made events")
                for member in MEMBERS:
                    view = hooks.proto_group_view(copy.deepcopy(state), member)
                    table = hooks.proto_group_table(copy.deepcopy(view), member, events)
                    self.check(alias, view, table, member)

    def check(self, alias: str, view: dict, table: dict, member: dict):
        me = member["public_key"]
        self.assertEqual([seat["seat"] for seat in table["seats"]],
                         [view["players"][key]["seat"] for key in view["turn_order"]])
        own = [seat for seat in table["seats"] if seat["you"]]
        self.assertEqual(len(own), 1)
        self.assertEqual(own[0]["seat"], member["seat"])
        self.assertEqual(own[0]["cards"], table_view.cards(view["my_hand"]))
        self.assertEqual(own[0]["hidden"], 0)
        for key, seat in zip(view["turn_order"], table["seats"]):
            self.assertEqual(seat["hidden"] + len(seat["cards"]), view["hand_counts"].get(key, 0), alias)
            if view["current_player"]:
                self.assertEqual(seat["to_act"], key == view["current_player"], alias)
        if view["current_player"] == me:
            self.assertTrue(table["turn"].startswith("Your turn: "), table["turn"])
        everything = [card for seat in table["seats"] for card in seat["cards"]] + \
            [card for pile in table["centre"] for card in pile["cards"]]
        for card in everything:
            self.assertIn(card["suit"], SUITS)
            self.assertNotRegex(card["face"], r"^(\d+|[AKQJ])[SHDC]$|^\d[mps]$", "a face, never a code")
        text = repr({name: table[name] for name in ("turn", "log", "centre", "facts", "score")})
        self.assertIsNone(KEY.search(text), f"{alias}: a key spelled out: {text}")
        self.assertTrue(table["log"] and all(isinstance(line, str) for line in table["log"]), alias)


class Narration(unittest.TestCase):
    """Each table played to its end by its automatic seats, two seats seeding every deal, one
    seat away for a while and back, and the leader changed once: every kind of event it emits
    has a sentence of its own, and no sentence holds a code."""

    def played(self, alias: str) -> tuple[list, dict]:
        hooks = our_table(self, alias, {"deal_seed": "narration", **SHORT.get(alias, {})})
        seeding = [MEMBERS[1]["public_key"], MEMBERS[2]["public_key"]]
        hooks.fair_deal_announced(seeding)
        state = hooks.proto_group_initial_state(copy.deepcopy(MEMBERS))
        events = []
        for step in range(MOST_ACTIONS):
            if step == 6:
                result = hooks.proto_group_member_left(state, MEMBERS[3], "left")
            elif step == 12:
                result = hooks.proto_group_member_joined(state, MEMBERS[3])
            elif step == 18:
                result = hooks.proto_group_on_leader_changed(state, MEMBERS[0]["public_key"], MEMBERS[1]["public_key"])
            else:
                result = self.next_move(hooks, state, seeding)
            if result is None:
                break
            state, events = result["state"], events + result["events"]
            if result.get("completed"):
                return events, hooks.proto_group_view(copy.deepcopy(state), MEMBERS[0])
        self.fail(f"{alias} did not end in {MOST_ACTIONS} actions")

    def next_move(self, hooks, state: dict, seeding: list):
        """A seed the deal waits for, else the first automatic seat's move that is taken."""
        fair = state.get("fair_deal") or {}
        if fair.get("status") == "seeding":
            key = fair_deal.waiting(fair)[0]
            seat = next(m for m in MEMBERS if m["public_key"] == key)
            return hooks.proto_group_handle(state, seat, {"kind": "deal_seed", "hand": fair["hand"],
                                                          "seed": f"{seat['seat']:02x}" * 32})
        for seat in sorted(MEMBERS, key=lambda m: m["public_key"] != state.get("current_player")):
            action = hooks.proto_group_autoplay(hooks.proto_group_view(copy.deepcopy(state), seat), seat)
            if action is None:
                continue
            try:
                return hooks.proto_group_handle(copy.deepcopy(state), seat, action)
            except ValueError:
                continue
        return None

    def test_every_event_of_a_played_game_is_told_in_words(self):
        for alias in TABLES:
            with self.subTest(alias):
                events, view = self.played(alias)
                names = table_view.seat_names(view)
                kinds = set()
                for event in events:
                    told = event["action"] if isinstance(event.get("action"), dict) else event
                    kinds.add(told["kind"])
                    self.assertTrue(table_view.has_sentence(told["kind"]), f"{alias}: {told}")
                    line = table_view.narrate(event, names)
                    self.assertIsNone(CODES.search(line), f"{alias}: {line!r} from {event}")
                    self.assertLessEqual(len(line), table_view.LONGEST_LINE)
                self.assertLessEqual({"fair_deal_seed_added", "fair_deal_dealt", "member_disconnected",
                                      "member_rejoined"}, kinds, alias)
                self.assertTrue(any(kind.endswith(table_view.RESTARTED) for kind in kinds), alias)


if __name__ == "__main__":
    unittest.main()
