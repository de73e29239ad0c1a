"""Our Contract Bridge table (src/protocols/well_known/contract-bridge-v1) and the SDK's trick
rules it plays by (aigenora.proto.tricks): duplicate scores worked out by hand; which card wins
a trick and which cards a hand may play; every auction and play rule a leader enforces, with
its reason and the state untouched; declarer, dummy and what each seat may see; a seat whose
member is gone played for it, and a new leader redealing; the automatic seat's bidding and
play; four automatic seats to the board's end; and the same table side by side with the
reference's hooks (the same calls and plays taken or refused, the same view shapes and, where
no card decides it, the same values)."""
from __future__ import annotations

import copy
import json
import unittest
from table_cases import TableChoices, TableRules, TableSideBySide, our_table
from table_steps import MEMBERS
from test_holdem import card, hand
from test_well_known import load_module

from aigenora.proto import deck, options, tricks

BRIDGE = load_module("contract-bridge-v1")
KEYS = [m["public_key"] for m in MEMBERS]
N, E, S, W = range(4)


class Scoring(unittest.TestCase):
    def test_made_contracts(self):
        cases = [  # level, denomination, doubled, tricks taken, vulnerable -> score, worked out
            (4, "spades", 0, 10, False, 120 + 300),
            (4, "spades", 0, 10, True, 120 + 500),
            (3, "nt", 0, 10, False, 100 + 300 + 30),
            (2, "hearts", 0, 9, False, 60 + 50 + 30),
            (1, "nt", 0, 7, True, 40 + 50),
            (5, "diamonds", 0, 11, False, 100 + 300),
            (4, "clubs", 0, 11, True, 80 + 50 + 20),
            (2, "clubs", 1, 8, True, 80 + 50 + 50),            # doubled part score, the insult
            (2, "spades", 1, 8, False, 120 + 300 + 50),        # doubled into game
            (1, "hearts", 2, 8, False, 120 + 300 + 100 + 200),  # redoubled into game, one over
            (3, "nt", 1, 11, True, 200 + 500 + 50 + 2 * 200),
            (6, "spades", 0, 12, False, 180 + 300 + 500),
            (6, "hearts", 0, 13, True, 180 + 500 + 750 + 30),
            (7, "nt", 0, 13, True, 220 + 500 + 1500),
            (7, "clubs", 2, 13, False, 560 + 300 + 1000 + 100),
        ]
        for level, denomination, doubled, taken, vulnerable, expected in cases:
            self.assertEqual(BRIDGE.board_score(level, denomination, doubled, taken, vulnerable), expected,
                             (level, denomination, doubled, taken, vulnerable))

    def test_undertricks(self):
        cases = [  # down, doubled, vulnerable -> penalty
            (1, 0, False, 50), (3, 0, True, 300),
            (1, 1, False, 100), (2, 1, False, 300), (3, 1, False, 500), (4, 1, False, 800),
            (5, 1, False, 1100), (1, 1, True, 200), (2, 1, True, 500), (4, 1, True, 1100),
            (1, 2, False, 200), (3, 2, False, 1000), (1, 2, True, 400), (2, 2, True, 1000),
        ]
        for down, doubled, vulnerable, penalty in cases:
            self.assertEqual(BRIDGE.board_score(4, "hearts", doubled, 10 - down, vulnerable), -penalty,
                             (down, doubled, vulnerable))

    def test_bids_rank_from_one_club_to_seven_no_trump(self):
        ladder = [(level, d) for level in range(1, 8) for d in BRIDGE.DENOMINATIONS]
        self.assertEqual([BRIDGE.bid_value(*bid) for bid in ladder], list(range(35)))


class Tricks(unittest.TestCase):
    def test_the_winner_of_a_trick(self):
        self.assertEqual(tricks.winner(hand("10H KH 2H AS"), None), 1, "a discard never wins")
        self.assertEqual(tricks.winner(hand("10H KH 2S AH"), "spades"), 2, "a trump beats the led suit")
        self.assertEqual(tricks.winner(hand("10H 3S 2S AH"), "spades"), 1, "the higher trump wins")
        self.assertEqual(tricks.winner(hand("2C AD AH AS"), None), 0, "at no trump only the led suit")
        self.assertEqual(tricks.winner(hand("2S 3S"), "spades"), 1, "trumps led")
        with self.assertRaisesRegex(ValueError, "empty trick"):
            tricks.winner([], None)

    def test_a_hand_follows_suit_while_it_can(self):
        held = hand("2H KH 5S 9C")
        self.assertEqual(tricks.playable(held, []), held)
        self.assertEqual(tricks.playable(held, hand("AH")), hand("2H KH"))
        self.assertEqual(tricks.playable(held, hand("AD 2D")), held, "void: any card")
        tricks.check_follows(held, card("KH"), hand("3H"))
        with self.assertRaisesRegex(ValueError, r"must follow the led suit \(hearts\)"):
            tricks.check_follows(held, card("5S"), hand("3H"))


