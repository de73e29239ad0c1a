"""Our Texas Hold'em table (src/protocols/well_known/texas-holdem-v1) and the SDK helpers it
deals and ranks with (aigenora.proto.deck, poker_hands): hand ranking, against the reference's
ranking too; the seeded deck; every betting rule a leader enforces, with its reason; side pots
and the uncalled bet; what each seat may see; leaving, failover and the automatic seat; and the
same table played side by side with the reference's hooks (the same actions taken or refused,
the same view shapes and, where no card decides it, the same values)."""
from __future__ import annotations

import copy
import importlib
import json
import random
import sys
import types
import unittest
from collections import Counter

import harness
from table_cases import TableChoices, TableRules, TableSideBySide, our_table
from table_steps import MEMBERS

from aigenora.proto import deck, poker_hands

OURS = harness.OUR_PROTOCOLS / "well_known" / "texas-holdem-v1"
KEYS = [m["public_key"] for m in MEMBERS]


def card(code: str) -> dict:
    rank, suit = code[:-1], code[-1]
    ranks = {"J": 11, "Q": 12, "K": 13, "A": 14}
    suits = {"C": "clubs", "D": "diamonds", "H": "hearts", "S": "spades"}
    return deck.card_face(suits[suit], ranks.get(rank) or int(rank))


def hand(codes: str) -> list[dict]:
    return [card(code) for code in codes.split()]


def reference_poker():
    """The reference's poker module, loaded from its file under a private package name."""
    package = types.ModuleType("reference_proto")
    package.__path__ = [str(harness.REFERENCE_PACKAGE / "proto")]
    sys.modules["reference_proto"] = package
    return importlib.import_module("reference_proto.poker")


class Ranking(unittest.TestCase):
    def rank(self, codes: str) -> list[int]:
        return poker_hands.hand_rank(hand(codes))

    def test_categories_and_tie_breaks(self):
        cases = [("AS KS QS JS 10S 2C 3D", "straight_flush", [8, 14]),
                 ("AH 2H 3H 4H 5H KC KD", "straight_flush", [8, 5]),
                 ("9C 9D 9H 9S 2C 3D KH", "four_of_a_kind", [7, 9, 13]),
                 ("7C 7D 7H 2S 2C 2D KH", "full_house", [6, 7, 2]),
                 ("2H 5H 9H JH KH AH 3C", "flush", [5, 14, 13, 11, 9, 5]),
                 ("AC 2D 3H 4S 5C KD KH", "straight", [4, 5]),
                 ("9C 10D JH QS KC AD 2H", "straight", [4, 14]),
                 ("7C 7D 7H 2S 4C 9D KH", "three_of_a_kind", [3, 7, 13, 9]),
                 ("7C 7D 4H 4S 2C 2D KH", "two_pair", [2, 7, 4, 13]),
                 ("7C 7D 4H 3S 2C 9D KH", "one_pair", [1, 7, 13, 9, 4]),
                 ("7C 8D 4H 3S 2C 9D KH", "high_card", [0, 13, 9, 8, 7, 4])]
        for codes, name, expected in cases:
            rank = self.rank(codes)
            self.assertEqual((poker_hands.category(rank), rank), (name, expected), codes)
        self.assertGreater(self.rank("AH AD KC 2S 3S 7C 9D"), self.rank("AS AC QC 2D 3H 7D 9S"))
        self.assertEqual(self.rank("AH KD 2C 2S 5S 5C 9D"), self.rank("AS KC 2D 2H 5H 5D 9S"))
        with self.assertRaisesRegex(ValueError, "same card twice"):
            self.rank("AH AH 2C 3D 4S")
        with self.assertRaisesRegex(ValueError, "five to seven"):
            self.rank("AH KH")

    def test_random_hands_order_as_the_reference_orders_them(self):
        theirs = reference_poker()
        faces = deck.standard_faces()
        draw = random.Random(24)
        for _ in range(3000):
            dealt = draw.sample(faces, 9)
            board, first, second = dealt[:5], dealt[5:7], dealt[7:]
            ours = [poker_hands.hand_rank(board + hole) for hole in (first, second)]
            ref = [tuple(theirs.best_poker_hand(board + hole)["rank"]) for hole in (first, second)]
            self.assertEqual((ours[0] > ours[1]) - (ours[0] < ours[1]),
                             (ref[0] > ref[1]) - (ref[0] < ref[1]), [c["code"] for c in dealt])
            self.assertEqual(poker_hands.category(ours[0]),
                             theirs.best_poker_hand(board + first)["category"])

    def test_side_pots_and_the_uncalled_excess(self):
        pots = poker_hands.side_pots({"a": 50, "b": 200, "c": 200, "d": 10}, {"d"})
        self.assertEqual(pots, [{"amount": 40, "eligible": ["a", "b", "c"]},
                                {"amount": 120, "eligible": ["a", "b", "c"]},
                                {"amount": 300, "eligible": ["b", "c"]}])
        self.assertEqual(poker_hands.uncalled_excess({"a": 300, "b": 120, "c": 0}), ("a", 180))
        self.assertIsNone(poker_hands.uncalled_excess({"a": 300, "b": 300}))


