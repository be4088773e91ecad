"""Drive `booger mcp` with the official MCP Python SDK (a client booger did not write).

Usage: python3 mcp_sdk_client.py BOOGER_BINARY PROJECT_DIR [QUERY | --calls JSON]
Prints one JSON object: the negotiated revision, the tool names and the status text; with
QUERY, the session's first call is `search` for it instead, and its answer is printed. With
--http URL QUERY, it asks the same `search` over stdio and over Streamable HTTP at URL (the
token in BOOGER_HTTP_TOKEN) and prints both answers, then checks that notes stay in their
HTTP session. With --calls, it makes each call of the JSON list [{"tool": ..., "arguments": {...}}] in turn and
prints what became of each: the SDK checks every successful answer's structuredContent
against the outputSchema the tool published in tools/list.
The environment (BOOGER_SOCKET, BOOGER_HOME, ...) is passed through to booger.
"""

import asyncio
import json
import os
import sys

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client


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


async def calls(booger: str, project: str, calls: list) -> None:
    params = StdioServerParameters(command=booger, args=["mcp", project], env=dict(os.environ))
    report = []
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            listed = {t.name: t for t in (await session.list_tools()).tools}
            for call in calls:
                name = call["tool"]
                entry = {"tool": name, "hasOutputSchema": attr(listed[name], "output_schema", "outputSchema") is not None}
                try:
                    result = await session.call_tool(name, call.get("arguments", {}))
                    entry["isError"] = attr(result, "is_error", "isError")
                    entry["text"] = result.content[0].text[:300]
                    entry["structured"] = attr(result, "structured_content", "structuredContent") is not None
                except RuntimeError as e:  # the SDK found the structured content invalid
                    entry["invalid"] = str(e)
                report.append(entry)
    print(json.dumps(report))


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


async def http_compare(booger: str, project: str, url: str, query: str) -> None:
    search = {"query": query, "head_limit": 5}
    params = StdioServerParameters(command=booger, args=["mcp", project], env=dict(os.environ))
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            stdio_tools = [t.name for t in (await session.list_tools()).tools]
            stdio_text = (await session.call_tool("search", search)).content[0].text
    headers = {"Authorization": f"Bearer {os.environ['BOOGER_HTTP_TOKEN']}"}
    report = {"stdio_tools": stdio_tools, "stdio_text": stdio_text}
    async with create_mcp_http_client(headers=headers) as http:
        async with streamable_http_client(url, http_client=http) as (read, write):
            async with ClientSession(read, write) as a:
                init = await a.initialize()
                report["protocolVersion"] = attr(init, "protocol_version", "protocolVersion")
                report["http_tools"] = [t.name for t in (await a.list_tools()).tools]
                found = await a.call_tool("search", search)
                report["http_isError"] = attr(found, "is_error", "isError")
                report["http_text"] = found.content[0].text
                await a.call_tool("annotate", {"target": "app.py", "note": "only session A sees this"})
                report["a_notes"] = (await a.call_tool("annotations", {})).content[0].text
                async with streamable_http_client(url, http_client=http) as (read_b, write_b):
                    async with ClientSession(read_b, write_b) as b:
                        await b.initialize()
                        report["b_notes"] = (await b.call_tool("annotations", {})).content[0].text
    print(json.dumps(report))


if __name__ == "__main__":
    if len(sys.argv) > 5 and sys.argv[3] == "--http":
        asyncio.run(http_compare(sys.argv[1], sys.argv[2], sys.argv[4], sys.argv[5]))
    elif len(sys.argv) > 4 and sys.argv[3] == "--calls":
        asyncio.run(calls(sys.argv[1], sys.argv[2], json.loads(sys.argv[4])))
    elif len(sys.argv) > 3:
        asyncio.run(first_search(sys.argv[1], sys.argv[2], sys.argv[3]))
    else:
        asyncio.run(main(sys.argv[1], sys.argv[2]))
