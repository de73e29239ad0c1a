"""Contract Bridge (the network's contract-bridge-v1 contract), run by a room's leader: one
duplicate board for four fixed seats, North (seat 0), East, South and West, North-South
against East-West. The board's number sets its dealer and vulnerability as on a duplicate
board; the auction, declarer and dummy, thirteen tricks and duplicate scoring follow the laws.

Actions, from the seat whose turn it is: in the auction `{"kind": "pass" | "double" |
"redouble"}` or `{"kind": "bid", "level": 1-7, "denomination": "clubs" | "diamonds" |
"hearts" | "spades" | "nt"}`; in the play `{"kind": "play", "card_id": ...}`, declarer
sending dummy's cards too. The leader refuses, with its reason, anything out of turn, a bid
that does not outrank the last one, a double of no bid or of one's own side, a redouble of
anything but the opponents' double, a card not in the hand to play, and a card off the led
suit while the hand holds it. Four passes pass the board out; three passes after a bid set the
contract.

The deck is shuffled from a seed only the leader holds (`deal_seed` pins it for tests). A
member's view has its own thirteen cards, dummy's once the opening lead is made, the auction,
the tricks and the score; never another hand. Checkpoints keep the board number, the restarts,
the score and the seats, so a new leader redeals the same board (`restart_round`). A seat whose
member is gone is played by the leader's automatic player until it comes back, so the board
always reaches its end.

`proto_group_autoplay` bids by high card points (open the longest suit with 12, 1NT with a
balanced 15-17, raise partner with support, respond in a new suit or no-trump with 6) and plays
the cards simply: follow suit, win as cheaply as it can unless partner is already winning,
otherwise throw its lowest card."""
from __future__ import annotations

from collections import Counter

from aigenora.proto import deck as cards
from aigenora.proto import tricks
from aigenora.proto.hooks import ProtocolHooks
from aigenora.proto.options import whole_option
from aigenora.proto.seat_choices import card_label, choice
from aigenora.proto.table_seats import StandIns, leader_changed, seats_after_failover
from aigenora.proto.fair_deal import dealing, fair_deals
from aigenora.proto import table_view

DENOMINATIONS = ("clubs", "diamonds", "hearts", "spades", "nt")
COMPASS = ("north", "east", "south", "west")
# Who is vulnerable on boards 1-16 (the cycle repeats from board 17).
VULNERABILITY = ("none", "ns", "ew", "both", "ns", "ew", "both", "none",
                 "ew", "both", "none", "ns", "both", "none", "ns", "ew")
CALLS = ("pass", "bid", "double", "redouble")
DENOMINATION_SIGN = {"clubs": "♣", "diamonds": "♦", "hearts": "♥", "spades": "♠", "nt": "NT"}
HONOURS = {14: 4, 13: 3, 12: 2, 11: 1}
MAJORS = ("hearts", "spades")
TRICKS = 13


