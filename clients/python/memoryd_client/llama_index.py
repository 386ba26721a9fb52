"""LlamaIndex chat stores on memoryd (`pip install 'memoryd-client[llamaindex]'`).

    from llama_index.core.memory import Memory
    from memoryd_client import MemoryClient
    from memoryd_client.llama_index import MemorydDBChatStore

    memory = Memory.from_defaults(session_id="session-1", chat_store=MemorydDBChatStore(MemoryClient(...)))

MemorydDBChatStore is an `AsyncDBChatStore`, the store LlamaIndex's current `Memory` takes
(its short-term FIFO queue: active messages are memoryd's unarchived ones, archived ones
are what TrimHistory archived). MemorydChatStore is a `BaseChatStore`, for the older
`ChatMemoryBuffer`.

A key is a memoryd session. Each ChatMessage is one memoryd message: the ChatMessage's
JSON form (blocks, additional_kwargs) in metadata["llama_index"], and for other clients
its role, its text, tool calls (ToolCallBlock or additional_kwargs["tool_calls"]) and
additional_kwargs["tool_call_id"].
"""

from __future__ import annotations

import json
from typing import Any

from llama_index.core.base.llms.types import TextBlock, ToolCallBlock
from llama_index.core.bridge.pydantic import PrivateAttr
from llama_index.core.llms import ChatMessage, MessageRole
from llama_index.core.storage.chat_store.base import BaseChatStore
from llama_index.core.storage.chat_store.base_db import AsyncDBChatStore, MessageStatus

from memoryd.v1 import message_pb2

from . import frameworks
from .client import MemoryClient
from .messages import message as new_message
from .messages import tool_call
from .sync import SyncMemoryClient

FORM_KEY = "llama_index"
ROLES = {role.value for role in MessageRole}


def _tool_calls(message: ChatMessage) -> list[message_pb2.ToolCall]:
    calls = []
    for block in message.blocks:
        if isinstance(block, ToolCallBlock):
            arguments = block.tool_kwargs if isinstance(block.tool_kwargs, str) else json.dumps(block.tool_kwargs)
            calls.append(tool_call(block.tool_call_id or "", block.tool_name, arguments))
    for call in message.additional_kwargs.get("tool_calls") or []:  # OpenAI-style LLMs put them here
        call = call if isinstance(call, dict) else getattr(call, "model_dump", dict)()
        function = call.get("function") or {}
        if function.get("name"):
            calls.append(tool_call(call.get("id") or "", function["name"], function.get("arguments") or "{}"))
    return calls


def to_memoryd(message: ChatMessage) -> message_pb2.Message:
    """A ChatMessage as a memoryd message (its JSON form in metadata["llama_index"])."""
    content = "\n".join(block.text for block in message.blocks if isinstance(block, TextBlock))
    answers = message.additional_kwargs.get("tool_call_id")
    return new_message(
        message.role.value,
        content,
        metadata=frameworks.pack(FORM_KEY, message.model_dump(mode="json"), content),
        tool_calls=_tool_calls(message),
        tool_call_id=answers if isinstance(answers, str) else "",
    )


def from_memoryd(message: message_pb2.Message) -> ChatMessage:
    """The ChatMessage saved as `message`; for messages other clients wrote, one with their
    role (user when LlamaIndex has no such role), text and tool calls."""
    form = frameworks.unpack(FORM_KEY, message)
    if form is not None:
        return ChatMessage.model_validate(form)
    blocks: list[Any] = [TextBlock(text=message.content)] if message.content else []
    blocks += [
        ToolCallBlock(tool_call_id=c.id or None, tool_name=c.name, tool_kwargs=c.arguments) for c in message.tool_calls
    ]
    extra = {"tool_call_id": message.tool_call_id} if message.tool_call_id else {}
    role = message.role if message.role in ROLES else MessageRole.USER
    return ChatMessage(role=role, blocks=blocks, additional_kwargs=extra)


