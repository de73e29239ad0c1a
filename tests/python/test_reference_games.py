"""The reference's own 1v1 hooks.py files, unchanged, played to completion on our SDK, and
compared file by file with the same seeded game played on the reference SDK."""
from __future__ import annotations

import json
import unittest

import harness
import driver

ALWAYS_ROCK_SCRIPT = (
    "import json, sys\n"
    "payload = json.load(sys.stdin)\n"
    "print(json.dumps({'decision': {'choice': 'rock'}, 'reason': 'scripted'}))\n"
)


def _decision(window: dict, origin: str | None, ident: str, **value) -> dict:
    record = dict(window, **value)
    if origin is not None:
        record["_meta"] = {"origin": origin, "decision_id": ident}
    return record


def _intent(ident: str, created: int, value: dict | None, policy: dict | None) -> dict:
    return {
        "intent_id": ident, "ts": "2026-01-01T00:00:00+00:00", "status": "pending",
        "scope": "once", "target_policy": "next", "value": value, "policy": policy,
        "created_match_key": "round", "created_match_value": created, "ttl_windows": 3,
        "_meta": {"origin": "whisper_bridge", "agent_id": None, "caused_by_whisper_id": None},
    }


def _human_decisions(rounds: int, choices: list[str]) -> list[dict]:
    return [_decision({"round": r}, "cli", f"h{r}", choice=choices[r % len(choices)])
            for r in range(rounds)]


# name -> (game, driver.play keyword arguments)
SCENARIOS: dict[str, tuple[str, dict]] = {
    **{f"{game}-default": (game, {}) for game in harness.REFERENCE_GAMES},
    "human-chat-conversation": ("human-chat", {"chat": [
        ["guest", "hello"], ["host", "hi there"], ["guest", "ünïcode ✓"], ["guest", "/quit"],
    ]}),
    "rps-autonomous": ("rps", {"control_mode": "autonomous", "options": {"best_of": 5}}),
    "rps-interventions": ("rps", {
        "options": {"best_of": 5, "termination": "fixed_rounds"},
        "prepare": {
            "host": {"strategy": {"mode": "policy", "policy": "counter_previous_opponent"}},
            "guest": {
                "strategy": {"operator_hint": "always paper"},
                "decisions": [
                    _decision({"round": 1}, "cli", "g1", choice="rock"),
                    _decision({"round": 1}, None, "", choice="scissors"),
                    _decision({"round": 2}, "policy_runner", "g2", choice="paper"),
                    _decision({"round": 2}, None, "", choice="rock"),
                ],
            },
        },
    }),
    "rps-intents-and-script": ("rps", {
        "options": {"best_of": 4, "termination": "fixed_rounds"},
        "prepare": {
            "host": {"files": {"intervention_intents.jsonl": "".join(json.dumps(i) + "\n" for i in (
                _intent("int_a", 0, {"choice": "rock"}, None),
                _intent("int_b", 1, None, {"mode": "policy", "policy": "counter_previous_opponent"}),
            ))}},
            "guest": {
                "strategy": {"mode": "script", "script_id": "always_rock"},
                "files": {"policy_scripts/always_rock.py": ALWAYS_ROCK_SCRIPT},
            },
        },
    }),
    "rps-human": ("rps", {
        "control_mode": "human",
        "options": {"best_of": 3, "termination": "fixed_rounds", "min_think_seconds": 0},
        "prepare": {"host": {"decisions": _human_decisions(3, ["rock", "paper"])},
                    "guest": {"decisions": _human_decisions(4, ["scissors"])}},
    }),
    "coin-flip-sequence": ("coin-flip", {"prepare": {
        "guest": {"strategy": {"mode": "seq", "sequence": ["heads", "tails", "tails"]}},
    }}),
    "guess-number-steered": ("guess-number", {
        "options": {"secret": 42},
        "prepare": {"guest": {
            "strategy": {"mode": "seq", "sequence": [10, 90]},
            "decisions": [_decision({"attempt": 3}, "cli", "n3", number=42)],
        }},
    }),
    "hero-duel-own-balance": ("hero-duel", {"options": {
        "max_rounds": 12, "host_hero": "golem", "guest_hero": "imp",
        "balance": {
            "golem": {"hp": 400, "mana": 40, "mana_regen": 5, "atk": 20, "skill_a": {"dmg": 30, "cost": 10, "cd": 1},
                      "skill_b": {"dmg": 45, "cost": 20, "cd": 2}, "ult": {"dmg": 90, "cost": 40, "cd": 6}},
            "imp": {"hp": 160, "mana": 90, "mana_regen": 30, "atk": 9, "skill_a": {"dmg": 40, "cost": 15, "cd": 0},
                    "skill_b": {"dmg": 60, "cost": 30, "cd": 1}, "ult": {"dmg": 150, "cost": 90, "cd": 3}},
        },
    }}),
    "weak-wins-all-whisper": ("weak-wins-all", {"prepare": {
        "guest": {"strategy": {"operator_hint": "bid 7 please"}},
    }}),
}


