"""Drive booger's team server with the official MCP Python SDK's Streamable HTTP client.

Usage: python3 mcp_team_client.py URL CALLS_JSON
The token is read from BOOGER_TEAM_TOKEN and sent as `Authorization: Bearer`. Lists the tools,
then makes each call of CALLS_JSON ([{"tool": ..., "arguments": {...}}]); the SDK checks each
answer's structuredContent against the outputSchema the tool published in tools/list. Prints
one JSON object: the server's name, the tools, and for each call its isError and text.
"""

import asyncio
import json
import os
import sys

from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client


def attr(obj, *names):
    """SDK 1.x spells fields in camelCase, 2.x in snake_case; accept both."""
    for name in names:
        if hasattr(obj, name):
            return getattr(obj, name)
    raise AttributeError(f"{type(obj).__name__} has none of {names}")


async def main(url: str, calls: list) -> None:
    headers = {"Authorization": f"Bearer {os.environ['BOOGER_TEAM_TOKEN']}"}
    report = {"calls": []}
    async with create_mcp_http_client(headers=headers) as http:
        async with streamable_http_client(url, http_client=http) as (read, write):
            async with ClientSession(read, write) as session:
                init = await session.initialize()
                report["server"] = attr(init, "server_info", "serverInfo").name
                report["tools"] = [t.name for t in (await session.list_tools()).tools]
                for c in calls:
                    r = await session.call_tool(c["tool"], c.get("arguments", {}))
                    report["calls"].append({
                        "tool": c["tool"],
                        "isError": attr(r, "is_error", "isError"),
                        "text": r.content[0].text,
                        "structured": attr(r, "structured_content", "structuredContent"),
                    })
    print(json.dumps(report))


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], json.loads(sys.argv[2])))
