"""Classical Mahjong (the network's classical-mahjong-v1 contract, "Classical Mahjong Core"),
run by a room's leader: 136 tiles (four of each of the 34 faces of `aigenora.proto.tiles`),
thirteen to each of four fixed seats and a fourteenth to the dealer, who discards first.

Actions. On its turn (phase "discard") a seat sends `{"kind": "discard", "card_id": ...}`,
`{"kind": "win"}` (a self-drawn win) or `{"kind": "concealed_kong", "card_ids": [four ids]}`
(four of a face set aside, a replacement tile drawn). After a discard (phase "claim") each of
the other three answers once, in any order: `{"kind": "pass_claim"}`, `{"kind": "win"}`,
`{"kind": "pung", "card_ids": [two]}`, `{"kind": "kong", "card_ids": [three]}` (tiles of the
discard's face) or, from the next seat only, `{"kind": "chow", "card_ids": [two]}` (a run of
three with the discard). Once all three have answered, a win goes first, then a pung or a kong,
then a chow, each to the nearest seat after the discarder; the claimed discard joins the
claimant's meld and it discards next (after a kong, it draws a replacement first). With no
claim the next seat draws. The leader refuses, with its reason, anything out of turn or from a
seat not asked, a second answer, tiles not in the hand or of the wrong face, a chow from any
but the next seat or not making a run, a win the tiles do not make, and a self-drawn win before
discarding after a pung or chow.

A hand ends with a win (its points: the patterns of `tiles.patterns`; a self-draw is paid by
each other seat, a discard by its discarder three times over) or an empty wall (no score). The
match is `max_hands` hands (4 by default), the deal passing round the table, from
`starting_points` each (25000); the highest score wins it ("draw" on a tie).

The wall is shuffled from a seed only the leader holds (`deal_seed` pins it for tests). A
member's view has its own tiles, every river and meld, the last discard, the claim window's
progress, the counts and the scores; never another hand or the wall. Checkpoints keep the hand,
the dealer, the restarts, the scores and the seats, so a new leader deals the hand afresh
(`restart_round`). A seat whose member is gone is played by the leader's automatic player.

`proto_group_autoplay` plays for tile efficiency: it declares a win when it has one, discards
the tile whose loss leaves the hand nearest a win (`tiles.shanten`), isolated honours and
terminals first among equals, and claims a discard (pung, kong or chow) only when that brings
the hand nearer a win."""
from __future__ import annotations

import copy

from aigenora.proto import deck as walls
from aigenora.proto import tiles
from aigenora.proto.hooks import ProtocolHooks
from aigenora.proto.seat_choices import choice
from aigenora.proto.table_seats import StandIns, leader_changed, seats_after_failover
from aigenora.proto.fair_deal import dealing, fair_deals
from aigenora.proto import table_view

SEATS, HAND, COPIES = 4, 13, 4
RIVER, MELDS = "river", "melds"
OPTIONS = {"starting_points": (25000, 0, 100000), "max_hands": (4, 1, 32)}
# What a claim takes from the hand, and the order claims are settled in.
CLAIM_TILES = {"pung": 2, "kong": 3, "chow": 2}
PRIORITY = (("win",), ("pung", "kong"), ("chow",))