class Helpers(unittest.TestCase):
    """The SDK pieces the table added: a card played from a hand, a deal's seed, a ranged option."""

    def test_a_card_moves_from_a_hand_to_a_zone(self):
        pack = deck.new_deck(deck.standard_faces(), "helpers")
        deck.deal(pack, "me", 3)
        first = deck.hand(pack, "me")[0]
        self.assertEqual(deck.play(pack, "me", first["card_id"], "played"), first)
        self.assertEqual((len(deck.hand(pack, "me")), deck.zone(pack, "played")), (2, [first]))
        with self.assertRaisesRegex(ValueError, "not in the hand"):
            deck.play(pack, "me", first["card_id"], "played")

    def test_a_pinned_deal_seed_names_the_deal_and_none_is_fresh(self):
        self.assertEqual(deck.table_seed({"deal_seed": "x"}, 3, 1), "x:3:1")
        fresh = {deck.table_seed({}, 3, 1) for _ in range(2)} | {deck.table_seed({"deal_seed": ""}, 3)}
        self.assertEqual(len(fresh), 3)
        self.assertTrue(all(len(seed) == 64 for seed in fresh))

    def test_a_whole_option_in_its_range(self):
        self.assertEqual(options.whole_option({}, "n", 4, 1, 9), 4)
        self.assertEqual(options.whole_option({"n": 9}, "n", 4, 1, 9), 9)
        for bad in (0, 10, True, "5", 2.0):
            with self.assertRaisesRegex(ValueError, "n must be between 1 and 9"):
                options.whole_option({"n": bad}, "n", 4, 1, 9)


