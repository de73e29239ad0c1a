"""Four-player Landlord (the network's four-player-landlord-v1 contract), run by a room's
leader: two packs of 54 cards, twenty-five to each of four fixed seats and an eight-card bottom
for whoever wins the bidding, the Landlord, who then plays alone against three Farmers.

Actions, from the seat whose turn it is: while bidding `{"kind": "bid", "value": 0-3}` (0
passes; each seat bids once, in seat order; the first highest bid wins, a 3 ends the bidding at
once, and if all four pass the cards are dealt again); then `{"kind": "play", "card_ids": [...]}`
or `{"kind": "pass"}`. A play is a combination of `aigenora.proto.climbing` and, unless the seat
leads, must beat the last play; the Landlord leads first. Three passes in a row give the lead
back to whoever played last. The leader refuses, with its reason, anything out of turn, a
second bid or one outside 0-3, cards not in the hand, cards that make no combination or do not
beat the last play, and a pass from the seat that leads.

The first seat to empty its hand ends the round: the Landlord's side or the Farmers' wins. The
base is the winning bid (at least 1), doubled for every bomb played; a winning Landlord takes
three bases and each Farmer pays one, and a losing Landlord pays three while each Farmer takes
one. The scores carry over from round to round.

The deck is shuffled from a seed only the leader holds (`deal_seed` pins it for tests). A
member's view has its own cards, how many the others hold, the bids, the bottom once it is
revealed, the last play, every card played and the scores; never another hand. Checkpoints
keep the round number, the restarts, the scores and the seats, so a new leader deals a fresh
round (`restart_round`). A seat whose member is gone is played by the leader's automatic
player until it comes back, so the round always reaches its end.

`proto_group_autoplay` bids by the hand's strength and plays by combinations: it leads the
lowest complete combination (a run or a plane from its lowest card when it has one), beats the
last play as cheaply as it can, lets a fellow Farmer's play stand, and keeps its bombs for
need: an opponent close to going out, or its own last cards."""
from __future__ import annotations

from collections import Counter

from aigenora.proto import climbing
from aigenora.proto import deck as cards
from aigenora.proto.hooks import ProtocolHooks
from aigenora.proto.seat_choices import MAX_CHOICES, bounded, card_pick, cards_label, choice
from aigenora.proto.table_seats import StandIns, leader_changed, seats_after_failover
from aigenora.proto.fair_deal import dealing, fair_deals
from aigenora.proto import table_view

HAND, BOTTOM, PACKS, SEATS = 25, 8, 2, 4
BIDS = range(0, 4)
PLAYED = "played"
# The hand strength that bids 1, 2 and 3 (a dealt hand has 12 or more about one time in three,
# 18 or more one time in twenty).
BID_AT = (12, 15, 18)
# A bomb is kept until an opponent holds this many cards or fewer, or the seat itself does.
BOMB_WHEN_LEFT = 6


