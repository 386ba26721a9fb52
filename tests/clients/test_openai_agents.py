"""memoryd_client.openai_agents against a live memoryd: the SDK's Runner drives a multi-turn
conversation with a tool call through MemorydSession (the model is this file's own
implementation of the SDK's Model interface, answering from a script: no network), and the
Session contract the SDK documents holds (order, limit, pop returns the newest, clear).
"""

from __future__ import annotations

import asyncio
import json
import threading

import pytest
from agents import Agent, Model, ModelResponse, RunConfig, Runner, Usage, function_tool
from agents.memory import Session, SessionSettings
from openai.types.responses import ResponseFunctionToolCall, ResponseOutputMessage, ResponseOutputText

from memoryd_client import MemoryClient, message, session_attributes, tool_call
from memoryd_client.openai_agents import MemorydSession
from tests.processes import MemorydServer

NO_TRACING = RunConfig(tracing_disabled=True)


def said(text: str, item_id: str) -> ResponseOutputMessage:
    return ResponseOutputMessage(
        id=item_id, type="message", role="assistant", status="completed",
        content=[ResponseOutputText(type="output_text", text=text, annotations=[], logprobs=[])],
    )  # fmt: skip


class Scripted(Model):
    """The SDK's Model interface, answering each call with the next scripted output and
    recording the input items it was given."""

    def __init__(self, outputs: list[list]) -> None:
        self.outputs = outputs
        self.inputs: list[list] = []

    async def get_response(self, system_instructions, input, model_settings, tools, output_schema, handoffs,
                           tracing, *, previous_response_id, conversation_id, prompt) -> ModelResponse:  # fmt: skip
        self.inputs.append(json.loads(json.dumps(input if isinstance(input, list) else [input], default=str)))
        return ModelResponse(output=self.outputs.pop(0), usage=Usage(requests=1), response_id=None)

    def stream_response(self, *args, **kwargs):
        raise NotImplementedError("the tests run Runner.run, not run_streamed")


@function_tool
def weather(city: str) -> str:
    """The weather in a city."""
    return f"18°C in {city}"


async def test_it_implements_the_sdks_session_protocol(client: MemoryClient):
    assert isinstance(MemorydSession("s", client), Session)


async def test_runner_keeps_a_multi_turn_conversation_with_a_tool_call(client: MemoryClient, session_id: str):
    model = Scripted([
        [ResponseFunctionToolCall(type="function_call", id="fc_1", call_id="call_1", name="weather",
                                  arguments='{"city": "Paris"}', status="completed")],
        [said("It is 18°C in Paris.", "msg_1")],
        [said("Bring a light jacket.", "msg_2")],
    ])  # fmt: skip
    agent = Agent(name="Assistant", instructions="Be brief.", model=model, tools=[weather])
    session = MemorydSession(session_id, client, attributes=session_attributes(user_id="ann", agent_id="weather-bot"))

    first = await Runner.run(agent, "Weather in Paris?", session=session, run_config=NO_TRACING)
    assert first.final_output == "It is 18°C in Paris."
    second = await Runner.run(agent, "What should I wear?", session=session, run_config=NO_TRACING)
    assert second.final_output == "Bring a light jacket."

    # The third model call saw the whole first turn, read back from memoryd.
    kinds = [(i.get("type", "message"), i.get("role")) for i in model.inputs[2]]
    assert kinds == [
        ("message", "user"), ("function_call", None), ("function_call_output", None),
        ("message", "assistant"), ("message", "user"),
    ]  # fmt: skip
    items = await session.get_items()
    assert len(items) == 6 and items[-1]["content"][0]["text"] == "Bring a light jacket."
    assert items[1] == {**items[1], "call_id": "call_1", "name": "weather", "arguments": '{"city": "Paris"}'}

    # What other memoryd clients see: roles, text, the call as a tool call, its output as a tool message.
    stored = await client.get_history(session_id)
    assert [m.role for m in stored] == ["user", "assistant", "tool", "assistant", "user", "assistant"]
    assert [(c.id, c.name) for c in stored[1].tool_calls] == [("call_1", "weather")]
    assert (stored[2].tool_call_id, stored[2].content) == ("call_1", "18°C in Paris")
    assert stored[3].content == "It is 18°C in Paris."
    owned = [s.session_id async for s in client.iter_sessions(user_id="ann", agent_id="weather-bot")]
    assert session_id in owned


