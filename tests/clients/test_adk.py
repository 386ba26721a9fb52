"""memoryd_client.adk against a live memoryd.

First ADK's own session-service tests (google/adk-python tests/unittests/sessions/
test_session_service.py, 7c670f6, the cases of the BaseSessionService contract), run
as ADK runs them: against InMemorySessionService, ADK's reference, and against
MemorydSessionService; their bodies unchanged but for the fixture (each test gets app
names of its own on the shared server). ADK ships no test utilities in its wheel, so the
fake model below is a BaseLlm of the tests' own.

Then ADK's Runner drives an LlmAgent with that scripted model through turns whose tool
writes session, "user:", "app:" and "temp:" state, once on InMemorySessionService and once
on memoryd: the stored sessions are equal (events, order, state), and memoryd's keeps the
events exactly. The memory service is driven through ADK's load_memory tool.
"""

from __future__ import annotations

import asyncio
import enum
import re
import threading
import uuid
from collections.abc import AsyncGenerator
from typing import Any

import pytest
from google.adk.agents import LlmAgent
from google.adk.errors import StaleSessionError
from google.adk.errors.already_exists_error import AlreadyExistsError
from google.adk.errors.session_not_found_error import SessionNotFoundError
from google.adk.events import Event, EventActions
from google.adk.memory import InMemoryMemoryService
from google.adk.models.base_llm import BaseLlm
from google.adk.models.llm_request import LlmRequest
from google.adk.models.llm_response import LlmResponse
from google.adk.runners import Runner
from google.adk.sessions import InMemorySessionService
from google.adk.sessions.base_session_service import BaseSessionService, GetSessionConfig
from google.adk.tools import ToolContext, load_memory
from google.genai import types

from memoryd_client import MemoryClient
from memoryd_client.adk import MemorydMemoryService, MemorydSessionService
from tests.clients.live import eventually
from tests.processes import MemorydServer


class SessionServiceType(enum.Enum):
    IN_MEMORY = "IN_MEMORY"
    MEMORYD = "MEMORYD"


SERVICES = [SessionServiceType.IN_MEMORY, SessionServiceType.MEMORYD]


@pytest.fixture
def get_session_service(client: MemoryClient):
    """ADK's factory of the service under test; memoryd's has a prefix of the test's own."""

    def make(service_type: SessionServiceType = SessionServiceType.IN_MEMORY) -> BaseSessionService:
        if service_type == SessionServiceType.MEMORYD:
            return MemorydSessionService(client, prefix=f"adk-{uuid.uuid4().hex[:10]}")
        return InMemorySessionService()

    return make


# -- ADK's own session-service tests ------------------------------------------------------
@pytest.mark.parametrize("service_type", SERVICES)
async def test_get_empty_session(get_session_service, service_type):
    session_service = get_session_service(service_type)
    assert not await session_service.get_session(app_name="my_app", user_id="test_user", session_id="123")


@pytest.mark.parametrize("service_type", SERVICES)
async def test_create_get_session(get_session_service, service_type):
    session_service = get_session_service(service_type)
    app_name = "my_app"
    user_id = "test_user"
    state = {"key": "value"}

    session = await session_service.create_session(app_name=app_name, user_id=user_id, state=state)
    assert session.app_name == app_name
    assert session.user_id == user_id
    assert session.id
    assert session.state == state
    assert await session_service.get_session(app_name=app_name, user_id=user_id, session_id=session.id) == session

    session_id = session.id
    await session_service.delete_session(app_name=app_name, user_id=user_id, session_id=session_id)

    assert await session_service.get_session(app_name=app_name, user_id=user_id, session_id=session.id) != session


@pytest.mark.parametrize("service_type", SERVICES)
async def test_create_and_list_sessions(get_session_service, service_type):
    session_service = get_session_service(service_type)
    app_name = "my_app"
    user_id = "test_user"

    session_ids = ["session" + str(i) for i in range(5)]
    for session_id in session_ids:
        await session_service.create_session(app_name=app_name, user_id=user_id, session_id=session_id)

    list_sessions_response = await session_service.list_sessions(app_name=app_name, user_id=user_id)
    sessions = list_sessions_response.sessions
    assert len(sessions) == len(session_ids)  # (added: the loop below passes on an empty list)
    for i in range(len(sessions)):
        assert sessions[i].id == session_ids[i]


