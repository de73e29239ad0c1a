"""Phases of mental-poker games from both sides' events.jsonl, for ours and the reference's:
setup (the host receives join -> the guest has sent its layer), play (-> the host starts its
audit), audit (-> the last side's game_over), and the whole game. Means over the runs listed in
RUNS_FILE, one line each: `IMPL HOST_EVENTS GUEST_EVENTS`.

usage: python mental_poker_timeline.py RUNS_FILE"""
from __future__ import annotations

import json
import sys
from collections import defaultdict
from datetime import datetime


def times(path: str) -> dict[str, list[float]]:
    seen: dict[str, list[float]] = defaultdict(list)
    for line in open(path, encoding="utf-8"):
        event = json.loads(line)
        seen[event["type"]].append(datetime.fromisoformat(event["ts"]).timestamp())
    return seen


def phases(host_file: str, guest_file: str) -> dict[str, float]:
    host, guest = times(host_file), times(guest_file)
    start = host["protocol_message"][0]
    setup = guest["mp_setup_completed"][0]
    audit = host["audit_started"][0]
    end = max(host["game_over"][0], guest["game_over"][0])
    return {"setup": setup - start, "play": audit - setup, "audit": end - audit, "game": end - start}


def main() -> None:
    runs: dict[str, list[dict[str, float]]] = defaultdict(list)
    for line in open(sys.argv[1], encoding="utf-8"):
        impl, host_file, guest_file = line.split()
        runs[impl].append(phases(host_file, guest_file))
    means = {impl: {phase: 1000 * sum(r[phase] for r in rs) / len(rs) for phase in rs[0]}
             for impl, rs in runs.items()}
    print(f"{'phase (ms, mean)':<18}{'ours':>10}{'reference':>12}{'ratio':>8}")
    for phase in ("setup", "play", "audit", "game"):
        ours, ref = means["ours"][phase], means["reference"][phase]
        print(f"{phase:<18}{ours:>10.1f}{ref:>12.1f}{ref / ours:>7.1f}x")


if __name__ == "__main__":
    main()