@fair_deals
class Hooks(StandIns, ProtocolHooks):
    SUPPORTED_CONTROL_MODES = ("autonomous", "hybrid", "human")

    def proto_host_metadata(self):
        return ("Four-player Landlord", "game,cards,multiplayer,landlord", "supply", {})

    # -- the round -------------------------------------------------------------------------

    def proto_group_initial_state(self, members):
        seated = [m for m in members if m.get("status") == "active"]
        if len(seated) != SEATS:
            raise ValueError("Four-player Landlord needs exactly four seated members")
        seats = {m["public_key"]: int(m["seat"]) for m in seated}
        return self.deal_round(seats, [], number=1, restarts=0, scores={key: 0 for key in seats}, notice="")

    @dealing("number", "restarts")
    def deal_round(self, seats, away, *, number, restarts, scores, notice, seed):
        """Twenty-five cards to every seat, one at a time from seat 0; eight stay as the bottom."""
        if sorted(seats.values()) != list(range(SEATS)):
            raise ValueError("Four-player Landlord needs one member in each of seats 0-3")
        order = sorted(seats, key=seats.get)
        deck = cards.new_deck(climbing.faces(), seed, PACKS)
        for _ in range(HAND):
            for key in order:
                cards.deal(deck, key, 1)
        return {
            "phase": "bidding", "round_number": number, "restart_count": restarts,
            "recovery_notice": notice,
            "players": {key: {"seat": seats[key], "role": "unassigned"} for key in order},
            "turn_order": order, "current_player": order[0], "bids": {}, "highest_bid": 0,
            "highest_bidder": "", "landlord": "", "bottom_revealed": [], "last_play": None,
            "passes": 0, "bombs": 0, "scores": scores, "away": away, "deck": deck,
        }

    def proto_group_handle(self, state, actor, action):
        return self.substitute(self.apply(state, actor["public_key"], action))

    def apply(self, state, key, action):
        """One action of the seat `key`, checked against every rule before anything changes."""
        if state["phase"] == "completed":
            raise ValueError("the round is complete")
        if key != state["current_player"]:
            raise ValueError(f"not your turn: seat {seat_of(state, state['current_player'])} acts now")
        if state["phase"] == "bidding":
            return self.bid(state, key, action)
        if action.get("kind") == "pass":
            return self.pass_turn(state, key)
        if action.get("kind") == "play":
            return self.play(state, key, action.get("card_ids"))
        raise ValueError("the play takes play or pass")

    # -- bidding ---------------------------------------------------------------------------

    def bid(self, state, key, action):
        value = action.get("value")
        if action.get("kind") != "bid":
            raise ValueError("the bidding takes only bid")
        if not isinstance(value, int) or isinstance(value, bool) or value not in BIDS:
            raise ValueError("a bid is 0 (pass), 1, 2 or 3")
        state["bids"][key] = value
        if value > state["highest_bid"]:
            state["highest_bid"], state["highest_bidder"] = value, key
        events = [{"kind": "bid", "public_key": key, "seat": seat_of(state, key), "value": value}]
        if value < max(BIDS) and len(state["bids"]) < SEATS:
            state["current_player"] = next_key(state["turn_order"], key)
            return {"state": state, "events": events}
        if not state["highest_bidder"]:
            seats = {k: player["seat"] for k, player in state["players"].items()}
            state = self.deal_round(seats, state["away"], number=state["round_number"] + 1,
                                    restarts=state["restart_count"], scores=state["scores"],
                                    notice="All Members passed; the authority redealt.")
            events.append({"kind": "all_passed_redeal", "round_number": state["round_number"]})
            return {"state": state, "events": events}
        landlord = state["highest_bidder"]
        cards.deal(state["deck"], landlord, BOTTOM)
        bottom = cards.hand(state["deck"], landlord)[-BOTTOM:]
        for k, player in state["players"].items():
            player["role"] = "landlord" if k == landlord else "farmer"
        state.update(phase="playing", landlord=landlord, bottom_revealed=bottom, current_player=landlord)
        events.append({"kind": "landlord_selected", "public_key": landlord, "bid": state["highest_bid"],
                       "bottom": bottom})
        return {"state": state, "events": events}

    # -- the play --------------------------------------------------------------------------

    def pass_turn(self, state, key):
        last = state["last_play"]
        if last is None:
            raise ValueError("you lead: play a combination, you cannot pass")
        if last["public_key"] == key:
            raise ValueError("your own play stands: lead a combination")
        state["passes"] += 1
        events = [{"kind": "pass", "public_key": key}]
        if state["passes"] < SEATS - 1:
            state["current_player"] = next_key(state["turn_order"], key)
            return {"state": state, "events": events}
        state.update(last_play=None, passes=0, current_player=last["public_key"])
        events.append({"kind": "trick_reset", "public_key": last["public_key"]})
        return {"state": state, "events": events}

    def play(self, state, key, card_ids):
        held = state["deck"]["hands"][key]
        if not isinstance(card_ids, list) or not card_ids or len(card_ids) > len(held) \
                or not all(isinstance(card_id, str) for card_id in card_ids) \
                or len(set(card_ids)) != len(card_ids):
            raise ValueError("card_ids must be a list of different card ids from your hand")
        if any(card_id not in held for card_id in card_ids):
            raise ValueError("a card in card_ids is not in your hand")
        chosen = cards.cards(state["deck"], card_ids)
        made = climbing.classify(chosen)
        last = state["last_play"]
        if last is not None and not climbing.beats(made, last["combination"]):
            raise ValueError(f"a {name(made)} does not beat the last play, a {name(last['combination'])}")
        for card_id in card_ids:
            cards.play(state["deck"], key, card_id, PLAYED)
        state["bombs"] += 1 if made["tier"] else 0
        state["last_play"] = {"public_key": key, "seat": seat_of(state, key), "cards": chosen,
                              "combination": made}
        state["passes"] = 0
        events = [{"kind": "play", "public_key": key, "seat": seat_of(state, key), "cards": chosen,
                   "combination": dict(made)}]
        if held:
            state["current_player"] = next_key(state["turn_order"], key)
            return {"state": state, "events": events}
        return self.score_round(state, key, events)

    def score_round(self, state, winner, events):
        outcome = "landlord" if winner == state["landlord"] else "farmers"
        delta = score_delta(state["turn_order"], state["landlord"], outcome, state["highest_bid"], state["bombs"])
        for key, amount in delta.items():
            state["scores"][key] = state["scores"].get(key, 0) + amount
        state.update(phase="completed", current_player="")
        events.append({"kind": "game_over", "outcome": outcome, "winner": winner, "score_delta": delta})
        return {"state": state, "events": events, "completed": True, "outcome": outcome}

    # -- members come and go ---------------------------------------------------------------

    def stand_in(self, view, key):
        """An away seat's action (`StandIns`): some member acts within a round of turns."""
        return choose(view)

    def proto_group_on_leader_changed(self, state, old_leader, new_leader):
        return leader_changed(state, old_leader, new_leader, redone="the private deal was restarted",
                              kind="round_restarted_after_leader_change", counter="round_number")

    def proto_group_recovery_snapshot(self, state):
        return {"round_number": state["round_number"], "restart_count": state["restart_count"],
                "scores": dict(state["scores"]),
                "seats": {key: player["seat"] for key, player in state["players"].items()}}

    def proto_group_restore(self, checkpoint, members, new_epoch):
        """The interrupted round is thrown in and the next one dealt, the scores kept; a seat
        whose member has not come back to the new leader is played for it."""
        seats, away = seats_after_failover(checkpoint, members)
        scores = checkpoint.get("scores", {})
        state = self.deal_round(seats, away, number=int(checkpoint.get("round_number", 1)) + 1,
                                restarts=int(checkpoint.get("restart_count", 0)) + 1,
                                scores={key: int(scores.get(key, 0)) for key in sorted(seats, key=seats.get)},
                                notice="The previous private deal was discarded after a Leader change.")
        return self.substitute({"state": state, "events": []})["state"]

    # -- what a seat sees ------------------------------------------------------------------

    def proto_group_view(self, state, viewer):
        key = viewer["public_key"]
        deck = state["deck"]
        return {
            **{field: state[field] for field in (
                "phase", "round_number", "restart_count", "recovery_notice", "players", "turn_order",
                "current_player", "bids", "highest_bid", "highest_bidder", "landlord", "bottom_revealed",
                "last_play", "passes", "bombs", "scores")},
            "hand_counts": {owner: len(held) for owner, held in deck["hands"].items()},
            "my_hand": sorted(cards.hand(deck, key), key=lambda card: (card["value"], card["suit"])),
            "discard": cards.zone(deck, PLAYED),
            "you": {"public_key": key, "seat": viewer["seat"], "is_landlord": key == state["landlord"]},
        }

    # -- the table as a person sees it ---------------------------------------------------------

    def proto_group_table(self, view, member, events):
        """The display model (`aigenora.proto.table_view`) of a seat's view."""
        names = table_view.seat_names(view)
        seats = []
        for key in view["turn_order"]:
            player = view["players"][key]
            facts = [table_view.fact("role", player["role"])]
            if key in view["bids"]:
                facts.append(table_view.fact("bid", view["bids"][key]))
            seats.append(table_view.view_seat(view, key, names, facts))
        last = view["last_play"]
        centre = [table_view.pile("Last play" + (f" by {names[last['public_key']]}" if last else ""),
                                  table_view.cards(last["cards"]) if last else [])]
        if view["bottom_revealed"]:
            centre.append(table_view.pile("Bottom cards", table_view.cards(view["bottom_revealed"])))
        asked = "bid 0 to 3" if view["phase"] == "bidding" else "play a higher combination or pass"
        return table_view.table(
            "Four-player Landlord", f"round {view['round_number']}, {view['phase']}",
            table_view.turn_words(view, names, asked), seats, centre=centre,
            facts=[table_view.fact("highest bid", view["highest_bid"]), table_view.fact("bombs", view["bombs"])],
            score=[table_view.fact(names[key], view["scores"].get(key, 0)) for key in view["turn_order"]],
            log=table_view.log(events, names))

    # -- a seat that plays by itself -------------------------------------------------------

    def proto_group_autoplay(self, view, member):
        if view["phase"] == "completed" or view["current_player"] != view["you"]["public_key"]:
            return None
        return choose(view)

    # -- a person's choices ----------------------------------------------------------------

    def proto_group_choices(self, view, member):
        """The bids, or every combination of the hand that beats the last play (the whole hand
        first when it is one), smallest first, and a pass when the seat may pass: at most
        MAX_CHOICES, the biggest left out beyond that, but never the automatic seat's play.
        Each combination is listed once, with the cheapest attachments, so the last choice
        lets a person pick the cards of any play (other attachments, a combination left out),
        which the leader judges."""
        me = view["you"]["public_key"]
        if view["phase"] == "completed" or view["current_player"] != me:
            return []
        if view["phase"] == "bidding":
            return [choice(f"Bid {value}" if value else "Pass", {"kind": "bid", "value": value})
                    for value in BIDS]
        last = view["last_play"]
        options = [choice("Pass", {"kind": "pass"})] if last is not None else []
        for play in legal_plays(view["my_hand"], last["combination"] if last else None):
            options.append(choice(cards_label(f"Play {name(play.combination)}", play.cards),
                                  {"kind": "play", "card_ids": [card["card_id"] for card in play.cards]}))
        hand = view["my_hand"]
        picked = card_pick("Play cards you pick", {"kind": "play"}, hand, 1, len(hand))
        return bounded(options, keep=choose(view), most=MAX_CHOICES - 1) + [picked]


