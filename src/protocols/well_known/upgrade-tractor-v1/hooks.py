"""Upgrade (Tractor), the network's upgrade-tractor-v1 contract, run by a room's leader: four
fixed seats in two partnerships by seat parity (seats 0 and 2 are team0, 1 and 3 team1), two
packs with their jokers, 25 cards to each seat and an eight-card kitty, and a race of levels
from `start_level` to `target_level` over at most `max_hands` hands.

A hand: every seat declares once, in any order, `{"kind": "pass_declare"}` or
`{"kind": "declare_trump", "card_ids": [...]}` with one card of the hand's level (that suit is
trump), a pair of them, or a pair of small or big jokers (no trump suit); each declaration must
outrank the one standing, and when all pass the starter declares with no trump suit. The
winner is declarer: it takes the kitty and buries eight cards, `{"kind": "bury", "card_ids":
[...]}` (never the cards it declared with), and leads the first trick. Then `{"kind": "play",
"card_ids": [...]}` from the seat whose turn it is: a lead of one effective suit (a single, a
pair, a tractor or a throw), and followers as many cards, the led suit while they hold it, its
pairs and a tractor while they hold them (`aigenora.proto.trump_tricks`). The leader refuses,
with its reason, anything out of turn or out of phase, a second declaration, a declaration
that is not stronger, cards not in the hand, a mixed lead and a follow that breaks a rule.

Fives count 5, tens and kings 10. The defenders' points decide the hand: with 80 or more they
take control and go up one level, and one more for every 40 above 80; below 80 the declarers
keep control and go up one level (40-75), two (5-35) or three (none). When the defenders win
the last trick, the kitty's points count for them times twice the number of cards led to it.
A level never passes the target; the match ends when the side in control reaches it, or after
`max_hands` hands with the higher level winning (the side in control on a tie).

The deck is shuffled from a seed only the leader holds (`deal_seed` pins it for tests). A view
shows a seat only its own hand, the declarations, the tricks, the points and the levels; the
kitty stays hidden until the match's end. Checkpoints keep the levels, the hand number, the
side in control, the starter and the seats, so a new leader deals that hand afresh
(`restart_round`). A seat whose member is gone is played by the leader's automatic player.

`proto_group_autoplay` declares with a level pair or a level card of a long suit, buries its
cheapest side cards from its shortest suits, leads tractors, then pairs and aces of side suits,
then low cards of short suits; follows the led shape, winning a trick as cheaply as it can when
the other side holds it, ruffing a void suit for points, and giving points to its partner."""
from __future__ import annotations

from collections import Counter
from itertools import combinations

from aigenora.proto import deck as cards
from aigenora.proto.hooks import ProtocolHooks
from aigenora.proto.options import whole_option
from aigenora.proto.seat_choices import MAX_CHOICES, card_pick, cards_label, choice
from aigenora.proto.table_seats import StandIns, leader_changed, seats_after_failover
from aigenora.proto.trump_tricks import COUNTING, TRUMP, Trumps, card_points
from aigenora.proto.fair_deal import dealing, fair_deals
from aigenora.proto import table_view

HAND_SIZE = 25
KITTY = 8
TEAMS = ("team0", "team1")
STRENGTH_NAMES = {1: "a level card", 2: "a level pair", 3: "a pair of small jokers",
                  4: "a pair of big jokers"}


