"""memoryd as an MCP server (memoryd-client's `mcp` extra): `memoryd-mcp`, or `memoryd mcp`.

A client of a memoryd server, built on the official MCP SDK (`mcp`, MCPServer), serving
the Model Context Protocol over stdio (the default) or streamable HTTP:

    memoryd-mcp --target 127.0.0.1:50051                       # stdio; token: $MEMORYD_TOKEN
    memoryd-mcp --transport http --port 8000                   # http://127.0.0.1:8000/mcp

Tools: memory_save, memory_search, memory_forget (long-term entries, EntryService),
history (GetHistory), recall (SearchMemory by text: keywords, and meaning too when the
server has an embedder) and
assemble_context (AssembleContext). Results are the RPC's response in the contract's JSON
form. A failed call is a tool error (isError) whose text names the status, the reason when
it is not just the status again, and the fields: "INVALID_ARGUMENT: scope: must not be
empty", "UNAUTHENTICATED TOKEN_MISSING: ...". An argument a tool does not have is refused
(the tools' schemas say `additionalProperties: false`), not silently dropped. The server logs
JSON lines on stderr, as memoryd does (the MCP SDK's and uvicorn's records too).

Tokens pass through: over stdio, memoryd gets the token from $MEMORYD_TOKEN (secrets stay
out of command lines); over HTTP, each call carries the caller's own Authorization header
to memoryd, and no token of the MCP server's.
"""

from __future__ import annotations

import argparse
import asyncio
import errno
import functools
import importlib.metadata
import ipaddress
import json
import logging
import os
import socket
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Annotated, Any, ParamSpec, TypeVar

import grpc
from google.protobuf import json_format
from google.protobuf.message import Message as ProtoMessage
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import ToolAnnotations
from pydantic import ConfigDict, Field

from memoryd.v1 import vector_service_pb2

from .client import MemoryClient
from .errors import RpcError

P = ParamSpec("P")
R = TypeVar("R")

INSTRUCTIONS = (
    "memoryd keeps an agent's memory. Long-term facts live in scopes (for example a user id): "
    "memory_save stores one, memory_search finds them, memory_forget deletes one by id. "
    "Conversations live in sessions: history reads the newest messages, assemble_context builds "
    "a prompt-sized context (summary + recent messages), recall searches past messages by keywords and meaning. "
    "When the server forms memory (docs/MEMORY.md), user_profile reads a user's profile and user_facts "
    "the facts formed about the user."
)
SCOPES = {
    "all": vector_service_pb2.RECALL_SCOPE_ALL,
    "session": vector_service_pb2.RECALL_SCOPE_SESSION,
    "user": vector_service_pb2.RECALL_SCOPE_USER,
    "platform": vector_service_pb2.RECALL_SCOPE_PLATFORM,
}

ClientFor = Callable[[Context], MemoryClient]

# The largest value of the contract's integer fields: every integer argument is bounded by its
# field's type in the tool's schema, so a value the request cannot hold is refused by name
# before memoryd is called (instead of failing inside protobuf, which the SDK reports as a
# crash without text).
INT32_MAX = 2**31 - 1
INT64_MAX = 2**63 - 1


def _version() -> str:
    try:
        return importlib.metadata.version("memoryd-client")
    except importlib.metadata.PackageNotFoundError:  # run from a source tree
        return ""


def describe(error: RpcError) -> str:
    """A memoryd error as the text of a tool error: the status, the reason (ErrorInfo's; the
    status again when the server sent none) and the message with the fields it names."""
    fields = "; ".join(f"{v.field}: {v.description}" for v in error.field_violations)
    # memoryd's own message already lists the fields; another server's may not.
    text = error.message if fields in error.message else "; ".join(p for p in (fields, error.message) if p)
    status = error.code.name if error.reason in ("", error.code.name) else f"{error.code.name} {error.reason}"
    return f"{status}: {text or 'no message'}"


