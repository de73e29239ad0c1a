"""Our Classical Mahjong table (src/protocols/well_known/classical-mahjong-v1) and the SDK's tile
rules it plays by (aigenora.proto.tiles): the winning shapes, chows, score patterns and the
distance to a win, worked out by hand, and the shapes, chows and patterns of 1500 random hands
judged as the reference's rules judge them; the wall and the deal; every turn and claim rule a
leader enforces, with its reason and the state untouched; claims settled by priority; a win by
self-draw and on a discard with their scores, an empty wall, the match's end; what each seat
may see; a seat whose member is gone played for it and a new leader dealing the hand again; the
automatic seat's discards and claims; four automatic seats to the match's end; and the same
table side by side with the reference's hooks (the same actions taken or refused, the same
view shapes and, where no tile decides it, the same values)."""
from __future__ import annotations

import copy
import random
import time
import unittest

import harness
from table_cases import TableChoices, TableRules, TableSideBySide, our_table, pick
from table_steps import MEMBERS
from test_well_known import load_module

from aigenora.proto import deck, tiles

MAHJONG = load_module("classical-mahjong-v1")
KEYS = [m["public_key"] for m in MEMBERS]
FACES = {face["code"]: face for face in tiles.faces()}


def hand(codes: str) -> list[dict]:
    """Tiles from codes such as "1m 2m 3m east" (each a different tile)."""
    return [{**FACES[code], "card_id": f"t{index}", "copy": 0} for index, code in enumerate(codes.split())]


class Tiles(unittest.TestCase):
    def test_the_34_faces_in_the_networks_shape(self):
        made = tiles.faces()
        self.assertEqual(len(made), 34)
        self.assertEqual(made[0], {"code": "1m", "suit": "characters", "rank": 1, "label": "1 characters",
                                   "kind": "numbered"})
        self.assertEqual(made[-1], {"code": "white", "suit": "dragon", "rank": 0, "label": "White", "kind": "honor"})

    def test_the_three_winning_shapes(self):
        cases = {
            "1m 2m 3m 4p 5p 6p 7s 8s 9s east east east 5m 5m": "standard",
            "1m 1m 1m 2m 3m 4m 5m 6m 7m 8m 9m 9m 9m 5m": "standard",  # nine gates with a five
            "1m 1m 2m 2m 3p 3p 4p 4p 9s 9s east east red red": "seven_pairs",
            "1m 9m 1p 9p 1s 9s east south west north red green white white": "thirteen_orphans",
            "1m 2m 3m 4p 5p 6p 7s 8s 9s east east east 5m 6m": None,  # no pair
            "1m 1m 1m 1m 2m 2m 3p 3p 4p 4p 9s 9s red red": "seven_pairs",  # four of a face make two pairs
            "1m 2m 3m 4p 5p 6p 7s 8s 9s east east south": None,  # too few
        }
        for codes, expected in cases.items():
            self.assertEqual(tiles.win_kind(hand(codes), 0), expected, codes)
        self.assertIsNone(tiles.win_kind(hand("1m 1m 1m 2m 2m 2m 3p 3p 4p 4p 9s 9s red red")[:13], 0))
        self.assertEqual(tiles.win_kind(hand("2m 3m 4m 9s 9s"), 3), "standard", "three declared sets")
        self.assertIsNone(tiles.win_kind(hand("1m 1m 2m 2m 3p 3p 4p 4p 9s 9s east"), 1),
                          "seven pairs needs no declared set")

    def test_the_chows_a_discard_allows(self):
        self.assertEqual(tiles.chows(hand("3m 4m 6m 7m"), FACES["5m"]), [("3m", "4m"), ("4m", "6m"), ("6m", "7m")])
        self.assertEqual(tiles.chows(hand("8p 9p 1s 2s"), FACES["7p"]), [("8p", "9p")])
        self.assertEqual(tiles.chows(hand("8m 9m"), FACES["1p"]), [], "no run across suits")
        self.assertEqual(tiles.chows(hand("east south"), FACES["west"]), [], "no run of honours")

    def test_the_patterns_and_their_points(self):
        codes = lambda found: {(p["code"], p["points"]) for p in found}
        self.assertEqual(codes(tiles.patterns(hand("2m 3m 4m 5p 6p 7p 3s 4s 5s 6s 7s 8s 2p 2p"), "standard", [],
                                              self_draw=True, concealed=True)),
                         {("winning_hand", 1), ("self_draw", 1), ("concealed_hand", 1), ("all_simples", 1)})
        self.assertEqual(codes(tiles.patterns(hand("1m 1m 1m 2m 2m 2m 3m 3m 3m 9m 9m 9m east east"), "standard",
                                              ["pung", "pung", "pung", "kong"], self_draw=False, concealed=False)),
                         {("winning_hand", 1), ("all_pungs", 3), ("mixed_one_suit", 3)})
        self.assertEqual(codes(tiles.patterns(hand("1p 1p 2p 2p 3p 3p 4p 4p 5p 5p 6p 6p 9p 9p"), "seven_pairs", [],
                                              self_draw=False, concealed=True)),
                         {("winning_hand", 1), ("concealed_hand", 1), ("seven_pairs", 4), ("pure_one_suit", 6)})

    def test_how_far_a_hand_is_from_a_win(self):
        far = lambda codes, melds=0: tiles.shanten(tiles.counts(hand(codes)), melds)
        self.assertEqual(far("1m 2m 3m 4p 5p 6p 7s 8s 9s east east east 5m 5m"), -1)
        self.assertEqual(far("1m 2m 3m 4p 5p 6p 7s 8s 9s east east east 5m"), 0, "waiting on the 5m")
        self.assertEqual(far("1m 2m 3m 4p 5p 6p 7s 8s 9s east east 5m 6m"), 0, "waiting on a 4m or 7m")
        self.assertEqual(far("1m 1m 2m 2m 3p 3p 4p 4p 9s 9s east east red"), 0, "seven pairs, waiting")
        self.assertEqual(far("1m 9m 1p 9p 1s 9s east south west north red green 5m"), 1, "orphans but one")
        self.assertEqual(far("2m 3m 4m 9s 9s", 3), -1)


