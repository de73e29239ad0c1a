"""Our Aether Sigil table (src/protocols/well_known/aether-sigil-v1): the 72-card shared pile and
the five-card deal; every rule a leader enforces, with its reason and the state untouched;
combat, shields, relics, spells, the next turn's Aether and draw, and fatigue, worked out by
hand; the last channeler winning with every seat's life as the score; what each seat may see; a
seat whose member is gone played for it and a new leader dealing a fresh match; the automatic
seat's choices; four automatic seats to the end; and the same table side by side with the
reference's hooks (the same actions taken or refused, the same view shapes and, where no card
decides it, the same values)."""
from __future__ import annotations

import copy
import json
import time
import unittest
from collections import Counter

from table_cases import TableChoices, TableRules, TableSideBySide, our_table
from table_steps import MEMBERS
from test_well_known import load_module

from aigenora.proto import deck

SIGIL = load_module("aether-sigil-v1")
KEYS = [m["public_key"] for m in MEMBERS]


class SigilTable(TableRules):
    """Our table dealt with a pinned seed, and ways to put a named card where a case needs it."""

    alias = "aether-sigil-v1"
    options = {"deal_seed": "rules"}

    def conserved(self, state):
        table = state["deck"]
        held = sum(map(len, table["hands"].values())) + sum(map(len, table["zones"].values())) + len(table["pile"])
        self.assertEqual(held, 72, "no card is made or lost")

    def player(self, seat: int) -> dict:
        return self.state["players"][KEYS[seat]]

    def give(self, seat: int, name: str) -> str:
        """Moves a card named `name` from the pile into the seat's hand; its id."""
        table = self.state["deck"]
        card_id = next(c for c in table["pile"] if table["catalog"][c]["name"] == name)
        table["pile"].remove(card_id)
        table["hands"][KEYS[seat]].append(card_id)
        return card_id

    def field(self, seat: int, name: str, ready: bool = True) -> str:
        """Puts a unit or relic named `name` on the seat's row as if it had been played."""
        card_id = self.give(seat, name)
        current = self.state["current_player"]
        self.state["current_player"] = KEYS[seat]
        energy, self.player(seat)["energy"] = self.player(seat)["energy"], 10
        self.act(seat, kind="play_card", card_id=card_id)
        self.player(seat)["energy"] = energy
        self.state["current_player"] = current
        if card_id in self.state["unit_state"]:
            self.state["unit_state"][card_id]["exhausted"] = not ready
        return card_id


