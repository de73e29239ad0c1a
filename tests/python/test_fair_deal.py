"""Fair deals (aigenora.proto.fair_deal) at our six four-seat tables: the commitment and the
deck's seed; each table waiting for the announced seats' seeds, showing no card meanwhile,
then dealing with its own code from every seed; every refused seed with its reason; a seat
that leaves while the deal waits, and one whose seed never comes (never awaited again); how
long a deal waits; the seed opened when a hand ends; and a member's check,
which passes on the committed deal and catches a stacked one with its evidence."""
from __future__ import annotations

import copy
import json
import unittest

from table_cases import our_table
from table_steps import MEMBERS

from aigenora.proto import fair_deal

TABLES = ("texas-holdem-v1", "contract-bridge-v1", "four-player-landlord-v1", "upgrade-tractor-v1",
          "aether-sigil-v1", "classical-mahjong-v1")
KEYS = [m["public_key"] for m in MEMBERS]
# Seat 0 leads; seats 1 and 2 are ours and announced themselves; seat 3 is a reference member.
OURS = KEYS[1:3]
SEEDS = {KEYS[1]: "1a" * 32, KEYS[2]: "2b" * 32}


def fair_table(test, alias: str, options: dict | None = None):
    table = our_table(test, alias, options or {})
    table.fair_deal_announced(OURS)
    return table


def seed(table, state, seat: int, **changes) -> dict:
    action = {"kind": "deal_seed", "hand": state["fair_deal"]["hand"], "seed": SEEDS.get(KEYS[seat], "3c" * 32)}
    action.update(changes)
    return table.proto_group_handle(state, MEMBERS[seat], action)


def faces(deck: dict, key: str) -> list:
    """The faces in `key`'s hand (what a card is, not which copy or id)."""
    return [{k: v for k, v in deck["catalog"][card_id].items() if k not in ("card_id", "copy")}
            for card_id in deck["hands"][key]]


def views(table, state) -> list:
    return [table.proto_group_view(copy.deepcopy(state), m) for m in MEMBERS]


class Derivation(unittest.TestCase):
    def test_the_deck_seed_is_the_leaders_alone_without_seeds_and_mixes_every_seed(self):
        leader = "ab" * 32
        self.assertEqual(fair_deal.deck_seed(leader, {}), leader)
        mixed = fair_deal.deck_seed(leader, SEEDS)
        self.assertRegex(mixed, "^[0-9a-f]{64}$")
        self.assertEqual(fair_deal.deck_seed(leader, dict(reversed(list(SEEDS.items())))), mixed)
        self.assertNotEqual(fair_deal.deck_seed(leader, {**SEEDS, KEYS[2]: "2c" * 32}), mixed)
        self.assertNotEqual(fair_deal.deck_seed("cd" * 32, SEEDS), mixed)
        self.assertEqual(fair_deal.commitment(leader), fair_deal.commitment(leader))
        self.assertNotEqual(fair_deal.commitment(leader), fair_deal.commitment("cd" * 32))
        self.assertNotIn(leader, fair_deal.commitment(leader))

    def test_a_seed_is_64_lowercase_hex(self):
        self.assertTrue(fair_deal.is_seed("0f" * 32))
        for bad in ("0F" * 32, "0f" * 31, "0f" * 33, "zz" * 32, 7, None):
            self.assertFalse(fair_deal.is_seed(bad), bad)


