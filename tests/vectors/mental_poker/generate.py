"""Generates the mental-poker known-answer vectors from the reference client (aigenora 0.1.4).

Run once with the reference's interpreter; the JSON files it writes are committed and read by
our Rust tests, which never need the reference to check them:

    $AIGENORA_REFERENCE_PYTHON tests/vectors/mental_poker/generate.py

- primitives.json: context bytes, FDH outputs, a raw RSA private operation, HKDF token keys,
  sealed OT entries and deck blobs with fixed nonces and pads, witness checks, transcript roots.
- crazy_eights_game.json, briscola_game.json: one honest reference game each (host and guest
  in one process over the reference's memory duplex), every frame in the order it was sent,
  plus what both sides signed. Our audit replays them and must reach the same root.

Nothing here is copied into our code: the reference is only called.
"""
from __future__ import annotations

import json
import os
import sys
import tempfile
import threading
from pathlib import Path
from unittest import mock

from cryptography.hazmat.primitives.asymmetric import rsa
from cryptography.hazmat.primitives.ciphers.aead import ChaCha20Poly1305

import aigenora
from aigenora.engine import aead_deck, ot
from aigenora.engine.p2p import ChannelClosed, MemoryChannel, memory_duplex
from aigenora.proto import engine as ref_engine
from aigenora.proto import mental_poker
from aigenora.proto.mp_engine import _gen_temp_keypair

HERE = Path(__file__).resolve().parent
PACKAGE = Path(aigenora.__file__).resolve().parent
GAMES = {"crazy_eights": "3a3c352a", "briscola": "f508d605"}

# A fixed 2048-bit key (two 1024-bit primes found by a deterministic search), so the vectors
# do not depend on a key generator.
def fixed_key() -> rsa.RSAPrivateKey:
    import hashlib

    def prime_from(seed: str) -> int:
        counter = 0
        while True:
            digest = b"".join(hashlib.sha256(f"{seed}:{counter}:{i}".encode()).digest() for i in range(4))
            candidate = int.from_bytes(digest, "big") | (3 << 1022) | 1
            if candidate.bit_length() == 1024 and is_probable_prime(candidate) and (candidate - 1) % 65537:
                return candidate
            counter += 1

    p = prime_from("aigenora-mp-vector-p")
    q = prime_from("aigenora-mp-vector-q")
    n = p * q
    phi = (p - 1) * (q - 1)
    d = pow(65537, -1, phi)
    numbers = rsa.RSAPrivateNumbers(
        p=p, q=q, d=d, dmp1=d % (p - 1), dmq1=d % (q - 1), iqmp=pow(q, -1, p),
        public_numbers=rsa.RSAPublicNumbers(65537, n),
    )
    return numbers.private_key()


def is_probable_prime(n: int) -> bool:
    small = [2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37]
    if any(n % s == 0 for s in small):
        return n in small
    d, r = n - 1, 0
    while d % 2 == 0:
        d //= 2
        r += 1
    for a in small:
        x = pow(a, d, n)
        if x in (1, n - 1):
            continue
        for _ in range(r - 1):
            x = pow(x, 2, n)
            if x == n - 1:
                break
        else:
            return False
    return True


def h512(x: int) -> str:
    return format(x, "x").zfill(512)