@pytest.mark.parametrize("service_type", SERVICES)
async def test_session_state(get_session_service, service_type):
    session_service = get_session_service(service_type)
    app_name = "my_app"
    user_id_1 = "user1"
    user_id_2 = "user2"
    session_id_11 = "session11"
    session_id_12 = "session12"
    session_id_2 = "session2"
    state_11 = {"key11": "value11"}
    state_12 = {"key12": "value12"}

    session_11 = await session_service.create_session(
        app_name=app_name, user_id=user_id_1, state=state_11, session_id=session_id_11
    )
    await session_service.create_session(app_name=app_name, user_id=user_id_1, state=state_12, session_id=session_id_12)
    await session_service.create_session(app_name=app_name, user_id=user_id_2, session_id=session_id_2)

    assert session_11.state.get("key11") == "value11"

    event = Event(
        invocation_id="invocation",
        author="user",
        content=types.Content(role="user", parts=[types.Part(text="text")]),
        actions=EventActions(
            state_delta={"app:key": "value", "user:key1": "value1", "temp:key": "temp", "key11": "value11_new"}
        ),
    )
    await session_service.append_event(session=session_11, event=event)

    # User and app state is stored, temp state is filtered.
    assert session_11.state.get("app:key") == "value"
    assert session_11.state.get("key11") == "value11_new"
    assert session_11.state.get("user:key1") == "value1"
    # (ADK's `assert not session_11.state.get("temp:key")` here is gone: ADK 2.x keeps temp:
    # keys in the in-memory session for the rest of the invocation; they are never stored.)

    session_12 = await session_service.get_session(app_name=app_name, user_id=user_id_1, session_id=session_id_12)
    assert session_12.state.get("key12") == "value12"
    assert not session_12.state.get("temp:key")

    session_2 = await session_service.get_session(app_name=app_name, user_id=user_id_2, session_id=session_id_2)
    assert session_2.state.get("app:key") == "value"
    assert not session_2.state.get("user:key1")

    session_11 = await session_service.get_session(app_name=app_name, user_id=user_id_1, session_id=session_id_11)
    assert session_11.state.get("key11") == "value11_new"
    assert session_11.state.get("user:key1") == "value1"
    assert not session_11.state.get("temp:key")


@pytest.mark.parametrize("service_type", SERVICES)
async def test_create_new_session_will_merge_states(get_session_service, service_type):
    session_service = get_session_service(service_type)
    app_name = "my_app"
    user_id = "user"
    session_id_1 = "session1"
    session_id_2 = "session2"
    state_1 = {"key1": "value1"}

    session_1 = await session_service.create_session(app_name=app_name, user_id=user_id, state=state_1, session_id=session_id_1)

    event = Event(
        invocation_id="invocation",
        author="user",
        content=types.Content(role="user", parts=[types.Part(text="text")]),
        actions=EventActions(state_delta={"app:key": "value", "user:key1": "value1", "temp:key": "temp"}),
    )
    await session_service.append_event(session=session_1, event=event)

    assert session_1.state.get("app:key") == "value"
    assert session_1.state.get("key1") == "value1"
    assert session_1.state.get("user:key1") == "value1"

    session_2 = await session_service.create_session(app_name=app_name, user_id=user_id, state={}, session_id=session_id_2)
    assert session_2.state.get("app:key") == "value"
    assert session_2.state.get("user:key1") == "value1"
    assert not session_2.state.get("key1")
    assert not session_2.state.get("temp:key")


@pytest.mark.parametrize("service_type", SERVICES)
async def test_append_event_bytes(get_session_service, service_type):
    session_service = get_session_service(service_type)
    app_name = "my_app"
    user_id = "user"

    session = await session_service.create_session(app_name=app_name, user_id=user_id)

    test_content = types.Content(role="user", parts=[types.Part.from_bytes(data=b"test_image_data", mime_type="image/png")])
    test_grounding_metadata = types.GroundingMetadata(search_entry_point=types.SearchEntryPoint(sdk_blob=b"test_sdk_blob"))
    event = Event(invocation_id="invocation", author="user", content=test_content, grounding_metadata=test_grounding_metadata)
    await session_service.append_event(session=session, event=event)

    assert session.events[0].content == test_content

    session = await session_service.get_session(app_name=app_name, user_id=user_id, session_id=session.id)
    events = session.events
    assert len(events) == 1
    assert events[0].content == test_content
    assert events[0].grounding_metadata == test_grounding_metadata