class EveryTable(unittest.TestCase):
    def test_each_table_waits_for_the_announced_seeds_then_deals_from_all_of_them(self):
        for alias in TABLES:
            with self.subTest(alias):
                table = fair_table(self, alias)
                state = table.proto_group_initial_state(copy.deepcopy(MEMBERS))
                fair = state["fair_deal"]
                self.assertEqual((fair["status"], fair["awaited"]), ("seeding", sorted(OURS)))
                secret = fair["leader_seed"]
                for member, view in zip(MEMBERS, views(table, state)):
                    self.assertEqual(view["my_hand"], [], "no card is shown before the deal")
                    self.assertEqual(view["fair_deal"]["commitment"], fair_deal.commitment(secret))
                    self.assertNotIn(secret, json.dumps(view), "the leader's seed stays secret")
                    self.assertIsNone(table.proto_group_autoplay(view, member))
                    self.assertEqual(table.proto_group_choices(view, member), [],
                                     "no seat is offered a move before the deal")
                mover = next(m for m in MEMBERS if m["public_key"] == state.get("current_player")) \
                    if state.get("current_player") else MEMBERS[0]
                with self.assertRaisesRegex(ValueError, "not dealt yet: 2 seat"):
                    table.proto_group_handle(copy.deepcopy(state), mover, {"kind": "pass"})
                alone = table.fair_deal_again(fair["deal"], secret)["deck"]
                self.assertEqual(state["deck"], alone, "meanwhile the leader's seed alone dealt")
                state = seed(table, state, 1)["state"]
                self.assertEqual(state["fair_deal"]["status"], "seeding")
                self.assertEqual(views(table, state)[0]["fair_deal"]["contributions"], {},
                                 "the seeds stay hidden while the deal waits")
                result = seed(table, state, 2)
                state = result["state"]
                self.assertEqual(state["fair_deal"]["status"], "dealt")
                self.assertIn("fair_deal_dealt", [event["kind"] for event in result["events"]])
                mixed = fair_deal.deck_seed(secret, SEEDS)
                self.assertEqual(state["deck"], table.fair_deal_again(fair["deal"], mixed)["deck"])
                self.assertNotEqual(faces(state["deck"], KEYS[1]), faces(alone, KEYS[1]),
                                    "the seats' seeds changed the cards dealt")
                first = views(table, state)
                self.assertTrue(all(view["my_hand"] for view in first), "every seat holds its cards")
                opening = fair_deal.opening(state["fair_deal"])
                for member, view in zip(MEMBERS[1:3], first[1:3]):
                    verdict = table.proto_group_check_deal(view, opening, member, SEEDS[member["public_key"]])
                    self.assertEqual((verdict["verified"], verdict["reason"]), (True, ""), verdict)
                    self.assertEqual(verdict["expected"], verdict["seen"])

    def test_a_table_with_nobody_announced_deals_at_once_as_before(self):
        for alias in TABLES:
            with self.subTest(alias):
                table = our_table(self, alias, {"deal_seed": "as before"})
                state = table.proto_group_initial_state(copy.deepcopy(MEMBERS))
                self.assertEqual(state["fair_deal"]["status"], "dealt")
                self.assertEqual(state["deck"]["seed"], state["fair_deal"]["leader_seed"])
                self.assertTrue(state["deck"]["seed"].startswith("as before:"))
                self.assertTrue(views(table, state)[0]["my_hand"])


class Seeds(unittest.TestCase):
    def setUp(self):
        self.table = fair_table(self, "contract-bridge-v1")
        self.state = self.table.proto_group_initial_state(copy.deepcopy(MEMBERS))

    def refused(self, reason: str, seat: int = 1, state=None, **changes):
        state = state or self.state
        before = copy.deepcopy(state)
        with self.assertRaisesRegex(ValueError, reason):
            seed(self.table, copy.deepcopy(state), seat, **changes)
        self.assertEqual(state, before)

    def test_every_wrong_seed_is_refused_with_its_reason(self):
        self.refused("for hand 'nine'; the deal waiting is hand", hand="nine")
        self.refused("64 lowercase hex", seed="AB" * 32)
        self.refused("64 lowercase hex", seed="ab")
        self.refused("nothing else", extra=1)
        self.refused("did not announce fair deals", seat=3)
        once = seed(self.table, copy.deepcopy(self.state), 1)["state"]
        self.refused("already added its seed", state=once)
        dealt = seed(self.table, once, 2)["state"]
        self.refused("no deal is waiting for seeds", state=dealt)

    def test_a_seat_that_leaves_is_not_waited_for_and_its_leaving_follows_the_deal(self):
        state = seed(self.table, self.state, 1)["state"]
        result = self.table.proto_group_member_left(state, MEMBERS[2], "gone")
        state = result["state"]
        self.assertEqual(state["fair_deal"]["status"], "dealt")
        self.assertEqual(state["fair_deal"]["contributions"], {KEYS[1]: SEEDS[KEYS[1]]})
        self.assertIn(KEYS[2], state["away"], "the seat left once the cards were dealt")
        self.assertEqual(state["deck"], self.table.fair_deal_again(
            state["fair_deal"]["deal"],
            fair_deal.deck_seed(state["fair_deal"]["leader_seed"], state["fair_deal"]["contributions"]))["deck"])
        self.assertNotIn(KEYS[2], self.table.fair_deal_seats)

    def test_a_seat_whose_seed_never_came_is_taken_out_and_never_awaited_again(self):
        state = seed(self.table, self.state, 1)["state"]
        state = self.table.proto_group_member_left(state, MEMBERS[2], fair_deal.SEED_TIMEOUT)["state"]
        self.assertEqual(state["fair_deal"]["status"], "dealt", "dealt from the seeds that came")
        self.assertEqual(state["fair_deal"]["awaited"], [KEYS[1]])
        state = self.table.proto_group_member_joined(state, MEMBERS[2])["state"]
        self.table.fair_deal_announced([KEYS[2]])
        self.assertEqual(self.table.fair_deal_seats, [KEYS[1]], "its announcement is no longer taken")
        # A seat that merely left announces itself again when it comes back.
        self.table.proto_group_member_left(copy.deepcopy(state), MEMBERS[1], "left")
        self.table.fair_deal_announced([KEYS[1]])
        self.assertEqual(self.table.fair_deal_seats, [KEYS[1]])

    def test_a_deal_waits_for_its_seeds_twenty_seconds_or_as_the_room_says(self):
        self.assertEqual(views(self.table, self.state)[1]["fair_deal"]["seed_seconds"], 20)
        quick = fair_table(self, "contract-bridge-v1", {"fair_deal_seed_seconds": 3})
        state = quick.proto_group_initial_state(copy.deepcopy(MEMBERS))
        self.assertEqual(views(quick, state)[3]["fair_deal"]["seed_seconds"], 3)
        for wrong in (0, 121, "5", True):
            table = fair_table(self, "contract-bridge-v1", {"fair_deal_seed_seconds": wrong})
            with self.assertRaisesRegex(ValueError, "fair_deal_seed_seconds must be between 1 and 120"):
                table.proto_group_initial_state(copy.deepcopy(MEMBERS))