@fair_deals
class Hooks(StandIns, ProtocolHooks):
    SUPPORTED_CONTROL_MODES = ("autonomous", "hybrid", "human")

    def proto_host_metadata(self):
        return ("Classical Mahjong Core", "game,tiles,multiplayer,mahjong,shared-deck", "supply", {})

    def option(self, name):
        default, low, high = OPTIONS[name]
        value = self.options.get(name, default)
        if not isinstance(value, int) or isinstance(value, bool) or not low <= value <= high:
            raise ValueError(f"{name} must be between {low} and {high}")
        return value

    # -- the hand ----------------------------------------------------------------------------

    def proto_group_initial_state(self, members):
        seated = [m for m in members if m.get("status") == "active"]
        if len(seated) != SEATS:
            raise ValueError("Classical Mahjong needs exactly four seated members")
        self.option("max_hands")
        seats = {m["public_key"]: int(m["seat"]) for m in seated}
        points = self.option("starting_points")
        return self.deal_hand(seats, [], number=1, dealer=0, restarts=0,
                              scores={key: points for key in sorted(seats, key=seats.get)}, notice="")

    @dealing("number", "restarts")
    def deal_hand(self, seats, away, *, number, dealer, restarts, scores, notice, seed):
        """Thirteen tiles to every seat from seat 0, and the dealer's fourteenth."""
        if sorted(seats.values()) != list(range(SEATS)):
            raise ValueError("Classical Mahjong needs one member in each of seats 0-3")
        order = sorted(seats, key=seats.get)
        wall = walls.new_deck(tiles.faces(), seed, COPIES)
        for _ in range(HAND):
            for key in order:
                walls.deal(wall, key, 1)
        dealer %= SEATS
        walls.deal(wall, order[dealer], 1)
        return {
            "phase": "discard", "hand_number": number, "dealer_index": dealer, "restart_count": restarts,
            "recovery_notice": notice, "turn_order": order,
            "players": {key: {"seat": seats[key], "wind": tiles.WINDS[seats[key]]} for key in order},
            "dealer": order[dealer], "current_player": order[dealer], "must_discard_after_claim": False,
            "rivers": {key: [] for key in order}, "meld_groups": {key: [] for key in order},
            "last_discard": None, "claim_eligible": [], "claim_responses": {}, "scores": scores,
            "last_result": None, "away": away, "deck": wall,
        }

    def proto_group_handle(self, state, actor, action):
        return self.substitute(self.apply(state, actor["public_key"], action))

    def apply(self, state, key, action):
        """One action of the seat `key`, checked against every rule before anything changes."""
        if state["phase"] == "completed":
            raise ValueError("the Mahjong match is complete")
        if not isinstance(action, dict) or not isinstance(action.get("kind"), str):
            raise ValueError("an action is an object with its kind")
        if state["phase"] == "claim":
            return self.claim(state, key, action)
        if key != state["current_player"]:
            raise ValueError(f"not your turn: seat {seat_of(state, state['current_player'])} acts now")
        kind = action.get("kind")
        if kind == "discard":
            return self.discard(state, key, action.get("card_id"))
        if kind == "win":
            if state["must_discard_after_claim"]:
                raise ValueError("after a pung or chow you discard before you can win")
            return self.win(state, key, [])
        if kind == "concealed_kong":
            return self.concealed_kong(state, key, action.get("card_ids"))
        raise ValueError("your turn takes discard, win or concealed_kong")

    # -- a turn -----------------------------------------------------------------------------

    def discard(self, state, key, card_id):
        if not isinstance(card_id, str) or card_id not in state["deck"]["hands"][key]:
            raise ValueError("card_id is not a tile in your hand")
        tile = walls.play(state["deck"], key, card_id, RIVER)
        state["rivers"][key].append(card_id)
        state["last_discard"] = {"card_id": card_id, "card": tile, "public_key": key, "seat": seat_of(state, key)}
        state.update(phase="claim", current_player="", must_discard_after_claim=False, claim_responses={},
                     claim_eligible=[k for k in state["turn_order"] if k != key])
        return {"state": state, "events": [{"kind": "mahjong_discard", **copy.deepcopy(state["last_discard"])}]}

    def concealed_kong(self, state, key, card_ids):
        chosen = held_tiles(state, key, card_ids, 4)
        if len({tile["code"] for tile in chosen}) != 1:
            raise ValueError("a concealed kong is four tiles of one face")
        walls.play_many(state["deck"], key, card_ids, MELDS)
        return self.meld(state, key, {"kind": "concealed_kong", "owner": key, "cards": chosen}, [])

    def meld(self, state, key, group, events):
        """`group` is now `key`'s meld and `key` is to discard; after a kong it draws a
        replacement tile (or the hand ends, the wall empty)."""
        state["meld_groups"][key].append(group)
        state.update(phase="discard", current_player=key, last_discard=None, claim_eligible=[],
                     claim_responses={}, must_discard_after_claim=group["kind"] in ("pung", "chow"))
        events.append(copy.deepcopy(group))  # (the network's event is the meld: its kind is the meld's)
        if "kong" not in group["kind"]:
            return {"state": state, "events": events}
        if not state["deck"]["pile"]:
            return self.wall_empty(state, events)
        walls.deal(state["deck"], key, 1)
        events.append({"kind": "replacement_draw", "public_key": key})
        return {"state": state, "events": events}

    # -- the claim window --------------------------------------------------------------------

    def claim(self, state, key, action):
        if key not in state["claim_eligible"]:
            raise ValueError("you cannot answer this discard: it is yours or you are not at the table")
        if key in state["claim_responses"]:
            raise ValueError("you have already answered this discard")
        kind = action.get("kind")
        discard = state["last_discard"]
        answer = {"kind": kind}
        if kind == "win":
            concealed = walls.hand(state["deck"], key) + [discard["card"]]
            if tiles.win_kind(concealed, len(state["meld_groups"][key])) is None:
                raise ValueError("the discard does not complete a winning hand")
        elif kind in CLAIM_TILES:
            chosen = held_tiles(state, key, action.get("card_ids"), CLAIM_TILES[kind])
            codes = sorted(tile["code"] for tile in chosen)
            if kind == "chow":
                if key != next_key(state["turn_order"], discard["public_key"]):
                    raise ValueError("only the seat after the discarder may chow")
                if tuple(codes) not in {tuple(sorted(pair)) for pair in
                                        tiles.chows(walls.hand(state["deck"], key), discard["card"])}:
                    raise ValueError("those tiles and the discard do not make a run")
            elif set(codes) != {discard["card"]["code"]}:
                raise ValueError(f"a {kind} takes tiles of the discard's face")
            answer["card_ids"] = list(action["card_ids"])
        elif kind != "pass_claim":
            raise ValueError("a discard is answered with pass_claim, win, pung, kong or chow")
        state["claim_responses"][key] = answer
        events = [{"kind": "claim_response_received", "public_key": key,
                   "response_count": len(state["claim_responses"])}]
        if len(state["claim_responses"]) < len(state["claim_eligible"]):
            return {"state": state, "events": events}
        return self.settle(state, events)

    def settle(self, state, events):
        """Every answer is in: the first claim by priority, nearest the discarder first."""
        discard = state["last_discard"]
        order = state["turn_order"]
        start = order.index(discard["public_key"])
        nearest = [order[(start + step) % SEATS] for step in range(1, SEATS)]
        for kinds in PRIORITY:
            claimant = next((k for k in nearest if state["claim_responses"][k]["kind"] in kinds), None)
            if claimant is None:
                continue
            answer = state["claim_responses"][claimant]
            events.append({"kind": "claim_resolved", "claim": answer["kind"], "winner": claimant})
            if answer["kind"] == "win":
                return self.win(state, claimant, events)
            chosen = walls.play_many(state["deck"], claimant, answer["card_ids"], MELDS)
            claimed = walls.move(state["deck"], discard["card_id"], RIVER, MELDS)
            state["rivers"][discard["public_key"]].remove(discard["card_id"])
            group = {"kind": answer["kind"], "owner": claimant, "from": discard["public_key"],
                     "cards": [*chosen, claimed]}
            return self.meld(state, claimant, group, events)
        events.append({"kind": "claim_resolved", "claim": "none"})
        drawer = next_key(order, discard["public_key"])
        state.update(last_discard=None, claim_eligible=[], claim_responses={})
        if not state["deck"]["pile"]:
            return self.wall_empty(state, events)
        walls.deal(state["deck"], drawer, 1)
        state.update(phase="discard", current_player=drawer, must_discard_after_claim=False)
        events.append({"kind": "mahjong_draw", "public_key": drawer})
        return {"state": state, "events": events}

    # -- the hand's end ----------------------------------------------------------------------

    def win(self, state, key, events):
        """`key` wins: by self-draw on its turn (no `last_discard`), else on the discard."""
        discard = state["last_discard"]
        concealed = walls.hand(state["deck"], key) + ([discard["card"]] if discard else [])
        melds = state["meld_groups"][key]
        shape = tiles.win_kind(concealed, len(melds))
        if shape is None:
            raise ValueError("your tiles do not make a winning hand")
        kinds = [group["kind"] for group in melds]
        found = tiles.patterns(concealed + [tile for group in melds for tile in group["cards"]], shape, kinds,
                               self_draw=discard is None,
                               concealed=all(kind == "concealed_kong" for kind in kinds))
        points = sum(pattern["points"] for pattern in found)
        delta = score_delta(state["turn_order"], key, discard["public_key"] if discard else None, points)
        for k, amount in delta.items():
            state["scores"][k] += amount
        state["last_result"] = {"kind": "discard_win" if discard else "self_draw", "winner": key,
                                "discarder": discard["public_key"] if discard else None, "win_kind": shape,
                                "patterns": found, "points": points, "score_delta": delta}
        events.append(copy.deepcopy(state["last_result"]))  # (the event is the result, kind and all)
        return self.next_hand(state, events)

    def wall_empty(self, state, events):
        state["last_result"] = {"kind": "wall_exhausted", "winner": "", "points": 0}
        events.append({"kind": "mahjong_wall_exhausted"})
        return self.next_hand(state, events)

    def next_hand(self, state, events):
        """The match's end after `max_hands` hands, else the next hand, the deal passed on."""
        if state["hand_number"] >= self.option("max_hands"):
            high = max(state["scores"].values())
            winners = [k for k in state["turn_order"] if state["scores"][k] == high]
            outcome = winners[0] if len(winners) == 1 else "draw"
            state.update(phase="completed", current_player="", last_discard=None, claim_eligible=[],
                         claim_responses={})
            events.append({"kind": "mahjong_match_complete", "winner": outcome, "winners": winners,
                           "scores": dict(state["scores"])})
            return {"state": state, "events": events, "completed": True, "outcome": outcome}
        following = self.deal_hand(seats(state), state["away"], number=state["hand_number"] + 1,
                                   dealer=state["dealer_index"] + 1, restarts=state["restart_count"],
                                   scores=state["scores"], notice=state["recovery_notice"])
        following["last_result"] = state["last_result"]
        events.append({"kind": "mahjong_hand_started", "hand_number": following["hand_number"],
                       "dealer": following["dealer"]})
        return {"state": following, "events": events}

    # -- members come and go -----------------------------------------------------------------

    def away_to_act(self, state):
        """An away seat that must act now (`StandIns`): one that has not answered a discard,
        else the one whose turn it is."""
        if state["phase"] == "claim":
            return next((k for k in state["claim_eligible"]
                         if k in state["away"] and k not in state["claim_responses"]), "")
        return super().away_to_act(state)

    def stand_in(self, view, key):
        """An away seat's action (`StandIns`): the automatic player's."""
        return choose(view)

    def proto_group_on_leader_changed(self, state, old_leader, new_leader):
        return leader_changed(state, old_leader, new_leader, redone="the private hand was restarted",
                              kind="mahjong_hand_restarted_after_leader_change", counter="hand_number")

    def proto_group_recovery_snapshot(self, state):
        return {"hand_number": state["hand_number"], "dealer_index": state["dealer_index"],
                "restart_count": state["restart_count"], "scores": dict(state["scores"]), "seats": seats(state)}

    def proto_group_restore(self, checkpoint, members, new_epoch):
        """The interrupted hand is dealt again, the scores kept; a seat whose member has not
        come back to the new leader is played for it."""
        seated, away = seats_after_failover(checkpoint, members)
        scores = checkpoint.get("scores", {})
        state = self.deal_hand(seated, away, number=int(checkpoint.get("hand_number", 1)),
                               dealer=int(checkpoint.get("dealer_index", 0)),
                               restarts=int(checkpoint.get("restart_count", 0)) + 1,
                               scores={k: int(scores.get(k, 0)) for k in sorted(seated, key=seated.get)},
                               notice="The interrupted hidden wall was discarded after a Leader change.")
        return self.substitute({"state": state, "events": []})["state"]

    # -- what a seat sees --------------------------------------------------------------------

    def proto_group_view(self, state, viewer):
        key = viewer["public_key"]
        wall = state["deck"]
        return {
            **{field: state[field] for field in (
                "phase", "hand_number", "restart_count", "recovery_notice", "turn_order", "players", "dealer",
                "current_player", "last_discard", "scores", "last_result", "must_discard_after_claim")},
            "wall_count": len(wall["pile"]),
            "hand_counts": {owner: len(held) for owner, held in wall["hands"].items()},
            "my_hand": sorted(walls.hand(wall, key), key=lambda tile: tiles.INDEX[tile["code"]]),
            "rivers": {owner: walls.cards(wall, river) for owner, river in state["rivers"].items()},
            "melds": state["meld_groups"],
            "claim_response_count": len(state["claim_responses"]),
            "claim_required_count": len(state["claim_eligible"]),
            "my_claim": state["claim_responses"].get(key),
            "you": {"public_key": key, "seat": viewer["seat"], "wind": tiles.WINDS[int(viewer["seat"])],
                    "may_claim": key in state["claim_eligible"]},
        }

    # -- the table as a person sees it ---------------------------------------------------------

    def proto_group_table(self, view, member, events):
        """The display model (`aigenora.proto.table_view`) of a seat's view: every seat's
        discards and declared melds, the hand only to its seat."""
        names = table_view.seat_names(view, lambda key, player: f"{player['wind'].title()} seat {player['seat']}")
        seats, centre = [], []
        for key in view["turn_order"]:
            player = view["players"][key]
            facts = [table_view.fact("wind", player["wind"])] + ([table_view.fact("role", "dealer")]
                                                                 if key == view["dealer"] else [])
            seats.append(table_view.view_seat(view, key, names, facts))
            melded = [tile for group in view["melds"].get(key, []) for tile in group["cards"]]
            if melded:
                centre.append(table_view.pile(f"{names[key]} melds", table_view.cards(melded)))
            centre.append(table_view.pile(f"{names[key]} discards", table_view.cards(view["rivers"].get(key, []))))
        turn = table_view.turn_words(view, names, "discard a tile" if view["phase"] == "discard" else "draw a tile")
        if view["phase"] == "claim" and view["you"]["may_claim"] and view["my_claim"] is None:
            turn = "Your turn: claim the discard (chow, pung, kong, win) or pass"
        last = view["last_discard"]
        return table_view.table(
            "Classical Mahjong", f"hand {view['hand_number']}, {view['phase']}", turn, seats, centre=centre,
            facts=[table_view.fact("wall", view["wall_count"])]
            + ([table_view.fact("last discard", table_view.card_text(table_view.card(last["card"])))] if last else []),
            score=[table_view.fact(names[key], view["scores"].get(key, 0)) for key in view["turn_order"]],
            log=table_view.log(events, names))

    # -- a seat that plays by itself ---------------------------------------------------------

    def proto_group_autoplay(self, view, member):
        you = view["you"]
        if view["phase"] == "claim" and you["may_claim"] and view["my_claim"] is None:
            return choose(view)
        if view["phase"] == "discard" and view["current_player"] == you["public_key"]:
            return choose(view)
        return None

    # -- a person's choices ------------------------------------------------------------------

    def proto_group_choices(self, view, member):
        """On the seat's turn: a win when its tiles make one (never right after a pung or chow,
        when the leader takes a discard first), each concealed kong, a discard of each face; in
        a claim window it answers: a pass, a win on the discard, the pung, kong and chows its
        tiles allow."""
        you = view["you"]
        if view["phase"] == "claim" and you["may_claim"] and view["my_claim"] is None:
            return claim_choices(view)
        if view["phase"] == "discard" and view["current_player"] == you["public_key"]:
            return turn_choices(view)
        return []


