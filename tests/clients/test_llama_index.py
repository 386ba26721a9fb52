"""memoryd_client.llama_index against a live memoryd: LlamaIndex's current Memory on a
MemorydDBChatStore (its FIFO queue archiving into memoryd, memory blocks fed), every
AsyncDBChatStore method; the older ChatMemoryBuffer on a MemorydChatStore (sync and async),
every BaseChatStore method; ChatMessages with blocks and tool calls round-tripping exactly. The buffer counts tokens with a word
tokenizer: LlamaIndex's default (tiktoken) would download its encoding.
"""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
from llama_index.core.base.llms.types import ImageBlock, TextBlock, ThinkingBlock, ToolCallBlock
from llama_index.core.llms import ChatMessage, MessageRole
from llama_index.core.memory import BaseMemoryBlock, ChatMemoryBuffer, Memory
from llama_index.core.storage.chat_store.base import BaseChatStore
from llama_index.core.storage.chat_store.base_db import AsyncDBChatStore, MessageStatus

from memoryd_client import MemoryClient, SyncMemoryClient, message, session_attributes, tool_call
from memoryd_client.llama_index import MemorydChatStore, MemorydDBChatStore
from tests.processes import MemorydServer

WORDS = str.split

MESSAGES = [
    ChatMessage(role=MessageRole.SYSTEM, content="Answer briefly."),
    ChatMessage(role=MessageRole.USER, content="What's on this picture? ✓", additional_kwargs={"n": 2**61}),
    ChatMessage(role=MessageRole.USER, blocks=[TextBlock(text="and this"), ImageBlock(image=b"\x89PNG", image_mimetype="image/png")]),
    ChatMessage(
        role=MessageRole.ASSISTANT,
        blocks=[ThinkingBlock(content="look"), ToolCallBlock(tool_call_id="c1", tool_name="describe", tool_kwargs={"n": 1})],
    ),
    ChatMessage(role=MessageRole.TOOL, content="a cat", additional_kwargs={"tool_call_id": "c1", "name": "describe"}),
    ChatMessage(
        role=MessageRole.ASSISTANT,
        content="",
        additional_kwargs={"tool_calls": [{"id": "c2", "type": "function", "function": {"name": "zoom", "arguments": "{}"}}]},
    ),
    ChatMessage(role=MessageRole.ASSISTANT, content="A cat."),
    ChatMessage(role=MessageRole.DEVELOPER, content="dev"),
    ChatMessage(role=MessageRole.CHATBOT, content="bot"),
]


@pytest.fixture
def sync_client(memoryd: MemorydServer) -> Iterator[SyncMemoryClient]:
    with SyncMemoryClient(memoryd.target) as client:
        yield client


def test_it_is_a_llama_index_chat_store(sync_client):
    store = MemorydChatStore(sync_client)
    assert isinstance(store, BaseChatStore) and store.class_name() == "MemorydChatStore"


def test_chat_memory_buffer_keeps_the_conversation(sync_client, session_id):
    memory = ChatMemoryBuffer.from_defaults(
        chat_store=MemorydChatStore(sync_client), chat_store_key=session_id, token_limit=6, tokenizer_fn=WORDS
    )
    memory.put(ChatMessage(role="user", content="Capital of France?"))
    memory.put(ChatMessage(role="assistant", content="Paris."))
    memory.put(ChatMessage(role="user", content="And its population?"))
    assert [m.content for m in memory.get_all()] == ["Capital of France?", "Paris.", "And its population?"]
    assert [m.content for m in memory.get()] == ["And its population?"]  # the newest that fit 6 words
    # A second buffer over the same key, as a restarted process: memoryd kept it.
    again = ChatMemoryBuffer.from_defaults(chat_store=MemorydChatStore(sync_client), chat_store_key=session_id)
    assert len(again.get_all()) == 3
    memory.set([ChatMessage(role="user", content="fresh start")])
    assert [m.content for m in again.get_all()] == ["fresh start"]
    memory.reset()
    assert again.get_all() == []


async def test_chat_memory_buffer_async(sync_client, client: MemoryClient, session_id):
    # ChatMemoryBuffer.aget runs the store's sync get_messages in a thread: both clients.
    store = MemorydChatStore(sync_client, async_client=client)
    memory = ChatMemoryBuffer.from_defaults(chat_store=store, chat_store_key=session_id, tokenizer_fn=WORDS)
    await memory.aput(ChatMessage(role="user", content="hi"))
    await memory.aput(ChatMessage(role="assistant", content="hello"))
    assert [m.content for m in await memory.aget()] == ["hi", "hello"]
    assert [m.content for m in await store.aget_messages(session_id)] == ["hi", "hello"]
    assert (await store.adelete_last_message(session_id)).content == "hello"
    assert (await store.adelete_message(session_id, 0)).content == "hi"
    assert await store.adelete_message(session_id, 0) is None
    await store.aset_messages(session_id, MESSAGES)
    assert await store.aget_messages(session_id) == MESSAGES
    assert session_id in await store.aget_keys()
    assert await store.adelete_messages(session_id) == MESSAGES and await store.aget_messages(session_id) == []


