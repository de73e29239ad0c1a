"""Community Room (the network's community-room-v1 contract): a chat room of 2-32 members
whose leader gives every line one global order.

Actions: `{"kind": "send", "text"}` (1-2000 UTF-8 bytes, trimmed), `{"kind": "set_topic",
"topic"}` (1-200 bytes) and `{"kind": "close_room"}`, which only the owner at seat 0 may
take and which ends the room. The timeline keeps the newest `history_limit` entries (20-500);
joins, departures, topic changes and a change of leader are noted in it as system entries.
Text is kept and shown as data, never interpreted.

The state keeps the contract's public shape (topic, messages, next_message_id,
history_limit, presence, closed), so a leader running any implementation of the contract can
resume from a checkpoint ours wrote, and ours from theirs. Every member's view is the room
plus a `you` block naming its own key and seat.

`proto_group_autoplay` (used by `aigenora protocol test`) keeps a short conversation going:
the owner opens by setting the topic, every member greets the room the first time it speaks
and then adds numbered notes in turn, and the owner closes the room once the timeline has
reached `CLOSE_AFTER` entries."""
from __future__ import annotations

from aigenora.proto.hooks import ProtocolHooks

TEXT_BYTES = 2000
TOPIC_BYTES = 200
HISTORY_BOUNDS = (20, 500)
OWNER_SEAT = 0
CLOSE_AFTER = 24
AUTOPLAY_TOPIC = "Notes from the automatic members"


def bounded_text(value, limit: int, field: str) -> str:
    """The trimmed text of an action's field, or a refusal naming the field."""
    if not isinstance(value, str):
        raise ValueError(f"{field} must be text")
    text = value.strip()
    if not text or len(text.encode("utf-8")) > limit:
        raise ValueError(f"{field} must be 1-{limit} UTF-8 bytes")
    return text


class Hooks(ProtocolHooks):
    SUPPORTED_CONTROL_MODES = ("autonomous", "hybrid", "human")

    def proto_host_metadata(self):
        return ("Community Room", "chat,multiplayer,community-room", "chat",
                {"history_limit": 200, "initial_topic": "Community room"})

    # -- the room --------------------------------------------------------------------------

    def proto_group_initial_state(self, members):
        limit = int(self.options.get("history_limit", 200))
        return {
            "topic": str(self.options.get("initial_topic") or "Community room")[:TOPIC_BYTES],
            "messages": [],
            "next_message_id": 1,
            "history_limit": min(max(limit, HISTORY_BOUNDS[0]), HISTORY_BOUNDS[1]),
            "presence": {m["public_key"]: {"seat": m["seat"], "status": "online"} for m in members},
            "closed": False,
        }

    def proto_group_handle(self, state, actor, action):
        handler = {"send": self._send, "set_topic": self._set_topic,
                   "close_room": self._close}.get(action.get("kind"))
        if handler is None:
            raise ValueError("kind must be send, set_topic, or close_room")
        if state["closed"]:
            raise ValueError("the room is closed")
        return handler(state, actor, action)

    def _send(self, state, actor, action):
        text = bounded_text(action.get("text"), TEXT_BYTES, "text")
        entry = self._append(state, "message", text, actor["public_key"], actor["seat"])
        return {"state": state, "events": [{"kind": "message", "message": entry}]}

    def _set_topic(self, state, actor, action):
        state["topic"] = bounded_text(action.get("topic"), TOPIC_BYTES, "topic")
        self._note(state, f"Seat {actor['seat']} changed the topic")
        event = {"kind": "topic_changed", "topic": state["topic"], "seat": actor["seat"]}
        return {"state": state, "events": [event]}

    def _close(self, state, actor, action):
        if actor["seat"] != OWNER_SEAT:
            raise ValueError("only the room owner at seat 0 can close the room")
        state["closed"] = True
        self._note(state, "The room was closed")
        return {"state": state, "events": [{"kind": "room_closed", "seat": actor["seat"]}],
                "completed": True, "outcome": "closed"}

    def proto_group_member_joined(self, state, member):
        state["presence"][member["public_key"]] = {"seat": member["seat"], "status": "online"}
        self._note(state, f"Seat {member['seat']} joined the room")
        event = {"kind": "member_joined", "public_key": member["public_key"], "seat": member["seat"]}
        return {"state": state, "events": [event]}

    def proto_group_member_left(self, state, member, reason):
        entry = state["presence"].setdefault(member["public_key"], {"seat": member["seat"]})
        entry["status"] = "left"
        self._note(state, f"Seat {member['seat']} left the room")
        event = {"kind": "member_left", "public_key": member["public_key"],
                 "seat": member["seat"], "reason": str(reason)[:64]}
        return {"state": state, "events": [event]}

    def proto_group_on_leader_changed(self, state, old_leader, new_leader):
        self._note(state, f"Authority moved from {old_leader[:8]} to {new_leader[:8]}")
        event = {"kind": "leader_changed", "old_leader": old_leader, "new_leader": new_leader}
        return {"state": state, "events": [event]}

    def proto_group_view(self, state, viewer):
        return {
            "topic": state["topic"],
            "messages": state["messages"],
            "presence": state["presence"],
            "closed": state["closed"],
            "you": {"public_key": viewer["public_key"], "seat": viewer["seat"]},
        }

    def proto_group_recovery_snapshot(self, state):
        return state

    def proto_group_restore(self, checkpoint, members, new_epoch):
        return checkpoint

    # -- the timeline ----------------------------------------------------------------------

    def _append(self, state, kind: str, text: str, sender: str, seat: int) -> dict:
        entry = {"id": state["next_message_id"], "kind": kind, "from": sender, "seat": seat,
                 "text": text}
        state["next_message_id"] += 1
        state["messages"].append(entry)
        del state["messages"][:-state["history_limit"]]
        return entry

    def _note(self, state, text: str) -> None:
        self._append(state, "system", text, "", -1)

    # -- protocol test ---------------------------------------------------------------------

    def proto_group_autoplay(self, view, member):
        if view["closed"]:
            return None
        me = view["you"]["public_key"]
        messages = view["messages"]
        newest = messages[-1]["id"] if messages else 0
        owner = view["you"]["seat"] == OWNER_SEAT
        if owner and newest >= CLOSE_AFTER:
            return {"kind": "close_room"}
        if owner and view["topic"] != AUTOPLAY_TOPIC:
            return {"kind": "set_topic", "topic": AUTOPLAY_TOPIC}
        mine = sum(1 for m in messages if m["from"] == me)
        if mine == 0:
            return {"kind": "send", "text": f"Hello from seat {member['seat']}"}
        return {"kind": "send", "text": f"Seat {member['seat']}, note {mine}"}