class Table(TableRules):
    alias = "contract-bridge-v1"
    options = {"deal_seed": "rules"}

    def conserved(self, state):
        self.assertEqual(cards_in_play(state), 52, "no card is made or lost")

    def held(self, seat: int) -> list[dict]:
        return deck.hand(self.state["deck"], KEYS[seat])

    def auction(self, *calls) -> None:
        """Calls in turn: "p" pass, "x" double, "xx" redouble, else a bid such as "1nt", "2s"."""
        names = {"c": "clubs", "d": "diamonds", "h": "hearts", "s": "spades", "nt": "nt"}
        for call in calls:
            seat = KEYS.index(self.state["current_player"])
            if call in ("p", "x", "xx"):
                self.act(seat, kind={"p": "pass", "x": "double", "xx": "redouble"}[call])
            else:
                self.act(seat, kind="bid", level=int(call[0]), denomination=names[call[1:]])

    def test_board_one_north_deals_nobody_vulnerable_thirteen_cards_each(self):
        self.assertEqual((self.state["dealer"], self.state["vulnerability"]), (KEYS[N], "none"))
        self.assertEqual(self.state["current_player"], KEYS[N])
        self.assertEqual(sorted(len(self.held(seat)) for seat in range(4)), [13] * 4)
        every = {c["code"] for seat in range(4) for c in self.held(seat)}
        self.assertEqual(len(every), 52)
        for number, dealer, vulnerable in ((2, E, "ns"), (3, S, "ew"), (4, W, "both"), (7, S, "both"),
                                           (13, N, "both"), (16, W, "ew"), (17, N, "none")):
            table = our_table(self, "contract-bridge-v1", {"board_number": number})
            state = table.proto_group_initial_state(copy.deepcopy(MEMBERS))
            self.assertEqual((state["dealer"], state["vulnerability"]), (KEYS[dealer], vulnerable), number)
        with self.assertRaisesRegex(ValueError, "board_number must be between 1 and 32"):
            our_table(self, "contract-bridge-v1", {"board_number": 0}).proto_group_initial_state(copy.deepcopy(MEMBERS))
        with self.assertRaisesRegex(ValueError, "exactly four"):
            self.table.proto_group_initial_state(copy.deepcopy(MEMBERS[:3]))

    def test_every_illegal_call_is_refused_with_its_reason(self):
        self.refused(E, "not your turn: north calls now", kind="pass")
        self.refused(N, "no bid to double", kind="double")
        self.refused(N, "no double to redouble", kind="redouble")
        self.refused(N, "auction takes pass, bid, double or redouble", kind="play")
        for level, denomination in ((0, "clubs"), (8, "nt"), ("1", "clubs"), (True, "clubs"), (1, "notrump")):
            self.refused(N, "a bid needs a level from 1 to 7", kind="bid", level=level, denomination=denomination)
        self.auction("1h")
        self.refused(E, "must outrank 1 hearts", kind="bid", level=1, denomination="diamonds")
        self.refused(E, "must outrank 1 hearts", kind="bid", level=1, denomination="hearts")
        self.refused(E, "no double to redouble", kind="redouble")
        self.auction("p")
        self.refused(S, "cannot double your own side's bid", kind="double")
        self.auction("p", "x")  # West doubles North's 1H
        self.refused(N, "no bid to double", kind="double")
        self.auction("p")
        self.refused(E, "cannot redouble your own side's double", kind="redouble")
        self.assertEqual(self.state["doubled"], 1)
        self.auction("p", "xx")  # East passes, South redoubles
        self.assertEqual(self.state["doubled"], 2)
        self.auction("1s")
        self.assertEqual(self.state["doubled"], 0, "a new bid clears the doubles")
        self.auction("p", "p", "p")
        self.assertEqual(self.state["phase"], "playing")
        self.assertEqual(self.state["contract"], {"level": 1, "denomination": "spades", "doubled": 0,
                                                  "partnership": "ew"})

    def test_four_passes_pass_the_board_out(self):
        self.auction("p", "p", "p")
        result = self.act(W, kind="pass")
        self.assertEqual((result.get("completed"), result["outcome"]), (True, "passed_out"))
        self.assertEqual(result["events"][-1], {"kind": "board_passed_out"})
        self.assertEqual(self.state["scores"], {"ns": 0, "ew": 0})
        self.refused(N, "the board is complete", kind="pass")

    def test_declarer_is_the_first_of_the_side_to_name_the_denomination(self):
        self.auction("1c", "p", "1h", "p", "2h", "p", "p", "x", "p", "p", "p")
        self.assertEqual(self.state["contract"], {"level": 2, "denomination": "hearts", "doubled": 1,
                                                  "partnership": "ns"})
        self.assertEqual((self.state["declarer"], self.state["dummy"]), (KEYS[S], KEYS[N]))
        self.assertEqual(self.state["current_player"], KEYS[W], "declarer's left leads")

    def test_the_play_follows_suit_declarer_plays_dummy_and_dummy_shows_after_the_lead(self):
        self.auction("1nt", "p", "p", "p")  # North declares 1NT, East leads, South is dummy
        self.assertEqual([self.view(seat)["dummy_hand"] for seat in range(4)], [[]] * 4)
        self.refused(N, "not your turn: east plays now", kind="play", card_id=self.held(N)[0]["card_id"])
        self.refused(E, "the play takes only play", kind="pass")
        self.refused(E, "not a card in east's hand", kind="play", card_id=self.held(W)[0]["card_id"])
        self.refused(E, "not a card in east's hand", kind="play", card_id=["x"])
        lead = self.held(E)[0]
        result = self.act(E, kind="play", card_id=lead["card_id"])
        self.assertEqual([e["kind"] for e in result["events"]], ["bridge_card_played", "dummy_revealed"])
        dummy = self.held(S)
        for seat in range(4):
            self.assertEqual(self.view(seat)["dummy_hand"], dummy, "dummy is on the table for all")
        self.assertEqual(self.state["current_hand_owner"], KEYS[S])
        self.assertEqual(self.state["current_player"], KEYS[N], "declarer plays dummy's cards")
        self.assertEqual(self.view(N)["playable_hand"], dummy)
        self.assertEqual(self.view(S)["playable_hand"], dummy)
        self.refused(S, "dummy does not play", kind="play", card_id=dummy[0]["card_id"])
        following = [c for c in dummy if c["suit"] == lead["suit"]]
        others = [c for c in dummy if c["suit"] != lead["suit"]]
        if following and others:
            self.refused(N, f"must follow the led suit \\({lead['suit']}\\)", kind="play",
                         card_id=others[0]["card_id"])
        self.refused(N, "not a card in south's hand", kind="play", card_id=self.held(N)[0]["card_id"])
        self.act(N, kind="play", card_id=(following or others)[0]["card_id"])
        for _ in range(2):
            seat = KEYS.index(self.state["current_player"])
            owner = self.state["current_hand_owner"]
            legal = tricks.playable(deck.hand(self.state["deck"], owner), [e["card"] for e in self.state["current_trick"]])
            result = self.act(seat, kind="play", card_id=legal[0]["card_id"])
        won = result["events"][-1]
        trick = self.state["trick_history"][0]
        expected = trick["cards"][tricks.winner([e["card"] for e in trick["cards"]], None)]["hand_owner"]
        self.assertEqual((won["kind"], won["winner"], trick["winner"]), ("bridge_trick_won", expected, expected))
        self.assertEqual(sum(self.state["tricks"].values()), 1)
        self.assertEqual(self.state["current_hand_owner"], expected, "the winner leads next")

    def test_a_seat_sees_its_own_hand_and_dummy_never_anothers(self):
        self.auction("1nt", "p", "p", "p")
        for moment in ("before the lead", "after the lead"):
            if moment == "after the lead":
                self.act(E, kind="play", card_id=self.held(E)[0]["card_id"])
            for seat in range(4):
                view = self.view(seat)
                text = json.dumps(view)
                self.assertEqual(view["my_hand"], self.held(seat))
                self.assertNotIn("deck", view)
                self.assertNotIn(self.state["deck"]["seed"], text)
                for other in set(range(4)) - {seat}:
                    shown = other == S and moment == "after the lead"
                    for held in self.held(other):
                        self.assertEqual(held["card_id"] in text, shown, (moment, seat, other))

    def test_four_automatic_seats_play_the_board_to_its_score(self):
        for number in (1, 2, 3, 4, 6, 9):
            table = our_table(self, "contract-bridge-v1", {"deal_seed": "auto", "board_number": number})
            state = table.proto_group_initial_state(copy.deepcopy(MEMBERS))
            result = self.play_out(table, state)
            state = result["state"]
            if result["outcome"] == "passed_out":
                continue
            contract, side = state["contract"], state["contract"]["partnership"]
            self.assertEqual(sum(state["tricks"].values()), 13)
            self.assertEqual(len(state["trick_history"]), 13)
            for trick in state["trick_history"]:  # every trick went to its winning card
                played = [e["card"] for e in trick["cards"]]
                trump = None if contract["denomination"] == "nt" else contract["denomination"]
                self.assertEqual(trick["winner"], trick["cards"][tricks.winner(played, trump)]["hand_owner"])
            score = BRIDGE.board_score(contract["level"], contract["denomination"], contract["doubled"],
                                       state["tricks"][side], state["vulnerability"] in (side, "both"))
            final = result["events"][-1]
            self.assertEqual((final["kind"], final["contract_score"]), ("bridge_board_complete", score))
            winner = side if score >= 0 else ("ew" if side == "ns" else "ns")
            self.assertEqual(state["scores"], {winner: abs(score), ("ew" if winner == "ns" else "ns"): 0})
            self.assertEqual(result["outcome"], f"{side}_{'made' if score >= 0 else 'down'}")
            self.assertIsNone(table.proto_group_autoplay(table.proto_group_view(state, MEMBERS[0]), MEMBERS[0]))

    def test_a_seat_whose_member_left_is_played_for_it_and_a_new_leader_redeals(self):
        self.auction("p")
        result = self.table.proto_group_member_left(self.state, MEMBERS[E], "left")
        self.state = result["state"]
        self.assertEqual(len(self.state["auction"]), 2, "East's turn was taken for it")
        self.assertEqual(self.state["current_player"], KEYS[S])
        self.assertEqual(result["events"][0]["kind"], "member_disconnected")
        snapshot = self.table.proto_group_recovery_snapshot(self.state)
        self.assertNotIn("deck", json.dumps(snapshot))
        snapshot["scores"] = {"ns": 140, "ew": 0}
        restored = self.table.proto_group_restore(copy.deepcopy(snapshot), copy.deepcopy(MEMBERS[1:]), 1)
        self.assertEqual((restored["restart_count"], restored["away"], restored["scores"]), (1, [KEYS[N]], {"ns": 140, "ew": 0}))
        self.assertEqual(restored["current_player"], KEYS[E], "North dealt, and its call was made for it")
        self.assertEqual(restored["recovery_notice"], "The previous private board was discarded after a Leader change.")
        table = our_table(self, "contract-bridge-v1", {"deal_seed": "rules"})
        result = self.play_out(table, restored, MEMBERS[1:])
        self.assertTrue(result.get("completed"))
        back = table.proto_group_member_joined(restored, MEMBERS[N])["state"]
        self.assertEqual(back["away"], [])
        with self.assertRaisesRegex(ValueError, "one member in each of seats 0-3"):
            self.table.proto_group_restore({"board_number": 1}, copy.deepcopy(MEMBERS[1:]), 1)


