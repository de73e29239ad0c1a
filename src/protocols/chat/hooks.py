"""Chat hooks for the free-mode engine: the peer's lines are printed and kept (a bounded
transcript in snapshot.json, everything in details.jsonl) by the SDK's ChatHooks; this
protocol only names itself."""
from aigenora.proto.chat import ChatHooks


class Hooks(ChatHooks):
    def proto_host_metadata(self):
        return ("Chat", "chat", "chat", {})