def refuse_unknown_arguments(server: MCPServer) -> None:
    """Every tool refuses an argument it does not have (a misspelt `limt` would otherwise be
    dropped and the call run with the default): its argument model forbids extra fields,
    and its input schema says so (`additionalProperties: false`)."""
    for tool in server._tool_manager.list_tools():
        model = tool.fn_metadata.arg_model
        config = ConfigDict(**{**model.model_config, "extra": "forbid"})
        strict = type(model.__name__, (model,), {"model_config": config})
        tool.fn_metadata.arg_model = strict
        tool.parameters["additionalProperties"] = False


class JsonLogFormatter(logging.Formatter):
    """One JSON object per record, with memoryd's keys (event, level, logger, timestamp)."""

    def format(self, record: logging.LogRecord) -> str:
        line: dict[str, Any] = {
            "event": record.getMessage(),
            "level": record.levelname.lower(),
            "logger": record.name,
            "timestamp": self.formatTime(record, "%Y-%m-%dT%H:%M:%S") + f".{int(record.msecs):03d}Z",
        }
        if record.exc_info:
            line["exception"] = self.formatException(record.exc_info)
        return json.dumps(line, ensure_ascii=False)


def configure_logging(level: int = logging.INFO) -> None:
    """JSON lines on stderr for every logger, before the MCP SDK would install its own (rich) handler."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(JsonLogFormatter())
    handler.formatter.converter = time.gmtime  # type: ignore[union-attr]
    logging.basicConfig(level=level, handlers=[handler], force=True)


def tool_errors(fn: Callable[P, Awaitable[R]]) -> Callable[P, Awaitable[R]]:
    """memoryd's RpcErrors become tool errors (isError results) carrying describe()'s text."""

    @functools.wraps(fn)
    async def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return await fn(*args, **kwargs)
        except RpcError as error:
            raise ToolError(describe(error)) from None

    return wrapper


def as_json(message: ProtoMessage) -> dict[str, Any]:
    """The contract's JSON form, with every field (false, 0, [] included: a model reads them)."""
    return json_format.MessageToDict(
        message, preserving_proto_field_name=True, always_print_fields_with_no_presence=True
    )


def bearer_token(ctx: Context) -> str | None:
    """The caller's bearer token from its HTTP Authorization header (None over stdio)."""
    headers = ctx.headers or {}
    value = headers.get("authorization") or headers.get("Authorization") or ""
    scheme, _, token = value.partition(" ")
    return token.strip() if scheme.lower() == "bearer" and token.strip() else None


