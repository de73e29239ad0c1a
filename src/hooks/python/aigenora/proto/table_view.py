"""A four-seat table as a person sees it: the small display model a member's controller draws in
the browser and prints in the terminal, the same for every game (an extension beyond the
reference SDK's API, stdlib only). A table's `proto_group_table(view, member, events)` maps its
view to this model with the builders here:

- `title`, `phase` and `turn` (whose turn and what is asked, in words; "" when nobody acts);
- `seats` in turn order, each `{seat, name, you, to_act, facts, cards, hidden}`: public facts as
  `{label, value}` text pairs, the cards this member may see and a count of those it may not;
- `centre`: labelled piles of cards (`{label, cards, text}`: the board, the trick, melds, a note);
- `facts` about the whole table (pot, trump, contract) and `score`, both `{label, value}` pairs;
- `log`: the step's events in words, names for keys.

A card is `{suit, face}`: a playing card's suit (spades, hearts, diamonds, clubs) and face (A K Q
J 10..2), a joker (`joker`, Big or Small), a Mahjong tile (characters, dots or bamboo and its
number; `wind` or `dragon` and its name), or any other named card (`plain`, its name as face and
a `note`) — never a code."""
from __future__ import annotations

STANDARD_SUITS = ("spades", "hearts", "diamonds", "clubs")
TILE_SUITS = ("characters", "dots", "bamboo")
FACE_NAMES = {1: "A", 11: "J", 12: "Q", 13: "K", 14: "A"}
SUIT_SYMBOLS = {"spades": "♠", "hearts": "♥", "diamonds": "♦", "clubs": "♣"}
# A log's most lines from one step, and the most characters of one.
MOST_LOG_LINES = 12
LONGEST_LINE = 160
# The fields that name who did what, first found first; the fields nobody reads; the prefixes
# of a game's event kinds.
ACTORS = ("public_key", "winner", "declarer", "attacker", "owner")
UNSPOKEN = frozenset({"kind", "public_key", "seat", "card_id", "card_ids", "copy", "shape", "strength"})
GAME_PREFIXES = ("holdem_", "bridge_", "upgrade_", "mahjong_")


def card(face: dict) -> dict:
    """One card or tile of a view (the network's face shape) as the display model draws it."""
    suit, rank = face.get("suit"), face.get("rank")
    if suit in STANDARD_SUITS:
        shown = rank if isinstance(rank, str) else FACE_NAMES.get(rank, str(rank))
        return {"suit": suit, "face": shown}
    if suit == "joker":
        big = rank == 17 or any(word in str(rank) + str(face.get("label", "")) for word in ("Big", "Red"))
        return {"suit": "joker", "face": "Big" if big else "Small"}
    if suit in TILE_SUITS:
        return {"suit": suit, "face": str(rank)}
    if suit in ("wind", "dragon"):
        return {"suit": suit, "face": str(face.get("code", "")).title()}
    return {"suit": "plain", "face": str(face.get("name", face.get("label", "?"))), "note": note_of(face)}


def note_of(face: dict) -> str:
    """A named card's numbers in a few words (its cost, power and guard, or its effect)."""
    parts = [f"cost {face['cost']}"] if "cost" in face else []
    if "power" in face:
        parts.append(f"{face['power']}/{face.get('guard', 0)}")
    elif "effect" in face:
        parts.append(str(face["effect"]).replace("_", " ") + (f" {face['amount']}" if face.get("amount") else ""))
    return ", ".join(parts)


def cards(faces: list) -> list[dict]:
    return [card(face) for face in faces]


def card_text(shown: dict) -> str:
    """A drawn card as text: A♠, 10♥, Big joker, 3 bamboo, East wind, or a named card's name."""
    suit, face = shown["suit"], shown["face"]
    if suit in SUIT_SYMBOLS:
        return face + SUIT_SYMBOLS[suit]
    if suit == "plain":
        return face
    return f"{face} {suit}"


def fact(label: str, value) -> dict:
    return {"label": label, "value": str(value)}