@fair_deals
class Hooks(StandIns, ProtocolHooks):
    SUPPORTED_CONTROL_MODES = ("autonomous", "hybrid", "human")

    def proto_host_metadata(self):
        return ("Upgrade (Tractor)", "game,cards,multiplayer,upgrade,tractor,partnership", "supply", {})

    def match_options(self) -> tuple[int, int, int]:
        start = whole_option(self.options, "start_level", 2, 2, 14)
        target = whole_option(self.options, "target_level", 14, 3, 14)
        if target <= start:
            raise ValueError("target_level must be higher than start_level")
        return start, target, whole_option(self.options, "max_hands", 16, 1, 64)

    # -- the deal ----------------------------------------------------------------------------

    def proto_group_initial_state(self, members):
        seated = [m for m in members if m.get("status") == "active"]
        if len(seated) != 4:
            raise ValueError("Upgrade needs exactly four seated members")
        start, _, _ = self.match_options()
        seats = {m["public_key"]: int(m["seat"]) for m in seated}
        return self.deal_hand(seats, [], levels={team: start for team in TEAMS}, declarer_team="team0",
                              starter=min(seats, key=seats.get), number=1, restarts=0,
                              match_points={team: 0 for team in TEAMS}, notice="", last_result=None)

    @dealing("number", "restarts")
    def deal_hand(self, seats, away, *, levels, declarer_team, starter, number, restarts,
                  match_points, notice, last_result, seed):
        """25 cards to every seat, one at a time from the starter; eight left for the kitty."""
        if sorted(seats.values()) != [0, 1, 2, 3]:
            raise ValueError("Upgrade needs one member in each of seats 0-3")
        order = sorted(seats, key=seats.get)
        faces = cards.standard_faces() + cards.joker_faces()
        deck = cards.new_deck(faces, seed, copies=2)
        for _ in range(HAND_SIZE):
            for key in clockwise(order, starter):
                cards.deal(deck, key, 1)
        state = {
            "phase": "declaration", "hand_number": number, "restart_count": restarts,
            "recovery_notice": notice,
            "players": {key: {"seat": seats[key], "team": team_of_seat(seats[key])} for key in order},
            "turn_order": order, "current_player": "", "starter": starter, "declarer": "",
            "declarer_team": declarer_team, "levels": dict(levels),
            "level_rank": levels[declarer_team], "trump_suit": None, "declarations": {},
            "winning_declaration": None, "kitty_count": KITTY, "kitty_revealed": [],
            "current_trick": [], "trick_history": [], "captured_points": {team: 0 for team in TEAMS},
            "defender_points": 0, "match_points": dict(match_points), "last_result": last_result,
            "away": away, "deck": deck,
        }
        sort_hands(state)
        return state

    def proto_group_handle(self, state, actor, action):
        return self.substitute(self.apply(state, actor["public_key"], action))

    def apply(self, state, key, action):
        """One action of the seat `key`, checked against every rule before anything changes."""
        phase = state["phase"]
        if phase == "completed":
            raise ValueError("the match is complete")
        if phase == "declaration":
            return self.declare(state, key, action)
        if key != state["current_player"]:
            doing = "buries the kitty" if phase == "bury" else "plays"
            raise ValueError(f"not your turn: seat {seat_of(state, state['current_player'])} {doing} now")
        return self.bury(state, key, action) if phase == "bury" else self.play(state, key, action)

    # -- declaring trumps ----------------------------------------------------------------------

    def declare(self, state, key, action):
        if key in state["declarations"]:
            raise ValueError("you have already declared or passed this hand")
        kind = action.get("kind")
        entry = {"kind": kind, "public_key": key, "seat": seat_of(state, key), "strength": 0}
        if kind == "declare_trump":
            chosen = held_cards(state, key, action.get("card_ids"), 1, 2)
            strength, suit = declaration(chosen, state["level_rank"])
            standing = state["winning_declaration"]
            if standing and strength <= standing["strength"]:
                raise ValueError(f"a declaration must outrank {STRENGTH_NAMES[standing['strength']]}")
            entry.update(strength=strength, trump_suit=suit, card_ids=list(action["card_ids"]),
                         cards=chosen)
            state["winning_declaration"] = dict(entry)
        elif kind != "pass_declare":
            raise ValueError("the declaration takes pass_declare or declare_trump")
        state["declarations"][key] = entry
        events = [{"kind": "upgrade_declaration", **entry}]
        if len(state["declarations"]) == 4:
            self.take_kitty(state)
            events.append({"kind": "upgrade_declarer_selected", "declarer": state["declarer"],
                           "declarer_team": state["declarer_team"], "trump_suit": state["trump_suit"],
                           "level_rank": state["level_rank"]})
        return {"state": state, "events": events}

    def take_kitty(self, state):
        """The winning declaration (or the starter, with no trump suit) makes the declarer, who
        picks up the kitty."""
        winning = state["winning_declaration"]
        declarer = winning["public_key"] if winning else state["starter"]
        state.update(declarer=declarer, declarer_team=team_of(state, declarer),
                     trump_suit=winning["trump_suit"] if winning else None,
                     phase="bury", current_player=declarer)
        cards.deal(state["deck"], declarer, KITTY)
        sort_hands(state)

    def bury(self, state, key, action):
        if action.get("kind") != "bury":
            raise ValueError("the declarer buries eight cards now (bury)")
        card_ids = action.get("card_ids")
        held_cards(state, key, card_ids, KITTY, KITTY)
        if set(card_ids) & set((state["winning_declaration"] or {}).get("card_ids", [])):
            raise ValueError("the cards that won the declaration stay in your hand")
        cards.play_many(state["deck"], key, card_ids, "kitty")
        state["phase"] = "playing"
        return {"state": state, "events": [{"kind": "upgrade_kitty_buried", "declarer": key,
                                            "count": KITTY}]}

    # -- the tricks ----------------------------------------------------------------------------

    def play(self, state, key, action):
        if action.get("kind") != "play":
            raise ValueError("the trick play takes only play")
        held = state["deck"]["hands"][key]
        chosen = held_cards(state, key, action.get("card_ids"), 1, len(held))
        rules = trumps_of(state)
        trick = state["current_trick"]
        if trick:
            rules.check_follow(cards.cards(state["deck"], held), chosen, trick[0]["shape"])
            shape = rules.follow_shape(chosen)
        else:
            shape = rules.shape(chosen)
        cards.play_many(state["deck"], key, action["card_ids"], "played")
        entry = {"public_key": key, "seat": seat_of(state, key), "team": team_of(state, key),
                 "cards": chosen, "shape": shape}
        trick.append(entry)
        events = [{"kind": "upgrade_play", **entry}]
        if len(trick) < 4:
            state["current_player"] = next_key(state["turn_order"], key)
            return {"state": state, "events": events}
        return self.close_trick(state, rules, events)

    def close_trick(self, state, rules, events):
        trick = state["current_trick"]
        winner = trick[rules.winner([entry["cards"] for entry in trick])]["public_key"]
        team = team_of(state, winner)
        points = card_points([card for entry in trick for card in entry["cards"]])
        state["captured_points"][team] += points
        if team != state["declarer_team"]:
            state["defender_points"] += points
        state["trick_history"].append({"number": len(state["trick_history"]) + 1, "winner": winner,
                                       "team": team, "points": points, "plays": trick})
        state["current_trick"] = []
        events.append({"kind": "upgrade_trick_won", "winner": winner, "team": team, "points": points,
                       "trick_number": len(state["trick_history"])})
        if any(state["deck"]["hands"][key] for key in state["turn_order"]):
            state["current_player"] = winner
            return {"state": state, "events": events}
        return self.finish_hand(state, winner, trick[0]["shape"]["count"], events)

    # -- the hand's end and the match's -------------------------------------------------------

    def finish_hand(self, state, last_winner, last_count, events):
        _, target, max_hands = self.match_options()
        kitty = cards.zone(state["deck"], "kitty")
        kitty_points, multiplier = card_points(kitty), 2 * last_count
        award = 0
        if team_of(state, last_winner) != state["declarer_team"]:
            award = kitty_points * multiplier
            state["captured_points"][team_of(state, last_winner)] += award
            state["defender_points"] += award
        declarers = state["declarer_team"]
        controlling, steps = level_change(declarers, state["defender_points"])
        levels = state["levels"]
        levels[controlling] = min(target, levels[controlling] + steps)
        for team in TEAMS:
            state["match_points"][team] += state["captured_points"][team]
        state["last_result"] = {"defender_points": state["defender_points"], "kitty_points": kitty_points,
                                "kitty_multiplier": multiplier, "kitty_award": award,
                                "controlling_team": controlling, "level_steps": steps,
                                "levels": dict(levels)}
        events.append({"kind": "upgrade_hand_complete", **state["last_result"]})
        if levels[controlling] >= target or state["hand_number"] >= max_hands:
            winner = max(TEAMS, key=lambda team: (levels[team], team == controlling))
            state.update(phase="completed", current_player="", kitty_revealed=kitty)
            events.append({"kind": "upgrade_match_complete", "winner": winner, "levels": dict(levels)})
            return {"state": state, "events": events, "completed": True, "outcome": winner}
        # The declarer's partner starts the next hand when its side holds on, else the seat
        # after the declarer, who is now in control.
        order, declarer = state["turn_order"], state["declarer"]
        starter = next_key(order, next_key(order, declarer)) if controlling == declarers \
            else next_key(order, declarer)
        following = self.deal_hand({key: player["seat"] for key, player in state["players"].items()},
                                   state["away"], levels=levels, declarer_team=controlling,
                                   starter=starter, number=state["hand_number"] + 1,
                                   restarts=state["restart_count"], match_points=state["match_points"],
                                   notice=state["recovery_notice"], last_result=state["last_result"])
        events.append({"kind": "upgrade_hand_started", "hand_number": following["hand_number"],
                       "starter": starter})
        return {"state": following, "events": events}

    # -- members come and go -----------------------------------------------------------------

    def away_to_act(self, state):
        """An away seat that must act now (`StandIns`; "" if none): any that has not declared
        yet, else the one whose turn it is."""
        if state["phase"] == "declaration":
            return next((key for key in state["away"] if key not in state["declarations"]), "")
        return super().away_to_act(state)

    def stand_in(self, view, key):
        """An away seat's action (`StandIns`): a member acts at least once in every trick."""
        return choose(view)

    def proto_group_on_leader_changed(self, state, old_leader, new_leader):
        return leader_changed(state, old_leader, new_leader, redone="the private hand was redealt",
                              kind="upgrade_hand_restarted_after_leader_change", counter="hand_number")

    def proto_group_recovery_snapshot(self, state):
        return {"hand_number": state["hand_number"], "restart_count": state["restart_count"],
                "levels": dict(state["levels"]), "declarer_team": state["declarer_team"],
                "starter": state["starter"], "match_points": dict(state["match_points"]),
                "seats": {key: player["seat"] for key, player in state["players"].items()}}

    def proto_group_restore(self, checkpoint, members, new_epoch):
        """The interrupted hand is thrown in and dealt afresh, levels and points kept; a seat
        whose member has not come back to the new leader is played for it."""
        start, target, _ = self.match_options()
        seats, away = seats_after_failover(checkpoint, members)
        levels = checkpoint.get("levels", {})
        points = checkpoint.get("match_points", {})
        declarers = checkpoint.get("declarer_team")
        starter = checkpoint.get("starter")
        state = self.deal_hand(
            seats, away, levels={team: min(target, max(start, int(levels.get(team, start)))) for team in TEAMS},
            declarer_team=declarers if declarers in TEAMS else "team0",
            starter=starter if starter in seats else min(seats, key=seats.get),
            number=int(checkpoint.get("hand_number", 1)), restarts=int(checkpoint.get("restart_count", 0)) + 1,
            match_points={team: int(points.get(team, 0)) for team in TEAMS},
            notice="The interrupted private deal and kitty were discarded after a Leader change.",
            last_result=None)
        return self.substitute({"state": state, "events": []})["state"]

    # -- what a seat sees --------------------------------------------------------------------

    def proto_group_view(self, state, viewer):
        key = viewer["public_key"]
        deck = state["deck"]
        return {
            **{name: state[name] for name in (
                "phase", "hand_number", "restart_count", "recovery_notice", "players", "turn_order",
                "current_player", "starter", "declarer", "declarer_team", "levels", "level_rank",
                "trump_suit", "declarations", "winning_declaration", "kitty_count", "kitty_revealed",
                "current_trick", "trick_history", "captured_points", "defender_points",
                "match_points")},
            "my_hand": cards.hand(deck, key),
            "hand_counts": {owner: len(held) for owner, held in deck["hands"].items()},
            "last_result": state["last_result"],
            "you": {"public_key": key, "seat": viewer["seat"], "team": team_of_seat(int(viewer["seat"])),
                    "is_declarer": key == state["declarer"]},
        }

    # -- the table as a person sees it ---------------------------------------------------------

    def proto_group_table(self, view, member, events):
        """The display model (`aigenora.proto.table_view`) of a seat's view."""
        names = table_view.seat_names(view)
        me = view["you"]["public_key"]
        seats = []
        for key in view["turn_order"]:
            player = view["players"][key]
            facts = [table_view.fact("team", player["team"])]
            if key == view["declarer"]:
                facts.append(table_view.fact("role", "declarer"))
            declaring = view["phase"] == "declaration" and key not in view["declarations"]
            seats.append(table_view.view_seat(view, key, names, facts,
                                              to_act=key == view["current_player"] or declaring))
        trick = [card for play in view["current_trick"] for card in play["cards"]]
        asked = "bury eight cards" if view["phase"] == "bury" else "play to the trick"
        turn = table_view.turn_words(view, names, asked)
        if view["phase"] == "declaration":
            turn = "Your turn: declare trump or pass" if me not in view["declarations"] else "Others declare trump or pass"
        return table_view.table(
            "Upgrade (Tractor)", f"hand {view['hand_number']}, {view['phase']}", turn, seats,
            centre=[table_view.pile("Trick", table_view.cards(trick))],
            facts=[table_view.fact("level", view["level_rank"]), table_view.fact("trump", view["trump_suit"] or "none"),
                   table_view.fact("defenders' points", view["defender_points"])],
            score=[table_view.fact(f"{team} level", level) for team, level in view["levels"].items()],
            log=table_view.log(events, names))

    # -- a seat that plays by itself ---------------------------------------------------------

    def proto_group_autoplay(self, view, member):
        me = view["you"]["public_key"]
        if view["phase"] == "completed":
            return None
        if view["phase"] == "declaration":
            return None if me in view["declarations"] else choose(view)
        return choose(view) if view["current_player"] == me else None

    # -- a person's choices --------------------------------------------------------------------

    def proto_group_choices(self, view, member):
        """The seat's legal actions, the automatic seat's first: a pass and every declaration
        that outranks the standing one; the burial, as any eight cards to pick but the ones
        that won the declaration; the leads that are a single, a pair or a tractor, and per
        suit a throw of several of its cards to pick; every follow the leader's check_follow
        allows, or when they are too many to list, the cards of a follow to pick (which the
        leader judges). At most MAX_CHOICES."""
        chosen = self.proto_group_autoplay(view, member)
        if chosen is None:
            return []
        hand = view["my_hand"]
        picks = []
        if view["phase"] == "declaration":
            found = [[]] + declarations(view)
        else:
            rules = Trumps(view["level_rank"], view["trump_suit"])
            if view["phase"] == "bury":
                found, picks = [], [burial(view)]
            elif view["current_trick"]:
                lead = view["current_trick"][0]["shape"]
                found, complete = follows(rules, hand, lead)
                if not complete:
                    picks = [card_pick(f"Play {lead['count']} cards you pick", {"kind": "play"}, hand,
                                       lead["count"], lead["count"])]
            else:
                found, picks = leads(rules, hand), throws(rules, hand)
        options, seen = [], set()
        for action in [chosen] + [action_of(view["phase"], picked) for picked in found]:
            key = frozenset(action.get("card_ids", []))
            if key not in seen and len(options) < MAX_CHOICES - len(picks):
                seen.add(key)
                options.append(choice(label_of(action, hand), action))
        return options + picks


