"""Our Upgrade (Tractor) table (src/protocols/well_known/upgrade-tractor-v1) and the SDK's rules
it plays by (aigenora.proto.trump_tricks): the trump order, the shapes of plays, what a follower
must play and which play wins, worked out by hand; the level changes and the kitty's award;
every declaration, bury and play rule the leader enforces, with its reason and the state
untouched; what each seat may see; a seat whose member is gone played for it, and a new leader
dealing afresh; the automatic seat's choices; four automatic seats to the match's end; and the
same table side by side with the reference's hooks (the same actions taken or refused, the same
view shapes and, where no card decides it, the same values)."""
from __future__ import annotations

import copy
import json
import unittest

from table_cases import TableChoices, TableRules, TableSideBySide, our_table
from table_steps import MEMBERS
from test_holdem import card as plain_card
from test_well_known import load_module

from aigenora.proto import deck
from aigenora.proto.trump_tricks import Trumps, card_points

UPGRADE = load_module("upgrade-tractor-v1")
KEYS = [m["public_key"] for m in MEMBERS]
JOKERS = {face["code"]: face for face in deck.joker_faces()}
HEARTS_TWO = Trumps(2, "hearts")  # hand at level 2, hearts trump


def card(code: str) -> dict:
    return dict(JOKERS[code]) if code in JOKERS else plain_card(code)


def cards(codes: str) -> list[dict]:
    return [card(code) for code in codes.split()]


class TrumpOrder(unittest.TestCase):
    def test_effective_suits_and_places(self):
        rules = HEARTS_TWO
        self.assertEqual([rules.suit_of(c) for c in cards("2C 3H SJ 3S AS")],
                         ["trump", "trump", "trump", "spades", "spades"])
        # Trumps: 3H..AH at 0-11, every other suit's two at 12, 2H 13, small 14, big 15.
        self.assertEqual([rules.position(c) for c in cards("3H AH 2C 2S 2H SJ BJ")],
                         [0, 11, 12, 12, 13, 14, 15])
        # A side suit loses the level's rank: 3 is its lowest, the ace its top.
        self.assertEqual([rules.position(c) for c in cards("3S AS")], [0, rules.side_top()])
        no_trump = Trumps(5, None)
        self.assertEqual([no_trump.suit_of(c) for c in cards("5S 5H 6H")], ["trump", "trump", "hearts"])
        self.assertEqual([no_trump.position(c) for c in cards("5S SJ BJ")], [0, 1, 2])
        self.assertEqual(no_trump.position(card("6H")), no_trump.position(card("4H")) + 1)
        self.assertGreater(rules.strength(card("3H")), rules.strength(card("AS")))

    def test_shapes(self):
        rules = HEARTS_TWO
        self.assertEqual(rules.shape(cards("AS"))["kind"], "single")
        self.assertEqual(rules.shape(cards("KD KD"))["kind"], "pair")
        tractor = rules.shape(cards("QD QD KD KD"))
        self.assertEqual((tractor["kind"], tractor["tractor_length"], tractor["pair_count"]), ("tractor", 2, 2))
        # Across the level's gap, and from the trump suit's ace into an off-suit level pair.
        self.assertEqual(Trumps(9, "hearts").shape(cards("8S 8S 10S 10S"))["kind"], "tractor")
        self.assertEqual(rules.shape(cards("AH AH 2C 2C 2H 2H"))["tractor_length"], 3)
        # Two off-suit level pairs are equal, not consecutive: a throw.
        self.assertEqual(rules.shape(cards("2C 2C 2D 2D"))["kind"], "throw")
        # Either of them joins the trump ace's pair and the trump suit's level pair.
        hand = cards("AH AH 2C 2C 2D 2D 2H 2H")
        self.assertEqual([[c["code"] for c in t] for t in rules.tractors(hand, 3)],
                         [["AH", "AH", "2C", "2C", "2H", "2H"]])
        self.assertEqual(len(rules.tractors(hand, 2)), 2)
        throw = rules.shape(cards("AS KS KS"))
        self.assertEqual((throw["kind"], throw["pair_count"], throw["suit"]), ("throw", 1, "spades"))
        with self.assertRaisesRegex(ValueError, "one suit"):
            rules.shape(cards("AS AD"))
        self.assertEqual(rules.follow_shape(cards("AS AD"))["kind"], "mixed")
        self.assertEqual(card_points(cards("5S 10D KH QH 5C")), 30)

    def test_what_a_follower_must_play(self):
        rules = HEARTS_TWO
        pair = rules.shape(cards("9S 9S"))
        hand = cards("3S 3S 4S 6D")
        rules.check_follow(hand, cards("3S 3S"), pair)
        for chosen, reason in [(cards("3S"), "play 2 cards"),
                               (cards("3S 6D"), "spades cards, up to 2"),
                               (cards("3S 4S"), "1 pair of spades")]:
            with self.assertRaisesRegex(ValueError, reason):
                rules.check_follow(hand, chosen, pair)
        # Short of the suit: all of it, then anything.
        rules.check_follow(cards("3S 6D 7D"), cards("3S 7D"), pair)
        tractor = rules.shape(cards("9S 9S 10S 10S"))
        hand = cards("3S 3S 4S 4S 7S 7S 8S")
        with self.assertRaisesRegex(ValueError, "tractor of 2 pairs"):
            rules.check_follow(hand, cards("3S 3S 7S 7S"), tractor)
        rules.check_follow(hand, cards("3S 3S 4S 4S"), tractor)
        # Without a tractor, the pairs it has.
        hand = cards("3S 3S 5S 5S 8S")
        with self.assertRaisesRegex(ValueError, "2 pairs"):
            rules.check_follow(hand, cards("3S 3S 5S 8S"), tractor)

    def test_who_wins_a_trick(self):
        rules = HEARTS_TWO
        self.assertEqual(rules.winner([cards("KS"), cards("AS"), cards("3H"), cards("AD")]), 2)
        # Equal off-suit level cards: the first played holds the trick.
        self.assertEqual(rules.winner([cards("2C"), cards("2S"), cards("2D"), cards("3H")]), 0)
        self.assertEqual(rules.winner([cards("2C"), cards("2S"), cards("2H"), cards("SJ")]), 3)
        # A pair is beaten only by a higher pair of its suit or a trump pair.
        self.assertEqual(rules.winner([cards("9S 9S"), cards("AS KS"), cards("10S 10S"), cards("3H 4H")]), 2)
        self.assertEqual(rules.winner([cards("9S 9S"), cards("3H 3H"), cards("4H 4H"), cards("AS AS")]), 2)
        tractor = cards("9S 9S 10S 10S")
        self.assertEqual(rules.winner([tractor, cards("AS AS KS KS"), cards("3H 3H 5H 5H"),
                                       cards("3D 3D 4D 4D")]), 1)
        # A throw stands unless it is ruffed by trumps with as many pairs.
        throw = cards("AS KS KS")
        self.assertEqual(rules.winner([throw, cards("3S 4S 5S"), cards("3H 4H 5H"), cards("6D 7D 8D")]), 0)
        self.assertEqual(rules.winner([throw, cards("3H 3H 5H"), cards("4H 4H 6H"), cards("6D 7D 8D")]), 2)


