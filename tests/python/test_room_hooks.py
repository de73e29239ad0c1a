"""Our room hooks: the Community Room and Meeting Room hooks (src/protocols/well_known/)
against the reference's own hooks for the same contracts, step by step on the same actions
(same state, same view for every member, the same actions refused), through joins,
departures and a change of leader; and the rules of our poll-room built-in."""
from __future__ import annotations

import copy
import json
import random
import unittest

import harness
import driver
from test_well_known import reference_dir

WELL_KNOWN = harness.OUR_PROTOCOLS / "well_known"


def member(seat: int, status: str = "active") -> dict:
    return {"member_id": f"m{seat}", "public_key": f"{seat:02x}" * 32, "seat": seat, "status": status}


def loaded(directory, test, options) -> object:
    hooks = driver.load_hooks(directory)
    hooks.proto_init(options, "host", [], harness.scratch_dir(test))
    return hooks


def step(hooks, state, call, *args):
    """One hook call on a copy of the state: ("ok", result) or ("refused", None)."""
    try:
        return "ok", getattr(hooks, call)(copy.deepcopy(state), *copy.deepcopy(args))
    except (ValueError, KeyError, TypeError):
        return "refused", None


class Differential:
    """Mixin: plays `steps` on our hooks and the reference's and compares every step."""
    alias = ""
    options: dict = {}

    def play(self, steps) -> dict:
        ours = loaded(WELL_KNOWN / self.alias, self, self.options)
        theirs = loaded(reference_dir(self.alias), self, self.options)
        present = [member(0), member(1), member(2)]
        states = [h.proto_group_initial_state(copy.deepcopy(present)) for h in (ours, theirs)]
        self.assertEqual(states[0], states[1])
        for index, (call, *args) in enumerate(steps):
            if call == "proto_group_member_joined":
                present.append(args[0])
            if call == "proto_group_member_left":
                present = [m for m in present if m["public_key"] != args[0]["public_key"]]
            # (a restore's first argument is the checkpoint of each side's own state)
            results = [step(h, s, call, *args) for h, s in zip((ours, theirs), states)]
            where = f"step {index}: {call}{json.dumps(args)[:200]}"
            self.assertEqual(results[0][0], results[1][0], where)
            if results[0][0] == "refused":
                continue
            ours_result, theirs_result = (r[1] for r in results)
            if call == "proto_group_restore":
                states = [ours_result, theirs_result]
            else:
                self.assertEqual(ours_result.get("completed"), theirs_result.get("completed"), where)
                self.assertEqual(ours_result.get("outcome"), theirs_result.get("outcome"), where)
                self.assertEqual(ours_result["events"], theirs_result["events"], where)
                states = [ours_result["state"], theirs_result["state"]]
            self.assertEqual(states[0], states[1], where)
            for viewer in present:
                self.assertEqual(ours.proto_group_view(copy.deepcopy(states[0]), viewer),
                                 theirs.proto_group_view(copy.deepcopy(states[1]), viewer), where)
        return states[0]


def act(seat: int, **action) -> tuple:
    return ("proto_group_handle", member(seat), action)


