"""Who sits at a room leader's fixed-seat table: the seats whose members are gone (a table's
`state["away"]`, keyed by public key), the events that say so, and the seats a new leader
deals to after a failover; and `StandIns`, for a table whose away seats the leader's automatic
player plays. An extension beyond the reference SDK's API (stdlib only), shared by our
four-seat tables, which decide for themselves what an away seat does."""
from __future__ import annotations


class StandIns:
    """A mixin for a table that plays its away seats itself: while the seat to act
    (`state["current_player"]`) has no member, the table's `stand_in(view, key)` chooses that
    seat's action from the seat's own view and the table's `apply(state, key, action)` takes
    it, until a member is to act or the table completes. The table's state has `players`
    (each with its `seat`) and `away`."""

    def substitute(self, result: dict) -> dict:
        """`result` (a hook's state and events) after the away seats' turns that follow it."""
        state = result["state"]
        events = list(result["events"])
        while not result.get("completed") and state["current_player"] in state["away"] \
                and len(state["away"]) < len(state["players"]):
            key = state["current_player"]
            view = self.proto_group_view(state, {"public_key": key, "seat": state["players"][key]["seat"]})
            result = self.apply(state, key, self.stand_in(view, key))
            state = result["state"]
            events += result["events"]
        return {**result, "events": events}

    def proto_group_member_joined(self, state, member):
        return member_back(state, member)

    def proto_group_member_left(self, state, member, reason):
        events, _ = member_gone(state, member, reason)
        if state["phase"] == "completed":
            return {"state": state, "events": events}
        return self.substitute({"state": state, "events": events})


def member_back(state: dict, member: dict) -> dict:
    """`proto_group_member_joined`: the seat is no longer away."""
    key = member["public_key"]
    if key in state["away"]:
        state["away"].remove(key)
    return {"state": state, "events": [{"kind": "member_rejoined", "public_key": key,
                                        "seat": member["seat"]}]}


def member_gone(state: dict, member: dict, reason) -> tuple[list, bool]:
    """`proto_group_member_left`: the event, and whether the seat has just gone away (it is
    at the table and was not away already), in which case it is now in `state["away"]`."""
    key = member["public_key"]
    events = [{"kind": "member_disconnected", "public_key": key, "reason": str(reason)[:64]}]
    if key not in state["players"] or key in state["away"]:
        return events, False
    state["away"].append(key)
    return events, True


def seats_after_failover(checkpoint: dict, members: list) -> tuple[dict, list]:
    """The seats a new leader deals to (the checkpoint's, with the members present now) and
    those of them whose member has not come back, by public key."""
    present = {m["public_key"]: int(m["seat"]) for m in members if m.get("status") == "active"}
    seats = {**{key: int(seat) for key, seat in checkpoint.get("seats", {}).items()}, **present}
    return seats, sorted(key for key in seats if key not in present)
