"""Human Chat (the network's human-chat-v1 contract) for the free-mode engine: two people
talk; the agents relay. The peer's lines are printed and kept (a bounded transcript in
snapshot.json, everything in details.jsonl) by the SDK's ChatHooks; text is never
interpreted."""
from aigenora.proto.chat import ChatHooks


class Hooks(ChatHooks):
    def proto_host_metadata(self):
        return ("Human Chat", "chat,human-chat", "chat", {})
