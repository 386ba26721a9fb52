"""memoryd_client.langgraph_checkpoint.MemorydSaver against a live memoryd.

Each graph runs twice, on LangGraph's InMemorySaver and on MemorydSaver, and what LangGraph
reads back through the checkpointer (state, history, pending tasks and interrupts) must be
the same: multi-turn threads, interrupts resumed with Command, Send fan-outs (pending sends),
subgraphs (checkpoint namespaces), list with filter/before/limit, delete_thread, the async
methods on a MemoryClient.
"""

from __future__ import annotations

import asyncio
import operator
import uuid
from collections.abc import Iterator
from typing import Annotated, Any, TypedDict

import pytest
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, StateGraph
from langgraph.types import Command, Send, interrupt

from memoryd_client import MemoryClient, SyncMemoryClient
from memoryd_client.langgraph_checkpoint import MemorydSaver
from tests.processes import MemorydServer


@pytest.fixture
def sync_client(memoryd: MemorydServer) -> Iterator[SyncMemoryClient]:
    with SyncMemoryClient(memoryd.target) as client:
        yield client


@pytest.fixture
def saver(sync_client: SyncMemoryClient) -> MemorydSaver:
    return MemorydSaver(sync_client, root=f"cp-{uuid.uuid4().hex[:10]}.")


def thread(name: str = "") -> dict[str, Any]:
    return {"configurable": {"thread_id": name or f"t-{uuid.uuid4().hex[:8]}"}}


class Chat(TypedDict):
    messages: Annotated[list[str], operator.add]


def chat_graph(checkpointer: BaseCheckpointSaver) -> Any:
    builder = StateGraph(Chat)
    builder.add_node("reply", lambda state: {"messages": [f"echo {state['messages'][-1]}"]})
    builder.add_edge(START, "reply")
    builder.add_edge("reply", END)
    return builder.compile(checkpointer=checkpointer)


def history(graph: Any, config: dict[str, Any]) -> list[tuple[Any, ...]]:
    """What LangGraph reads back of a thread, newest first, without ids and times."""
    return [
        (
            s.values,
            s.next,
            s.metadata.get("step"),
            s.metadata.get("source"),
            [(t.name, [i.value for i in t.interrupts]) for t in s.tasks],  # interrupt ids are random
        )
        for s in graph.get_state_history(config)
    ]


def test_a_thread_keeps_its_conversation_as_in_memory(saver: MemorydSaver) -> None:
    ours, theirs = chat_graph(saver), chat_graph(InMemorySaver())
    for graph in (ours, theirs):
        config = thread("same-name")
        graph.invoke({"messages": ["hi"]}, config)
        graph.invoke({"messages": ["how are you"]}, config)
    config = thread("same-name")
    assert ours.get_state(config).values == {"messages": ["hi", "echo hi", "how are you", "echo how are you"]}
    assert history(ours, config) == history(theirs, config)
    assert chat_graph(saver).get_state(thread("other")).values == {}  # threads are apart


def test_list_filters_before_and_limit(saver: MemorydSaver) -> None:
    graph = chat_graph(saver)
    config = thread()
    graph.invoke({"messages": ["one"]}, config)
    graph.invoke({"messages": ["two"]}, config)
    listed = list(saver.list(config))
    ids = [t.checkpoint["id"] for t in listed]
    assert len(listed) == 6 and ids == sorted(ids, reverse=True)
    assert [t.metadata["source"] for t in saver.list(config, filter={"source": "input"})] == ["input", "input"]
    assert len(list(saver.list(config, limit=2))) == 2
    before = list(saver.list(config, before=listed[1].config))
    assert [t.checkpoint["id"] for t in before] == [t.checkpoint["id"] for t in listed[2:]]
    assert listed[0].parent_config == listed[1].config
    assert saver.get_tuple(listed[3].config).checkpoint["id"] == listed[3].checkpoint["id"]
    assert {t.config["configurable"]["thread_id"] for t in saver.list(None)} == {config["configurable"]["thread_id"]}


class Approval(TypedDict):
    request: str
    answer: str


def approval_graph(checkpointer: BaseCheckpointSaver) -> Any:
    def ask(state: Approval) -> dict[str, str]:
        return {"answer": interrupt({"question": f"approve {state['request']}?"})}

    builder = StateGraph(Approval)
    builder.add_node("ask", ask)
    builder.add_edge(START, "ask")
    builder.add_edge("ask", END)
    return builder.compile(checkpointer=checkpointer)


def test_interrupts_wait_in_pending_writes_and_resume(saver: MemorydSaver) -> None:
    ours, theirs = approval_graph(saver), approval_graph(InMemorySaver())
    config = thread("approval")
    for graph in (ours, theirs):
        paused = graph.invoke({"request": "the refund"}, config)
        assert paused["__interrupt__"][0].value == {"question": "approve the refund?"}
    assert ours.get_state(config).next == ("ask",)
    assert history(ours, config) == history(theirs, config)
    pending = saver.get_tuple(config).pending_writes
    assert [channel for _, channel, _ in pending] == ["__interrupt__"]
    for graph in (ours, theirs):
        assert graph.invoke(Command(resume="yes"), config) == {"request": "the refund", "answer": "yes"}
    assert history(ours, config) == history(theirs, config)


