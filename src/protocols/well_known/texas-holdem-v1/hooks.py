"""Four-seat No-limit Texas Hold'em (the network's texas-holdem-v1 contract), run by a room's
leader: blinds, four betting streets, all-ins with side pots, a showdown, and a match of
`max_hands` hands (or until one seat holds every chip) won by the biggest stack.

Actions, from the seat whose turn it is: `{"kind": "fold" | "check" | "call" | "all_in"}` and
`{"kind": "bet" | "raise", "amount": <the seat's total wager on this street>}`. The leader
refuses, with its reason, anything out of turn, a check facing a wager, a bet over a wager, a
raise below the minimum full raise (unless it is all the seat has), more than the stack, and a
raise from a seat whose turn came back only because of a short all-in.

The deck is shuffled from a seed only the leader holds (`deal_seed` pins it for tests). A
member's view has its own hole cards, the board as dealt, every stack and wager, the action
log and, once a hand reaches showdown, the hands shown there; never another seat's hole cards
before that. Checkpoints keep only the hand number, the button, the stacks at the hand's start
and the seats, so a new leader refunds the interrupted hand and deals a fresh one
(`restart_round`). A seat whose member is gone sits out (folded, its stack kept) until it
comes back.

`proto_group_autoplay` plays the seat whose turn it is from its equity (a seeded Monte Carlo
of the unseen cards) against the pot odds."""
from __future__ import annotations

import random

from aigenora.proto import deck as cards
from aigenora.proto.hooks import ProtocolHooks
from aigenora.proto.options import whole_option
from aigenora.proto.table_seats import leader_changed, member_back, member_gone, seats_after_failover
from aigenora.proto.seat_choices import choice
from aigenora.proto.poker_hands import category, hand_rank, side_pots, uncalled_excess
from aigenora.proto.fair_deal import dealing, fair_deals
from aigenora.proto import table_view

STREETS = ("preflop", "flop", "turn", "river")
REVEALED = {"flop": 3, "turn": 1, "river": 1}
# option: (default, minimum, maximum)
OPTIONS = {"starting_stack": (1000, 100, 100000), "small_blind": (5, 1, 10000),
           "big_blind": (10, 2, 20000), "max_hands": (8, 1, 100)}
SEATS = 4
SAMPLES = 150


