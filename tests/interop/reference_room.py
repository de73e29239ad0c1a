"""The reference client's room authority and member verifier (aigenora 0.1.4), for
tests/interop/rooms.rs. It only drives the reference's own GroupAuthority and GroupReplica
classes; it adds no room logic of its own.

usage: reference_room.py lead STATE_DIR    one JSON job on stdin:
           {"hooks_dir", "group_id", "options", "leader": SEED, "members": [{"seed", "seat"}],
            "steps": [{"input": {"actor": I, "client_seq": N, "action": {...}}}
                      | {"join": {"seed", "seat": S, "membership_version": V}}
                      | {"restore": {"leader": I, "epoch": E, "membership_version": V,
                                     "members": [I...]}}]}
         prints one JSON line per construction and step:
           {"envelopes": {public_key: envelope}, "bootstrap": bool, "receipt"?: {...},
            "joined"?: public_key, "joined_bootstrap"?: envelope}
       reference_room.py follow STATE_DIR  JSON lines on stdin:
           {"viewer", "group_id", "leader", "epoch", "envelope", "bootstrap"}
         prints "OK", "SAME" or "ERR <reason>" per line (one replica per viewer; a new
         leader/epoch for a viewer advances its epoch first).
"""

import json
import sys
import tempfile
from pathlib import Path

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from aigenora.engine.keys import KeyPair
from aigenora.proto.group import GroupAuthority, GroupReplica
from aigenora.proto.loader import load_hooks


def keypair(seed):
    public = Ed25519PrivateKey.from_private_bytes(bytes.fromhex(seed)).public_key()
    raw = public.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    return KeyPair(public_key=raw.hex(), private_key=seed)


def emit(**fields):
    print(json.dumps(fields), flush=True)


def lead(state_dir):
    job = json.load(sys.stdin)
    spec = json.loads((Path(job["hooks_dir"]) / "spec.json").read_text())
    keys = [keypair(item["seed"]) for item in job["members"]]
    seats = {keys[i].public_key: item["seat"] for i, item in enumerate(job["members"])}
    leader = keypair(job["leader"])
    members = [{"member_id": f"m{seats[k.public_key]}", "public_key": k.public_key,
                "seat": seats[k.public_key], "status": "active"} for k in keys]
    members.insert(0, {"member_id": "m0", "public_key": leader.public_key, "seat": 0, "status": "active"})
    everyone = {k.public_key: k for k in keys + [leader]}

    def authority(owner, epoch, version, listed, checkpoint=None):
        return GroupAuthority(
            spec=spec, hooks=load_hooks(job["hooks_dir"]), options=job["options"],
            state_dir=tempfile.mkdtemp(dir=state_dir), group_id=job["group_id"],
            leader_public_key=owner.public_key, leader_epoch=epoch, membership_version=version,
            members=listed, keypair=owner, checkpoint=checkpoint)

    current = authority(leader, 0, len(members), members)
    emit(envelopes=current.bootstrap_envelopes(), bootstrap=True)
    for step in job["steps"]:
        if "input" in step:
            move = step["input"]
            actor = keys[move["actor"]].public_key if move["actor"] >= 0 else current.leader_public_key
            try:
                envelopes, receipt = current.apply_input(
                    actor_public_key=actor, client_seq=move["client_seq"], action=move["action"])
            except (KeyError, TypeError, ValueError) as exc:
                envelopes, receipt = {}, {"status": "rejected", "reason": str(exc)}
            emit(envelopes=envelopes if receipt["status"] == "accepted" else {}, bootstrap=False,
                 receipt=receipt)
        elif "join" in step:
            join = step["join"]
            newcomer = keypair(join["seed"])
            everyone[newcomer.public_key] = newcomer
            member = {"member_id": f"m{join['seat']}", "public_key": newcomer.public_key,
                      "seat": join["seat"], "status": "active"}
            members.append(member)
            envelopes = current.add_member(member, membership_version=join["membership_version"])
            joined = envelopes.pop(newcomer.public_key)
            emit(envelopes=envelopes, bootstrap=False, joined=newcomer.public_key,
                 joined_bootstrap=current.bootstrap_envelope(newcomer.public_key) or joined)
        else:
            restore = step["restore"]
            owner = keys[restore["leader"]]
            listed = [m for m in members if m["public_key"] in
                      {keys[i].public_key for i in restore["members"]} | {owner.public_key}]
            checkpoint = current.checkpoint()
            current = authority(owner, restore["epoch"], restore["membership_version"], listed, checkpoint)
            emit(envelopes=current.bootstrap_envelopes(), bootstrap=True)


def follow(state_dir):
    replicas = {}
    for line in sys.stdin:
        item = json.loads(line)
        viewer = item["viewer"]
        replica = replicas.get(viewer)
        try:
            if replica is None:
                replica = GroupReplica(
                    state_dir=tempfile.mkdtemp(dir=state_dir), group_id=item["group_id"],
                    viewer_public_key=viewer, leader_public_key=item["leader"],
                    leader_epoch=item["epoch"], protocol_name="room")
                replicas[viewer] = replica
            elif item["epoch"] != replica.leader_epoch:
                replica.advance_epoch(leader_public_key=item["leader"], leader_epoch=item["epoch"])
            applied = replica.apply(item["envelope"], bootstrap=item["bootstrap"])
            print("OK" if applied else "SAME", flush=True)
        except Exception as exc:  # every refusal is reported, not raised
            print(f"ERR {type(exc).__name__}: {exc}", flush=True)


if __name__ == "__main__":
    {"lead": lead, "follow": follow}[sys.argv[1]](sys.argv[2])
