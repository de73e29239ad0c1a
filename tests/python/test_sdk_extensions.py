"""Unit tests of our SDK's extensions beyond the reference API: round choices in every control
mode (aigenora.proto.choices), typed options (aigenora.proto.options) and the round_result
plumbing (aigenora.proto.rounds)."""
from __future__ import annotations

import json
import random
import subprocess
import sys
import unittest
from pathlib import Path

import harness
from aigenora.proto.choices import RoundChoices, is_legal, spoken_list, strategy_value
from aigenora.proto.decision_bus import DecisionBus
from aigenora.proto.hooks import HookResult, InvalidHumanDecisionError, ProtocolHooks
from aigenora.proto.options import option, script_option, seeded_rng
from aigenora.proto.rounds import RoundResults
from test_sdk_units import HUMAN, HYBRID, events

WAYS = ("up", "down")


class Climber(RoundChoices, RoundResults, ProtocolHooks):
    """A minimal round protocol: each round this side goes up or down."""

    SUPPORTED_CONTROL_MODES = ("autonomous", "hybrid", "human")
    CHOICE_KEYWORDS = {"up": ["up"], "down": ["down"]}
    DECISION_SCHEMA = {"match_key": "round", "value_field": "way", "strategy_field": "fixed"}
    GAME_OVER = "Climb over"
    LEGAL = WAYS

    def apply_round_result(self, result: dict) -> None:
        self.applied.append(result["round"])

    def describe_round(self, result: dict) -> str:
        return f"Round {result['round'] + 1}: {result['way']}"


class Flipper(Climber):
    """Bits, no keywords (so no coach hints), strategy_field "bit"."""

    CHOICE_KEYWORDS = None
    DECISION_SCHEMA = {"match_key": "round", "value_field": "bit", "strategy_field": "bit"}
    LEGAL = (0, 1)


def strategy_events(state_dir: Path) -> list[dict]:
    return [e["data"] for e in events(state_dir) if e["type"] == "strategy_applied"]


class ChoiceFunctions(unittest.TestCase):
    def test_is_legal(self):
        self.assertTrue(is_legal("up", WAYS))
        self.assertTrue(is_legal(0, (0, 1)))
        for value in ("sideways", None, 2, True, False, ["up"], {"up": 1}):
            self.assertFalse(is_legal(value, WAYS + (0, 1)), value)

    def test_spoken_list(self):
        self.assertEqual(spoken_list(("rock", "paper", "scissors")), "rock, paper or scissors")
        self.assertEqual(spoken_list((0, 1)), "0 or 1")
        self.assertEqual(spoken_list(("up",)), "up")

    def test_strategy_value(self):
        self.assertEqual(strategy_value({"mode": "fixed", "fixed": "up"}, "fixed", 5, WAYS), "up")
        self.assertIsNone(strategy_value({"mode": "fixed", "fixed": "left"}, "fixed", 0, WAYS))
        self.assertIsNone(strategy_value({"mode": "fixed", "bit": True}, "bit", 0, (0, 1)))
        seq = {"mode": "seq", "sequence": ["down", "left", "up"]}
        self.assertEqual([strategy_value(seq, "fixed", i, WAYS) for i in range(3)], ["down", "up", "down"])
        self.assertIsNone(strategy_value({"mode": "seq", "sequence": ["left"]}, "fixed", 0, WAYS))
        self.assertIsNone(strategy_value({"mode": "random"}, "fixed", 0, WAYS))
        self.assertIsNone(strategy_value({}, "fixed", 0, WAYS))


