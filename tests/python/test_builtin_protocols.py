"""Our built-in protocols (src/protocols/*) played to completion on our SDK in autonomous,
hybrid and human modes, with deterministic results where options fix them, and compared
with the same games run on the reference SDK."""
from __future__ import annotations

import ast
import json
import unittest

import harness
import driver
from test_reference_games import first_difference

BUILTINS = ("rock-paper-scissors", "coin-flip", "guess-number", "chat", "text-transform", "hero-duel",
            "thirty-one", "poll-room")


def play(alias: str, test: unittest.TestCase, **kwargs) -> dict:
    base = harness.scratch_dir(test)
    result = driver.play(harness.OUR_PROTOCOLS / alias, base, **kwargs)
    result["base"] = base
    return result


def results(result: dict, action: str = "round_result") -> list[dict]:
    return [step["msg"] for step in result["transcript"] if step["msg"].get("action") == action]


def cli_decision(window: dict, **value) -> dict:
    return dict(window, **value, _meta={"origin": "cli", "decision_id": f"d{sorted(window.items())}"})


class Layout(unittest.TestCase):
    def test_each_protocol_has_spec_and_documented_hooks(self):
        for alias in BUILTINS:
            directory = harness.OUR_PROTOCOLS / alias
            spec = json.loads((directory / "spec.json").read_text(encoding="utf-8"))
            self.assertEqual(spec["spec_version"], "1.0", alias)
            module = ast.parse((directory / "hooks.py").read_text(encoding="utf-8"))
            self.assertTrue(ast.get_docstring(module), f"{alias}/hooks.py needs a module docstring")


class RockPaperScissors(unittest.TestCase):
    def test_scripted_99_round_benchmark(self):
        options = {"best_of": 99, "termination": "fixed_rounds", "moves": "rock"}
        runs = [play("rock-paper-scissors", self, options=options, control_mode=mode,
                     guest_options={"moves": "paper, scissors, paper"}) for mode in ("autonomous", "hybrid")]
        for result in runs:
            rounds = results(result)
            self.assertEqual(len(rounds), 99)
            self.assertEqual((rounds[-1]["host_wins"], rounds[-1]["guest_wins"]), (33, 66))
            self.assertEqual(result["outcome"], "guest")
        self.assertEqual(driver.normalize(runs[0]["transcript"]), driver.normalize(runs[1]["transcript"]))

    def test_seeded_games_repeat_exactly(self):
        options = {"best_of": 5, "seed": 11}
        first, second = (play("rock-paper-scissors", self, options=options, seed=None) for _ in range(2))
        self.assertEqual(driver.normalize(first["transcript"]), driver.normalize(second["transcript"]))

    def test_first_to_win_stops_at_max_rounds(self):
        result = play("rock-paper-scissors", self, options={"best_of": 3, "moves": "rock"})
        self.assertEqual(len(results(result)), 30)
        self.assertEqual(result["outcome"], "draw")

    def test_first_to_win(self):
        result = play("rock-paper-scissors", self, options={"best_of": 5, "moves": "rock"},
                      guest_options={"moves": "scissors,paper"})
        self.assertEqual([r["round_winner"] for r in results(result)], ["host", "guest"] * 2 + ["host"])
        self.assertEqual(result["outcome"], "host")

    def test_hybrid_decision_overrides_the_script(self):
        decisions = [cli_decision({"round": 1}, choice="paper")]
        result = play("rock-paper-scissors", self, options={"best_of": 3, "termination": "fixed_rounds",
                      "moves": "scissors"}, prepare={"guest": {"decisions": decisions}},
                      guest_options={"moves": "rock"})
        self.assertEqual([r["guest_choice"] for r in results(result)], ["rock", "paper", "rock"])

    def test_human_mode_plays_submitted_moves(self):
        moves = ["paper", "paper", "rock", "rock"]  # the guest asks once more before the end frame
        prepare = {role: {"decisions": [cli_decision({"round": r}, choice=m) for r, m in enumerate(moves)]}
                   for role in ("host", "guest")}
        prepare["host"]["decisions"][0]["choice"] = "scissors"
        result = play("rock-paper-scissors", self, control_mode="human", prepare=prepare,
                      options={"best_of": 3, "termination": "fixed_rounds"})
        self.assertEqual([r["round_winner"] for r in results(result)], ["host", "draw", "draw"])

    def test_bad_move_script_is_rejected(self):
        with self.assertRaisesRegex(ValueError, "unknown move"):
            play("rock-paper-scissors", self, options={"moves": "rock,lizard"})