def first_difference(ours, theirs, path: str = "") -> str | None:
    """Where two JSON-like values first differ (key order included), or None."""
    if type(ours) is not type(theirs):
        return f"{path}: {ours!r:.200} != {theirs!r:.200}"
    if isinstance(ours, dict):
        if list(ours) != list(theirs):
            return f"{path}: keys {list(ours)} != {list(theirs)}"
        for key in ours:
            found = first_difference(ours[key], theirs[key], f"{path}/{key}")
            if found:
                return found
        return None
    if isinstance(ours, list):
        if len(ours) != len(theirs):
            return f"{path}: length {len(ours)} != {len(theirs)}"
        for index, (a, b) in enumerate(zip(ours, theirs)):
            found = first_difference(a, b, f"{path}[{index}]")
            if found:
                return found
        return None
    return None if ours == theirs else f"{path}: {ours!r:.200} != {theirs!r:.200}"


def _without_human_timing(summary: dict) -> list:
    """Drop snapshot.timing (a known, deliberate difference) and return the dropped values."""
    dropped = []
    for role in ("host", "guest"):
        snapshot = summary["files"][role].get("snapshot.json", {})
        dropped.append(snapshot.pop("timing", None))
    return dropped


class ReferenceGamesOnOurSdk(unittest.TestCase):
    """Each reference game reaches a result with our SDK alone."""

    def test_every_game_completes(self):
        for game in harness.REFERENCE_GAMES:
            with self.subTest(game=game):
                base = harness.scratch_dir(self)
                result = driver.play(harness.reference_protocol(game), base,
                                     chat=[["guest", "hi"], ["host", "bye"]])
                self.assertEqual(result["completed"], {"host": True, "guest": True})
                if game == "human-chat":
                    self.assertIn("[Peer] hi", result["printed"])
                    self.assertIn("[Call ended]", result["printed"])
                else:
                    self.assertIn(result["outcome"], ("host", "guest", "draw"))
                for role in ("host", "guest"):
                    snapshot = json.loads((base / role / "snapshot.json").read_text())
                    self.assertIn(snapshot["phase"], ("game_over", "ended"))
                    self.assertEqual(snapshot["role"], role)

    def test_hybrid_games_do_not_wait_for_decisions(self):
        # With nobody deciding and min_think_seconds 0, no decision window may ever sleep.
        from unittest import mock
        from aigenora.proto import decision_windows

        with mock.patch.object(decision_windows.time, "sleep", side_effect=AssertionError("window waited")):
            result = driver.play(harness.reference_protocol("rps"), harness.scratch_dir(self),
                                 options={"best_of": 9, "termination": "fixed_rounds"})
        self.assertEqual(result["completed"], {"host": True, "guest": True})


class DifferentialAgainstReferenceSdk(unittest.TestCase):
    """Seeded games leave identical files (volatile values normalised) on both SDKs."""

    maxDiff = None

    def test_scenarios_match_reference(self):
        for name, (game, kwargs) in SCENARIOS.items():
            with self.subTest(scenario=name):
                self._compare(game, kwargs)

    def _compare(self, game: str, kwargs: dict) -> None:
        protocol_dir = harness.reference_protocol(game)
        ours_base = harness.scratch_dir(self) / "state"
        ours = driver.summarize(driver.play(protocol_dir, ours_base, **kwargs), ours_base)
        theirs = harness.run_reference_driver(
            dict(kwargs, protocol_dir=str(protocol_dir)), harness.scratch_dir(self))
        if kwargs.get("control_mode") == "human":
            our_timing, their_timing = _without_human_timing(ours), _without_human_timing(theirs)
            # We empty the window's timing when it closes; the reference leaves it stale.
            self.assertEqual(our_timing, [{}, {}])
            self.assertTrue(all(t and t.get("phase") == "waiting" for t in their_timing))
        self.assertIn(ours["outcome"], ("host", "guest", "draw", None))
        difference = first_difference(ours, theirs)
        self.assertIsNone(difference, f"our SDK differs from the reference at {difference}")


if __name__ == "__main__":
    unittest.main()