class Table(SigilTable):
    def test_five_cards_each_from_one_pile_of_four_copies_of_eighteen_faces(self):
        faces = Counter(card["name"] for card in self.state["deck"]["catalog"].values())
        self.assertEqual((len(faces), set(faces.values())), (18, {4}))
        self.assertEqual([len(self.state["deck"]["hands"][key]) for key in KEYS], [5] * 4)
        self.assertEqual(len(self.state["deck"]["pile"]), 52)
        self.assertEqual((self.state["current_player"], self.player(0)["energy"], self.player(0)["life"]),
                         (KEYS[0], 1, 20))

    def test_every_illegal_action_is_refused_with_its_reason(self):
        drake, shot, dissolve = self.give(0, "Ember Drake"), self.give(0, "Cinder Shot"), self.give(0, "Dissolve")
        self.refused(1, "not your turn: seat 0", kind="end_turn")
        self.refused(0, "play_card, attack, end_turn or concede", kind="fly")
        self.refused(0, "not a card in your hand", kind="play_card", card_id="nope")
        self.refused(0, "not a card in your hand", kind="play_card", card_id=self.state["deck"]["hands"][KEYS[1]][0])
        self.refused(0, "Ember Drake costs 5 Aether; you have 1", kind="play_card", card_id=drake)
        for target in (KEYS[0], "someone", None):
            self.refused(0, "must be an active opponent", kind="play_card", card_id=shot, target_public_key=target)
        self.player(0)["energy"] = 10
        for _ in range(3):
            self.field(0, "Iron Finch")
        self.refused(0, "unit row is full", kind="play_card", card_id=self.give(0, "Dawnling"))
        self.field(0, "Sun Dial"), self.field(0, "Sun Dial")
        self.refused(0, "relic row is full", kind="play_card", card_id=self.give(0, "Prism Lens"))
        own, big = self.state["deck"]["zones"][f"units:{KEYS[0]}"][0], self.field(1, "Void Lynx")
        self.refused(0, "Dissolve must target an opposing unit", kind="play_card", card_id=dissolve, target_card_id=own)
        self.refused(0, "power 3 or less", kind="play_card", card_id=dissolve, target_card_id=big)
        self.refused(0, "not a unit on the table", kind="play_card", card_id=dissolve, target_card_id="nope")
        self.refused(0, "not one of your units", kind="attack", unit_id=big, target_public_key=KEYS[1])
        self.refused(0, "cannot attack an allied unit", kind="attack", unit_id=own,
                     target_card_id=self.state["deck"]["zones"][f"units:{KEYS[0]}"][1])
        self.state["unit_state"][own]["exhausted"] = True
        self.refused(0, "exhausted", kind="attack", unit_id=own, target_public_key=KEYS[1])
        self.player(2)["defeated"] = True
        self.refused(0, "must be an active opponent", kind="play_card", card_id=shot, target_public_key=KEYS[2])

    def test_combat_is_simultaneous_and_a_unit_enters_exhausted(self):
        self.player(0)["energy"] = 10
        hound = self.give(0, "Glass Hound")
        self.act(0, kind="play_card", card_id=hound)
        self.assertEqual(self.player(0)["energy"], 8)
        self.refused(0, "exhausted", kind="attack", unit_id=hound, target_public_key=KEYS[1])
        self.state["unit_state"][hound]["exhausted"] = False
        scribe = self.field(1, "Tide Scribe")
        # A 3/2 into a 2/3: each deals its power against the other's guard, and both fall.
        result = self.act(0, kind="attack", unit_id=hound, target_card_id=scribe)
        self.assertEqual([e["kind"] for e in result["events"]], ["unit_combat", "unit_destroyed", "unit_destroyed"])
        self.assertEqual(self.state["deck"]["zones"]["discard"], [scribe, hound])
        self.assertEqual(self.state["unit_state"], {})
        # A 4/6 into a 2/1 survives with 2 damage, exhausted.
        giant, dawnling = self.field(0, "Verdant Giant"), self.field(2, "Dawnling")
        self.act(0, kind="attack", unit_id=giant, target_card_id=dawnling)
        self.assertEqual(self.state["unit_state"][giant], {"damage": 2, "exhausted": True, "power_bonus": 0})

    def test_a_shield_takes_damage_before_life(self):
        drake = self.field(0, "Ember Drake")
        self.player(1)["shield"] = 4
        result = self.act(0, kind="attack", unit_id=drake, target_public_key=KEYS[1])
        self.assertEqual(result["events"][0]["amount"], 2)
        self.assertEqual((self.player(1)["shield"], self.player(1)["life"]), (0, 18))

    def test_relics_and_spells_do_what_their_text_says(self):
        self.field(0, "Living Forge"), self.field(0, "Prism Lens")
        lynx = self.field(0, "Void Lynx")
        self.assertEqual(self.state["unit_state"][lynx]["power_bonus"], 1, "a unit summoned after the Forge")
        self.player(0)["energy"] = 10
        self.act(0, kind="play_card", card_id=self.give(0, "Cinder Shot"), target_public_key=KEYS[2])
        self.assertEqual(self.player(2)["life"], 17, "2 and the Lens's 1")
        self.player(0)["life"] = 18
        self.act(0, kind="play_card", card_id=self.give(0, "Mending Rain"))
        self.assertEqual(self.player(0)["life"], 20, "healed up to the starting life")
        self.act(0, kind="play_card", card_id=self.give(0, "Pulse Shield"))
        self.assertEqual(self.player(0)["shield"], 4)
        star = self.give(0, "Star Map")
        before = len(self.state["deck"]["hands"][KEYS[0]])
        self.act(0, kind="play_card", card_id=star)
        self.assertEqual(len(self.state["deck"]["hands"][KEYS[0]]), before + 1, "one played, two drawn")
        tide = self.field(3, "Tide Scribe")
        self.player(0)["energy"] = 3
        self.act(0, kind="play_card", card_id=self.give(0, "Dissolve"), target_card_id=tide)
        self.assertNotIn(tide, self.state["unit_state"])
        self.state["unit_state"][lynx]["exhausted"] = True
        self.player(0)["energy"] = 2
        self.act(0, kind="play_card", card_id=self.give(0, "Rally Spark"))
        self.assertFalse(self.state["unit_state"][lynx]["exhausted"])

    def test_the_next_turn_raises_aether_draws_readies_and_a_sun_dial_heals(self):
        self.field(0, "Sun Dial")
        self.player(0)["life"] = 15
        finch = self.field(1, "Iron Finch", ready=False)
        result = self.act(0, kind="end_turn")
        self.assertEqual([e["kind"] for e in result["events"]], ["relic_heal", "turn_started", "card_drawn"])
        self.assertEqual(self.player(0)["life"], 16)
        self.assertEqual((self.state["current_player"], self.player(1)["energy"], self.player(1)["max_energy"]),
                         (KEYS[1], 2, 2))
        self.assertEqual((len(self.state["deck"]["hands"][KEYS[1]]), self.state["turn_number"]), (6, 2))
        self.assertFalse(self.state["unit_state"][finch]["exhausted"])
        self.player(2)["max_energy"] = 10
        self.act(1, kind="end_turn")
        self.assertEqual(self.player(2)["energy"], 10, "at most ten")

    def test_drawing_from_an_empty_pile_deals_growing_fatigue(self):
        table = self.state["deck"]
        table["zones"][SIGIL.DISCARD] = table["pile"][:]
        table["pile"].clear()
        self.act(0, kind="end_turn")
        self.act(1, kind="end_turn")
        self.act(2, kind="end_turn")
        self.act(3, kind="end_turn")
        self.act(0, kind="end_turn")
        self.assertEqual((self.player(1)["fatigue"], self.player(1)["life"]), (2, 17))
        self.player(2)["life"] = 1
        result = self.act(1, kind="end_turn")
        self.assertTrue(self.player(2)["defeated"])
        self.assertEqual(self.state["current_player"], KEYS[3], "the turn passes over a fallen channeler")
        self.assertIn("fatigue", [e["kind"] for e in result["events"]])

    def test_the_last_channeler_wins_and_the_match_ends_with_every_life(self):
        drake = self.field(3, "Ember Drake")
        self.act(0, kind="concede")
        self.assertEqual((self.state["current_player"], self.player(0)["life"]), (KEYS[1], 0))
        self.player(2).update(life=0, defeated=True)
        self.player(1)["life"] = 6
        self.state["current_player"] = KEYS[3]
        self.player(3)["life"] = 5
        result = self.act(3, kind="attack", unit_id=drake, target_public_key=KEYS[1])
        self.assertTrue(result["completed"])
        self.assertEqual(result["outcome"], KEYS[3])
        self.assertEqual(result["events"][-1], {"kind": "game_over", "winner": KEYS[3],
                                                "life": dict(zip(KEYS, [0, 0, 0, 5]))})
        self.assertEqual((self.state["phase"], self.state["winner"]), ("completed", KEYS[3]))
        self.refused(3, "the match is complete", kind="end_turn")

    def test_a_seat_sees_its_own_hand_and_only_counts_of_the_others(self):
        lynx = self.field(1, "Void Lynx")
        view = self.view(0)
        self.assertEqual([c["card_id"] for c in view["my_hand"]], self.state["deck"]["hands"][KEYS[0]])
        self.assertEqual(view["hand_counts"], dict(zip(KEYS, [5, 5, 5, 5])))
        self.assertEqual([u["card_id"] for u in view["units"][KEYS[1]]], [lynx])
        self.assertEqual(view["draw_count"], 51)
        text = json.dumps(view)
        for key in KEYS[1:]:
            for card_id in self.state["deck"]["hands"][key]:
                self.assertNotIn(card_id, text)
        self.assertNotIn("pile", view)

    def test_a_seat_whose_member_left_is_played_for_it_and_a_new_leader_deals_a_fresh_match(self):
        result = self.table.proto_group_member_left(self.state, MEMBERS[1], "left")
        self.state = result["state"]
        result = self.act(0, kind="end_turn")
        self.assertEqual(self.state["current_player"], KEYS[2], "seat 1's turn was played for it")
        self.assertIn({"kind": "turn_started", "public_key": KEYS[2]}, result["events"])
        snapshot = self.table.proto_group_recovery_snapshot(self.state)
        self.assertNotIn("deck", json.dumps(snapshot))
        restored = self.table.proto_group_restore(copy.deepcopy(snapshot), copy.deepcopy(MEMBERS[1:]), 1)
        self.assertEqual((restored["restart_count"], restored["away"], restored["current_player"]),
                         (1, [KEYS[0]], KEYS[1]))
        self.assertEqual(restored["recovery_notice"], SIGIL.NOTICE)
        result = self.play_out(self.table, restored, MEMBERS[1:])
        self.assertIn(result["outcome"], KEYS)
        back = self.table.proto_group_member_joined(restored, MEMBERS[0])["state"]
        self.assertEqual(back["away"], [])
        with self.assertRaisesRegex(ValueError, "one member in each of seats 0-3"):
            self.table.proto_group_restore({"restart_count": 0}, copy.deepcopy(MEMBERS[1:]), 1)

    def test_four_automatic_seats_play_the_match_to_its_end(self):
        winners = Counter()
        for number in range(12):
            table = our_table(self, self.alias, {"deal_seed": f"auto {number}"})
            result = self.play_out(table, table.proto_group_initial_state(copy.deepcopy(MEMBERS)))
            state, final = result["state"], result["events"][-1]
            winners[result["outcome"]] += 1
            self.assertEqual(final["winner"], result["outcome"])
            standing = [k for k in KEYS if not state["players"][k]["defeated"]]
            self.assertEqual(standing, [result["outcome"]])
            self.assertEqual(final["life"], {k: p["life"] for k, p in state["players"].items()})
            self.assertGreater(final["life"][result["outcome"]], 0)
            self.assertIsNone(table.proto_group_autoplay(table.proto_group_view(state, MEMBERS[0]), MEMBERS[0]))
        self.assertGreater(len(winners), 1, winners)


