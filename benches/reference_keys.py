"""Ed25519 key pairs in the reference's KeyPair shape, for the benchmarks that run the
reference's own room code in process (room_authority_reference.py, tables_reference.py)."""

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from aigenora.engine.keys import KeyPair


def keypair():
    private = Ed25519PrivateKey.generate()
    seed = private.private_bytes(serialization.Encoding.Raw, serialization.PrivateFormat.Raw,
                                 serialization.NoEncryption()).hex()
    public = private.public_key().public_bytes(serialization.Encoding.Raw,
                                               serialization.PublicFormat.Raw).hex()
    return KeyPair(public_key=public, private_key=seed)
