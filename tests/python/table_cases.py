"""What the four-seat tables' tests share: one of our tables, dealt to the test members, that
takes actions and checks refusals; and the same table played on our hooks and on the
reference's (table_steps.py under each interpreter), compared step by step: every action taken
or refused alike, every view of the same shape, and every value that no card decides the same."""
from __future__ import annotations

import copy
import json
import os
import random
import subprocess
import unittest
from pathlib import Path

import driver
import harness
from table_steps import MEMBERS, play
from test_well_known import reference_dir

# More actions than any automatic table takes to complete.
MOST_ACTIONS = 400


def our_table(test: unittest.TestCase, alias: str, options: dict):
    """Our hooks for the table `alias`, initialised as its leader with `options`."""
    hooks = driver.load_hooks(harness.OUR_PROTOCOLS / "well_known" / alias)
    hooks.proto_init(options, "host", [], harness.scratch_dir(test))
    return hooks


class TableRules(unittest.TestCase):
    """Our table `alias` with `options`, dealt to the four test members: `act` takes a seat's
    action and then checks `conserved`; `refused` checks the refusal's reason and that the
    state is untouched; `view` is what a seat sees."""

    alias = ""
    options: dict = {}

    def conserved(self, state: dict) -> None:
        raise NotImplementedError

    def setUp(self):
        self.table = our_table(self, self.alias, self.options)
        self.state = self.table.proto_group_initial_state(copy.deepcopy(MEMBERS))

    def act(self, seat: int, **action) -> dict:
        result = self.table.proto_group_handle(self.state, MEMBERS[seat], action)
        self.state = result["state"]
        self.conserved(self.state)
        return result

    def refused(self, seat: int, pattern: str, **action) -> None:
        before = copy.deepcopy(self.state)
        with self.assertRaisesRegex(ValueError, pattern):
            self.table.proto_group_handle(copy.deepcopy(self.state), MEMBERS[seat], action)
        self.assertEqual(self.state, before)

    def view(self, seat: int) -> dict:
        return self.table.proto_group_view(copy.deepcopy(self.state), MEMBERS[seat])

    def play_out(self, table, state: dict, members=MEMBERS) -> dict:
        """Automatic seats (of `members`) play `table` from `state` until it completes: only the
        seat to act offers an action when the state names one (in a phase without turns, the
        first seat that offers one acts), every action within the contract's events and
        `conserved`; the last result."""
        for _ in range(MOST_ACTIONS):
            chosen = [(m, table.proto_group_autoplay(table.proto_group_view(copy.deepcopy(state), m), m))
                      for m in members]
            movers = [(m, a) for m, a in chosen if a is not None]
            if state["current_player"]:
                self.assertEqual([m["public_key"] for m, _ in movers], [state["current_player"]])
            result = table.proto_group_handle(state, *movers[0])
            self.assertLessEqual(len(result["events"]), 32, "within the contract's events per action")
            state = result["state"]
            self.conserved(state)
            if result.get("completed"):
                return result
        self.fail("the table did not complete")


class TableChoices:
    """Our table `alias` with `options` played to its end, checking at every step what
    `proto_group_choices` lists for each seat: nothing exactly when the seat has no move, every
    choice taken by the leader (a free amount at both ends of its range; a pick with its fewest
    and its most items and a random few — except the picks named in `judged_picks`, which offer
    more than is legal and which the leader judges, refusing with its reason: their labels' beginnings), and the automatic
    seat's own action among them. Played once by automatic seats, and once for each of
    `steered_seeds` by seats that take, where `steer` says, a choice the automatic seat would
    not (a person's)."""

    alias = ""
    options: dict = {}
    judged_picks: tuple = ()
    steered_seeds: tuple = ()

    def steer(self, choices: list[dict], chosen: dict, draw: random.Random) -> dict:
        """The action a steered seat takes: by default a random choice, filled in."""
        return draw.choice(filled(draw.choice(choices), draw))

    def test_every_choice_is_legal_and_the_automatic_move_is_one_of_them(self):
        self.play_checking_choices(None)

    def test_every_choice_is_legal_along_games_steered_off_the_automatic_moves(self):
        for seed in self.steered_seeds:
            with self.subTest(seed=seed):
                self.play_checking_choices(random.Random(seed))

    def play_checking_choices(self, draw: random.Random | None):
        table = our_table(self, self.alias, self.options)
        state = table.proto_group_initial_state(copy.deepcopy(MEMBERS))
        for _ in range(MOST_ACTIONS * self.options.get("max_hands", 1)):
            moved = None
            for member in MEMBERS:
                view = table.proto_group_view(copy.deepcopy(state), member)
                choices = table.proto_group_choices(copy.deepcopy(view), member)
                chosen = table.proto_group_autoplay(copy.deepcopy(view), member)
                self.assertEqual(choices == [], chosen is None, (member["seat"], chosen, choices))
                if chosen is None:
                    continue
                json.dumps(choices)
                self.assertLessEqual(len(choices), 256)
                for entry in choices:
                    self.assertTrue(0 < len(entry["label"].encode()) <= 120, entry)
                    for action in filled(entry, draw or random.Random(0)):
                        try:
                            table.proto_group_handle(copy.deepcopy(state), member, copy.deepcopy(action))
                        except ValueError:
                            if "pick" not in entry or not entry["label"].startswith(self.judged_picks):
                                raise
                self.assertTrue(any(fits(entry, chosen) for entry in choices), (chosen, choices))
                if draw is not None and moved is None:
                    chosen = self.steer(choices, chosen, draw)
                    try:
                        table.proto_group_handle(copy.deepcopy(state), member, copy.deepcopy(chosen))
                    except ValueError:  # (a judged pick the leader refused: the seat plays on)
                        chosen = table.proto_group_autoplay(copy.deepcopy(view), member)
                moved = moved or (member, chosen)
            self.assertIsNotNone(moved, "someone has a move until the table ends")
            result = table.proto_group_handle(state, *moved)
            state = result["state"]
            if result.get("completed"):
                return
        self.fail("the table did not complete")


