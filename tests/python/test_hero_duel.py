"""The hero-duel built-in: its rules as pure functions, its presets against the spec's balance
columns, duels driven to the end with the shadow judge checking every round, the options the
host advertises, decisions, bad options, and the cheating-host fixture caught field by field."""
from __future__ import annotations

import importlib.util
import json
import unittest

import harness
import driver
from test_builtin_protocols import cli_decision, play, results

HERO_DUEL = harness.OUR_PROTOCOLS / "hero-duel"
CHEAT = harness.TESTS_DIR.parent / "fixtures" / "hero-duel-cheat"
SPEC = json.loads((HERO_DUEL / "spec.json").read_text(encoding="utf-8"))


def load_module(path):
    spec = importlib.util.spec_from_file_location(f"hero_duel_{abs(hash(str(path)))}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


rules = load_module(HERO_DUEL / "hooks.py")
cheat = load_module(CHEAT / "hooks.py")

TWO_HEROES = {  # a small custom table: no armor, no cooldowns on a
    "duelist": {"hp": 100, "mana": 30, "regen": 5, "attack": 10, "armor": 0, "guard": 50,
                "a": {"damage": 20, "cost": 10, "cooldown": 0}, "b": {"damage": 30, "cost": 20, "cooldown": 2},
                "ult": {"damage": 60, "cost": 30, "cooldown": 9}},
    "brute": {"hp": 150, "mana": 0, "regen": 0, "attack": 18, "armor": 4, "guard": 0,
              "a": {"damage": 99, "cost": 1, "cooldown": 0}, "b": {"damage": 99, "cost": 1, "cooldown": 0},
              "ult": {"damage": 99, "cost": 1, "cooldown": 0}},
}


def fits(schema: dict, value, path: str) -> list[str]:
    """Where a balance value breaks the spec's table columns (every column required)."""
    if schema["type"] == "object":
        return fits({"type": "row", "columns": schema["fields"]}, value, path)
    if schema["type"] == "row":
        problems = [f"{path}: columns {sorted(value)}"] if set(value) != set(schema["columns"]) else []
        for key, column in schema["columns"].items():
            problems += fits(column, value.get(key), f"{path}.{key}")
        return problems
    ok = type(value) is int and schema["min"] <= value <= schema["max"]
    return [] if ok else [f"{path}: {value!r}"]


class Rules(unittest.TestCase):
    def setUp(self):
        self.rows = {"host": rules.STANDARD["knight"], "guest": rules.STANDARD["ranger"]}
        self.fighters = {side: rules.fresh_fighter(self.rows[side]) for side in rules.SIDES}

    def resolve(self, host, guest, round_index=0, max_rounds=30):
        return rules.resolve_round(self.rows, self.fighters, {"host": host, "guest": guest},
                                   round_index, max_rounds)

    def test_worked_example(self):
        after, result = self.resolve("ult", "a")
        self.assertEqual(result, {
            "action": "round_result", "round": 0, "host_move": "ult", "guest_move": "a",
            "host_hp": 420 - (45 - 6), "guest_hp": 330 - (120 - 3), "host_mana": 60 - 55 + 10,
            "guest_mana": 80 - 20 + 14, "host_damage_dealt": 117, "guest_damage_dealt": 39,
            "host_cd_a": 0, "host_cd_b": 0, "host_cd_ult": 4, "guest_cd_a": 1, "guest_cd_b": 0,
            "guest_cd_ult": 0, "round_winner": "host", "game_over": False, "game_winner": "none",
        })
        self.assertEqual(after, rules.fighters_from_result(result))
        self.assertEqual(self.fighters["host"], rules.fresh_fighter(self.rows["host"]), "inputs untouched")

    def test_cooldowns_mana_and_guard(self):
        self.fighters, _ = self.resolve("ult", "guard")
        after, result = self.resolve("ult", "guard", round_index=1)
        self.assertEqual(result["host_move"], "strike", "ult is cooling down")
        self.assertEqual(result["host_cd_ult"], 3)
        self.assertEqual(result["host_damage_dealt"], (22 - 3) * 60 // 100)
        self.assertEqual(result["host_mana"], 15 + 10)
        broke = dict(self.fighters, host=dict(after["host"], mana=0, cd={"a": 0, "b": 0, "ult": 0}))
        played = rules.resolve_round(self.rows, broke, {"host": "b", "guest": "strike"}, 2, 30)[1]
        self.assertEqual(played["host_move"], "strike", "b is unaffordable")

    def test_endings(self):
        self.fighters["guest"]["hp"] = 5
        _, result = self.resolve("a", "strike")
        self.assertEqual((result["host_damage_dealt"], result["guest_hp"]), (5, 0), "at most the HP left")
        self.assertEqual((result["game_over"], result["game_winner"]), (True, "host"))
        self.fighters["host"]["hp"] = 1
        _, result = self.resolve("a", "strike")
        self.assertEqual(result["game_winner"], "draw")
        self.fighters = {side: rules.fresh_fighter(self.rows[side]) for side in rules.SIDES}
        _, result = self.resolve("guard", "guard", round_index=4, max_rounds=5)
        self.assertEqual((result["game_over"], result["game_winner"], result["round_winner"]),
                         (True, "draw", "draw"))
        self.fighters["guest"]["hp"] = 329
        self.assertEqual(self.resolve("guard", "guard", 4, 5)[1]["game_winner"], "host", "larger HP share")

    def test_presets_fit_the_spec_columns(self):
        row_schema = {"type": "row", "columns": SPEC["parameters"]["balance"]["columns"]}
        self.assertIn("standard", rules.PRESETS)
        for name, table in rules.PRESETS.items():
            for hero, row in table.items():
                self.assertEqual(fits(row_schema, row, f"{name}.{hero}"), [])

    def test_balance_resolution(self):
        self.assertIs(rules.resolve_balance({}), rules.STANDARD)
        self.assertIs(rules.resolve_balance({"preset": "arcane"}), rules.PRESETS["arcane"])
        self.assertIs(rules.resolve_balance({"preset": "arcane", "balance": TWO_HEROES}), TWO_HEROES)
        self.assertRaisesRegex(ValueError, "unknown preset 'nope'", rules.resolve_balance, {"preset": "nope"})
        self.assertRaisesRegex(ValueError, "no heroes", rules.resolve_balance, {"balance": {}})


class Duels(unittest.TestCase):
    OPTION_SETS = (
        {},
        {"preset": "glass-cannon", "seed": 1},
        {"preset": "fortress", "max_rounds": 60, "seed": 2},
        {"preset": "arcane", "host_hero": "sorcerer", "guest_hero": "warden", "seed": 3},
        {"balance": TWO_HEROES, "seed": 4},
        {"balance": {"solo": TWO_HEROES["duelist"]}, "max_rounds": 7},
        {"balance": TWO_HEROES, "host_hero": "brute", "moves": "ult,guard,a"},
    )

    def test_every_option_set_is_played_out_and_shadow_judged(self):
        for options in self.OPTION_SETS:
            with self.subTest(options=options):
                result = play("hero-duel", self, options=options)
                rounds = results(result)
                self.assertTrue(rounds[-1]["game_over"])
                self.assertLessEqual(len(rounds), options.get("max_rounds", 30))
                self.assertEqual(result["outcome"], rounds[-1]["game_winner"])
                self.assertIn(result["outcome"], ("host", "guest", "draw"))

    def test_guest_with_the_advertised_options_agrees_with_the_host(self):
        host = driver.load_hooks(HERO_DUEL)
        host.proto_init({"preset": "fortress", "guest_hero": "warden"}, "host", [], harness.scratch_dir(self))
        advertised = host.proto_host_metadata()[3]
        self.assertEqual(advertised, {"balance": rules.PRESETS["fortress"], "host_hero": "knight",
                                      "guest_hero": "warden", "max_rounds": 30})
        result = play("hero-duel", self, options={"preset": "fortress", "guest_hero": "warden"},
                      guest_options=advertised)
        self.assertTrue(results(result)[-1]["game_over"])
        with self.assertRaisesRegex(driver.Halt, "shadow judge mismatch in round 0"):
            play("hero-duel", self, options={"preset": "fortress"}, guest_options={"preset": "standard"})

    def test_pure_judge_changes_nothing(self):
        base = harness.scratch_dir(self)
        guest = driver.load_hooks(HERO_DUEL)
        guest.proto_init({}, "guest", [], base)
        guest.proto_guest_handle_ready({"action": "ready", "host_hero": "warden", "guest_hero": "sorcerer",
                                        "max_rounds": 3})
        driver.flush_files()
        before = json.dumps(guest.fighters), driver.summarize_dir(base)
        expected = guest.proto_round_judge_pure(0, "ult", "b", {})
        driver.flush_files()
        self.assertEqual((json.dumps(guest.fighters), driver.summarize_dir(base)), before)
        self.assertEqual(expected["guest_move"], "b")

    def test_join_names_the_guest_hero(self):
        result = play("hero-duel", self, options={"guest_hero": "sorcerer", "max_rounds": 2})
        self.assertEqual(result["transcript"][0]["msg"], {"action": "join", "hero": "sorcerer"})
        self.assertEqual(result["transcript"][1]["msg"]["guest_hero"], "sorcerer")

    def test_scripts_and_hybrid_decisions(self):
        prepare = {"guest": {"decisions": [cli_decision({"round": 1}, move="ult")]}}
        result = play("hero-duel", self, options={"moves": "guard", "max_rounds": 3}, prepare=prepare,
                      guest_options={"moves": "strike", "max_rounds": 3})
        self.assertEqual([r["guest_move"] for r in results(result)], ["strike", "ult", "strike"])
        self.assertEqual({r["host_move"] for r in results(result)}, {"guard"})

    def test_human_mode_plays_submitted_moves(self):
        moves = ["a", "b", "guard", "strike"]  # the guest asks once more before the end frame
        prepare = {role: {"decisions": [cli_decision({"round": r}, move=m) for r, m in enumerate(moves)]}
                   for role in ("host", "guest")}
        result = play("hero-duel", self, control_mode="human", prepare=prepare,
                      options={"max_rounds": 3, "min_think_seconds": 0})
        self.assertEqual([r["host_move"] for r in results(result)], ["a", "b", "guard"])

    def test_bad_options_are_refused(self):
        for options, message in (({"host_hero": "jester"}, "host hero 'jester' is not in"),
                                 ({"preset": "chaos"}, "unknown preset 'chaos'"),
                                 ({"moves": "ult,dance"}, "unknown move")):
            with self.subTest(options=options), self.assertRaisesRegex(ValueError, message):
                play("hero-duel", self, options=options)


class CheatingHost(unittest.TestCase):
    def test_every_judged_field_is_caught(self):
        for field in cheat.FIELDS:
            with self.subTest(field=field), self.assertRaisesRegex(driver.Halt, "shadow judge mismatch"):
                driver.play(CHEAT, harness.scratch_dir(self), options={"cheat_field": field})

    def test_a_secret_preset_is_caught_and_honesty_passes(self):
        with self.assertRaisesRegex(driver.Halt, "shadow judge mismatch in round 0"):
            driver.play(CHEAT, harness.scratch_dir(self), options={"cheat_preset": "glass-cannon"})
        honest = driver.play(CHEAT, harness.scratch_dir(self), options={"cheat_field": "host_hp",
                                                                       "cheat_round": 99})
        self.assertEqual(honest["completed"], {"host": True, "guest": True})


if __name__ == "__main__":
    unittest.main()
