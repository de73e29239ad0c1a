"""Aether Sigil (the network's aether-sigil-v1 contract), run by a room's leader: four channelers
draw from one shared pile of 72 cards (four copies of eighteen faces), summon units and relics,
cast spells and fight until one is left.

Everything a seat does is `{"kind": ...}` from the seat whose turn it is:
`{"kind": "play_card", "card_id", "target_public_key"?, "target_card_id"?}` spends Aether on a
card of the hand (a unit to its row of three, a relic to its row of two, a spell resolved and
discarded; a damage spell names an active opponent, Dissolve an opposing unit of power 3 or
less); `{"kind": "attack", "unit_id", "target_card_id"?|"target_public_key"?}` sends a ready
unit at an opposing unit (both take the other's power against their guard) or at an opposing
channeler (shield first, then life); `{"kind": "end_turn"}` passes the turn, and
`{"kind": "concede"}` leaves the match. Units enter exhausted and are readied at their owner's
turn. The next seat's turn raises its maximum Aether by one (up to ten), refills it and draws a
card, or takes fatigue damage (1, 2, 3, ...) once the pile is empty. The leader refuses, with
its reason, anything out of turn, a card not in the hand or too dear, a full row, a target that
is no active opponent or opposing unit, and a unit not the seat's own or exhausted.

A channeler at zero life is out; the last one left wins the match, whose score is every
channeler's life at its end (in the `game_over` event). The deck is shuffled from a seed only
the leader holds (`deal_seed` pins it for tests). A seat's view has its own hand, the public
rows and discard, and only counts of the other hands. A checkpoint keeps the restarts and the
seats, never a card, so a new leader deals a fresh match (`restart_round`); a seat whose member
is gone is played by the leader's automatic player until it comes back.

`proto_group_autoplay` is greedy: it finishes an opponent when a spell or an attack can, else
plays the card its own worth table ranks highest (units by power and guard, relics while the
row has room, a heal or shield when low), trades a ready unit only for an enemy unit it kills
and survives, sends the rest at the weakest opponent and then ends its turn."""
from __future__ import annotations

from aigenora.proto import deck as cards
from aigenora.proto.hooks import ProtocolHooks
from aigenora.proto.seat_choices import choice
from aigenora.proto.table_seats import StandIns, leader_changed, seats_after_failover
from aigenora.proto.fair_deal import dealing, fair_deals
from aigenora.proto import table_view

SEATS, HAND, COPIES = 4, 5, 4
UNIT_ROW, RELIC_ROW, MAX_AETHER = 3, 2, 10
DISCARD = "discard"
NOTICE = "The previous hidden deal was discarded after a Leader change."

# name, cost, then a unit's power and guard, or a spell's or relic's effect and amount.
UNITS = (("Dawnling", 1, 2, 1), ("Iron Finch", 1, 1, 2), ("Glass Hound", 2, 3, 2),
         ("Tide Scribe", 2, 2, 3), ("Aether Guard", 3, 2, 5), ("Void Lynx", 3, 4, 2),
         ("Verdant Giant", 4, 4, 6), ("Ember Drake", 5, 6, 4))
SPELLS = (("Cinder Shot", 1, "damage_player", 2), ("Mending Rain", 2, "heal_self", 4),
          ("Star Map", 2, "draw", 2), ("Dissolve", 3, "destroy_unit", None),
          ("Pulse Shield", 2, "shield_self", 4), ("Rally Spark", 2, "ready_all", 0))
RELICS = (("Sun Dial", 2, "end_heal", 1), ("Prism Lens", 3, "spell_power", 1),
          ("Living Forge", 3, "unit_power", 1), ("Deep Reservoir", 2, "max_energy", 1))
DISSOLVE_MAX_POWER = 3


def faces() -> list[dict]:
    """The eighteen faces in the network's card shape."""
    made = [{"name": n, "card_type": "unit", "cost": c, "power": p, "guard": g} for n, c, p, g in UNITS]
    for name, cost, effect, amount in SPELLS:
        made.append({"name": name, "card_type": "spell", "cost": cost, "effect": effect,
                     **({"max_power": DISSOLVE_MAX_POWER} if amount is None else {"amount": amount})})
    made += [{"name": n, "card_type": "relic", "cost": c, "effect": e, "amount": a} for n, c, e, a in RELICS]
    return made


