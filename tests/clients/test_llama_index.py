"""memoryd_client.llama_index against a live memoryd: LlamaIndex's ChatMemoryBuffer on a
MemorydChatStore (sync and async), every BaseChatStore method, and ChatMessages with
blocks and tool calls round-tripping exactly. The buffer counts tokens with a word
tokenizer: LlamaIndex's default (tiktoken) would download its encoding.
"""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
from llama_index.core.base.llms.types import ImageBlock, TextBlock, ThinkingBlock, ToolCallBlock
from llama_index.core.llms import ChatMessage, MessageRole
from llama_index.core.memory import ChatMemoryBuffer
from llama_index.core.storage.chat_store.base import BaseChatStore

from memoryd_client import MemoryClient, SyncMemoryClient, message, session_attributes, tool_call
from memoryd_client.llama_index import MemorydChatStore
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
