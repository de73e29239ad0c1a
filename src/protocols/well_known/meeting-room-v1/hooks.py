"""Meeting Room (the network's meeting-room-v1 contract): a meeting of 2-16 members with an
agenda, a first-come speaking queue, one vote at a time and action items. The facilitator
is a business role (seat 0 at the start, moved only by `transfer_facilitator`), apart from
whichever member happens to lead the room on the network.

Actions, each `{"kind": ...}` with its fields:
- `add_agenda {text}` (anyone, up to `max_agenda_items`); the first item becomes active;
- `advance_agenda` (facilitator): the active item is done, the next one becomes active;
- `request_to_speak` / `yield_speaker` (the active speaker only): the queue moves on;
- `open_vote {question, choices: 2-6 texts}` and `close_vote` (facilitator), `cast_vote
  {choice: index}` (anyone, replaceable while the vote is open); closed votes keep their
  counts in `vote_history`;
- `add_action_item {text, assignee?}` (anyone; the assignee, by default the author, must be
  an active member) and `complete_action_item {item_id}` (facilitator or assignee);
- `transfer_facilitator {public_key}` (facilitator, to an active member);
- `end_meeting` (facilitator) ends the room.
Texts are 1-500 UTF-8 bytes after trimming (choices 1-100) and are kept as data. The contract
sets no limit on action items or votes; ours cap a meeting at 200 and 50, so no member can
grow the state past what a room may hold.

The state keeps the contract's public shape, so a leader running any implementation of the
contract resumes from another's checkpoint. A member's view is the meeting with the open
vote reduced to its counts, how many have voted and the viewer's own choice, plus a `you`
block (key, seat, whether it facilitates).

`proto_group_autoplay` (used by `aigenora protocol test`) holds a three-item meeting: a round
of updates where every member speaks and takes an action item, a decision put to a vote,
and a wrap-up where the action items are completed; then the facilitator ends it."""
from __future__ import annotations

from aigenora.proto.hooks import ProtocolHooks

TEXT_BYTES = 500
CHOICE_BYTES = 100
CHOICES = (2, 6)
# Beyond the contract's own limits, so a room's state stays well inside what a room may hold.
MAX_ACTION_ITEMS = 200
MAX_VOTES = 50
AGENDA = ("Round of updates", "Decision: ship this week?", "Wrap-up")
VOTE = {"question": "Ship this week?", "choices": ["yes", "no", "next week"]}


def bounded_text(value, limit: int, field: str) -> str:
    if not isinstance(value, str):
        raise ValueError(f"{field} must be text")
    text = value.strip()
    if not text or len(text.encode("utf-8")) > limit:
        raise ValueError(f"{field} must be 1-{limit} UTF-8 bytes")
    return text


def whole_number(value, field: str) -> int:
    if not isinstance(value, int) or isinstance(value, bool):
        raise ValueError(f"{field} must be an integer")
    return value


def tally(vote: dict) -> list:
    counts = [0] * len(vote["choices"])
    for choice in vote["ballots"].values():
        counts[choice] += 1
    return counts


def is_active(state, public_key) -> bool:
    entry = state["members"].get(public_key) if isinstance(public_key, str) else None
    return isinstance(entry, dict) and entry.get("status") == "active"


