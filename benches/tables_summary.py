"""Sums up the JSON lines of benches/tables.rs and benches/tables_reference.py (read from
stdin, as benches/tables_vs_reference.sh interleaves them) into one row per table and side:
the median hand (ms) and its actions, ms per action over all the hands, the same without the
seat agents' choosing (the leader's step and the four members' verification), and the
time of each other side over ours."""

import json
import statistics
import sys
from collections import defaultdict


def per_side(lines):
    hands = defaultdict(list)
    for line in lines:
        if line.startswith("{"):
            hand = json.loads(line)
            hands[(hand["table"], hand["implementation"])].append(hand)
    return hands


def row(hands):
    actions = sum(h["actions"] for h in hands)
    total = sum(h["hand_ms"] for h in hands)
    choosing = sum(h["choosing_ms"] for h in hands)
    return {"hands": len(hands), "hand_ms": statistics.median(h["hand_ms"] for h in hands),
            "actions": statistics.median(h["actions"] for h in hands),
            "ms_per_action": total / actions, "table_ms_per_action": (total - choosing) / actions}


def main():
    hands = per_side(sys.stdin)
    tables = list(dict.fromkeys(table for table, _ in hands))
    print(f"{'table':<26}{'side':<28}{'hands':>6}{'ms/hand':>10}{'actions':>9}"
          f"{'ms/action':>11}{'w/o agent':>11}")
    for table in tables:
        rows = {side: row(hands[(table, side)]) for table_, side in hands if table_ == table}
        for side, r in rows.items():
            print(f"{table:<26}{side:<28}{r['hands']:>6}{r['hand_ms']:>10.1f}{r['actions']:>9.1f}"
                  f"{r['ms_per_action']:>11.2f}{r['table_ms_per_action']:>11.2f}")
        ours = rows.get("ours")
        for side, theirs in rows.items():
            if ours and side != "ours":
                print(f"{table:<26}{side + ' / ours':<28}{'':>6}"
                      f"{theirs['hand_ms'] / ours['hand_ms']:>9.1f}x{'':>9}"
                      f"{theirs['ms_per_action'] / ours['ms_per_action']:>10.1f}x"
                      f"{theirs['table_ms_per_action'] / ours['table_ms_per_action']:>10.1f}x")


if __name__ == "__main__":
    sys.exit(main())