class CoinFlip(unittest.TestCase):
    def test_xor_decides_each_flip(self):
        result = play("coin-flip", self, options={"flips": 4, "bits": "0"}, guest_options={"bits": "1 0"})
        flips = results(result)
        self.assertEqual([f["coin"] for f in flips], ["tails", "heads", "tails", "heads"])
        self.assertEqual(result["outcome"], "draw")

    def test_seeded_random_bits_in_every_mode(self):
        for mode in ("autonomous", "hybrid"):
            result = play("coin-flip", self, options={"flips": 3, "seed": 5}, control_mode=mode, seed=None)
            self.assertEqual(len(results(result)), 3)
            self.assertIn(result["outcome"], ("host", "guest"))


class GuessNumber(unittest.TestCase):
    def test_bisection_finds_the_secret(self):
        result = play("guess-number", self, options={"secret": 37})
        guesses = [m["number"] for m in results(result, "guess")]
        self.assertEqual(guesses, [50, 25, 37])
        self.assertEqual(result["outcome"], "guest")
        self.assertEqual(results(result, "answer")[-1]["secret"], 37)

    def test_host_wins_when_attempts_run_out(self):
        result = play("guess-number", self, options={"secret": 99, "max_attempts": 2}, control_mode="autonomous")
        self.assertEqual([a["result"] for a in results(result, "answer")], ["higher", "higher"])
        self.assertEqual(result["outcome"], "host")

    def test_hybrid_decision_is_used(self):
        prepare = {"guest": {"decisions": [cli_decision({"attempt": 1}, number=64)]}}
        result = play("guess-number", self, options={"secret": 64}, prepare=prepare)
        self.assertEqual(len(results(result, "guess")), 1)
        self.assertEqual(result["outcome"], "guest")

    def test_seeded_random_guesses(self):
        options = {"seed": 3, "guess_strategy": "random", "range_max": 1000, "max_attempts": 20}
        first, second = (play("guess-number", self, options=options, seed=None) for _ in range(2))
        self.assertEqual(first["transcript"], second["transcript"])
        self.assertIn(first["outcome"], ("host", "guest"))


class Chat(unittest.TestCase):
    def test_lines_are_printed_and_kept(self):
        result = play("chat", self, chat=[["guest", "hello"], ["host", "hi"], ["guest", "/quit"]])
        self.assertEqual(result["printed"], "[guest] hello\n[host] hi\n[chat ended]\n[chat ended]\n")
        snapshot = json.loads((result["base"] / "host" / "snapshot.json").read_text())
        self.assertEqual(snapshot["messages"], [{"seq": 1, "from": "peer", "text": "hello"},
                                                {"seq": 1, "from": "self", "text": "hi"}])
        self.assertEqual(snapshot["phase"], "ended")


class TextTransform(unittest.TestCase):
    def test_every_operation(self):
        expected = {"upper": "ÉTÉ À PARIS", "lower": "été à paris", "title": "Été À Paris",
                    "reverse": "siraP à étÉ", "word_count": "3", "char_count": "11"}
        for operation, output in expected.items():
            result = play("text-transform", self, options={"operation": operation, "text": "Été à Paris"},
                          control_mode="autonomous")
            self.assertEqual(results(result, "result")[0]["output"], output, operation)

    def test_decision_replaces_the_request(self):
        prepare = {"guest": {"decisions": [cli_decision({"action_seq": 1}, operation="reverse", text="abc")]}}
        result = play("text-transform", self, prepare=prepare)
        self.assertEqual(results(result, "result")[0], {"action": "result", "operation": "reverse", "output": "cba"})