class Deck(unittest.TestCase):
    def test_a_seed_fixes_the_order_and_ids_say_nothing_of_faces(self):
        one, again = (deck.new_deck(deck.standard_faces(), "seed") for _ in range(2))
        other = deck.new_deck(deck.standard_faces(), "other seed")
        self.assertEqual(one["pile"], again["pile"])
        self.assertNotEqual([one["catalog"][i]["code"] for i in one["pile"]],
                            [other["catalog"][i]["code"] for i in other["pile"]])
        self.assertEqual(len({c["code"] for c in one["catalog"].values()}), 52)
        self.assertTrue(set(one["catalog"]).isdisjoint(other["catalog"]))
        deck.deal(one, "me", 2)
        shown = deck.reveal(one, "board", 3)
        self.assertEqual((len(deck.hand(one, "me")), len(shown), len(one["pile"])), (2, 3, 47))
        self.assertEqual(deck.hand(one, "nobody"), [])
        with self.assertRaisesRegex(ValueError, "cannot take 48"):
            deck.reveal(one, "board", 48)
        with self.assertRaisesRegex(ValueError, "1-256"):
            deck.shuffled([1, 2], "")

    def test_cards_shown_are_copies_and_faces_must_be_flat(self):
        pack = deck.new_deck(deck.standard_faces(), "copies")
        deck.deal(pack, "me", 2)
        before = json.dumps(pack, sort_keys=True)
        shown = deck.hand(pack, "me") + deck.reveal(pack, "board", 1)
        shown.append(deck.play(pack, "me", shown[0]["card_id"], "played"))
        shown.append(deck.move(pack, shown[0]["card_id"], "played", "discards"))
        shown += deck.zone(pack, "discards") + deck.cards(pack, list(pack["catalog"]))
        after = json.dumps(pack, sort_keys=True)
        for card in shown:
            self.assertEqual(card, pack["catalog"][card["card_id"]])
            card["rank"] = 99  # a view or an event edited: the deck's own card stays as it was
        self.assertEqual(json.dumps(pack, sort_keys=True), after)
        self.assertNotEqual(before, after)  # (the cards moved, their faces did not change)
        self.assertTrue(all(card["rank"] != 99 for card in pack["catalog"].values()))
        with self.assertRaisesRegex(ValueError, "a card face is flat, but 'extra' of '2C' is not"):
            deck.new_deck([{**deck.standard_faces()[0], "extra": {"nested": 1}}], "nested")

    def test_the_shuffle_is_even(self):
        # Where the first card lands over many seeds: every place about equally often.
        places = Counter(deck.shuffled(list(range(8)), f"s{n}").index(0) for n in range(8000))
        self.assertEqual(set(places), set(range(8)))
        for count in places.values():
            self.assertLess(abs(count - 1000), 150, places)


