"""Hero Duel (the network's hero-duel-v1 contract) for the simultaneous_round engine with a
shadow judge. Each side has a hero from the balance table (hp, mana, mana_regen, atk and three
skills with dmg, cost and cd); every round both pick normal, skill_a, skill_b or ult (the
engine runs the commit-reveal) and the host resolves the round, which the guest recomputes
(`proto_round_judge_pure`) and refuses on any difference.

The rules, as the contract states them: a skill takes effect only with mana >= its cost and
its cooldown at 0, else the hero makes a normal attack (atk); both hits land at once and take
HP down to at least 0; the damage a side dealt is its move's full damage. A cast skill costs
its mana and sets its cooldown to the skill's cd; then every cooldown ticks down by 1 (not
below 0) and mana regenerates by mana_regen up to the hero's mana. The round goes to the side
that dealt more damage. The duel ends when a hero is at 0 HP (both at 0: draw) or after
`max_rounds` (default 30), when more HP wins (equal: draw).

Both sides must hold the same table: options.balance, else the network's standard profile
below. Heroes: options host_hero / guest_hero, else the first hero by name; the guest's join
names its hero, which the host accepts unless its options fix guest_hero. The automatic
player looks two rounds ahead for the most damage (and finishes the foe when it can); `moves`
(e.g. "ult,normal", also `host_moves`/`guest_moves`) scripts it. Decisions:
{"round": 0, "move": "skill_a"}."""
from __future__ import annotations

from pathlib import Path

TYPE_CHECKING = False  # typing costs every process ~2 ms to import; annotations are strings
if TYPE_CHECKING:
    from typing import Any

from aigenora.proto.choices import RoundChoices, spoken_list
from aigenora.proto.hooks import HookResult, ProtocolHooks
from aigenora.proto.options import option, script_option
from aigenora.proto.rounds import RoundResults

MOVES = ("normal", "skill_a", "skill_b", "ult")
SKILLS = ("skill_a", "skill_b", "ult")
CD_FIELDS = {"skill_a": "cd_a", "skill_b": "cd_b", "ult": "cd_ult"}
SIDES = ("host", "guest")
KEYWORDS = {"normal": ["normal", "attack"], "skill_a": ["skill_a", "skill a"],
            "skill_b": ["skill_b", "skill b"], "ult": ["ult", "ultimate"]}


def _hero(hp: int, mana: int, regen: int, atk: int, *skills: tuple[int, int, int]) -> dict:
    row = {"hp": hp, "mana": mana, "mana_regen": regen, "atk": atk}
    for name, (dmg, cost, cd) in zip(SKILLS, skills):
        row[name] = {"dmg": dmg, "cost": cost, "cd": cd}
    return row


# The network's "standard" hero-duel-v1 profile: what both sides play by without a balance.
STANDARD_BALANCE = {
    "warrior": _hero(250, 80, 15, 25, (50, 20, 2), (70, 35, 3), (120, 60, 5)),
    "mage": _hero(150, 120, 20, 12, (60, 25, 2), (90, 45, 3), (180, 80, 5)),
    "assassin": _hero(180, 60, 12, 35, (45, 15, 1), (65, 30, 2), (110, 50, 4)),
    "tank": _hero(350, 70, 14, 18, (35, 18, 2), (55, 30, 3), (90, 55, 5)),
}


# -- the rules (pure functions of the heroes, the fighters' state and the moves) -----------

def fresh_fighter(hero: dict) -> dict:
    return {"hp": hero["hp"], "mana": hero["mana"], "cd": {skill: 0 for skill in SKILLS}}


def effective_move(hero: dict, fighter: dict, move: str) -> str:
    """The move that takes effect: a skill that is unaffordable or cooling down is a normal attack."""
    if move in SKILLS and fighter["mana"] >= hero[move]["cost"] and fighter["cd"][move] == 0:
        return move
    return "normal"


def damage(hero: dict, move: str) -> int:
    return hero["atk"] if move == "normal" else hero[move]["dmg"]


def after_round(hero: dict, fighter: dict, move: str, taken: int) -> dict:
    """The fighter once the round is over: hit, paid, cooled down and regenerated."""
    mana, cooldowns = fighter["mana"], dict(fighter["cd"])
    if move in SKILLS:
        mana -= hero[move]["cost"]
        cooldowns[move] = hero[move]["cd"]
    return {"hp": max(0, fighter["hp"] - taken),
            "mana": min(hero["mana"], mana + hero["mana_regen"]),
            "cd": {skill: max(0, left - 1) for skill, left in cooldowns.items()}}


