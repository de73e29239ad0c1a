"""Our Four-player Landlord table (src/protocols/well_known/four-player-landlord-v1) and the SDK's
climbing-game rules it plays by (aigenora.proto.climbing): every combination and what beats
what, worked out by hand; every play a hand can make; the score with its multipliers; every
bidding and play rule a leader enforces, with its reason and the state untouched; the bottom,
the lead coming back after three passes and the round's end; what each seat may see; a seat
whose member is gone played for it and a new leader dealing the next round; the automatic
seat's bids and plays; four automatic seats to the round's score; and the same table side by
side with the reference's hooks (the same bids and plays taken or refused, the same view
shapes and, where no card decides it, the same values)."""
from __future__ import annotations

import copy
import json
import time
import unittest
from collections import Counter

from table_cases import TableChoices, TableRules, TableSideBySide, our_table
from table_steps import MEMBERS
from test_well_known import load_module

from aigenora.proto import climbing, deck

LANDLORD = load_module("four-player-landlord-v1")
KEYS = [m["public_key"] for m in MEMBERS]
VALUES = {rank: value for value, rank in enumerate(climbing.RANKS, start=3)} | {"BJ": 16, "RJ": 17}


def hand(codes: str) -> list[dict]:
    """Cards from ranks such as "3 3 10 A 2 BJ RJ" (suits in turn, so each card differs)."""
    made = []
    for index, code in enumerate(codes.split()):
        joker = code in ("BJ", "RJ")
        made.append({"rank": {"BJ": "Black Joker", "RJ": "Red Joker"}.get(code, code), "value": VALUES[code],
                     "suit": "joker" if joker else climbing.SUITS[index % 4], "card_id": f"c{index}",
                     "copy": 0})
    return made


def kind(codes: str) -> tuple:
    made = climbing.classify(hand(codes))
    return made["kind"], made["primary"], made["length"], made["tier"]


