"""A real MCP client (the PyPI `mcp` package) in front of `aigenora mcp`, for the Rust tests.

Usage: mcp_bridge.py [--legacy] COMMAND [ARG...]. Starts COMMAND as an MCP server over stdio
(`--legacy`: through the 2025 `initialize` handshake, where resources are followed with
resources/subscribe; otherwise the newest protocol, where they are followed with
subscriptions/listen), then answers one JSON request per stdin line with one JSON line on
stdout; a request the server refuses is answered {"error": message}:
  {"op": "list"}                          -> {"tools": [{"name", "description", "inputSchema"}]}
  {"op": "call", "name": N, "arguments": A, "progress": bool}
                                          -> {"is_error", "structured", "text", "progress"}
     (with "progress": true the call carries a progress token; "progress" lists what came)
  {"op": "info"}                          -> {"name", "version", "instructions", "capabilities"}
  {"op": "resources"}                     -> {"resources": [...], "templates": [...]}
  {"op": "read", "uri": U}                -> {"contents": [...]}
  {"op": "subscribe" | "unsubscribe", "uri": U} -> {"ok": true}
  {"op": "listen", "uris": [U...]}        -> {"honored": [U...]} (a listen stream stays open)
  {"op": "unlisten"}                      -> {"ok": true} (the stream is closed)
  {"op": "next", "timeout": S}            -> {"notification": {"method", "uri"} or null}
     (the oldest resource update not yet returned, waiting at most S seconds for one)
"""
import json
import os
import sys
import warnings

import anyio
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.shared.exceptions import MCPError


def reply(value):
    sys.stdout.write(json.dumps(value) + "\n")
    sys.stdout.flush()


class Bridge:
    def __init__(self, legacy):
        self.legacy = legacy
        self.updates_in, self.updates = anyio.create_memory_object_stream(1000)
        self.listening = None

    async def on_message(self, message):
        """Keeps the resource updates a legacy connection delivers here (a newer one also
        hands them here, besides its listen stream, which is where they are taken from)."""
        if not self.legacy or isinstance(message, Exception):
            return
        dumped = message.model_dump(mode="json", by_alias=True)
        if dumped.get("method") == "notifications/resources/updated":
            await self.updates_in.send({"method": dumped["method"], "uri": dumped["params"]["uri"]})

    async def listen(self, client, uris, ready, task_status=anyio.TASK_STATUS_IGNORED):
        with anyio.CancelScope() as scope:
            self.listening = scope
            async with client.listen(resource_subscriptions=uris) as subscription:
                ready["honored"] = list(subscription.honored.resource_subscriptions or [])
                task_status.started()
                async for event in subscription:
                    await self.updates_in.send(
                        {"method": "notifications/resources/updated", "uri": event.uri})

    async def next(self, timeout):
        with anyio.move_on_after(timeout):
            return await self.updates.receive()
        return None

    async def answer(self, client, tasks, request):
        op = request["op"]
        if op == "list":
            listed = await client.list_tools()
            tools = [t.model_dump(mode="json", by_alias=True) for t in listed.tools]
            return {"tools": [
                {key: tool[key] for key in ("name", "description", "inputSchema")}
                for tool in tools
            ]}
        if op == "info":
            info = client.server_info
            capabilities = client.server_capabilities.model_dump(mode="json", by_alias=True,
                                                                 exclude_none=True)
            return {"name": info.name, "version": info.version,
                    "instructions": client.instructions, "capabilities": capabilities}
        if op == "resources":
            resources = await client.list_resources()
            templates = await client.list_resource_templates()
            return {
                "resources": [r.model_dump(mode="json", by_alias=True, exclude_none=True)
                              for r in resources.resources],
                "templates": [t.model_dump(mode="json", by_alias=True, exclude_none=True)
                              for t in templates.resource_templates],
            }
        if op == "read":
            read = await client.read_resource(request["uri"])
            return {"contents": [c.model_dump(mode="json", by_alias=True, exclude_none=True)
                                 for c in read.contents]}
        if op == "subscribe":
            await client.subscribe_resource(request["uri"])
            return {"ok": True}
        if op == "unsubscribe":
            await client.unsubscribe_resource(request["uri"])
            return {"ok": True}
        if op == "listen":
            ready = {}
            await tasks.start(self.listen, client, request["uris"], ready)
            return ready
        if op == "unlisten":
            self.listening.cancel()
            return {"ok": True}
        if op == "next":
            return {"notification": await self.next(request["timeout"])}
        progress = []

        async def on_progress(value, total, message):
            progress.append({"progress": value, "total": total, "message": message})

        called = await client.call_tool(
            request["name"], request.get("arguments") or {},
            progress_callback=on_progress if request.get("progress") else None)
        result = called.model_dump(mode="json", by_alias=True)
        text = "".join(block.get("text") or "" for block in result["content"])
        return {"is_error": bool(result.get("isError")),
                "structured": result.get("structuredContent"), "text": text,
                "progress": progress}

    async def serve(self, client):
        async with anyio.create_task_group() as tasks:
            while True:
                line = await anyio.to_thread.run_sync(sys.stdin.readline)
                if not line:
                    tasks.cancel_scope.cancel()
                    return
                try:
                    reply(await self.answer(client, tasks, json.loads(line)))
                except MCPError as error:
                    reply({"error": error.error.message})


async def main():
    args = sys.argv[1:]
    mode = "auto"
    if args[0] == "--legacy":
        mode, args = "legacy", args[1:]
    bridge = Bridge(mode == "legacy")
    params = StdioServerParameters(command=args[0], args=args[1:], env=dict(os.environ))
    async with Client(params, mode=mode, message_handler=bridge.on_message) as client:
        await bridge.serve(client)


# The legacy subscription calls are what a 2025-era client sends; they are tested on purpose.
warnings.filterwarnings("ignore", message="resources/(un)?subscribe is removed")
anyio.run(main)