def primitives() -> dict:
    key = fixed_key()
    priv = key.private_numbers()
    pub = ot.Rsapub(e=65537, n=priv.public_numbers.n)
    contexts = []
    for pid, sid, role, ptype, label in [
        ("P", "S", ot.ROLE_HOST, ot.PAYLOAD_K_INNER, "h-2"),
        ("Crazy Eights", "mp-session", ot.ROLE_GUEST, ot.PAYLOAD_K_OUTER, "g-51"),
        ("Brïscola ♠", "a" * 64, ot.ROLE_HOST, ot.PAYLOAD_K_INNER, "h-0"),
        ("", "", ot.ROLE_GUEST, ot.PAYLOAD_K_OUTER, "g-0"),
    ]:
        ctx = ot.build_context(pid, sid, role, ptype, label)
        h = ot.fdh_to_zn_star(ctx, pub.n)
        token = ot.rsa_crt_blinded_private_op(h, priv, pub)
        assert pow(token, 65537, pub.n) == h
        token_key = ot.derive_token_key(token, ctx, pub.n)
        payload = bytes(range(32))
        nonce = bytes(range(100, 112))
        sealed = nonce + ChaCha20Poly1305(token_key).encrypt(nonce, payload, ctx)
        assert ot.open_sealed(label, token, sealed.hex(), pub, pid, sid, role, ptype) == payload
        # A blinded request and its witness for the same label.
        r = int.from_bytes(bytes(range(1, 200)), "big") % pub.n
        z = (h * pow(r, 65537, pub.n)) % pub.n
        y = ot.rsa_crt_blinded_private_op(z, priv, pub)
        assert (y * pow(r, -1, pub.n)) % pub.n == token
        assert ot.verify_witness(z, label, r, pub, pid, sid, role, ptype)
        contexts.append({
            "protocol_id": pid, "session_id": sid, "sender_role": role, "payload_type": ptype,
            "label": label, "context": ctx.hex(), "fdh": h512(h), "token": h512(token),
            "token_key": token_key.hex(), "payload": payload.hex(), "nonce": nonce.hex(),
            "sealed": sealed.hex(), "r": h512(r), "z": h512(z), "y": h512(y),
        })
    # A label whose witness is checked against the wrong label fails.
    c0 = contexts[0]
    assert not ot.verify_witness(int(c0["z"], 16), "h-3", int(c0["r"], 16), pub,
                                 c0["protocol_id"], c0["session_id"], c0["sender_role"], c0["payload_type"])

    blobs = []
    for rank, suit in [(0, 0), (6, 3), (12, 2), (255, 255)]:
        k_inner = bytes([rank, suit]) * 16
        k_outer = bytes([suit, rank, 7]) * 10 + b"xy"
        pad = bytes(range(14))
        nonces = iter([bytes([1]) * 12, bytes([2]) * 12])
        with mock.patch("aigenora.engine.aead_deck.secrets.token_bytes", lambda n: next(nonces)):
            plaintext = aead_deck.pack_inner(aead_deck.encode_card(rank, suit), pad)
            blob_a = aead_deck.seal_inner(k_inner, plaintext)
            blob_b = aead_deck.seal_outer(k_outer, blob_a)
        assert len(blob_a) == aead_deck.BLOB_A_LEN and len(blob_b) == aead_deck.BLOB_B_LEN
        blobs.append({"rank": rank, "suit": suit, "pad": pad.hex(), "k_inner": k_inner.hex(),
                      "k_outer": k_outer.hex(), "nonce_inner": "01" * 12, "nonce_outer": "02" * 12,
                      "blob_a": blob_a.hex(), "blob_b": blob_b.hex()})

    transcripts = []
    for events in [
        [],
        [("mp_ot", {"ot_id": "guest-0", "z": 5, "y": 7})],
        [("mp_setup_a", {"rsa_pub": {"e": 65537, "n": h512(pub.n)}, "blobs": ["00ff", "ab"],
                         "sealed": {"h-10": "aa", "h-2": "bb", "h-1": "cc"}}),
         ("mp_ot", {"ot_id": "host-0", "z": pub.n - 1, "y": priv.d}),
         ("mp_play", {"who": "guest", "id_b": "7", "rank": 6, "suit": 3, "call_suit": 1}),
         ("mp_pass", {"who": "host"}),
         ("mp_opening", {"role": "host", "entries": [{"kind": "token", "label": "h-0", "token": "0f"},
                                                      {"kind": "k_inner", "label": "h-0", "k": "ee"}]}),
         ("mp_witness", {"role": "guest", "witnesses": [{"ot_id": "guest-10", "label": "h-3", "r": 2 ** 2047 + 1},
                                                         {"ot_id": "guest-2", "label": "h-1", "r": 3}]}),
         ("ünïcode ♠", {"text": "é\u2028\"\\\n", "list": [True, False, None, -3]})],
    ]:
        t = mental_poker.Transcript()
        for etype, payload in events:
            t.append(etype, payload)
        transcripts.append({"events": [[etype, payload] for etype, payload in events],
                            "root": t.root_hash()})
    return {
        "rsa": {"e": 65537, "n": h512(pub.n), "p": format(priv.p, "x"), "q": format(priv.q, "x"),
                "d": format(priv.d, "x")},
        "contexts": contexts,
        "blobs": blobs,
        "transcripts": transcripts,
    }