class Combinations(unittest.TestCase):
    def test_every_kind_the_contract_names(self):
        cases = {
            "7": ("single", 7, 1, 0), "BJ": ("single", 16, 1, 0),
            "9 9": ("pair", 9, 2, 0), "2 2 2": ("triple", 15, 3, 0),
            "K K K 4": ("triple_single", 13, 4, 0), "5 5 5 J J": ("triple_pair", 5, 5, 0),
            "3 4 5 6 7": ("straight", 7, 5, 0), "10 J Q K A": ("straight", 14, 5, 0),
            "3 4 5 6 7 8 9 10 J Q K A": ("straight", 14, 12, 0),
            "6 6 7 7 8 8": ("pair_straight", 8, 6, 0),
            "8 8 8 9 9 9": ("airplane", 9, 6, 0),
            "8 8 8 9 9 9 3 BJ": ("airplane_single", 9, 8, 0),
            "Q Q Q K K K A A A 4 4 5 5 6 6": ("airplane_pair", 14, 15, 0),
            "6 6 6 6 3 9": ("four_two_single", 6, 6, 0), "6 6 6 6 3 3": ("four_two_single", 6, 6, 0),
            "6 6 6 6 3 3 9 9": ("four_two_pair", 6, 8, 0),
            "4 4 4 4": ("bomb", 4, 4, 1), "2 2 2 2 2 2 2 2": ("bomb", 15, 8, 1),
            "BJ RJ": ("joker_bomb", 17, 2, 2), "BJ BJ": ("joker_bomb", 16, 2, 2),
            "BJ BJ RJ RJ": ("joker_bomb", 17, 4, 2),
        }
        for codes, expected in cases.items():
            self.assertEqual(kind(codes), expected, codes)

    def test_what_is_no_combination(self):
        for codes in ("3 4", "3 3 4 4", "3 4 5 6", "J Q K A 2", "Q K A 2 3", "3 4 5 7 8",
                      "K K A A 2 2", "8 8 8 10 10 10", "2 2 2 A A A", "8 8 8 9 9 9 3 3",
                      "8 8 8 9 9 9 3 4 4 5", "6 6 6 6 3 3 9", "6 6 6 6 3 3 3 9", "5 5 5 5 6 6 6 6",
                      "3 3 3 3 3 BJ", "7 7 7 5 5 5"):
            with self.assertRaisesRegex(ValueError, "not a combination"):
                climbing.classify(hand(codes))

    def test_what_beats_what(self):
        beats = lambda a, b: climbing.beats(climbing.classify(hand(a)), climbing.classify(hand(b)))
        self.assertTrue(beats("8", "7"))
        self.assertFalse(beats("7", "7"), "the same rank does not beat")
        self.assertFalse(beats("8 8", "7"), "another kind does not beat")
        self.assertTrue(beats("4 5 6 7 8", "3 4 5 6 7"))
        self.assertFalse(beats("4 5 6 7 8 9", "3 4 5 6 7"), "another length does not beat")
        self.assertTrue(beats("RJ", "BJ"))
        self.assertTrue(beats("3 3 3 3", "Q Q Q K K K A A A 4 4 5 5 6 6"), "a bomb beats any normal play")
        self.assertTrue(beats("3 3 3 3 3", "2 2 2 2"), "more cards beat fewer")
        self.assertTrue(beats("5 5 5 5", "4 4 4 4"))
        self.assertFalse(beats("4 4 4 4", "4 4 4 4"))
        self.assertTrue(beats("BJ BJ", "2 2 2 2 2 2 2 2"), "jokers beat any same-rank bomb")
        self.assertTrue(beats("BJ BJ RJ", "BJ RJ"), "more jokers beat fewer")
        self.assertTrue(beats("RJ RJ", "BJ RJ") is False and beats("BJ RJ", "BJ BJ"))
        self.assertFalse(beats("2 2 2 2", "BJ BJ"))
        self.assertFalse(beats("6 6 6 6 3 9", "5 5 5 5"), "four with two is no bomb")

    def test_every_play_a_hand_can_make_is_that_combination(self):
        held = hand("3 4 4 5 5 5 6 6 6 7 7 7 8 9 9 9 9 2 2 BJ RJ")
        found = climbing.plays(held)
        for play in found:
            self.assertEqual(climbing.classify(play.cards), play.combination)
            self.assertTrue(all(card in held for card in play.cards))
        kinds = Counter(play.combination["kind"] for play in found)
        self.assertEqual(kinds["joker_bomb"], 1, "BJ RJ")
        self.assertEqual(kinds["bomb"], 1, "9 9 9 9")
        self.assertEqual(kinds["single"], 10)
        straights = sorted(p.combination["length"] for p in found if p.combination["kind"] == "straight")
        self.assertEqual(straights, [5, 5, 5, 6, 6, 7], "3-7, 4-8, 5-9; 3-8, 4-9; 3-9")
        planes = {(p.combination["kind"], p.combination["primary"]) for p in found if "airplane" in p.combination["kind"]}
        self.assertIn(("airplane", 7), planes)
        single_wings = next(p for p in found if p.combination["kind"] == "airplane_single"
                            and p.combination["length"] == 8 and p.combination["primary"] == 6)
        self.assertEqual(sorted(c["value"] for c in single_wings.cards), [3, 5, 5, 5, 6, 6, 6, 8],
                         "wings from the ranks it empties first, the lowest")
        previous = climbing.classify(hand("8 8"))
        self.assertEqual(sorted(p.combination["primary"] for p in climbing.beating(held, previous)
                                if p.combination["tier"] == 0), [9, 15])


class Scoring(unittest.TestCase):
    def test_the_base_doubles_per_bomb_and_the_landlord_takes_or_pays_three(self):
        order = KEYS
        self.assertEqual(LANDLORD.score_delta(order, KEYS[1], "landlord", 2, 0), dict(zip(KEYS, [-2, 6, -2, -2])))
        self.assertEqual(LANDLORD.score_delta(order, KEYS[1], "farmers", 2, 0), dict(zip(KEYS, [2, -6, 2, 2])))
        self.assertEqual(LANDLORD.score_delta(order, KEYS[0], "landlord", 3, 2), dict(zip(KEYS, [36, -12, -12, -12])))
        self.assertEqual(LANDLORD.score_delta(order, KEYS[3], "farmers", 1, 3), dict(zip(KEYS, [8, 8, 8, -24])))
        for bid, bombs in ((1, 0), (2, 1), (3, 5)):
            self.assertEqual(sum(LANDLORD.score_delta(order, KEYS[2], "farmers", bid, bombs).values()), 0)