@fair_deals
class Hooks(StandIns, ProtocolHooks):
    SUPPORTED_CONTROL_MODES = ("autonomous", "hybrid", "human")

    def proto_host_metadata(self):
        return ("Aether Sigil", "game,cards,multiplayer,shared-deck,original", "supply", {"starting_life": 20})

    def starting_life(self) -> int:
        life = self.options.get("starting_life", 20)
        if not isinstance(life, int) or isinstance(life, bool) or not 10 <= life <= 50:
            raise ValueError("starting_life must be between 10 and 50")
        return life

    # -- the match -------------------------------------------------------------------------

    def proto_group_initial_state(self, members):
        seated = [m for m in members if m.get("status") == "active"]
        if len(seated) != SEATS:
            raise ValueError("Aether Sigil needs exactly four seated members")
        return self.new_match({m["public_key"]: int(m["seat"]) for m in seated}, [], restarts=0, notice="")

    @dealing("restarts")
    def new_match(self, seats, away, *, restarts, notice, seed):
        """Five cards to every seat, one at a time from seat 0; seat 0 starts with one Aether."""
        if sorted(seats.values()) != list(range(SEATS)):
            raise ValueError("Aether Sigil needs one member in each of seats 0-3")
        order = sorted(seats, key=seats.get)
        deck = cards.new_deck(faces(), seed, COPIES)
        for _ in range(HAND):
            for key in order:
                cards.deal(deck, key, 1)
        life = self.starting_life()
        return {
            "phase": "playing", "restart_count": restarts, "recovery_notice": notice, "turn_number": 1,
            "turn_order": order, "current_player": order[0],
            "players": {key: {"seat": seats[key], "life": life, "shield": 0, "energy": 1, "max_energy": 1,
                              "fatigue": 0, "defeated": False} for key in order},
            "deck": deck, "unit_state": {}, "winner": "", "away": away,
        }

    def proto_group_handle(self, state, actor, action):
        return self.substitute(self.apply(state, actor["public_key"], action))

    def apply(self, state, key, action):
        """One action of the seat `key`, checked against every rule before anything changes."""
        if state["phase"] != "playing":
            raise ValueError("the match is complete")
        if key != state["current_player"]:
            raise ValueError(f"not your turn: seat {state['players'][state['current_player']]['seat']} acts now")
        kind = action.get("kind")
        if kind == "play_card":
            events = self.play_card(state, key, action)
        elif kind == "attack":
            events = self.attack(state, key, action)
        elif kind == "end_turn":
            events = self.end_turn(state, key)
        elif kind == "concede":
            state["players"][key].update(defeated=True, life=0)
            events = [{"kind": "conceded", "public_key": key}]
        else:
            raise ValueError("an Aether Sigil action is play_card, attack, end_turn or concede")
        if not self.finished(state) and state["players"][state["current_player"]]["defeated"]:
            events += self.next_turn(state, state["current_player"])
        if self.finished(state):
            life = {k: player["life"] for k, player in state["players"].items()}
            events.append({"kind": "game_over", "winner": state["winner"], "life": life})
            return {"state": state, "events": events, "completed": True, "outcome": state["winner"]}
        return {"state": state, "events": events}

    # -- cards -----------------------------------------------------------------------------

    def play_card(self, state, key, action):
        card_id = action.get("card_id")
        if not isinstance(card_id, str) or card_id not in state["deck"]["hands"][key]:
            raise ValueError("card_id is not a card in your hand")
        card = state["deck"]["catalog"][card_id]
        player = state["players"][key]
        if card["cost"] > player["energy"]:
            raise ValueError(f"{card['name']} costs {card['cost']} Aether; you have {player['energy']}")
        kind = card["card_type"]
        if kind == "unit" and len(row(state, "units", key)) >= UNIT_ROW:
            raise ValueError("your unit row is full (three units)")
        if kind == "relic" and len(row(state, "relics", key)) >= RELIC_ROW:
            raise ValueError("your relic row is full (two relics)")
        cast = self.spell_effect(state, key, action, card) if kind == "spell" else None
        player["energy"] -= card["cost"]
        face = cards.play(state["deck"], key, card_id, f"{kind}s:{key}" if kind != "spell" else DISCARD)
        if kind == "unit":
            state["unit_state"][card_id] = {"damage": 0, "exhausted": True,
                                            "power_bonus": relic_total(state, key, "unit_power")}
            return [{"kind": "unit_summoned", "public_key": key, "card": face}]
        if kind == "relic":
            if card["effect"] == "max_energy":
                player["max_energy"] = min(MAX_AETHER, player["max_energy"] + card["amount"])
            return [{"kind": "relic_played", "public_key": key, "card": face}]
        return [{"kind": "spell_cast", "public_key": key, "card": face}] + cast()

    def spell_effect(self, state, key, action, card):
        """The spell's targets checked now; the effect, to run once the card is paid for."""
        effect, amount, player = card["effect"], card.get("amount", 0), state["players"][key]
        if effect == "damage_player":
            target = opponent(state, key, action.get("target_public_key"))
            amount += relic_total(state, key, "spell_power")
            return lambda: [{"kind": "spell_damage", "target": target, "amount": damage(state, target, amount)}]
        if effect == "destroy_unit":
            target = action.get("target_card_id")
            owner = unit_owner(state, target)
            if owner == key:
                raise ValueError("Dissolve must target an opposing unit")
            if unit_power(state, target) > card["max_power"]:
                raise ValueError(f"Dissolve takes a unit of power {card['max_power']} or less")
            return lambda: destroy(state, owner, target) or [
                {"kind": "unit_dissolved", "owner": owner, "card_id": target}]
        if effect == "heal_self":
            def heal():
                before = player["life"]
                player["life"] = min(self.starting_life(), before + amount)
                return [{"kind": "healed", "public_key": key, "amount": player["life"] - before}]
            return heal
        if effect == "draw":
            return lambda: draw(state, key, amount)
        if effect == "shield_self":
            def shield():
                player["shield"] += amount
                return [{"kind": "shield_gained", "public_key": key, "amount": amount}]
            return shield
        if effect == "ready_all":
            def ready():
                for unit in row(state, "units", key):
                    state["unit_state"][unit]["exhausted"] = False
                return [{"kind": "units_readied", "public_key": key}]
            return ready
        raise ValueError("unknown spell effect")

    # -- combat ----------------------------------------------------------------------------

    def attack(self, state, key, action):
        unit = action.get("unit_id")
        if not isinstance(unit, str) or unit not in row(state, "units", key):
            raise ValueError("unit_id is not one of your units")
        mine = state["unit_state"][unit]
        if mine["exhausted"]:
            raise ValueError("that unit is exhausted")
        power = unit_power(state, unit)
        target = action.get("target_card_id")
        if not target:
            victim = opponent(state, key, action.get("target_public_key"))
            mine["exhausted"] = True
            return [{"kind": "direct_attack", "attacker": unit, "target": victim,
                     "amount": damage(state, victim, power)}]
        owner = unit_owner(state, target)
        if owner == key:
            raise ValueError("a unit cannot attack an allied unit")
        counter = unit_power(state, target)
        state["unit_state"][target]["damage"] += power
        mine["damage"] += counter
        events = [{"kind": "unit_combat", "attacker": unit, "defender": target, "attack_power": power,
                   "counter_power": counter}]
        for who, card_id in ((owner, target), (key, unit)):
            if state["unit_state"][card_id]["damage"] >= state["deck"]["catalog"][card_id]["guard"]:
                destroy(state, who, card_id)
                events.append({"kind": "unit_destroyed", "card_id": card_id})
        if unit in state["unit_state"]:
            mine["exhausted"] = True
        return events

    # -- turns -----------------------------------------------------------------------------

    def end_turn(self, state, key):
        events = []
        healing = relic_total(state, key, "end_heal")
        if healing:
            player = state["players"][key]
            before = player["life"]
            player["life"] = min(self.starting_life(), before + healing)
            events.append({"kind": "relic_heal", "public_key": key, "amount": player["life"] - before})
        state["turn_number"] += 1
        return events + self.next_turn(state, key)

    def next_turn(self, state, after):
        """The turn passes to the next channeler still in; one whom fatigue puts out passes it on."""
        events = []
        key = after
        while not self.finished(state):
            key = next_active(state, key)
            state["current_player"] = key
            player = state["players"][key]
            player["max_energy"] = min(MAX_AETHER, player["max_energy"] + 1)
            player["energy"] = player["max_energy"]
            for unit in row(state, "units", key):
                state["unit_state"][unit]["exhausted"] = False
            events += [{"kind": "turn_started", "public_key": key}] + draw(state, key, 1)
            if not player["defeated"]:
                break
        return events

    def finished(self, state) -> bool:
        """Whether one channeler is left; then the match is complete and it is the winner."""
        left = [key for key in state["turn_order"] if not state["players"][key]["defeated"]]
        if len(left) == 1:
            state.update(phase="completed", winner=left[0])
        return len(left) <= 1

    # -- members come and go ---------------------------------------------------------------

    def stand_in(self, view, key):
        """An away seat's action (`StandIns`): the automatic player's."""
        return choose(view)

    def proto_group_on_leader_changed(self, state, old_leader, new_leader):
        return leader_changed(state, old_leader, new_leader, redone="a fresh shared deck was dealt",
                              kind="match_restarted_after_leader_change", counter="restart_count")

    def proto_group_recovery_snapshot(self, state):
        return {"restart_count": state["restart_count"], "public_outcome": state["winner"],
                "seats": {key: player["seat"] for key, player in state["players"].items()}}

    def proto_group_restore(self, checkpoint, members, new_epoch):
        """The interrupted match is thrown in and a fresh one dealt; a seat whose member has
        not come back to the new leader is played for it."""
        seats, away = seats_after_failover(checkpoint, members)
        state = self.new_match(seats, away, restarts=int(checkpoint.get("restart_count", 0)) + 1, notice=NOTICE)
        return self.substitute({"state": state, "events": []})["state"]

    # -- what a seat sees ------------------------------------------------------------------

    def proto_group_view(self, state, viewer):
        key, deck = viewer["public_key"], state["deck"]
        rows = {name: {zone.split(":", 1)[1]: cards.zone(deck, zone) for zone in deck["zones"]
                       if zone.startswith(name + ":")} for name in ("units", "relics")}
        return {
            **{field: state[field] for field in (
                "phase", "restart_count", "recovery_notice", "turn_number", "turn_order", "current_player",
                "players")},
            **rows,
            "unit_state": state["unit_state"],
            "draw_count": len(deck["pile"]),
            "discard": cards.zone(deck, DISCARD),
            "hand_counts": {owner: len(held) for owner, held in deck["hands"].items()},
            "my_hand": cards.hand(deck, key),
            "winner": state["winner"],
            "you": {"public_key": key, "seat": viewer["seat"]},
        }

    # -- the table as a person sees it ---------------------------------------------------------

    def proto_group_table(self, view, member, events):
        """The display model (`aigenora.proto.table_view`) of a seat's view: each seat's rows
        of units and relics in the centre, its hand only to itself."""
        names = table_view.seat_names(view)
        seats, centre = [], []
        for key in view["turn_order"]:
            player = view["players"][key]
            facts = [table_view.fact(word.replace("_", " "), player[word]) for word in ("life", "shield", "energy", "max_energy")]
            if player["defeated"]:
                facts.append(table_view.fact("defeated", "yes"))
            seats.append(table_view.view_seat(view, key, names, facts))
            rows = view["units"].get(key, []) + view["relics"].get(key, [])
            if rows:
                centre.append(table_view.pile(f"{names[key]} in play", table_view.cards(rows)))
        return table_view.table(
            "Aether Sigil", f"turn {view['turn_number']}, {view['phase']}",
            table_view.turn_words(view, names, "play a card, attack or end the turn"), seats, centre=centre,
            facts=[table_view.fact("draw pile", view["draw_count"]), table_view.fact("discarded", len(view["discard"]))],
            score=[table_view.fact(names[key], f"{view['players'][key]['life']} life") for key in view["turn_order"]],
            log=table_view.log(events, names))

    # -- a seat that plays by itself -------------------------------------------------------

    def proto_group_autoplay(self, view, member):
        if view["phase"] != "playing" or view["current_player"] != view["you"]["public_key"]:
            return None
        return choose(view)

    # -- a person's choices ----------------------------------------------------------------

    def proto_group_choices(self, view, member):
        if view["phase"] != "playing" or view["current_player"] != view["you"]["public_key"]:
            return []
        return card_choices(view) + attack_choices(view) + [
            choice("End turn", {"kind": "end_turn"}), choice("Concede", {"kind": "concede"})]


