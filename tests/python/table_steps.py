"""Plays a scripted four-seat table on one implementation's room hooks and reports every step:
whether the action was taken, and then every seat's view. Runs in-process on our hooks, or as
a script (`python table_steps.py JOB.json OUT.json`) under the reference's interpreter on its
hooks, so a test can set the two side by side.

A job: `hooks` (a directory with hooks.py), `options`, `start` (null for a fresh table, else a
checkpoint to restore from) and `steps`, each `{"action": {...}}` for the seat whose turn it is
or `{"seat": n, "action": {...}}` for a given seat. For a trick game, whose deals differ
between the two, `{"card": "lowest"}` in place of the action plays the lowest card the seat
may play to the trick, read from its view (`playable_hand`, `current_trick`), and
`{"card": "unheld"}` a card id in no hand. For a game whose plays list `card_ids`,
`{"cards": "unheld"}` plays a card id in no hand; for a climbing game `{"cards": "lowest"}`
plays the seat's lowest card (by `value`, from `my_hand`) alone; for Upgrade
`{"cards": "follow"}` plays the lowest single card that follows the led effective suit and
`{"cards": "bury"}` buries the first eight cards of the hand; for Mahjong `{"cards": "discard"}`
discards the first tile of the hand."""
from __future__ import annotations

import copy
import json
import sys
import tempfile
from pathlib import Path


def member(seat: int) -> dict:
    return {"member_id": f"m{seat}", "public_key": f"{seat + 10:02x}" * 32, "seat": seat,
            "status": "active"}


MEMBERS = [member(seat) for seat in range(4)]


def play(job: dict) -> list[dict]:
    import driver

    hooks = driver.load_hooks(Path(job["hooks"]))
    hooks.proto_init(job["options"], "host", [], Path(tempfile.mkdtemp(prefix="table-steps-")))
    if job["start"] is None:
        state = hooks.proto_group_initial_state(copy.deepcopy(MEMBERS))
    else:
        state = hooks.proto_group_restore(copy.deepcopy(job["start"]), copy.deepcopy(MEMBERS), 1)
    report = [{"status": "ok", "views": views(hooks, state)}]
    for step in job["steps"]:
        if "seat" in step:
            actor = MEMBERS[step["seat"]]
        else:
            actor = next(m for m in MEMBERS if m["public_key"] == state["current_player"])
        if "action" in step:
            action = step["action"]
        elif "cards" in step:
            action = cards_action(hooks.proto_group_view(copy.deepcopy(state), actor), step["cards"])
        else:
            action = card_action(hooks, state, actor, step["card"])
        try:
            result = hooks.proto_group_handle(copy.deepcopy(state), actor, copy.deepcopy(action))
        except ValueError as refusal:
            report.append({"status": "refused", "reason": str(refusal)})
            continue
        state = result["state"]
        report.append({"status": "ok", "views": views(hooks, state),
                       "completed": bool(result.get("completed"))})
    return report


def card_action(hooks, state, actor: dict, pick: str) -> dict:
    if pick == "unheld":
        return {"kind": "play", "card_id": "not-a-card"}
    view = hooks.proto_group_view(copy.deepcopy(state), actor)
    hand, trick = view["playable_hand"], view["current_trick"]
    led = [card for card in hand if trick and card["suit"] == trick[0]["card"]["suit"]]
    lowest = min(led or hand, key=lambda card: (card["rank"], card["suit"]))
    return {"kind": "play", "card_id": lowest["card_id"]}


def cards_action(view: dict, pick: str) -> dict:
    hand = view["my_hand"]
    if pick == "unheld":
        return {"kind": "play", "card_ids": ["not-a-card"]}
    if pick == "discard":
        return {"kind": "discard", "card_id": hand[0]["card_id"]}
    if pick == "bury":
        return {"kind": "bury", "card_ids": [card["card_id"] for card in hand[:8]]}
    if pick == "lowest":
        return {"kind": "play", "card_ids": [min(hand, key=lambda card: (card["value"], card["suit"]))["card_id"]]}

    def suit(card):  # the effective suit: jokers, the level's rank and the trump suit are trumps
        trump = card["suit"] in ("joker", view["trump_suit"]) or card["rank"] == view["level_rank"]
        return "trump" if trump else card["suit"]

    trick = view["current_trick"]
    led = [card for card in hand if trick and suit(card) == trick[0]["shape"]["suit"]]
    lowest = min(led or hand, key=lambda card: (suit(card) == "trump", card["rank"], card["suit"]))
    return {"kind": "play", "card_ids": [lowest["card_id"]]}


def views(hooks, state) -> list[dict]:
    return [hooks.proto_group_view(copy.deepcopy(state), viewer) for viewer in MEMBERS]


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).parent))
    job = json.loads(Path(sys.argv[1]).read_text("utf-8"))
    Path(sys.argv[2]).write_text(json.dumps(play(job)), "utf-8")