@fair_deals
class Hooks(StandIns, ProtocolHooks):
    SUPPORTED_CONTROL_MODES = ("autonomous", "hybrid", "human")

    def proto_host_metadata(self):
        return ("Contract Bridge", "game,cards,multiplayer,bridge,partnership", "supply", {})

    # -- the board -------------------------------------------------------------------------

    def proto_group_initial_state(self, members):
        seated = [m for m in members if m.get("status") == "active"]
        if len(seated) != 4:
            raise ValueError("Contract Bridge needs exactly four seated members")
        seats = {m["public_key"]: int(m["seat"]) for m in seated}
        return self.deal_board(seats, [], number=whole_option(self.options, "board_number", 1, 1, 32),
                               scores={"ns": 0, "ew": 0}, restarts=0, notice="")

    @dealing("number", "restarts")
    def deal_board(self, seats, away, *, number, scores, restarts, notice, seed):
        """Thirteen cards to every seat, one at a time from the dealer's left; the dealer calls first."""
        if sorted(seats.values()) != [0, 1, 2, 3]:
            raise ValueError("Contract Bridge needs one member in each of seats 0-3")
        order = sorted(seats, key=seats.get)
        deck = cards.new_deck(cards.standard_faces(), seed)
        dealer = order[(number - 1) % 4]
        for _ in range(TRICKS):
            for key in clockwise(order, next_key(order, dealer)):
                cards.deal(deck, key, 1)
        for held in deck["hands"].values():
            held.sort(key=lambda card_id: sort_key(deck["catalog"][card_id]))
        return {
            "phase": "auction", "board_number": number, "restart_count": restarts,
            "recovery_notice": notice,
            "players": {key: {"seat": seats[key], "compass": COMPASS[seats[key]],
                              "partnership": side_of_seat(seats[key])} for key in order},
            "turn_order": order, "dealer": dealer, "vulnerability": VULNERABILITY[(number - 1) % 16],
            "current_player": dealer, "current_hand_owner": "", "auction": [], "last_bid": None,
            "doubled": 0, "contract": None, "declarer": "", "dummy": "", "dummy_revealed": False,
            "current_trick": [], "trick_history": [], "tricks": {"ns": 0, "ew": 0},
            "scores": scores, "away": away, "deck": deck,
        }

    def proto_group_handle(self, state, actor, action):
        result = self.apply(state, actor["public_key"], action)
        return self.substitute(result)

    def apply(self, state, key, action):
        """One action of the seat `key`, checked against every rule before anything changes."""
        if state["phase"] == "completed":
            raise ValueError("the board is complete")
        if state["phase"] == "auction":
            if key != state["current_player"]:
                raise ValueError(f"not your turn: {compass_of(state, state['current_player'])} calls now")
            return self.call(state, key, action)
        return self.play(state, key, action)

    # -- the auction -----------------------------------------------------------------------

    def call(self, state, key, action):
        kind = action.get("kind")
        if kind not in CALLS:
            raise ValueError("the auction takes pass, bid, double or redouble")
        entry = {"public_key": key, "seat": state["players"][key]["seat"], "kind": kind}
        if kind == "bid":
            entry.update(checked_bid(state, action))
            state["last_bid"], state["doubled"] = dict(entry), 0
        elif kind != "pass":
            check_double(state, key, kind)
            state["doubled"] = CALLS.index(kind) - 1
        state["auction"].append(entry)
        events = [{"kind": "bridge_call", **entry}]
        passes = trailing_passes(state["auction"])
        if state["last_bid"] is None and passes == 4:
            state.update(phase="completed", current_player="")
            events.append({"kind": "board_passed_out"})
            return {"state": state, "events": events, "completed": True, "outcome": "passed_out"}
        if state["last_bid"] is not None and passes == 3:
            self.set_contract(state)
            events.append({"kind": "contract_set", "contract": dict(state["contract"]),
                           "declarer": state["declarer"], "dummy": state["dummy"]})
            return {"state": state, "events": events}
        state["current_player"] = next_key(state["turn_order"], key)
        return {"state": state, "events": events}

    def set_contract(self, state):
        """Declarer is the first of the winning side to name the final denomination; the
        player on declarer's left leads."""
        final = state["last_bid"]
        side = side_of(state, final["public_key"])
        declarer = next(entry["public_key"] for entry in state["auction"]
                        if entry["kind"] == "bid" and entry["denomination"] == final["denomination"]
                        and side_of(state, entry["public_key"]) == side)
        order = state["turn_order"]
        leader = next_key(order, declarer)
        state.update(phase="playing", declarer=declarer, dummy=next_key(order, leader),
                     current_hand_owner=leader, current_player=leader,
                     contract={"level": final["level"], "denomination": final["denomination"],
                               "doubled": state["doubled"], "partnership": side})

    # -- the play --------------------------------------------------------------------------

    def play(self, state, key, action):
        if action.get("kind") != "play":
            raise ValueError("the play takes only play")
        owner = state["current_hand_owner"]
        if key != controller(state, owner):
            if key == state["dummy"]:
                raise ValueError("dummy does not play: declarer plays dummy's cards")
            raise ValueError(f"not your turn: {compass_of(state, owner)} plays now")
        card_id = action.get("card_id")
        held = state["deck"]["hands"][owner]
        if not isinstance(card_id, str) or card_id not in held:
            raise ValueError(f"card_id is not a card in {compass_of(state, owner)}'s hand")
        hand = cards.cards(state["deck"], held)
        led = [entry["card"] for entry in state["current_trick"]]
        tricks.check_follows(hand, next(c for c in hand if c["card_id"] == card_id), led)
        card = cards.play(state["deck"], owner, card_id, "played")
        entry = {"public_key": key, "hand_owner": owner, "seat": state["players"][owner]["seat"],
                 "card": card}
        state["current_trick"].append(entry)
        events = [{"kind": "bridge_card_played", **entry}]
        if not state["dummy_revealed"]:
            state["dummy_revealed"] = True
            events.append({"kind": "dummy_revealed", "dummy": state["dummy"]})
        if len(state["current_trick"]) < 4:
            return self.turn_to(state, next_key(state["turn_order"], owner), events)
        return self.close_trick(state, events)

    def turn_to(self, state, owner, events):
        state["current_hand_owner"], state["current_player"] = owner, controller(state, owner)
        return {"state": state, "events": events}

    def close_trick(self, state, events):
        played = state["current_trick"]
        trump = state["contract"]["denomination"]
        won = played[tricks.winner([entry["card"] for entry in played], None if trump == "nt" else trump)]
        winner = won["hand_owner"]
        side = side_of(state, winner)
        state["tricks"][side] += 1
        state["trick_history"].append({"number": len(state["trick_history"]) + 1, "winner": winner,
                                       "cards": played})
        state["current_trick"] = []
        events.append({"kind": "bridge_trick_won", "winner": winner, "partnership": side,
                       "trick_number": len(state["trick_history"])})
        if len(state["trick_history"]) == TRICKS:
            return self.score_board(state, events)
        return self.turn_to(state, winner, events)

    def score_board(self, state, events):
        contract = state["contract"]
        side = contract["partnership"]
        taken = state["tricks"][side]
        score = board_score(contract["level"], contract["denomination"], contract["doubled"], taken,
                            state["vulnerability"] in (side, "both"))
        state["scores"][side if score >= 0 else other_side(side)] += abs(score)
        outcome = f"{side}_{'made' if score >= 0 else 'down'}"
        state.update(phase="completed", current_player="", current_hand_owner="")
        events.append({"kind": "bridge_board_complete", "outcome": outcome, "contract_score": score,
                       "tricks": taken, "scores": dict(state["scores"])})
        return {"state": state, "events": events, "completed": True, "outcome": outcome}

    # -- members come and go ---------------------------------------------------------------

    def stand_in(self, view, key):
        """An away seat's action (`StandIns`): a member acts at least once in every trick, so
        one action's chain stays within a few moves."""
        return choose(view, key)

    def proto_group_on_leader_changed(self, state, old_leader, new_leader):
        return leader_changed(state, old_leader, new_leader, redone="the private board was redealt",
                              kind="board_restarted_after_leader_change", counter="board_number")

    def proto_group_recovery_snapshot(self, state):
        return {"board_number": state["board_number"], "restart_count": state["restart_count"],
                "scores": dict(state["scores"]),
                "seats": {key: player["seat"] for key, player in state["players"].items()}}

    def proto_group_restore(self, checkpoint, members, new_epoch):
        """The interrupted board is thrown in and the same board dealt afresh, the score kept;
        a seat whose member has not come back to the new leader is played for it."""
        seats, away = seats_after_failover(checkpoint, members)
        scores = checkpoint.get("scores", {})
        state = self.deal_board(seats, away,
                                number=int(checkpoint.get("board_number", 1)),
                                scores={side: int(scores.get(side, 0)) for side in ("ns", "ew")},
                                restarts=int(checkpoint.get("restart_count", 0)) + 1,
                                notice="The previous private board was discarded after a Leader change.")
        return self.substitute({"state": state, "events": []})["state"]

    # -- what a seat sees ------------------------------------------------------------------

    def proto_group_view(self, state, viewer):
        key = viewer["public_key"]
        deck = state["deck"]
        dummy = cards.hand(deck, state["dummy"]) if state["dummy_revealed"] else []
        mine = cards.hand(deck, key)
        at_dummy = state["phase"] == "playing" and state["current_hand_owner"] == state["dummy"]
        return {
            **{name: state[name] for name in (
                "phase", "board_number", "restart_count", "recovery_notice", "players", "turn_order",
                "dealer", "vulnerability", "current_player", "current_hand_owner", "auction",
                "last_bid", "doubled", "contract", "declarer", "dummy", "dummy_revealed")},
            "dummy_hand": dummy,
            **{name: state[name] for name in ("current_trick", "trick_history", "tricks", "scores")},
            "my_hand": mine,
            "playable_hand": dummy if at_dummy and key == state["declarer"] else mine,
            "hand_counts": {owner: len(held) for owner, held in deck["hands"].items()},
            "you": {"public_key": key, "seat": viewer["seat"], "compass": COMPASS[int(viewer["seat"])],
                    "partnership": side_of_seat(int(viewer["seat"]))},
        }

    # -- the table as a person sees it ---------------------------------------------------------

    def proto_group_table(self, view, member, events):
        """The display model (`aigenora.proto.table_view`) of a seat's view: the dummy's hand
        shown once it is down."""
        names = table_view.seat_names(view, lambda key, player: player["compass"].title())
        me = view["you"]["public_key"]
        seats = []
        for key in view["turn_order"]:
            player = view["players"][key]
            shown = view["my_hand"] if key == me else view["dummy_hand"] if key == view["dummy"] else []
            facts = [table_view.fact("side", player["partnership"].upper())]
            facts += [table_view.fact("role", role) for role, holder in
                      (("dealer", view["dealer"]), ("declarer", view["declarer"]), ("dummy", view["dummy"])) if holder == key]
            seats.append(table_view.view_seat(view, key, names, facts, shown))
        bids = ", ".join(call_words(call, names) for call in view["auction"][-8:])
        trick = [entry["card"] for entry in view["current_trick"]]
        contract = view["contract"]
        facts = [table_view.fact("contract", contract_words(contract)) if contract else
                 table_view.fact("last bid", call_words(view["last_bid"], names) if view["last_bid"] else "none"),
                 table_view.fact("vulnerable", view["vulnerability"])]
        asked = "bid, pass or double" if view["phase"] == "auction" else "play a card"
        if view["current_hand_owner"] and view["current_hand_owner"] != view["current_player"]:
            asked = f"play a card from {names[view['current_hand_owner']]}"
        return table_view.table(
            "Contract Bridge", f"board {view['board_number']}, {view['phase']}",
            table_view.turn_words(view, names, asked), seats,
            centre=[table_view.pile("Auction", text=bids), table_view.pile("Trick", table_view.cards(trick))],
            facts=facts,
            score=[table_view.fact(f"{side.upper()} tricks", view["tricks"][side]) for side in ("ns", "ew")]
            + [table_view.fact(f"{side.upper()} score", view["scores"][side]) for side in ("ns", "ew")],
            log=table_view.log(events, names))

    # -- a seat that plays by itself -------------------------------------------------------

    def proto_group_autoplay(self, view, member):
        me = view["you"]["public_key"]
        if view["phase"] == "completed" or view["current_player"] != me:
            return None
        return choose(view, me)

    # -- a person's choices ----------------------------------------------------------------

    def proto_group_choices(self, view, member):
        me = view["you"]["public_key"]
        if view["phase"] == "completed" or view["current_player"] != me:
            return []
        if view["phase"] == "auction":
            return call_choices(view, me)
        trick = [entry["card"] for entry in view["current_trick"]]
        return [choice(f"Play {card_label(card)}", {"kind": "play", "card_id": card["card_id"]})
                for card in tricks.playable(view["playable_hand"], trick)]


