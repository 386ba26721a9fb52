"""The MCP server (memoryd_client.mcp_server) driven by the MCP SDK's own client session,
over stdio (`memoryd mcp`, the server CLI delegating) and streamable HTTP (`memoryd-mcp`),
against a live `memoryd serve` with bearer tokens, so token pass-through is what is tested:
stdio takes $MEMORYD_TOKEN, HTTP each caller's Authorization header.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import threading
import uuid
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from http.server import ThreadingHTTPServer
from pathlib import Path

import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

from memoryd_client import MemoryClient, message
from tests import processes
from tests.processes import MemorydServer, ServerProcess
from tests.vectors.test_embedder import EmbeddingHandler

ACME, GLOBEX = "token-acme-0123456789", "token-globex-0123456789"
TOOLS = {
    "memory_save", "memory_search", "memory_forget", "history", "recall", "assemble_context",
    "user_profile", "user_facts",
}  # fmt: skip
BIN = Path(sys.executable).parent


@pytest.fixture(scope="module")
def secured(tmp_path_factory) -> Iterator[MemorydServer]:
    server = MemorydServer(tmp_path_factory.mktemp("mcp"), env={"MEMORYD_TOKENS": f"acme: {ACME}, globex: {GLOBEX}"})
    server.start()
    yield server
    server.stop()


@asynccontextmanager
async def stdio_session(target: str, token: str | None) -> AsyncIterator[ClientSession]:
    env = {k: v for k, v in os.environ.items() if k != "MEMORYD_TOKEN"} | ({"MEMORYD_TOKEN": token} if token else {})
    params = StdioServerParameters(command=str(BIN / "memoryd"), args=["mcp", "--target", target], env=env)
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        yield session


@pytest.fixture(scope="module")
def http_mcp(secured: MemorydServer, tmp_path_factory) -> Iterator[str]:
    server = ServerProcess(
        [str(BIN / "memoryd-mcp"), "--transport", "http", "--port", "0", "--target", secured.target],
        tmp_path_factory.mktemp("mcp-http"),
        name="memoryd-mcp",
    )
    server.start()
    yield f"http://{server.target}/mcp"
    server.terminate()


@asynccontextmanager
async def http_session(url: str, token: str | None) -> AsyncIterator[ClientSession]:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    async with (
        create_mcp_http_client(headers=headers) as http,
        streamable_http_client(url, http_client=http) as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        yield session


async def call(session: ClientSession, tool: str, **arguments) -> dict:
    result = await session.call_tool(tool, arguments)
    assert not result.is_error, result.content[0].text
    assert json.loads(result.content[0].text) == result.structured_content
    return result.structured_content


async def tool_error(session: ClientSession, tool: str, **arguments) -> str:
    """The text of a tool error, past the SDK's "Error executing tool <name>: " prefix."""
    result = await session.call_tool(tool, arguments)
    assert result.is_error and result.structured_content is None
    return result.content[0].text.removeprefix(f"Error executing tool {tool}: ")


async def exercise_every_tool(session: ClientSession, memoryd: MemorydServer, token: str) -> None:
    scope, chat = f"scope-{uuid.uuid4().hex[:8]}", f"chat-{uuid.uuid4().hex[:8]}"
    assert {t.name for t in (await session.list_tools()).tools} == TOOLS

    saved = await call(session, "memory_save", scope=scope, text="Prefers green tea", tags=["drink"])
    entry_id = saved["entry"]["id"]
    assert saved["entry"]["tags"] == ["drink"] and saved["deduplicated"] is False
    assert (await call(session, "memory_save", scope=scope, text="Prefers green tea"))["deduplicated"] is True
    hits = (await call(session, "memory_search", scope=scope, query="tea"))["hits"]
    assert [h["entry"]["id"] for h in hits] == [entry_id]

    async with MemoryClient(memoryd.target, token=token) as client:  # the conversation, written by an app
        await client.save_messages(chat, [message("user", "Where is the bridge?"), message("assistant", "In San Francisco.")])
    messages = (await call(session, "history", session_id=chat, limit=1))["messages"]
    assert [(m["role"], m["content"]) for m in messages] == [("assistant", "In San Francisco.")]
    context = await call(session, "assemble_context", session_id=chat, recent_raw_n=2)
    assert [m["message"]["content"] for m in context["messages"]] == ["Where is the bridge?", "In San Francisco."]

    assert await call(session, "memory_forget", scope=scope, entry_id=entry_id) == {"forgotten": True}
    assert (await call(session, "memory_search", scope=scope, query="tea"))["hits"] == []
    # Formation is off on this server: no profile, no facts (tests/formation has them formed).
    assert await call(session, "user_profile", user_id="nobody") == {"profile": None}
    assert await call(session, "user_facts", user_id="nobody", include_superseded=True) == {"facts": []}


async def test_every_tool_over_stdio_with_the_token_from_the_environment(secured: MemorydServer):
    async with stdio_session(secured.target, ACME) as session:
        await exercise_every_tool(session, secured, ACME)


async def test_every_tool_over_http_with_the_callers_authorization_header(secured: MemorydServer, http_mcp: str):
    async with http_session(http_mcp, GLOBEX) as session:
        await exercise_every_tool(session, secured, GLOBEX)