class Table(TableRules):
    alias = "four-player-landlord-v1"
    options = {"deal_seed": "rules"}

    def conserved(self, state):
        table = state["deck"]
        held = sum(map(len, table["hands"].values())) + len(table["zones"].get("played", [])) + len(table["pile"])
        self.assertEqual(held, 108, "no card is made or lost")

    def held(self, seat: int) -> list[dict]:
        return deck.hand(self.state["deck"], KEYS[seat])

    def bids(self, *values) -> None:
        for value in values:
            self.act(KEYS.index(self.state["current_player"]), kind="bid", value=value)

    def rig(self, *hands: str) -> None:
        """After the bidding, gives each seat in turn exactly the ranks in `hands` (the rest
        of the cards go to the pile)."""
        table = self.state["deck"]
        free = sorted(table["catalog"], key=lambda card_id: table["catalog"][card_id]["value"])
        for seat, codes in enumerate(hands):
            chosen = []
            for code in codes.split():
                card_id = next(c for c in free if table["catalog"][c]["value"] == VALUES[code])
                free.remove(card_id)
                chosen.append(card_id)
            table["hands"][KEYS[seat]] = chosen
        table["pile"] = free

    def ids(self, seat: int, codes: str) -> list[str]:
        left = self.held(seat)
        chosen = []
        for code in codes.split():
            card = next(c for c in left if c["value"] == VALUES[code])
            left.remove(card)
            chosen.append(card["card_id"])
        return chosen

    def play(self, seat: int, codes: str) -> dict:
        return self.act(seat, kind="play", card_ids=self.ids(seat, codes))

    def test_twenty_five_cards_each_and_an_eight_card_bottom_from_two_packs(self):
        self.assertEqual([len(self.held(seat)) for seat in range(4)], [25] * 4)
        self.assertEqual(len(self.state["deck"]["pile"]), 8)
        faces = Counter((c["rank"], c["suit"]) for c in self.state["deck"]["catalog"].values())
        self.assertEqual((len(faces), set(faces.values())), (54, {2}))
        packs = Counter(c["copy"] for c in self.state["deck"]["catalog"].values())
        self.assertEqual(packs, {0: 54, 1: 54}, "each card says which pack it is from")
        self.assertEqual((self.state["phase"], self.state["current_player"]), ("bidding", KEYS[0]))
        with self.assertRaisesRegex(ValueError, "exactly four"):
            self.table.proto_group_initial_state(copy.deepcopy(MEMBERS[:3]))

    def test_every_illegal_bid_is_refused_with_its_reason(self):
        self.refused(1, "not your turn: seat 0 acts now", kind="bid", value=1)
        self.refused(0, "the bidding takes only bid", kind="play", card_ids=[])
        for value in (4, -1, True, "1", 1.0, None):
            self.refused(0, "a bid is 0 \\(pass\\), 1, 2 or 3", kind="bid", value=value)
        self.bids(1)
        self.refused(0, "not your turn: seat 1 acts now", kind="bid", value=2)

    def test_the_first_highest_bid_wins_and_takes_the_bottom(self):
        bottom = deck.cards(self.state["deck"], self.state["deck"]["pile"])
        self.bids(1, 0, 2)
        self.assertEqual(self.state["phase"], "bidding")
        result = self.act(3, kind="bid", value=2)
        self.assertEqual((self.state["landlord"], self.state["highest_bid"]), (KEYS[2], 2), "the first 2")
        self.assertEqual(result["events"][-1]["kind"], "landlord_selected")
        self.assertEqual([len(self.held(seat)) for seat in range(4)], [25, 25, 33, 25])
        self.assertEqual(sorted(c["card_id"] for c in self.state["bottom_revealed"]),
                         sorted(c["card_id"] for c in bottom))
        self.assertEqual([self.state["players"][k]["role"] for k in KEYS], ["farmer", "farmer", "landlord", "farmer"])
        self.assertEqual(self.state["current_player"], KEYS[2], "the Landlord leads")

    def test_a_bid_of_three_ends_the_bidding_and_four_passes_redeal(self):
        self.bids(0, 3)
        self.assertEqual((self.state["phase"], self.state["landlord"]), ("playing", KEYS[1]))
        self.setUp()
        first = [c["card_id"] for c in self.held(0)]
        self.bids(0, 0, 0)
        result = self.act(3, kind="bid", value=0)
        self.assertEqual([e["kind"] for e in result["events"]], ["bid", "all_passed_redeal"])
        self.assertEqual((self.state["phase"], self.state["round_number"], self.state["bids"]), ("bidding", 2, {}))
        self.assertEqual(self.state["recovery_notice"], "All Members passed; the authority redealt.")
        self.assertNotEqual([c["card_id"] for c in self.held(0)], first, "a fresh deal")
        self.assertEqual(self.state["current_player"], KEYS[0])

    def test_every_illegal_play_is_refused_with_its_reason(self):
        self.bids(3)
        self.rig("3 3 3 3 5 6 6 8", "4 4 7 7 9", "A A", "K")
        self.refused(1, "not your turn: seat 0 acts now", kind="pass")
        self.refused(0, "you lead: play a combination, you cannot pass", kind="pass")
        self.refused(0, "the play takes play or pass", kind="bid", value=1)
        for bad in ([], "x", [1], self.ids(0, "5") * 2, self.ids(0, "3") * 9):
            self.refused(0, "card_ids must be a list of different card ids from your hand", kind="play", card_ids=bad)
        self.refused(0, "not in your hand", kind="play", card_ids=self.ids(1, "4"))
        self.refused(0, "not a combination", kind="play", card_ids=self.ids(0, "5 6"))
        self.play(0, "6 6")
        self.refused(1, "a single does not beat the last play, a pair", kind="play", card_ids=self.ids(1, "9"))
        self.refused(1, "a pair does not beat the last play, a pair", kind="play", card_ids=self.ids(1, "4 4"))
        self.play(1, "7 7")
        self.refused(2, "a single does not beat", kind="play", card_ids=self.ids(2, "A"))
        self.act(2, kind="pass")
        self.act(3, kind="pass")
        self.play(0, "3 3 3 3")
        self.assertEqual(self.state["bombs"], 1)
        self.refused(0, "not your turn", kind="pass")
        self.act(1, kind="pass")
        self.act(2, kind="pass")
        result = self.act(3, kind="pass")
        self.assertEqual(result["events"][-1], {"kind": "trick_reset", "public_key": KEYS[0]})
        self.assertEqual((self.state["last_play"], self.state["passes"], self.state["current_player"]),
                         (None, 0, KEYS[0]), "three passes give the lead back")
        self.refused(0, "you lead", kind="pass")
        self.state["last_play"] = {"public_key": KEYS[0], "combination": climbing.classify(hand("5"))}
        self.refused(0, "your own play stands", kind="pass")

    def test_the_landlord_going_out_wins_three_bases(self):
        self.bids(3)
        self.rig("8", "3", "4", "5")
        result = self.play(0, "8")
        self.assertEqual((result["completed"], result["outcome"]), (True, "landlord"))
        self.assertEqual(result["events"][-1], {"kind": "game_over", "outcome": "landlord", "winner": KEYS[0],
                                                "score_delta": dict(zip(KEYS, [9, -3, -3, -3]))})
        self.assertEqual((self.state["phase"], self.state["scores"]), ("completed", dict(zip(KEYS, [9, -3, -3, -3]))))
        self.refused(0, "the round is complete", kind="pass")

    def test_a_farmer_going_out_wins_for_all_three_doubled_per_bomb(self):
        self.bids(0, 2, 0, 0)
        self.rig("3 4", "5 5 5 5 9", "K K K K 6", "8")
        self.play(1, "5 5 5 5")
        self.play(2, "K K K K")
        for seat in (3, 0, 1):
            self.act(seat, kind="pass")
        self.assertEqual((self.state["current_player"], self.state["bombs"]), (KEYS[2], 2))
        result = self.play(2, "6")
        self.assertEqual((result["completed"], result["outcome"]), (True, "farmers"))
        delta = dict(zip(KEYS, [8, -24, 8, 8]))  # base: bid 2, doubled twice
        self.assertEqual(result["events"][-1], {"kind": "game_over", "outcome": "farmers", "winner": KEYS[2],
                                                "score_delta": delta})
        self.assertEqual(self.state["scores"], delta)

    def test_a_seat_sees_its_own_hand_and_only_counts_of_the_others(self):
        for moment in ("bidding", "playing"):
            if moment == "playing":
                self.bids(2, 3)
                lowest = min(self.held(1), key=lambda card: card["value"])
                self.act(1, kind="play", card_ids=[lowest["card_id"]])
            bottom = {c["card_id"] for c in self.state["bottom_revealed"]}
            played = set(self.state["deck"]["zones"].get("played", []))
            for seat in range(4):
                view = self.view(seat)
                text = json.dumps(view)
                self.assertEqual(sorted(c["card_id"] for c in view["my_hand"]), sorted(c["card_id"] for c in self.held(seat)))
                self.assertEqual(view["hand_counts"], {k: len(deck.hand(self.state["deck"], k)) for k in KEYS})
                self.assertNotIn("deck", view)
                self.assertNotIn(self.state["deck"]["seed"], text)
                self.assertEqual(view["you"]["is_landlord"], KEYS[seat] == self.state["landlord"])
                for other in set(range(4)) - {seat}:
                    for card in self.held(other):
                        if card["card_id"] not in bottom | played:
                            self.assertNotIn(card["card_id"], text, (moment, seat, other))
                for card_id in self.state["deck"]["pile"]:
                    self.assertNotIn(card_id, text, "the bottom is hidden until it is taken")

    def test_a_seat_whose_member_left_is_played_for_it_and_a_new_leader_deals_the_next_round(self):
        self.bids(1)
        result = self.table.proto_group_member_left(self.state, MEMBERS[1], "left")
        self.state = result["state"]
        self.assertIn(KEYS[1], self.state["bids"], "seat 1's bid was made for it")
        self.assertEqual(self.state["current_player"], KEYS[2])
        self.assertEqual(result["events"][0]["kind"], "member_disconnected")
        snapshot = self.table.proto_group_recovery_snapshot(self.state)
        self.assertNotIn("deck", json.dumps(snapshot))
        snapshot["scores"] = dict(zip(KEYS, [6, -2, -2, -2]))
        restored = self.table.proto_group_restore(copy.deepcopy(snapshot), copy.deepcopy(MEMBERS[1:]), 1)
        self.assertEqual((restored["round_number"], restored["restart_count"], restored["away"]), (2, 1, [KEYS[0]]))
        self.assertEqual(restored["scores"], dict(zip(KEYS, [6, -2, -2, -2])))
        self.assertIn(KEYS[0], restored["bids"], "seat 0 bid first, and was played for")
        self.assertEqual(restored["recovery_notice"], "The previous private deal was discarded after a Leader change.")
        result = self.play_out(self.table, restored, MEMBERS[1:])
        self.assertEqual(sum(result["state"]["scores"].values()), 0)
        back = self.table.proto_group_member_joined(restored, MEMBERS[0])["state"]
        self.assertEqual(back["away"], [])
        with self.assertRaisesRegex(ValueError, "one member in each of seats 0-3"):
            self.table.proto_group_restore({"round_number": 1}, copy.deepcopy(MEMBERS[1:]), 1)

    def test_four_automatic_seats_play_the_round_to_its_score(self):
        outcomes = Counter()
        for number in range(12):
            table = our_table(self, self.alias, {"deal_seed": f"auto {number}"})
            state = table.proto_group_initial_state(copy.deepcopy(MEMBERS))
            result = self.play_out(table, state)
            state = result["state"]
            outcomes[result["outcome"]] += 1
            final = result["events"][-1]
            self.assertEqual(len(deck.hand(state["deck"], final["winner"])), 0, "the winner went out")
            self.assertTrue(all(deck.hand(state["deck"], k) for k in KEYS if k != final["winner"]))
            self.assertEqual(final["score_delta"], LANDLORD.score_delta(
                KEYS, state["landlord"], result["outcome"], state["highest_bid"], state["bombs"]))
            self.assertEqual(state["scores"], final["score_delta"])
            self.assertEqual(result["outcome"], "landlord" if final["winner"] == state["landlord"] else "farmers")
            self.assertIsNone(table.proto_group_autoplay(table.proto_group_view(state, MEMBERS[0]), MEMBERS[0]))
        self.assertEqual(set(outcomes), {"landlord", "farmers"}, outcomes)


