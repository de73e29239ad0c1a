"""Unit tests of our SDK's public surface: hooks defaults, proto_init, state-dir files,
decision bus and windows, control modes, whisper parsing, mental-poker types."""
from __future__ import annotations

import json
import threading
import time
import unittest
from pathlib import Path
from unittest import mock

import harness
from aigenora.control import ControlModeError, ensure_control_mode_supported, resolve_control_mode
from aigenora.proto import mental_poker
from aigenora.proto import files
from aigenora.proto import policy_materializer
from aigenora.proto.decide_gateway import submit_decision
from aigenora.proto.hooks import HookResult, InvalidHumanDecisionError, ProtocolHooks
from aigenora.proto.sdk import (
    DecisionBus, DecisionTimeoutError, DetailLog, SnapshotBus, StateStore, StrategyStore,
)
from aigenora.proto.whisper_bridge import extract_number, parse_whisper_to_command

HYBRID = {"mode": "auto", "control_mode": "hybrid", "timeout_seconds": 120, "timeout_action": "fallback"}
HUMAN = {"mode": "manual", "control_mode": "human", "timeout_seconds": 120,
         "timeout_action": "abort", "require_explicit": True}


class HumanCapable(ProtocolHooks):
    SUPPORTED_CONTROL_MODES = ("autonomous", "hybrid", "human")


def events(state_dir: Path) -> list[dict]:
    path = state_dir / "events.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


class HooksDefaults(unittest.TestCase):
    def test_hook_result(self):
        self.assertEqual(HookResult({"a": 1}, True), HookResult(response={"a": 1}, completed=True))
        self.assertEqual((HookResult().response, HookResult().completed, HookResult().abort),
                         (None, False, False))
        self.assertTrue(issubclass(InvalidHumanDecisionError, ValueError))

    def test_default_hooks(self):
        hooks = ProtocolHooks()
        self.assertEqual(hooks.proto_host_metadata(), ("Game", "game", "supply", {}))
        self.assertEqual(hooks.proto_host_handle_join({}), HookResult({"action": "ready"}))
        self.assertEqual(hooks.proto_host_handle({}), HookResult(abort=True))
        self.assertEqual(hooks.proto_guest_join_message(), {"action": "join"})
        self.assertIsNone(hooks.proto_guest_first_action())
        self.assertIsNone(hooks.proto_display({}, "sent"))
        self.assertEqual(hooks.supported_control_modes(), ("autonomous", "hybrid"))
        for call in (lambda: hooks.proto_round_value(0, {}),
                     lambda: hooks.proto_round_judge(0, "a", "b", {}),
                     hooks.proto_realtime_initial_state, hooks.proto_mp_deck_universe):
            self.assertRaises(NotImplementedError, call)
        self.assertEqual(hooks.proto_realtime_snapshot({"x": 1}, {}), {"world": {"x": 1}})
        left = hooks.proto_group_member_left({}, {"id": "m"}, "r" * 100)
        self.assertEqual(left["events"][0]["reason"], "r" * 64)
        self.assertTrue(hooks.proto_mp_validate_play({}, "host", {}).ok)

    def test_mental_poker_action_coercion(self):
        hooks = ProtocolHooks()
        state = {"_mp_hand": {"c1"}}
        self.assertEqual(hooks.proto_mp_coerce_action(state, {"kind": "play", "id_b": "c1", "call_suit": "2"}),
                         {"kind": "play", "id_b": "c1", "call_suit": 2})
        self.assertEqual(hooks.proto_mp_coerce_action(state, {"kind": "draw", "id_b": "zz"}), {"kind": "draw"})
        with self.assertRaisesRegex(ValueError, "id_b is not a card in the local hand"):
            hooks.proto_mp_coerce_action(state, {"kind": "play", "id_b": "c2"})
        with self.assertRaisesRegex(ValueError, "kind must be play, draw, or pass"):
            hooks.proto_mp_coerce_action(state, {"kind": "fold"})

    def test_deck_state(self):
        deck = mental_poker.DeckState(stock={"a", "b"})
        deck.deal_to("guest", "a")
        self.assertEqual(deck.hand_of("guest"), {"a"})
        self.assertTrue(deck.play("guest", "a"))
        self.assertFalse(deck.play("guest", "a"))
        self.assertEqual(deck.played, {"a"})
        self.assertEqual(mental_poker.ValidationResult(False, "no").reason, "no")


