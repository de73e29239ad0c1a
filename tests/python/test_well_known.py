"""Our hooks for the network's well-known contracts (src/protocols/well_known/*): each played
in-process against the reference's own hooks for the same contract (spec from the installed
reference package, found through its index.json), in both roles and against itself; and the
parts a game has to get right on its own: the rules, the automatic player, scripted moves,
people's decisions, and each side's checks of the other."""
from __future__ import annotations

import contextlib
import importlib.util
import io
import json
import random
import unittest
from pathlib import Path

import harness
import driver

WELL_KNOWN = harness.OUR_PROTOCOLS / "well_known"
BOARD_OPTIONS = {"think_ms": 20}
# alias -> (options, the outcomes a finished game may report)
CONTRACTS = {
    "rps-v1": ({"best_of": 3}, ("host", "guest", "draw")),
    "coin-flip-v1": ({"best_of": 3}, ("host", "guest")),
    "guess-number-v1": ({}, ("host", "guest")),
    "weak-wins-all": ({"total_points": 50, "total_rounds": 4}, ("host", "guest", "draw")),
    "hero-duel-v1": ({}, ("host", "guest", "draw")),
    "connect4-v1": (BOARD_OPTIONS, ("host", "guest", None)),
    "gomoku-v1": (dict(BOARD_OPTIONS, board_size=9), ("host", "guest", None)),
    "reversi-v1": (dict(BOARD_OPTIONS, board_size=6), ("host", "guest", None)),
    "human-chat-v1": ({}, (None,)),
    "trusted-agent-task-v1": ({"task_goal": "say hello", "task_reply": "hello"}, (None,)),
}
CHAT = [["guest", "hello"], ["host", "hi ✓"], ["guest", "/quit"]]


def reference_dir(alias: str) -> Path:
    """The reference's directory for a contract, by its alias in the package's index.json."""
    index = json.loads((harness.REFERENCE_PACKAGE / "protocols" / "index.json").read_text("utf-8"))
    entry = next(entry for entry in index["protocols"] if entry["alias"] == alias)
    return harness.REFERENCE_PACKAGE / "protocols" / entry["path"]


