"""Hero Duel hooks for the simultaneous_round engine with a shadow judge: each round both
heroes pick a move (strike, guard, or ability a, b or ult); `resolve_round` applies the rules
to the two revealed moves, for the host's verdict and, unchanged, for the guest's check.

Every number comes from the balance table: `options.balance`, else the preset named by
`options.preset` (see PRESETS), else the standard preset. The host advertises the full table
it plays with (proto_host_metadata), so a guest joining with those options judges alike."""
from __future__ import annotations

from pathlib import Path

TYPE_CHECKING = False  # typing costs every process ~2 ms to import; annotations are strings
if TYPE_CHECKING:
    from typing import Any

from aigenora.proto.choices import RoundChoices
from aigenora.proto.hooks import HookResult, ProtocolHooks
from aigenora.proto.options import option, script_option, seeded_rng
from aigenora.proto.rounds import RoundResults

MOVES = ("strike", "guard", "a", "b", "ult")
ABILITIES = ("a", "b", "ult")
SIDES = ("host", "guest")
KEYWORDS = {
    "strike": ["strike", "attack", "hit"],
    "guard": ["guard", "block", "defend"],
    "a": ["a", "ability a", "first ability"],
    "b": ["b", "ability b", "second ability"],
    "ult": ["ult", "ultimate"],
}


def _hero(hp: int, mana: int, regen: int, attack: int, armor: int, guard: int,
          a: tuple[int, int, int], b: tuple[int, int, int], ult: tuple[int, int, int]) -> dict:
    """A balance row; each ability is (damage, cost, cooldown)."""
    row = {"hp": hp, "mana": mana, "regen": regen, "attack": attack, "armor": armor, "guard": guard}
    for name, (damage, cost, cooldown) in (("a", a), ("b", b), ("ult", ult)):
        row[name] = {"damage": damage, "cost": cost, "cooldown": cooldown}
    return row


STANDARD = {
    "knight": _hero(420, 60, 10, 22, 6, 50, a=(40, 15, 1), b=(65, 30, 2), ult=(120, 55, 4)),
    "ranger": _hero(330, 80, 14, 28, 3, 40, a=(45, 20, 1), b=(70, 35, 2), ult=(130, 60, 4)),
    "sorcerer": _hero(280, 130, 22, 14, 2, 35, a=(55, 25, 1), b=(85, 45, 3), ult=(170, 85, 5)),
    "warden": _hero(500, 70, 12, 18, 10, 60, a=(35, 15, 1), b=(55, 30, 2), ult=(95, 50, 4)),
}