# -- the rules as functions --------------------------------------------------------------------


def row(state: dict, name: str, key: str) -> list:
    """The ids in a seat's unit or relic row."""
    return state["deck"]["zones"].get(f"{name}:{key}", [])


def relic_total(state: dict, key: str, effect: str) -> int:
    catalog = state["deck"]["catalog"]
    return sum(catalog[r]["amount"] for r in row(state, "relics", key) if catalog[r]["effect"] == effect)


def unit_power(state: dict, card_id: str) -> int:
    return state["deck"]["catalog"][card_id]["power"] + state["unit_state"][card_id]["power_bonus"]


def unit_owner(state: dict, card_id) -> str:
    """Who controls the unit `card_id` (refused when it is on no row)."""
    for key in state["turn_order"]:
        if isinstance(card_id, str) and card_id in row(state, "units", key):
            return key
    raise ValueError("target_card_id is not a unit on the table")


def opponent(state: dict, key: str, target) -> str:
    player = state["players"].get(target) if isinstance(target, str) else None
    if target == key or player is None or player["defeated"]:
        raise ValueError("target_public_key must be an active opponent")
    return target


def damage(state: dict, key: str, amount: int) -> int:
    """Damage to a channeler: its shield takes it first; the life lost."""
    player = state["players"][key]
    absorbed = min(player["shield"], amount)
    player["shield"] -= absorbed
    player["life"] = max(0, player["life"] - (amount - absorbed))
    player["defeated"] = player["defeated"] or player["life"] == 0
    return amount - absorbed