class Levels(unittest.TestCase):
    def test_the_level_change_from_the_defenders_points(self):
        cases = [(0, "team0", 3), (5, "team0", 2), (35, "team0", 2), (40, "team0", 1), (75, "team0", 1),
                 (80, "team1", 1), (115, "team1", 1), (120, "team1", 2), (200, "team1", 4)]
        for points, team, steps in cases:
            self.assertEqual(UPGRADE.level_change("team0", points), (team, steps), points)

    def test_declarations(self):
        self.assertEqual(UPGRADE.declaration(cards("2S"), 2), (1, "spades"))
        self.assertEqual(UPGRADE.declaration(cards("2S 2S"), 2), (2, "spades"))
        self.assertEqual(UPGRADE.declaration(cards("SJ SJ"), 2), (3, None))
        self.assertEqual(UPGRADE.declaration(cards("BJ BJ"), 2), (4, None))
        for chosen, reason in [("3S", "level \\(2\\)"), ("SJ", "only as a pair"), ("2S 2H", "identical"),
                               ("SJ BJ", "identical")]:
            with self.assertRaisesRegex(ValueError, reason):
                UPGRADE.declaration(cards(chosen), 2)


class Table(TableRules):
    alias = "upgrade-tractor-v1"
    options = {"deal_seed": "table", "start_level": 2, "target_level": 5, "max_hands": 3}

    def conserved(self, state):
        self.assertEqual(cards_everywhere(state), 108)

    def held(self, seat: int) -> list[dict]:
        return self.view(seat)["my_hand"]

    def rig(self, hands: dict) -> None:
        """Gives each seat the cards named (swapping them from wherever they are)."""
        table = self.state["deck"]
        claimed = set()
        for seat, codes in hands.items():
            mine = table["hands"][KEYS[seat]]
            for at, code in enumerate(codes.split()):
                wanted = card(code)
                found = next(cid for cid, c in table["catalog"].items()
                             if (c["suit"], c["rank"]) == (wanted["suit"], wanted["rank"]) and cid not in claimed)
                claimed.add(found)
                for place in [*table["hands"].values(), table["pile"]]:
                    if found in place:
                        place[place.index(found)] = mine[at]
                        break
                mine[at] = found

    def ids(self, seat: int, codes: str) -> list[str]:
        wanted = [(c["suit"], c["rank"]) for c in cards(codes)]
        found = []
        for c in self.held(seat):
            if (c["suit"], c["rank"]) in wanted:
                wanted.remove((c["suit"], c["rank"]))
                found.append(c["card_id"])
        self.assertEqual(wanted, [], codes)
        return found

    def all_pass(self):
        for seat in range(4):
            self.act(seat, kind="pass_declare")

    def test_the_deal_twenty_five_cards_each_and_a_kitty_of_eight(self):
        view = self.view(0)
        self.assertEqual((view["phase"], view["hand_number"], view["level_rank"], view["levels"]),
                         ("declaration", 1, 2, {"team0": 2, "team1": 2}))
        self.assertEqual(view["hand_counts"], {key: 25 for key in KEYS})
        self.assertEqual(len(self.state["deck"]["pile"]), 8)
        self.assertEqual({self.view(s)["you"]["team"] for s in (0, 2)}, {"team0"})
        self.assertEqual({self.view(s)["you"]["team"] for s in (1, 3)}, {"team1"})
        self.assertEqual(len({c["card_id"] for c in self.state["deck"]["catalog"].values()}), 108)
        self.assertEqual(sorted(c["copy"] for c in self.state["deck"]["catalog"].values()), [0] * 54 + [1] * 54)

    def test_every_illegal_declaration_is_refused_with_its_reason(self):
        self.rig({0: "2S 2S 3S SJ", 1: "2H SJ BJ BJ"})
        self.refused(0, "pass_declare or declare_trump", kind="bid")
        self.refused(0, "level \\(2\\)", kind="declare_trump", card_ids=self.ids(0, "3S"))
        self.refused(0, "only as a pair", kind="declare_trump", card_ids=self.ids(0, "SJ"))
        self.refused(0, "1-2 different cards", kind="declare_trump", card_ids=self.ids(0, "2S 2S 3S"))
        self.refused(0, "not in your hand", kind="declare_trump", card_ids=self.ids(1, "2H"))
        self.refused(0, "1-2 different cards", kind="declare_trump", card_ids="2S")
        self.act(0, kind="declare_trump", card_ids=self.ids(0, "2S 2S"))
        self.refused(0, "already declared", kind="pass_declare")
        self.refused(1, "outrank a level pair", kind="declare_trump", card_ids=self.ids(1, "2H"))
        self.refused(1, "identical", kind="declare_trump", card_ids=self.ids(1, "SJ BJ"))
        self.refused(1, "not your turn|declaration", kind="play", card_ids=self.ids(1, "2H"))
        self.act(1, kind="declare_trump", card_ids=self.ids(1, "BJ BJ"))
        self.act(2, kind="pass_declare")
        self.act(3, kind="pass_declare")
        view = self.view(1)
        self.assertEqual((view["phase"], view["declarer"], view["declarer_team"], view["trump_suit"]),
                         ("bury", KEYS[1], "team1", None))
        self.assertEqual(len(view["my_hand"]), 33)
        self.assertEqual(view["level_rank"], 2, "the rank of the side that was in control")

    def test_the_declarer_buries_eight_and_the_kitty_stays_hidden(self):
        self.rig({2: "2D"})
        self.act(0, kind="pass_declare")
        self.act(2, kind="declare_trump", card_ids=self.ids(2, "2D"))
        self.act(1, kind="pass_declare")
        self.act(3, kind="pass_declare")
        kept = self.ids(2, "2D")
        hand = [c["card_id"] for c in self.held(2) if c["card_id"] not in kept]
        self.refused(0, "not your turn: seat 2 buries", kind="bury", card_ids=hand[:8])
        self.refused(2, "buries eight", kind="play", card_ids=hand[:1])
        self.refused(2, "8 different cards", kind="bury", card_ids=hand[:7])
        self.refused(2, "stay in your hand", kind="bury", card_ids=hand[:7] + kept)
        self.act(2, kind="bury", card_ids=hand[:8])
        view = self.view(2)
        self.assertEqual((view["phase"], view["current_player"], view["trump_suit"]),
                         ("playing", KEYS[2], "diamonds"))
        self.assertEqual(view["hand_counts"], {key: 25 for key in KEYS})
        for seat in range(4):  # (the declared 2D is public)
            seen = json.dumps(self.view(seat))
            self.assertFalse([cid for cid in hand[:8] if cid in seen], "the kitty is hidden")
            for other in range(4):
                if other != seat:
                    hidden = set(self.state["deck"]["hands"][KEYS[other]]) - set(kept)
                    self.assertFalse([cid for cid in hidden if cid in seen])

    def test_the_play_follows_the_led_shape(self):
        self.rig({0: "9S 9S 10S 10S 4D", 1: "3S 3S 4S 4S 7S 7S", 2: "AS AS 6S 6S 8S 3D", 3: "3C"})
        self.all_pass()
        bury = [c["card_id"] for c in self.held(0)
                if c["card_id"] not in self.ids(0, "9S 9S 10S 10S 4D")][:8]
        self.act(0, kind="bury", card_ids=bury)
        self.refused(0, "one suit", kind="play", card_ids=self.ids(0, "9S 4D"))
        self.refused(1, "not your turn: seat 0 plays", kind="play", card_ids=self.ids(1, "3S"))
        self.refused(0, "only play", kind="bury", card_ids=self.ids(0, "9S"))
        self.act(0, kind="play", card_ids=self.ids(0, "9S 9S 10S 10S"))
        lead = self.view(1)["current_trick"][0]["shape"]
        self.assertEqual((lead["kind"], lead["tractor_length"]), ("tractor", 2))
        self.refused(1, "play 4 cards", kind="play", card_ids=self.ids(1, "3S 3S"))
        self.refused(1, "tractor of 2 pairs", kind="play", card_ids=self.ids(1, "3S 3S 7S 7S"))
        self.act(1, kind="play", card_ids=self.ids(1, "3S 3S 4S 4S"))
        self.refused(2, "2 pairs of spades", kind="play", card_ids=self.ids(2, "AS AS 6S 8S"))

    def test_the_last_trick_takes_the_kitty_and_the_hand_sets_the_levels(self):
        """A worked end of a hand: team1 defends with 60 points; on the last trick seat 1
        wins a single with the big joker over 5 points, and the kitty's 25 points count twice."""
        self.all_pass()
        self.act(0, kind="bury", card_ids=[c["card_id"] for c in self.held(0)][:8])
        table = self.state["deck"]
        kitty = table["zones"]["kitty"]
        for code, slot in zip("10S 10D 5C 3C 4C 6C 7C 8C".split(), range(8)):
            wanted = card(code)
            found = next(cid for cid, c in table["catalog"].items()
                         if (c["suit"], c["rank"]) == (wanted["suit"], wanted["rank"]) and cid not in kitty[:slot])
            for place in [*table["hands"].values(), kitty]:
                if found in place:
                    place[place.index(found)] = kitty[slot]
                    break
            kitty[slot] = found
        self.rig({0: "3D", 1: "BJ", 2: "5D", 3: "4D"})
        for seat in range(4):
            held = table["hands"][KEYS[seat]]
            table["zones"].setdefault("played", []).extend(held[1:])
            del held[1:]
        self.state["defender_points"] = self.state["captured_points"]["team1"] = 60
        self.state["captured_points"]["team0"] = 200 - 60 - 25 - 5
        self.act(0, kind="play", card_ids=self.ids(0, "3D"))
        self.act(1, kind="play", card_ids=self.ids(1, "BJ"))
        self.act(2, kind="play", card_ids=self.ids(2, "5D"))
        result = self.act(3, kind="play", card_ids=self.ids(3, "4D"))
        last = self.view(0)["last_result"]
        # 60 + 5 in the trick + 25 x 2 from the kitty = 115: team1 takes control, one level.
        self.assertEqual((last["kitty_points"], last["kitty_multiplier"], last["kitty_award"],
                          last["defender_points"], last["controlling_team"], last["level_steps"]),
                         (25, 2, 50, 115, "team1", 1))
        self.assertEqual(last["levels"], {"team0": 2, "team1": 3})
        self.assertFalse(result.get("completed"))
        view = self.view(1)
        self.assertEqual((view["phase"], view["hand_number"], view["level_rank"], view["declarer_team"],
                          view["starter"], view["match_points"]),
                         ("declaration", 2, 3, "team1", KEYS[1], {"team0": 110, "team1": 115}))

    def test_four_automatic_seats_play_the_match_to_its_end(self):
        result = self.play_out(self.table, self.state)
        view = self.table.proto_group_view(copy.deepcopy(result["state"]), MEMBERS[0])
        levels = view["levels"]
        self.assertEqual(view["phase"], "completed")
        self.assertTrue(max(levels.values()) == 5 or view["hand_number"] == 3, view)
        self.assertEqual(result["outcome"], max(levels, key=lambda t: (levels[t], t == view["last_result"]["controlling_team"])))
        self.assertEqual(len(view["kitty_revealed"]), 8)

    def test_a_seat_whose_member_left_is_played_for_it_and_a_new_leader_deals_afresh(self):
        self.table.proto_group_member_left(self.state, MEMBERS[3], "gone")
        self.act(0, kind="pass_declare")
        self.act(1, kind="pass_declare")
        self.act(2, kind="pass_declare")
        self.assertIn(KEYS[3], self.state["declarations"], "the substitute declared for seat 3")
        self.assertEqual(self.state["phase"], "bury")
        checkpoint = self.table.proto_group_recovery_snapshot(self.state)
        self.assertEqual(checkpoint["seats"], {key: seat for seat, key in enumerate(KEYS)})
        members = [dict(m, status="active") for m in MEMBERS[1:]]
        restored = self.table.proto_group_restore(checkpoint, members, 2)
        self.assertEqual((restored["phase"], restored["restart_count"], restored["away"]),
                         ("declaration", 1, [KEYS[0]]))
        self.assertIn(KEYS[0], restored["declarations"], "seat 0 (the old leader) has no member")
        self.assertEqual(cards_everywhere(restored), 108)
        changed = self.table.proto_group_on_leader_changed(restored, KEYS[0], KEYS[1])
        self.assertEqual(changed["state"]["recovery_notice"],
                         f"Leader changed from {KEYS[0][:8]} to {KEYS[1][:8]}; the private hand was redealt.")
        self.assertEqual(changed["events"], [{"kind": "upgrade_hand_restarted_after_leader_change",
                                              "old_leader": KEYS[0], "new_leader": KEYS[1], "hand_number": 1}])