def choose(view: dict) -> dict:
    """The automatic seat's action for its view, in any phase where it must act."""
    if view["phase"] == "declaration":
        return choose_declaration(view)
    rules = Trumps(view["level_rank"], view["trump_suit"])
    hand = view["my_hand"]
    if view["phase"] == "bury":
        return {"kind": "bury", "card_ids": ids(choose_bury(view, rules))}
    chosen = choose_follow(view, rules, hand) if view["current_trick"] else choose_lead(rules, hand)
    return {"kind": "play", "card_ids": ids(chosen)}


# -- declaring and burying -----------------------------------------------------------------------


def choose_declaration(view: dict) -> dict:
    """The strongest declaration the hand can back: a joker pair, a level pair of a suit of six
    or more, a level card of a suit of seven or more; else pass."""
    hand, level = view["my_hand"], view["level_rank"]
    standing = (view["winning_declaration"] or {}).get("strength", 0)
    length = Counter(card["suit"] for card in hand)
    by_face: dict = {}
    for card in hand:
        by_face.setdefault((card["suit"], card["rank"]), []).append(card)
    offers = []
    for (suit, rank), held in by_face.items():
        if suit == "joker" and len(held) == 2:
            offers.append((rank - 13, 0, held))
        elif rank == level and suit != "joker":
            strength = min(len(held), 2)
            if length[suit] >= 8 - strength:
                offers.append((strength, length[suit], held[:strength]))
    offers = [offer for offer in offers if offer[0] > standing]
    if not offers:
        return {"kind": "pass_declare"}
    return {"kind": "declare_trump", "card_ids": ids(max(offers, key=lambda o: (o[0], o[1]))[2])}