class AutomaticSeat(unittest.TestCase):
    def view(self, codes: str, calls=(), seat: int = N) -> dict:
        """A view in the auction: `codes` in the seat's hand, `calls` made from the dealer, North."""
        table = our_table(self, "contract-bridge-v1", {"deal_seed": "view"})
        state = table.proto_group_initial_state(copy.deepcopy(MEMBERS))
        for call in calls:
            actor = MEMBERS[KEYS.index(state["current_player"])]
            action = {"kind": call} if call in ("pass", "double") else \
                {"kind": "bid", "level": int(call[0]), "denomination": call[1:]}
            state = table.proto_group_handle(state, actor, action)["state"]
        view = table.proto_group_view(state, MEMBERS[seat])
        view["my_hand"] = hand(codes)
        return view

    def call(self, codes: str, calls=(), seat: int = N) -> dict:
        view = self.view(codes, calls, seat)
        self.assertEqual(view["current_player"], KEYS[seat])
        return BRIDGE.choose_call(view, KEYS[seat])

    def test_bidding(self):
        opening = "AS KS 9S 7S 3S KH 4H 2H QD 5D 3C 2C 4C"  # 12 points, five spades
        self.assertEqual(self.call(opening), {"kind": "bid", "level": 1, "denomination": "spades"})
        self.assertEqual(self.call("AS KS 7S 3S KH QH 4H 2H QD JD 5D 3C 2C"),  # 15, balanced
                         {"kind": "bid", "level": 1, "denomination": "nt"})
        self.assertEqual(self.call("QS 9S 7S 3S KH 4H 2H QD 5D 3C 2C 4C 6C"), {"kind": "pass"})  # 7
        # South answers North's 1H: three hearts and 8 points raise; 13 points bid game.
        self.assertEqual(self.call("KS 9S 7S QH 4H 2H QD 5D 3D 3C 2C 4C 6C", ["1hearts", "pass"], S),
                         {"kind": "bid", "level": 2, "denomination": "hearts"})
        self.assertEqual(self.call("AS KS 7S QH 4H 2H QD 5D 3D KC 2C 4C 6C", ["1hearts", "pass"], S),
                         {"kind": "bid", "level": 4, "denomination": "hearts"})
        self.assertEqual(self.call("KS 9S 7S 3S 4H 2H QD 5D 3D AC 2C 4C 6C", ["1hearts", "pass"], S),
                         {"kind": "bid", "level": 1, "denomination": "spades"})
        self.assertEqual(self.call("9S 7S 3S 4H 2H QD 5D 3D 8C 2C 4C 6C 7C", ["1hearts", "pass"], S),
                         {"kind": "pass"})
        # North doubles East's 3H with 15 points.
        self.assertEqual(self.call("AS KS 7S QH JH 2H QD 5D 3D KC 2C 4C 6C",
                                   ["pass", "3hearts", "pass", "pass"]), {"kind": "double"})

    def play_view(self, trick: list[str], playable: str) -> dict:
        """East to play in a 4S contract by North: `trick` led from the seats before East."""
        owners = [KEYS[(E - len(trick) + i) % 4] for i in range(len(trick))]
        return {"current_hand_owner": KEYS[E], "playable_hand": hand(playable),
                "current_trick": [{"hand_owner": o, "card": card(c)} for o, c in zip(owners, trick)],
                "contract": {"denomination": "spades"},
                "players": {k: {"partnership": "ns" if i % 2 == 0 else "ew"} for i, k in enumerate(KEYS)}}

    def test_card_play(self):
        pick = lambda trick, playable: BRIDGE.choose_card(self.play_view(trick, playable))["code"]
        self.assertEqual(pick(["9H"], "2H QH KH 3S"), "QH", "win as cheaply as it can")
        self.assertEqual(pick(["AH"], "2H QH KH 3S"), "2H", "follow low when it cannot win")
        self.assertEqual(pick(["9H"], "2D 4S 3S"), "3S", "ruff with the lowest trump")
        self.assertEqual(pick(["9H", "KH", "2H"], "3H AH"), "3H", "partner is winning: low")
        self.assertEqual(pick(["9H", "KH", "2H"], "4D 2C AS"), "2C", "partner is winning: the lowest discard")
        self.assertEqual(pick([], "2H QH 3S AD 5D 9D"), "AD", "lead the ace heading the longest side suit")
        self.assertEqual(pick([], "2H QH KH 3S 5D 9D"), "2H", "else low from the longest side suit")