class AutomaticSeat(unittest.TestCase):
    def view(self, codes: str, trick=(), phase="playing", level=2, trump="hearts") -> dict:
        hand = cards(codes)
        for index, c in enumerate(hand):
            c["card_id"] = f"c{index}"
        plays = [{"public_key": KEYS[seat], "seat": seat, "team": "team0" if seat % 2 == 0 else "team1",
                  "cards": cards(played), "shape": Trumps(level, trump).follow_shape(cards(played))}
                 for seat, played in trick]
        return {"phase": phase, "level_rank": level, "trump_suit": trump, "my_hand": hand,
                "current_trick": plays, "declarations": {}, "winning_declaration": None,
                "you": {"public_key": KEYS[1], "seat": 1, "team": "team1"}}

    def played(self, view: dict) -> list[str]:
        action = UPGRADE.choose(view)
        chosen = [c for c in view["my_hand"] if c["card_id"] in action["card_ids"]]
        return sorted(c["code"] for c in chosen)

    def test_declaring(self):
        self.assertEqual(UPGRADE.choose(self.view("2S 2S 3S 4S 5S 6S 7S 9D", phase="declaration"))["kind"],
                         "declare_trump")
        self.assertEqual(UPGRADE.choose(self.view("2S 3D 4D", phase="declaration")),
                         {"kind": "pass_declare"})
        jokers = self.view("BJ BJ 3D", phase="declaration")
        self.assertEqual(UPGRADE.choose(jokers), {"kind": "declare_trump", "card_ids": ["c0", "c1"]})

    def test_leading_tractors_then_pairs_and_aces(self):
        self.assertEqual(self.played(self.view("7S 7S 8S 8S AD 3C")), ["7S", "7S", "8S", "8S"])
        self.assertEqual(self.played(self.view("AD 9S 9S 3C")), ["AD"])
        self.assertEqual(self.played(self.view("9S 9S 3C 4C")), ["9S", "9S"])
        self.assertEqual(self.played(self.view("3C 4C 7S 3H")), ["7S"])

    def test_following(self):
        # Win cheaply over the other side; give points when partner holds the trick.
        self.assertEqual(self.played(self.view("10S QS AS 3D", trick=[(0, "JS")])), ["QS"])
        self.assertEqual(self.played(self.view("10S QS 3S 3D", trick=[(0, "AS")])), ["3S"])
        self.assertEqual(self.played(self.view("10S QS 3S 3D", trick=[(3, "AS")])), ["10S"])
        # A pair follows a pair, the lowest that wins.
        self.assertEqual(self.played(self.view("4S 4S QS QS KS 3D", trick=[(0, "JS JS")])), ["QS", "QS"])
        # Void in the suit, it ruffs points with its lowest trump.
        self.assertEqual(self.played(self.view("3H 9H 4D", trick=[(0, "KS")])), ["3H"])
        # No led suit and no point in the trick: the cheapest card.
        self.assertEqual(self.played(self.view("3H 9H 4D", trick=[(0, "3S")])), ["4D"])