def draw(state: dict, key: str, count: int) -> list:
    """`count` draws, each a card from the pile or, once it is empty, growing fatigue damage."""
    events = []
    for _ in range(count):
        if state["deck"]["pile"]:
            cards.deal(state["deck"], key, 1)
            events.append({"kind": "card_drawn", "public_key": key})
        else:
            player = state["players"][key]
            player["fatigue"] += 1
            events.append({"kind": "fatigue", "public_key": key, "amount": damage(state, key, player["fatigue"])})
    return events


def destroy(state: dict, owner: str, card_id: str) -> None:
    cards.move(state["deck"], card_id, f"units:{owner}", DISCARD)
    del state["unit_state"][card_id]


def next_active(state: dict, key: str) -> str:
    order = state["turn_order"]
    start = order.index(key)
    return next(order[(start + step) % len(order)] for step in range(1, len(order) + 1)
                if not state["players"][order[(start + step) % len(order)]]["defeated"])


# -- a person's choices ------------------------------------------------------------------------


def card_choices(view: dict) -> list:
    """Every card of the hand the seat can pay for and place, with each target it may take:
    a unit or relic while its row has room, a damage spell at each active opponent, Dissolve
    at each opposing unit of low enough power, any other spell as it is."""
    me = view["you"]["public_key"]
    rooms = {"unit": len(view["units"].get(me, [])) < UNIT_ROW,
             "relic": len(view["relics"].get(me, [])) < RELIC_ROW, "spell": True}
    options = []
    for card in view["my_hand"]:
        if card["cost"] > view["players"][me]["energy"] or not rooms[card["card_type"]]:
            continue
        play = {"kind": "play_card", "card_id": card["card_id"]}
        if card.get("effect") == "damage_player":
            options += [choice(f"Cast {card['name']} at seat {view['players'][k]['seat']}",
                               {**play, "target_public_key": k}) for k in opponents(view)]
        elif card.get("effect") == "destroy_unit":
            options += [choice(f"Cast {card['name']} on {unit['name']} (seat {view['players'][k]['seat']})",
                               {**play, "target_card_id": unit["card_id"]})
                        for k, unit in opposing_units(view) if power_of(view, unit) <= card["max_power"]]
        else:
            verb = "Cast" if card["card_type"] == "spell" else "Play"
            options.append(choice(f"{verb} {card['name']}", play))
    return options