class AutomaticSeat(SigilTable):
    def choose(self, seat: int = 0) -> dict:
        return SIGIL.choose(self.view(seat))

    def test_it_finishes_an_opponent_with_a_spell_it_can_afford(self):
        shot = self.give(0, "Cinder Shot")
        self.player(3)["life"] = 2
        self.assertEqual(self.choose(), {"kind": "play_card", "card_id": shot, "target_public_key": KEYS[3]})

    def test_it_plays_its_best_unit_then_trades_then_hits_the_weakest_then_ends(self):
        table = self.state["deck"]
        table["zones"][SIGIL.DISCARD] = table["hands"][KEYS[0]][:]
        table["hands"][KEYS[0]].clear()
        finch, drake = self.give(0, "Iron Finch"), self.give(0, "Ember Drake")
        self.player(0)["energy"] = 5
        self.assertEqual(self.choose()["card_id"], drake, "the card worth most it can pay for")
        table["hands"][KEYS[0]].remove(drake)
        table["pile"].append(drake)
        self.player(0)["energy"] = 0
        hound = self.field(0, "Glass Hound")
        lynx = self.field(2, "Void Lynx", ready=False)
        self.player(1)["life"] = 9
        # The Hound (3/2) would die to the Lynx's 4: it goes at the weakest channeler instead.
        self.assertEqual(self.choose(), {"kind": "attack", "unit_id": hound, "target_public_key": KEYS[1]})
        giant = self.field(0, "Verdant Giant")
        self.assertEqual(self.choose(), {"kind": "attack", "unit_id": giant, "target_card_id": lynx})
        for unit in (hound, giant):
            self.state["unit_state"][unit]["exhausted"] = True
        self.assertEqual(self.choose(), {"kind": "end_turn"})

    def test_a_decision_stays_within_a_small_time_budget(self):
        started = time.perf_counter()
        for _ in range(50):
            self.choose()
        self.assertLess((time.perf_counter() - started) / 50, 0.05)