class Table(TableRules):
    alias = "texas-holdem-v1"
    options = {"deal_seed": "rules", "max_hands": 3}

    def conserved(self, state):
        self.assertEqual(chips(state), 4000, "no chip is made or lost")

    def test_blinds_and_every_illegal_action_is_refused_with_its_reason(self):
        players = self.state["players"]
        self.assertEqual([players[k]["street_contribution"] for k in KEYS], [0, 5, 10, 0])
        self.assertEqual(self.state["current_player"], KEYS[3])
        self.refused(0, "not your turn: seat 3 acts now", kind="call")
        self.refused(3, "cannot check facing a wager: 10 to call", kind="check")
        self.refused(3, "raise instead of bet", kind="bet", amount=40)
        self.refused(3, "at least 20 unless it is all in", kind="raise", amount=15)
        self.refused(3, "at most 1000", kind="raise", amount=1001)
        self.refused(3, "whole number", kind="raise", amount="30")
        self.refused(3, "whole number", kind="raise", amount=True)
        self.refused(3, "kind must be", kind="dance")
        self.act(3, kind="raise", amount=30)
        self.assertEqual(self.view(0)["legal"], {"to_call": 30, "min_raise_to": 50, "max_to": 1000,
                                                 "can_raise": True})
        self.act(0, kind="call")
        self.act(1, kind="fold")
        self.act(2, kind="call")
        self.assertEqual((self.state["street"], len(self.view(0)["board"])), ("flop", 3))
        self.refused(2, "no wager to raise: bet instead", kind="raise", amount=40)
        self.refused(2, "at least 10", kind="bet", amount=5)
        self.refused(2, "nothing to call", kind="call")
        self.act(2, kind="check")
        self.act(3, kind="bet", amount=40)
        self.act(0, kind="raise", amount=100)
        self.act(2, kind="fold")
        result = self.act(3, kind="fold")
        self.assertEqual(result["events"][-2]["kind"], "holdem_uncontested")
        self.assertEqual(self.state["hand_number"], 2)
        self.assertEqual(self.state["players"][KEYS[0]]["stack"], 1000 - 130 + 30 * 3 + 5 + 100 + 40)

    def test_a_short_all_in_does_not_reopen_and_side_pots_pay_out(self):
        self.state = self.table.proto_group_restore(
            {"hand_number": 3, "button_index": 0, "restart_count": 0,
             "hand_start_stacks": dict(zip(KEYS, [900, 60, 1000, 1040]))}, copy.deepcopy(MEMBERS), 1)
        total = chips(self.state)
        act = lambda seat, **a: self.table.proto_group_handle(self.state, MEMBERS[seat], a)
        self.state = act(3, kind="call")["state"]
        self.state = act(0, kind="raise", amount=40)["state"]
        self.state = act(1, kind="all_in")["state"]  # 60: a raise of 20, short of 30
        self.assertFalse(self.view(0)["legal"]["can_raise"])
        self.state = act(2, kind="call")["state"]
        self.state = act(3, kind="call")["state"]
        self.refused(0, "does not reopen", kind="raise", amount=400)
        self.refused(0, "does not reopen", kind="all_in")
        self.state = act(0, kind="call")["state"]
        self.assertEqual(self.state["street"], "flop")
        while self.state["phase"] == "betting":
            seat = KEYS.index(self.state["current_player"])
            owed = self.view(seat)["legal"]["to_call"]
            move = {2: "fold", 3: "all_in"}.get(seat, "call" if owed else "check")
            self.state = act(seat, kind=move)["state"]
        self.assertEqual(chips(self.state), total)
        self.assertEqual(self.state["uncalled_refunds"][KEYS[3]], 1040 - 900)
        self.assertEqual([(p["amount"], p["eligible"]) for p in self.state["pot_results"]],
                         [(240, sorted([KEYS[0], KEYS[1], KEYS[3]])), (1680, sorted([KEYS[0], KEYS[3]]))])
        shown = self.state["showdown_hands"]
        self.assertEqual(sorted(shown), sorted([KEYS[0], KEYS[1], KEYS[3]]))
        board = deck.zone(self.state["deck"], "board")
        for key, seen in shown.items():
            self.assertEqual(seen["rank"], poker_hands.hand_rank(seen["cards"] + board))
        best = max(shown[k]["rank"] for k in (KEYS[0], KEYS[3]))
        side_winners = [k for k in (KEYS[0], KEYS[3]) if shown[k]["rank"] == best]
        self.assertEqual(self.state["pot_results"][1]["winners"], sorted(side_winners))

    def test_a_seat_sees_its_own_cards_and_the_board_never_anothers(self):
        hidden = lambda seat: {c["card_id"] for c in deck.hand(self.state["deck"], KEYS[seat])}
        for street, shown in (("preflop", 0), ("flop", 3), ("turn", 4), ("river", 5)):
            self.assertEqual(self.state["street"], street)
            for seat in range(4):
                view = self.view(seat)
                text = json.dumps(view)
                self.assertEqual({c["card_id"] for c in view["my_hand"]}, hidden(seat))
                self.assertEqual(view["board_count"], shown)
                for other in set(range(4)) - {seat}:
                    for card_id in hidden(other):
                        self.assertNotIn(card_id, text)
                self.assertNotIn("deck", view)
                self.assertNotIn(self.state["deck"]["seed"], text)
            while self.state["street"] == street and self.state["hand_number"] == 1:
                seat = KEYS.index(self.state["current_player"])
                owed = self.view(seat)["legal"]["to_call"]
                result = self.act(seat, kind="call" if owed else "check")
        showdown = next(e for e in result["events"] if e["kind"] == "holdem_showdown")
        self.assertEqual(sorted(showdown["hands"]), sorted(KEYS), "every hand is shown at showdown")
        self.assertEqual(self.state["hand_number"], 2)

    def test_a_member_who_leaves_folds_and_sits_out_and_a_new_leader_redeals(self):
        result = self.table.proto_group_member_left(self.state, MEMBERS[3], "left")
        self.state = result["state"]
        self.assertTrue(self.state["players"][KEYS[3]]["folded"])
        self.assertEqual(self.state["current_player"], KEYS[0])
        self.act(0, kind="raise", amount=50)
        snapshot = self.table.proto_group_recovery_snapshot(self.state)
        self.assertNotIn("deck", json.dumps(snapshot))
        restored = self.table.proto_group_restore(copy.deepcopy(snapshot), copy.deepcopy(MEMBERS[:3]), 1)
        self.assertEqual(restored["hand_start_stacks"], dict(zip(KEYS, [1000] * 4)),
                         "the interrupted hand is refunded")
        self.assertEqual(chips(restored), 4000)
        self.assertEqual((restored["restart_count"], restored["away"]), (1, [KEYS[3]]))
        self.assertTrue(restored["players"][KEYS[3]]["folded"])
        self.assertEqual(self.table.proto_group_view(restored, MEMBERS[3])["my_hand"], [])
        back = self.table.proto_group_member_joined(restored, MEMBERS[3])["state"]
        self.assertEqual(back["away"], [])

    def test_four_automatic_seats_play_the_match_to_its_end(self):
        table = our_table(self, "texas-holdem-v1", {"deal_seed": "auto", "max_hands": 6})
        state = table.proto_group_initial_state(copy.deepcopy(MEMBERS))
        kinds = Counter()
        for _ in range(600):
            chosen = [table.proto_group_autoplay(table.proto_group_view(copy.deepcopy(state), m), m)
                      for m in MEMBERS]
            movers = [(m, a) for m, a in zip(MEMBERS, chosen) if a is not None]
            self.assertEqual([m["public_key"] for m, _ in movers], [state["current_player"]])
            actor, action = movers[0]
            kinds[action["kind"]] += 1
            result = table.proto_group_handle(state, actor, action)
            state = result["state"]
            self.assertEqual(chips(state), 4000)
            if result.get("completed"):
                break
        self.assertEqual(state["phase"], "completed")
        self.assertEqual(result["outcome"], max(KEYS, key=lambda k: state["players"][k]["stack"]))
        self.assertGreater(len(kinds), 2, kinds)
        self.assertIsNone(table.proto_group_autoplay(table.proto_group_view(state, MEMBERS[0]), MEMBERS[0]))

    def test_the_automatic_seat_raises_aces_and_folds_rags_to_a_big_bet(self):
        from importlib.util import module_from_spec, spec_from_file_location
        spec = spec_from_file_location("our_holdem", OURS / "hooks.py")
        holdem = module_from_spec(spec)
        spec.loader.exec_module(holdem)
        view = self.view(3)
        view["my_hand"] = hand("AS AH")
        self.assertEqual(holdem.choose(view, KEYS[3])["kind"], "raise")
        view.update(my_hand=hand("7C 2D"), pot_total=800, current_bet=600)
        view["legal"].update(to_call=590)
        self.assertEqual(holdem.choose(view, KEYS[3]), {"kind": "fold"})