ITEMS = [
    {"role": "user", "content": "hi"},
    {"type": "message", "role": "assistant", "id": "msg_1", "status": "completed",
     "content": [{"type": "output_text", "text": "hello", "annotations": [], "logprobs": []}]},
    {"type": "reasoning", "id": "rs_1", "summary": [{"type": "summary_text", "text": "thinking"}], "encrypted_content": "abc"},
    {"type": "function_call", "call_id": "c1", "name": "f", "arguments": '{"x": 1}', "id": "fc_1", "status": "completed"},
    {"type": "function_call_output", "call_id": "c1", "output": [{"type": "input_text", "text": "done"}]},
    {"role": "developer", "content": [{"type": "input_text", "text": "rules"}, {"type": "input_image", "image_url": "data:,", "detail": "auto"}]},
    {"role": "user", "content": "ünïcödé ✓ and a big int", "extra": {"n": 2**62, "f": 0.5}},
]


async def test_items_round_trip_exactly_in_order(client: MemoryClient, session_id: str):
    session = MemorydSession(session_id, client)
    await session.add_items(ITEMS[:3])
    await session.add_items(ITEMS[3:])
    await session.add_items([])
    assert await session.get_items() == ITEMS
    assert (await client.get_history(session_id))[2].reasoning_content == "thinking"


async def test_limit_semantics(client: MemoryClient, session_id: str):
    session = MemorydSession(session_id, client)
    await session.add_items([{"role": "user", "content": str(i)} for i in range(5)])
    assert [i["content"] for i in await session.get_items(limit=2)] == ["3", "4"]  # the newest, oldest first
    assert [i["content"] for i in await session.get_items(limit=9)] == ["0", "1", "2", "3", "4"]
    assert await session.get_items(limit=0) == []
    assert len(await session.get_items(limit=-1)) == 5  # as the SDK's SQLiteSession: all
    limited = MemorydSession(session_id, client, session_settings=SessionSettings(limit=3))
    assert [i["content"] for i in await limited.get_items()] == ["2", "3", "4"]
    assert len(await limited.get_items(limit=5)) == 5  # an explicit limit wins


async def test_session_settings_may_be_a_dict(client: MemoryClient, session_id: str):
    session = MemorydSession(session_id, client)
    await session.add_items([{"role": "user", "content": str(i)} for i in range(4)])
    limited = MemorydSession(session_id, client, session_settings={"limit": 2})
    assert isinstance(limited.session_settings, SessionSettings) and limited.session_settings.limit == 2
    assert [i["content"] for i in await limited.get_items()] == ["2", "3"]
    assert MemorydSession(session_id, client).session_settings == SessionSettings()