def choose_bury(view: dict, rules: Trumps) -> list[dict]:
    """Eight cards to bury: side cards before trumps, cards that count last, the shortest
    suits first (to void them), low before high, pairs kept."""
    kept = set((view["winning_declaration"] or {}).get("card_ids", []))
    hand = [card for card in view["my_hand"] if card["card_id"] not in kept]
    length = Counter(rules.suit_of(card) for card in hand)
    paired = {card["card_id"] for pair in rules.pairs(hand) for card in pair}
    return sorted(hand, key=lambda card: (rules.suit_of(card) == TRUMP, card["rank"] in COUNTING,
                                          card["card_id"] in paired, length[rules.suit_of(card)],
                                          rules.position(card)))[:KITTY]


# -- playing -------------------------------------------------------------------------------------


def choose_lead(rules: Trumps, hand: list[dict]) -> list[dict]:
    """A side suit's tractor, then its top pair or top card, then a side suit's lowest card
    from the shortest suit; trumps (tractor, pair, lowest) only when nothing else is left."""
    side: dict = {}
    for card in hand:
        side.setdefault(rules.suit_of(card), []).append(card)
    trumps = side.pop(TRUMP, [])
    for length in (4, 3, 2):
        found = [tractor for held in side.values() for tractor in rules.tractors(held, length)]
        if found:
            return max(found, key=lambda tractor: rules.position(tractor[-1]))
    top = rules.side_top()
    for held in side.values():
        aces = [card for card in held if rules.position(card) == top]
        if aces:
            return aces
    pairs = [pair for held in side.values() for pair in rules.pairs(held)]
    if pairs:
        return max(pairs, key=lambda pair: rules.position(pair[0]))
    if side:
        shortest = min(side.values(), key=lambda held: (len(held), min(rules.position(c) for c in held)))
        return [min(shortest, key=lambda card: (card["rank"] in COUNTING, rules.position(card)))]
    for length in (3, 2):
        found = rules.tractors(trumps, length)
        if found:
            return found[0]
    pairs = rules.pairs(trumps)
    return pairs[0] if pairs else [min(trumps, key=rules.position)]