@fair_deals
class Hooks(ProtocolHooks):
    SUPPORTED_CONTROL_MODES = ("autonomous", "hybrid", "human")

    def proto_host_metadata(self):
        return ("Four-seat No-limit Texas Hold'em", "game,cards,multiplayer,poker,holdem", "supply", {})

    def setting(self, name: str) -> int:
        return whole_option(self.options, name, *OPTIONS[name])

    # -- the table -------------------------------------------------------------------------

    def proto_group_initial_state(self, members):
        if self.setting("small_blind") >= self.setting("big_blind"):
            raise ValueError("small_blind must be lower than big_blind")
        if self.setting("big_blind") > self.setting("starting_stack"):
            raise ValueError("big_blind cannot exceed starting_stack")
        seated = sorted((m for m in members if m.get("status") == "active"), key=lambda m: m["seat"])
        if len(seated) != SEATS:
            raise ValueError("Texas Hold'em needs exactly four seated members")
        stack = self.setting("starting_stack")
        seats = {m["public_key"]: m["seat"] for m in seated}
        return self.deal_hand(seats, {key: stack for key in seats}, [], number=1, button=0,
                              restarts=0, notice="")

    @dealing("number", "restarts")
    def deal_hand(self, seats, stacks, away, *, number, button, restarts, notice, seed):
        """A new hand: blinds posted, two hole cards to every seat in play, the first to act."""
        order = sorted(seats, key=seats.get)
        playing = [key for key in order if stacks[key] > 0 and key not in away]
        if len(playing) < 2:
            raise ValueError("a hand needs two seats with chips")
        button %= len(order)
        while order[button] not in playing:
            button = (button + 1) % len(order)
        deck = cards.new_deck(cards.standard_faces(), seed)
        for _ in range(2):
            for key in playing:
                cards.deal(deck, key, 1)
        state = {
            "phase": "betting", "street": "preflop", "hand_number": number, "button_index": button,
            "restart_count": restarts, "recovery_notice": notice, "turn_order": order, "away": away,
            "players": {key: {"seat": seats[key], "stack": stacks[key], "folded": key not in playing,
                              "all_in": False, "street_contribution": 0, "total_contribution": 0}
                        for key in order},
            "button": order[button], "small_blind_player": "", "big_blind_player": "",
            "current_player": "", "current_bet": 0, "last_full_raise": self.setting("big_blind"),
            "pending": [], "acted_since_full_raise": [], "contributions": {key: 0 for key in order},
            "hand_start_stacks": dict(stacks), "action_log": [], "showdown_hands": {},
            "pot_results": [], "uncalled_refunds": {key: 0 for key in order}, "deck": deck,
        }
        small = next_in(state, order[button], playing)
        big = next_in(state, small, playing)
        state["small_blind_player"], state["big_blind_player"] = small, big
        put_in(state, small, self.setting("small_blind"))
        put_in(state, big, self.setting("big_blind"))
        state["current_bet"] = max(state["players"][small]["street_contribution"],
                                   state["players"][big]["street_contribution"])
        state["pending"] = can_act(state, next_in(state, big, order))
        if not state["pending"]:
            return self.run_out(state, [])["state"]
        state["current_player"] = state["pending"][0]
        return state

    def proto_group_handle(self, state, actor, action):
        if state["phase"] == "completed":
            raise ValueError("the match is over")
        key = actor["public_key"]
        if key != state["current_player"]:
            seat = state["players"][state["current_player"]]["seat"] if state["current_player"] else "no"
            raise ValueError(f"not your turn: seat {seat} acts now")
        kind = action.get("kind")
        move = {"fold": self.fold, "check": self.check, "call": self.call, "bet": self.wager,
                "raise": self.wager, "all_in": self.all_in}.get(kind)
        if move is None:
            raise ValueError("kind must be fold, check, call, bet, raise or all_in")
        reopened = move(state, key, action)
        return self.after_action(state, key, kind, reopened)

    # Each move changes the seat's chips and returns how it changed the betting: "full" (a full
    # raise: everyone else acts again), "short" (a short all-in: only those behind the wager
    # act again) or "" (nothing to reopen).

    def fold(self, state, key, action):
        state["players"][key]["folded"] = True
        return ""

    def check(self, state, key, action):
        if to_call(state, key):
            raise ValueError(f"cannot check facing a wager: {to_call(state, key)} to call")
        return ""

    def call(self, state, key, action):
        owed = to_call(state, key)
        if not owed:
            raise ValueError("nothing to call: check instead")
        put_in(state, key, owed)
        return ""

    def wager(self, state, key, action):
        target = action.get("amount")
        if not isinstance(target, int) or isinstance(target, bool):
            raise ValueError("amount must be a whole number of chips: the seat's total wager on this street")
        if action["kind"] == "bet" and state["current_bet"]:
            raise ValueError("there is a wager already: raise instead of bet")
        if action["kind"] == "raise" and not state["current_bet"]:
            raise ValueError("there is no wager to raise: bet instead")
        return self.raise_to(state, key, target, all_in=False)

    def all_in(self, state, key, action):
        player = state["players"][key]
        target = player["street_contribution"] + player["stack"]
        if target <= state["current_bet"]:
            put_in(state, key, player["stack"])
            return ""
        return self.raise_to(state, key, target, all_in=True)

    def raise_to(self, state, key, target, *, all_in):
        player = state["players"][key]
        ceiling = player["street_contribution"] + player["stack"]
        if not state["current_bet"] < target <= ceiling:
            raise ValueError(f"the wager must be above {state['current_bet']} and at most {ceiling}, all this seat has")
        if key in state["acted_since_full_raise"]:
            raise ValueError("a short all-in does not reopen the betting for a seat that already acted: call or fold")
        size = target - state["current_bet"]
        minimum = state["last_full_raise"] if state["current_bet"] else self.setting("big_blind")
        if size < minimum and not (all_in or target == ceiling):
            raise ValueError(f"a raise must go to at least {state['current_bet'] + minimum} unless it is all in")
        put_in(state, key, target - player["street_contribution"])
        state["current_bet"] = target
        if size < minimum:
            return "short"
        state["last_full_raise"] = size
        return "full"

    def after_action(self, state, key, kind, reopened):
        player = state["players"][key]
        entry = {"street": state["street"], "public_key": key, "seat": player["seat"], "kind": kind,
                 "amount": player["street_contribution"], "stack": player["stack"]}
        state["action_log"].append(entry)
        events = [{"kind": "holdem_action", "action": dict(entry)}]
        left = in_hand(state)
        if len(left) == 1:
            return self.award_uncontested(state, left[0], events)
        behind = can_act(state, next_in(state, key, state["turn_order"]))
        if reopened == "full":
            state["acted_since_full_raise"] = [key]
            state["pending"] = [other for other in behind if other != key]
        else:
            if key not in state["acted_since_full_raise"]:
                state["acted_since_full_raise"].append(key)
            if reopened == "short":
                state["pending"] = [other for other in behind
                                    if state["players"][other]["street_contribution"] < state["current_bet"]]
            else:
                state["pending"] = [other for other in state["pending"] if other != key and other in behind]
        if state["pending"]:
            state["current_player"] = state["pending"][0]
            return {"state": state, "events": events}
        return self.next_street(state, events)

    def next_street(self, state, events):
        if state["street"] == "river":
            return self.showdown(state, events)
        self.turn_card(state, events)
        state.update(current_bet=0, last_full_raise=self.setting("big_blind"), acted_since_full_raise=[])
        for player in state["players"].values():
            player["street_contribution"] = 0
        pending = can_act(state, next_in(state, state["button"], state["turn_order"]))
        if len(pending) < 2:
            return self.run_out(state, events)
        state["pending"], state["current_player"] = pending, pending[0]
        return {"state": state, "events": events}

    def turn_card(self, state, events):
        """Burn one, then deal the next street's cards face up."""
        street = STREETS[STREETS.index(state["street"]) + 1]
        cards.reveal(state["deck"], "burn", 1)
        shown = cards.reveal(state["deck"], "board", REVEALED[street])
        state["street"] = street
        events.append({"kind": "holdem_street", "street": street, "cards": shown})

    def run_out(self, state, events):
        """Nobody can bet any more: the rest of the board, then the showdown."""
        state["pending"], state["current_player"] = [], ""
        while state["street"] != "river":
            self.turn_card(state, events)
        return self.showdown(state, events)

    def showdown(self, state, events):
        board = cards.zone(state["deck"], "board")
        ranks = {}
        for key in in_hand(state):
            hole = cards.hand(state["deck"], key)
            ranks[key] = hand_rank(hole + board)
            state["showdown_hands"][key] = {"cards": hole, "category": category(ranks[key]),
                                            "rank": ranks[key]}
        excess = uncalled_excess(state["contributions"])
        if excess:
            key, amount = excess
            state["contributions"][key] -= amount
            state["uncalled_refunds"][key] = amount
            state["players"][key]["stack"] += amount
            state["players"][key]["total_contribution"] -= amount
        folded = {key for key, player in state["players"].items() if player["folded"]}
        from_button = clockwise_from(state, next_in(state, state["button"], state["turn_order"]))
        for index, pot in enumerate(side_pots(state["contributions"], folded)):
            best = max(ranks[key] for key in pot["eligible"])
            winners = [key for key in pot["eligible"] if ranks[key] == best]
            share, odd = divmod(pot["amount"], len(winners))
            odd_chips = [key for key in from_button if key in winners][:odd]
            for key in winners:
                state["players"][key]["stack"] += share + (key in odd_chips)
            state["pot_results"].append({"pot_index": index, "amount": pot["amount"],
                                         "eligible": pot["eligible"], "winners": winners,
                                         "share": share, "odd_chips": odd_chips})
        events.append({"kind": "holdem_showdown", "hands": state["showdown_hands"],
                       "pots": state["pot_results"], "uncalled_refunds": state["uncalled_refunds"]})
        return self.end_hand(state, events)

    def award_uncontested(self, state, winner, events):
        amount = sum(state["contributions"].values())
        state["players"][winner]["stack"] += amount
        state["pot_results"] = [{"pot_index": 0, "amount": amount, "eligible": [winner],
                                 "winners": [winner], "share": amount, "odd_chips": []}]
        state["pending"], state["current_player"] = [], ""
        events.append({"kind": "holdem_uncontested", "winner": winner, "amount": amount})
        return self.end_hand(state, events)

    def end_hand(self, state, events):
        """The hand is scored: the match ends, or the button moves on and the next hand starts."""
        stacks = {key: player["stack"] for key, player in state["players"].items()}
        playable = [key for key in state["turn_order"] if stacks[key] > 0 and key not in state["away"]]
        if state["hand_number"] >= self.setting("max_hands") or len(playable) <= 1:
            return self.end_match(state, events, stacks)
        seats = {key: player["seat"] for key, player in state["players"].items()}
        following = self.deal_hand(seats, stacks, state["away"], number=state["hand_number"] + 1,
                                   button=state["button_index"] + 1, restarts=state["restart_count"],
                                   notice=state["recovery_notice"])
        events.append({"kind": "holdem_hand_started", "hand_number": following["hand_number"],
                       "button": following["button"]})
        if following["phase"] == "completed":  # the blinds put every seat all-in and it ran out
            return {"state": following, "events": events, "completed": True,
                    "outcome": following["winner"]}
        return {"state": following, "events": events}

    def end_match(self, state, events, stacks):
        order = state["turn_order"]
        winner = max(order, key=lambda key: (stacks[key], -order.index(key)))
        state.update(phase="completed", pending=[], current_player="", winner=winner)
        events.append({"kind": "holdem_match_complete", "winner": winner, "stacks": stacks})
        return {"state": state, "events": events, "completed": True, "outcome": winner}

    # -- members come and go ---------------------------------------------------------------

    def proto_group_member_joined(self, state, member):
        return member_back(state, member)

    def proto_group_member_left(self, state, member, reason):
        """The seat sits out from now on; if it is still in the hand, it folds."""
        key = member["public_key"]
        events, newly = member_gone(state, member, reason)
        if not newly:
            return {"state": state, "events": events}
        player = state["players"][key]
        if state["phase"] != "betting" or player["folded"] or player["all_in"]:
            return {"state": state, "events": events}
        player["folded"] = True
        result = self.after_action(state, key, "fold", "")
        return {"state": result["state"], "events": events + result["events"],
                **{k: v for k, v in result.items() if k in ("completed", "outcome")}}

    def proto_group_on_leader_changed(self, state, old_leader, new_leader):
        return leader_changed(state, old_leader, new_leader, redone="the interrupted hand was refunded",
                              kind="hand_restarted_after_leader_change", counter="hand_number")

    def proto_group_recovery_snapshot(self, state):
        return {"hand_number": state["hand_number"], "button_index": state["button_index"],
                "restart_count": state["restart_count"],
                "hand_start_stacks": state["hand_start_stacks"],
                "seats": {key: player["seat"] for key, player in state["players"].items()}}

    def proto_group_restore(self, checkpoint, members, new_epoch):
        """The interrupted hand is refunded and dealt afresh; a seat whose member has not come
        back to the new leader sits out with its stack."""
        seats, away = seats_after_failover(checkpoint, members)
        start = self.setting("starting_stack")
        stacks = {key: int(checkpoint.get("hand_start_stacks", {}).get(key, start)) for key in seats}
        return self.deal_hand(seats, stacks, away, number=int(checkpoint.get("hand_number", 1)),
                              button=int(checkpoint.get("button_index", 0)),
                              restarts=int(checkpoint.get("restart_count", 0)) + 1,
                              notice="The interrupted hand was refunded and redealt after a Leader change.")

    # -- what a seat sees ------------------------------------------------------------------

    def proto_group_view(self, state, viewer):
        key = viewer["public_key"]
        player = state["players"].get(key)
        owed = to_call(state, key) if player else 0
        board = cards.zone(state["deck"], "board")
        return {
            **{name: state[name] for name in (
                "phase", "street", "hand_number", "restart_count", "recovery_notice", "turn_order",
                "players", "button", "small_blind_player", "big_blind_player", "current_player",
                "current_bet", "last_full_raise")},
            "pot_total": sum(state["contributions"].values()),
            "contributions": state["contributions"],
            "board": board,
            "board_count": len(board),
            "my_hand": cards.hand(state["deck"], key),
            "hand_counts": {seat: len(state["deck"]["hands"].get(seat, [])) for seat in state["turn_order"]},
            **{name: state[name] for name in ("action_log", "showdown_hands", "pot_results", "uncalled_refunds")},
            "legal": {
                "to_call": owed,
                "min_raise_to": state["current_bet"] + state["last_full_raise"],
                "max_to": player["street_contribution"] + player["stack"] if player else 0,
                "can_raise": bool(player) and key not in state["acted_since_full_raise"]
                and player["stack"] > owed,
            },
            "you": {"public_key": key, "seat": viewer["seat"]},
        }

    # -- the table as a person sees it ---------------------------------------------------------

    def proto_group_table(self, view, member, events):
        """The display model (`aigenora.proto.table_view`) of a seat's view."""
        names = table_view.seat_names(view)
        me, legal = view["you"]["public_key"], view["legal"]
        roles = {view["button"]: "dealer", view["small_blind_player"]: "small blind",
                 view["big_blind_player"]: "big blind"}
        seats = []
        for key in view["turn_order"]:
            player = view["players"][key]
            facts = [table_view.fact("stack", player["stack"]), table_view.fact("bet", player["street_contribution"])]
            facts += [table_view.fact(word, "yes") for word in ("folded", "all_in") if player[word]]
            if key in roles:
                facts.append(table_view.fact("role", roles[key]))
            shown = view["my_hand"] if key == me else view["showdown_hands"].get(key, {}).get("cards", [])
            seats.append(table_view.view_seat(view, key, names, facts, shown))
        asked = f"call {legal['to_call']}, raise or fold" if legal["to_call"] else "check or bet"
        return table_view.table(
            "Texas Hold'em", f"hand {view['hand_number']}, {view['street']}", table_view.turn_words(view, names, asked),
            seats, centre=[table_view.pile("Board", table_view.cards(view["board"]))],
            facts=[table_view.fact("pot", view["pot_total"]), table_view.fact("to call", view["current_bet"])],
            score=[table_view.fact(names[key], view["players"][key]["stack"]) for key in view["turn_order"]],
            log=table_view.log(events, names))

    # -- a seat that plays by itself -------------------------------------------------------

    def proto_group_autoplay(self, view, member):
        me = view["you"]["public_key"]
        if view["phase"] != "betting" or view["current_player"] != me:
            return None
        return choose(view, me)

    # -- a person's choices ----------------------------------------------------------------

    def proto_group_choices(self, view, member):
        return betting_choices(view)