def choose(view: dict, me: str) -> dict:
    if view["phase"] == "auction":
        return choose_call(view, me)
    return {"kind": "play", "card_id": choose_card(view)["card_id"]}


# -- bidding -----------------------------------------------------------------------------------


def choose_call(view: dict, me: str) -> dict:
    """A call from a simple natural system, always a legal one."""
    hand = view["my_hand"]
    points = sum(HONOURS.get(card["rank"], 0) for card in hand)
    length = Counter(card["suit"] for card in hand)
    side = view["players"][me]["partnership"]
    ours = [(at, c) for at, c in enumerate(view["auction"])
            if c["kind"] == "bid" and view["players"][c["public_key"]]["partnership"] == side]
    mine = [c for at, c in ours if c["public_key"] == me]
    partners = [c for at, c in ours if c["public_key"] != me]
    partner_spoke_last = bool(ours) and ours[-1][1]["public_key"] != me
    last = view["last_bid"]
    floor = last["value"] if last else -1

    def bid(level: int, denomination: str) -> dict | None:
        if level <= 7 and bid_value(level, denomination) > floor:
            return {"kind": "bid", "level": level, "denomination": denomination}
        return None

    def cheapest(denomination: str) -> int:
        return next((level for level in range(1, 8) if bid_value(level, denomination) > floor), 8)

    longest = max(DENOMINATIONS[:4], key=lambda suit: (length[suit], DENOMINATIONS.index(suit)))
    chosen = None
    if last and view["doubled"] == 0 and view["players"][last["public_key"]]["partnership"] != side \
            and last["level"] >= 3 and points >= 15 and not ours:
        return {"kind": "double"}
    if not ours and points >= 12:
        if balanced(length) and 15 <= points <= 17:
            chosen = bid(1, "nt")
        if chosen is None and cheapest(longest) <= 2:
            chosen = bid(cheapest(longest), longest)
    elif partners and not mine and points >= 6:
        chosen = respond(partners[-1], points, length, longest, bid, cheapest)
    elif mine and partner_spoke_last:
        chosen = rebid(mine[-1], partners[-1], points, length, bid, cheapest)
    return chosen or {"kind": "pass"}


