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


def card_state(role: str, hand: dict, stock: int = 10, played: int = 0, opponent: int = 5) -> dict:
    """The table view the mental_poker engine installs: `hand` maps id-B to (rank, suit)."""
    from aigenora.proto.mental_poker import DeckState

    others = {f"o{i}" for i in range(opponent)}
    deck = DeckState(guest_hand=set(hand) if role == "guest" else others,
                     host_hand=set(hand) if role == "host" else others,
                     stock={f"s{i}" for i in range(stock)}, played={f"p{i}" for i in range(played)})
    return {"_mp_role": role, "_mp_hand": set(hand), "_mp_hand_cards": dict(hand), "_mp_deck_view": deck}


def labels(hooks, state: dict) -> list[str]:
    return [move["move"] for move in hooks.proto_mp_legal_actions(state)]


def card_game(test: unittest.TestCase, alias: str, options: dict, seed: int,
              sides: tuple[str, str] = ("ours", "ours")) -> str | None:
    """One whole game of a card game between two hooks objects (host's and guest's from
    `sides`: "ours" or "reference"), dealt from a seeded shuffle: the table the mental_poker
    engine keeps (hands, stock, played cards, turns, two passes ending it) without its
    cryptography. Every play is checked by the other side's hooks, and both sides must name
    the same winner, which is returned."""
    from aigenora.proto.mental_poker import DeckState

    hooks = {}
    for role, side in zip(("host", "guest"), sides):
        if side == "ours":
            hooks[role] = hooks_for(alias, role, test, dict(options, seed=seed))
        else:
            hooks[role] = driver.load_hooks(reference_dir(alias))
            test.addCleanup(driver.flush_files)
            hooks[role].proto_init(dict(options), role, [], harness.scratch_dir(test), None)
    deck = hooks["host"].proto_mp_deck_universe()
    random.Random(seed).shuffle(deck)
    faces = {str(index): card for index, card in enumerate(deck)}
    stock = list(faces)
    plan = hooks["host"].proto_mp_initial_deal({})
    test.assertEqual(hooks["guest"].proto_mp_initial_deal({}), plan)
    hands = {"guest": {}, "host": {}}
    for role in ("guest", "host"):
        for _ in range(plan[role]):
            card_id = stock.pop(0)
            hands[role][card_id] = faces[card_id]
    played: set[str] = set()
    passes = 0

    def state(role: str) -> dict:
        view = {"_mp_role": role, "_mp_hand": set(hands[role]), "_mp_hand_cards": dict(hands[role]),
                "_mp_deck_view": DeckState(set(hands["guest"]), set(hands["host"]), set(stock), set(played))}
        if passes >= 2:
            view["_mp_stalled"] = True
        return view

    for turn in range(1000):
        actor = "host" if turn % 2 == 0 else "guest"
        peer = "guest" if actor == "host" else "host"
        action = hooks[actor].proto_mp_choose_action(state(actor))
        if action["kind"] == "play":
            rank, suit = hands[actor][action["id_b"]]
            msg = {"action": "mp_play", "id_b": action["id_b"], "rank": rank, "suit": suit}
            if action.get("call_suit") is not None:
                msg["call_suit"] = action["call_suit"]
            verdict = hooks[peer].proto_mp_validate_play(state(peer), actor, msg)
            test.assertTrue(verdict.ok, f"{alias} seed {seed}: {actor} {msg}: {verdict.reason}")
            del hands[actor][action["id_b"]]
            played.add(action["id_b"])
            passes = 0
        elif action["kind"] == "draw":
            test.assertTrue(stock, f"{alias} seed {seed}: a draw from an empty stock")
            card_id = stock.pop(0)
            hands[actor][card_id] = faces[card_id]
            passes = 0
        else:
            passes += 1
        winners = {role: hooks[role].proto_mp_check_winner(state(role)) for role in ("host", "guest")}
        test.assertEqual(winners["host"], winners["guest"], f"{alias} seed {seed}")
        if winners["host"] is not None or passes >= 2 or not (hands["host"] or hands["guest"]):
            return winners["host"]
    test.fail(f"{alias} seed {seed}: the game did not end")