def choose_follow(view: dict, rules: Trumps, hand: list[dict]) -> list[dict]:
    """A legal follow: the led suit's cards with the lead's pairs and tractor, winning as
    cheaply as it can while the other side holds the trick, giving points while partner
    does; out of the led suit, a ruff for points, else the cheapest cards."""
    trick = view["current_trick"]
    lead = trick[0]["shape"]
    count, suit = lead["count"], lead["suit"]
    plays = [entry["cards"] for entry in trick]
    partner_holds = trick[rules.winner(plays)]["team"] == view["you"]["team"]

    def cheap(card):
        return rules.suit_of(card) == TRUMP, card["rank"] in COUNTING, rules.position(card)

    def gift(card):
        return rules.suit_of(card) == TRUMP, -COUNTING.get(card["rank"], 0), rules.position(card)

    order = gift if partner_holds else cheap

    def best(options: list[list[dict]]) -> list[dict]:
        """The cheapest option that takes the trick from the other side, else the one
        `order` puts first."""
        if not partner_holds:
            winning = [option for option in options if rules.winner(plays + [option]) == len(plays)]
            if winning:
                return min(winning, key=lambda option: [cheap(card) for card in option])
        return min(options, key=lambda option: [order(card) for card in option])

    held = sorted((card for card in hand if rules.suit_of(card) == suit), key=order)
    others = sorted((card for card in hand if rules.suit_of(card) != suit), key=order)
    if len(held) <= count:
        short = count - len(held)
        if not held and not partner_holds and suit != TRUMP:
            ruff = ruffing(rules, [card for card in hand if rules.suit_of(card) == TRUMP], lead)
            trick_points = card_points([card for play in plays for card in play])
            if ruff and (trick_points or count > 1) and rules.winner(plays + [ruff]) == len(plays):
                return ruff
        return held + others[:short]
    chosen: list[dict] = []
    if lead["kind"] == "tractor":
        tractors = rules.tractors(held, lead["tractor_length"])
        if tractors:
            chosen = best(tractors)
    owed = min(lead["pair_count"], len(rules.pairs(held))) - len(rules.pairs(chosen))
    for _ in range(max(owed, 0)):
        pairs = rules.pairs([card for card in held if card not in chosen])
        chosen += best(pairs) if lead["kind"] == "pair" else min(pairs, key=lambda p: order(p[0]))
    rest = [card for card in held if card not in chosen]
    if lead["kind"] == "single":
        return best([[card] for card in rest])
    return chosen + rest[:count - len(chosen)]