@pytest.mark.parametrize("service_type", SERVICES)
async def test_append_event_complete(get_session_service, service_type):
    session_service = get_session_service(service_type)
    app_name = "my_app"
    user_id = "user"

    session = await session_service.create_session(app_name=app_name, user_id=user_id)
    event = Event(
        invocation_id="invocation",
        author="user",
        content=types.Content(role="user", parts=[types.Part(text="test_text")]),
        turn_complete=True,
        partial=False,
        actions=EventActions(artifact_delta={"file": 0}, transfer_to_agent="agent", escalate=True),
        long_running_tool_ids={"tool1"},
        error_code="error_code",
        error_message="error_message",
        interrupted=True,
    )
    await session_service.append_event(session=session, event=event)

    assert await session_service.get_session(app_name=app_name, user_id=user_id, session_id=session.id) == session


@pytest.mark.parametrize("service_type", SERVICES)
async def test_get_session_with_config(get_session_service, service_type):
    session_service = get_session_service(service_type)
    app_name = "my_app"
    user_id = "user"

    num_test_events = 5
    session = await session_service.create_session(app_name=app_name, user_id=user_id)
    for i in range(1, num_test_events + 1):
        event = Event(author="user", timestamp=i)
        await session_service.append_event(session, event)

    session = await session_service.get_session(app_name=app_name, user_id=user_id, session_id=session.id)
    events = session.events
    assert len(events) == num_test_events

    num_recent_events = 3
    config = GetSessionConfig(num_recent_events=num_recent_events)
    session = await session_service.get_session(app_name=app_name, user_id=user_id, session_id=session.id, config=config)
    events = session.events
    assert len(events) == num_recent_events
    assert events[0].timestamp == num_test_events - num_recent_events + 1

    after_timestamp = 4.0
    config = GetSessionConfig(after_timestamp=after_timestamp)
    session = await session_service.get_session(app_name=app_name, user_id=user_id, session_id=session.id, config=config)
    events = session.events
    assert len(events) == num_test_events - after_timestamp + 1
    assert events[0].timestamp == after_timestamp

    way_after_timestamp = num_test_events * 10
    config = GetSessionConfig(after_timestamp=way_after_timestamp)
    session = await session_service.get_session(app_name=app_name, user_id=user_id, session_id=session.id, config=config)
    assert not session.events

    config = GetSessionConfig(after_timestamp=after_timestamp, num_recent_events=num_recent_events)
    session = await session_service.get_session(app_name=app_name, user_id=user_id, session_id=session.id, config=config)
    events = session.events
    assert len(events) == num_test_events - after_timestamp + 1

    config = GetSessionConfig(num_recent_events=0)
    session = await session_service.get_session(app_name=app_name, user_id=user_id, session_id=session.id, config=config)
    assert session.events == []


# -- the rest of the contract, both services -------------------------------------------
@pytest.mark.parametrize("service_type", SERVICES)
async def test_duplicate_ids_missing_and_stale_sessions(get_session_service, service_type):
    service = get_session_service(service_type)
    session = await service.create_session(app_name="app", user_id="u", session_id="s1")
    with pytest.raises(AlreadyExistsError):
        await service.create_session(app_name="app", user_id="u", session_id="s1")
    other = await service.create_session(app_name="app", user_id="other", session_id="s1")  # another user's s1
    assert other.id == "s1"
    stale = await service.get_session(app_name="app", user_id="u", session_id="s1")
    await service.append_event(session, Event(author="user", timestamp=session.last_update_time + 1))
    if service_type == SessionServiceType.MEMORYD:  # ADK's persistent services refuse a stale copy
        # in the words of both (DatabaseSessionService's and SqliteSessionService's, ADK 2.15)
        with pytest.raises(StaleSessionError, match="modified in storage since it was loaded") as refused:
            await service.append_event(stale, Event(author="user", timestamp=stale.last_update_time + 2))
        assert "Please check if it is a stale session." in str(refused.value)
    await service.delete_session(app_name="app", user_id="u", session_id="s1")
    with pytest.raises(SessionNotFoundError):
        await service.append_event(session, Event(author="user"))
    listed = await service.list_sessions(app_name="app")
    assert [(s.user_id, s.id, s.events) for s in listed.sessions] == [("other", "s1", [])]
    assert await service.get_user_state(app_name="app", user_id="other") == {}


