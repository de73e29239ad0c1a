"""The workload of benches/tables.rs through the reference (aigenora 0.1.4): one hand of each
four-seat table named on the command line, led by the reference's own GroupAuthority on its
own table hooks, with four GroupReplicas verifying their envelopes. The reference has no seat
agents for its tables, so each seat's action is chosen by OUR seat agent (the
`proto_group_autoplay` of our hooks, on our SDK, loaded beside the reference under its own
module names) from the view the reference's replica verified; the views have the same shapes.

usage: tables_reference.py [--no-files] RUN ALIAS...   (RUN picks the deal: deal_seed
"table-bench-RUN"). The reference's authority and replicas write their files (snapshot.json,
details.jsonl, events.jsonl, the checkpoint) inside the calls timed here; with --no-files those
writes are skipped, leaving the work in memory that benches/tables.rs times on our side.
Prints one JSON line per table: actions, ms for the hand, and the part of it the seat agents
spent choosing.

Each member gets its envelopes as the wire hands them over, through a JSON round trip that is
not timed: handed over as objects, a full view keeps the list objects its hooks shared (Bridge's
`my_hand` is its `playable_hand`), and the reference's replica, applying a later delta to
both, fails its own view hash check."""

import copy
import importlib.util
import json
import os
import sys
import tempfile
import time
from pathlib import Path

import aigenora
from aigenora.proto.group import GroupAuthority, GroupReplica
from aigenora.proto.loader import load_hooks
from reference_keys import keypair

REPO = Path(__file__).resolve().parent.parent
OUR_SDK = REPO / "src" / "hooks" / "python"
SEATS = 4
MAX_ACTIONS = 5000


def reference_table(alias):
    """The reference's protocol directory for a network alias, from its own index."""
    package = Path(os.path.dirname(aigenora.__file__)) / "protocols"
    index = json.loads((package / "index.json").read_text())
    entry = next(p for p in index["protocols"] if p["alias"] == alias)
    return package / entry["path"]


def our_seat_agent(alias):
    """Our hooks for `alias` on our SDK: the reference's `aigenora` modules step aside while
    ours are imported (every import of our SDK happens then), and come back after."""
    theirs = {name: sys.modules.pop(name) for name in list(sys.modules)
              if name == "aigenora" or name.startswith("aigenora.")}
    sys.path.insert(0, str(OUR_SDK))
    try:
        path = REPO / "src" / "protocols" / "well_known" / alias / "hooks.py"
        spec = importlib.util.spec_from_file_location(f"our_{alias.replace('-', '_')}", path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        loaded = Path(sys.modules["aigenora"].__file__).resolve().parent
        if loaded != OUR_SDK / "aigenora":
            raise ImportError(f"our seat agent imported {loaded}, not our SDK")
        return module.Hooks()
    finally:
        sys.path.remove(str(OUR_SDK))
        for name in [n for n in sys.modules if n == "aigenora" or n.startswith("aigenora.")]:
            del sys.modules[name]
        sys.modules.update(theirs)


class Wire:
    """Hands envelopes to the members as the network does, a JSON round trip, and keeps the
    time that takes apart from the hand's."""

    def __init__(self):
        self.seconds = 0.0

    def deliver(self, value):
        begun = time.perf_counter()
        copied = json.loads(json.dumps(value))
        self.seconds += time.perf_counter() - begun
        return copied


def play_hand(alias, table_dir, spec, agent, options):
    keys = [keypair() for _ in range(SEATS)]
    members = [{"member_id": f"seat-{i}", "public_key": k.public_key, "seat": i, "status": "active"}
               for i, k in enumerate(keys)]
    agent.proto_init(options, "guest", [], tempfile.mkdtemp())
    hooks = load_hooks(table_dir)
    choosing, actions, wire = 0.0, 0, Wire()
    started = time.perf_counter()
    authority = GroupAuthority(spec=spec, hooks=hooks, options=options, state_dir=tempfile.mkdtemp(),
                               group_id="table-bench", leader_public_key=keys[0].public_key,
                               leader_epoch=0, membership_version=SEATS, members=members,
                               keypair=keys[0])
    replicas = [GroupReplica(state_dir=tempfile.mkdtemp(), group_id="table-bench",
                             viewer_public_key=k.public_key, leader_public_key=keys[0].public_key,
                             leader_epoch=0, protocol_name=spec["name"]) for k in keys]
    for key, replica in zip(keys, replicas):
        replica.apply(wire.deliver(authority.bootstrap_envelope(key.public_key)), bootstrap=True)
    client_seq = [0] * SEATS
    while not authority.completed:
        if actions >= MAX_ACTIONS:
            raise SystemExit(f"{alias}: no end after {MAX_ACTIONS} actions")
        chose = time.perf_counter()
        chosen = None
        for offset in range(SEATS):
            seat = (actions + offset) % SEATS
            action = agent.proto_group_autoplay(copy.deepcopy(replicas[seat].view), members[seat])
            if action is not None:
                chosen = (seat, action)
                break
        choosing += time.perf_counter() - chose
        if chosen is None:
            raise SystemExit(f"{alias}: no seat has an action and the hand is not over")
        seat, action = chosen
        client_seq[seat] += 1
        envelopes, receipt = authority.apply_input(actor_public_key=keys[seat].public_key,
                                                   client_seq=client_seq[seat], action=action)
        if receipt["status"] != "accepted":
            raise SystemExit(f"{alias}: seat {seat}'s {action} was {receipt}")
        delivered = wire.deliver(envelopes)
        for key, replica in zip(keys, replicas):
            replica.apply(delivered[key.public_key])
        actions += 1
    seconds = time.perf_counter() - started - wire.seconds
    return {"table": alias, "actions": actions,
            "hand_ms": seconds * 1e3, "choosing_ms": choosing * 1e3}


def skip_file_writes():
    from aigenora.proto import group, sdk

    sdk.SnapshotBus.update = lambda self, *args, **kwargs: None
    sdk.DetailLog.append = lambda self, *args, **kwargs: None
    sdk.EventBus.emit = lambda self, *args, **kwargs: None
    group._atomic_json = lambda *args, **kwargs: None


def main():
    arguments = sys.argv[1:]
    implementation = "reference"
    if arguments[:1] == ["--no-files"]:
        skip_file_writes()
        implementation, arguments = "reference, no files", arguments[1:]
    run, aliases = arguments[0], arguments[1:]
    options = {"max_hands": 1, "deal_seed": f"table-bench-{run}"}
    for alias in aliases:
        table_dir = reference_table(alias)
        spec = json.loads((table_dir / "spec.json").read_text())
        hand = play_hand(alias, table_dir, spec, our_seat_agent(alias), options)
        print(json.dumps({"implementation": implementation, **hand}), flush=True)


if __name__ == "__main__":
    sys.exit(main())