def ruffing(rules: Trumps, trumps: list[dict], lead: dict) -> list[dict] | None:
    """The cheapest all-trump play with the lead's shape (its pairs, its tractor), if the
    hand has one."""
    if len(trumps) < lead["count"]:
        return None
    trumps = sorted(trumps, key=rules.position)
    chosen: list[dict] = []
    if lead["kind"] == "tractor":
        tractors = rules.tractors(trumps, lead["tractor_length"])
        if not tractors:
            return None
        chosen = tractors[0]
    pairs = rules.pairs([card for card in trumps if card not in chosen])
    owed = lead["pair_count"] - len(rules.pairs(chosen))
    if len(pairs) < owed:
        return None
    for pair in pairs[:max(owed, 0)]:
        chosen += pair
    return chosen + [card for card in trumps if card not in chosen][:lead["count"] - len(chosen)]


# -- the rules as functions ----------------------------------------------------------------------


def declaration(chosen: list[dict], level: int) -> tuple[int, str | None]:
    """A declaration's strength and the trump suit it names, or ValueError with the rule."""
    first = chosen[0]
    if len(chosen) == 2 and (first["suit"], first["rank"]) != (chosen[1]["suit"], chosen[1]["rank"]):
        raise ValueError("a pair declaration needs two identical cards")
    if first["suit"] == "joker":
        if len(chosen) == 1:
            raise ValueError("jokers declare only as a pair")
        return first["rank"] - 13, None
    if first["rank"] != level:
        raise ValueError(f"a declaration needs cards of this hand's level ({level}) or a joker pair")
    return len(chosen), first["suit"]