# -- ADK's Runner with a scripted model ---------------------------------------------------
class ScriptedLlm(BaseLlm):
    """A model answering with scripted responses, one per call (no network)."""

    model: str = "scripted"
    responses: list[LlmResponse]
    requests: list[LlmRequest] = []

    async def generate_content_async(self, llm_request: LlmRequest, stream: bool = False) -> AsyncGenerator[LlmResponse, None]:
        self.requests.append(llm_request)
        yield self.responses.pop(0)


def _call(name: str, **args: Any) -> LlmResponse:
    return LlmResponse(content=types.Content(role="model", parts=[types.Part.from_function_call(name=name, args=args)]))


def _text(text: str) -> LlmResponse:
    return LlmResponse(content=types.Content(role="model", parts=[types.Part(text=text)]))


def remember_drink(drink: str, tool_context: ToolContext) -> dict[str, str]:
    """Remembers the user's favourite drink."""
    tool_context.state["user:drink"] = drink  # every session of this user
    tool_context.state["app:drinks_seen"] = tool_context.state.get("app:drinks_seen", 0) + 1  # every user
    tool_context.state["last_tool"] = "remember_drink"  # this session
    tool_context.state["temp:scratch"] = "never stored"
    return {"saved": drink}


async def _conversation(session_service: BaseSessionService, memory_service: Any, app_name: str) -> list[ScriptedLlm]:
    """Two sessions of one user: the first saves a drink through the tool, the second finds
    it in memory through ADK's load_memory tool."""
    first = ScriptedLlm(responses=[_call("remember_drink", drink="green tea"), _text("Noted: green tea.")])
    runner = Runner(
        app_name=app_name,
        agent=LlmAgent(name="barista", model=first, tools=[remember_drink], instruction="Be brief."),
        session_service=session_service,
        memory_service=memory_service,
    )
    await session_service.create_session(app_name=app_name, user_id="ann", session_id="first", state={"lang": "en"})
    message = types.Content(role="user", parts=[types.Part(text="I love green tea")])
    [e async for e in runner.run_async(user_id="ann", session_id="first", new_message=message)]
    session = await session_service.get_session(app_name=app_name, user_id="ann", session_id="first")
    await memory_service.add_session_to_memory(session)
    return [first]


def _comparable(event: Event) -> str:
    """An event without what differs between two runs (ids, times, function call ids)."""
    form = event.model_dump_json(exclude={"id", "timestamp", "invocation_id"}, exclude_none=True)
    return re.sub(r"adk-[0-9a-f-]{36}", "adk-<call id>", form)


async def test_runner_conversation_is_stored_as_adk_stores_it(client: MemoryClient):
    app_name = f"app-{uuid.uuid4().hex[:8]}"
    memoryd = MemorydSessionService(client)
    reference = InMemorySessionService()
    await _conversation(memoryd, InMemoryMemoryService(), app_name)
    await _conversation(reference, InMemoryMemoryService(), app_name)

    ours = await memoryd.get_session(app_name=app_name, user_id="ann", session_id="first")
    theirs = await reference.get_session(app_name=app_name, user_id="ann", session_id="first")
    assert ours.state == theirs.state == {
        "lang": "en", "last_tool": "remember_drink", "user:drink": "green tea", "app:drinks_seen": 1,
    }  # fmt: skip
    assert [_comparable(e) for e in ours.events] == [_comparable(e) for e in theirs.events]
    assert [e.author for e in ours.events] == ["user", "barista", "barista", "barista"]
    assert ours.last_update_time == ours.events[-1].timestamp
    assert await memoryd.get_user_state(app_name=app_name, user_id="ann") == {"drink": "green tea"}
    # What other memoryd clients see: roles, text, the tool call and its answer.
    stored = await client.get_history(memoryd.session_id(app_name, "ann", "first"))
    assert [m.role for m in stored] == ["user", "assistant", "tool", "assistant"]
    assert stored[0].content == "I love green tea" and stored[3].content == "Noted: green tea."
    assert stored[1].tool_calls[0].name == "remember_drink" and stored[2].tool_call_id == stored[1].tool_calls[0].id
    session = await client.get_session(memoryd.session_id(app_name, "ann", "first"))
    assert (session.attributes.user_id, session.attributes.agent_id) == ("ann", app_name)