class CommunityRoom(Differential, unittest.TestCase):
    alias = "community-room-v1"
    options = {"history_limit": 20, "initial_topic": "Differential"}

    def test_the_same_room_on_both_hooks(self):
        steps = [act(1, kind="send", text="  hello  "), act(2, kind="set_topic", topic="news"),
                 act(1, kind="send", text=""), act(1, kind="send", text="x" * 2001),
                 act(1, kind="send", text=7), act(2, kind="dance"), act(1, kind="close_room"),
                 act(1, kind="send", text="é" * 1000), act(2, kind="set_topic", topic="t" * 200),
                 act(2, kind="set_topic", topic="t" * 201), act(2, kind="set_topic", topic=None)]
        steps += [act(seat % 3, kind="send", text=f"line {seat} ✓") for seat in range(30)]
        steps += [("proto_group_member_joined", member(3)),
                  ("proto_group_member_left", member(3), "left"),
                  ("proto_group_restore", [member(1), member(2)], 1)]
        final = self.play(steps)
        self.assertEqual(len(final["messages"]), 20, "the timeline keeps history_limit entries")

    def test_a_leader_change_and_the_owner_closing(self):
        room = loaded(WELL_KNOWN / self.alias, self, self.options)
        steps = [act(1, kind="send", text="before")]
        state = self.play(steps + [("proto_group_on_leader_changed", "aa" * 32, "bb" * 32),
                                   act(0, kind="close_room")])
        self.assertTrue(state["closed"])
        self.assertEqual(state["messages"][-1]["text"], "The room was closed")
        with self.assertRaises(ValueError):
            room.proto_group_handle(state, member(1), {"kind": "send", "text": "too late"})

    def test_autoplay_ends_the_room_from_seat_zero_only(self):
        room = loaded(WELL_KNOWN / self.alias, self, self.options)
        state = room.proto_group_initial_state([member(0), member(1)])
        for turn in range(200):
            seat = turn % 2
            action = room.proto_group_autoplay(room.proto_group_view(state, member(seat)), member(seat))
            if action is None:
                continue
            result = room.proto_group_handle(state, member(seat), action)
            state = result["state"]
            if result.get("completed"):
                break
        self.assertTrue(state["closed"])
        self.assertEqual(action, {"kind": "close_room"})
        self.assertIsNone(room.proto_group_autoplay(room.proto_group_view(state, member(1)), member(1)))


class MeetingRoom(Differential, unittest.TestCase):
    alias = "meeting-room-v1"
    options = {"meeting_title": "Differential", "max_agenda_items": 3}

    def test_the_same_meeting_on_both_hooks(self):
        one, two = member(1)["public_key"], member(2)["public_key"]
        steps = [act(1, kind="advance_agenda"), act(0, kind="add_agenda", text="first"),
                 act(1, kind="add_agenda", text="second"), act(2, kind="add_agenda", text="third"),
                 act(2, kind="add_agenda", text="fourth"), act(0, kind="advance_agenda"),
                 act(1, kind="request_to_speak"), act(2, kind="request_to_speak"),
                 act(2, kind="yield_speaker"), act(1, kind="request_to_speak"),
                 act(1, kind="yield_speaker"),
                 act(1, kind="open_vote", question="q", choices=["a", "b"]),
                 act(0, kind="open_vote", question="q", choices=["a"]),
                 act(0, kind="open_vote", question="  q?  ", choices=["a", "b", "c"]),
                 act(0, kind="open_vote", question="again", choices=["a", "b"]),
                 act(1, kind="cast_vote", choice=2), act(2, kind="cast_vote", choice=True),
                 act(2, kind="cast_vote", choice=3), act(2, kind="cast_vote", choice=0),
                 act(1, kind="cast_vote", choice=1), act(0, kind="close_vote"),
                 act(1, kind="cast_vote", choice=1), act(0, kind="close_vote"),
                 act(1, kind="add_action_item", text="mine"),
                 act(1, kind="add_action_item", text="theirs", assignee=two),
                 act(1, kind="add_action_item", text="nobody", assignee="ff" * 32),
                 act(0, kind="complete_action_item", item_id=99),
                 act(0, kind="complete_action_item", item_id="1"),
                 ("proto_group_member_left", member(2), "left"),
                 act(1, kind="complete_action_item", item_id=8),
                 act(0, kind="transfer_facilitator", public_key=two),
                 act(0, kind="transfer_facilitator", public_key=one),
                 act(0, kind="end_meeting"), act(1, kind="dance"),
                 ("proto_group_member_joined", member(2)),
                 ("proto_group_on_leader_changed", "aa" * 32, "bb" * 32),
                 ("proto_group_restore", [member(1), member(2)], 1),
                 act(1, kind="end_meeting")]
        final = self.play(steps)
        self.assertTrue(final["ended"])
        self.assertEqual(final["vote_history"][0]["counts"], [1, 1, 0])

    def test_random_actions_agree(self):
        rng = random.Random(20)
        kinds = ["add_agenda", "advance_agenda", "request_to_speak", "yield_speaker", "open_vote",
                 "cast_vote", "close_vote", "add_action_item", "complete_action_item"]
        steps = []
        for _ in range(300):
            kind = rng.choice(kinds)
            fields = {"text": rng.choice(["t", " ", "x" * 600]), "question": "q",
                      "choices": ["a", "b", "c"][:rng.randint(1, 3)], "choice": rng.randint(-1, 3),
                      "item_id": rng.randint(0, 30)}
            steps.append(act(rng.randint(0, 2), kind=kind, **fields))
        self.play(steps)


