"""What the agent-framework integrations share (langchain, openai_agents, llama_index).

Each integration stores a framework object as a memoryd message whose fields (role,
content, tool calls, tool_call_id) carry what memoryd and clients in other languages
read, and keeps the framework's own JSON form of the object in `metadata[<framework>]`
as JSON text, so reading it back gives the very object that was saved (JSON text, not a
Struct: a Struct would turn every integer into a float). A top-level string "content"
equal to the message's content is not stored twice.

Messages saved by other clients have no such form; each integration maps their memoryd
fields to the closest framework object.

A framework's history is the session's *unarchived* messages (TrimHistory archives the
ones a summary replaced), oldest first: `history` and `history_async` read them whole
(paging, so no server page limit cuts them) or the newest `limit`.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Generator, Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from memoryd.v1 import message_pb2

from .errors import RpcError
from .methods import Call, Methods

T = TypeVar("T")

if TYPE_CHECKING:
    from .client import MemoryClient
    from .sync import SyncMemoryClient

_CONTENT_IN_MESSAGE = "content_in_message"


def pack(key: str, form: Mapping[str, Any], content: str) -> dict[str, str]:
    """The metadata entry that keeps `form` beside a message whose content is `content`."""
    envelope: dict[str, Any] = {"form": dict(form)}
    if form.get("content") == content and isinstance(form.get("content"), str):
        envelope = {"form": {k: v for k, v in form.items() if k != "content"}, _CONTENT_IN_MESSAGE: True}
    try:
        text = json.dumps(envelope, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
    except (TypeError, ValueError) as error:
        raise ValueError(f"memoryd keeps {key} objects as JSON; this one is not JSON-serializable: {error}") from None
    return {key: text}


def unpack(key: str, message: message_pb2.Message) -> dict[str, Any] | None:
    """The form `pack` stored with `message`, or None when another client wrote it."""
    if key not in message.metadata.fields:
        return None
    value = message.metadata.fields[key]
    if value.WhichOneof("kind") != "string_value":
        return None
    envelope = json.loads(value.string_value)
    form = envelope["form"]
    if envelope.get(_CONTENT_IN_MESSAGE):
        form["content"] = message.content
    return form


def _newest(messages: list[message_pb2.Message], limit: int | None) -> list[message_pb2.Message]:
    return messages if limit is None else messages[-limit:] if limit > 0 else []


def history(client: SyncMemoryClient, session_id: str, limit: int | None = None) -> list[message_pb2.Message]:
    """The session's unarchived messages, oldest first; only the newest `limit` when given."""
    if limit is not None and limit > 0:
        newest = client.get_history(session_id, limit)
        if len(newest) == limit or not _clamped(client.get_session(session_id), newest):
            return newest
    return _newest([m for m in client.iter_full_history(session_id, page_size=1000) if not m.archived], limit)


async def history_async(client: MemoryClient, session_id: str, limit: int | None = None) -> list[message_pb2.Message]:
    """`history` on the async client."""
    if limit is not None and limit > 0:
        newest = await client.get_history(session_id, limit)
        if len(newest) == limit or not _clamped(await client.get_session(session_id), newest):
            return newest
    return _newest([m async for m in client.iter_full_history(session_id, page_size=1000) if not m.archived], limit)


def _clamped(session: Any, newest: list[message_pb2.Message]) -> bool:
    """Whether GetHistory returned fewer than the session holds (the server's page limit)."""
    return session is not None and session.unarchived_count > len(newest)


# -- calls written once for both clients ------------------------------------------------
# An integration whose interface has sync and async methods (LangGraph's store, LlamaIndex's
# chat stores) writes each operation once, as a generator that yields the Calls it needs
# (`rpc.get_metadata(...)` describes GetMetadata without running it) and receives their
# results; `run` drives it on a SyncMemoryClient, `run_async` on a MemoryClient.
Program = Generator["Call[Any]", Any, T]


class _Describe:
    """`rpc.<method>(...)`: the Call a client method would run (Methods' descriptions)."""

    def __getattr__(self, name: str) -> Callable[..., Call[Any]]:
        describe = getattr(Methods, name).describe
        return lambda *args, **kwargs: describe(None, *args, **kwargs)


rpc = _Describe()


def run(client: SyncMemoryClient, program: Program[T]) -> T:
    """Runs `program`'s calls on the blocking client; returns what it returns. A call's
    RpcError is raised inside `program`, at its `yield`, which may catch it."""
    try:
        call = next(program)
        while True:
            try:
                result = client._run(call)
            except RpcError as error:
                call = program.throw(error)
            else:
                call = program.send(result)
    except StopIteration as done:
        return done.value


async def run_async(client: MemoryClient, program: Program[T]) -> T:
    """Runs `program`'s calls on the async client; returns what it returns (errors as `run`)."""
    try:
        call = next(program)
        while True:
            try:
                result = await client._run(call)
            except RpcError as error:
                call = program.throw(error)
            else:
                call = program.send(result)
    except StopIteration as done:
        return done.value


def every(method: str, items: str, *args: Any, **kwargs: Any) -> Program[list[Any]]:
    """Every item of a paged RPC (`rpc.<method>`), page by page."""
    found: list[Any] = []
    token = ""
    while True:
        response = yield getattr(rpc, method)(*args, page_token=token, **kwargs)
        found += getattr(response, items)
        token = response.next_page_token
        if not token:
            return found