def attack_choices(view: dict) -> list:
    """Each ready unit's attacks: at each active opponent, and at each opposing unit."""
    me, players = view["you"]["public_key"], view["players"]
    options = []
    for unit in view["units"].get(me, []):
        if view["unit_state"][unit["card_id"]]["exhausted"]:
            continue
        attack = {"kind": "attack", "unit_id": unit["card_id"]}
        options += [choice(f"Attack seat {players[k]['seat']} with {unit['name']}",
                           {**attack, "target_public_key": k}) for k in opponents(view)]
        options += [choice(f"Attack {target['name']} (seat {players[k]['seat']}) with {unit['name']}",
                           {**attack, "target_card_id": target["card_id"]})
                    for k, target in opposing_units(view)]
    return options


def opposing_units(view: dict) -> list[tuple[str, dict]]:
    me = view["you"]["public_key"]
    return [(k, unit) for k in view["turn_order"] if k != me for unit in view["units"].get(k, [])]


# -- the automatic player ----------------------------------------------------------------------

# Life at or below which a heal or a shield is worth a card; the worth of a finishing blow.
LOW_LIFE, LETHAL = 10, 100


def choose(view: dict) -> dict:
    """The seat's next action: a card worth playing, else an attack, else Rally Spark when it
    readies units that have attacked, else the end of the turn."""
    me = view["you"]["public_key"]
    ready = sorted((u for u in view["units"].get(me, []) if not view["unit_state"][u["card_id"]]["exhausted"]),
                   key=lambda u: -power_of(view, u))
    options = [option for card in view["my_hand"] if card["cost"] <= view["players"][me]["energy"]
               for option in [card_worth(view, card)] if option]
    kill = next((option for option in options if option[0] >= LETHAL), None)
    if kill:
        return kill[1]
    now = [option for option in options if not (ready and is_rally(view, option))]
    if now:
        return max(now, key=lambda option: option[0])[1]
    if ready:
        return attack_with(view, ready[0])
    return {"kind": "end_turn"}


