"""Formed memory where agents read it: ADK's memory service (MemorydMemoryService with
formed_facts) returns the user's formed facts next to the recalled events, from a real server
with --llm-url at the scripted model (tests/formation/script.py)."""

from __future__ import annotations

from google.adk.events import Event
from google.adk.sessions import InMemorySessionService
from google.genai import types

from memoryd.app import start
from memoryd.config import Config
from memoryd_client import MemoryClient, message
from memoryd_client.adk import MemorydMemoryService
from tests.formation.script import Model
from tests.llm_server import ScriptedLLM


async def _session(sessions: InMemorySessionService, user: str, *texts: str):
    session = await sessions.create_session(app_name="app", user_id=user)
    for text in texts:
        event = Event(author="user", content=types.Content(role="user", parts=[types.Part(text=text)]))
        await sessions.append_event(session, event)
    return await sessions.get_session(app_name="app", user_id=user, session_id=session.id)


async def test_adk_memory_search_returns_the_users_formed_facts(tmp_path):
    with ScriptedLLM(Model()) as llm:
        config = Config(
            listen="127.0.0.1:0", http_listen="off", data_dir=tmp_path, llm_url=llm.url, llm_model=llm.model
        )
        app = await start(config)  # recall on (the default): ADK's search is recall
        try:
            async with MemoryClient(f"127.0.0.1:{app.port}") as client:
                sessions = InMemorySessionService()
                memory = MemorydMemoryService(client, formed_facts=True)
                plain = MemorydMemoryService(client, prefix="adk-plain")
                alice = await _session(sessions, "alice", "my city is Paris", "hello there")
                bob = await _session(sessions, "bob", "my city is Oslo")
                await memory.add_session_to_memory(alice)
                await memory.add_session_to_memory(bob)
                await plain.add_session_to_memory(alice)
                wrote = await client.save_message("marker", message("user", "nothing stated"))
                await client.wait_for_formation(wrote.event_seq, timeout_ms=20_000)

                found = (await memory.search_memory(app_name="app", user_id="alice", query="which city")).memories
                facts = [m for m in found if m.author == "memoryd"]
                assert [f.content.parts[0].text for f in facts] == ["user's city is Paris"]
                assert facts[0].custom_metadata["memoryd_fact"] is True
                history = (await client.get_full_history(f"adk-memory/app/alice/{alice.id}")).messages
                assert facts[0].custom_metadata["sources"] == [history[0].id]
                assert found.index(facts[0]) == 0  # the formed facts come first
                unrelated = (await memory.search_memory(app_name="app", user_id="alice", query="weather")).memories
                assert all(m.author != "memoryd" for m in unrelated)
                bobs = (await memory.search_memory(app_name="app", user_id="bob", query="city")).memories
                assert [m.content.parts[0].text for m in bobs if m.author == "memoryd"] == ["user's city is Oslo"]
                # Without formed_facts: recalled events only, and its sessions have no owner.
                recalled = (await plain.search_memory(app_name="app", user_id="alice", query="city")).memories
                assert recalled and all(m.author != "memoryd" for m in recalled)
        finally:
            await app.stop(0)