class Fanout(TypedDict):
    topics: list[str]
    results: Annotated[list[str], operator.add]


def fanout_graph(checkpointer: BaseCheckpointSaver) -> Any:
    builder = StateGraph(Fanout)
    builder.add_node("plan", lambda state: {})
    builder.add_node("write", lambda state: {"results": [f"about {state['topic']}"]})
    builder.add_edge(START, "plan")
    builder.add_conditional_edges("plan", lambda state: [Send("write", {"topic": t}) for t in state["topics"]])
    builder.add_edge("write", END)
    return builder.compile(checkpointer=checkpointer, interrupt_before=["write"])


def test_pending_sends_survive_a_pause(saver: MemorydSaver) -> None:
    ours, theirs = fanout_graph(saver), fanout_graph(InMemorySaver())
    config = thread("fanout")
    for graph in (ours, theirs):
        graph.invoke({"topics": ["tea", "jazz", "chess"], "results": []}, config)
    state = ours.get_state(config)
    assert state.next == ("write", "write", "write")  # three sends wait in the checkpoint
    assert history(ours, config) == history(theirs, config)
    for graph in (ours, theirs):
        done = graph.invoke(None, config)
        assert sorted(done["results"]) == ["about chess", "about jazz", "about tea"]
    assert history(ours, config) == history(theirs, config)


def nested_graph(checkpointer: BaseCheckpointSaver) -> Any:
    inner = StateGraph(Chat)
    inner.add_node("inner", lambda state: {"messages": ["from the subgraph"]})
    inner.add_edge(START, "inner")
    builder = StateGraph(Chat)
    builder.add_node("sub", inner.compile(checkpointer=True))  # its own checkpoint namespace
    builder.add_edge(START, "sub")
    return builder.compile(checkpointer=checkpointer)


def test_subgraphs_keep_their_own_namespace(saver: MemorydSaver) -> None:
    ours, theirs = nested_graph(saver), nested_graph(InMemorySaver())
    config = thread("nested")
    for graph in (ours, theirs):
        graph.invoke({"messages": ["start"]}, config)
    assert ours.get_state(config).values == theirs.get_state(config).values
    assert ours.get_state(config).values["messages"][-1] == "from the subgraph"
    listed = saver.list({"configurable": {"thread_id": "nested"}})
    assert {t.config["configurable"]["checkpoint_ns"] for t in listed} == {"", "sub"}
    assert history(ours, config) == history(theirs, config)


def test_delete_thread_removes_every_record(sync_client: SyncMemoryClient, saver: MemorydSaver) -> None:
    graph = approval_graph(saver)
    kept, gone = thread(), thread("a.thread/with:odd|chars" + "x" * 80)  # escaped, then hashed
    graph.invoke({"request": "a"}, kept)
    graph.invoke({"request": "b"}, gone)
    saver.delete_thread(gone["configurable"]["thread_id"])
    assert saver.get_tuple(gone) is None and list(saver.list(gone)) == []
    assert saver.get_tuple(kept) is not None
    left = list(sync_client.iter_namespaces(saver.root))
    assert left and all(saver._thread(kept["configurable"]["thread_id"]) in n for n in left)


async def test_async_methods_on_a_memory_client(client: MemoryClient, saver: MemorydSaver) -> None:
    async_saver = MemorydSaver(client, root=saver.root)
    graph = chat_graph(async_saver)
    config = thread()
    await graph.ainvoke({"messages": ["hi"]}, config)
    await graph.ainvoke({"messages": ["again"]}, config)
    assert (await graph.aget_state(config)).values["messages"][-1] == "echo again"
    assert len([t async for t in async_saver.alist(config, limit=3)]) == 3
    assert chat_graph(saver).get_state(config).values == (await graph.aget_state(config)).values  # one store
    await async_saver.adelete_thread(config["configurable"]["thread_id"])
    assert await async_saver.aget_tuple(config) is None
    with pytest.raises(asyncio.InvalidStateError):  # a sync call in the loop's thread
        async_saver.get_tuple(config)
    await graph.ainvoke({"messages": ["back"]}, config)
    assert (await asyncio.to_thread(async_saver.get_tuple, config)).checkpoint["id"]  # from another thread


def test_copy_thread_and_delete_for_runs(saver: MemorydSaver) -> None:
    graph = chat_graph(saver)
    source, first_run, second_run = thread(), str(uuid.uuid4()), str(uuid.uuid4())
    for text, run in (("one", first_run), ("two", second_run)):  # configurable keys become metadata
        graph.invoke({"messages": [text]}, {"configurable": {**source["configurable"], "run_id": run}})
    copy = thread()
    saver.copy_thread(source["configurable"]["thread_id"], copy["configurable"]["thread_id"])
    assert history(graph, copy) == history(graph, source)  # the whole chain, values and all
    assert graph.get_state(copy).values == {"messages": ["one", "echo one", "two", "echo two"]}

    saver.delete_for_runs([second_run])
    left = list(saver.list(source))
    assert left and {t.metadata["run_id"] for t in left} == {first_run}
    assert graph.get_state(source).values == {"messages": ["one", "echo one"]}  # the newest left
    # Run ids are global: the copy's checkpoints of that run went too, the rest stays.
    assert {t.metadata["run_id"] for t in saver.list(copy)} == {first_run}