def test_every_method_and_exact_round_trips(sync_client, session_id):
    store = MemorydChatStore(sync_client)
    for m in MESSAGES:
        store.add_message(session_id, m)
    assert store.get_messages(session_id) == MESSAGES
    assert session_id in store.get_keys()

    stored = sync_client.get_history(session_id)  # what other memoryd clients see
    assert [m.role for m in stored] == ["system", "user", "user", "assistant", "tool", "assistant", "assistant", "developer", "chatbot"]
    assert stored[2].content == "and this"
    assert [(c.id, c.name, json.loads(c.arguments)) for c in stored[3].tool_calls] == [("c1", "describe", {"n": 1})]
    assert stored[4].tool_call_id == "c1"
    assert [(c.id, c.name) for c in stored[5].tool_calls] == [("c2", "zoom")]

    assert store.delete_message(session_id, 1) == MESSAGES[1]
    assert store.delete_message(session_id, 99) is None
    assert store.delete_last_message(session_id) == MESSAGES[-1]
    assert store.get_messages(session_id) == [MESSAGES[0], *MESSAGES[2:-1]]
    assert store.delete_messages(session_id) == [MESSAGES[0], *MESSAGES[2:-1]]
    assert store.delete_messages(session_id) is None and store.delete_last_message(session_id) is None
    assert session_id not in store.get_keys()


def test_messages_other_clients_wrote_become_chat_messages(sync_client, session_id):
    sync_client.save_messages(session_id, [
        message("user", "hi"),
        message("assistant", "", tool_calls=[tool_call("c1", "lookup", '{"q": 1}')]),
        message("tool", "found", tool_call_id="c1"),
        message("notice", "joined"),
    ])  # fmt: skip
    got = MemorydChatStore(sync_client).get_messages(session_id)
    assert [m.role for m in got] == [MessageRole.USER, MessageRole.ASSISTANT, MessageRole.TOOL, MessageRole.USER]
    assert got[1].blocks == [ToolCallBlock(tool_call_id="c1", tool_name="lookup", tool_kwargs='{"q": 1}')]
    assert got[2].additional_kwargs == {"tool_call_id": "c1"} and got[3].content == "joined"


def test_attributes_scope_the_keys(sync_client, session_id):
    owner = session_attributes(user_id=f"user-{session_id}")
    store = MemorydChatStore(sync_client, attributes=owner)
    store.add_message(f"{session_id}-a", ChatMessage(role="user", content="one"))
    store.set_messages(f"{session_id}-b", [ChatMessage(role="user", content="two")])
    MemorydChatStore(sync_client).add_message(f"{session_id}-other", ChatMessage(role="user", content="not theirs"))
    assert store.get_keys() == [f"{session_id}-a", f"{session_id}-b"]


# -- LlamaIndex's current Memory ----------------------------------------------------------
class RecordingBlock(BaseMemoryBlock[str]):
    """A memory block that keeps what Memory flushes out of its queue (no LLM involved)."""

    name: str = "recorded"
    flushed: list[ChatMessage] = []

    async def _aget(self, messages: list[ChatMessage] | None = None, **kwargs) -> str:
        return " | ".join(m.content or "" for m in self.flushed)

    async def _aput(self, messages: list[ChatMessage]) -> None:
        self.flushed += messages


async def test_memory_keeps_its_queue_in_memoryd(client: MemoryClient, session_id):
    block = RecordingBlock()
    memory = Memory.from_defaults(
        session_id=session_id, chat_store=MemorydDBChatStore(client), memory_blocks=[block],
        token_limit=40, chat_history_token_ratio=0.5, token_flush_size=8, tokenizer_fn=WORDS,
    )  # fmt: skip
    turns = [ChatMessage(role="user" if i % 2 == 0 else "assistant", content=f"turn {i} of the talk") for i in range(8)]
    for turn in turns:
        await memory.aput(turn)  # over 20 words, Memory archives the oldest turns
    active = await memory.aget_all(status=MessageStatus.ACTIVE)
    archived = await memory.aget_all(status=MessageStatus.ARCHIVED)
    assert archived and archived + active == turns
    assert [m.content for m in block.flushed] == [m.content for m in archived]  # (Memory tags them with session_id)
    history = [m async for m in client.iter_full_history(session_id)]  # what memoryd holds
    assert [m.archived for m in history] == [True] * len(archived) + [False] * len(active)
    context = await memory.aget()
    assert context[0].role == MessageRole.SYSTEM and "turn 0 of the talk" in context[0].content  # the block
    assert context[1:] == active
    await memory.areset()
    assert await memory.aget_all(status=None) == []


async def test_every_db_chat_store_method(client: MemoryClient, session_id):
    store = MemorydDBChatStore(client)
    assert isinstance(store, AsyncDBChatStore) and store.class_name() == "MemorydDBChatStore"
    await store.add_messages(session_id, MESSAGES[:4])
    await store.add_message(session_id, MESSAGES[4])
    assert await store.get_messages(session_id) == MESSAGES[:5]
    assert await store.get_messages(session_id, limit=2, offset=1) == MESSAGES[1:3]
    assert await store.archive_oldest_messages(session_id, 2) == MESSAGES[:2]
    assert await store.get_messages(session_id, status=MessageStatus.ARCHIVED) == MESSAGES[:2]
    assert await store.get_messages(session_id, status=None) == MESSAGES[:5]
    counts = [await store.count_messages(session_id, s) for s in (MessageStatus.ACTIVE, MessageStatus.ARCHIVED, None)]
    assert counts == [3, 2, 5]
    assert await store.delete_oldest_messages(session_id, 1) == [MESSAGES[2]]
    assert await store.delete_message(session_id, 0) == MESSAGES[0]  # position in the whole history
    assert await store.delete_message(session_id, 99) is None
    assert session_id in await store.get_keys()
    await store.delete_messages(session_id, MessageStatus.ARCHIVED)
    assert await store.get_messages(session_id, status=None) == MESSAGES[3:5]
    await store.set_messages(session_id, MESSAGES)
    assert await store.get_messages(session_id, status=None) == MESSAGES
    with pytest.raises(ValueError, match="active"):
        await store.add_message(session_id, MESSAGES[0], status=MessageStatus.ARCHIVED)
    await store.delete_messages(session_id)
    assert await store.count_messages(session_id) == 0 and session_id not in await store.get_keys()