def seat(number: int, name: str, *, you: bool, to_act: bool, facts=(), shown=(), hidden: int = 0) -> dict:
    return {"seat": number, "name": name, "you": you, "to_act": to_act, "facts": list(facts),
            "cards": list(shown), "hidden": hidden}


def view_seat(view: dict, key: str, names: dict, facts: list, shown: list | None = None, to_act: bool | None = None) -> dict:
    """The seat of `key` in a four-seat table's view: its name, whether it is this member's and
    whose turn it is (`current_player` unless `to_act` says), the cards shown — this member's
    own hand unless `shown` says otherwise (a hand at showdown, the dummy) — and the rest of
    its hand face down."""
    me = view["you"]["public_key"]
    if shown is None:
        shown = view["my_hand"] if key == me else []
    return seat(view["players"][key]["seat"], names[key], you=key == me,
                to_act=key == view["current_player"] if to_act is None else to_act, facts=facts,
                shown=cards(shown), hidden=view["hand_counts"].get(key, 0) - len(shown))


def pile(label: str, shown=(), text: str = "") -> dict:
    return {"label": label, "cards": list(shown), "text": text}


def table(title: str, phase: str, turn: str, seats: list, *, centre=(), facts=(), score=(), log=()) -> dict:
    return {"title": title, "phase": phase, "turn": turn, "seats": seats, "centre": list(centre),
            "facts": list(facts), "score": list(score), "log": list(log)[:MOST_LOG_LINES]}


def seat_names(view: dict, label=None) -> dict:
    """Each seated key's name: "Seat N" (or what `label(key, player)` says) and its key's start."""
    return {key: f"{label(key, player) if label else 'Seat ' + str(player['seat'])} ({key[:6]})"
            for key, player in view["players"].items()}


def turn_words(view: dict, names: dict, asked: str) -> str:
    """Whose turn it is, and what is asked of it, as a sentence ("" when nobody is to act)."""
    current = view.get("current_player") or ""
    if not current:
        return ""
    if current == view["you"]["public_key"]:
        return f"Your turn: {asked}"
    return f"{names.get(current, 'A seat')} to {asked}"


def narrate(event: dict, names: dict) -> str:
    """One event in words: who (a name for its key), what (its kind, without the game's prefix),
    and its other plain facts; cards drawn as text, keys as names, identifiers left out. An
    event that wraps an action (`{"kind": "holdem_action", "action": {...}}`) reads as the
    action."""
    if isinstance(event.get("action"), dict) and "kind" in event["action"]:
        event = event["action"]
    who = next((names[event[field]] for field in ACTORS
                if isinstance(event.get(field), str) and event[field] in names), "")
    kind = str(event.get("kind", "event"))
    kind = kind.split("_", 1)[1] if kind.startswith(GAME_PREFIXES) else kind
    words = [who] if who else []
    words.append(kind.replace("_", " "))
    for name, value in event.items():
        if name in UNSPOKEN or (who and isinstance(value, str) and names.get(value) == who):
            continue
        said = spoken(value, names)
        if said:
            words.append(f"{name.replace('_', ' ')} {said}")
    line = ", ".join([" ".join(words[:2])] + words[2:])
    return line if len(line) <= LONGEST_LINE else line[:LONGEST_LINE - 1] + "…"


def spoken(value, names: dict) -> str:
    """A value of an event in words ("" for what a person need not read)."""
    if isinstance(value, str):
        return names.get(value, "" if len(value) >= 24 else value.replace("_", " "))
    if isinstance(value, bool) or isinstance(value, (int, float)):
        return str(value)
    if isinstance(value, dict) and "suit" in value:
        return card_text(card(value))
    if isinstance(value, list) and all(isinstance(item, dict) and "suit" in item for item in value):
        return " ".join(card_text(card(item)) for item in value)
    if isinstance(value, dict):
        return "; ".join(f"{names.get(k, k)} {spoken(v, names)}" for k, v in value.items()
                         if not isinstance(v, (dict, list)))
    return ""


def log(events: list, names: dict) -> list[str]:
    return [narrate(event, names) for event in events if isinstance(event, dict)]