class CardHooks(ProtocolHooks):
    """Plays its lowest card; remembers the explicit actions applied to it."""

    SUPPORTED_CONTROL_MODES = ("autonomous", "hybrid", "human")

    def __init__(self):
        self.applied = []

    def proto_mp_choose_action(self, state):
        return {"kind": "play", "id_b": min(state["_mp_hand"])}

    def proto_mp_legal_actions(self, state):
        return [{"kind": "play", "id_b": id_b} for id_b in sorted(state["_mp_hand"])]

    def proto_mp_apply_local_action(self, state, action):
        self.applied.append(action)


class MentalPokerTable(unittest.TestCase):
    def setUp(self):
        self.dir = harness.scratch_dir(self)
        self.state = {}
        mental_poker.install_table(self.state, "guest", [("3", 6, 2), ("1", 0, 0)],
                                   ["7"], ["3", "1"], ["8", "9"], ["0"], False)

    def hooks(self, config):
        hooks = CardHooks()
        hooks.proto_init({}, "guest", [], self.dir, config)
        return hooks

    def test_the_table_view_is_what_reference_hooks_read(self):
        self.assertEqual(self.state["_mp_role"], "guest")
        self.assertEqual(self.state["_mp_hand"], {"1", "3"})
        self.assertEqual(self.state["_mp_hand_cards"], {"3": (6, 2), "1": (0, 0)})
        deck = self.state["_mp_deck_view"]
        self.assertEqual((deck.hand_of("host"), deck.hand_of("guest")), ({"7"}, {"1", "3"}))
        self.assertEqual((deck.stock, deck.played), ({"8", "9"}, {"0"}))
        self.assertNotIn("_mp_stalled", self.state)
        mental_poker.install_table(self.state, "guest", [], [], [], [], [], True)
        self.assertTrue(self.state["_mp_stalled"])

    def test_autonomous_control_asks_the_hooks(self):
        hooks = self.hooks(None)
        self.assertEqual(mental_poker.select_local_action(hooks, self.state, 0), {"kind": "play", "id_b": "1"})
        snapshot = hooks.snapshot.read()
        self.assertEqual((snapshot["phase"], snapshot["stock_count"], snapshot["opponent_hand_count"]),
                         ("playing", 2, 1))
        self.assertEqual(snapshot["hand"][0], {"id_b": "1", "rank": 0, "suit": 0})

    def test_hybrid_control_takes_a_valid_submitted_decision(self):
        hooks = self.hooks(HYBRID)
        submit_decision(self.dir, {"action_seq": 0, "kind": "play", "id_b": "3"}, origin="cli")
        self.assertEqual(mental_poker.select_local_action(hooks, self.state, 0), {"kind": "play", "id_b": "3"})
        self.assertEqual(hooks.applied, [{"kind": "play", "id_b": "3"}])
        self.assertEqual(hooks.snapshot.read()["phase"], "action_submitted")
        submit_decision(self.dir, {"action_seq": 1, "kind": "play", "id_b": "9"}, origin="cli")
        self.assertEqual(mental_poker.select_local_action(hooks, self.state, 1), {"kind": "play", "id_b": "1"})
        rejected = [e for e in events(self.dir) if e["type"] == "local_decision_rejected"]
        self.assertEqual(rejected[0]["data"]["reason"], "id_b is not a card in the local hand")

    def test_human_control_waits_for_a_decision_and_rejects_a_bad_one(self):
        hooks = self.hooks(HUMAN)
        submit_decision(self.dir, {"action_seq": 0, "kind": "draw"}, origin="cli")
        self.assertEqual(mental_poker.select_local_action(hooks, self.state, 0), {"kind": "draw"})
        submit_decision(self.dir, {"action_seq": 1, "kind": "fold"}, origin="cli")
        with self.assertRaises(InvalidHumanDecisionError):
            mental_poker.select_local_action(hooks, self.state, 1)