class MeetingBounds(unittest.TestCase):
    def test_action_items_and_votes_are_capped(self):
        meeting = loaded(WELL_KNOWN / "meeting-room-v1", self, {})
        state = meeting.proto_group_initial_state([member(0), member(1)])
        for _ in range(200):
            state = meeting.proto_group_handle(state, member(1), {"kind": "add_action_item", "text": "t"})["state"]
        with self.assertRaisesRegex(ValueError, "200 action items"):
            meeting.proto_group_handle(state, member(1), {"kind": "add_action_item", "text": "t"})
        for _ in range(50):
            state = meeting.proto_group_handle(state, member(0), {"kind": "open_vote", "question": "q",
                                                                    "choices": ["a", "b"]})["state"]
            state = meeting.proto_group_handle(state, member(0), {"kind": "close_vote"})["state"]
        with self.assertRaisesRegex(ValueError, "50 votes"):
            meeting.proto_group_handle(state, member(0), {"kind": "open_vote", "question": "q",
                                                          "choices": ["a", "b"]})


class PollRoom(unittest.TestCase):
    def setUp(self):
        self.room = loaded(harness.OUR_PROTOCOLS / "poll-room", self, {"polls": 2})
        self.state = self.room.proto_group_initial_state([member(0), member(1), member(2)])

    def do(self, seat, **action):
        result = self.room.proto_group_handle(self.state, member(seat), action)
        self.state = result["state"]
        return result

    def test_only_the_chair_asks_and_a_poll_closes_when_all_present_voted(self):
        with self.assertRaisesRegex(ValueError, "only the chair"):
            self.do(1, kind="ask", question="q", choices=["a", "b"])
        with self.assertRaisesRegex(ValueError, "no poll is open"):
            self.do(1, kind="vote", choice=0)
        self.do(0, kind="ask", question=" Lunch? ", choices=["pizza", "soup"])
        with self.assertRaisesRegex(ValueError, "already open"):
            self.do(0, kind="ask", question="q", choices=["a", "b"])
        for bad in (2, -1, True, "0"):
            with self.assertRaisesRegex(ValueError, "choice must be an index"):
                self.do(1, kind="vote", choice=bad)
        self.do(1, kind="vote", choice=1)
        self.do(1, kind="vote", choice=0)
        view = self.room.proto_group_view(self.state, member(1))
        self.assertEqual((view["poll"]["my_choice"], view["poll"]["ballot_count"],
                          view["poll"]["waiting_for"]), (0, 1, [0, 2]))
        self.assertNotIn("ballots", view["poll"])
        self.do(2, kind="vote", choice=1)
        result = self.do(0, kind="vote", choice=1)
        self.assertEqual(self.state["results"][0]["counts"], [1, 2])
        self.assertEqual(self.state["results"][0]["winner"], "soup")
        self.assertEqual(self.state["results"][0]["question"], "Lunch?")
        self.assertFalse(result.get("completed"))

    def test_a_chair_who_leaves_is_replaced_and_the_last_poll_ends_the_room(self):
        self.do(0, kind="ask", question="q", choices=["a", "b"])
        self.do(1, kind="vote", choice=0)
        self.do(2, kind="vote", choice=1)
        left = self.room.proto_group_member_left(self.state, member(0), "left")
        self.state = left["state"]
        self.assertEqual(self.state["results"][0]["counts"], [1, 1], "closed when seat 0 left")
        self.assertEqual(self.state["results"][0]["winner"], "a", "a tie goes to the earlier choice")
        self.assertTrue(self.room.proto_group_view(self.state, member(1))["you"]["is_chair"])
        self.do(1, kind="ask", question="second", choices=["a", "b"])
        self.do(1, kind="vote", choice=1)
        result = self.do(1, kind="close")
        self.assertTrue(result["completed"])
        self.assertEqual(result["outcome"], "2 polls decided")
        self.assertEqual(self.state["results"][1]["voters"], 1)