def power_of(view: dict, unit: dict) -> int:
    return unit["power"] + view["unit_state"][unit["card_id"]]["power_bonus"]


def is_rally(view: dict, option: tuple) -> bool:
    card = next(c for c in view["my_hand"] if c["card_id"] == option[1]["card_id"])
    return card.get("effect") == "ready_all"


def opponents(view: dict) -> list[str]:
    """The active opponents, weakest (life and shield) first."""
    me = view["you"]["public_key"]
    players = view["players"]
    return sorted((k for k in view["turn_order"] if k != me and not players[k]["defeated"]),
                  key=lambda k: (players[k]["life"] + players[k]["shield"], players[k]["seat"]))


def card_worth(view: dict, card: dict) -> tuple[int, dict] | None:
    """What playing `card` is worth to the greedy player, with its action; None if nothing."""
    me = view["you"]["public_key"]
    player, foes = view["players"][me], opponents(view)
    play = {"kind": "play_card", "card_id": card["card_id"]}
    kind, effect = card["card_type"], card.get("effect")
    if kind == "unit":
        room = len(view["units"].get(me, [])) < UNIT_ROW
        return (2 * card["power"] + card["guard"], play) if room else None
    if kind == "relic":
        if len(view["relics"].get(me, [])) >= RELIC_ROW:
            return None
        worth = {"max_energy": 6 if player["max_energy"] < MAX_AETHER - 1 else 0, "unit_power": 5}.get(effect, 3)
        return (worth, play) if worth else None
    if effect == "damage_player":
        amount = card["amount"] + sum(r["amount"] for r in view["relics"].get(me, []) if r["effect"] == "spell_power")
        players = view["players"]
        lethal = [k for k in foes if players[k]["life"] + players[k]["shield"] <= amount]
        return (LETHAL if lethal else 3, {**play, "target_public_key": (lethal or foes)[0]})
    if effect in ("heal_self", "shield_self"):
        return (7, play) if player["life"] <= LOW_LIFE else None
    if effect == "draw":
        return (4, play) if view["draw_count"] >= card["amount"] and len(view["my_hand"]) <= 3 else None
    if effect == "destroy_unit":
        targets = [u for k in foes for u in view["units"].get(k, []) if power_of(view, u) <= card["max_power"]]
        best = max(targets, key=lambda u: (power_of(view, u), u["guard"]), default=None)
        return (3 + power_of(view, best), {**play, "target_card_id": best["card_id"]}) if best else None
    if effect == "ready_all":
        tired = [u for u in view["units"].get(me, []) if view["unit_state"][u["card_id"]]["exhausted"]]
        return (sum(power_of(view, u) for u in tired), play) if len(tired) >= 2 else None
    return None


def attack_with(view: dict, unit: dict) -> dict:
    """A ready unit's attack: a channeler it finishes, else an enemy unit it kills and survives
    (the strongest such), else the weakest opponent."""
    players, foes = view["players"], opponents(view)
    power = power_of(view, unit)
    attack = {"kind": "attack", "unit_id": unit["card_id"]}
    lethal = [k for k in foes if players[k]["life"] + players[k]["shield"] <= power]
    if lethal:
        return {**attack, "target_public_key": lethal[0]}
    left = unit["guard"] - view["unit_state"][unit["card_id"]]["damage"]
    trades = [u for k in foes for u in view["units"].get(k, [])
              if u["guard"] - view["unit_state"][u["card_id"]]["damage"] <= power and power_of(view, u) < left
              and power_of(view, u) >= 2]
    if trades:
        best = max(trades, key=lambda u: (power_of(view, u), u["cost"]))
        return {**attack, "target_card_id": best["card_id"]}
    return {**attack, "target_public_key": foes[0]}