class ProtoInit(unittest.TestCase):
    def setUp(self):
        self.dir = harness.scratch_dir(self)

    def test_autonomous_without_config(self):
        hooks = ProtocolHooks()
        hooks.proto_init({"k": 1}, "host", [], str(self.dir))
        self.assertIsInstance(hooks.state_dir, Path)
        self.assertEqual((hooks.control_mode, hooks.bus, hooks.decision_mode, hooks.timing),
                         ("autonomous", None, None, None))
        self.assertFalse(hooks.timing_enabled)
        self.assertEqual(hooks.snapshot.read()["control_mode"], "autonomous")

    def test_hybrid_creates_a_bus_unless_args_suppress_it(self):
        hooks = ProtocolHooks()
        hooks.proto_init({}, "guest", [], self.dir, HYBRID)
        self.assertEqual((hooks.control_mode, hooks.decision_mode), ("hybrid", "auto"))
        self.assertTrue((self.dir / "decision").is_dir())
        legacy = ProtocolHooks()
        legacy.proto_init({}, "guest", ["rock"], self.dir, HYBRID)
        self.assertIsNone(legacy.bus)

    def test_control_mode_from_config_shape(self):
        hooks = HumanCapable()
        hooks.proto_init({}, "host", ["x"], self.dir, {"mode": "manual"})
        self.assertEqual(hooks.control_mode, "human")
        self.assertIsNotNone(hooks.bus)

    def test_unsupported_human_mode(self):
        message = ("protocol hooks ProtocolHooks do not support control mode 'human'; "
                   "supported modes: autonomous, hybrid")
        with self.assertRaises(ControlModeError) as caught:
            ProtocolHooks().proto_init({}, "host", [], self.dir, HUMAN)
        self.assertEqual(str(caught.exception), message)

    def test_control_mode_resolution(self):
        self.assertEqual(resolve_control_mode(None), "hybrid")
        self.assertEqual(resolve_control_mode(" Human "), "human")
        self.assertEqual(resolve_control_mode(None, coach=True), "human")
        self.assertRaises(ControlModeError, resolve_control_mode, "hybrid", coach=True)
        self.assertRaises(ControlModeError, resolve_control_mode, "robot")
        ensure_control_mode_supported(HumanCapable(), "human")