def respond(partner: dict, points: int, length: Counter, longest: str, bid, cheapest) -> dict | None:
    """The first call facing partner's bid: raise with support, else show a suit or no-trump."""
    denomination = partner["denomination"]
    combined = points + (15 if denomination == "nt" and partner["level"] == 1 else 12)
    if denomination == "nt":
        return bid(3, "nt") if combined >= 25 else bid(2, "nt") if combined >= 23 else None
    if length[denomination] >= (3 if denomination in MAJORS else 4):
        game = 4 if denomination in MAJORS else 5
        target = game if combined >= (25 if denomination in MAJORS else 28) else 3 if combined >= 22 else 2
        return bid(target, denomination)
    if length[longest] >= 4 and (cheapest(longest) == 1 or (cheapest(longest) == 2 and points >= 10)):
        return bid(cheapest(longest), longest)
    if combined >= 25:
        return bid(3, "nt")
    return bid(1, "nt")


def rebid(own: dict, partner: dict, points: int, length: Counter, bid, cheapest) -> dict | None:
    """Opener's next call: game with extra values after a raise, support for partner's suit,
    or a long suit again; otherwise pass."""
    denomination = partner["denomination"]
    if denomination == own["denomination"]:
        game = 3 if denomination == "nt" else 4 if denomination in MAJORS else 5
        return bid(game, denomination) if points >= 16 and partner["level"] < game else None
    if denomination == "nt":
        return bid(3, "nt") if points >= 16 and partner["level"] < 3 else None
    if length[denomination] >= 4 and cheapest(denomination) <= 3:
        return bid(cheapest(denomination), denomination)
    if own["denomination"] != "nt" and length[own["denomination"]] >= 6 and cheapest(own["denomination"]) <= 2:
        return bid(cheapest(own["denomination"]), own["denomination"])
    return None