class CardGames(unittest.TestCase):
    """The card games run on the Rust mental_poker engine, which this driver does not have:
    here their rules and automatic players, and whole games on a table without the
    cryptography (`card_game`); the engine's games are in tests/spec and tests/interop."""

    def test_each_card_game_is_documented(self):
        for alias in ("crazy-eights-v1", "briscola-v1"):
            source = (WELL_KNOWN / alias / "hooks.py").read_text("utf-8")
            self.assertIn(alias, source.split('"""')[1], alias)

    def test_crazy_eights_follows_suit_or_rank_and_eights_name_a_suit(self):
        hooks = hooks_for("crazy-eights-v1", "host", self)
        hand = {"1": (6, 0), "2": (5, 2), "3": (10, 3)}  # 8C 7H QS
        self.assertEqual(labels(hooks, card_state("host", hand)),
                         ["8C:C", "8C:D", "8C:H", "8C:S", "7H", "QS"])
        hooks.proto_mp_validate_play({}, "guest", {"rank": 5, "suit": 1})  # 7D
        hooks.own_turns += 1  # a new turn
        self.assertEqual(labels(hooks, card_state("host", hand)), ["8C:C", "8C:D", "8C:H", "8C:S", "7H"])
        problem = lambda rank, suit, call=None: hooks.rule_problem("guest", (rank, suit), call, {})
        self.assertEqual(problem(10, 3), "illegal_play")
        self.assertEqual(problem(6, 3), "missing_call_suit")
        self.assertEqual(problem(5, 2, 1), "unexpected_call_suit")
        self.assertIsNone(problem(6, 3, 2))
        hooks.own_turns += 1
        self.assertEqual(labels(hooks, card_state("host", {"3": (10, 3)})), ["draw"])
        hooks.own_turns += 1
        self.assertEqual(labels(hooks, card_state("host", {"3": (10, 3)}, stock=0)), ["pass"])

    def test_crazy_eights_keeps_its_eights_and_calls_its_longest_suit(self):
        hooks = hooks_for("crazy-eights-v1", "host", self)
        hooks.proto_mp_validate_play({}, "guest", {"rank": 5, "suit": 1})  # 7D on the discard
        hand = {"a": (6, 0), "b": (5, 2), "c": (0, 2), "d": (3, 2), "e": (11, 3)}  # 8C 7H 2H 5H KS
        self.assertEqual(hooks.proto_mp_choose_action(card_state("host", hand)), {"kind": "play", "id_b": "b"})
        self.assertTrue(hooks.proto_mp_validate_play({}, "guest", {"rank": 5, "suit": 1}).ok)  # 7D on 7H
        stuck = {"a": (6, 0), "c": (0, 2), "d": (3, 2), "f": (7, 3)}  # 8C 2H 5H 9S
        self.assertEqual(hooks.proto_mp_choose_action(card_state("host", stuck)),
                         {"kind": "play", "id_b": "a", "call_suit": 2})

    def test_crazy_eights_winner_empty_hand_or_fewer_cards_when_stalled(self):
        hooks = hooks_for("crazy-eights-v1", "guest", self)
        self.assertEqual(hooks.winner(card_state("guest", {}, stock=0, opponent=2)), "guest")
        stalled = card_state("guest", {"a": (1, 1)}, stock=0, opponent=2)
        self.assertIsNone(hooks.winner(stalled))
        stalled["_mp_stalled"] = True
        self.assertEqual(hooks.winner(stalled), "guest")
        level = card_state("guest", {"a": (1, 1), "b": (2, 2)}, stock=0, opponent=2)
        level["_mp_stalled"] = True
        self.assertIsNone(hooks.winner(level))

    def test_briscola_tricks_refills_and_the_peer_checks(self):
        briscola = load_module("briscola-v1")
        ace, three, king, two = 0, 2, 9, 1
        self.assertEqual(briscola.trick_taker((three, 1), (ace, 1)), "guest")   # higher of the suit
        self.assertEqual(briscola.trick_taker((king, 1), (ace, 2)), "host")    # off suit, no trump
        self.assertEqual(briscola.trick_taker((ace, 1), (two, 0)), "guest")    # clubs trump
        hooks = hooks_for("briscola-v1", "guest", self)
        self.assertEqual(hooks.rule_problem("guest", (ace, 1), None, card_state("guest", {})), "guest_leads")
        hooks.proto_mp_validate_play(card_state("guest", {}), "host", {"rank": three, "suit": 1})
        hooks.proto_mp_choose_action(card_state("guest", {"x": (ace, 1), "y": (two, 2), "z": (4, 3)}))
        hooks.after_turn("guest", "play", {})
        self.assertEqual(hooks.points, {"host": 0, "guest": 21})
        hooks.own_turns += 1
        self.assertEqual(labels(hooks, card_state("guest", {"y": (two, 2), "z": (4, 3)})), ["draw"])
        self.assertEqual(hooks.rule_problem("host", (two, 1), None, card_state("guest", {}, opponent=2)),
                         "refill_due")

    def test_briscola_wins_valuable_tricks_cheaply_and_keeps_its_trumps(self):
        def follow(lead, hand):
            hooks = hooks_for("briscola-v1", "guest", self)
            hooks.trick = [("host", lead)]
            return hooks.proto_mp_choose_action(card_state("guest", hand))["id_b"]

        # An ace led: the lowest trump takes it (not the king of trumps, not a loser).
        self.assertEqual(follow((0, 1), {"two": (1, 0), "king": (9, 0), "four": (3, 2)}), "two")
        # Nothing on the table: no trump spent, the blank card goes.
        self.assertEqual(follow((3, 1), {"two": (1, 0), "five": (4, 2)}), "five")
        # Its own ace takes a trick of its suit safely: eleven points banked.
        self.assertEqual(follow((1, 1), {"ace": (0, 1), "four": (3, 2)}), "ace")
        leader = hooks_for("briscola-v1", "host", self)
        lead = leader.proto_mp_choose_action(card_state("host", {"t": (1, 0), "a": (0, 2), "f": (4, 3)}))
        self.assertEqual(lead["id_b"], "f")

    def test_briscola_searches_the_endgame_once_the_stock_is_empty(self):
        briscola = load_module("briscola-v1")
        ace_h, five_d, two_c, three_d = (0, 2), (4, 1), (1, 0), (2, 1)
        # The host's ace of hearts falls to the guest's two of clubs (trump).
        self.assertEqual(briscola.endgame((ace_h,), (two_c,), None), -11)
        # Whatever the host leads, the guest takes all 21 points: the trump for the ace, the
        # three over the five.
        self.assertEqual(briscola.endgame((ace_h, five_d), (two_c, three_d), None), -21)
        # As the guest following the ace, the search trumps it.
        hooks = hooks_for("briscola-v1", "guest", self)
        hooks.seen = set(hooks.deck()) - {ace_h, five_d, two_c, three_d}
        hooks.proto_mp_validate_play(card_state("guest", {}), "host", {"rank": 0, "suit": 2})
        state = card_state("guest", {"t": two_c, "d": three_d}, stock=0, opponent=1)
        self.assertEqual(hooks.proto_mp_choose_action(state)["id_b"], "t")

    def test_the_automatic_players_beat_random_play_and_agree_on_every_winner(self):
        # 200 seeded deals each, the automatic player as host and guest in turn. Crazy Eights
        # leaves little to choose (a side must play when it can): about 63% of the games; in
        # Briscola about 90%.
        for alias, least in (("crazy-eights-v1", 115), ("briscola-v1", 165)):
            won = 0
            for seed in range(200):
                best = "host" if seed % 2 == 0 else "guest"
                randomly = "guest" if best == "host" else "host"
                winner = card_game(self, alias, {f"{randomly}_strategy": "random"}, seed)
                won += winner == best
            self.assertGreaterEqual(won, least, f"{alias}: the automatic player won {won} of 200")

    def test_the_rules_agree_with_the_reference_hooks_in_both_roles(self):
        # The reference's own hooks (on our SDK) on the other side: each accepts every card
        # the other plays, and both name the same winner, over many deals.
        for alias in ("crazy-eights-v1", "briscola-v1"):
            outcomes = set()
            for seed in range(100):
                sides = ("ours", "reference") if seed % 2 == 0 else ("reference", "ours")
                outcomes.add(card_game(self, alias, {}, seed, sides))
            self.assertTrue({"host", "guest"} <= outcomes, f"{alias}: {outcomes}")

    def test_scripted_and_seeded_random_card_play(self):
        hand = {"1": (5, 2), "2": (10, 3), "3": (0, 3), "4": (12, 1)}  # 7H QS 2S AD
        scripted = hooks_for("crazy-eights-v1", "guest", self, {"guest_moves": "qs, 2s", "moves": "ad"})
        self.assertEqual(scripted.proto_mp_choose_action(card_state("guest", hand)), {"kind": "play", "id_b": "2"})
        self.assertEqual(scripted.proto_mp_choose_action(card_state("guest", {"3": (0, 3), "1": (5, 2)})),
                         {"kind": "play", "id_b": "3"})

        def random_picks(seed):
            hooks = hooks_for("crazy-eights-v1", "host", self, {"strategy": "random", "seed": seed})
            moves = hooks.legal_moves(hand, card_state("host", hand))  # the discard is empty
            return [hooks._automatic(moves, hand, {}).id_b for _ in range(8)]

        self.assertEqual(random_picks(3), random_picks(3))
        self.assertGreater(len(set(random_picks(3))), 1)
        with self.assertRaises(ValueError):
            hooks_for("briscola-v1", "host", self, {"strategy": "cheat"})

    def test_the_snapshot_shows_the_table_the_hand_and_the_legal_moves(self):
        hooks = hooks_for("crazy-eights-v1", "host", self)
        hooks.proto_mp_validate_play({}, "guest", {"rank": 5, "suit": 1})
        hooks.proto_mp_legal_actions(card_state("host", {"1": (6, 0), "2": (11, 3)}))
        snapshot = hooks.snapshot.read()
        self.assertEqual(snapshot["legal"], ["8C:C", "8C:D", "8C:H", "8C:S"])
        self.assertEqual(snapshot["cards"], ["8C", "KS"])
        self.assertEqual(snapshot["to_move"], "host")
        self.assertIn("discard: 7D", snapshot["board_text"])
        self.assertIn("your move: 8C:C", snapshot["board_text"])
        self.assertEqual(hooks.decision_choices("action_seq", 0), snapshot["legal"])
        self.assertEqual(hooks.proto_display({"action": "mp_play", "rank": 6, "suit": 0, "call_suit": 2}, "sent"),
                         "T1 host: 8C calling hearts")


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