class Hooks(ProtocolHooks):
    SUPPORTED_CONTROL_MODES = ("autonomous", "hybrid", "human")

    def proto_host_metadata(self):
        return ("Meeting Room", "meeting,multiplayer,agenda,vote", "chat",
                {"meeting_title": "Working session", "max_agenda_items": 20})

    # -- the meeting -----------------------------------------------------------------------

    def proto_group_initial_state(self, members):
        first = min(members, key=lambda m: m["seat"])
        return {
            "title": str(self.options.get("meeting_title") or "Working session")[:200],
            "facilitator": first["public_key"],
            "members": {m["public_key"]: {"seat": m["seat"], "status": m.get("status", "active")}
                        for m in members},
            "agenda": [], "active_agenda": -1,
            "speaking_queue": [], "active_speaker": "",
            "vote": None, "vote_history": [],
            "action_items": [], "next_id": 1,
            "ended": False,
        }

    def proto_group_handle(self, state, actor, action):
        kind = action.get("kind")
        handler = getattr(self, f"_do_{kind}", None) if isinstance(kind, str) else None
        if handler is None or kind not in ACTIONS:
            raise ValueError("unsupported meeting action")
        if kind in FACILITATOR_ONLY and actor["public_key"] != state["facilitator"]:
            raise ValueError("this action requires the meeting facilitator")
        events = handler(state, actor, action)
        if kind == "end_meeting":
            return {"state": state, "events": events, "completed": True, "outcome": "ended"}
        return {"state": state, "events": events}

    def _next_id(self, state) -> int:
        state["next_id"] += 1
        return state["next_id"] - 1

    def _do_add_agenda(self, state, actor, action):
        if len(state["agenda"]) >= int(self.options.get("max_agenda_items", 20)):
            raise ValueError("agenda is full")
        item = {"id": self._next_id(state), "text": bounded_text(action.get("text"), TEXT_BYTES, "text"),
                "created_by": actor["public_key"], "status": "pending"}
        state["agenda"].append(item)
        if state["active_agenda"] < 0:
            state["active_agenda"] = 0
            item["status"] = "active"
        return [{"kind": "agenda_added", "item": item}]

    def _do_advance_agenda(self, state, actor, action):
        agenda, current = state["agenda"], state["active_agenda"]
        if 0 <= current < len(agenda):
            agenda[current]["status"] = "done"
        following = current + 1
        state["active_agenda"] = following if following < len(agenda) else -1
        if state["active_agenda"] >= 0:
            agenda[following]["status"] = "active"
        return [{"kind": "agenda_advanced", "active_agenda": state["active_agenda"]}]

    def _do_request_to_speak(self, state, actor, action):
        key = actor["public_key"]
        if key != state["active_speaker"] and key not in state["speaking_queue"]:
            state["speaking_queue"].append(key)
        self._next_speaker(state)
        return [{"kind": "speaking_queue_changed", "active_speaker": state["active_speaker"],
                 "queue": state["speaking_queue"]}]

    def _do_yield_speaker(self, state, actor, action):
        if state["active_speaker"] != actor["public_key"]:
            raise ValueError("only the active speaker can yield")
        state["active_speaker"] = ""
        self._next_speaker(state)
        return [{"kind": "speaker_yielded", "active_speaker": state["active_speaker"]}]

    def _do_open_vote(self, state, actor, action):
        if state["vote"] is not None:
            raise ValueError("a vote is already open")
        if len(state["vote_history"]) >= MAX_VOTES:
            raise ValueError(f"this meeting has held its {MAX_VOTES} votes")
        question = bounded_text(action.get("question"), TEXT_BYTES, "question")
        choices = action.get("choices")
        if not isinstance(choices, list) or not CHOICES[0] <= len(choices) <= CHOICES[1]:
            raise ValueError(f"choices must contain {CHOICES[0]}-{CHOICES[1]} items")
        state["vote"] = {"id": self._next_id(state), "question": question,
                         "choices": [bounded_text(c, CHOICE_BYTES, "choice") for c in choices],
                         "ballots": {}, "status": "open"}
        return [{"kind": "vote_opened", "vote": state["vote"]}]

    def _do_cast_vote(self, state, actor, action):
        vote = state["vote"]
        if not isinstance(vote, dict) or vote.get("status") != "open":
            raise ValueError("no vote is open")
        choice = action.get("choice")
        if not isinstance(choice, int) or isinstance(choice, bool) \
                or not 0 <= choice < len(vote["choices"]):
            raise ValueError("choice is out of range")
        vote["ballots"][actor["public_key"]] = choice
        return [{"kind": "vote_cast", "public_key": actor["public_key"], "choice": choice}]

    def _do_close_vote(self, state, actor, action):
        vote = state["vote"]
        if not isinstance(vote, dict):
            raise ValueError("no vote is open")
        closed = dict(vote, status="closed", counts=tally(vote))
        state["vote_history"].append(closed)
        state["vote"] = None
        return [{"kind": "vote_closed", "vote": closed}]

    def _do_add_action_item(self, state, actor, action):
        text = bounded_text(action.get("text"), TEXT_BYTES, "text")
        if len(state["action_items"]) >= MAX_ACTION_ITEMS:
            raise ValueError(f"the meeting already has {MAX_ACTION_ITEMS} action items")
        assignee = action.get("assignee") or actor["public_key"]
        if not is_active(state, assignee):
            raise ValueError("assignee must be a member public key")
        item = {"id": self._next_id(state), "text": text, "assignee": assignee,
                "created_by": actor["public_key"], "done": False}
        state["action_items"].append(item)
        return [{"kind": "action_item_added", "item": item}]

    def _do_complete_action_item(self, state, actor, action):
        wanted = whole_number(action.get("item_id"), "item_id")
        item = next((i for i in state["action_items"] if i["id"] == wanted), None)
        if item is None:
            raise ValueError("item does not exist")
        if actor["public_key"] not in (state["facilitator"], item["assignee"]):
            raise ValueError("only the facilitator or assignee can complete it")
        item["done"] = True
        return [{"kind": "action_item_completed", "item_id": item["id"]}]

    def _do_transfer_facilitator(self, state, actor, action):
        target = action.get("public_key")
        if not is_active(state, target):
            raise ValueError("public_key must identify an active member")
        state["facilitator"] = target
        return [{"kind": "facilitator_transferred", "public_key": target}]

    def _do_end_meeting(self, state, actor, action):
        state["ended"] = True
        return [{"kind": "meeting_ended"}]

    def _next_speaker(self, state) -> None:
        if not state["active_speaker"] and state["speaking_queue"]:
            state["active_speaker"] = state["speaking_queue"].pop(0)

    # -- members and leaders ---------------------------------------------------------------

    def proto_group_member_joined(self, state, member):
        state["members"][member["public_key"]] = {"seat": member["seat"], "status": "active"}
        return {"state": state, "events": [
            {"kind": "member_joined", "public_key": member["public_key"], "seat": member["seat"]}]}

    def proto_group_member_left(self, state, member, reason):
        key = member["public_key"]
        state["members"].setdefault(key, {"seat": member["seat"]})["status"] = "left"
        state["speaking_queue"] = [k for k in state["speaking_queue"] if k != key]
        if state["active_speaker"] == key:
            state["active_speaker"] = ""
            self._next_speaker(state)
        return {"state": state, "events": [
            {"kind": "member_left", "public_key": key, "reason": str(reason)[:64]}]}

    def proto_group_on_leader_changed(self, state, old_leader, new_leader):
        return {"state": state, "events": [
            {"kind": "network_leader_changed", "old_leader": old_leader,
             "new_leader": new_leader, "facilitator": state["facilitator"]}]}

    def proto_group_view(self, state, viewer):
        view = {key: state[key] for key in SHARED}
        vote = state["vote"]
        view["vote"] = None if not isinstance(vote, dict) else {
            "id": vote["id"], "question": vote["question"], "choices": vote["choices"],
            "counts": tally(vote), "ballot_count": len(vote["ballots"]),
            "my_choice": vote["ballots"].get(viewer["public_key"]), "status": vote["status"],
        }
        view["you"] = {"public_key": viewer["public_key"], "seat": viewer["seat"],
                       "is_facilitator": viewer["public_key"] == state["facilitator"]}
        return view

    def proto_group_recovery_snapshot(self, state):
        return state

    def proto_group_restore(self, checkpoint, members, new_epoch):
        return checkpoint

    # -- protocol test ---------------------------------------------------------------------

    def proto_group_autoplay(self, view, member):
        if view["ended"]:
            return None
        me = view["you"]["public_key"]
        if view["active_speaker"] == me:
            return self._while_speaking(view, me)
        if view["you"]["is_facilitator"]:
            chosen = self._facilitate(view)
            if chosen is not None:
                return chosen
        return self._take_part(view, me, member["seat"])

    def _while_speaking(self, view, me):
        if not any(item["created_by"] == me for item in view["action_items"]):
            return {"kind": "add_action_item", "text": f"Follow up on the update of {me[:8]}"}
        return {"kind": "yield_speaker"}

    def _facilitate(self, view):
        agenda, current = view["agenda"], view["active_agenda"]
        if len(agenda) < len(AGENDA):
            return {"kind": "add_agenda", "text": AGENDA[len(agenda)]}
        if current < 0:
            return {"kind": "end_meeting"}
        present = [k for k, m in view["members"].items() if m.get("status") == "active"]
        vote = view["vote"]
        if current == 0 and not view["speaking_queue"] and not view["active_speaker"] \
                and all(any(i["created_by"] == k for i in view["action_items"]) for k in present):
            return {"kind": "advance_agenda"}
        if current == 1 and vote is None and not view["vote_history"]:
            return dict(VOTE, kind="open_vote")
        if current == 1 and vote is not None and vote["ballot_count"] >= len(present):
            return {"kind": "close_vote"}
        if current == 1 and vote is None:
            return {"kind": "advance_agenda"}
        stranded = [i for i in view["action_items"] if not i["done"] and i["assignee"] not in present]
        if current == 2 and stranded:
            return {"kind": "complete_action_item", "item_id": stranded[0]["id"]}
        if current == 2 and all(i["done"] for i in view["action_items"]):
            return {"kind": "advance_agenda"}
        return None

    def _take_part(self, view, me, seat):
        current = view["active_agenda"]
        if current == 0 and me not in view["speaking_queue"] \
                and not any(i["created_by"] == me for i in view["action_items"]):
            return {"kind": "request_to_speak"}
        vote = view["vote"]
        if current == 1 and vote is not None and vote["my_choice"] is None:
            return {"kind": "cast_vote", "choice": seat % len(vote["choices"])}
        mine = [i for i in view["action_items"] if i["assignee"] == me and not i["done"]]
        if current == 2 and mine:
            return {"kind": "complete_action_item", "item_id": mine[0]["id"]}
        return None


ACTIONS = ("add_agenda", "advance_agenda", "request_to_speak", "yield_speaker", "open_vote",
           "cast_vote", "close_vote", "add_action_item", "complete_action_item",
           "transfer_facilitator", "end_meeting")
FACILITATOR_ONLY = ("advance_agenda", "open_vote", "close_vote", "transfer_facilitator",
                    "end_meeting")
SHARED = ("title", "facilitator", "members", "agenda", "active_agenda", "speaking_queue",
          "active_speaker", "vote_history", "action_items", "ended")