def choose(view: dict) -> dict:
    if view["phase"] == "bidding":
        return {"kind": "bid", "value": choose_bid(view)}
    chosen = choose_play(view)
    if chosen is None:
        return {"kind": "pass"}
    return {"kind": "play", "card_ids": [card["card_id"] for card in chosen.cards]}


# -- bidding -----------------------------------------------------------------------------------


def choose_bid(view: dict) -> int:
    """The bid the hand's strength is worth, or 0 when that does not top the highest bid."""
    strength = hand_strength(view["my_hand"])
    worth = sum(1 for points in BID_AT if strength >= points)
    return worth if worth > view["highest_bid"] else 0


def hand_strength(hand: list[dict]) -> int:
    """Points for the cards that win control: 3 a red joker, 2 a black joker or a two, 1 an
    ace, and 3 more for every bomb."""
    points = sum({climbing.RED_JOKER: 3, climbing.BLACK_JOKER: 2, climbing.TWO: 2, climbing.ACE: 1}
                 .get(card["value"], 0) for card in hand)
    counts = Counter(card["value"] for card in hand)
    return points + 3 * sum(1 for value, n in counts.items() if n >= 4 and value <= climbing.TWO)


# -- the play ----------------------------------------------------------------------------------


def choose_play(view: dict) -> climbing.Play | None:
    """The play for the seat to act, or None to pass."""
    me = view["you"]["public_key"]
    hand = view["my_hand"]
    last = view["last_play"]
    previous = last["combination"] if last else None
    try:
        whole = climbing.Play(hand, climbing.classify(hand))
        if previous is None or climbing.beats(whole.combination, previous):
            return whole
    except ValueError:  # the hand is not one combination
        pass
    options = climbing.beating(hand, previous)
    kept = bomb_cards(hand)
    normal = [play for play in options if play.combination["tier"] == 0
              and not kept & {card["card_id"] for card in play.cards}]
    bombs = [play for play in options if play.combination["tier"] > 0]
    if last is None:
        return lead(hand, normal) or min(bombs, key=bomb_cost)
    if partner(view, me, last["public_key"]):
        return None
    if normal:
        return min(normal, key=lambda play: follow_cost(hand, play))
    if bombs and in_need(view, me):
        return min(bombs, key=bomb_cost)
    return None


