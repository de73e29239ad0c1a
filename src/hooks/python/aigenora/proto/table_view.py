"""A four-seat table as a person sees it: the small display model a member's controller draws in
the browser and prints in the terminal, the same for every game (an extension beyond the
reference SDK's API, stdlib only). A table's `proto_group_table(view, member, events)` maps its
view to this model with the builders here:

- `title`, `phase` and `turn` (whose turn and what is asked, in words; "" when nobody acts);
- `seats` in turn order, each `{seat, name, you, to_act, facts, cards, hidden}`: public facts as
  `{label, value}` text pairs, the cards this member may see and a count of those it may not;
- `centre`: labelled piles of cards (`{label, cards, text}`: the board, the trick, melds, a note);
- `facts` about the whole table (pot, trump, contract) and `score`, both `{label, value}` pairs;
- `log`: the step's events in words, one sentence each (`narrate`, `SENTENCES`), names for keys.

A card is `{suit, face}`: a playing card's suit (spades, hearts, diamonds, clubs) and face (A K Q
J 10..2), a joker (`joker`, Big or Small), a Mahjong tile (characters, dots or bamboo and its
number; `wind` or `dragon` and its name), or any other named card (`plain`, its name as face and
a `note`) — never a code."""
from __future__ import annotations

from aigenora.proto.fair_deal import SEED_TIMEOUT

STANDARD_SUITS = ("spades", "hearts", "diamonds", "clubs")
TILE_SUITS = ("characters", "dots", "bamboo")
FACE_NAMES = {1: "A", 11: "J", 12: "Q", 13: "K", 14: "A"}
SUIT_SYMBOLS = {"spades": "♠", "hearts": "♥", "diamonds": "♦", "clubs": "♣"}
# A log's most lines from one step, and the most characters of one.
MOST_LOG_LINES = 12
LONGEST_LINE = 240
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


def log(events: list, names: dict) -> list[str]:
    """The step's events in words, one sentence each (`narrate`)."""
    return [narrate(event, names) for event in events if isinstance(event, dict)]


def narrate(event: dict, names: dict) -> str:
    """One event in words: its kind's sentence (`SENTENCES`), seats by name and cards by face;
    a kind without one reads as who did what and its plain facts. An event that wraps an
    action (`{"kind": "holdem_action", "action": {...}}`) reads as the action."""
    if isinstance(event.get("action"), dict) and "kind" in event["action"]:
        event = event["action"]
    told = Told(event, names)
    kind = str(event.get("kind", ""))
    sentence = SENTENCES.get(kind) or (restarted if kind.endswith(RESTARTED) else plainly)
    line = sentence(told)
    line = line[:1].upper() + line[1:] + ("" if line.endswith((".", "!", "…")) else ".")
    return line if len(line) <= LONGEST_LINE else line[:LONGEST_LINE - 1] + "…"


def has_sentence(kind: str) -> bool:
    """Whether events of `kind` have a sentence of their own (not the plain fallback)."""
    return kind in SENTENCES or kind.endswith(RESTARTED)