class SideBySide(TableSideBySide):
    alias = "contract-bridge-v1"
    # What the deal decides once the cards are played: the cards, who wins each trick, who
    # plays next (and so how many cards each hand holds) and the score.
    PLAY_FIELDS = {"my_hand", "playable_hand", "dummy_hand", "current_trick", "trick_history", "tricks",
                   "scores", "current_player", "current_hand_owner", "hand_counts"}

    def card_decided(self, view):
        if view["phase"] == "auction":
            return {"my_hand", "playable_hand"}
        return self.PLAY_FIELDS

    def test_an_auction_with_every_refusal_and_a_board_played_to_its_end_agree(self):
        bid = lambda level, denomination: {"kind": "bid", "level": level, "denomination": denomination}
        steps = [{"seat": E, "action": {"kind": "pass"}}] + [{"action": a} for a in [
            {"kind": "double"}, {"kind": "redouble"}, {"kind": "claim"}, bid(0, "clubs"), bid(8, "nt"),
            bid("1", "clubs"), bid(True, "clubs"), bid(1, "notrump"),
            bid(1, "clubs"), bid(1, "clubs"), {"kind": "redouble"}, bid(1, "hearts"),
            {"kind": "double"}, {"kind": "double"}, {"kind": "redouble"}, {"kind": "redouble"},
            {"kind": "double"}, bid(1, "spades"), {"kind": "pass"}, bid(2, "spades"),
            {"kind": "pass"}, {"kind": "pass"}, {"kind": "pass"}]]
        steps += [{"seat": N, "card": "lowest"}, {"seat": S, "card": "lowest"}, {"card": "unheld"},
                  {"action": {"kind": "pass"}}]
        steps += [{"card": "lowest"}] * 52
        ours = self.both(None, steps, {"deal_seed": "side"})
        statuses = [step["status"] for step in ours[1:]]
        self.assertEqual(statuses[:24].count("refused"), 14)
        self.assertEqual(statuses[24:28], ["refused"] * 4)
        self.assertEqual(statuses[28:], ["ok"] * 52)
        last = ours[-1]["views"][0]
        self.assertEqual((last["phase"], last["contract"]["level"], last["declarer"]), ("completed", 2, KEYS[N]))
        self.assertTrue(ours[-1]["completed"])

    def test_a_passed_out_board_and_a_redealt_board_agree(self):
        ours = self.both(None, [{"action": {"kind": "pass"}}] * 4, {"deal_seed": "out", "board_number": 3})
        self.assertTrue(ours[-1]["completed"])
        start = {"board_number": 6, "restart_count": 0, "scores": {"ns": 420, "ew": 50}}
        steps = [{"action": a} for a in ({"kind": "bid", "level": 3, "denomination": "nt"},
                                         {"kind": "double"}, {"kind": "pass"}, {"kind": "pass"})]
        ours = self.both(start, steps, {"deal_seed": "again"})
        first = ours[0]["views"][0]
        self.assertEqual((first["restart_count"], first["dealer"], first["vulnerability"], first["scores"]),
                         (1, KEYS[E], "ew", {"ns": 420, "ew": 50}))


def cards_in_play(state: dict) -> int:
    """Every card: in the hands and played."""
    table = state["deck"]
    return sum(map(len, table["hands"].values())) + len(table["zones"].get("played", []))


if __name__ == "__main__":
    unittest.main()


class BridgeChoices(TableChoices, unittest.TestCase):
    alias = "contract-bridge-v1"
    options = {"board_number": 1, "deal_seed": "choices"}