def resolve_round(heroes: dict, fighters: dict, moves: dict, round_index: int,
                  max_rounds: int) -> tuple[dict, dict]:
    """(fighters after the round, the round_result) for both sides' revealed moves; nothing
    passed in is modified."""
    played = {side: effective_move(heroes[side], fighters[side], moves[side]) for side in SIDES}
    dealt = {side: damage(heroes[side], played[side]) for side in SIDES}
    after = {side: after_round(heroes[side], fighters[side], played[side], dealt[foe])
             for side, foe in (("host", "guest"), ("guest", "host"))}
    over = after["host"]["hp"] == 0 or after["guest"]["hp"] == 0 or round_index + 1 >= max_rounds
    result: dict[str, Any] = {"action": "round_result", "round": round_index,
                              "host_move": played["host"], "guest_move": played["guest"]}
    for key in ("hp", "mana"):
        for side in SIDES:
            result[f"{side}_{key}"] = after[side][key]
    for side in SIDES:
        result[f"{side}_damage_dealt"] = dealt[side]
    for side in SIDES:
        for skill in SKILLS:
            result[f"{side}_{CD_FIELDS[skill]}"] = after[side]["cd"][skill]
    result["round_winner"] = ("draw" if dealt["host"] == dealt["guest"]
                              else "host" if dealt["host"] > dealt["guest"] else "guest")
    result["game_over"] = over
    result["game_winner"] = verdict(after) if over else "none"
    return after, result


def verdict(fighters: dict) -> str:
    host, guest = fighters["host"]["hp"], fighters["guest"]["hp"]
    if host == 0 or guest == 0:
        return "draw" if host == guest else "host" if guest == 0 else "guest"
    return "draw" if host == guest else "host" if host > guest else "guest"


def fighters_from_result(result: dict) -> dict:
    return {side: {"hp": result[f"{side}_hp"], "mana": result[f"{side}_mana"],
                   "cd": {skill: result[f"{side}_{CD_FIELDS[skill]}"] for skill in SKILLS}}
            for side in SIDES}


def best_plan(hero: dict, fighter: dict, foe_hp: int) -> str:
    """The move with the most damage over this round and the next (the next one greedy); a
    move that finishes the foe now wins outright, the cheapest such move first."""
    def greedy(state: dict) -> int:
        return max(damage(hero, effective_move(hero, state, move)) for move in MOVES)

    plans = []
    for move in MOVES:
        played = effective_move(hero, fighter, move)
        now = damage(hero, played)
        cost = hero[played]["cost"] if played in SKILLS else 0
        kills = now >= foe_hp
        later = greedy(after_round(hero, fighter, played, 0))
        plans.append((kills, -cost if kills else now + later, now, move == played, move))
    return max(plans)[-1]