def test_a_session_works_from_any_thread_and_loop(memoryd: MemorydServer, session_id: str):
    """As the SDK's SQLiteSession: a client made where no loop runs, then used from
    `asyncio.run` in fresh threads, from `Runner.run_sync`, and from one loop after another."""
    client = MemoryClient(memoryd.target)  # no running loop here
    session = MemorydSession(session_id, client)
    try:
        asyncio.run(session.add_items([{"role": "user", "content": "from the main thread"}]))

        def in_a_thread(i: int) -> None:
            asyncio.run(session.add_items([{"role": "user", "content": f"thread {i}"}]))

        threads = [threading.Thread(target=in_a_thread, args=(i,)) for i in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        contents = [i["content"] for i in asyncio.run(session.get_items())]
        assert contents[0] == "from the main thread" and sorted(contents[1:]) == [f"thread {i}" for i in range(4)]

        model = Scripted([[said("Hello from run_sync.", "msg_9")]])
        agent = Agent(name="Assistant", instructions="Be brief.", model=model)
        result = Runner.run_sync(agent, "hi", session=session, run_config=NO_TRACING)
        assert result.final_output == "Hello from run_sync."
        assert len(model.inputs[0]) == 6  # the five items read back, then the new input
        assert asyncio.run(session.pop_item())["content"][0]["text"] == "Hello from run_sync."

        result = {}
        worker = threading.Thread(target=lambda: result.update(items=asyncio.run(session.get_items(limit=1))))
        worker.start()
        worker.join()
        assert result["items"] == [{"role": "user", "content": "hi"}]
    finally:
        asyncio.run(client.close())


async def test_pop_returns_the_newest_and_none_when_empty(client: MemoryClient, session_id: str):
    session = MemorydSession(session_id, client)
    await session.add_items(ITEMS[3:5])
    assert await session.pop_item() == ITEMS[4]
    assert await session.pop_item() == ITEMS[3]
    assert await session.pop_item() is None
    assert await session.get_items() == []


async def test_pops_racing_adds_lose_nothing(client: MemoryClient, session_id: str):
    session = MemorydSession(session_id, client)
    added = [{"role": "user", "content": f"m{i}"} for i in range(30)]

    async def add() -> None:
        for item in added:
            await session.add_items([item])

    async def pop() -> list:
        popped = []
        for _ in range(10):
            item = await session.pop_item()
            if item is not None:
                popped.append(item)
            await asyncio.sleep(0)
        return popped

    _, popped_a, popped_b = await asyncio.gather(add(), pop(), pop())
    remaining = await session.get_items()
    assert sorted(i["content"] for i in popped_a + popped_b + remaining) == sorted(i["content"] for i in added)


async def test_clear_session_removes_every_item(client: MemoryClient, session_id: str):
    session = MemorydSession(session_id, client)
    await session.add_items(ITEMS)
    await session.clear_session()
    assert await session.get_items() == [] and await session.pop_item() is None


async def test_messages_other_clients_wrote_read_as_items(client: MemoryClient, session_id: str):
    await client.save_messages(session_id, [
        message("user", "hi"),
        message("assistant", "", tool_calls=[tool_call("c1", "lookup", "{}")]),
        message("tool", "found", tool_call_id="c1"),
        message("notice", "joined"),
    ])  # fmt: skip
    assert await MemorydSession(session_id, client).get_items() == [
        {"role": "user", "content": "hi"},
        {"type": "function_call", "call_id": "c1", "name": "lookup", "arguments": "{}"},
        {"type": "function_call_output", "call_id": "c1", "output": "found"},
        {"role": "user", "content": "joined"},
    ]


async def test_an_item_that_is_not_json_is_refused(client: MemoryClient, session_id: str):
    with pytest.raises(ValueError, match="not JSON-serializable"):
        await MemorydSession(session_id, client).add_items([{"role": "user", "content": "x", "blob": b"\x00"}])


async def test_histories_longer_than_the_servers_page_limit_are_read_whole(tmp_path):
    from tests.processes import MemorydServer

    server = MemorydServer(tmp_path, env={"MEMORYD_MAX_PAGE_SIZE": "3"})
    server.start()
    try:
        async with MemoryClient(server.target) as client:
            session = MemorydSession("long", client)
            await session.add_items([{"role": "user", "content": str(i)} for i in range(8)])
            assert [i["content"] for i in await session.get_items()] == [str(i) for i in range(8)]
            assert [i["content"] for i in await session.get_items(limit=5)] == ["3", "4", "5", "6", "7"]
            assert [i["content"] for i in await session.get_items(limit=2)] == ["6", "7"]
    finally:
        server.stop()