class StateFiles(unittest.TestCase):
    def setUp(self):
        self.dir = harness.scratch_dir(self)

    def test_snapshot_deep_merge_and_phase(self):
        bus = SnapshotBus(self.dir)
        bus.update(score={"host": 1, "guest": 0}, round=1)
        bus.update({"score": {"guest": 2}})
        snapshot = bus.set_phase("playing", summary="go", round=2)
        self.assertEqual(snapshot["score"], {"host": 1, "guest": 2})
        self.assertEqual(snapshot["last_event"], {"summary": "go", "structured": {"round": 2}})
        self.assertEqual(list(snapshot), ["score", "round", "updated_at", "phase", "last_event"])
        self.assertEqual(bus.read(), snapshot)
        files.flush_all()
        self.assertEqual(json.loads((self.dir / "snapshot.json").read_text()), snapshot)

    def test_detail_log_and_state_store(self):
        record = DetailLog(self.dir).append({"a": 1}, b="ü")
        self.assertEqual(list(record), ["a", "b", "ts"])
        self.assertIn('"b":"ü"', (self.dir / "details.jsonl").read_text(encoding="utf-8"))
        store = StateStore(self.dir / "nested")
        self.assertEqual(store.read_int("missing"), 0)
        store.write("last_guess", 42)
        self.assertEqual(store.read_int("last_guess"), 42)

    def test_clone_json_is_the_json_round_trip(self):
        import enum
        import math

        class Level(enum.IntEnum):
            HIGH = 3

        class Name(str):
            pass

        deep = current = {}
        for _ in range(100):
            current["next"] = current = {}
        shared = {"k": [1, 2]}
        values = [
            {"a": 1, "b": [True, None, 2.5, "ü\n"], "c": {"d": {"e": []}}},
            {"t": (1, (2, 3)), 1: "int key", 2.5: "float key", None: "none", True: "bool"},
            {"t": (1, (2, [3]))}, {"1": "str first", 1: "int later"}, [Level.HIGH, Name("x"), {"k": Level.HIGH}],
            [float("inf"), -0.0, 10**30, "\ud800"], deep, [shared, shared], "plain", 7, None,
        ]
        def typed(value):  # the value with every type spelled out
            if isinstance(value, dict):
                return ("dict", [(typed(k), typed(v)) for k, v in value.items()])
            if isinstance(value, list):
                return ("list", [typed(item) for item in value])
            return (type(value).__name__, repr(value))

        for value in values:
            self.assertEqual(typed(files.clone_json(value)), typed(json.loads(files.compact(value))))
        copy = files.clone_json([shared, shared])
        self.assertIsNot(copy[0], shared)
        self.assertIsNot(copy[0], copy[1])
        self.assertTrue(math.isnan(files.clone_json([float("nan")])[0]))
        circular = {"a": []}
        circular["a"].append(circular)
        self.assertRaisesRegex(ValueError, "Circular reference", files.clone_json, circular)
        self.assertRaisesRegex(TypeError, "not JSON serializable", files.clone_json, {"s": {1}})
        self.assertRaisesRegex(TypeError, "keys must be", files.clone_json, {(1, 2): 3})

    def test_utc_now_writes_what_datetime_isoformat_writes(self):
        from datetime import datetime, timezone

        for ns in (0, 1_796_010_432_000_000_000, 1_796_010_432_123_456_789, 951_782_400_000_001_000):
            with mock.patch.object(files.time, "time_ns", return_value=ns):
                stamp = files.utc_now()
            seconds, micros = divmod(ns // 1000, 1_000_000)
            expected = datetime.fromtimestamp(seconds, timezone.utc).replace(microsecond=micros)
            self.assertEqual(stamp, expected.isoformat())
        self.assertEqual(datetime.fromisoformat(files.utc_now()).utcoffset().total_seconds(), 0)

    def test_strategy_store_audits_changes(self):
        store = StrategyStore(self.dir)
        self.assertEqual(store.read(), {})
        store.write({"mode": "fixed", "fixed": "rock"})
        self.assertEqual(store.merge({"fixed": "paper"}), {"mode": "fixed", "fixed": "paper"})
        self.assertEqual([e["op"] for e in store.read_events()], ["set", "merge"])


class WriteBehind(unittest.TestCase):
    """SDK-owned JSON documents: in memory at once, on disk within WRITE_BEHIND_SECONDS."""

    def setUp(self):
        self.dir = harness.scratch_dir(self)
        self.addCleanup(files.flush_all)

    def on_disk(self, name: str):
        return json.loads((self.dir / name).read_text(encoding="utf-8"))

    def test_first_write_is_immediate_and_rapid_rewrites_are_coalesced(self):
        path = self.dir / "doc.json"
        files.store_json(path, {"n": 0})
        self.assertEqual(self.on_disk("doc.json"), {"n": 0})
        with mock.patch.object(files, "_write_replacing", wraps=files._write_replacing) as writes:
            for n in range(1, 50):
                files.store_json(path, {"n": n})
            self.assertEqual(files.read_json(path), {"n": 49})
            deadline = time.monotonic() + 2
            while self.on_disk("doc.json") != {"n": 49} and time.monotonic() < deadline:
                time.sleep(0.01)
        self.assertEqual(self.on_disk("doc.json"), {"n": 49})
        self.assertEqual(writes.call_count, 1)
        self.assertEqual((self.dir / "doc.json").read_text(encoding="utf-8"),
                         json.dumps({"n": 49}, indent=2))

    def test_a_later_rewrite_is_the_flushers_even_long_after_the_last_write(self):
        path = self.dir / "doc.json"
        files.store_json(path, {"n": 0})
        time.sleep(files.WRITE_BEHIND_SECONDS * 2)  # past the window: written at once...
        writers = []
        real = files._write_replacing

        def record(*args):
            writers.append(threading.get_ident())
            real(*args)

        with mock.patch.object(files, "_write_replacing", side_effect=record):
            files.store_json(path, {"n": 1})
            self.assertEqual(files.read_json(path), {"n": 1})
            deadline = time.monotonic() + 2
            while self.on_disk("doc.json") != {"n": 1} and time.monotonic() < deadline:
                time.sleep(0.005)
        self.assertEqual(self.on_disk("doc.json"), {"n": 1})
        # ...but by the flusher, never on the thread that changed it
        self.assertEqual(len(writers), 1)
        self.assertNotEqual(writers[0], threading.get_ident())

    def test_flush_all_completes_every_document(self):
        bus = DecisionBus(self.dir)
        for round_index in range(5):
            bus.publish_state({"match_key": "round", "match_value": round_index})
            bus.finalize_window("round", round_index, "fallback")
        files.flush_all()
        self.assertEqual(self.on_disk("decision/state.json")["match_value"], 4)
        self.assertEqual(len(self.on_disk("decision/finalized.json")), 5)
        self.assertFalse(list(self.dir.rglob("*.tmp")))

    def test_flush_all_releases_only_the_given_state_dir(self):
        ours, theirs = self.dir / "host-1", self.dir / "guest-1"
        for side in (ours, theirs):
            files.store_json(side / "snapshot.json", {"n": 1})
            files.store_json(side / "snapshot.json", {"n": 2})  # pending, written behind
            files.append_jsonl(side / "events.jsonl", {"e": 1})
        files.flush_all(release_under=ours)
        for side in (ours, theirs):  # every pending document is on disk
            self.assertEqual(json.loads((side / "snapshot.json").read_text()), {"n": 2})
        self.assertNotIn(files._key(ours / "snapshot.json"), files._documents)
        self.assertNotIn(files._key(ours / "events.jsonl"), files._appenders)
        self.assertIn(files._key(theirs / "snapshot.json"), files._documents)
        self.assertIn(files._key(theirs / "events.jsonl"), files._appenders)
        (ours / "snapshot.json").write_text('{"edited": true}')  # released: read from disk
        self.assertEqual(files.read_json(ours / "snapshot.json"), {"edited": True})
        self.assertEqual(files.read_json(theirs / "snapshot.json"), {"n": 2})
        files.state_file(ours, "events.jsonl")
        files.flush_all(release_under=ours)  # and the path caches forget the released dir
        self.assertFalse([k for k in files._absolute_keys.values() if k.startswith(str(ours))])
        self.assertNotIn((str(ours), "events.jsonl"), files._state_files)
        self.assertIn(files._key(theirs / "snapshot.json"), files._absolute_keys.values())

    def test_flush_all_waits_for_a_write_under_way(self):
        path = self.dir / "doc.json"
        files.store_json(path, {"n": 1})
        real = files._write_replacing

        def slow(*args):
            time.sleep(0.3)
            real(*args)

        with mock.patch.object(files, "_write_replacing", side_effect=slow):
            files.store_json(path, {"n": 2})
            time.sleep(0.15)  # the flusher is inside the slow write by now
            files.flush_all()
            self.assertEqual(self.on_disk("doc.json"), {"n": 2})

    def test_stored_value_is_a_copy(self):
        value = {"list": [1]}
        files.store_json(self.dir / "doc.json", value)
        value["list"].append(2)
        read = files.read_json(self.dir / "doc.json")
        read["list"].append(3)
        self.assertEqual(files.read_json(self.dir / "doc.json"), {"list": [1]})

    def test_files_written_by_others_are_read_from_disk(self):
        store = StrategyStore(self.dir)
        store.write({"mode": "fixed", "fixed": "rock"})
        (self.dir / "strategy.json").write_text('{"mode": "fixed", "fixed": "paper"}')
        self.assertEqual(store.get("fixed"), "paper")
        DecisionBus.submit(self.dir, {"round": 0, "choice": "a"})
        with open(self.dir / "decision/decisions.jsonl", "a") as handle:
            handle.write('{"round": 0, "choice": "b"}\n')
        DecisionBus.submit(self.dir, {"round": 0, "choice": "c"})
        self.assertEqual([r["choice"] for r in DecisionBus(self.dir).read_pending()], ["a", "b", "c"])

    def test_a_removed_state_dir_is_not_recreated_by_a_late_flush(self):
        state_dir = self.dir / "session"
        files.store_json(state_dir / "snapshot.json", {"n": 1})
        files.store_json(state_dir / "snapshot.json", {"n": 2})
        (state_dir / "snapshot.json").unlink()
        state_dir.rmdir()
        files.flush_all()
        self.assertFalse(state_dir.exists())
        files.append_jsonl(state_dir / "events.jsonl", {"n": 3})
        self.assertEqual(files.read_jsonl(state_dir / "events.jsonl"), [{"n": 3}])


class DecisionWindowsBehaviour(unittest.TestCase):
    def setUp(self):
        self.dir = harness.scratch_dir(self)

    def _hooks(self, config=HYBRID, options=None, cls=ProtocolHooks):
        hooks = cls()
        hooks.proto_init(options or {}, "host", [], self.dir, config)
        return hooks

    def test_explicit_beats_generated_beats_legacy(self):
        bus = DecisionBus(self.dir)
        for record in ({"round": 0, "choice": "a"},
                       {"round": 0, "choice": "b", "_meta": {"origin": "cli", "decision_id": "x"}},
                       {"round": 0, "choice": "c", "_meta": {"origin": "policy_runner", "decision_id": "y"}}):
            DecisionBus.submit(self.dir, record)
        self.assertEqual(bus.peek_latest_for_match("round", 0)["choice"], "b")
        self.assertEqual(bus.consume_latest_for_match("round", 0, consumer_id="t")["choice"], "b")
        consumed = [json.loads(line) for line in (self.dir / "decision/consumed.jsonl").read_text().splitlines()]
        self.assertEqual([c["reason"] for c in consumed], ["consumed", "superseded", "superseded"])
        self.assertIsNone(DecisionBus(self.dir).consume_latest_for_match("round", 0))

    def test_hybrid_window_falls_back_immediately(self):
        hooks = self._hooks()
        with mock.patch.object(time, "sleep", side_effect=AssertionError("window waited")):
            self.assertIsNone(hooks._consume_hybrid("round", 3))
        self.assertEqual([e["type"] for e in events(self.dir)],
                         ["local_decision_window_started", "local_decision_fallback"])
        finalized = json.loads((self.dir / "decision/finalized.json").read_text())
        self.assertEqual(finalized["round:3"]["reason"], "fallback")

    def test_hybrid_window_skips_its_steps_only_when_no_input_file_exists(self):
        hooks = self._hooks()
        steps = ("materialize_pending_intents", "materialize_active_policy")
        with mock.patch.multiple(policy_materializer, **{step: mock.DEFAULT for step in steps}) as calls:
            self.assertIsNone(hooks._consume_hybrid("round", 0))  # no file: nothing to look at
            self.assertFalse(any(call.called for call in calls.values()))
            for name in ("intervention_intents.jsonl", "strategy.json", "decision/decisions.jsonl"):
                (self.dir / name).write_text("")
                self.assertIsNone(hooks._consume_hybrid("round", 1))
                self.assertTrue(all(call.called for call in calls.values()), name)
                (self.dir / name).unlink()
                for call in calls.values():
                    call.reset_mock()
            files.store_json(self.dir / "strategy.json", {"mode": "policy"})  # a document in memory
            hooks._consume_hybrid("round", 2)
            self.assertTrue(all(call.called for call in calls.values()))

    def test_hybrid_window_runs_overridden_steps_even_without_files(self):
        class OwnPolicy(ProtocolHooks):
            def _materialize_active_policy(self, match_key, match_value):
                DecisionBus.submit(self.state_dir, {match_key: match_value, "choice": "mine"})

        decision = self._hooks(cls=OwnPolicy)._consume_hybrid("round", 4)
        self.assertEqual(decision, {"round": 4, "choice": "mine"})

    def test_hybrid_window_waits_for_min_think(self):
        hooks = self._hooks(options={"min_think_seconds": 0.6})
        late = {"round": 1, "choice": "rock", "_meta": {"origin": "web", "decision_id": "w"}}
        timer = threading.Timer(0.2, DecisionBus.submit, (self.dir, late))
        timer.start()
        self.addCleanup(timer.cancel)
        self.assertEqual(hooks._consume_hybrid("round", 1), late)
        self.assertEqual(events(self.dir)[-1]["type"], "local_decision_consumed")

    def test_human_window_requires_human_mode_and_times_out(self):
        self.assertRaises(RuntimeError, self._hooks()._await_human_decision, "round", 0)
        hooks = self._hooks(HUMAN, {"max_think_seconds": 0.3}, HumanCapable)
        with self.assertRaises(DecisionTimeoutError):
            hooks._await_human_decision("round", 0)
        self.assertEqual(events(self.dir)[-1]["type"], "human_decision_failed")
        self.assertEqual(hooks.snapshot.read()["timing"], {})

    def test_human_window_returns_submission(self):
        hooks = self._hooks(HUMAN, {"min_think_seconds": 0}, HumanCapable)
        DecisionBus.submit(self.dir, {"round": 0, "choice": "paper"})
        self.assertEqual(hooks._await_human_decision("round", 0), {"round": 0, "choice": "paper"})
        with self.assertRaisesRegex(InvalidHumanDecisionError, "invalid human decision for round=0: bad"):
            hooks._reject_human_decision("round", 0, {"choice": "x"}, "bad")

    def test_submit_decision_gateway(self):
        done = submit_decision(self.dir, {"round": 2, "choice": "rock"}, origin="cli",
                               agent_id="a", idempotency_key="k")
        self.assertTrue(done["ok"])
        again = submit_decision(self.dir, {"round": 2, "choice": "rock"}, origin="cli",
                                agent_id="a", idempotency_key="k")
        self.assertEqual((again["reason"], again["decision_id"]), ("duplicate_idempotency", done["decision_id"]))
        DecisionBus(self.dir).finalize_window("round", 2, "consumed")
        self.assertEqual(submit_decision(self.dir, {"round": 2}, origin="cli")["reason"], "decision_finalized")
        self.assertEqual(submit_decision(self.dir, {"x": 1}, origin="cli", require_match_key=True)["reason"],
                         "match_key_required")

    def test_whisper_override(self):
        class Choices(ProtocolHooks):
            CHOICE_KEYWORDS = {"rock": ["rock", "石头"], "paper": ["paper", "布"]}
        hooks = self._hooks(cls=Choices)
        hooks.strategy.write({"operator_hint": "一直出布"})
        self.assertEqual(hooks._resolve_whisper_override("round", 0)[0], "paper")
        hooks.strategy.write({"operator_hint": "paper next round only"})
        self.assertIsNone(hooks._resolve_whisper_override("round", 0))


class WhisperParsing(unittest.TestCase):
    def test_commands(self):
        keywords = {"rock": ["rock", "r"], "scissors": ["scissors", "s"]}
        self.assertEqual(extract_number("bid 30 now"), 30)
        self.assertIsNone(extract_number("none"))
        self.assertEqual(parse_whisper_to_command("always rock", keywords),
                         {"type": "strategy", "payload": {"mode": "fixed", "fixed": "rock"}})
        self.assertEqual(parse_whisper_to_command("scissors this round", keywords, "round", 4),
                         {"type": "decide", "payload": {"round": 4, "choice": "scissors"}})
        self.assertEqual(parse_whisper_to_command("bid 12", None),
                         {"type": "strategy", "payload": {"mode": "fixed", "bid": 12}})
        self.assertEqual(parse_whisper_to_command("mirror them", keywords)["payload"]["policy"],
                         "mirror_previous_opponent")
        self.assertIsNone(parse_whisper_to_command("   ", keywords))


if __name__ == "__main__":
    unittest.main()