def balanced(length: Counter) -> bool:
    counts = [length[suit] for suit in DENOMINATIONS[:4]]
    return min(counts) >= 2 and counts.count(2) <= 1


# -- card play ---------------------------------------------------------------------------------


def choose_card(view: dict) -> dict:
    """Lead low from the longest side suit (the ace when it heads it); follow low when partner
    is winning; else win as cheaply as possible; else throw the lowest card, trumps last."""
    owner = view["current_hand_owner"]
    trick = [entry["card"] for entry in view["current_trick"]]
    legal = tricks.playable(view["playable_hand"], trick)
    trump = view["contract"]["denomination"]

    def cost(card: dict) -> tuple:
        return (card["suit"] == trump, card["rank"])

    if not trick:
        side_suits = [c for c in legal if c["suit"] != trump] or legal
        suit_length = Counter(card["suit"] for card in side_suits)
        suit = max(suit_length, key=lambda s: (suit_length[s], DENOMINATIONS.index(s)))
        run = sorted((c for c in side_suits if c["suit"] == suit), key=lambda c: c["rank"])
        return run[-1] if run[-1]["rank"] == 14 else run[0]
    trumps = None if trump == "nt" else trump
    leading = view["current_trick"][tricks.winner(trick, trumps)]["hand_owner"]
    side = view["players"][owner]["partnership"]
    if view["players"][leading]["partnership"] != side:
        beaters = [c for c in legal if tricks.winner(trick + [c], trumps) == len(trick)]
        if beaters:
            return min(beaters, key=cost)
    return min(legal, key=cost)