def choose(view: dict) -> dict:
    if view["phase"] == "claim":
        return choose_claim(view)
    return choose_turn(view)


def may_win_now(view: dict) -> bool:
    """Whether the seat's tiles make a self-drawn win the leader takes: not right after a pung
    or chow (`must_discard_after_claim`, which a reference leader's view lacks: its seats then
    win as their tiles allow)."""
    melds = len(view["melds"][view["you"]["public_key"]])
    return not view.get("must_discard_after_claim") and tiles.win_kind(view["my_hand"], melds) is not None


def choose_turn(view: dict) -> dict:
    """A win when the tiles make one, a concealed kong that leaves the hand no further from a
    win, else the discard that leaves the hand nearest a win."""
    hand = view["my_hand"]
    melds = len(view["melds"][view["you"]["public_key"]])
    if may_win_now(view):
        return {"kind": "win"}
    held = tiles.counts(hand)
    for index in (i for i, n in enumerate(held) if n == 4 and view["wall_count"]):
        if tiles.shanten(held[:index] + (0,) + held[index + 1:], melds + 1) <= tiles.shanten(held, melds):
            return {"kind": "concealed_kong",
                    "card_ids": [tile["card_id"] for tile in hand if tile["code"] == tiles.CODES[index]]}
    return {"kind": "discard", "card_id": best_discard(hand, melds)["card_id"]}