def build_server(client_for: ClientFor, *, name: str = "memoryd") -> MCPServer:
    """The MCP server; `client_for(ctx)` is the memoryd client a tool call uses."""
    server = MCPServer(name, instructions=INSTRUCTIONS, version=_version())
    reads = ToolAnnotations(read_only_hint=True, open_world_hint=False)

    @server.tool(annotations=ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=True))
    @tool_errors
    async def memory_save(
        scope: Annotated[str, Field(description="Whose memory: a user id, a project, ...")],
        text: Annotated[str, Field(description="The fact to remember, one sentence")],
        ctx: Context,
        tags: Annotated[list[str], Field(description="Keywords that find it again")] = [],  # noqa: B006 - pydantic copies
    ) -> dict[str, Any]:
        """Save a long-term memory entry; saving the same text again returns the stored entry."""
        return as_json(await client_for(ctx).save_entry(scope, text, tags=tags))

    @server.tool(annotations=reads)
    @tool_errors
    async def memory_search(
        scope: Annotated[str, Field(description="The scope memory_save used")],
        query: Annotated[str, Field(description="Keywords; empty lists the newest entries")],
        ctx: Context,
        limit: Annotated[int, Field(description="Most entries to return", ge=1, le=100)] = 10,
    ) -> dict[str, Any]:
        """Search a scope's memory entries by keyword (and by meaning when the server embeds)."""
        return as_json(await client_for(ctx).search_entries(scope, query, limit=limit))

    @server.tool(annotations=ToolAnnotations(read_only_hint=False, destructive_hint=True, idempotent_hint=True))
    @tool_errors
    async def memory_forget(
        scope: Annotated[str, Field(description="The entry's scope")],
        entry_id: Annotated[str, Field(description="The id memory_save or memory_search returned")],
        ctx: Context,
    ) -> dict[str, Any]:
        """Delete one memory entry by id."""
        return {"forgotten": await client_for(ctx).forget_entry(scope, entry_id)}

    @server.tool(annotations=reads)
    @tool_errors
    async def history(
        session_id: Annotated[str, Field(description="The conversation")],
        ctx: Context,
        limit: Annotated[int, Field(description="Newest messages to return", ge=1, le=1000)] = 50,
    ) -> dict[str, Any]:
        """The newest messages of a conversation, oldest first."""
        messages = await client_for(ctx).get_history(session_id, limit)
        return {"messages": [as_json(m) for m in messages]}

    @server.tool(annotations=reads)
    @tool_errors
    async def recall(
        query: Annotated[str, Field(description="What to remember, in words")],
        ctx: Context,
        session_id: Annotated[str, Field(description="Conversation to search (scope session)")] = "",
        scope: Annotated[str, Field(description="all, session, user or platform")] = "all",
        top_k: Annotated[int, Field(description="Most hits to return", ge=1, le=50)] = 5,
    ) -> dict[str, Any]:
        """Search past messages by keywords and meaning, each hit with the messages around it."""
        if scope not in SCOPES:
            raise ToolError(f"INVALID_ARGUMENT INVALID_ARGUMENT: scope: must be one of {', '.join(SCOPES)}")
        response = await client_for(ctx).search_memory(
            query_text=query, scope=SCOPES[scope], session_id=session_id, top_k=top_k
        )
        return as_json(response)

    @server.tool(annotations=reads)
    @tool_errors
    async def assemble_context(
        session_id: Annotated[str, Field(description="The conversation")],
        ctx: Context,
        budget_chars: Annotated[int, Field(description="Character budget; 0 means unlimited", ge=0, le=INT64_MAX)] = 0,
        recent_raw_n: Annotated[
            int, Field(description="Newest raw messages to add; 0: the server's default", ge=0, le=INT32_MAX)
        ] = 0,
    ) -> dict[str, Any]:
        """A conversation's prompt context: latest summary, unsummarized tail, newest messages."""
        response = await client_for(ctx).assemble_context(
            session_id, budget_chars=budget_chars, recent_raw_n=recent_raw_n
        )
        return as_json(response)

    @server.tool(annotations=reads)
    @tool_errors
    async def user_profile(
        user_id: Annotated[str, Field(description="The user (a session's owner)")],
        ctx: Context,
    ) -> dict[str, Any]:
        """The profile memoryd formed about a user from their conversations (null when none)."""
        profile = await client_for(ctx).get_profile(user_id)
        return {"profile": as_json(profile) if profile is not None else None}

    @server.tool(annotations=reads)
    @tool_errors
    async def user_facts(
        user_id: Annotated[str, Field(description="The user (a session's owner)")],
        ctx: Context,
        include_superseded: Annotated[bool, Field(description="Also facts a newer one replaced")] = False,
        limit: Annotated[int, Field(description="Most facts to return, newest first", ge=1, le=100)] = 20,
    ) -> dict[str, Any]:
        """Facts memoryd formed about a user, newest first, each with the messages it came from."""
        response = await client_for(ctx).list_facts(user_id, include_superseded=include_superseded, page_size=limit)
        return {"facts": [as_json(f) for f in response.facts]}

    refuse_unknown_arguments(server)
    return server


