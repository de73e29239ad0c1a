"""A peer built from the reference client's own iroh transport (aigenora 0.1.4, iroh 0.35).

Used by tests/interop/transport.rs to talk to our IrohChannel. It only wires together the
reference's helpers (create_host_node, connect_by_ticket, AsyncHeartbeatChannel) the way
the reference's host/join commands do; it adds no transport code of its own.

usage: reference_iroh_peer.py host HEARTBEAT_SECONDS
       reference_iroh_peer.py guest HEARTBEAT_SECONDS TICKET

Conversation (frames are JSON lines on the single bidirectional stream):
  guest -> host  {"hello": <role>, "text": ...}
  host  -> guest {"hello": <role>, "text": ...}
  other side sends {"action": "echo", "seq": i} ...; we answer {"action": "echoed", "seq": i}
  other side sends {"action": "result"} and {"action": "end"} back to back, then closes;
  we pause after "result" (hooks, --pace) before reading "end", answer {"action": "bye"},
  pause like the reference's REST bookkeeping, and shut the node down.
stdout: {"ticket": ...} first when hosting, then one report {"received": [...], "rtt": ...}
or {"error": ...}.
"""

import asyncio
import json
import sys
import traceback

from aigenora.engine.p2p import AsyncHeartbeatChannel, connect_by_ticket, create_host_node

TEXT = "h\u00e9llo \u2665 \U0001f3b2"
PAUSE_BEFORE_END = 0.6
BOOKKEEPING = 0.3


def emit(**fields):
    print(json.dumps(fields, ensure_ascii=False), flush=True)


async def converse(channel, role):
    received = []

    async def recv():
        frame = await channel.recv(timeout=20)
        received.append(frame)
        return frame

    if role == "guest":
        await channel.send({"hello": role, "text": TEXT})
        await recv()
    else:
        await recv()
        await channel.send({"hello": role, "text": TEXT})
    while True:
        frame = await recv()
        if frame.get("action") == "echo":
            await channel.send({"action": "echoed", "seq": frame.get("seq")})
        elif frame.get("action") == "result":
            await asyncio.sleep(PAUSE_BEFORE_END)
            await recv()
            break
    await channel.send({"action": "bye"})
    await asyncio.sleep(BOOKKEEPING)
    return received


async def main():
    role, heartbeat = sys.argv[1], float(sys.argv[2])
    if role == "host":
        _runtime, node, accepted = await create_host_node()
        addr = await node.net().node_addr()
        emit(ticket=_runtime.ticket_from_addr(addr))
        inner = await asyncio.wait_for(accepted.get(), timeout=60)
    else:
        _runtime, node, inner = await connect_by_ticket(sys.argv[3])
    channel = AsyncHeartbeatChannel(inner, interval=heartbeat, timeout=30.0)
    await channel.start()
    try:
        received = await converse(channel, role)
        emit(received=received, rtt=channel.latency_metrics())
    finally:
        await node.node().shutdown()


if __name__ == "__main__":
    try:
        asyncio.run(main())
    except BaseException as error:  # report anything, including ChannelClosed, to the test
        emit(error=f"{type(error).__name__}: {error}", trace=traceback.format_exc())
        sys.exit(1)
