"""Drive `booger mcp` with the official MCP Python SDK (a client booger did not write).

Usage: python3 mcp_sdk_client.py BOOGER_BINARY PROJECT_DIR [QUERY]
Prints one JSON object: the negotiated revision, the tool names and the status text; with
QUERY, the session's first call is `search` for it instead, and its answer is printed.
The environment (BOOGER_SOCKET, BOOGER_HOME, ...) is passed through to booger.
"""

import asyncio
import json
import os
import sys

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client


def attr(obj, *names):
    """SDK 1.x spells fields in camelCase, 2.x in snake_case; accept both."""
    for name in names:
        if hasattr(obj, name):
            return getattr(obj, name)
    raise AttributeError(f"{type(obj).__name__} has none of {names}")


async def first_search(booger: str, project: str, query: str) -> None:
    params = StdioServerParameters(command=booger, args=["mcp", project], env=dict(os.environ))
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            found = await session.call_tool("search", {"query": query, "output_mode": "files_with_matches"})
            print(json.dumps({
                "isError": attr(found, "is_error", "isError"),
                "text": found.content[0].text,
            }))


async def main(booger: str, project: str) -> None:
    params = StdioServerParameters(command=booger, args=["mcp", project], env=dict(os.environ))
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            init = await session.initialize()
            tools = await session.list_tools()
            status = await session.call_tool("status", {})
            bad = await session.call_tool("status", {"project": 5})
            await session.send_ping()
            print(json.dumps({
                "protocolVersion": attr(init, "protocol_version", "protocolVersion"),
                "server": attr(init, "server_info", "serverInfo").name,
                "tools": [t.name for t in tools.tools],
                "status": status.content[0].text,
                "statusIsError": attr(status, "is_error", "isError"),
                "badIsError": attr(bad, "is_error", "isError"),
                "badText": bad.content[0].text,
            }))


if __name__ == "__main__":
    if len(sys.argv) > 3:
        asyncio.run(first_search(sys.argv[1], sys.argv[2], sys.argv[3]))
    else:
        asyncio.run(main(sys.argv[1], sys.argv[2]))
