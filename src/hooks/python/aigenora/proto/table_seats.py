"""Who sits at a room leader's fixed-seat table: the seats whose members are gone (a table's
`state["away"]`, keyed by public key), the events that say so, the seats a new leader deals to
after a failover and the notice of a round it restarts; and `StandIns`, for a table whose away
seats the leader's automatic player plays. An extension beyond the reference SDK's API (stdlib
only), shared by our four-seat tables, which decide for themselves what an away seat does."""
from __future__ import annotations


class StandIns:
    """A mixin for a fixed-seat table (`state["players"]`, each with its `seat`, `state["away"]`,
    a "completed" phase) that plays its away seats itself, so the table always reaches its end:
    while an away seat must act (`away_to_act`), the table's `stand_in(view, key)` chooses that
    seat's action from the seat's own view and the table's `apply(state, key, action)` takes it
    (checked), until a member is to act or the table completes. A table whose seats may act out
    of turn overrides `away_to_act`; it passes each result of its own through `substitute`."""

    def away_to_act(self, state: dict) -> str:
        """An away seat that must act now ("" if none): by default the one whose turn it is."""
        return state["current_player"] if state["current_player"] in state["away"] else ""

    def substitute(self, result: dict) -> dict:
        """`result` (a hook's state and events) after the actions of every away seat that must
        act next, their events added. Nothing is played once every seat is away."""
        events = list(result["events"])
        while not result.get("completed") and len(result["state"]["away"]) < len(result["state"]["players"]) \
                and (key := self.away_to_act(result["state"])):
            state = result["state"]
            view = self.proto_group_view(state, {"public_key": key, "seat": state["players"][key]["seat"]})
            result = self.apply(state, key, self.stand_in(view, key))
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


def leader_changed(state: dict, old_leader: str, new_leader: str, *, redone: str, kind: str,
                   counter: str) -> dict:
    """`proto_group_on_leader_changed` for a table that restarts its round: the notice every
    seat reads (`redone` says what became of the round) and the event `kind`, naming the
    round by the state's `counter` (e.g. hand_number)."""
    state["recovery_notice"] = f"Leader changed from {old_leader[:8]} to {new_leader[:8]}; {redone}."
    return {"state": state, "events": [{"kind": kind, "old_leader": old_leader, "new_leader": new_leader,
                                        counter: state[counter]}]}


def seats_after_failover(checkpoint: dict, members: list) -> tuple[dict, list]:
    """The seats a new leader deals to (the checkpoint's, with the members present now) and
    those of them whose member has not come back, by public key."""
    present = {m["public_key"]: int(m["seat"]) for m in members if m.get("status") == "active"}
    seats = {**{key: int(seat) for key, seat in checkpoint.get("seats", {}).items()}, **present}
    return seats, sorted(key for key in seats if key not in present)