# -- the rules as functions --------------------------------------------------------------------


def call_choices(view: dict, me: str) -> list:
    """The calls open to the seat in the auction, by the leader's own checks: pass, a double
    or redouble where check_double allows it, and every bid that outranks the last one."""
    options = [choice("Pass", {"kind": "pass"})]
    for kind in ("double", "redouble"):
        try:
            check_double(view, me, kind)
        except ValueError:
            continue
        options.append(choice(kind.capitalize(), {"kind": kind}))
    floor = view["last_bid"]["value"] if view["last_bid"] else -1
    options += [choice(f"Bid {level}{DENOMINATION_SIGN[denomination]}",
                       {"kind": "bid", "level": level, "denomination": denomination})
                for level in range(1, 8) for denomination in DENOMINATIONS
                if bid_value(level, denomination) > floor]
    return options


def bid_value(level: int, denomination: str) -> int:
    """Bids in rank order: 1C lowest, 7NT highest."""
    return (level - 1) * len(DENOMINATIONS) + DENOMINATIONS.index(denomination)


def checked_bid(state: dict, action: dict) -> dict:
    level, denomination = action.get("level"), action.get("denomination")
    if not isinstance(level, int) or isinstance(level, bool) or not 1 <= level <= 7 \
            or denomination not in DENOMINATIONS:
        raise ValueError("a bid needs a level from 1 to 7 and a denomination: "
                         "clubs, diamonds, hearts, spades or nt")
    value = bid_value(level, denomination)
    last = state["last_bid"]
    if last and value <= last["value"]:
        raise ValueError(f"a bid must outrank {last['level']} {last['denomination']}")
    return {"level": level, "denomination": denomination, "value": value}