class AgreesWithTheReference(unittest.TestCase):
    def test_random_hands_win_and_score_as_the_reference_judges_them(self):
        """Hands built of random sets and a pair, some with a tile changed, some seven pairs:
        the same shape (or none), the same chows, the same patterns."""
        theirs = harness.reference_proto("mahjong")
        draw = random.Random(24)
        wall = [code for code in tiles.CODES for _ in range(4)]
        judged = set()
        for _ in range(1500):
            pool = list(wall)
            draw.shuffle(pool)
            melds = draw.randrange(0, 3)
            if draw.random() < 0.2 and melds == 0:
                codes = [c for pair in draw.sample(tiles.CODES, 7) for c in (pair, pair)]
            else:
                codes = self.sets_and_pair(draw, 4 - melds)
            if draw.random() < 0.4:
                codes[draw.randrange(len(codes))] = draw.choice(tiles.CODES)
            if max(codes.count(c) for c in codes) > 4:
                continue
            made = hand(" ".join(codes))
            ours = tiles.win_kind(made, melds)
            self.assertEqual(ours, theirs.mahjong_win_kind(made, meld_count=melds), codes)
            judged.add(ours)
            self.assertEqual(sorted(tiles.chows(made[1:], made[0])),
                             sorted(tuple(pair) for pair in theirs.chow_sequences(made[1:], made[0])), codes)
            if ours:
                kinds = draw.sample(["chow", "pung", "kong", "concealed_kong"] * 2, melds)
                flags = {"self_draw": draw.random() < 0.5, "concealed": draw.random() < 0.5}
                self.assertEqual(tiles.patterns(made, ours, kinds, **flags),
                                 theirs.classical_core_patterns(made, win_kind=ours, meld_kinds=kinds, **flags))
        self.assertEqual(judged, {None, "standard", "seven_pairs"})

    @staticmethod
    def sets_and_pair(draw: random.Random, sets: int) -> list[str]:
        codes = [draw.choice(tiles.CODES)] * 2
        for _ in range(sets):
            start = draw.randrange(27)
            if start % 9 <= 6 and draw.random() < 0.6:
                codes += [tiles.CODES[start + step] for step in range(3)]
            else:
                codes += [draw.choice(tiles.CODES)] * 3
        return codes