def _scaled(table: dict, hp: int = 100, damage: int = 100, armor: int = 100, mana: int = 100,
            regen: int = 100, cost: int = 100, cooldown: int = 0) -> dict:
    """A table derived from another: percentages for the numbers, an offset for cooldowns."""
    def pct(value: int, percent: int, low: int, high: int) -> int:
        return max(low, min(high, value * percent // 100))

    derived = {}
    for name, row in table.items():
        new = dict(row, hp=pct(row["hp"], hp, 1, 99999), attack=pct(row["attack"], damage, 0, 9999),
                   armor=pct(row["armor"], armor, 0, 9999), mana=pct(row["mana"], mana, 0, 9999),
                   regen=pct(row["regen"], regen, 0, 999))
        for ability in ABILITIES:
            spec = row[ability]
            new[ability] = {
                "damage": pct(spec["damage"], damage, 0, 99999),
                "cost": pct(spec["cost"], cost, 0, 9999),
                "cooldown": max(0, min(99, spec["cooldown"] + cooldown)),
            }
        derived[name] = new
    return derived


# Named balance tables, selected with options.preset.
PRESETS = {
    "standard": STANDARD,
    "glass-cannon": _scaled(STANDARD, hp=50, damage=160, armor=0),
    "fortress": _scaled(STANDARD, hp=200, damage=80, armor=250, regen=150),
    "arcane": _scaled(STANDARD, mana=150, regen=200, cost=70, cooldown=-1),
}
DEFAULT_PRESET = "standard"
DEFAULT_MAX_ROUNDS = 30


def resolve_balance(options: dict) -> dict:
    """The balance table a side plays with: options.balance, else options.preset, else the
    standard preset. ValueError for an unknown preset or an empty table."""
    table = options.get("balance")
    if table is None:
        name = option(options, "preset", DEFAULT_PRESET)
        if name not in PRESETS:
            raise ValueError(f"unknown preset {name!r} (presets: {', '.join(PRESETS)})")
        table = PRESETS[name]
    if not isinstance(table, dict) or not table:
        raise ValueError("the balance table has no heroes")
    return table


def default_heroes(balance: dict) -> tuple[str, str]:
    """(host, guest): the first hero by name, and the second (or the first again)."""
    names = sorted(balance)
    return names[0], names[1 if len(names) > 1 else 0]


# -- the rules (pure functions of the balance, the fighters and the two moves) -------------

def fresh_fighter(row: dict) -> dict:
    return {"hp": row["hp"], "mana": row["mana"], "cd": {ability: 0 for ability in ABILITIES}}


def effective_move(row: dict, fighter: dict, move: str) -> str:
    """The move that takes effect: an ability that is cooling down or unaffordable strikes."""
    if move in ABILITIES and (fighter["cd"][move] > 0 or fighter["mana"] < row[move]["cost"]):
        return "strike"
    return move


def outgoing_damage(row: dict, move: str) -> int:
    if move == "strike":
        return row["attack"]
    return row[move]["damage"] if move in ABILITIES else 0


def damage_taken(row: dict, fighter: dict, move: str, incoming: int) -> int:
    """What a hit does to this fighter: less armor, less the guard share, at most its HP."""
    damage = max(0, incoming - row["armor"])
    if move == "guard":
        damage = damage * (100 - row["guard"]) // 100
    return min(damage, fighter["hp"])


def after_round(row: dict, fighter: dict, move: str, taken: int) -> dict:
    """The fighter at the end of the round: hit, paid, cooled down and regenerated."""
    mana, cooldowns = fighter["mana"], {}
    for ability in ABILITIES:
        if ability == move:
            mana -= row[ability]["cost"]
            cooldowns[ability] = row[ability]["cooldown"]
        else:
            cooldowns[ability] = max(0, fighter["cd"][ability] - 1)
    return {"hp": fighter["hp"] - taken, "mana": min(row["mana"], mana + row["regen"]), "cd": cooldowns}


def verdict(rows: dict, fighters: dict) -> str:
    """The winner of a finished duel: a survivor, else the larger share of its own HP."""
    host, guest = fighters["host"]["hp"], fighters["guest"]["hp"]
    if host == 0 or guest == 0:
        return "draw" if host == guest else "host" if guest == 0 else "guest"
    host_share, guest_share = host * rows["guest"]["hp"], guest * rows["host"]["hp"]
    return "draw" if host_share == guest_share else "host" if host_share > guest_share else "guest"


def resolve_round(rows: dict, fighters: dict, moves: dict, round_index: int,
                  max_rounds: int) -> tuple[dict, dict]:
    """(fighters after the round, the round_result message) for both sides' revealed moves.
    `rows` and `fighters` are keyed by side; nothing passed in is modified."""
    played = {side: effective_move(rows[side], fighters[side], moves[side]) for side in SIDES}
    dealt = {}
    for side, foe in (("host", "guest"), ("guest", "host")):
        incoming = outgoing_damage(rows[side], played[side])
        dealt[side] = damage_taken(rows[foe], fighters[foe], played[foe], incoming)
    after = {side: after_round(rows[side], fighters[side], played[side], dealt[foe])
             for side, foe in (("host", "guest"), ("guest", "host"))}
    over = any(after[side]["hp"] == 0 for side in SIDES) or round_index + 1 >= max_rounds
    result: dict[str, Any] = {"action": "round_result", "round": round_index,
                              "host_move": played["host"], "guest_move": played["guest"]}
    for side in SIDES:
        result[f"{side}_hp"] = after[side]["hp"]
    for side in SIDES:
        result[f"{side}_mana"] = after[side]["mana"]
    for side in SIDES:
        result[f"{side}_damage_dealt"] = dealt[side]
    for side in SIDES:
        for ability in ABILITIES:
            result[f"{side}_cd_{ability}"] = after[side]["cd"][ability]
    result["round_winner"] = ("draw" if dealt["host"] == dealt["guest"]
                              else "host" if dealt["host"] > dealt["guest"] else "guest")
    result["game_over"] = over
    result["game_winner"] = verdict(rows, after) if over else "none"
    return after, result


def fighters_from_result(result: dict) -> dict:
    """Both fighters as a round_result reports them."""
    return {side: {"hp": result[f"{side}_hp"], "mana": result[f"{side}_mana"],
                   "cd": {ability: result[f"{side}_cd_{ability}"] for ability in ABILITIES}}
            for side in SIDES}


class Hooks(RoundChoices, RoundResults, ProtocolHooks):
    GAME_OVER = "Duel over"
    SUPPORTED_CONTROL_MODES = ("autonomous", "hybrid", "human")
    CHOICE_KEYWORDS = KEYWORDS
    DECISION_SCHEMA = {
        "match_key": "round",
        "value_field": "move",
        "choices": KEYWORDS,
        "strategy_field": "fixed",
    }

    def proto_init(self, options, role, args, state_dir: Path, decision_config: dict[str, Any] | None = None):
        super().proto_init(options, role, args, state_dir, decision_config)
        self.balance = resolve_balance(options)
        host_default, guest_default = default_heroes(self.balance)
        self.heroes = {"host": option(options, "host_hero", host_default),
                       "guest": option(options, "guest_hero", guest_default)}
        self._check_heroes()
        self.max_rounds = option(options, "max_rounds", DEFAULT_MAX_ROUNDS, int)
        self.script = script_option(options, "moves", MOVES)
        self.rng = seeded_rng(options, role)
        self._start()

    def _check_heroes(self) -> None:
        for side in SIDES:
            if self.heroes[side] not in self.balance:
                raise ValueError(f"{side} hero {self.heroes[side]!r} is not in this side's balance "
                                 f"table (heroes: {', '.join(sorted(self.balance))})")

    def _start(self) -> None:
        self.rows = {side: self.balance[self.heroes[side]] for side in SIDES}
        self.fighters = {side: fresh_fighter(self.rows[side]) for side in SIDES}
        self.snapshot.update(heroes=dict(self.heroes), max_rounds=self.max_rounds, round=1,
                             hp={side: self.fighters[side]["hp"] for side in SIDES})

    def proto_host_metadata(self):
        """Advertises the resolved options: the full balance table, never just a preset name."""
        return ("Hero Duel", "game,hero-duel", "supply", {
            "balance": self.balance, "host_hero": self.heroes["host"],
            "guest_hero": self.heroes["guest"], "max_rounds": self.max_rounds,
        })

    # -- handshake ----------------------------------------------------------------------

    def proto_guest_join_message(self):
        join = {"action": "join"}
        if self.options.get("guest_hero"):
            join["hero"] = self.heroes["guest"]
        return join

    def proto_host_handle_join(self, msg):
        if msg.get("hero") in self.balance:
            self.heroes["guest"] = msg["hero"]
            self._start()
        self.snapshot.update(phase="playing")
        return HookResult({"action": "ready", "host_hero": self.heroes["host"],
                           "guest_hero": self.heroes["guest"], "max_rounds": self.max_rounds})

    def proto_guest_handle_ready(self, msg):
        self.heroes = {"host": msg["host_hero"], "guest": msg["guest_hero"]}
        self.max_rounds = msg["max_rounds"]
        self._check_heroes()
        self._start()
        self.snapshot.update(phase="playing")

    # -- choosing a move ------------------------------------------------------------------

    def proto_round_value(self, round_index: int, state: dict) -> str:
        return self.decide_round(round_index, MOVES, self.script, self._pick_move,
                                 f"move must be one of {', '.join(MOVES)}")

    def _pick_move(self) -> str:
        """Usually the hardest-hitting move that would take effect, sometimes any of them."""
        me, foe = self.role, "guest" if self.role == "host" else "host"
        row, fighter = self.rows[me], self.fighters[me]
        usable = [move for move in MOVES if effective_move(row, fighter, move) == move]
        if self.rng.random() < 0.25:
            return self.rng.choice(usable)
        armor = self.rows[foe]["armor"]
        return max(usable, key=lambda move: max(0, outgoing_damage(row, move) - armor))

    # -- judging --------------------------------------------------------------------------

    def proto_round_judge_pure(self, round_index, host_value, guest_value, state):
        """The round_result for two revealed moves, from this side's own balance and
        fighters; changes nothing (the guest's shadow judge)."""
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
        number = result["round"] + 1
        over = result["game_over"]
        hp = {side: result[f"{side}_hp"] for side in SIDES}
        self.details.append(
            type="round_result", round=number,
            **{key: value for key, value in result.items() if key not in ("action", "round")},
            summary=self.describe_round(result),
        )
        summary = (f"{self.GAME_OVER}: {result['game_winner']}" if over
                   else f"Round {number}: {result['round_winner']}")
        self.snapshot.update(
            phase="game_over" if over else "playing", hp=hp,
            mana={side: result[f"{side}_mana"] for side in SIDES},
            round=number if over else number + 1,
            last_event={"summary": summary, "structured": {
                "round": number, "winner": result["round_winner"],
                "game_over": over, "game_winner": result["game_winner"],
            }},
        )

    def describe_round(self, result: dict) -> str:
        parts = [f"{side} {self.heroes[side]} {result[f'{side}_move']} for "
                 f"{result[f'{side}_damage_dealt']} ({result[f'{side}_hp']}/{self.rows[side]['hp']} HP)"
                 for side in SIDES]
        return f"R{result['round'] + 1}: {' vs '.join(parts)} -> {result['round_winner']}"
