"""memoryd_client.langchain against a live memoryd: every LangChain message type round-trips
exactly (sync and async), and RunnableWithMessageHistory runs a multi-turn conversation
with langchain-core's fake chat model. (langchain-tests publishes no standard tests for
chat message histories: its suites cover models, tools, stores, caches, retrievers.)
"""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.chat_history import BaseChatMessageHistory
from langchain_core.language_models.fake_chat_models import FakeMessagesListChatModel
from langchain_core.messages import (
    AIMessage,
    AIMessageChunk,
    ChatMessage,
    ChatMessageChunk,
    FunctionMessage,
    FunctionMessageChunk,
    HumanMessage,
    HumanMessageChunk,
    RemoveMessage,
    SystemMessage,
    SystemMessageChunk,
    ToolMessage,
    ToolMessageChunk,
)
from langchain_core.prompts import ChatPromptTemplate, MessagesPlaceholder
from langchain_core.runnables.history import RunnableWithMessageHistory

from memoryd_client import MemoryClient, SyncMemoryClient, message, session_attributes, tool_call
from memoryd_client.langchain import MemorydChatMessageHistory
from tests.processes import MemorydServer

EVERY_TYPE = [
    SystemMessage("You are terse.", id="sys-1"),
    HumanMessage("Weather in Paris? ünïcödé ✓", name="ann", additional_kwargs={"n": 1, "f": 1.5, "big": 2**60}),
    HumanMessage([{"type": "text", "text": "what is this?"}, {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBO"}}]),
    AIMessage(
        "",
        tool_calls=[{"name": "weather", "args": {"city": "Paris", "days": 3, "units": None}, "id": "call-1"}],
        invalid_tool_calls=[{"name": "broken", "args": "{not json", "id": "call-2", "error": "bad json", "type": "invalid_tool_call"}],
        usage_metadata={"input_tokens": 10, "output_tokens": 4, "total_tokens": 14},
        response_metadata={"model_name": "fake", "finish_reason": "tool_calls"},
        additional_kwargs={"reasoning_content": "look it up", "nested": {"list": [1, "two", None, True]}},
        id="ai-1",
    ),
    ToolMessage("18°C", tool_call_id="call-1", name="weather", artifact={"raw": [18, "C"]}, status="success"),
    ToolMessage("no such tool", tool_call_id="call-2", status="error"),
    AIMessage("It is 18°C.", name="bot"),
    ChatMessage("Too terse.", role="critic"),
    FunctionMessage("42", name="answer"),
    RemoveMessage(id="ai-1"),
    AIMessageChunk("par", tool_call_chunks=[{"name": "weather", "args": '{"city": "Pa', "id": "call-3", "index": 0}]),
    HumanMessageChunk("chunk"),
    SystemMessageChunk("system chunk"),
    ToolMessageChunk("tool chunk", tool_call_id="call-3"),
    ChatMessageChunk("chat chunk", role="critic"),
    FunctionMessageChunk("fn chunk", name="answer"),
]


@pytest.fixture
def sync_client(memoryd: MemorydServer) -> Iterator[SyncMemoryClient]:
    with SyncMemoryClient(memoryd.target) as client:
        yield client


def test_it_is_a_langchain_chat_message_history(sync_client, session_id):
    assert isinstance(MemorydChatMessageHistory(session_id, sync_client), BaseChatMessageHistory)


def test_every_message_type_round_trips_exactly(sync_client, session_id):
    history = MemorydChatMessageHistory(session_id, sync_client)
    history.add_messages(EVERY_TYPE[:5])
    for m in EVERY_TYPE[5:]:
        history.add_message(m)
    got = history.messages
    assert [type(m) for m in got] == [type(m) for m in EVERY_TYPE]
    assert got == EVERY_TYPE
    assert got[1].additional_kwargs["big"] == 2**60 and isinstance(got[1].additional_kwargs["n"], int)

    # What other memoryd clients see: roles, text, tool calls with JSON arguments, tool_call_id.
    stored = sync_client.get_history(session_id, 100)
    assert [m.role for m in stored[:9]] == ["system", "user", "user", "assistant", "tool", "tool", "assistant", "critic", "function"]
    assert stored[2].content == "what is this?"
    assert [(c.id, c.name, json.loads(c.arguments)) for c in stored[3].tool_calls] == [
        ("call-1", "weather", {"city": "Paris", "days": 3, "units": None})
    ]
    assert stored[3].reasoning_content == "look it up"
    assert stored[4].tool_call_id == "call-1" and stored[4].content == "18°C"


async def test_every_message_type_round_trips_through_the_async_methods(client: MemoryClient, session_id):
    history = MemorydChatMessageHistory(session_id, client)
    await history.aadd_messages(EVERY_TYPE)
    assert await history.aget_messages() == EVERY_TYPE
    await history.aclear()
    assert await history.aget_messages() == []


def test_messages_other_clients_wrote_map_to_the_closest_type(sync_client, session_id):
    sync_client.save_messages(session_id, [
        message("system", "be brief"),
        message("user", "hi"),
        message("assistant", "", tool_calls=[tool_call("c1", "lookup", '{"q": "x"}')], reasoning_content="why"),
        message("tool", "found", tool_call_id="c1"),
        message("notice", "joined"),
    ])  # fmt: skip
    got = MemorydChatMessageHistory(session_id, sync_client).messages
    assert [type(m) for m in got] == [SystemMessage, HumanMessage, AIMessage, ToolMessage, ChatMessage]
    assert got[2].tool_calls == [{"name": "lookup", "args": {"q": "x"}, "id": "c1", "type": "tool_call"}]
    assert got[2].additional_kwargs == {"reasoning_content": "why"}
    assert got[3].tool_call_id == "c1" and got[4].role == "notice" and got[1].id


def test_limit_reads_the_newest_and_clear_empties(sync_client, session_id):
    history = MemorydChatMessageHistory(session_id, sync_client, limit=2)
    history.add_messages([HumanMessage(str(i)) for i in range(5)])
    assert [m.content for m in history.messages] == ["3", "4"]
    history.clear()
    assert history.messages == []


def test_attributes_are_saved_with_the_messages(sync_client, session_id):
    owner = session_attributes(user_id=f"user-{session_id}", labels={"app": "langchain"})
    MemorydChatMessageHistory(session_id, sync_client, attributes=owner).add_user_message("hello")
    assert [s.session_id for s in sync_client.iter_sessions(user_id=owner.user_id)] == [session_id]


def test_a_value_that_is_not_json_is_refused_before_anything_is_stored(sync_client, session_id):
    history = MemorydChatMessageHistory(session_id, sync_client)
    with pytest.raises(ValueError, match="not JSON-serializable"):
        history.add_messages([HumanMessage("ok"), HumanMessage("bad", additional_kwargs={"raw": b"\x00"})])
    assert history.messages == []


class Prompts(BaseCallbackHandler):
    """Records the messages each chat model call was given."""

    def __init__(self) -> None:
        self.seen: list[list[str]] = []

    def on_chat_model_start(self, serialized, messages, **kwargs) -> None:
        self.seen.append([f"{m.type}:{m.content}" for m in messages[0]])


def conversation(histories: dict, make) -> tuple[RunnableWithMessageHistory, Prompts]:
    prompt = ChatPromptTemplate.from_messages(
        [("system", "You are terse."), MessagesPlaceholder("history"), ("human", "{question}")]
    )
    model = FakeMessagesListChatModel(
        responses=[
            AIMessage("Paris.", response_metadata={"model_name": "fake"}, id="r1"),
            AIMessage("About 2.1 million.", usage_metadata={"input_tokens": 9, "output_tokens": 3, "total_tokens": 12}),
        ]
    )
    prompts = Prompts()
    chain = RunnableWithMessageHistory(
        prompt | model.with_config(callbacks=[prompts]),
        lambda session_id: histories.setdefault(session_id, make(session_id)),
        input_messages_key="question",
        history_messages_key="history",
    )
    return chain, prompts


def test_runnable_with_message_history_carries_the_conversation(sync_client, session_id):
    chain, prompts = conversation({}, lambda s: MemorydChatMessageHistory(s, sync_client))
    config = {"configurable": {"session_id": session_id}}
    assert chain.invoke({"question": "Capital of France?"}, config=config).content == "Paris."
    assert chain.invoke({"question": "Population?"}, config=config).content == "About 2.1 million."
    assert prompts.seen[1] == [
        "system:You are terse.", "human:Capital of France?", "ai:Paris.", "human:Population?"
    ]
    stored = MemorydChatMessageHistory(session_id, sync_client).messages
    assert [m.content for m in stored] == ["Capital of France?", "Paris.", "Population?", "About 2.1 million."]
    assert stored[1].id == "r1" and stored[3].usage_metadata["total_tokens"] == 12


async def test_runnable_with_message_history_async(client: MemoryClient, session_id):
    chain, prompts = conversation({}, lambda s: MemorydChatMessageHistory(s, client))
    config = {"configurable": {"session_id": session_id}}
    await chain.ainvoke({"question": "Capital of France?"}, config=config)
    await chain.ainvoke({"question": "Population?"}, config=config)
    assert prompts.seen[1][1:3] == ["human:Capital of France?", "ai:Paris."]
    assert len(await MemorydChatMessageHistory(session_id, client).aget_messages()) == 4