# -- command line ------------------------------------------------------------------------------
def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--target",
        default=os.environ.get("MEMORYD_TARGET", "127.0.0.1:50051"),
        help="memoryd's host:port (env MEMORYD_TARGET)",
    )
    parser.add_argument(
        "--tls-ca",
        default=os.environ.get("MEMORYD_TLS_CA", ""),
        help="PEM CA bundle: talk to memoryd over TLS (env MEMORYD_TLS_CA)",
    )
    parser.add_argument("--timeout", type=float, default=10.0, help="deadline of each memoryd call, seconds")
    parser.add_argument(
        "--transport", choices=("stdio", "http"), default="stdio", help="stdio (default) or streamable HTTP"
    )
    parser.add_argument("--host", default="127.0.0.1", help="HTTP: address to listen on")
    parser.add_argument("--port", type=int, default=8000, help="HTTP: port (0 picks a free one)")
    parser.add_argument("--path", default="/mcp", help="HTTP: the MCP endpoint's path")
    parser.add_argument("--port-file", default="", help="HTTP: write the bound port to this file once serving")
    parser.add_argument(
        "--allow-remote",
        action="store_true",
        help="HTTP: listen on a non-loopback address (put TLS in front: tokens travel in headers)",
    )


def _credentials(tls_ca: str) -> grpc.ChannelCredentials | None:
    return grpc.ssl_channel_credentials(Path(tls_ca).read_bytes()) if tls_ca else None


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


async def serve_stdio(args: argparse.Namespace) -> None:
    token = os.environ.get("MEMORYD_TOKEN") or None
    async with MemoryClient(
        args.target, token=token, credentials=_credentials(args.tls_ca), timeout=args.timeout
    ) as client:
        await build_server(lambda ctx: client).run_stdio_async()


async def serve_http(args: argparse.Namespace) -> None:
    import uvicorn

    async with MemoryClient(args.target, credentials=_credentials(args.tls_ca), timeout=args.timeout) as client:
        server = build_server(lambda ctx: client.with_token(bearer_token(ctx)))
        app = server.streamable_http_app(streamable_http_path=args.path, host=args.host)
        family = socket.AF_INET6 if ":" in args.host else socket.AF_INET
        sock = socket.socket(family, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((args.host, args.port))
        except OSError as error:
            sock.close()
            raise ListenFailed(args.host, args.port, error) from None
        if args.port_file:
            Path(args.port_file).write_text(str(sock.getsockname()[1]))
        config = uvicorn.Config(app, log_level="warning", lifespan="on", log_config=None)  # our JSON handler
        await uvicorn.Server(config).serve(sockets=[sock])


class ListenFailed(Exception):
    """The HTTP listener could not bind: names the listener, the address and the port, as
    memoryd serve's startup errors do (not a bare `[Errno 98]`)."""

    def __init__(self, host: str, port: int, error: OSError) -> None:
        address = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
        if error.errno == errno.EADDRINUSE:
            why = f"port {port} is already in use (another process listens on it; address already in use)"
        else:
            why = f"{error.strerror or error} (port {port})"
        super().__init__(f"memoryd-mcp: MCP over HTTP (--host/--port) cannot listen on {address}: {why}")


def run(args: argparse.Namespace) -> int:
    configure_logging()
    log = logging.getLogger("memoryd.mcp")
    if args.transport == "http" and not _is_loopback(args.host) and not args.allow_remote:
        log.error(f"memoryd-mcp: refusing to listen on {args.host} without --allow-remote")
        return 2
    if args.transport == "http" and os.environ.get("MEMORYD_TOKEN"):
        log.warning("memoryd-mcp: over HTTP each caller's Authorization header is passed on; MEMORYD_TOKEN is not used")
    try:
        asyncio.run(serve_stdio(args) if args.transport == "stdio" else serve_http(args))
    except ListenFailed as error:
        log.error(str(error))
        return 1
    return 0


def main(argv: list[str] | None = None, *, prog: str = "memoryd-mcp") -> int:
    parser = argparse.ArgumentParser(prog=prog, description="memoryd as a Model Context Protocol server.")
    add_arguments(parser)
    return run(parser.parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