class Table(TableRules):
    alias = "classical-mahjong-v1"
    options = {"deal_seed": "rules", "max_hands": 2}

    def conserved(self, state):
        table = state["deck"]
        ids = table["pile"] + [c for held in table["hands"].values() for c in held] + \
            [c for zone in table["zones"].values() for c in zone]
        self.assertEqual(sorted(ids), sorted(table["catalog"]), "no tile is made or lost")
        self.assertEqual(len(ids), 136)

    def held(self, seat: int) -> list[dict]:
        return deck.hand(self.state["deck"], KEYS[seat])

    def rig(self, *hands: str) -> None:
        """Gives each seat in turn exactly the tiles in `hands` (the rest go back to the wall)."""
        table = self.state["deck"]
        free = deck.cards(table, sorted(table["catalog"]))
        for seat, codes in enumerate(hands):
            chosen = pick(free, codes, "code")
            free = [t for t in free if t not in chosen]
            table["hands"][KEYS[seat]] = [t["card_id"] for t in chosen]
        table["pile"] = [t["card_id"] for t in free]

    def ids(self, seat: int, codes: str) -> list[str]:
        return [t["card_id"] for t in pick(self.held(seat), codes, "code")]

    def discard(self, seat: int, code: str) -> dict:
        return self.act(seat, kind="discard", card_id=self.ids(seat, code)[0])

    def passes(self, *seats) -> dict:
        for seat in seats:
            result = self.act(seat, kind="pass_claim")
        return result

    # A dealer's fourteen and three hands of thirteen, around a few claims.
    DEAL = ("1m 2m 3m 4p 5p 6p 7s 8s 9s east east east 5m red",
            "5m 5m 9p 9p 1s 2s 3s 4s 5s 6s 7s 8s north",
            "3m 4m 6m 7m 2p 3p 4p 6s 6s 6s north north west",
            "5m 2s 2s 3p 3p 8p 8p 1p 1p south south green green")

    def test_thirteen_tiles_each_and_the_dealers_fourteenth(self):
        self.assertEqual([len(self.held(seat)) for seat in range(4)], [14, 13, 13, 13])
        self.assertEqual(len(self.state["deck"]["pile"]), 136 - 53)
        self.assertEqual((self.state["phase"], self.state["current_player"], self.state["dealer"]),
                         ("discard", KEYS[0], KEYS[0]))
        self.assertEqual(self.state["scores"], dict.fromkeys(KEYS, 25000))

    def test_every_illegal_turn_is_refused_with_its_reason(self):
        self.rig(*self.DEAL)
        self.refused(1, "not your turn: seat 0", kind="discard", card_id=self.ids(1, "5m")[0])
        self.refused(0, "not a tile in your hand", kind="discard", card_id=self.ids(1, "5m")[0])
        self.refused(0, "not a tile in your hand", kind="discard", card_id=["x"])
        self.refused(0, "do not make a winning hand", kind="win")
        self.refused(0, "four tiles of one face", kind="concealed_kong", card_ids=self.ids(0, "east east east red"))
        self.refused(0, "must name 4 different tiles", kind="concealed_kong", card_ids=self.ids(0, "east") * 4)
        self.refused(0, "takes discard, win or concealed_kong", kind="pung")
        with self.assertRaisesRegex(ValueError, "an action is an object"):
            self.table.proto_group_handle(copy.deepcopy(self.state), MEMBERS[0], ["discard"])
        self.discard(0, "red")
        self.refused(1, "an action is an object with its kind", kind=["pung"])

    def test_every_illegal_claim_is_refused_with_its_reason(self):
        self.rig(*self.DEAL)
        self.discard(0, "5m")
        self.refused(0, "cannot answer this discard", kind="pass_claim")
        self.refused(1, "takes tiles of the discard's face", kind="pung", card_ids=self.ids(1, "9p 9p"))
        self.refused(1, "must name 2 different tiles", kind="pung", card_ids=self.ids(1, "5m"))
        self.refused(1, "not in your hand", kind="pung", card_ids=self.ids(2, "3m 4m"))
        self.refused(2, "only the seat after the discarder may chow", kind="chow", card_ids=self.ids(2, "3m 4m"))
        self.refused(1, "do not make a run", kind="chow", card_ids=self.ids(1, "5m 5m"))
        self.refused(1, "does not complete a winning hand", kind="win")
        self.refused(1, "answered with pass_claim", kind="discard", card_id=self.ids(1, "5m")[0])
        self.act(2, kind="pass_claim")
        self.refused(2, "already answered", kind="pass_claim")

    def test_a_pung_goes_before_a_chow_and_the_claimant_discards_next(self):
        self.rig(*self.DEAL)
        self.discard(0, "5m")
        self.assertEqual([t["code"] for t in deck.cards(self.state["deck"], self.state["rivers"][KEYS[0]])], ["5m"])
        self.act(1, kind="pung", card_ids=self.ids(1, "5m 5m"))  # the next seat, which could chow
        self.act(3, kind="pass_claim")
        result = self.act(2, kind="pass_claim")
        self.assertIn({"kind": "claim_resolved", "claim": "pung", "winner": KEYS[1]}, result["events"])
        group = self.state["meld_groups"][KEYS[1]][0]
        self.assertEqual((group["kind"], group["from"], [t["code"] for t in group["cards"]]),
                         ("pung", KEYS[0], ["5m"] * 3))
        self.assertEqual(self.state["rivers"][KEYS[0]], [], "the claimed discard left the river")
        self.assertEqual((self.state["phase"], self.state["current_player"]), ("discard", KEYS[1]))
        self.assertEqual(len(self.held(1)), 11)
        self.refused(1, "discard before you can win", kind="win")

    def test_a_chow_from_the_next_seat_and_the_nearest_pung_over_a_farther_one(self):
        self.rig(*self.DEAL)
        self.discard(0, "red")
        self.passes(1, 2, 3)
        self.assertEqual((self.state["current_player"], len(self.held(1))), (KEYS[1], 14), "the next seat drew")
        self.discard(1, "9p")
        self.refused(2, "do not make a run", kind="chow", card_ids=self.ids(2, "3p 4p"))
        self.passes(3, 0, 2)
        self.discard(2, "north")
        self.passes(3, 0, 1)
        self.discard(3, "3p")
        self.act(0, kind="chow", card_ids=self.ids(0, "4p 5p"))
        self.passes(1, 2)
        group = self.state["meld_groups"][KEYS[0]][0]
        self.assertEqual(sorted(t["code"] for t in group["cards"]), ["3p", "4p", "5p"])
        self.assertEqual(self.state["current_player"], KEYS[0])

    def test_a_win_on_a_discard_goes_first_and_the_discarder_pays_three_times(self):
        # Seat 0 waits on the 5m; seat 2 throws one, seat 1 pungs it and seat 0 wins on it.
        self.rig("1m 2m 3m 4p 5p 6p 7s 8s 9s east east east 5m",
                 "5m 5m 9p 9p 1s 2s 3s 4s 5s 6s 8s 8s 7s",
                 "3m 4m 6m 7m 2p 3p 4p 6s 6s 6s north 5m 1s 2s",
                 "2s 3p 3p 8p 8p 1p 1p south south green green white white")
        self.state["current_player"] = KEYS[2]
        self.discard(2, "5m")
        self.act(3, kind="pass_claim")
        self.act(1, kind="pung", card_ids=self.ids(1, "5m 5m"))
        result = self.act(0, kind="win")
        win = next(e for e in result["events"] if e["kind"] == "discard_win")
        self.assertEqual((win["winner"], win["discarder"], win["win_kind"], win["kind"]),
                         (KEYS[0], KEYS[2], "standard", "discard_win"))
        self.assertEqual({p["code"] for p in win["patterns"]}, {"winning_hand", "concealed_hand"})
        self.assertEqual(win["score_delta"], dict(zip(KEYS, [6, 0, -6, 0])))
        self.assertEqual(self.state["scores"], dict(zip(KEYS, [25006, 25000, 24994, 25000])))
        self.assertEqual((self.state["hand_number"], self.state["dealer"]), (2, KEYS[1]), "the deal passed on")
        self.assertEqual(self.state["last_result"]["winner"], KEYS[0])

    def test_a_self_drawn_win_is_paid_by_each_other_seat_and_ends_the_match(self):
        self.state["hand_number"] = 2
        self.rig("1m 2m 3m 4p 5p 6p 7s 8s 9s east east east 5m 5m", "1p", "1s", "2s")
        result = self.act(0, kind="win")
        win = result["events"][0]
        self.assertEqual(win["score_delta"], dict(zip(KEYS, [9, -3, -3, -3])))
        self.assertEqual({p["code"] for p in win["patterns"]}, {"winning_hand", "self_draw", "concealed_hand"})
        self.assertTrue(result["completed"])
        self.assertEqual(result["outcome"], KEYS[0])
        self.assertEqual(result["events"][-1]["kind"], "mahjong_match_complete")
        self.refused(1, "the Mahjong match is complete", kind="pass_claim")

    def test_a_concealed_kong_draws_a_replacement_and_an_empty_wall_ends_the_hand(self):
        self.rig("1m 2m 3m 4p 5p 6p 7s 8s 9s east east east east 5m", "1p", "1s", "2s")
        pile = self.state["deck"]["pile"]
        self.state["deck"]["zones"]["river"], self.state["deck"]["pile"] = pile[:-1], pile[-1:]
        result = self.act(0, kind="concealed_kong", card_ids=self.ids(0, "east east east east"))
        self.assertEqual([e["kind"] for e in result["events"]], ["concealed_kong", "replacement_draw"])
        self.assertEqual((len(self.held(0)), self.state["deck"]["pile"]), (11, []))
        self.discard(0, "5m")
        result = self.passes(1, 2, 3)
        self.assertEqual([e["kind"] for e in result["events"]][-3:],
                         ["claim_resolved", "mahjong_wall_exhausted", "mahjong_hand_started"])
        self.assertEqual(self.state["last_result"], {"kind": "wall_exhausted", "winner": "", "points": 0})
        self.assertEqual(self.state["scores"], dict.fromkeys(KEYS, 25000))

    def test_a_seat_sees_its_own_tiles_and_only_counts_of_the_others(self):
        self.rig(*self.DEAL)
        self.discard(0, "5m")
        view = self.view(1)
        self.assertEqual([t["code"] for t in view["my_hand"]], sorted(
            "5m 5m 9p 9p 1s 2s 3s 4s 5s 6s 7s 8s north".split(), key=tiles.INDEX.get))
        self.assertEqual(view["hand_counts"], dict(zip(KEYS, [13, 13, 13, 13])))
        self.assertEqual((view["wall_count"], view["you"]["may_claim"], view["my_claim"]), (136 - 53, True, None))
        self.assertEqual([t["code"] for t in view["rivers"][KEYS[0]]], ["5m"])
        text = repr(view)
        for other in (0, 2, 3):
            for card_id in self.state["deck"]["hands"][KEYS[other]]:
                self.assertNotIn(card_id, text, "another seat's tile")
        for card_id in self.state["deck"]["pile"]:
            self.assertNotIn(card_id, text, "a tile of the wall")
        self.assertFalse(self.view(0)["you"]["may_claim"])

    def test_a_seat_whose_member_left_is_played_for_it_and_a_new_leader_deals_the_hand_again(self):
        result = self.table.proto_group_member_left(self.state, MEMBERS[0], "gone")
        self.assertEqual(result["state"]["away"], [KEYS[0]])
        self.assertEqual(result["events"][1]["kind"], "mahjong_discard", "the dealer discarded for it")
        self.state = result["state"]
        self.act(1, kind="pass_claim")
        self.act(2, kind="pass_claim")
        self.act(3, kind="pass_claim")
        self.assertEqual(self.state["current_player"], KEYS[1], "its answer was given for it")
        snapshot = self.table.proto_group_recovery_snapshot(self.state)
        snapshot["scores"] = dict(zip(KEYS, [25009, 24997, 24997, 24997]))
        restored = self.table.proto_group_restore(copy.deepcopy(snapshot), copy.deepcopy(MEMBERS[1:]), 1)
        self.assertEqual((restored["hand_number"], restored["restart_count"], restored["away"]), (1, 1, [KEYS[0]]))
        self.assertEqual(restored["scores"], snapshot["scores"])
        self.assertEqual(restored["phase"], "claim", "the away dealer discarded at once")
        result = self.play_out(self.table, restored, MEMBERS[1:])
        self.assertEqual(sum(result["state"]["scores"].values()), 100000)
        back = self.table.proto_group_member_joined(restored, MEMBERS[0])["state"]
        self.assertEqual(back["away"], [])
        with self.assertRaisesRegex(ValueError, "one member in each of seats 0-3"):
            self.table.proto_group_restore({"hand_number": 1}, copy.deepcopy(MEMBERS[1:]), 1)

    def test_options_out_of_range_are_refused(self):
        for options in ({"max_hands": 0}, {"max_hands": True}, {"starting_points": -1}):
            table = our_table(self, self.alias, options)
            with self.assertRaisesRegex(ValueError, "must be between"):
                table.proto_group_initial_state(copy.deepcopy(MEMBERS))

    def test_four_automatic_seats_play_the_match_to_its_end(self):
        kinds = set()
        for number in range(4):
            table = our_table(self, self.alias, {"deal_seed": f"auto {number}", "max_hands": 2})
            result = self.play_out(table, table.proto_group_initial_state(copy.deepcopy(MEMBERS)))
            state = result["state"]
            final = result["events"][-1]
            self.assertEqual((state["phase"], state["hand_number"], final["kind"]),
                             ("completed", 2, "mahjong_match_complete"))
            self.assertEqual(sum(state["scores"].values()), 100000, "no point made or lost")
            best = max(state["scores"].values())
            self.assertEqual(final["winners"], [k for k in KEYS if state["scores"][k] == best])
            kinds.add(state["last_result"]["kind"])
            self.assertIsNone(table.proto_group_autoplay(table.proto_group_view(state, MEMBERS[0]), MEMBERS[0]))
        self.assertTrue(kinds & {"self_draw", "discard_win"}, kinds)


