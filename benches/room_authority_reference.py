"""The workload of benches/room_authority.rs through the reference's own GroupAuthority and
GroupReplica (aigenora 0.1.4) on its Community Room hooks: a 32-member room, N `send`
actions round-robin, one member verifying its envelope of each step. Prints one JSON line
with the same fields."""

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

MEMBERS = 32


def main():
    actions = int(os.environ.get("ROOM_ACTIONS", "500"))
    room = next((Path(os.path.dirname(aigenora.__file__)) / "protocols" / "9a8a5128").iterdir())
    spec = json.loads((room / "spec.json").read_text())
    keys = [keypair() for _ in range(MEMBERS)]
    members = [{"member_id": f"m{i}", "public_key": k.public_key, "seat": i, "status": "active"}
               for i, k in enumerate(keys)]
    state = tempfile.mkdtemp()
    authority = GroupAuthority(spec=spec, hooks=load_hooks(room), options={"history_limit": 200},
                               state_dir=state, group_id="bench-room",
                               leader_public_key=keys[0].public_key, leader_epoch=0,
                               membership_version=MEMBERS, members=members, keypair=keys[0])
    watcher = keys[1].public_key
    replica = GroupReplica(state_dir=tempfile.mkdtemp(), group_id="bench-room",
                           viewer_public_key=watcher, leader_public_key=keys[0].public_key,
                           leader_epoch=0, protocol_name="room")
    replica.apply(authority.bootstrap_envelope(watcher), bootstrap=True)
    per_action, verify = [], 0.0
    started = time.perf_counter()
    for n in range(actions):
        actor = keys[n % MEMBERS].public_key
        begun = time.perf_counter()
        envelopes, _ = authority.apply_input(actor_public_key=actor, client_seq=n // MEMBERS + 1,
                                             action={"kind": "send", "text": f"message {n} in a busy room"})
        per_action.append(time.perf_counter() - begun)
        checked = time.perf_counter()
        replica.apply(envelopes[watcher])
        verify += time.perf_counter() - checked
    seconds = time.perf_counter() - started
    per_action.sort()
    at = lambda q: per_action[int((len(per_action) - 1) * q)] * 1e3
    print(json.dumps({"implementation": "reference", "members": MEMBERS, "actions": actions,
                      "seconds": seconds, "actions_per_second": actions / seconds,
                      "p50_ms": at(0.5), "p99_ms": at(0.99), "verify_us": verify * 1e6 / actions}))


if __name__ == "__main__":
    sys.exit(main())