class MemorydChatStore(BaseChatStore):
    """memoryd sessions as a LlamaIndex chat store: a key is a session id.

    Args:
        client: a SyncMemoryClient for the sync methods.
        async_client: a MemoryClient for the async ones (without it they run the sync
            methods in a thread, as BaseChatStore does). Give both to a ChatMemoryBuffer used
            asynchronously: its aget runs the store's sync get_messages in a thread.
        attributes: session attributes (memoryd_client.session_attributes) saved with
            every message; get_keys lists only the sessions of their user_id/agent_id.

    Messages are the session's unarchived ones, oldest first. set_messages is one atomic
    ReplaceHistory; delete_last_message one PopMessages; delete_message(idx) deletes the
    idx-th message by its id, so it never removes another one than it returns.
    """

    _client: SyncMemoryClient | None = PrivateAttr(default=None)
    _async_client: MemoryClient | None = PrivateAttr(default=None)
    _attributes: message_pb2.SessionAttributes | None = PrivateAttr(default=None)

    def __init__(
        self,
        client: SyncMemoryClient | None = None,
        *,
        async_client: MemoryClient | None = None,
        attributes: message_pb2.SessionAttributes | None = None,
    ) -> None:
        super().__init__()
        if client is None and async_client is None:
            raise TypeError("MemorydChatStore needs a SyncMemoryClient or a MemoryClient")
        self._client, self._async_client, self._attributes = client, async_client, attributes

    @classmethod
    def class_name(cls) -> str:
        return "MemorydChatStore"

    @property
    def client(self) -> SyncMemoryClient:
        if self._client is None:
            raise TypeError("this chat store has only a MemoryClient: use the async methods (aget_messages, ...)")
        return self._client

    def _owner(self) -> dict[str, str]:
        attributes = self._attributes
        return {"user_id": attributes.user_id, "agent_id": attributes.agent_id} if attributes else {}

    # -- sync ------------------------------------------------------------------------
    def set_messages(self, key: str, messages: list[ChatMessage]) -> None:
        if self._attributes is not None:  # first: a different owner fails before anything changes
            self.client.update_session(key, self._attributes)
        self.client.replace_history(key, [to_memoryd(m) for m in messages])

    def get_messages(self, key: str) -> list[ChatMessage]:
        return [from_memoryd(m) for m in frameworks.history(self.client, key)]

    def add_message(self, key: str, message: ChatMessage) -> None:
        self.client.save_message(key, to_memoryd(message), attributes=self._attributes)

    def delete_messages(self, key: str) -> list[ChatMessage] | None:
        messages = self.get_messages(key)
        self.client.clear_session(key)
        return messages or None

    def delete_message(self, key: str, idx: int) -> ChatMessage | None:
        messages = frameworks.history(self.client, key)
        if not 0 <= idx < len(messages):
            return None
        self.client.delete_messages(key, [messages[idx].id])
        return from_memoryd(messages[idx])

    def delete_last_message(self, key: str) -> ChatMessage | None:
        popped = self.client.pop_messages(key, 1).messages
        return from_memoryd(popped[-1]) if popped else None

    def get_keys(self) -> list[str]:
        return [s.session_id for s in self.client.iter_sessions(**self._owner()) if s.unarchived_count]

    # -- async -----------------------------------------------------------------------
    async def aset_messages(self, key: str, messages: list[ChatMessage]) -> None:
        if self._async_client is None:
            return await super().aset_messages(key, messages)
        if self._attributes is not None:
            await self._async_client.update_session(key, self._attributes)
        await self._async_client.replace_history(key, [to_memoryd(m) for m in messages])

    async def aget_messages(self, key: str) -> list[ChatMessage]:
        if self._async_client is None:
            return await super().aget_messages(key)
        return [from_memoryd(m) for m in await frameworks.history_async(self._async_client, key)]

    async def async_add_message(self, key: str, message: ChatMessage) -> None:
        if self._async_client is None:
            return await super().async_add_message(key, message)
        await self._async_client.save_message(key, to_memoryd(message), attributes=self._attributes)

    async def adelete_messages(self, key: str) -> list[ChatMessage] | None:
        if self._async_client is None:
            return await super().adelete_messages(key)
        messages = await self.aget_messages(key)
        await self._async_client.clear_session(key)
        return messages or None

    async def adelete_message(self, key: str, idx: int) -> ChatMessage | None:
        if self._async_client is None:
            return await super().adelete_message(key, idx)
        messages = await frameworks.history_async(self._async_client, key)
        if not 0 <= idx < len(messages):
            return None
        await self._async_client.delete_messages(key, [messages[idx].id])
        return from_memoryd(messages[idx])

    async def adelete_last_message(self, key: str) -> ChatMessage | None:
        if self._async_client is None:
            return await super().adelete_last_message(key)
        popped = (await self._async_client.pop_messages(key, 1)).messages
        return from_memoryd(popped[-1]) if popped else None

    async def aget_keys(self) -> list[str]:
        if self._async_client is None:
            return await super().aget_keys()
        return [s.session_id async for s in self._async_client.iter_sessions(**self._owner()) if s.unarchived_count]