def filled(entry: dict, draw: random.Random) -> list[dict]:
    """A choice's action; for a free amount its action at both ends of the range; for a pick,
    its action with the fewest items, the most and a random number of random ones."""
    if "amount" in entry:
        amount = entry["amount"]
        return [dict(entry["action"], **{amount["field"]: at}) for at in (amount["min"], amount["max"])]
    if "pick" in entry:
        pick = entry["pick"]
        values = [item["value"] for item in pick["from"]]
        some = draw.sample(values, draw.randint(pick["min"], pick["max"]))
        return [dict(entry["action"], **{pick["field"]: chosen})
                for chosen in (values[:pick["min"]], values[:pick["max"]], some)]
    return [entry["action"]]


def fits(entry: dict, action: dict) -> bool:
    """Whether `action` is this choice (an amount within its range, items it offers)."""
    free = entry.get("amount") or entry.get("pick")
    if free is None:
        return entry["action"] == action
    rest = {k: v for k, v in action.items() if k != free["field"]}
    if rest != entry["action"] or free["field"] not in action:
        return False
    given = action[free["field"]]
    if "amount" in entry:
        return free["min"] <= given <= free["max"]
    offered = {item["value"] for item in free["from"]}
    return free["min"] <= len(set(given)) == len(given) <= free["max"] and set(given) <= offered


def pick(cards: list[dict], names: str, field: str) -> list[dict]:
    """One different card of `cards` for each of the space-separated `names`, matched on the
    card's `field` (e.g. a tile's "code")."""
    left = list(cards)
    chosen = []
    for name in names.split():
        card = next(c for c in left if c[field] == name)
        left.remove(card)
        chosen.append(card)
    return chosen


def shape(value):
    """A value's structure: keys and types, lists by their items' shapes."""
    if isinstance(value, dict):
        return {key: shape(item) for key, item in value.items()}
    if isinstance(value, list):  # (how many items a card can decide: who won, say)
        return sorted({json.dumps(shape(item), sort_keys=True) for item in value})
    return type(value).__name__


# The view fields our tables add (a reference member reads past them): our deals' commitments
# and openings (aigenora.proto.fair_deal), and Mahjong's note that a seat which has just claimed
# a pung or chow discards before it may win (so its choices never offer that win).
OURS_ALONE = frozenset({"fair_deal", "must_discard_after_claim"})


class TableSideBySide(unittest.TestCase):
    """A table's side-by-side runs: `alias` names the contract, `card_decided` the view fields
    whose values the deal decides (None: compare no values in this view)."""

    alias = ""

    def card_decided(self, view: dict) -> set[str] | None:
        raise NotImplementedError

    def both(self, start, steps, options, uneven=()) -> list:
        """Plays `steps` from `start` (None: a fresh table) on both; `uneven` names the steps
        after which the seats may hold different numbers of cards on the two (one trick's
        winner leads the next), where only the status is compared."""
        job = {"options": options, "start": start, "steps": steps}
        ours = play(dict(job, hooks=str(harness.OUR_PROTOCOLS / "well_known" / self.alias)))
        work = harness.scratch_dir(self)
        (work / "job.json").write_text(json.dumps(dict(job, hooks=str(reference_dir(self.alias)))))
        env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
        done = subprocess.run([harness.REFERENCE_PYTHON, str(harness.TESTS_DIR / "table_steps.py"),
                               str(work / "job.json"), str(work / "out.json")],
                              capture_output=True, text=True, env=env, cwd=str(harness.TESTS_DIR))
        self.assertEqual(done.returncode, 0, done.stderr)
        theirs = json.loads(Path(work / "out.json").read_text())
        self.assertEqual(len(ours), len(theirs))
        for index, (mine, ref) in enumerate(zip(ours, theirs)):
            where = f"step {index}: {json.dumps(([None] + steps)[index])}"
            self.assertEqual(mine["status"], ref["status"], f"{where}: {mine.get('reason')} / {ref.get('reason')}")
            if mine["status"] != "ok":
                continue
            self.assertEqual(mine.get("completed"), ref.get("completed"), where)
            if index in uneven:
                continue
            for ours_view, ref_view in zip(mine["views"], ref["views"]):
                ours_view = {key: value for key, value in ours_view.items() if key not in OURS_ALONE}
                self.assertEqual(shape(ours_view), shape(ref_view), where)
                self.assertEqual({tuple(c) for c in ours_view["my_hand"]}, {tuple(c) for c in ref_view["my_hand"]})
                hidden = self.card_decided(ours_view)
                if hidden is None:
                    continue
                self.assertEqual({k: v for k, v in ours_view.items() if k not in hidden},
                                 {k: v for k, v in ref_view.items() if k not in hidden}, where)
        return ours