class AutomaticSeat(unittest.TestCase):
    def view(self, codes: str, discard: str | None = None, by: int = 3, melds: int = 0) -> dict:
        me = KEYS[0]
        last = {"card_id": "d", "card": {**FACES[discard], "card_id": "d", "copy": 1}, "public_key": KEYS[by],
                "seat": by} if discard else None
        return {"phase": "claim" if discard else "discard", "my_hand": hand(codes), "last_discard": last,
                "melds": {k: [{"kind": "pung"}] * melds if k == me else [] for k in KEYS}, "turn_order": KEYS,
                "wall_count": 50, "you": {"public_key": me, "seat": 0, "may_claim": bool(discard)}}

    def test_it_declares_a_win_and_discards_isolated_honours_and_terminals_first(self):
        self.assertEqual(MAHJONG.choose(self.view("1m 2m 3m 4p 5p 6p 7s 8s 9s east east east 5m 5m")),
                         {"kind": "win"})
        chosen = MAHJONG.choose(self.view("2m 3m 4m 5p 6p 7p 3s 4s 6s 6s 8p 9m north red"))
        self.assertIn(chosen["card_id"], {t["card_id"] for t in hand("2m 3m 4m 5p 6p 7p 3s 4s 6s 6s 8p 9m north red")
                                          if t["code"] in ("north", "red")})
        chosen = MAHJONG.choose(self.view("2m 3m 4m 5p 6p 7p 3s 4s 6s 6s 8p 9p 9m 5s"))
        self.assertEqual(chosen["card_id"], "t12", "the lone terminal before the tiles that work together")

    def test_it_claims_only_what_brings_a_win_nearer(self):
        self.assertEqual(MAHJONG.choose(self.view("1m 2m 3m 4p 5p 6p 7s 8s 9s east east east 5m", "5m")),
                         {"kind": "win"})
        claim = MAHJONG.choose(self.view("1m 2m 3m 4p 5p 6p 7s 8s red red 1s 5m 9m", "red"))
        self.assertEqual(claim["kind"], "pung")
        claim = MAHJONG.choose(self.view("1m 2m 4p 5p 7s 8s red red 1s 5m 9m north west", "6p"))
        self.assertEqual(claim["kind"], "chow", "the seat after the discarder")
        self.assertEqual(MAHJONG.choose(self.view("1m 2m 4p 5p 7s 8s red red 1s 5m 9m north west", "6p", by=2)),
                         {"kind": "pass_claim"}, "no chow from two seats on")
        self.assertEqual(MAHJONG.choose(self.view("1m 2m 3m 4p 5p 6p 7s 8s 9s east east east 5m", "south")),
                         {"kind": "pass_claim"})

    def test_a_decision_stays_within_a_small_time_budget(self):
        started = time.perf_counter()
        for _ in range(5):
            MAHJONG.choose(self.view("1m 2m 2m 3m 4m 4m 5p 6p 7p 7p 8s 9s 9s red"))
            MAHJONG.choose(self.view("1m 2m 2m 3m 4m 4m 5p 6p 7p 7p 8s 9s 9s", "3m"))
        self.assertLess((time.perf_counter() - started) / 10, 0.25, "well under the turn's budget")