class MemorydDBChatStore(AsyncDBChatStore):
    """memoryd sessions as the chat store of LlamaIndex's `Memory`: a key is a session id.

    Args:
        client: a MemoryClient (the interface is async).
        attributes: session attributes (memoryd_client.session_attributes) saved with
            every message; get_keys lists only the sessions of their user_id/agent_id.

    A message's status is memoryd's `archived`: ACTIVE messages are the unarchived ones,
    ARCHIVED those TrimHistory archived (archive_oldest_messages is TrimHistory), None both;
    all oldest first. set_messages is one atomic ReplaceHistory of the active messages;
    delete_message(key, idx) deletes the idx-th message of the whole history (archived
    included) by its id. Messages are added as ACTIVE only: memoryd archives by TrimHistory.
    """

    _client: MemoryClient = PrivateAttr()
    _attributes: message_pb2.SessionAttributes | None = PrivateAttr(default=None)

    def __init__(self, client: MemoryClient, *, attributes: message_pb2.SessionAttributes | None = None) -> None:
        super().__init__()
        self._client, self._attributes = client, attributes

    @classmethod
    def class_name(cls) -> str:
        return "MemorydDBChatStore"

    async def _messages(self, key: str, status: MessageStatus | None) -> list[message_pb2.Message]:
        if status == MessageStatus.ACTIVE:
            return await frameworks.history_async(self._client, key)
        every = [m async for m in self._client.iter_full_history(key, page_size=1000)]
        return every if status is None else [m for m in every if m.archived]

    async def get_messages(
        self,
        key: str,
        status: MessageStatus | None = MessageStatus.ACTIVE,
        limit: int | None = None,
        offset: int | None = None,
    ) -> list[ChatMessage]:
        messages = (await self._messages(key, status))[offset or 0 :]
        return [from_memoryd(m) for m in (messages if limit is None else messages[:limit])]

    async def count_messages(self, key: str, status: MessageStatus | None = MessageStatus.ACTIVE) -> int:
        session = await self._client.get_session(key)
        if session is None:
            return 0
        if status == MessageStatus.ACTIVE:
            return session.unarchived_count
        return session.message_count - (session.unarchived_count if status == MessageStatus.ARCHIVED else 0)

    @staticmethod
    def _active_only(status: MessageStatus) -> None:
        if status != MessageStatus.ACTIVE:
            raise ValueError("memoryd adds messages as active only; archive them with archive_oldest_messages")

    async def add_message(self, key: str, message: ChatMessage, status: MessageStatus = MessageStatus.ACTIVE) -> None:
        self._active_only(status)
        await self._client.save_message(key, to_memoryd(message), attributes=self._attributes)

    async def add_messages(
        self, key: str, messages: list[ChatMessage], status: MessageStatus = MessageStatus.ACTIVE
    ) -> None:
        self._active_only(status)
        if messages:
            await self._client.save_messages(key, [to_memoryd(m) for m in messages], attributes=self._attributes)

    async def set_messages(
        self, key: str, messages: list[ChatMessage], status: MessageStatus = MessageStatus.ACTIVE
    ) -> None:
        """Replaces every message of the key (archived ones too, as LlamaIndex's SQL store does)."""
        self._active_only(status)
        if self._attributes is not None:
            await self._client.update_session(key, self._attributes)
        archived = [m.id for m in await self._messages(key, MessageStatus.ARCHIVED)]
        await self._delete_ids(key, archived)
        await self._client.replace_history(key, [to_memoryd(m) for m in messages])

    async def delete_message(self, key: str, idx: int) -> ChatMessage | None:
        messages = await self._messages(key, None)
        if not 0 <= idx < len(messages):
            return None
        await self._client.delete_messages(key, [messages[idx].id])
        return from_memoryd(messages[idx])

    async def delete_messages(self, key: str, status: MessageStatus | None = None) -> None:
        if status is None:
            await self._client.clear_session(key)
        else:
            await self._delete_ids(key, [m.id for m in await self._messages(key, status)])

    async def delete_oldest_messages(self, key: str, n: int) -> list[ChatMessage]:
        oldest = (await self._messages(key, MessageStatus.ACTIVE))[: max(n, 0)]
        await self._delete_ids(key, [m.id for m in oldest])
        return [from_memoryd(m) for m in oldest]

    async def archive_oldest_messages(self, key: str, n: int) -> list[ChatMessage]:
        active = await self._messages(key, MessageStatus.ACTIVE)
        oldest = active[: max(n, 0)]
        if oldest:
            await self._client.trim_history(key, len(active) - len(oldest))
        return [from_memoryd(m) for m in oldest]

    async def get_keys(self) -> list[str]:
        owner = {"user_id": self._attributes.user_id, "agent_id": self._attributes.agent_id} if self._attributes else {}
        return [s.session_id async for s in self._client.iter_sessions(**owner) if s.message_count]

    async def _delete_ids(self, key: str, ids: list[str]) -> None:
        for start in range(0, len(ids), 10_000):  # the server's bound on ids per call
            await self._client.delete_messages(key, ids[start : start + 10_000])


__all__ = ["MemorydChatStore", "MemorydDBChatStore", "from_memoryd", "to_memoryd"]