class SideBySide(TableSideBySide):
    """The hands differ between the two deals, and a view's shape lists the kinds of card a
    hand holds (a unit, a card with an amount, Dissolve with its max_power): each pinned seed is
    one under which every hand holds the same kinds on both at every step."""

    alias = "aether-sigil-v1"

    def card_decided(self, view):
        return {"my_hand"}

    def test_refusals_turns_and_concessions_to_the_end_agree(self):
        turn = {"action": {"kind": "end_turn"}}
        steps = [{"seat": 1, "action": {"kind": "end_turn"}}, {"action": {"kind": "fly"}},
                 {"action": {"kind": "play_card", "card_id": "nope"}},
                 {"action": {"kind": "play_card", "card_id": 7}},
                 {"action": {"kind": "attack", "unit_id": "nope", "target_public_key": KEYS[1]}},
                 turn, turn, turn, turn, turn,
                 {"action": {"kind": "concede"}}, {"action": {"kind": "concede"}}, turn,
                 {"action": {"kind": "concede"}}, turn]
        ours = self.both(None, steps, {"deal_seed": "side 66", "starting_life": 12})
        self.assertEqual([step["status"] for step in ours[1:]], ["refused"] * 5 + ["ok"] * 9 + ["refused"])
        last = ours[-2]
        self.assertTrue(last["completed"])
        view = last["views"][0]
        self.assertEqual((view["phase"], view["winner"]), ("completed", KEYS[3]))
        self.assertEqual(view["players"][KEYS[0]]["max_energy"], 3)

    def test_a_new_leaders_fresh_match_agrees(self):
        ours = self.both({"restart_count": 2, "public_outcome": ""}, [{"action": {"kind": "end_turn"}}],
                         {"deal_seed": "side 4"})
        self.assertEqual(ours[0]["views"][0]["restart_count"], 3)


if __name__ == "__main__":
    unittest.main()


class SigilChoices(TableChoices, unittest.TestCase):
    alias = "aether-sigil-v1"
    options = {"starting_life": 10, "deal_seed": "choices"}
