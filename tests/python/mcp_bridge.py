"""A real MCP client (the PyPI `mcp` package) in front of `aigenora mcp`, for the Rust tests.

Usage: mcp_bridge.py COMMAND [ARG...]. Starts COMMAND as an MCP server over stdio, then
answers one JSON request per stdin line with one JSON line on stdout:
  {"op": "list"}                          -> {"tools": [{"name", "description", "inputSchema"}]}
  {"op": "call", "name": N, "arguments": A} -> {"is_error", "structured", "text"}
  {"op": "info"}                          -> {"name", "version", "instructions"}
"""
import json
import os
import sys

import anyio
from mcp import Client
from mcp.client.stdio import StdioServerParameters


def reply(value):
    sys.stdout.write(json.dumps(value) + "\n")
    sys.stdout.flush()


async def serve(client):
    while True:
        line = await anyio.to_thread.run_sync(sys.stdin.readline)
        if not line:
            return
        request = json.loads(line)
        if request["op"] == "list":
            listed = await client.list_tools()
            tools = [t.model_dump(mode="json", by_alias=True) for t in listed.tools]
            reply({"tools": [
                {key: tool[key] for key in ("name", "description", "inputSchema")}
                for tool in tools
            ]})
        elif request["op"] == "info":
            info = client.server_info
            reply({"name": info.name, "version": info.version, "instructions": client.instructions})
        else:
            called = await client.call_tool(request["name"], request.get("arguments") or {})
            result = called.model_dump(mode="json", by_alias=True)
            text = "".join(block.get("text") or "" for block in result["content"])
            reply({"is_error": bool(result.get("isError")),
                   "structured": result.get("structuredContent"), "text": text})


async def main():
    params = StdioServerParameters(command=sys.argv[1], args=sys.argv[2:], env=dict(os.environ))
    async with Client(params) as client:
        await serve(client)


anyio.run(main)