def level_change(declarers: str, defender_points: int) -> tuple[str, int]:
    """Who controls the next hand and how many levels it goes up, from the defenders' points."""
    if defender_points >= 80:
        return other_team(declarers), 1 + (defender_points - 80) // 40
    return declarers, 3 if defender_points == 0 else 2 if defender_points < 40 else 1


# -- a person's choices -------------------------------------------------------------------------


def declarations(view: dict) -> list[list[dict]]:
    """The cards of each declaration that outranks the standing one (one of each face)."""
    standing = (view["winning_declaration"] or {}).get("strength", 0)
    by_face: dict = {}
    for card in view["my_hand"]:
        by_face.setdefault((card["suit"], card["rank"]), []).append(card)
    found = []
    for held in by_face.values():
        for size in range(1, min(len(held), 2) + 1):
            try:
                strength, _ = declaration(held[:size], view["level_rank"])
            except ValueError:
                continue
            if strength > standing:
                found.append(held[:size])
    return found


def burial(view: dict) -> dict:
    """Eight cards of the hand to pick and bury, any but the ones that won the declaration."""
    kept = set((view["winning_declaration"] or {}).get("card_ids", []))
    return card_pick(f"Bury {KITTY} cards you pick", {"kind": "bury"},
                     [card for card in view["my_hand"] if card["card_id"] not in kept], KITTY, KITTY)