class Openings(unittest.TestCase):
    def play_hand_out(self, table, state):
        """Everyone but the big blind folds."""
        for _ in range(3):
            actor = next(m for m in MEMBERS if m["public_key"] == state["current_player"])
            result = table.proto_group_handle(state, actor, {"kind": "fold"})
            state = result["state"]
        return result

    def test_a_hands_seed_is_opened_when_it_ends_and_the_check_passes(self):
        table = fair_table(self, "texas-holdem-v1", {"max_hands": 2})
        state = table.proto_group_initial_state(copy.deepcopy(MEMBERS))
        state = seed(table, seed(table, state, 1)["state"], 2)["state"]
        first = views(table, state)
        hand = copy.deepcopy(state["fair_deal"])
        result = self.play_hand_out(table, state)
        after = views(table, result["state"])[1]["fair_deal"]
        self.assertEqual(after["status"], "seeding", "the next hand waits for its seeds")
        self.assertNotEqual(after["commitment"], hand["commitment"])
        self.assertEqual(after["opening"], {"hand": "1:0", "commitment": hand["commitment"],
                                            "seed": hand["leader_seed"], "contributions": SEEDS})
        verdict = table.proto_group_check_deal(first[1], after["opening"], MEMBERS[1], SEEDS[KEYS[1]])
        self.assertTrue(verdict["verified"], verdict)

    def test_the_last_hand_is_opened_when_the_match_ends(self):
        table = fair_table(self, "texas-holdem-v1", {"max_hands": 1})
        state = table.proto_group_initial_state(copy.deepcopy(MEMBERS))
        state = seed(table, seed(table, state, 1)["state"], 2)["state"]
        result = self.play_hand_out(table, state)
        self.assertTrue(result["completed"])
        opening = views(table, result["state"])[2]["fair_deal"]["opening"]
        self.assertEqual(opening["seed"], state["fair_deal"]["leader_seed"])


class Checks(unittest.TestCase):
    def setUp(self):
        self.table = fair_table(self, "four-player-landlord-v1")
        state = self.table.proto_group_initial_state(copy.deepcopy(MEMBERS))
        self.state = seed(self.table, seed(self.table, state, 1)["state"], 2)["state"]
        self.opening = fair_deal.opening(self.state["fair_deal"])

    def verdict(self, state=None, opening=None, own=SEEDS[KEYS[1]]):
        view = self.table.proto_group_view(copy.deepcopy(state or self.state), MEMBERS[1])
        return self.table.proto_group_check_deal(view, opening or self.opening, MEMBERS[1], own)

    def test_a_stacked_deal_is_caught_with_its_evidence(self):
        stacked = copy.deepcopy(self.state)
        mine, theirs = stacked["deck"]["hands"][KEYS[1]], stacked["deck"]["hands"][KEYS[3]]
        mine[0], theirs[0] = theirs[0], mine[0]
        verdict = self.verdict(stacked)
        self.assertFalse(verdict["verified"])
        self.assertEqual(verdict["reason"], "the cards dealt are not the committed deal's")
        self.assertEqual(verdict["commitment"], self.state["fair_deal"]["commitment"])
        self.assertEqual(verdict["seed"], self.state["fair_deal"]["leader_seed"])
        self.assertEqual(verdict["contributions"], SEEDS)
        self.assertEqual(len(verdict["expected"]), len(verdict["seen"]))
        self.assertNotEqual(fair_deal.canonical(verdict["expected"]), fair_deal.canonical(verdict["seen"]))
        self.assertTrue(self.verdict()["verified"])

    def test_a_wrong_opening_or_a_missing_seed_is_caught(self):
        self.assertEqual(self.verdict(opening={**self.opening, "seed": "other"})["reason"],
                         "the opened seed is not the one the leader committed to")
        self.assertEqual(self.verdict(opening={**self.opening, "contributions": {}})["reason"],
                         "the seeds opened are not the seeds the hand was dealt from")
        self.assertEqual(self.verdict(own="9d" * 32)["reason"], "this seat's seed is not in the deal")
        view = self.table.proto_group_view(copy.deepcopy(self.state), MEMBERS[1])
        view["fair_deal"]["deal"]["method"] = "proto_group_handle"
        verdict = self.table.proto_group_check_deal(view, self.opening, MEMBERS[1], SEEDS[KEYS[1]])
        self.assertEqual(verdict["reason"], "the committed deal cannot be dealt again: "
                                            "'proto_group_handle' is not a deal method of this table")


if __name__ == "__main__":
    unittest.main()