class DecideRound(unittest.TestCase):
    def setUp(self):
        self.dir = harness.scratch_dir(self)

    def hooks(self, config=None, cls=Climber, strategy=None) -> Climber:
        if strategy is not None:
            (self.dir / "strategy.json").write_text(json.dumps(strategy), encoding="utf-8")
        hooks = cls()
        hooks.proto_init({"min_think_seconds": 0}, "host", [], self.dir, config)
        return hooks

    def decide(self, hooks, index, script=(), pick=lambda: "down", **kwargs):
        return hooks.decide_round(index, hooks.LEGAL, list(script), pick, **kwargs)

    def test_script_comes_first_and_cycles(self):
        hooks = self.hooks(strategy={"mode": "fixed", "fixed": "down"})
        self.assertEqual([self.decide(hooks, i, ["up", "up", "down"]) for i in range(4)],
                         ["up", "up", "down", "up"])
        self.assertEqual(strategy_events(self.dir)[0], {"round": 0, "strategy": {"mode": "script"}, "result": "up"})

    def test_strategy_then_coach_hint_then_pick(self):
        strategy = {"mode": "fixed", "fixed": "up"}
        self.assertEqual(self.decide(self.hooks(strategy=strategy), 0), "up")
        self.assertEqual(strategy_events(self.dir)[-1]["strategy"], strategy)
        hooks = self.hooks(strategy={"mode": "fixed", "fixed": "left", "operator_hint": "always up"})
        self.assertEqual(self.decide(hooks, 1), "up")
        self.assertEqual(strategy_events(self.dir)[-1]["strategy"]["payload"], {"mode": "fixed", "fixed": "up"})
        self.assertEqual(self.decide(self.hooks(strategy={}), 2, pick=lambda: "down"), "down")
        self.assertEqual(strategy_events(self.dir)[-1], {"round": 2, "strategy": {}, "result": "down"})

    def test_no_coach_hint_without_keywords(self):
        hooks = self.hooks(cls=Flipper, strategy={"mode": "fixed", "bit": True, "operator_hint": "always 1"})
        self.assertEqual(self.decide(hooks, 0, pick=lambda: 0), 0)
        seq = self.hooks(cls=Flipper, strategy={"mode": "seq", "sequence": [1, True, 0]})
        self.assertEqual([self.decide(seq, i, pick=lambda: 9) for i in range(3)], [1, 0, 1])

    def test_hybrid_takes_a_legal_submitted_decision(self):
        hooks = self.hooks(HYBRID)
        DecisionBus.submit(self.dir, {"round": 0, "way": "up"})
        DecisionBus.submit(self.dir, {"round": 1, "way": "left"})
        self.assertEqual(self.decide(hooks, 0, pick=lambda: "down"), "up")
        self.assertEqual(self.decide(hooks, 1, pick=lambda: "down"), "down")
        self.assertEqual(self.decide(hooks, 2, pick=lambda: "down"), "down")
        kinds = [e["type"] for e in events(self.dir) if e["type"] != "strategy_applied"]
        self.assertEqual(kinds.count("local_decision_consumed"), 2)
        self.assertEqual(kinds.count("local_decision_fallback"), 1)
        self.assertEqual(len(strategy_events(self.dir)), 3, "the automatic value is computed first")

    def test_autonomous_never_opens_a_window(self):
        hooks = self.hooks()
        DecisionBus.submit(self.dir, {"round": 0, "way": "up"})
        self.assertEqual(self.decide(hooks, 0, pick=lambda: "down"), "down")
        self.assertNotIn("local_decision_window_started", [e["type"] for e in events(self.dir)])

    def test_human_plays_the_submission_or_rejects_it(self):
        hooks = self.hooks(HUMAN)
        DecisionBus.submit(self.dir, {"round": 0, "way": "up"})
        self.assertEqual(self.decide(hooks, 0, pick=self.fail), "up")
        self.assertEqual(strategy_events(self.dir), [])
        DecisionBus.submit(self.dir, {"round": 1, "way": "left"})
        with self.assertRaisesRegex(InvalidHumanDecisionError, "round=1: way must be up or down"):
            self.decide(hooks, 1, pick=self.fail)
        self.assertEqual(events(self.dir)[-1]["data"]["reason"], "way must be up or down")
        DecisionBus.submit(self.dir, {"round": 2, "way": True})
        with self.assertRaisesRegex(InvalidHumanDecisionError, "round=2: pick a way"):
            self.decide(hooks, 2, pick=self.fail, reason="pick a way")