class ThirtyOne(unittest.TestCase):
    """The rules of Thirty-One, on the table views the mental_poker engine installs (the engine
    itself, with the dealing and the audit, is exercised by the Rust suites)."""

    def setUp(self):
        from aigenora.proto import mental_poker

        self.table = mental_poker.install_table
        self.hooks = driver.load_hooks(harness.OUR_PROTOCOLS / "thirty-one")
        self.hooks.proto_init({"hand_size": 3}, "host", [], harness.scratch_dir(self))
        self.state = {}

    def show(self, hand, stock=("9",), played=(), role="host"):
        """hand: (id_b, rank) pairs, all clubs."""
        self.table(self.state, role, [(id_b, rank, 0) for id_b, rank in hand],
                   [id_b for id_b, _ in hand], ["7", "8"], list(stock), list(played), False)

    def test_plays_keep_the_count_at_31_or_under(self):
        self.hooks.count = 25
        self.show([("0", 9), ("1", 5), ("2", 2)])  # worth 10, 6, 3
        legal = [item["id_b"] for item in self.hooks.proto_mp_legal_actions(self.state)]
        self.assertEqual(legal, ["1", "2"])
        self.assertEqual(self.hooks.proto_mp_choose_action(self.state), {"kind": "play", "id_b": "1"})
        self.assertEqual((self.hooks.count, self.hooks.penalty_for), (0, "guest"), "31 resets, guest owes a card")
        with self.assertRaisesRegex(ValueError, "past 31"):
            self.hooks.count = 30
            self.hooks.proto_mp_coerce_action(self.state, {"kind": "play", "id_b": "0"})

    def test_the_peer_is_held_to_the_count_and_the_penalty(self):
        self.show([("0", 0)])
        self.hooks.count = 29
        verdict = self.hooks.proto_mp_validate_play(self.state, "guest", {"rank": 2, "suit": 1})
        self.assertEqual((verdict.ok, verdict.reason), (False, "count_over_31"))
        self.hooks.count, self.hooks.penalty_for = 0, "guest"
        verdict = self.hooks.proto_mp_validate_play(self.state, "guest", {"rank": 0, "suit": 1})
        self.assertEqual((verdict.ok, verdict.reason), (False, "penalty_draw_due"))

    def test_a_turn_without_a_play_resets_the_count_and_pays_the_penalty(self):
        self.hooks.count, self.hooks.penalty_for = 17, "host"
        self.show([("0", 4)])
        self.assertEqual(self.hooks.proto_mp_choose_action(self.state), {"kind": "draw"})
        self.assertIsNone(self.hooks.proto_mp_check_winner(self.state))  # the host drew: no play
        self.assertEqual((self.hooks.count, self.hooks.penalty_for), (0, None))
        self.show([], played=("3",))
        self.assertEqual(self.hooks.proto_mp_check_winner(self.state), "host")

    def init(self, options: dict, role: str = "host"):
        self.hooks = driver.load_hooks(harness.OUR_PROTOCOLS / "thirty-one")
        self.hooks.proto_init(dict(options, hand_size=3), role, [], harness.scratch_dir(self))

    def test_strategy_lowest_sheds_the_lowest_legal_card(self):
        hand = [("0", 9), ("1", 5), ("2", 2), ("3", 7)]  # worth 10, 6, 3, 8
        # count 0: all four legal; count 22: 10 would pass 31, so 6, 3 and 8 are.
        for strategy, count, expected in (("lowest", 0, "2"), ("lowest", 22, "2"),
                                          ("highest", 0, "0"), ("highest", 22, "3")):
            self.init({"strategy": strategy})
            self.hooks.count = count
            self.show(hand)
            self.assertEqual(self.hooks.proto_mp_choose_action(self.state),
                             {"kind": "play", "id_b": expected}, (strategy, count))
        with self.assertRaisesRegex(ValueError, "strategy: 'biggest'"):
            self.init({"strategy": "biggest"})

    def test_a_moves_script_is_played_when_legal(self):
        self.init({"moves": "6c, 10C draw", "guest_moves": "pass", "strategy": "lowest"})
        self.assertEqual(self.hooks.script, ["6c", "10c", "draw"])
        hand = [("0", 9), ("1", 5), ("2", 2)]  # 10C, 6C, 3C
        self.show(hand)
        # The script's 6C, where the automatic (lowest) choice is 3C.
        self.assertEqual(self.hooks.proto_mp_choose_action(self.state), {"kind": "play", "id_b": "1"})
        self.assertIsNone(self.hooks.proto_mp_check_winner(self.state))  # the host's turn ends
        self.assertIsNone(self.hooks.proto_mp_check_winner(self.state))  # and the guest's
        self.hooks.count = 25  # the script's 10C would pass 31: the automatic choice instead
        self.show([hand[0], hand[2]], played=("1",))
        self.assertEqual(self.hooks.proto_mp_choose_action(self.state), {"kind": "play", "id_b": "2"})
        self.hooks.proto_mp_check_winner(self.state)
        self.hooks.proto_mp_check_winner(self.state)
        self.hooks.count = 5  # the script's draw is not legal while 10C can be played
        self.show(hand[:1], played=("1", "2"))
        self.assertEqual(self.hooks.proto_mp_choose_action(self.state), {"kind": "play", "id_b": "0"})
        self.hooks.proto_mp_check_winner(self.state)
        self.hooks.proto_mp_check_winner(self.state)
        self.hooks.count = 25  # the script starts over: 6C is not in hand, so nothing to play
        self.show([("4", 9)], played=("1", "2", "0"))
        self.assertEqual(self.hooks.proto_mp_choose_action(self.state), {"kind": "draw"})
        self.init({"moves": "3c", "guest_moves": "10C"}, role="guest")
        self.assertEqual(self.hooks.script, ["10c"])
        with self.assertRaisesRegex(ValueError, "moves: unknown move"):
            self.init({"moves": "3c, 11c"})

    def test_human_decisions_are_checked_against_the_rules(self):
        self.show([("0", 9)], stock=())
        self.hooks.count = 25
        self.assertEqual(self.hooks.proto_mp_legal_actions(self.state), [{"kind": "pass"}])
        with self.assertRaisesRegex(ValueError, "draw is not allowed now"):
            self.hooks.proto_mp_coerce_action(self.state, {"kind": "draw"})
        self.assertEqual(self.hooks.proto_mp_coerce_action(self.state, {"kind": "pass"}), {"kind": "pass"})