def choose(view: dict, me: str) -> dict:
    """A legal, sensible action: raise a strong hand, call when the equity beats the pot odds,
    check when it is free, else fold."""
    legal = view["legal"]
    rivals = sum(1 for key, player in view["players"].items() if key != me and not player["folded"])
    strength = equity(view["my_hand"], view["board"], rivals, view["hand_number"])
    owed, pot = legal["to_call"], view["pot_total"]
    if legal["can_raise"] and strength > 0.5 + 0.1 * rivals / 3:
        if legal["min_raise_to"] >= legal["max_to"]:
            return {"kind": "all_in"}
        target = max(legal["min_raise_to"], view["current_bet"] + pot // 2)
        return {"kind": "raise" if view["current_bet"] else "bet", "amount": min(target, legal["max_to"])}
    if not owed:
        return {"kind": "check"}
    if strength >= owed / (pot + owed):
        return {"kind": "call"}
    return {"kind": "fold"}


def betting_choices(view: dict) -> list:
    """Every legal action of the seat to act, from the `legal` its view carries (what the
    leader's fold, check, call, wager and all_in accept): fold; check or call; a bet or raise
    to any total from the full raise to all the seat has; all in."""
    me = view["you"]["public_key"]
    if view["phase"] != "betting" or view["current_player"] != me:
        return []
    legal, current = view["legal"], view["current_bet"]
    owed = legal["to_call"]
    options = [choice("Fold", {"kind": "fold"}),
               choice(f"Call {owed}", {"kind": "call"}) if owed else choice("Check", {"kind": "check"})]
    if legal["can_raise"] and legal["min_raise_to"] < legal["max_to"]:
        kind = "raise" if current else "bet"
        options.append(choice(f"{kind.capitalize()} to", {"kind": kind},
                              ("amount", legal["min_raise_to"], legal["max_to"])))
    if legal["can_raise"] or legal["max_to"] <= current:
        options.append(choice(f"All in ({legal['max_to']})", {"kind": "all_in"}))
    return options


def equity(hole: list, board: list, rivals: int, salt: int) -> float:
    """The share of pots this hand wins against `rivals` random hands, from SAMPLES deals of
    the unseen cards (seeded by the cards, so the same spot plays the same way)."""
    known = {(card["suit"], card["rank"]) for card in hole + board}
    unseen = [face for face in cards.standard_faces() if (face["suit"], face["rank"]) not in known]
    draw = random.Random(f"{sorted(known)}:{salt}")
    won = 0.0
    for _ in range(SAMPLES):
        dealt = draw.sample(unseen, 5 - len(board) + 2 * rivals)
        full_board = board + dealt[:5 - len(board)]
        mine = hand_rank(hole + full_board)
        others = [hand_rank(dealt[5 - len(board) + 2 * i:][:2] + full_board) for i in range(rivals)]
        best = max(others, default=mine)
        if mine > best:
            won += 1
        elif mine == best:
            won += 1 / (1 + sum(other == mine for other in others))
    return won / SAMPLES


# -- the betting order -----------------------------------------------------------------------


def to_call(state: dict, key: str) -> int:
    return max(0, state["current_bet"] - state["players"][key]["street_contribution"])


def put_in(state: dict, key: str, amount: int) -> None:
    """Chips from a seat's stack into the pot (at most what it has; all of it makes it all-in)."""
    player = state["players"][key]
    amount = min(amount, player["stack"])
    player["stack"] -= amount
    player["street_contribution"] += amount
    player["total_contribution"] += amount
    state["contributions"][key] += amount
    if not player["stack"]:
        player["all_in"] = True


def clockwise_from(state: dict, first: str) -> list:
    order = state["turn_order"]
    at = order.index(first)
    return order[at:] + order[:at]


def next_in(state: dict, key: str, among: list) -> str:
    """The next seat clockwise after `key` that is in `among`."""
    return next(other for other in clockwise_from(state, key)[1:] + [key] if other in among)


def can_act(state: dict, first: str) -> list:
    """Seats still able to bet (in the hand, not all-in), clockwise from `first`."""
    return [key for key in clockwise_from(state, first)
            if not state["players"][key]["folded"] and not state["players"][key]["all_in"]]


def in_hand(state: dict) -> list:
    return [key for key in state["turn_order"] if not state["players"][key]["folded"]]