class AutomaticSeat(unittest.TestCase):
    def view(self, codes: str, last: str | None = None, by: int = 1, me: int = 0, landlord: int = 0,
             counts: int = 20) -> dict:
        played = hand(last) if last else None
        return {"phase": "playing", "you": {"public_key": KEYS[me]}, "my_hand": hand(codes),
                "landlord": KEYS[landlord], "turn_order": KEYS, "highest_bid": 0,
                "hand_counts": {k: counts for k in KEYS} | {KEYS[me]: len(codes.split())},
                "last_play": played and {"public_key": KEYS[by], "cards": played,
                                         "combination": climbing.classify(played)}}

    def pick(self, *args, **kwargs) -> str | None:
        view = self.view(*args, **kwargs)
        chosen = LANDLORD.choose_play(view)
        if chosen is None:
            return None
        return " ".join(card["rank"] for card in sorted(chosen.cards, key=lambda c: c["value"]))

    def test_it_leads_the_lowest_complete_combination(self):
        self.assertEqual(self.pick("3 4 5 6 7 9 9 K"), "3 4 5 6 7", "a run from the lowest card")
        self.assertEqual(self.pick("3 4 4 5 5 6 6 7 K"), "3", "a run that would break pairs is not led")
        self.assertEqual(self.pick("4 4 5 5 6 6 9 K"), "4 4 5 5 6 6")
        self.assertEqual(self.pick("5 5 5 6 6 6 3 8 K A"), "3 5 5 5 6 6 6 8", "a plane, the low card a wing")
        self.assertEqual(self.pick("3 7 7 7 K K K 9 9 J"), "3 7 7 7", "the lower triple takes it")
        self.assertEqual(self.pick("3 3 3 3 7 7 K"), "7 7", "a bomb is not led while anything else is held")
        self.assertEqual(self.pick("8 8 8 J"), "8 8 8 J", "the whole hand at once")
        self.assertEqual(self.pick("3 3 3 3 5 5 5 5"), "3 3 3 3", "only bombs left: the smallest")
        self.assertEqual(self.pick("3 3 3 3 BJ RJ"), "3 3 3 3 Black Joker Red Joker", "out as four with two")

    def test_it_beats_cheaply_keeps_bombs_and_lets_a_partner_stand(self):
        self.assertEqual(self.pick("6 6 8 8 8 K K", "5 5"), "6 6", "the lowest pair that breaks nothing")
        self.assertEqual(self.pick("6 8 8 8 K K A", "5"), "6")
        self.assertEqual(self.pick("8 8 8 K K A", "5"), "A", "a lone card before breaking a group")
        self.assertIsNone(self.pick("3 4 4 4 4 9 10 K", "A"), "a bomb is kept while nobody is close to out")
        self.assertEqual(self.pick("3 4 4 4 4 9 10 K", "A", counts=5), "4 4 4 4", "an opponent near out: bomb")
        self.assertEqual(self.pick("3 4 4 4 4 K", "A"), "4 4 4 4", "itself near out: bomb")
        self.assertIsNone(self.pick("6 6 8 8", "5 5", by=2, me=1, landlord=0), "a fellow Farmer's play stands")
        self.assertEqual(self.pick("6 6 8 8", "5 5", by=0, me=1, landlord=0), "6 6", "the Landlord's is beaten")
        self.assertEqual(self.pick("9 9", "5 5", by=2, me=1, landlord=0), "9 9", "going out even over a partner")
        self.assertIsNone(self.pick("3 4", "BJ RJ", counts=1), "nothing beats it")

    def test_it_bids_its_hands_strength_only_above_the_highest_bid(self):
        view = lambda codes, highest: {"my_hand": hand(codes), "highest_bid": highest}
        weak = "3 4 5 6 7 8 9 10 J Q K 3 4 5 6 7 8 9 10 J Q K 3 4 5"
        strong = "RJ BJ 2 2 2 2 A A 3 4 5 6 7 8 9 10 J Q K 3 4 5 6 7 8"
        self.assertEqual(LANDLORD.hand_strength(hand(strong)), 3 + 2 + 8 + 2 + 3)
        self.assertEqual(LANDLORD.choose_bid(view(weak, 0)), 0)
        self.assertEqual(LANDLORD.choose_bid(view(strong, 0)), 3)
        middling = "2 2 2 A A BJ RJ 3 4 5 6 7 8 9 10 J Q K"  # 6 + 2 + 2 + 3 = 13
        self.assertEqual(LANDLORD.choose_bid(view(middling, 0)), 1)
        self.assertEqual(LANDLORD.choose_bid(view(middling, 1)), 0, "no higher than the highest bid: pass")

    def test_a_decision_stays_within_a_small_time_budget(self):
        big = "3 3 4 4 4 5 5 5 6 6 6 7 7 7 7 8 8 9 9 9 10 10 J J Q Q K K A A 2 BJ RJ"
        started = time.perf_counter()
        for last in (None, "3", "3 3", "3 4 5 6 7", "3 3 3 4 4 4 5 5 6 6"):
            self.pick(big, last)
        self.assertLess((time.perf_counter() - started) / 5, 0.25, "well under the turn's budget")