class Hooks(RoundChoices, RoundResults, ProtocolHooks):
    GAME_OVER = "Duel over"
    SUPPORTED_CONTROL_MODES = ("autonomous", "hybrid", "human")
    CHOICE_KEYWORDS = KEYWORDS
    DECISION_SCHEMA = {"match_key": "round", "value_field": "move", "choices": KEYWORDS,
                       "strategy_field": "move"}

    def proto_init(self, options, role, args, state_dir: Path, decision_config: dict[str, Any] | None = None):
        super().proto_init(options, role, args, state_dir, decision_config)
        balance = options.get("balance")
        self.balance = balance if isinstance(balance, dict) and balance else STANDARD_BALANCE
        first = sorted(self.balance)[0]
        self.guest_hero_fixed = options.get("guest_hero") in self.balance
        self.heroes = {side: self._hero_option(options, f"{side}_hero", first) for side in SIDES}
        self.max_rounds = option(options, "max_rounds", 30, int)
        self.script = script_option(options, "moves", MOVES, role=role)
        self._start()

    def _hero_option(self, options: dict, name: str, default: str) -> str:
        hero = options.get(name)
        return hero if hero in self.balance else default

    def _start(self) -> None:
        for side in SIDES:
            if self.heroes[side] not in self.balance:
                raise ValueError(f"{side} hero {self.heroes[side]!r} is not in the balance table "
                                 f"({', '.join(sorted(self.balance))})")
        self.rows = {side: self.balance[self.heroes[side]] for side in SIDES}
        self.fighters = {side: fresh_fighter(self.rows[side]) for side in SIDES}
        self._publish(round_number=1)

    def _publish(self, round_number: int) -> None:
        me = self.fighters[self.role]
        ready = [move for move in MOVES if effective_move(self.rows[self.role], me, move) == move]
        self.snapshot.update(heroes=dict(self.heroes), max_rounds=self.max_rounds,
                             round=round_number, legal=list(MOVES), ready_moves=ready,
                             hp={side: self.fighters[side]["hp"] for side in SIDES},
                             mana={side: self.fighters[side]["mana"] for side in SIDES},
                             cooldowns={side: dict(self.fighters[side]["cd"]) for side in SIDES})

    def proto_host_metadata(self):
        return ("Hero Duel", "game,hero-duel", "supply", {
            "balance": self.balance, "host_hero": self.heroes["host"],
            "guest_hero": self.heroes["guest"], "max_rounds": self.max_rounds})

    # -- handshake ----------------------------------------------------------------------

    def proto_guest_join_message(self):
        return {"action": "join", "hero": self.heroes["guest"], "max_rounds": self.max_rounds}

    def proto_host_handle_join(self, msg):
        if not self.guest_hero_fixed and msg["hero"] in self.balance:
            self.heroes["guest"] = msg["hero"]
        self._start()
        self.snapshot.update(phase="playing")
        return HookResult({"action": "ready", "host_hero": self.heroes["host"],
                           "guest_hero": self.heroes["guest"], "max_rounds": self.max_rounds})

    def proto_guest_handle_ready(self, msg):
        self.heroes = {"host": msg["host_hero"], "guest": msg["guest_hero"]}
        self.max_rounds = msg["max_rounds"]
        self._start()
        self.snapshot.update(phase="playing")

    # -- moves and verdicts ---------------------------------------------------------------

    def proto_round_value(self, round_index: int, state: dict) -> str:
        me, foe = self.role, "guest" if self.role == "host" else "host"
        plan = lambda: best_plan(self.rows[me], self.fighters[me], self.fighters[foe]["hp"])  # noqa: E731
        return self.decide_round(round_index, MOVES, self.script, plan,
                                 f"move must be {spoken_list(MOVES)}")

    def proto_round_judge_pure(self, round_index, host_value, guest_value, state):
        """This side's own verdict for the round; changes nothing (the guest's shadow judge)."""
        return resolve_round(self.rows, self.fighters, {"host": host_value, "guest": guest_value},
                             round_index, self.max_rounds)[1]

    def proto_round_judge(self, round_index, host_value, guest_value, state):
        self.fighters, result = resolve_round(
            self.rows, self.fighters, {"host": host_value, "guest": guest_value},
            round_index, self.max_rounds)
        self._record(result)
        return HookResult(result, completed=result["game_over"])

    def apply_round_result(self, result: dict) -> None:
        self.fighters = fighters_from_result(result)
        self._record(result)

    def _record(self, result: dict) -> None:
        number, over = result["round"] + 1, result["game_over"]
        self.details.append(type="round_result", round=number,
                            **{key: value for key, value in result.items() if key not in ("action", "round")},
                            summary=self.describe_round(result))
        self._publish(number if over else number + 1)
        self.snapshot.update(phase="game_over" if over else "playing", last_event={
            "summary": self.describe_round(result), "structured": {
                "round": number, "winner": result["round_winner"], "game_over": over,
                "game_winner": result["game_winner"]}})

    def describe_round(self, result: dict) -> str:
        parts = [f"{side} {self.heroes[side]} {result[f'{side}_move']} for "
                 f"{result[f'{side}_damage_dealt']} ({result[f'{side}_hp']}/{self.rows[side]['hp']} HP, "
                 f"{result[f'{side}_mana']} mana)" for side in SIDES]
        return f"Round {result['round'] + 1}: {' vs '.join(parts)} -> {result['round_winner']}"

    def proto_display(self, msg, direction):
        """The round, and while the duel goes on which of this side's moves are ready."""
        text = super().proto_display(msg, direction)
        if text is not None and not msg["game_over"]:
            ready = [move for move in MOVES
                     if effective_move(self.rows[self.role], self._mine_after(msg), move) == move]
            text += f"\nnext round: {spoken_list(MOVES)} (ready: {', '.join(ready)})"
        return text

    def _mine_after(self, result: dict) -> dict:
        return fighters_from_result(result)[self.role]