def check_double(state: dict, key: str, kind: str) -> None:
    """A double needs the opponents' bid as the last call that was not a pass; a redouble,
    the opponents' double of this side's bid."""
    last_call = next((c for c in reversed(state["auction"]) if c["kind"] != "pass"), None)
    wanted = "bid" if kind == "double" else "double"
    if last_call is None or last_call["kind"] != wanted:
        raise ValueError(f"{kind} is not legal now: there is no {wanted} to {kind}")
    if side_of(state, last_call["public_key"]) == side_of(state, key):
        raise ValueError(f"{kind} is not legal now: you cannot {kind} your own side's {wanted}")


def trailing_passes(auction: list) -> int:
    count = 0
    for entry in reversed(auction):
        if entry["kind"] != "pass":
            break
        count += 1
    return count


TRICK_POINTS = {"clubs": 20, "diamonds": 20, "hearts": 30, "spades": 30, "nt": 30}


def board_score(level: int, denomination: str, doubled: int, taken: int, vulnerable: bool) -> int:
    """The declaring side's duplicate score for a contract (negative when it goes down):
    `doubled` is 0, 1 (doubled) or 2 (redoubled)."""
    needed = level + 6
    if taken < needed:
        down = needed - taken
        if not doubled:
            return -down * (100 if vulnerable else 50)
        if vulnerable:
            penalty = 200 + 300 * (down - 1)
        else:  # 100, then 200 for the second and third, then 300 each
            penalty = 100 + 200 * min(down - 1, 2) + 300 * max(down - 3, 0)
        return -penalty * doubled
    points = (TRICK_POINTS[denomination] * level + (10 if denomination == "nt" else 0)) * (1, 2, 4)[doubled]
    score = points + ((500 if vulnerable else 300) if points >= 100 else 50)
    score += {6: 750 if vulnerable else 500, 7: 1500 if vulnerable else 1000}.get(level, 0)
    score += 50 * doubled
    over = taken - needed
    if doubled:
        return score + over * (200 if vulnerable else 100) * doubled
    return score + over * TRICK_POINTS[denomination]


# -- seats -------------------------------------------------------------------------------------


def side_of_seat(seat: int) -> str:
    return "ns" if seat % 2 == 0 else "ew"


def side_of(state: dict, key: str) -> str:
    return state["players"][key]["partnership"]


def other_side(side: str) -> str:
    return "ew" if side == "ns" else "ns"


def compass_of(state: dict, key: str) -> str:
    return state["players"][key]["compass"] if key else "nobody"


def controller(state: dict, owner: str) -> str:
    """Who plays a hand's cards: declarer plays dummy's."""
    return state["declarer"] if owner == state["dummy"] else owner


def next_key(order: list, key: str) -> str:
    return order[(order.index(key) + 1) % len(order)]


def clockwise(order: list, first: str) -> list:
    at = order.index(first)
    return order[at:] + order[:at]


def sort_key(card: dict) -> tuple:
    """A hand in suit order (spades first, as bridge players hold it), high cards first."""
    return (-DENOMINATIONS.index(card["suit"]), -card["rank"])


# -- the auction in words, for the table a person sees ---------------------------------------

DENOMINATION_SIGNS = {"clubs": "♣", "diamonds": "♦", "hearts": "♥", "spades": "♠", "nt": "NT"}
DOUBLINGS = ("", " doubled", " redoubled")


def call_words(call: dict, names: dict) -> str:
    """One call of the auction: "North 1♥", "East pass"."""
    said = f"{call['level']}{DENOMINATION_SIGNS[call['denomination']]}" if call["kind"] == "bid" else call["kind"]
    return f"{names[call['public_key']].split(' (')[0]} {said}"


def contract_words(contract: dict) -> str:
    """The contract: "3NT doubled by NS"."""
    return (f"{contract['level']}{DENOMINATION_SIGNS[contract['denomination']]}{DOUBLINGS[contract['doubled']]}"
            f" by {contract['partnership'].upper()}")