def best_discard(hand: list[dict], melds: int) -> dict:
    """The tile whose loss leaves the fewest tiles to a win; among equals the least connected
    (an isolated honour or terminal first)."""
    held = tiles.counts(hand)

    def cost(tile):
        index = tiles.INDEX[tile["code"]]
        left = held[:index] + (held[index] - 1,) + held[index + 1:]
        return (tiles.shanten(left, melds), connection(held, index), not tiles.is_honour(index),
                index not in tiles.ORPHANS, index)

    return min(hand, key=cost)


def connection(held: tuple, index: int) -> int:
    """How many other tiles of the hand work with this one: its copies, and for a numbered tile
    its suit's neighbours within two ranks."""
    near = held[index] - 1
    if not tiles.is_honour(index):
        rank = index % 9
        near += sum(held[index + step] for step in (-2, -1, 1, 2) if 0 <= rank + step < 9)
    return near


def choose_claim(view: dict) -> dict:
    """A win on the discard when it makes one; else a claim that brings the hand nearer a win;
    else a pass."""
    hand, discard = view["my_hand"], view["last_discard"]["card"]
    me = view["you"]["public_key"]
    melds = len(view["melds"][me])
    if tiles.win_kind(hand + [discard], melds):
        return {"kind": "win"}
    now = tiles.shanten(tiles.counts(hand), melds)
    same = [t["card_id"] for t in hand if t["code"] == discard["code"]]
    options = []
    if len(same) >= 3:
        options.append(("kong", same[:3]))
    if len(same) >= 2:
        options.append(("pung", same[:2]))
    order = view["turn_order"]
    if order[(order.index(view["last_discard"]["public_key"]) + 1) % len(order)] == me:
        for pair in tiles.chows(hand, discard):
            options.append(("chow", [next(t["card_id"] for t in hand if t["code"] == code) for code in pair]))
    for kind, ids in options:
        rest = [tile for tile in hand if tile["card_id"] not in ids]
        if tiles.shanten(tiles.counts(rest), melds + 1) < now:
            return {"kind": kind, "card_ids": ids}
    return {"kind": "pass_claim"}