class Told:
    """An event's parts in words: seats by name, cards by face, numbers and plain words."""

    def __init__(self, event: dict, names: dict):
        self.event, self.names = event, names

    @property
    def who(self) -> str:
        """The seat the event is about (its first actor field), or "a seat"."""
        return next((self.names[self.event[field]] for field in ACTORS
                     if isinstance(self.event.get(field), str) and self.event[field] in self.names), "a seat")

    def name(self, field: str) -> str:
        value = self.event.get(field)
        return self.names.get(value, "a seat") if isinstance(value, str) else "a seat"

    def number(self, field: str) -> str:
        value = self.event.get(field)
        return str(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else "?"

    def text(self, field: str) -> str:
        return words(self.event.get(field))

    def card(self, field: str = "card") -> str:
        face = self.event.get(field)
        return card_text(card(face)) if isinstance(face, dict) else "a card"

    def cards(self, field: str = "cards") -> str:
        return faces_text(self.event.get(field))

    def by_seat(self, field: str, signed: bool = False) -> str:
        """A {key: number} field as "Seat 0 (aaaaaa) 8, Seat 1 (bbbbbb) -24" (+8 when signed)."""
        values = self.event.get(field)
        if not isinstance(values, dict):
            return ""
        def amount(value) -> str:
            return f"{value:+}" if signed and isinstance(value, int) else words(value)
        return ", ".join(f"{self.names.get(key, words(key))} {amount(value)}" for key, value in values.items())

    def seats(self, field: str) -> str:
        keys = self.event.get(field)
        return " and ".join(self.names.get(key, "a seat") for key in keys) if isinstance(keys, list) else ""


def words(value) -> str:
    """A plain value in words: text without underscores (a long identifier left out), a number."""
    if isinstance(value, str):
        return "" if len(value) >= 24 else value.replace("_", " ")
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return str(value)
    return ""


def faces_text(faces) -> str:
    shown = [card_text(card(face)) for face in faces if isinstance(face, dict)] if isinstance(faces, list) else []
    return " ".join(shown) or "no cards"


def plainly(told: Told) -> str:
    """An event of a kind without a sentence: who, what, and its plain facts."""
    event, names = told.event, told.names
    who = next((names[event[field]] for field in ACTORS
                if isinstance(event.get(field), str) and event[field] in names), "")
    kind = str(event.get("kind", "event"))
    kind = kind.split("_", 1)[1] if kind.startswith(GAME_PREFIXES) else kind
    said = [f"{name.replace('_', ' ')} {spoken(value, names)}" for name, value in event.items()
            if name not in UNSPOKEN and not (who and isinstance(value, str) and names.get(value) == who)
            and spoken(value, names)]
    return ", ".join([" ".join(filter(None, [who, kind.replace("_", " ")]))] + said)


def spoken(value, names: dict) -> str:
    """A value of an event in words ("" for what a person need not read)."""
    if isinstance(value, str):
        return names.get(value) or words(value)
    if isinstance(value, dict) and "suit" in value:
        return card_text(card(value))
    if isinstance(value, list) and value and all(isinstance(item, dict) and "suit" in item for item in value):
        return faces_text(value)
    if isinstance(value, dict):
        return ", ".join(f"{names.get(k) or words(k)} {words(v)}" for k, v in value.items() if words(v))
    return words(value)


# -- the sentences -----------------------------------------------------------------------------

RESTARTED = "_restarted_after_leader_change"
DENOMINATIONS = {"clubs": "♣", "diamonds": "♦", "hearts": "♥", "spades": "♠", "nt": "NT"}
DOUBLED = {1: " doubled", 2: " redoubled"}


def restarted(told: Told) -> str:
    """A leader change that starts the round again (`hand_restarted_after_leader_change`...)."""
    kind = str(told.event.get("kind", ""))
    counted = kind[:-len(RESTARTED)].rsplit("_", 1)[-1]
    return (f"the leader changed from {told.name('old_leader')} to {told.name('new_leader')}; "
            f"the {counted} starts again")


def bid(told: Told) -> str:
    """A Bridge bid (a level and a denomination) or a Landlord bid (a value; 0 declines)."""
    if "level" in told.event:
        denomination = DENOMINATIONS.get(str(told.event.get("denomination")), told.text("denomination"))
        return f"{told.who} bids {told.number('level')}{denomination}"
    value = told.event.get("value")
    return f"{told.who} does not bid" if value == 0 else f"{told.who} bids {told.number('value')}"


def played(shaped: str):
    """A play of cards, with what they make (the event's `shaped` field's kind: a pair, a
    tractor, a triple pair...)."""
    def said(told: Told) -> str:
        shape = told.event.get(shaped)
        made = words(shape.get("kind")) if isinstance(shape, dict) else ""
        return f"{told.who} plays {told.cards()}" + (f" ({made})" if made else "")
    return said


def contract(told: Told) -> str:
    held = told.event.get("contract")
    held = held if isinstance(held, dict) else {}
    denomination = DENOMINATIONS.get(str(held.get("denomination")), words(held.get("denomination")))
    return (f"the contract is {words(held.get('level'))}{denomination}{DOUBLED.get(held.get('doubled'), '')} "
            f"by {told.name('declarer')}; {told.name('dummy')} is the dummy")


def card_played(told: Told) -> str:
    owner = told.event.get("hand_owner")
    from_dummy = f" from {told.name('hand_owner')}'s hand" if owner and owner != told.event.get("public_key") else ""
    return f"{told.who} plays {told.card()}{from_dummy}"


def board_complete(told: Told) -> str:
    side, _, result = str(told.event.get("outcome", "")).partition("_")
    made = "made the contract" if result == "made" else "went down"
    return (f"the board is over: {side.upper()} {made} with {told.number('tricks')} tricks, "
            f"{told.number('contract_score')} points; scores {told.by_seat('scores').upper()}")


def showdown(told: Told) -> str:
    hands = told.event.get("hands")
    shown = [f"{told.names.get(key, 'a seat')} shows {faces_text(hand.get('cards'))} ({words(hand.get('category'))})"
             for key, hand in (hands.items() if isinstance(hands, dict) else []) if isinstance(hand, dict)]
    pots = told.event.get("pots")
    won = [f"{' and '.join(told.names.get(key, 'a seat') for key in pot.get('winners', []))} "
           f"{'win' if len(pot.get('winners', [])) > 1 else 'wins'} {words(pot.get('amount'))}"
           for pot in (pots if isinstance(pots, list) else []) if isinstance(pot, dict)]
    return "showdown: " + "; ".join(shown + won)


def game_over(told: Told) -> str:
    """Landlord's round (the winning side and each seat's score) or Aether Sigil's game."""
    if "outcome" in told.event:
        return f"the round is over: the {told.text('outcome')} win; scores {told.by_seat('score_delta', signed=True)}"
    return f"the game is over: {told.name('winner')} wins; life {told.by_seat('life')}"


def mahjong_win(how: str):
    def said(told: Told) -> str:
        patterns = told.event.get("patterns")
        named = ", ".join(words(pattern.get("code")) for pattern in patterns if isinstance(pattern, dict)) \
            if isinstance(patterns, list) else ""
        return (f"{told.name('winner')} wins {how.format(discarder=told.name('discarder'))} for "
                f"{told.number('points')} points ({named}); scores {told.by_seat('score_delta', signed=True)}")
    return said


def meld(what: str):
    return lambda told: f"{told.who} {what} {told.cards()} from {told.name('from')}'s discard"


def claim_resolved(told: Told) -> str:
    if told.event.get("claim") == "none":
        return "nobody claims the discard"
    return f"{told.name('winner')} takes the discard ({told.text('claim')})"


def seat_away(told: Told) -> str:
    if told.event.get("reason") == SEED_TIMEOUT:
        return f"{told.who} is away: its seed for the deal did not come in time"
    return f"{told.who} is away ({told.text('reason') or 'gone'}); the table plays its seat"


SENTENCES = {
    # a seat coming and going, and deals nobody can stack (every table)
    "member_disconnected": seat_away,
    "member_rejoined": lambda t: f"{t.who} is back at the table",
    "fair_deal_seed_added": lambda t: f"{t.who} added its seed to the deal",
    "fair_deal_dealt": lambda t: (f"the cards are dealt from the leader's committed seed and "
                                  f"{len(t.event.get('contributions') or {})} seats' seeds"),
    # Texas Hold'em (an action's amount is what the seat has in on this street)
    "holdem_hand_started": lambda t: f"hand {t.number('hand_number')} begins; {t.name('button')} has the button",
    "fold": lambda t: f"{t.who} folds",
    "check": lambda t: f"{t.who} checks",
    "call": lambda t: f"{t.who} calls, {t.number('amount')} in on the {t.text('street')}",
    "bet": lambda t: f"{t.who} bets {t.number('amount')} on the {t.text('street')}",
    "raise": lambda t: f"{t.who} raises to {t.number('amount')} on the {t.text('street')}",
    "all_in": lambda t: f"{t.who} goes all in, {t.number('amount')} in on the {t.text('street')}",
    "holdem_street": lambda t: f"the {t.text('street')}: {t.cards()}",
    "holdem_uncontested": lambda t: f"{t.name('winner')} wins {t.number('amount')}: everyone else folded",
    "holdem_showdown": showdown,
    "holdem_match_complete": lambda t: f"the match is over: {t.name('winner')} wins; stacks {t.by_seat('stacks')}",
    # Contract Bridge
    "pass": lambda t: f"{t.who} passes",
    "bid": bid,
    "double": lambda t: f"{t.who} doubles",
    "redouble": lambda t: f"{t.who} redoubles",
    "contract_set": contract,
    "board_passed_out": lambda t: "all four passed: the board is passed out",
    "bridge_card_played": card_played,
    "dummy_revealed": lambda t: f"{t.name('dummy')}, the dummy, lays its hand down",
    "bridge_trick_won": lambda t: (f"{t.name('winner')} wins trick {t.number('trick_number')} "
                                   f"for {t.text('partnership').upper()}"),
    "bridge_board_complete": board_complete,
    # Four-player Landlord
    "landlord_selected": lambda t: (f"{t.who} is the landlord with a bid of {t.number('bid')} "
                                    f"and takes the bottom cards {t.cards('bottom')}"),
    "all_passed_redeal": lambda t: f"nobody bid: round {t.number('round_number')} is dealt again",
    "play": played("combination"),
    "trick_reset": lambda t: f"everyone else passed: {t.who} leads again",
    "game_over": game_over,
    # Upgrade (Tractor)
    "upgrade_hand_started": lambda t: f"hand {t.number('hand_number')} begins; {t.name('starter')} starts",
    "declare_trump": lambda t: f"{t.who} declares {t.text('trump_suit') or 'no'} trump with {t.cards()}",
    "pass_declare": lambda t: f"{t.who} does not declare trump",
    "upgrade_declarer_selected": lambda t: (f"{t.name('declarer')} is the declarer, for {t.text('declarer_team')}; "
                                            f"{t.text('trump_suit') or 'no suit'} trump, level {t.number('level_rank')}"),
    "upgrade_kitty_buried": lambda t: f"{t.name('declarer')} buries {t.number('count')} cards in the kitty",
    "upgrade_play": played("shape"),
    "upgrade_trick_won": lambda t: (f"{t.name('winner')} wins trick {t.number('trick_number')} for "
                                    f"{t.text('team')} with {t.number('points')} points"),
    "upgrade_hand_complete": lambda t: (f"the hand is over: the defenders took {t.number('defender_points')} points "
                                        f"(kitty {t.number('kitty_points')} × {t.number('kitty_multiplier')}); "
                                        f"{t.text('controlling_team')} leads now; levels {t.by_seat('levels')}"),
    "upgrade_match_complete": lambda t: f"the match is over: {t.text('winner')} wins; levels {t.by_seat('levels')}",
    # Aether Sigil
    "turn_started": lambda t: f"{t.who}'s turn begins",
    "card_drawn": lambda t: f"{t.who} draws a card",
    "fatigue": lambda t: f"{t.who} has no card to draw and takes {t.number('amount')} fatigue damage",
    "units_readied": lambda t: f"{t.who}'s units are ready",
    "unit_summoned": lambda t: f"{t.who} summons {t.card()}",
    "spell_cast": lambda t: f"{t.who} casts {t.card()}",
    "relic_played": lambda t: f"{t.who} plays the relic {t.card()}",
    "spell_damage": lambda t: f"{t.name('target')} takes {t.number('amount')} damage from the spell",
    "shield_gained": lambda t: f"{t.who} gains {t.number('amount')} shield",
    "healed": lambda t: f"{t.who} heals {t.number('amount')} life",
    "relic_heal": lambda t: f"{t.who}'s relic heals {t.number('amount')} life",
    "direct_attack": lambda t: f"a unit attacks {t.name('target')} directly for {t.number('amount')}",
    "unit_combat": lambda t: f"two units fight, {t.number('attack_power')} against {t.number('counter_power')}",
    "unit_destroyed": lambda t: "a unit is destroyed",
    "unit_dissolved": lambda t: f"a unit of {t.who} dissolves",
    "conceded": lambda t: f"{t.who} concedes",
    # Classical Mahjong
    "mahjong_hand_started": lambda t: f"hand {t.number('hand_number')} begins; {t.name('dealer')} deals",
    "mahjong_draw": lambda t: f"{t.who} draws a tile",
    "replacement_draw": lambda t: f"{t.who} draws a replacement tile",
    "mahjong_discard": lambda t: f"{t.who} discards {t.card()}",
    "claim_response_received": lambda t: f"{t.who} answered the discard ({t.number('response_count')} of 3)",
    "claim_resolved": claim_resolved,
    "chow": meld("chows"),
    "pung": meld("pungs"),
    "kong": meld("kongs"),
    "concealed_kong": lambda t: f"{t.who} sets aside a concealed kong of {t.cards()}",
    "self_draw": mahjong_win("on a tile it drew"),
    "discard_win": mahjong_win("on {discarder}'s discard"),
    "mahjong_wall_exhausted": lambda t: "the wall is exhausted: nobody wins the hand",
    "mahjong_match_complete": lambda t: (f"the match is over: {t.seats('winners')} "
                                         f"{'win' if len(t.event.get('winners') or []) > 1 else 'wins'}; "
                                         f"scores {t.by_seat('scores')}"),
}