async def test_each_http_caller_reaches_its_own_tenant(secured: MemorydServer, http_mcp: str):
    scope = f"shared-{uuid.uuid4().hex[:8]}"
    async with http_session(http_mcp, ACME) as acme, http_session(http_mcp, GLOBEX) as globex:
        await call(acme, "memory_save", scope=scope, text="acme's secret plan")
        assert (await call(globex, "memory_search", scope=scope, query="plan"))["hits"] == []
        assert len((await call(acme, "memory_search", scope=scope, query="plan"))["hits"]) == 1
    async with MemoryClient(secured.target, token=ACME) as client:
        assert [h.entry.text for h in (await client.search_entries(scope, "plan")).hits] == ["acme's secret plan"]


async def test_memoryd_errors_are_tool_errors_with_the_reason(secured: MemorydServer, http_mcp: str):
    async with http_session(http_mcp, None) as anonymous:
        assert (await tool_error(anonymous, "history", session_id="s")).startswith("UNAUTHENTICATED TOKEN_MISSING: ")
    async with stdio_session(secured.target, None) as anonymous:
        assert (await tool_error(anonymous, "memory_search", scope="s", query="q")).startswith("UNAUTHENTICATED ")
    async with stdio_session(secured.target, ACME) as session:
        text = await tool_error(session, "memory_save", scope="", text="x")
        assert text.startswith("INVALID_ARGUMENT: scope: "), text  # the status once: the reason is the same
        # An argument the tool does not have is refused by name, not dropped.
        assert "limt" in await tool_error(session, "history", session_id="s", limt=5)
        tools = {t.name: t for t in (await session.list_tools()).tools}
        assert all(t.input_schema.get("additionalProperties") is False for t in tools.values())
        assert "scope" in await tool_error(session, "recall", query="x", scope="galaxy")
        # Arguments the tool's schema refuses are MCP tool errors too, before memoryd is called.
        assert "limit" in await tool_error(session, "history", session_id="s", limit=0)


def placeholder(name: str, schema: dict) -> object:
    """A value the tool accepts for a required argument that is not the one under test."""
    return {"integer": 1, "array": []}.get(schema.get("type"), f"{name}-x")


async def test_every_integer_argument_is_refused_past_its_bound_with_its_name(secured: MemorydServer):
    """Each integer argument carries its contract field's bounds (int32/int64 at most), and a
    value past either bound is a tool error naming it, before memoryd is called: 2**63 as
    budget_chars once failed inside protobuf, reported as a crash without text."""
    driven = set()
    async with stdio_session(secured.target, ACME) as session:
        for tool in (await session.list_tools()).tools:
            schema = tool.input_schema
            required = {name: placeholder(name, schema["properties"][name]) for name in schema.get("required", [])}
            for name, spec in schema["properties"].items():
                if spec.get("type") != "integer":
                    continue
                assert -(2**63) <= spec["minimum"] <= spec["maximum"] <= 2**63 - 1, (tool.name, name, spec)
                for value in (spec["maximum"] + 1, spec["minimum"] - 1):
                    text = await tool_error(session, tool.name, **{**required, name: value})
                    assert name in text and ("less than or equal" in text or "greater than or equal" in text), text
                driven.add(f"{tool.name}.{name}")
        # The bound is the field's: the largest int64 is accepted by the tool and answered by memoryd.
        context = await call(session, "assemble_context", session_id="bounds", budget_chars=2**63 - 1)
        assert context["messages"] == []
    assert driven == {"memory_search.limit", "history.limit", "recall.top_k", "user_facts.limit",
                      "assemble_context.budget_chars", "assemble_context.recent_raw_n"}


async def test_recall_by_text_with_the_servers_embedder(tmp_path):
    embedder = ThreadingHTTPServer(("127.0.0.1", 0), EmbeddingHandler)
    threading.Thread(target=embedder.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{embedder.server_address[1]}/v1"
    server = MemorydServer(tmp_path, env={"MEMORYD_EMBEDDER_URL": url, "MEMORYD_EMBEDDER_MODEL": "bow"})
    server.start()
    try:
        async with MemoryClient(server.target) as client:
            await client.save_messages("trip", [message("user", "the hotel booking is in Lisbon"),
                                                message("assistant", "noted, a Lisbon hotel"),
                                                message("user", "my cat is called Miso")])  # fmt: skip
            for _ in range(200):  # background indexing: bounded wait until the three are in
                if sum(m.count for m in (await client.get_vector_stats()).models) == 3:
                    break
                await asyncio.sleep(0.05)
        async with stdio_session(server.target, None) as session:
            found = await call(session, "recall", query="cat Miso", session_id="trip", scope="session", top_k=1)
            assert [hit["text"] for hit in found["hits"]] == ["my cat is called Miso"]
    finally:
        server.stop()
        embedder.shutdown()
        embedder.server_close()


def test_http_refuses_a_public_address_unless_allowed():
    result = processes.run(
        [str(BIN / "memoryd-mcp"), "--transport", "http", "--host", "0.0.0.0"], capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 2 and "--allow-remote" in result.stderr
    # Logged as memoryd logs: one JSON object per line.
    (line,) = [json.loads(text) for text in result.stderr.splitlines()]
    assert line["level"] == "error" and line["logger"] == "memoryd.mcp" and "--allow-remote" in line["event"]