# -- a person's choices ------------------------------------------------------------------------


def turn_choices(view: dict) -> list:
    hand = view["my_hand"]
    firsts = {}
    for tile in hand:
        firsts.setdefault(tile["code"], tile)
    options = []
    if may_win_now(view):
        options.append(choice("Win", {"kind": "win"}))
    for code, tile in firsts.items():
        same = [t["card_id"] for t in hand if t["code"] == code]
        if len(same) == 4:
            options.append(choice(f"Kong {tile['label']}", {"kind": "concealed_kong", "card_ids": same}))
    options += [choice(f"Discard {tile['label']}", {"kind": "discard", "card_id": tile["card_id"]})
                for tile in firsts.values()]
    return options


def claim_choices(view: dict) -> list:
    hand, discard = view["my_hand"], view["last_discard"]["card"]
    me = view["you"]["public_key"]
    options = [choice("Pass", {"kind": "pass_claim"})]
    if tiles.win_kind(hand + [discard], len(view["melds"][me])):
        options.append(choice(f"Win on {discard['label']}", {"kind": "win"}))
    same = [t["card_id"] for t in hand if t["code"] == discard["code"]]
    for kind, size in (("kong", 3), ("pung", 2)):
        if len(same) >= size:
            options.append(choice(f"{kind.capitalize()} {discard['label']}", {"kind": kind, "card_ids": same[:size]}))
    order = view["turn_order"]
    if order[(order.index(view["last_discard"]["public_key"]) + 1) % len(order)] == me:
        by_code = {}
        for tile in hand:
            by_code.setdefault(tile["code"], tile)
        for pair in tiles.chows(hand, discard):
            run = sorted([by_code[code] for code in pair] + [discard], key=lambda t: tiles.INDEX[t["code"]])
            options.append(choice("Chow " + " ".join(t["label"] for t in run),
                                  {"kind": "chow", "card_ids": [by_code[code]["card_id"] for code in pair]}))
    return options