class SideBySide(TableSideBySide):
    alias = "classical-mahjong-v1"
    # What the deal decides: the tiles, and so the rivers, the last discard, the melds and a result.
    TILES = {"my_hand", "rivers", "last_discard", "melds", "last_result"}

    def card_decided(self, view):
        return self.TILES

    def test_a_turn_and_a_claim_window_with_every_refusal_agree(self):
        steps = [{"seat": 1, "action": {"kind": "discard", "card_id": "x"}},
                 {"action": {"kind": "discard", "card_id": "not-a-tile"}},
                 {"action": {"kind": "pung"}},
                 {"action": {"kind": "concealed_kong", "card_ids": ["a", "b", "c", "d"]}},
                 {"cards": "discard"},
                 {"seat": 0, "action": {"kind": "pass_claim"}},
                 {"seat": 1, "action": {"kind": "discard"}},
                 {"seat": 1, "action": {"kind": "pung", "card_ids": ["x", "y"]}},
                 {"seat": 1, "action": {"kind": "pass_claim"}},
                 {"seat": 1, "action": {"kind": "pass_claim"}},
                 {"seat": 2, "action": {"kind": "pass_claim"}},
                 {"seat": 3, "action": {"kind": "pass_claim"}},
                 {"seat": 2, "action": {"kind": "discard", "card_id": "x"}}]
        ours = self.both(None, steps, {"deal_seed": "side", "max_hands": 2})
        statuses = [step["status"] for step in ours[1:]]
        self.assertEqual(statuses, ["refused"] * 4 + ["ok"] + ["refused"] * 3 + ["ok", "refused", "ok", "ok",
                                                                                  "refused"])
        view = ours[-2]["views"][1]
        self.assertEqual((view["phase"], view["current_player"], view["hand_counts"][KEYS[1]]),
                         ("discard", KEYS[1], 14))

    def test_a_new_leaders_hand_agrees(self):
        start = {"hand_number": 2, "dealer_index": 1, "restart_count": 0,
                 "scores": dict(zip(KEYS, [25009, 24997, 24997, 24997]))}
        ours = self.both(start, [{"action": {"kind": "win"}}, {"cards": "discard"}], {"deal_seed": "again"})
        first = ours[0]["views"][0]
        self.assertEqual((first["hand_number"], first["restart_count"], first["dealer"], first["scores"]),
                         (2, 1, KEYS[1], start["scores"]))


if __name__ == "__main__":
    unittest.main()


class MahjongChoices(TableChoices, unittest.TestCase):
    alias = "classical-mahjong-v1"
    options = {"max_hands": 4, "deal_seed": "choices"}
    steered_seeds = (1,)

    def steer(self, choices, chosen, draw):
        """A person who claims a pung, kong or chow even when the discard would win (so the
        win their tiles make right after is one the leader refuses); else the agent's move."""
        claims = [entry["action"] for entry in choices if entry["action"]["kind"] in ("pung", "kong", "chow")]
        return claims[0] if chosen == {"kind": "win"} and claims else chosen
