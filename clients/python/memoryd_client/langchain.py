"""LangChain chat message history on memoryd (`pip install 'memoryd-client[langchain]'`).

    from memoryd_client import SyncMemoryClient
    from memoryd_client.langchain import MemorydChatMessageHistory

    history = MemorydChatMessageHistory("session-1", SyncMemoryClient("127.0.0.1:50051"))
    history.add_user_message("hi")

Every LangChain message type round-trips exactly: the message's own JSON form (LangChain's
`message_to_dict`, so `additional_kwargs`, `response_metadata`, content blocks, ids, names,
usage and invalid tool calls included) is kept beside memoryd's fields (role, content,
tool calls with their arguments as JSON, tool_call_id), which other memoryd clients read.
See memoryd_client.frameworks.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from langchain_core.chat_history import BaseChatMessageHistory
from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    ChatMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
    messages_from_dict,
)

from memoryd.v1 import message_pb2

from . import frameworks
from .client import MemoryClient
from .messages import message as new_message
from .messages import tool_call
from .sync import SyncMemoryClient

FORM_KEY = "langchain"
ROLES = {"human": "user", "ai": "assistant", "system": "system", "tool": "tool", "function": "function"}


def to_memoryd(message: BaseMessage) -> message_pb2.Message:
    """A LangChain message as a memoryd message (its JSON form in metadata["langchain"])."""
    kind = message.type.removesuffix("MessageChunk").lower() if message.type.endswith("MessageChunk") else message.type
    role = getattr(message, "role", None) if kind == "chat" else ROLES.get(kind, kind)
    content = message.content if isinstance(message.content, str) else message.text
    calls = [tool_call(c.get("id") or "", c["name"], json.dumps(c["args"])) for c in getattr(message, "tool_calls", [])]
    reasoning = message.additional_kwargs.get("reasoning_content")
    return new_message(
        role or kind,
        content,
        metadata=frameworks.pack(FORM_KEY, message.model_dump(), content),
        tool_calls=calls,
        tool_call_id=getattr(message, "tool_call_id", "") or "",
        reasoning_content=reasoning if isinstance(reasoning, str) else "",
    )


def from_memoryd(message: message_pb2.Message) -> BaseMessage:
    """The LangChain message saved as `message`; for messages other clients wrote, the
    closest LangChain type by role (user, assistant, system, tool, else ChatMessage)."""
    form = frameworks.unpack(FORM_KEY, message)
    if form is not None:
        return messages_from_dict([{"type": form["type"], "data": form}])[0]
    common: dict[str, Any] = {"content": message.content, "id": message.id or None}
    if message.role == "user":
        return HumanMessage(**common)
    if message.role == "assistant":
        calls = [{"id": c.id or None, "name": c.name, "args": _arguments(c.arguments)} for c in message.tool_calls]
        extra = {"reasoning_content": message.reasoning_content} if message.reasoning_content else {}
        return AIMessage(**common, tool_calls=calls, additional_kwargs=extra)
    if message.role == "system":
        return SystemMessage(**common)
    if message.role == "tool":
        return ToolMessage(**common, tool_call_id=message.tool_call_id)
    return ChatMessage(**common, role=message.role)


def _arguments(text: str) -> dict[str, Any]:
    try:
        value = json.loads(text or "{}")
    except json.JSONDecodeError:
        return {"arguments": text}
    return value if isinstance(value, dict) else {"arguments": value}


class MemorydChatMessageHistory(BaseChatMessageHistory):
    """A memoryd session as a LangChain chat message history (for RunnableWithMessageHistory).

    Args:
        session_id: the memoryd session.
        client: a SyncMemoryClient (for `messages`, `add_messages`, `clear`) or a
            MemoryClient (for `aget_messages`, `aadd_messages`, `aclear`).
        async_client: the MemoryClient, when `client` is the sync one and both are used.
        attributes: session attributes (memoryd_client.session_attributes: user_id,
            agent_id, labels) saved with every message.
        limit: read only the newest `limit` messages (None: the whole history).

    The history is the session's unarchived messages, oldest first; `clear` deletes the
    session's messages (ClearSession). Adding several messages is one atomic SaveMessages.
    """

    def __init__(
        self,
        session_id: str,
        client: SyncMemoryClient | MemoryClient | None = None,
        *,
        async_client: MemoryClient | None = None,
        attributes: message_pb2.SessionAttributes | None = None,
        limit: int | None = None,
    ) -> None:
        if isinstance(client, MemoryClient):
            client, async_client = None, client
        if client is None and async_client is None:
            raise TypeError("MemorydChatMessageHistory needs a SyncMemoryClient or a MemoryClient")
        self.session_id = session_id
        self.client = client
        self.async_client = async_client
        self.attributes = attributes
        self.limit = limit

    def _sync(self) -> SyncMemoryClient:
        if self.client is None:
            raise TypeError("this history has only a MemoryClient: use the async methods (aget_messages, ...)")
        return self.client

    @property
    def messages(self) -> list[BaseMessage]:  # type: ignore[override]  # a property, as the base allows
        return [from_memoryd(m) for m in frameworks.history(self._sync(), self.session_id, self.limit)]

    # Without a MemoryClient the async methods run the sync ones in a thread (the base's way).
    async def aget_messages(self) -> list[BaseMessage]:
        if self.async_client is None:
            return await super().aget_messages()
        return [from_memoryd(m) for m in await frameworks.history_async(self.async_client, self.session_id, self.limit)]

    def add_messages(self, messages: Sequence[BaseMessage]) -> None:
        if messages:
            self._sync().save_messages(self.session_id, [to_memoryd(m) for m in messages], attributes=self.attributes)

    async def aadd_messages(self, messages: Sequence[BaseMessage]) -> None:
        if self.async_client is None:
            return await super().aadd_messages(messages)
        if messages:
            await self.async_client.save_messages(
                self.session_id, [to_memoryd(m) for m in messages], attributes=self.attributes
            )

    def clear(self) -> None:
        self._sync().clear_session(self.session_id)

    async def aclear(self) -> None:
        if self.async_client is None:
            return await super().aclear()
        await self.async_client.clear_session(self.session_id)


__all__ = ["MemorydChatMessageHistory", "from_memoryd", "to_memoryd"]
