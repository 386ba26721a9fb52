"""OpenAI Agents SDK session on memoryd (`pip install 'memoryd-client[openai-agents]'`).

    from agents import Agent, Runner
    from memoryd_client import MemoryClient
    from memoryd_client.openai_agents import MemorydSession

    async with MemoryClient("127.0.0.1:50051") as client:
        result = await Runner.run(agent, "hi", session=MemorydSession("chat-1", client))

Each Responses-API item is one memoryd message: the item itself, as JSON, in
metadata["openai_agents"] (so get_items returns exactly what add_items took), and for other
memoryd clients its role, its text, a function call as a tool call, a call's output as a
tool message. Implements the SDK's `Session` protocol (what the SDK asks third-party
sessions to implement; its SessionABC is for the SDK's own).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from memoryd.v1 import message_pb2

from . import frameworks
from .client import MemoryClient
from .messages import message as new_message
from .messages import tool_call

if TYPE_CHECKING:
    from agents.items import TResponseInputItem
    from agents.memory import SessionSettings

FORM_KEY = "openai_agents"


def _text(value: Any) -> str:
    """The text of an item's content: a string, or its parts' texts (input_text, output_text, ...)."""
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return "\n".join(part["text"] for part in value if isinstance(part, dict) and isinstance(part.get("text"), str))
    return ""


def to_memoryd(item: TResponseInputItem) -> message_pb2.Message:
    """A Responses-API item as a memoryd message (the item itself in metadata["openai_agents"])."""
    data: dict[str, Any] = dict(item)
    kind = data.get("type", "message")
    calls, answers = [], ""
    if kind == "function_call":
        role, content = "assistant", ""
        calls = [tool_call(data.get("call_id", ""), data.get("name", ""), data.get("arguments", ""))]
    elif kind.endswith("_output"):  # function_call_output, computer_call_output, ...
        role, content, answers = "tool", _text(data.get("output")), data.get("call_id", "")
    else:
        role, content = data.get("role", "assistant"), _text(data.get("content"))
    reasoning = _text(data.get("summary")) if kind == "reasoning" else ""
    return new_message(
        role,
        content,
        metadata=frameworks.pack(FORM_KEY, data, content),
        tool_calls=calls,
        tool_call_id=answers,
        reasoning_content=reasoning,
    )


def from_memoryd(message: message_pb2.Message) -> TResponseInputItem:
    """The item saved as `message`; for messages other clients wrote, an easy input message
    (role and text), a function call, or a function call's output."""
    form = frameworks.unpack(FORM_KEY, message)
    if form is not None:
        return form  # type: ignore[return-value]
    if message.tool_calls and not message.content:
        call = message.tool_calls[0]
        return {"type": "function_call", "call_id": call.id, "name": call.name, "arguments": call.arguments}
    if message.role == "tool":
        return {"type": "function_call_output", "call_id": message.tool_call_id, "output": message.content}
    role = message.role if message.role in ("user", "assistant", "system", "developer") else "user"
    return {"role": role, "content": message.content}  # type: ignore[misc, return-value]


class MemorydSession:
    """A memoryd session as an OpenAI Agents SDK session (`Runner.run(..., session=...)`).

    Args:
        session_id: the memoryd session.
        client: a MemoryClient (the SDK's session methods are async).
        attributes: session attributes (memoryd_client.session_attributes: user_id,
            agent_id, labels) saved with every item.
        session_settings: the SDK's SessionSettings, or a dict of its fields; its `limit` is
            the default of get_items.

    Usable from any thread and event loop, as the SDK's own sessions are: the client opens a
    channel per loop (MemoryClient), so `Runner.run_sync` and `asyncio.run` in a worker
    thread work with a client made anywhere.

    Contract (the SDK's, as its SQLiteSession keeps it): get_items returns items oldest
    first, all of them, or with `limit` > 0 the newest `limit`, with `limit` == 0 none and a
    negative `limit` all; add_items appends atomically (one SaveMessages); pop_item removes
    and returns the newest item (PopMessages: one transaction, so a concurrent add is never
    lost) or None; clear_session deletes every item.
    """

    def __init__(
        self,
        session_id: str,
        client: MemoryClient,
        *,
        attributes: message_pb2.SessionAttributes | None = None,
        session_settings: SessionSettings | dict[str, Any] | None = None,
    ) -> None:
        from agents.memory.session_settings import SessionSettings, coerce_session_settings

        self.session_id = session_id
        self.client = client
        self.attributes = attributes
        self.session_settings = (
            coerce_session_settings(session_settings) if session_settings is not None else SessionSettings()
        )

    async def get_items(self, limit: int | None = None) -> list[TResponseInputItem]:
        if limit is None:
            limit = self.session_settings.limit
        if limit is not None and limit < 0:
            limit = None
        messages = await frameworks.history_async(self.client, self.session_id, limit)
        return [from_memoryd(m) for m in messages]

    async def add_items(self, items: list[TResponseInputItem]) -> None:
        if items:
            await self.client.save_messages(self.session_id, [to_memoryd(i) for i in items], attributes=self.attributes)

    async def pop_item(self) -> TResponseInputItem | None:
        popped = (await self.client.pop_messages(self.session_id, 1)).messages
        return from_memoryd(popped[-1]) if popped else None

    async def clear_session(self) -> None:
        await self.client.clear_session(self.session_id)


__all__ = ["MemorydSession", "from_memoryd", "to_memoryd"]