class Tap(MemoryChannel):
    """A memory channel end that appends what it sends to one shared, ordered log."""

    def __init__(self, inner: MemoryChannel, role: str, log: list, lock: threading.Lock):
        super().__init__(inner.incoming, inner.outgoing)
        self.role, self.log, self.lock = role, log, lock

    def send(self, msg):
        with self.lock:
            self.log.append({"from": self.role, "frame": json.loads(json.dumps(msg))})
            super().send(msg)


def reference_game(name: str, options: dict) -> dict:
    proto_dir = next((PACKAGE / "protocols" / GAMES[name]).glob("*/hooks.py")).parent
    host_end, guest_end = memory_duplex()
    log: list = []
    lock = threading.Lock()
    session_id = "f" * 64
    host_kp, guest_kp = _gen_temp_keypair(), _gen_temp_keypair()
    results: dict = {}
    with tempfile.TemporaryDirectory() as base:
        def side(role, end, kp, peer):
            runner = ref_engine.run_host if role == "host" else ref_engine.run_guest
            results[role] = runner(proto_dir, Tap(end, role, log, lock), options=options,
                                   state_base=Path(base) / role, session_id=session_id,
                                   keypair=kp, peer_public_key=peer.public_key,
                                   control_mode="autonomous")
        threads = [threading.Thread(target=side, args=("host", host_end, host_kp, guest_kp)),
                   threading.Thread(target=side, args=("guest", guest_end, guest_kp, host_kp))]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        receipts = {}
        for role in ("host", "guest"):
            assert results[role]["audit_passed"], results[role]
            receipt = Path(results[role]["state_dir"]) / "transcript_receipt.json"
            receipts[role] = json.loads(receipt.read_text())
    assert receipts["host"]["transcript_hash"] == receipts["guest"]["transcript_hash"]
    spec = json.loads((proto_dir / "spec.json").read_text())
    universe = [list(card) for card in
                ref_engine.load_hooks(proto_dir).proto_mp_deck_universe()]
    return {
        "protocol": spec["name"], "session_id": session_id, "options": options,
        "universe": universe, "outcome": results["host"]["outcome"],
        "host_public_key": host_kp.public_key, "guest_public_key": guest_kp.public_key,
        "transcript_hash": receipts["host"]["transcript_hash"],
        "host_signature": receipts["host"]["signature"],
        "guest_signature": receipts["guest"]["signature"],
        "frames": log,
    }


def main() -> None:
    os.environ.pop("AIGENORA_ENABLE_TEST_FAULTS", None)
    (HERE / "primitives.json").write_text(json.dumps(primitives(), indent=1, ensure_ascii=False) + "\n")
    for name, options in [("crazy_eights", {"hand_size": 5}), ("briscola", {})]:
        game = reference_game(name, options)
        (HERE / f"{name}_game.json").write_text(json.dumps(game, ensure_ascii=False) + "\n")
        print(name, len(game["frames"]), "frames, root", game["transcript_hash"], file=sys.stderr)


if __name__ == "__main__":
    main()