def leads(rules: Trumps, hand: list[dict]) -> list[list[dict]]:
    """Every single (one per face), pair and tractor of the hand, suit by suit."""
    by_suit: dict = {}
    for card in hand:
        by_suit.setdefault(rules.suit_of(card), []).append(card)
    found = []
    for held in by_suit.values():
        faces = {}
        for card in held:
            faces.setdefault((card["suit"], card["rank"]), card)
        found += [[card] for card in sorted(faces.values(), key=rules.position)]
        found += rules.pairs(held)
        for length in range(2, len(held) // 2 + 1):
            found += rules.tractors(held, length)
    return found


def throws(rules: Trumps, hand: list[dict]) -> list[dict]:
    """Per effective suit of two cards or more, a throw of its cards to pick (any two or more
    of one suit make a lead)."""
    by_suit: dict = {}
    for card in hand:
        by_suit.setdefault(rules.suit_of(card), []).append(card)
    return [card_pick(f"Throw {'trumps' if suit == TRUMP else table_view.SUIT_SYMBOLS[suit] + ' cards'} you pick",
                      {"kind": "play"}, held, 2, len(held))
            for suit, held in by_suit.items() if len(held) >= 2]


def follows(rules: Trumps, hand: list[dict], lead: dict) -> tuple[list[list[dict]], bool]:
    """The follows check_follow allows, one per set of faces, up to MAX_CHOICES, and whether
    that is all of them: all of the led suit the hand holds with any others when it holds too
    few; else the led suit's cards in the lead's count, with the pairs and tractor the lead
    owes."""
    count, suit = lead["count"], lead["suit"]
    held = [card for card in hand if rules.suit_of(card) == suit]
    others = [card for card in hand if rules.suit_of(card) != suit]
    if len(held) <= count:
        pool, forced, size = others, held, count - len(held)
    else:
        pool, forced, size = held, [], count
    found, faces = [], set()
    for picked in combinations(pool, size):
        play = forced + list(picked)
        signature = tuple(sorted((card["suit"], card["rank"]) for card in play))
        if signature in faces:
            continue
        try:
            rules.check_follow(hand, play, lead)
        except ValueError:
            continue
        if len(found) == MAX_CHOICES:
            return found, False
        faces.add(signature)
        found.append(play)
    return found, True


def action_of(phase: str, picked: list[dict]) -> dict:
    if phase == "declaration":
        return {"kind": "declare_trump", "card_ids": ids(picked)} if picked else {"kind": "pass_declare"}
    return {"kind": "bury" if phase == "bury" else "play", "card_ids": ids(picked)}


def label_of(action: dict, hand: list[dict]) -> str:
    if action["kind"] == "pass_declare":
        return "Pass"
    by_id = {card["card_id"]: card for card in hand}
    verb = {"declare_trump": "Declare", "bury": "Bury", "play": "Play"}[action["kind"]]
    return cards_label(verb, [by_id[card_id] for card_id in action["card_ids"]])


def held_cards(state: dict, key: str, card_ids, low: int, high: int) -> list[dict]:
    """The cards `card_ids` names, when it lists `low`-`high` different cards of the hand."""
    if not isinstance(card_ids, list) or not low <= len(card_ids) <= high \
            or not all(isinstance(card_id, str) for card_id in card_ids) or len(set(card_ids)) != len(card_ids):
        wanted = f"{low}" if low == high else f"{low}-{high}"
        raise ValueError(f"card_ids must list {wanted} different cards")
    held = state["deck"]["hands"][key]
    if any(card_id not in held for card_id in card_ids):
        raise ValueError("a card in card_ids is not in your hand")
    return cards.cards(state["deck"], card_ids)


def trumps_of(state: dict) -> Trumps:
    return Trumps(state["level_rank"], state["trump_suit"])


def sort_hands(state: dict) -> None:
    """Every hand by effective suit and place, trumps last, as a player holds it."""
    rules = trumps_of(state)
    catalog = state["deck"]["catalog"]
    for held in state["deck"]["hands"].values():
        held.sort(key=lambda card_id: (*rules.strength(catalog[card_id]), catalog[card_id]["suit"]))


def ids(chosen: list[dict]) -> list[str]:
    return [card["card_id"] for card in chosen]


def team_of_seat(seat: int) -> str:
    return TEAMS[seat % 2]


def team_of(state: dict, key: str) -> str:
    return state["players"][key]["team"]


def other_team(team: str) -> str:
    return TEAMS[1 - TEAMS.index(team)]


def seat_of(state: dict, key: str) -> int:
    return state["players"][key]["seat"]


def next_key(order: list, key: str) -> str:
    return order[(order.index(key) + 1) % len(order)]


def clockwise(order: list, first: str) -> list:
    at = order.index(first)
    return order[at:] + order[:at]