class SameOnReferenceSdk(unittest.TestCase):
    """Our hooks use only the shared SDK API and our SDK extensions (grafted onto the reference
    package), so the reference SDK gives identical files."""

    SCENARIOS = {
        "rock-paper-scissors": {"options": {"best_of": 5, "seed": 2}},
        "coin-flip": {"options": {"flips": 3, "seed": 4},
                      "prepare": {"guest": {"strategy": {"mode": "seq", "sequence": [1, 1, 0]}}}},
        "guess-number": {"options": {"secret": 81, "seed": 1},
                         "prepare": {"guest": {"decisions": [cli_decision({"attempt": 2}, number=80)]}}},
        "chat": {"chat": [["guest", "hello"], ["host", "hi"], ["host", "/quit"]]},
        "text-transform": {"options": {"operation": "title", "text": "a b"}},
        "hero-duel": {"options": {"preset": "arcane", "seed": 6},
                      "prepare": {"host": {"strategy": {"mode": "seq", "sequence": ["ult", "guard"]}},
                                  "guest": {"decisions": [cli_decision({"round": 1}, move="b")]}}},
    }

    def test_scenarios_match_reference(self):
        for alias, kwargs in self.SCENARIOS.items():
            with self.subTest(protocol=alias):
                protocol_dir = harness.OUR_PROTOCOLS / alias
                ours_base = harness.scratch_dir(self) / "state"
                ours = driver.summarize(driver.play(protocol_dir, ours_base, **kwargs), ours_base)
                theirs = harness.run_reference_driver(
                    dict(kwargs, protocol_dir=str(protocol_dir)), harness.scratch_dir(self))
                difference = first_difference(ours, theirs)
                self.assertIsNone(difference, f"{alias}: differs at {difference}")


if __name__ == "__main__":
    unittest.main()