def load_module(alias: str):
    path = WELL_KNOWN / alias / "hooks.py"
    spec = importlib.util.spec_from_file_location(f"well_known_{alias.replace('-', '_')}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def play(test: unittest.TestCase, alias: str, hosts: str, guests: str, **kwargs) -> dict:
    """One game of `alias` with the host's hooks from `hosts` and the guest's from `guests`
    ("ours" or "reference"), on the reference's spec."""
    dirs = {"ours": WELL_KNOWN / alias, "reference": reference_dir(alias)}
    options = kwargs.pop("options", CONTRACTS[alias][0])
    return driver.play(reference_dir(alias), harness.scratch_dir(test), options=options,
                       hooks_dirs={"host": dirs[hosts], "guest": dirs[guests]}, chat=CHAT, seed=None,
                       **kwargs)


def sent(result: dict, action: str) -> list[dict]:
    return [step["msg"] for step in result["transcript"] if step["msg"].get("action") == action]


def hooks_for(alias: str, role: str, test: unittest.TestCase, options: dict | None = None,
              control_mode: str = "autonomous"):
    hooks = driver.load_hooks(WELL_KNOWN / alias)
    spec = json.loads((reference_dir(alias) / "spec.json").read_text("utf-8"))
    state_dir = harness.scratch_dir(test)
    # Cleanups run last-in first-out: the state files are complete before the dir goes.
    test.addCleanup(driver.flush_files)
    hooks.proto_init(dict(options or {}), role, [], state_dir,
                     driver.decision_config(spec, control_mode))
    return hooks


class AgainstTheReferenceHooks(unittest.TestCase):
    def test_every_contract_completes_against_the_reference_in_both_roles(self):
        for alias, (_, outcomes) in CONTRACTS.items():
            for hosts, guests in (("ours", "reference"), ("reference", "ours"), ("ours", "ours")):
                with self.subTest(alias=alias, host=hosts, guest=guests):
                    result = play(self, alias, hosts, guests)
                    self.assertEqual(result["completed"], {"host": True, "guest": True})
                    self.assertIn(result["outcome"], outcomes)

    def test_each_hooks_file_is_documented(self):
        for alias in CONTRACTS:
            source = (WELL_KNOWN / alias / "hooks.py").read_text("utf-8")
            self.assertTrue(source.startswith('"""'), alias)
            self.assertIn(alias, source.split('"""')[1], f"{alias}: the docstring names the contract")


class BoardGames(unittest.TestCase):
    def test_connect_four_search_beats_a_random_player(self):
        connect4 = load_module("connect4-v1")
        from aigenora.proto.search import best_move

        rng, won = random.Random(5), 0
        for game in range(100):
            board, searcher = connect4.Board(6, 7), ("guest", "host")[game % 2]
            while board.winner() is None:
                searcher_moves = board.to_move == searcher
                board.play(best_move(board, 0.05, max_depth=3, shuffle=rng) if searcher_moves
                           else rng.choice(board.legal()))
            won += board.winner() == searcher
        self.assertGreaterEqual(won, 90)

    def test_scripted_moves_are_played_in_order(self):
        result = play(self, "connect4-v1", "reference", "ours",
                      options=dict(BOARD_OPTIONS, guest_moves="0 1 2"))
        self.assertEqual([move["col"] for move in sent(result, "move")][:3], [0, 1, 2])

    def test_people_play_connect_four_through_decisions(self):
        def decisions(turns_and_cols):
            return [{"turn": turn, "col": col, "_meta": {"origin": "cli", "decision_id": f"d{turn}"}}
                    for turn, col in turns_and_cols]

        result = play(self, "connect4-v1", "ours", "ours", control_mode="human",
                      options={"min_think_seconds": 0},
                      prepare={"guest": {"decisions": decisions([(1, 0), (3, 0), (5, 0), (7, 0)])},
                               "host": {"decisions": decisions([(2, 1), (4, 1), (6, 1)])}})
        self.assertEqual(result["outcome"], "guest")
        self.assertEqual([move["col"] for move in sent(result, "move")], [0, 0, 0, 0])

    def test_the_host_refuses_illegal_moves(self):
        for alias, move, reason in (
                ("connect4-v1", {"col": 9}, "invalid_column"),
                ("gomoku-v1", {"row": 19, "col": 0}, "out_of_bounds"),
                ("reversi-v1", {"row": 0, "col": 0}, "illegal_move")):
            with self.subTest(alias=alias):
                host = hooks_for(alias, "host", self)
                host.proto_host_handle_join({"action": "join"})
                answer = host.proto_host_handle({"action": "move", "turn": 1, **move})
                self.assertTrue(answer.abort)
                self.assertEqual(answer.response, {"action": "error", "turn": 1, "reason": reason})
                late = hooks_for(alias, "host", self)
                late.proto_host_handle_join({"action": "join"})
                answer = late.proto_host_handle({"action": "move", "turn": 3, "row": 0, "col": 0})
                self.assertEqual(answer.response["reason"], "not_your_turn")

    def test_the_guest_refuses_a_verdict_its_board_contradicts(self):
        guest = hooks_for("connect4-v1", "guest", self, {"guest_moves": "3"})
        guest.proto_guest_handle_ready({"action": "ready", "cols": 7, "rows": 6, "first": "guest"})
        guest.proto_guest_first_action()
        claim = {"action": "round_result", "turn": 2, "col": 3, "row": 4, "player": "host",
                 "game_over": True, "winner": "host"}
        self.assertTrue(guest.proto_guest_handle(claim).abort)

    def test_display_shows_the_board_and_the_legal_moves(self):
        host = hooks_for("reversi-v1", "host", self, {"board_size": 6})
        host.proto_host_handle_join({"action": "join"})
        text = host.proto_display({"action": "move", "turn": 1, "row": 1, "col": 2}, "received")
        self.assertIn("T1 guest: c2", text)
        self.assertIn("  a b c d e f", text)
        self.assertIn("your move:", text)
        self.assertEqual(host.snapshot.read()["legal"], [], "not the host's turn yet")
        guest = hooks_for("reversi-v1", "guest", self, {"board_size": 6})
        guest.proto_guest_handle_ready({"action": "ready", "board_size": 6, "first": "guest"})
        snapshot = guest.snapshot.read()
        self.assertEqual(snapshot["to_move"], "guest")
        self.assertEqual(sorted(snapshot["legal"]), ["b3", "c2", "d5", "e4"])
        self.assertIn("X O", snapshot["board_text"])

    def test_the_snapshot_lays_out_the_board_for_controllers(self):
        guest = hooks_for("connect4-v1", "guest", self, {"guest_moves": "2"})
        guest.proto_guest_handle_ready({"action": "ready", "cols": 5, "rows": 4, "first": "guest"})
        snapshot = guest.snapshot.read()
        self.assertEqual(snapshot["board"], [["."] * 5] * 4)
        self.assertEqual(snapshot["board_layout"], {
            "columns": ["0", "1", "2", "3", "4"], "rows": ["1", "2", "3", "4"],
            "pieces": {"X": "red", "O": "yellow"}, "moves_by": "column"})
        self.assertEqual(snapshot["legal"], [0, 1, 2, 3, 4])
        self.assertEqual(snapshot["legal_cells"][2], {"move": 2, "row": 3, "col": 2},
                         "a column's move lands on its lowest empty cell")
        self.assertEqual(guest.decision_choices("turn", 1), [0, 1, 2, 3, 4], "a window lists them")
        self.assertIsNone(guest.decision_choices("turn", 2), "not a turn of this side's")
        guest.proto_guest_first_action()
        snapshot = guest.snapshot.read()
        self.assertEqual(snapshot["board"][3][2], "X")
        self.assertEqual(snapshot["last_move"], {"turn": 1, "player": "guest", "move": 2, "row": 3, "col": 2})
        self.assertEqual(snapshot["legal_cells"], [], "not the guest's turn")
        reversi = hooks_for("reversi-v1", "guest", self, {"board_size": 6})
        reversi.proto_guest_handle_ready({"action": "ready", "board_size": 6, "first": "guest"})
        snapshot = reversi.snapshot.read()
        self.assertEqual(snapshot["board_layout"]["moves_by"], "cell")
        self.assertEqual(snapshot["board_layout"]["columns"], list("abcdef"))
        self.assertIn({"move": "c2", "row": 1, "col": 2}, snapshot["legal_cells"])
        self.assertEqual(len(snapshot["legal_cells"]), len(snapshot["legal"]))
        self.assertEqual(snapshot["board"][2][2:4], ["O", "X"])
        self.assertEqual(snapshot["score"], {"host": 2, "guest": 2}, "Reversi scores its discs")

    def test_a_reversi_side_without_a_move_passes_without_being_asked(self):
        reversi = load_module("reversi-v1")
        board = reversi.Board(6)
        board.cells = ["host"] * 36
        board.cells[0], board.cells[1] = None, "guest"
        self.assertEqual(board.legal(), [reversi.PASS])
        board.play(reversi.PASS)
        self.assertEqual(board.legal(), [0])
        self.assertIsNone(board.winner())
        guest = hooks_for("reversi-v1", "guest", self, {"board_size": 6}, control_mode="human")
        guest.position = board
        board.undo()
        self.assertEqual(guest._guest_turn(), {"action": "pass", "turn": 1})

    def test_gomoku_takes_a_win_and_blocks_a_four(self):
        gomoku = load_module("gomoku-v1")
        board = gomoku.Board(9)
        for guest, host in ((40, 0), (41, 1), (42, 2), (43, 3)):
            board.play(guest)
            board.play(host)
        self.assertIn(board.moves(), ([39], [44]))
        board.play(8)  # the guest looks away; the host must now win at row 0
        self.assertEqual(board.moves(), [4])


class RoundGames(unittest.TestCase):
    def test_weak_wins_all_spends_everything_in_the_last_round(self):
        result = play(self, "weak-wins-all", "ours", "reference")
        final = sent(result, "round_result")[-1]
        self.assertEqual((final["host_remaining"], final["guest_remaining"]), (0, 0))
        host = hooks_for("weak-wins-all", "host", self, {"total_points": 10, "total_rounds": 2})
        refused = host.proto_round_judge(0, 11, 3, {})
        self.assertEqual(refused.response["reason"], "invalid_choice")
        self.assertTrue(refused.abort)

    def test_hero_duel_follows_the_contract_rules(self):
        duel = load_module("hero-duel-v1")
        heroes = {"host": duel.STANDARD_BALANCE["mage"], "guest": duel.STANDARD_BALANCE["tank"]}
        fighters = {side: duel.fresh_fighter(heroes[side]) for side in ("host", "guest")}
        fighters["guest"]["mana"] = 10  # not enough for any skill
        after, result = duel.resolve_round(heroes, fighters, {"host": "ult", "guest": "ult"}, 0, 30)
        self.assertEqual((result["host_move"], result["guest_move"]), ("ult", "normal"))
        self.assertEqual((result["host_damage_dealt"], result["guest_damage_dealt"]), (180, 18))
        self.assertEqual(result["host_cd_ult"], 4)  # set to cd 5, then one tick
        self.assertEqual(result["host_mana"], 120 - 80 + 20)
        self.assertEqual(result["guest_mana"], 10 + 14)
        self.assertEqual((result["guest_hp"], result["round_winner"]), (170, "host"))

    def test_guess_number_guest_catches_lying_hints(self):
        guest = hooks_for("guess-number-v1", "guest", self, {"guest_moves": "50 25"})
        guest.proto_guest_handle_ready({"action": "ready", "range_min": 1, "range_max": 100, "max_attempts": 3})
        guest.proto_guest_first_action()
        guest.proto_guest_handle({"action": "hint", "attempt": 1, "result": "lower", "attempts_used": 1})
        with contextlib.redirect_stdout(io.StringIO()) as printed:
            guest.proto_guest_handle({"action": "game_over", "winner": "host", "secret_number": 70,
                                      "total_attempts": 3})
        self.assertIn("contradict", printed.getvalue())
        self.assertFalse(guest.snapshot.read()["hints_consistent"])


class TrustedAgentTask(unittest.TestCase):
    def test_a_task_is_answered_acknowledged_and_receipted(self):
        result = play(self, "trusted-agent-task-v1", "ours", "ours")
        self.assertEqual([step["msg"]["action"] for step in result["transcript"]],
                         ["task_submit", "task_received", "status_query", "task_status",
                          "result_ack", "receipt"])
        self.assertEqual(sent(result, "receipt")[0]["summary"], "hello")

    def test_without_an_executor_the_task_fails_honestly(self):
        result = play(self, "trusted-agent-task-v1", "ours", "ours", options={"task_goal": "x"})
        self.assertEqual(sent(result, "receipt")[0]["result_state"], "failed")

    def test_a_resubmitted_task_is_a_duplicate_and_a_changed_one_a_conflict(self):
        host = hooks_for("trusted-agent-task-v1", "host", self)
        guest = hooks_for("trusted-agent-task-v1", "guest", self, {"task_goal": "a", "task_id": "t1"})
        submit = guest.proto_guest_join_message()
        self.assertEqual(host.proto_host_handle_join(submit).response["reason_code"], "ok")
        self.assertEqual(host.proto_host_handle(submit).response["reason_code"], "duplicate")
        changed = dict(submit, request_digest="0" * 64)
        self.assertEqual(host.proto_host_handle(changed).response["reason_code"], "idempotency_conflict")


if __name__ == "__main__":
    unittest.main()