# -- the rules as functions --------------------------------------------------------------------


def held_tiles(state: dict, key: str, card_ids, count: int) -> list[dict]:
    """The `count` different tiles `card_ids` names from `key`'s hand, or the reason not."""
    if not isinstance(card_ids, list) or len(card_ids) != count or len(set(map(str, card_ids))) != count \
            or not all(isinstance(card_id, str) for card_id in card_ids):
        raise ValueError(f"card_ids must name {count} different tiles")
    if any(card_id not in state["deck"]["hands"][key] for card_id in card_ids):
        raise ValueError("a tile in card_ids is not in your hand")
    return walls.cards(state["deck"], card_ids)


def score_delta(order: list, winner: str, discarder: str | None, points: int) -> dict:
    """A self-drawn win takes `points` from each other seat; a discard pays three times over."""
    if discarder is None:
        return {k: 3 * points if k == winner else -points for k in order}
    return {k: 3 * points if k == winner else -3 * points if k == discarder else 0 for k in order}


def seats(state: dict) -> dict:
    return {key: player["seat"] for key, player in state["players"].items()}


def seat_of(state: dict, key: str) -> int:
    return state["players"][key]["seat"]


def next_key(order: list, key: str) -> str:
    return order[(order.index(key) + 1) % len(order)]