async def test_memory_service_through_load_memory(client: MemoryClient):
    app_name = f"app-{uuid.uuid4().hex[:8]}"
    sessions, memory = MemorydSessionService(client), MemorydMemoryService(client)
    await _conversation(sessions, memory, app_name)

    async def recalled() -> list[str]:
        found = await memory.search_memory(app_name=app_name, user_id="ann", query="green tea")
        return [p.text for m in found.memories for p in m.content.parts if p.text]

    await eventually_async(lambda: recalled(), lambda texts: "I love green tea" in texts)
    found = await memory.search_memory(app_name=app_name, user_id="ann", query="green tea")
    first = next(m for m in found.memories if m.author == "user")
    original = (await sessions.get_session(app_name=app_name, user_id="ann", session_id="first")).events[0]
    assert first.id == original.id and first.content == original.content
    assert (await memory.search_memory(app_name=app_name, user_id="bob", query="green tea")).memories == []

    second = ScriptedLlm(responses=[_call("load_memory", query="green tea"), _text("You like green tea.")])
    runner = Runner(
        app_name=app_name,
        agent=LlmAgent(name="barista", model=second, tools=[load_memory]),
        session_service=sessions,
        memory_service=memory,
    )
    await sessions.create_session(app_name=app_name, user_id="ann", session_id="second")
    message = types.Content(role="user", parts=[types.Part(text="What do I like?")])
    events = [e async for e in runner.run_async(user_id="ann", session_id="second", new_message=message)]
    answer = next(p.function_response for e in events for p in e.content.parts if p.function_response)
    assert "I love green tea" in str(answer.response)
    assert events[-1].content.parts[0].text == "You like green tea."
    assert (await sessions.get_session(app_name=app_name, user_id="ann", session_id="second")).state == {
        "user:drink": "green tea", "app:drinks_seen": 1,
    }  # fmt: skip


async def test_added_events_are_added_once(client: MemoryClient):
    app_name = f"app-{uuid.uuid4().hex[:8]}"
    memory = MemorydMemoryService(client)
    event = Event(author="user", content=types.Content(role="user", parts=[types.Part(text="the kiwi harvest")]))
    for _ in range(2):
        await memory.add_events_to_memory(app_name=app_name, user_id="ann", events=[event], session_id="s")

    async def found() -> list[str]:
        return [m.id for m in (await memory.search_memory(app_name=app_name, user_id="ann", query="kiwi")).memories]

    await eventually_async(found, lambda ids: ids == [event.id])


async def eventually_async(read, predicate, timeout: float = 20.0) -> None:
    """Waits until predicate(await read()) holds (recall indexes in the background)."""
    last: list[Any] = [None]

    async def check() -> None:
        last[0] = await read()

    deadline = asyncio.get_running_loop().time() + timeout
    while True:
        await check()
        if predicate(last[0]):
            return
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError(f"condition not reached; last: {last[0]!r}")
        await asyncio.sleep(0.1)


def test_session_service_from_threads_and_loops_of_its_own(memoryd: MemorydServer):
    """A service on a MemoryClient made where no loop runs, used from asyncio.run in this thread
    and in fresh threads (each loop gets its own channel), as ADK's own services allow."""
    client = MemoryClient(memoryd.target)
    service = MemorydSessionService(client, prefix=f"adk-{uuid.uuid4().hex[:10]}")
    try:
        created = asyncio.run(service.create_session(app_name="app", user_id="ann", state={"n": 1}))
        found: dict[str, Any] = {}

        def in_a_thread() -> None:
            found["session"] = asyncio.run(service.get_session(app_name="app", user_id="ann", session_id=created.id))

        worker = threading.Thread(target=in_a_thread)
        worker.start()
        worker.join()
        assert found["session"].id == created.id and found["session"].state == {"n": 1}
        listed = asyncio.run(service.list_sessions(app_name="app", user_id="ann"))
        assert [s.id for s in listed.sessions] == [created.id]
    finally:
        asyncio.run(client.close())