class SideBySide(TableSideBySide):
    maxDiff = None
    alias = "upgrade-tractor-v1"
    DEALT = {"current_player", "current_trick", "trick_history", "captured_points", "defender_points",
             "match_points", "my_hand", "hand_counts", "kitty_revealed", "last_result", "levels"}

    def card_decided(self, view):
        return self.DEALT

    def test_a_hand_with_every_refusal_played_to_the_match_end_agrees(self):
        steps = [{"seat": 0, "action": {"kind": "bid"}},
                 {"seat": 0, "action": {"kind": "declare_trump", "card_ids": ["not-a-card"]}},
                 {"seat": 0, "action": {"kind": "play", "card_ids": []}},
                 *({"seat": seat, "action": {"kind": "pass_declare"}} for seat in range(4)),
                 {"seat": 2, "action": {"kind": "pass_declare"}},
                 {"seat": 1, "cards": "bury"},
                 {"seat": 0, "action": {"kind": "bury", "card_ids": []}},
                 {"seat": 0, "cards": "bury"},
                 {"seat": 0, "action": {"kind": "play", "card_ids": ["not-a-card"]}},
                 {"seat": 2, "cards": "follow"},
                 *({"cards": "follow"} for _ in range(100))]
        # Within the last trick the seats that have played it differ (the deal decides who leads it).
        last_trick = range(len(steps) - 3, len(steps))
        ours = self.both(None, steps, {"deal_seed": "side", "max_hands": 1}, uneven=last_trick)
        self.assertEqual([step["status"] for step in ours[1:4]], ["refused"] * 3)
        self.assertTrue(ours[-1]["completed"])
        self.assertEqual(ours[-1]["views"][0]["phase"], "completed")

    def test_a_new_leaders_fresh_hand_agrees(self):
        start = {"hand_number": 3, "restart_count": 1, "levels": {"team0": 4, "team1": 6},
                 "declarer_team": "team1", "starter": KEYS[3], "match_points": {"team0": 150, "team1": 300}}
        steps = [{"seat": seat, "action": {"kind": "pass_declare"}} for seat in (1, 0, 3, 2)]
        ours = self.both(start, steps, {"deal_seed": "again"})
        first = ours[0]["views"][0]
        self.assertEqual((first["restart_count"], first["level_rank"], first["starter"]), (2, 6, KEYS[3]))
        last = ours[-1]["views"][3]
        self.assertEqual((last["phase"], last["declarer"], last["you"]["is_declarer"]), ("bury", KEYS[3], True))


def cards_everywhere(state: dict) -> int:
    """Every card: in the hands, the kitty still to take, and the zones (played, kitty)."""
    table = state["deck"]
    return (sum(map(len, table["hands"].values())) + len(table["pile"])
            + sum(map(len, table["zones"].values())))


if __name__ == "__main__":
    unittest.main()


class TractorChoices(TableChoices, unittest.TestCase):
    alias = "upgrade-tractor-v1"
    options = {"max_hands": 1, "deal_seed": "choices"}
    judged_picks = ("Play ",)
    steered_seeds = (1,)