class SideBySide(TableSideBySide):
    alias = "four-player-landlord-v1"
    # What the deal decides: the cards, and so the bottom, the last play and the played pile.
    CARDS = {"my_hand", "bottom_revealed", "last_play", "discard"}

    def card_decided(self, view):
        return self.CARDS

    def test_bidding_with_every_refusal_then_plays_and_passes_agree(self):
        bid = lambda value: {"kind": "bid", "value": value}
        steps = [{"seat": 1, "action": bid(1)}] + [{"action": a} for a in [
            {"kind": "play", "card_ids": []}, bid(4), bid(-1), bid(True), bid("1"), bid(None),
            bid(1), bid(0), bid(2), bid(2)]]
        steps += [{"action": {"kind": "pass"}}, {"cards": "unheld"}, {"action": {"kind": "play", "card_ids": []}},
                  {"action": {"kind": "play", "card_ids": "x"}}, {"cards": "lowest"},
                  {"action": {"kind": "pass"}}, {"action": {"kind": "pass"}}, {"action": {"kind": "pass"}},
                  {"action": {"kind": "pass"}}, {"cards": "lowest"}, {"action": {"kind": "pass"}}]
        ours = self.both(None, steps, {"deal_seed": "side"})
        statuses = [step["status"] for step in ours[1:]]
        self.assertEqual(statuses[:11], ["refused"] * 7 + ["ok"] * 4)
        self.assertEqual(statuses[11:], ["refused"] * 4 + ["ok"] * 4 + ["refused", "ok", "ok"])
        view = ours[-1]["views"][2]
        self.assertEqual((view["landlord"], view["you"]["is_landlord"], view["passes"]), (KEYS[2], True, 1))
        self.assertEqual(view["hand_counts"], dict(zip(KEYS, [25, 25, 31, 25])))

    def test_a_redeal_after_four_passes_and_a_new_leaders_round_agree(self):
        ours = self.both(None, [{"action": {"kind": "bid", "value": 0}}] * 4 + [{"action": {"kind": "bid", "value": 3}}],
                         {"deal_seed": "out"})
        self.assertEqual((ours[4]["views"][0]["round_number"], ours[-1]["views"][0]["phase"]), (2, "playing"))
        start = {"round_number": 3, "restart_count": 0, "scores": dict(zip(KEYS, [9, -3, -3, -3]))}
        ours = self.both(start, [{"action": {"kind": "bid", "value": 2}}], {"deal_seed": "again"})
        first = ours[0]["views"][0]
        self.assertEqual((first["round_number"], first["restart_count"], first["scores"]),
                         (4, 1, dict(zip(KEYS, [9, -3, -3, -3]))))


if __name__ == "__main__":
    unittest.main()


class LandlordChoices(TableChoices, unittest.TestCase):
    alias = "four-player-landlord-v1"
    options = {"deal_seed": "choices"}
    judged_picks = ("Play cards you pick",)
    steered_seeds = (1,)