class Options(unittest.TestCase):
    def test_option(self):
        options = {"n": "7", "zero": 0, "empty": "", "null": None}
        self.assertEqual(option(options, "n", 3, int), 7)
        self.assertEqual(option(options, "n", 3), "7")
        self.assertEqual(option(options, "zero", 3, int), 0)
        self.assertEqual(option(options, "empty", "x"), "")
        self.assertEqual(option(options, "null", 3, int), 3)
        self.assertEqual(option(options, "missing", "bisect"), "bisect")
        self.assertRaises(ValueError, option, {"n": "many"}, "n", 3, int)

    def test_seeded_rng(self):
        draws = lambda rng: [rng.random() for _ in range(3)]  # noqa: E731
        self.assertEqual(draws(seeded_rng({"seed": 4}, "host")), draws(seeded_rng({"seed": 4}, "host")))
        self.assertEqual(draws(seeded_rng({"seed": 4}, "host")), draws(random.Random("4:host")))
        self.assertNotEqual(draws(seeded_rng({"seed": 4}, "host")), draws(seeded_rng({"seed": 4}, "guest")))
        self.assertNotEqual(draws(seeded_rng({"seed": 0}, "host")), draws(seeded_rng({"seed": 1}, "host")))
        self.assertNotEqual(draws(seeded_rng({}, "host")), draws(seeded_rng({}, "host")))

    def test_seeded_rng_survives_copying(self):
        import copy

        rng = seeded_rng({"seed": 3}, "guest")
        twin = copy.deepcopy(rng)
        self.assertEqual(twin.random(), random.Random("3:guest").random())

    def test_seeded_rng_imports_random_only_when_drawn_from(self):
        probe = (
            "import sys; sys.path.insert(0, sys.argv[1])\n"
            "from aigenora.proto.options import seeded_rng\n"
            "rng = seeded_rng({'seed': 1}, 'host')\n"
            "print('random' in sys.modules, end=' ')\n"
            "rng.randint(1, 6)\n"
            "print('random' in sys.modules)\n"
        )
        result = subprocess.run([sys.executable, "-S", "-c", probe, str(harness.OUR_SDK)],
                                capture_output=True, text=True, check=True)
        self.assertEqual(result.stdout, "False True\n")

    def test_script_option(self):
        self.assertEqual(script_option({"moves": "Up, down  UP,,"}, "moves", WAYS), ["up", "down", "up"])
        self.assertEqual(script_option({"bits": "1 0"}, "bits", ("0", "1"), noun="bit"), ["1", "0"])
        for options in ({}, {"moves": ""}, {"moves": None}):
            self.assertEqual(script_option(options, "moves", WAYS), [])
        with self.assertRaisesRegex(ValueError, r"^moves: unknown move\(s\) left, right; use up, down$"):
            script_option({"moves": "up right left right"}, "moves", WAYS)
        with self.assertRaisesRegex(ValueError, r"^bits: unknown bit\(s\) 2; use 0, 1$"):
            script_option({"bits": "0,2"}, "bits", ("0", "1"), noun="bit")


class RoundResultPlumbing(unittest.TestCase):
    def setUp(self):
        self.hooks = Climber()
        self.hooks.applied = []

    def test_guest_applies_round_results_only(self):
        self.assertEqual(self.hooks.proto_guest_handle({"action": "round_result", "round": 3}), HookResult())
        self.assertEqual(self.hooks.proto_guest_handle({"action": "chat", "round": 4}), HookResult())
        self.assertEqual(self.hooks.applied, [3])

    def test_display(self):
        result = {"action": "round_result", "round": 0, "way": "up", "game_over": False, "game_winner": "none"}
        self.assertEqual(self.hooks.proto_display(result, "received"), "Round 1: up")
        last = dict(result, round=4, game_over=True, game_winner="guest")
        self.assertEqual(self.hooks.proto_display(last, "sent"), "Round 5: up\nClimb over: guest")
        self.assertIsNone(self.hooks.proto_display({"action": "commit"}, "sent"))
        self.assertEqual(RoundResults.GAME_OVER, "Match over")


if __name__ == "__main__":
    unittest.main()
