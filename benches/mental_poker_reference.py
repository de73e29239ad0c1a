"""One in-memory game of the reference client's mental poker (host and guest on two threads
over its memory duplex), with an event bus on each side so the game's phases can be timed
the way ours are (benches/mental_poker_timeline.py). Used by mental_poker_vs_reference.sh.

usage: python mental_poker_reference.py PROTOCOL_DIR OPTIONS_JSON OUT_DIR"""
from __future__ import annotations

import json
import sys
import threading
from pathlib import Path

from aigenora.engine.p2p import memory_duplex
from aigenora.proto import engine
from aigenora.proto.sdk import EventBus


def main() -> None:
    protocol, options, out = sys.argv[1], json.loads(sys.argv[2]), Path(sys.argv[3])
    ends = dict(zip(("host", "guest"), memory_duplex()))
    results: dict = {}

    def side(role: str) -> None:
        run = engine.run_host if role == "host" else engine.run_guest
        (out / role).mkdir(parents=True, exist_ok=True)
        results[role] = run(protocol, ends[role], options=options, state_base=out / role,
                            event_bus=EventBus(out / role), control_mode="hybrid")

    threads = [threading.Thread(target=side, args=(role,)) for role in ends]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    if not all(results.get(role, {}).get("audit_passed") for role in ends):
        sys.exit(f"the reference game did not pass its audits: {results}")


if __name__ == "__main__":
    main()