def legal_plays(hand: list[dict], previous: dict | None) -> list[climbing.Play]:
    """Every play the leader takes after `previous`: the hand's combinations that beat it and
    the whole hand when it is one (its cards in the hand's order, as the automatic seat plays
    it), fewest cards and lowest first, bombs last."""
    found = climbing.beating(hand, previous)
    try:
        whole = climbing.Play(hand, climbing.classify(hand))
        if previous is None or climbing.beats(whole.combination, previous):
            found = [play for play in found if len(play.cards) != len(hand)] + [whole]
    except ValueError:  # the hand is not one combination
        pass
    return sorted(found, key=lambda play: (play.combination["tier"], len(play.cards),
                                           play.combination["primary"]))


def lead(hand: list[dict], normal: list[climbing.Play]) -> climbing.Play | None:
    """The lowest complete combination: of the plays holding the lowest card outside the
    bombs, one that takes every card of that rank and breaks no other group of the hand, the
    longest such (a run or a plane before a single), then the lowest."""
    kept = bomb_cards(hand)
    free = [card for card in hand if card["card_id"] not in kept]
    if not free:
        return None
    low = min(card["value"] for card in free)
    held = Counter(card["value"] for card in hand)

    def rank(play: climbing.Play) -> tuple:
        used = Counter(card["value"] for card in play.cards)
        broken = sum(1 for value, n in used.items() if value != low and n < held[value])
        return (used[low] == held[low], -broken, len(play.cards), -play.combination["primary"])

    return max((play for play in normal if any(card["value"] == low for card in play.cards)),
               key=rank, default=None)


