"""A pytest plugin that runs LlamaIndex's own chat-store and Memory tests (llama-index-core's
tests/storage/chat_store/test_sql.py, tests/memory/test_memory_base.py and
tests/storage/chat_store/test_simple_chat_store.py, unchanged) with memoryd's stores swapped
in (only the store under test changes): MemorydDBChatStore for SQLAlchemyChatStore, the
AsyncDBChatStore that `Memory` keeps its queue in by default, and MemorydChatStore (the
BaseChatStore of ChatMemoryBuffer) for SimpleChatStore.

Each instance keeps its keys as memoryd sessions "<its prefix>/<key>" owned by an agent id of
its own, so two instances never see each other's keys, as two ":memory:" SQLite databases
(or two SimpleChatStores) do not. LlamaIndex's tests
are not in its wheel or sdist; docs/INTEGRATIONS.md, "Frameworks' own suites", says which
version was run, the command, the counts and why what fails fails:

    PYTHONPATH=/work/main/tools/framework_suites /work/main/.venv/bin/pytest -p llama_index_plugin \
      -p no:cacheprovider -n 0 -o asyncio_mode=auto -c /dev/null --rootdir=. tests/...
"""

from __future__ import annotations

import uuid
from typing import Any

import llama_index.core.memory.memory as memory_module
import llama_index.core.storage.chat_store as chat_store_package
import llama_index.core.storage.chat_store.simple_chat_store as simple_module
import llama_index.core.storage.chat_store.sql as sql_module
from llama_index.core.base.llms.types import ChatMessage
from llama_index.core.storage.chat_store.sql import MessageStatus
from memoryd_server import Server
from pydantic import PrivateAttr

from memoryd_client import MemoryClient, SyncMemoryClient, session_attributes
from memoryd_client.llama_index import MemorydChatStore, MemorydDBChatStore

_server = Server()
_client = MemoryClient(_server.target)  # made where no loop runs: a channel per loop on first use
_sync = SyncMemoryClient(_server.target)


def pytest_unconfigure(config: Any) -> None:
    _sync.close()
    _server.stop()


class ChatStore(MemorydDBChatStore):
    """SQLAlchemyChatStore's constructor (its arguments name a database, which memoryd does
    not need), a MemorydDBChatStore underneath; keys are this instance's own."""

    _prefix: str = PrivateAttr()

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        name = f"li-{uuid.uuid4().hex[:12]}"
        super().__init__(_client, attributes=session_attributes(agent_id=name))
        self._prefix = name + "/"

    def _key(self, key: str) -> str:
        return self._prefix + key

    async def get_messages(
        self,
        key: str,
        status: MessageStatus | None = MessageStatus.ACTIVE,
        limit: int | None = None,
        offset: int | None = None,
    ) -> list[ChatMessage]:
        return await super().get_messages(self._key(key), status, limit, offset)

    async def count_messages(self, key: str, status: MessageStatus | None = MessageStatus.ACTIVE) -> int:
        return await super().count_messages(self._key(key), status)

    async def add_message(self, key: str, message: ChatMessage, status: MessageStatus = MessageStatus.ACTIVE) -> None:
        await super().add_message(self._key(key), message, status)

    async def add_messages(
        self, key: str, messages: list[ChatMessage], status: MessageStatus = MessageStatus.ACTIVE
    ) -> None:
        await super().add_messages(self._key(key), messages, status)

    async def set_messages(
        self, key: str, messages: list[ChatMessage], status: MessageStatus = MessageStatus.ACTIVE
    ) -> None:
        await super().set_messages(self._key(key), messages, status)

    async def delete_message(self, key: str, idx: int) -> ChatMessage | None:
        return await super().delete_message(self._key(key), idx)

    async def delete_messages(self, key: str, status: MessageStatus | None = None) -> None:
        await super().delete_messages(self._key(key), status)

    async def delete_oldest_messages(self, key: str, n: int) -> list[ChatMessage]:
        return await super().delete_oldest_messages(self._key(key), n)

    async def archive_oldest_messages(self, key: str, n: int) -> list[ChatMessage]:
        return await super().archive_oldest_messages(self._key(key), n)

    async def get_keys(self) -> list[str]:
        return [key[len(self._prefix) :] for key in await super().get_keys() if key.startswith(self._prefix)]


class SimpleStore(MemorydChatStore):
    """SimpleChatStore's constructor, a MemorydChatStore (sync client) underneath; keys are
    this instance's own."""

    _prefix: str = PrivateAttr()

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        name = f"lis-{uuid.uuid4().hex[:12]}"
        super().__init__(_sync, attributes=session_attributes(agent_id=name))
        self._prefix = name + "/"

    def set_messages(self, key: str, messages: list[ChatMessage]) -> None:
        super().set_messages(self._prefix + key, messages)

    def get_messages(self, key: str) -> list[ChatMessage]:
        return super().get_messages(self._prefix + key)

    def add_message(self, key: str, message: ChatMessage) -> None:
        super().add_message(self._prefix + key, message)

    def delete_messages(self, key: str) -> list[ChatMessage] | None:
        return super().delete_messages(self._prefix + key)

    def delete_message(self, key: str, idx: int) -> ChatMessage | None:
        return super().delete_message(self._prefix + key, idx)

    def delete_last_message(self, key: str) -> ChatMessage | None:
        return super().delete_last_message(self._prefix + key)

    def get_keys(self) -> list[str]:
        return [key[len(self._prefix) :] for key in super().get_keys() if key.startswith(self._prefix)]


chat_store_package.SimpleChatStore = SimpleStore  # type: ignore[misc, assignment]
simple_module.SimpleChatStore = SimpleStore  # type: ignore[misc, assignment]
sql_module.SQLAlchemyChatStore = ChatStore  # type: ignore[misc, assignment]
memory_module.SQLAlchemyChatStore = ChatStore  # type: ignore[misc, assignment]