def chips(state: dict) -> int:
    """Every chip at the table: stacks and what is in the pot (paid out once the match ends)."""
    pot = sum(state["contributions"].values()) if state["phase"] == "betting" else 0
    return sum(p["stack"] for p in state["players"].values()) + pot


# Fields a card decides: the cards themselves, and (after a showdown) who won what.
CARD_FIELDS = {"my_hand", "board", "showdown_hands"}


class SideBySide(TableSideBySide):
    """The same table on our hooks and the reference's: every action taken or refused alike,
    every view of the same shape, and every value no card decides the same."""

    alias = "texas-holdem-v1"

    def card_decided(self, view):
        return None if view["phase"] == "completed" else CARD_FIELDS

    def test_folded_hands_and_refusals_agree(self):
        steps = [{"seat": 0, "action": {"kind": "call"}}] + [{"action": a} for a in [
            {"kind": "check"}, {"kind": "bet", "amount": 40}, {"kind": "raise", "amount": 15},
            {"kind": "raise", "amount": 5000}, {"kind": "raise", "amount": "30"}, {"kind": "dance"},
            {"kind": "raise", "amount": 30}, {"kind": "call"}, {"kind": "fold"},
            {"kind": "raise", "amount": 100}, {"kind": "fold"}, {"kind": "fold"},
            # hand 2: four limp in, then betting on the flop, turn and river
            {"kind": "call"}, {"kind": "call"}, {"kind": "call"}, {"kind": "check"},
            {"kind": "raise", "amount": 20}, {"kind": "bet", "amount": 5}, {"kind": "check"},
            {"kind": "bet", "amount": 20}, {"kind": "raise", "amount": 60}, {"kind": "fold"},
            {"kind": "fold"}, {"kind": "call"}, {"kind": "check"}, {"kind": "check"},
            {"kind": "bet", "amount": 50}, {"kind": "fold"}]]
        ours = self.both(None, steps, {"deal_seed": "side", "max_hands": 3})
        last = ours[-1]["views"][0]
        self.assertEqual((last["hand_number"], last["street"]), (3, "preflop"))

    def test_a_short_all_in_and_side_pots_at_showdown_agree(self):
        start = {"hand_number": 2, "button_index": 0, "restart_count": 0,
                 "hand_start_stacks": dict(zip(KEYS, [900, 60, 1000, 1040]))}
        steps = [{"action": a} for a in [
            {"kind": "call"}, {"kind": "raise", "amount": 40}, {"kind": "all_in"}, {"kind": "call"},
            {"kind": "call"}, {"kind": "raise", "amount": 400}, {"kind": "all_in"}, {"kind": "call"},
            {"kind": "check"}, {"kind": "bet", "amount": 100}, {"kind": "call"}, {"kind": "fold"},
            {"kind": "check"}, {"kind": "check"}, {"kind": "all_in"}, {"kind": "call"}]]
        ours = self.both(start, steps, {"deal_seed": "pots", "max_hands": 2})
        self.assertTrue(ours[-1]["completed"])


if __name__ == "__main__":
    unittest.main()


class HoldemChoices(TableChoices, unittest.TestCase):
    alias = "texas-holdem-v1"
    options = {"max_hands": 2, "deal_seed": "choices"}
