"""Poll Room hooks for the authoritative_group engine: a room decides `polls` questions by
vote, one at a time, and ends by itself after the last one.

The chair is the member present in the lowest seat (worked out from the state every time,
so a chair who leaves is replaced at once). The chair asks `{"kind": "ask", "question",
"choices": [...]}`; every member present answers `{"kind": "vote", "choice": index}` and may
change its ballot while the poll is open; the poll closes by itself once everyone present
has voted, or when the chair sends `{"kind": "close"}`. A closed poll keeps its counts and
its winner (most votes, a tie to the earlier choice). When the last poll closes the room
completes with the outcome "<n> polls decided".

Each member's view shows the open poll's question, choices, how many have voted, which
seats are still to vote and its own choice, but not the others' ballots (they do travel in
the checkpoints every member keeps: this is a display choice, not secrecy), and every
closed poll in full.

`proto_group_autoplay` (used by `aigenora protocol test`) has the chair ask questions from a
fixed list and every member vote `(seat + poll number) % len(choices)`, so a test room
always reaches the same results."""
from __future__ import annotations

from aigenora.proto.hooks import ProtocolHooks

QUESTION_BYTES = 300
CHOICE_BYTES = 80
CHOICES = (2, 6)
QUESTIONS = (
    ("Where do we meet next?", ["online", "office", "park"]),
    ("Which day suits best?", ["Monday", "Wednesday", "Friday"]),
    ("Keep the same agenda?", ["yes", "no"]),
    ("Who takes notes?", ["the chair", "a volunteer", "everyone"]),
)


def text_field(value, limit: int, field: str) -> str:
    if not isinstance(value, str):
        raise ValueError(f"{field} must be text")
    text = value.strip()
    if not text or len(text.encode("utf-8")) > limit:
        raise ValueError(f"{field} must be 1-{limit} UTF-8 bytes")
    return text


def present(state) -> list:
    """The public keys of the members in the room, by seat."""
    members = state["members"]
    return sorted((k for k, m in members.items() if m["status"] == "active"),
                  key=lambda k: members[k]["seat"])


def chair(state) -> str:
    keys = present(state)
    return keys[0] if keys else ""


class Hooks(ProtocolHooks):
    def proto_host_metadata(self):
        return ("Poll Room", "vote,multiplayer,poll-room", "vote", {"polls": 5})

    def proto_group_initial_state(self, members):
        return {
            "polls_total": int(self.options.get("polls", 5)),
            "members": {m["public_key"]: {"seat": m["seat"], "status": "active"} for m in members},
            "poll": None,
            "results": [],
            "ended": False,
        }

    def proto_group_handle(self, state, actor, action):
        kind = action.get("kind")
        key = actor["public_key"]
        if kind in ("ask", "close") and key != chair(state):
            raise ValueError(f"only the chair (seat {state['members'][chair(state)]['seat']}) may {kind}")
        if kind == "ask":
            return self._ask(state, key, action)
        if kind == "vote":
            return self._vote(state, key, action)
        if kind == "close":
            if state["poll"] is None:
                raise ValueError("no poll is open")
            return self._close(state, [{"kind": "poll_closed_by_chair"}])
        raise ValueError("kind must be ask, vote or close")

    def _ask(self, state, key, action):
        if state["poll"] is not None:
            raise ValueError("a poll is already open")
        choices = action.get("choices")
        if not isinstance(choices, list) or not CHOICES[0] <= len(choices) <= CHOICES[1]:
            raise ValueError(f"choices must be a list of {CHOICES[0]}-{CHOICES[1]} texts")
        state["poll"] = {
            "number": len(state["results"]) + 1,
            "question": text_field(action.get("question"), QUESTION_BYTES, "question"),
            "choices": [text_field(c, CHOICE_BYTES, "choice") for c in choices],
            "ballots": {},
            "asked_by": key,
        }
        event = {k: state["poll"][k] for k in ("number", "question", "choices")}
        return {"state": state, "events": [dict(event, kind="poll_opened")]}

    def _vote(self, state, key, action):
        poll = state["poll"]
        if poll is None:
            raise ValueError("no poll is open")
        choice = action.get("choice")
        if not isinstance(choice, int) or isinstance(choice, bool) \
                or not 0 <= choice < len(poll["choices"]):
            raise ValueError(f"choice must be an index from 0 to {len(poll['choices']) - 1}")
        poll["ballots"][key] = choice
        events = [{"kind": "voted", "seat": state["members"][key]["seat"],
                   "ballots": len(poll["ballots"])}]
        if all(k in poll["ballots"] for k in present(state)):
            return self._close(state, events)
        return {"state": state, "events": events}

    def _close(self, state, events):
        poll = state["poll"]
        counts = [0] * len(poll["choices"])
        for choice in poll["ballots"].values():
            counts[choice] += 1
        winner = counts.index(max(counts))
        result = {"number": poll["number"], "question": poll["question"],
                  "choices": poll["choices"], "counts": counts,
                  "winner": poll["choices"][winner], "voters": len(poll["ballots"])}
        state["results"].append(result)
        state["poll"] = None
        events = events + [dict(result, kind="poll_closed")]
        if len(state["results"]) < state["polls_total"]:
            return {"state": state, "events": events}
        state["ended"] = True
        return {"state": state, "events": events + [{"kind": "room_ended"}], "completed": True,
                "outcome": f"{len(state['results'])} polls decided"}

    # -- members and leaders ---------------------------------------------------------------

    def proto_group_member_joined(self, state, member):
        state["members"][member["public_key"]] = {"seat": member["seat"], "status": "active"}
        return {"state": state, "events": [{"kind": "member_joined", "seat": member["seat"]}]}

    def proto_group_member_left(self, state, member, reason):
        entry = state["members"].setdefault(member["public_key"], {"seat": member["seat"]})
        entry["status"] = "left"
        events = [{"kind": "member_left", "seat": member["seat"], "reason": str(reason)[:64]}]
        poll = state["poll"]
        if poll is not None and present(state) and all(k in poll["ballots"] for k in present(state)):
            return self._close(state, events)
        return {"state": state, "events": events}

    def proto_group_view(self, state, viewer):
        key = viewer["public_key"]
        poll = state["poll"]
        members = state["members"]
        shown = None if poll is None else {
            "number": poll["number"], "question": poll["question"], "choices": poll["choices"],
            "ballot_count": len(poll["ballots"]), "my_choice": poll["ballots"].get(key),
            "waiting_for": [members[k]["seat"] for k in present(state) if k not in poll["ballots"]],
        }
        leading = chair(state)
        return {
            "polls_total": state["polls_total"],
            "polls_left": state["polls_total"] - len(state["results"]),
            "seats": sorted(members[k]["seat"] for k in present(state)),
            "chair_seat": members[leading]["seat"] if leading else -1,
            "poll": shown,
            "results": state["results"],
            "ended": state["ended"],
            "you": {"public_key": key, "seat": viewer["seat"], "is_chair": key == leading},
        }

    # -- protocol test ---------------------------------------------------------------------

    def proto_group_autoplay(self, view, member):
        if view["ended"]:
            return None
        poll = view["poll"]
        if poll is None:
            if not view["you"]["is_chair"]:
                return None
            question, choices = QUESTIONS[(view["polls_total"] - view["polls_left"]) % len(QUESTIONS)]
            return {"kind": "ask", "question": question, "choices": choices}
        if poll["my_choice"] is None:
            return {"kind": "vote", "choice": (member["seat"] + poll["number"]) % len(poll["choices"])}
        return None
