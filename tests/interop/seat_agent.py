"""Our seat agent for a seat the reference plays: the reference has no agent for its table
seats, so an interop test drives its seats with OUR hooks' `proto_group_autoplay` (on our SDK,
imported under its own `aigenora` package ahead of any the interpreter has installed) from the
view the reference's replica verified; the views have the same shapes.

usage: seat_agent.py ALIAS OPTIONS_JSON   then one JSON line per question on stdin,
           {"view": {...}, "member": {"public_key", "seat", ...}}
         answered by one line, {"action": {...} | null}."""

import importlib.util
import json
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "src" / "hooks" / "python"))


def our_hooks(alias, options):
    """Our hooks for the well-known table `alias`, initialised as a guest seat's are."""
    path = REPO / "src" / "protocols" / "well_known" / alias / "hooks.py"
    spec = importlib.util.spec_from_file_location(f"our_{alias.replace('-', '_')}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    loaded = Path(sys.modules["aigenora"].__file__).resolve().parent
    if loaded != REPO / "src" / "hooks" / "python" / "aigenora":
        raise SystemExit(f"our seat agent imported {loaded}, not our SDK")
    hooks = module.Hooks()
    hooks.proto_init(options, "guest", [], Path(tempfile.mkdtemp()))
    return hooks


def main():
    alias, options = sys.argv[1], json.loads(sys.argv[2])
    hooks = our_hooks(alias, options)
    for line in sys.stdin:
        question = json.loads(line)
        action = hooks.proto_group_autoplay(question["view"], question["member"])
        print(json.dumps({"action": action}), flush=True)


if __name__ == "__main__":
    main()