def follow_cost(hand: list[dict], play: climbing.Play) -> tuple:
    """Cheapest first: breaking fewer groups of the hand, then the lowest rank."""
    held = Counter(card["value"] for card in hand)
    used = Counter(card["value"] for card in play.cards)
    return (sum(1 for value, n in used.items() if n < held[value]), play.combination["primary"])


def bomb_cost(play: climbing.Play) -> tuple:
    combination = play.combination
    return (combination["tier"], combination["length"], combination["primary"])


def bomb_cards(hand: list[dict]) -> set:
    """The ids of the cards in the hand's bombs: ranks held four times or more, and jokers
    held two or more together."""
    by_value: dict[int, list[str]] = {}
    for card in hand:
        by_value.setdefault(card["value"], []).append(card["card_id"])
    kept = {card_id for value, ids in by_value.items() if value <= climbing.TWO and len(ids) >= 4 for card_id in ids}
    jokers = by_value.get(climbing.BLACK_JOKER, []) + by_value.get(climbing.RED_JOKER, [])
    return kept | (set(jokers) if len(jokers) >= 2 else set())


def partner(view: dict, me: str, other: str) -> bool:
    """Whether `other` plays on this seat's side: two Farmers."""
    return other != me and view["landlord"] not in (me, other)


def in_need(view: dict, me: str) -> bool:
    """A bomb is worth spending when an opponent is close to going out, or this seat is."""
    counts = view["hand_counts"]
    opponents = [key for key in view["turn_order"] if key != me and not partner(view, me, key)]
    return counts[me] <= BOMB_WHEN_LEFT or any(counts[key] <= BOMB_WHEN_LEFT for key in opponents)


# -- the rules as functions --------------------------------------------------------------------


def score_delta(order: list, landlord: str, outcome: str, bid: int, bombs: int) -> dict:
    """Each seat's gain: the base is the bid (at least 1) doubled for every bomb; the
    Landlord wins or loses three bases, each Farmer the opposite one base."""
    base = max(1, bid) * 2 ** bombs
    sign = 1 if outcome == "landlord" else -1
    return {key: sign * (3 * base if key == landlord else -base) for key in order}


def name(combination: dict) -> str:
    return combination["kind"].replace("_", " ")


def seat_of(state: dict, key: str) -> int:
    return state["players"][key]["seat"]


def next_key(order: list, key: str) -> str:
    return order[(order.index(key) + 1) % len(order)]
