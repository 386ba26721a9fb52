"""A stock MCP client (the official SDK's ClientSession) talking to memoryd's MCP server.

    pip install './clients/python[mcp]'
    python examples/mcp_client.py --target 127.0.0.1:50051

It launches `memoryd-mcp` over stdio, as an MCP host (an IDE, a desktop assistant) does,
lists the tools, saves a memory, finds it again, forgets it, and shows what a failed call
looks like: a tool error naming memoryd's status, reason and field. scripts/test-clients
runs it from a clean environment holding only memoryd-client[mcp].
"""

from __future__ import annotations

import argparse
import asyncio
import uuid

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client


async def run(target: str) -> None:
    server = StdioServerParameters(command="memoryd-mcp", args=["--target", target])
    async with stdio_client(server) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        print("tools:", ", ".join(sorted(tool.name for tool in (await session.list_tools()).tools)))
        scope = f"example-{uuid.uuid4().hex[:8]}"
        saved = await session.call_tool("memory_save", {"scope": scope, "text": "Prefers green tea", "tags": ["drink"]})
        entry = saved.structured_content["entry"]
        found = await session.call_tool("memory_search", {"scope": scope, "query": "tea"})
        print("found:", [hit["entry"]["text"] for hit in found.structured_content["hits"]])
        forgot = await session.call_tool("memory_forget", {"scope": scope, "entry_id": entry["id"]})
        print("forgotten:", forgot.structured_content["forgotten"])
        failed = await session.call_tool("memory_search", {"scope": "", "query": "tea"})
        print("tool error:", failed.is_error, failed.content[0].text)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--target", default="127.0.0.1:50051", help="memoryd's host:port")
    asyncio.run(run(parser.parse_args().target))


if __name__ == "__main__":
    main()
