"""A formation rig: a SQLite store, the domain over it, the scripted model behind a real
chat-completions HTTP server (tests/llm_server.py), and formation's consumers in their own
runtime, driven by `settle` (the runtime's sync of one tenant: every consumer through the
newest event, raising the first failure as the serving loop would retry it)."""

from __future__ import annotations

import uuid
from dataclasses import dataclass

import pytest

from memoryd.domain.limits import Limits
from memoryd.domain.memory import Memory
from memoryd.domain.models import Message
from memoryd.domain.sessions import SessionAttributes
from memoryd.domain.summaries import Summaries
from memoryd.formation import records as rec
from memoryd.formation.engine import Formation, Options
from memoryd.formation.openai_chat import OpenAIChat
from memoryd.formation.settings import Settings
from memoryd.storage.sqlite.store import SqliteStore
from tests.formation.script import FACT, Model, fact_text, stated
from tests.llm_server import ScriptedLLM

LIMITS = Limits()


@dataclass
class Rig:
    store: SqliteStore
    memory: Memory
    summaries: Summaries
    model: Model
    llm: ScriptedLLM
    formation: Formation
    tenant: str

    async def say(
        self, session: str, *texts: str, role: str = "user", user: str = "alice", ts: int = 0
    ) -> list[Message]:
        if user:
            await self.memory.update_session(self.tenant, session, SessionAttributes(user, "", {}), [])
        messages = [Message(role=role, content=t, timestamp=ts + i if ts else 0) for i, t in enumerate(texts)]
        return (await self.memory.save_messages(self.tenant, session, messages, "")).messages

    async def settle(self) -> None:
        runtime = self.formation.runtime
        assert runtime is not None
        for _ in range(5):  # formation's own events (facts formed) come after some cursors
            await runtime.sync_tenant(self.tenant)
            latest = (await self.store.event_bounds(self.tenant))[1]
            if all(track.position(self.tenant) >= latest for track in self.formation.tracks.values()):
                return

    async def facts(self, user: str = "alice", *, history: bool = False) -> list[rec.Fact]:
        return await self.formation.records.facts(self.tenant, user, include_superseded=history)


def make_formation(store, summaries, llm: ScriptedLLM, settings: Settings, **options) -> Formation:
    chat = OpenAIChat(llm.url, llm.model, timeout_seconds=options.pop("timeout_seconds", 5.0))
    return Formation(store, summaries, chat, Options(defaults=settings, **options))


@pytest.fixture
async def sqlite_store(tmp_path):
    store = SqliteStore(tmp_path / "memoryd.db")
    await store.open()
    try:
        yield store
    finally:
        await store.close()


@pytest.fixture
def settings() -> Settings:
    return Settings(summary_max_messages=4, summary_idle_seconds=0)


@pytest.fixture
async def rig(sqlite_store, settings):
    model = Model()
    with ScriptedLLM(model) as llm:
        summaries = Summaries(sqlite_store, LIMITS)
        formation = make_formation(sqlite_store, summaries, llm, settings, min_backoff_seconds=0.01)
        try:
            yield Rig(
                sqlite_store,
                Memory(sqlite_store, LIMITS),
                summaries,
                model,
                llm,
                formation,
                f"t-{uuid.uuid4().hex[:10]}",
            )
        finally:
            await formation.close()


async def check_facts(rig: Rig, user: str = "alice") -> dict[str, int]:
    return await check_stored_facts(rig.store, rig.tenant, user)


async def check_stored_facts(store, tenant: str, user: str = "alice") -> dict[str, int]:
    """Set equality of the user's facts with what the log determines by provenance: every
    stored message of the user's sessions that states a fact is the source of exactly one
    fact, with that text (0 missing, 0 duplicates); every source of every fact is a stored
    message that states it (0 orphans); no two current facts say the same. Returns counts."""
    records = rec.FactRecords(store)
    facts = await records.facts(tenant, user, include_superseded=True)
    stated_by: dict[str, str] = {}  # message id -> the fact text it states
    sessions = [s.session_id for s in await store.list_sessions(tenant, None, 1000)]
    for session in sessions:
        info = await store.get_session(tenant, session)
        if info is None or info.attributes.user_id != user:
            continue
        for message in await store.messages_by_seq(tenant, session, 1, 2**62, 100_000):
            said = stated(message.content) if message.role == "user" else None
            if said:
                stated_by[message.id] = fact_text(*said)
    sourced: dict[str, list[str]] = {}
    orphans = 0
    for fact in facts:
        assert FACT.match(fact.text), fact.text
        assert fact.sources, f"a fact without sources: {fact}"
        for source in fact.sources:
            sourced.setdefault(source.message_id, []).append(fact.id)
            rows = await store.messages_by_seq(tenant, source.session_id, source.seq, source.seq, 1)
            if not rows or rows[0].id != source.message_id or stated_by.get(source.message_id) != fact.text:
                orphans += 1
    missing = [m for m in stated_by if m not in sourced]
    duplicates = {m: ids for m, ids in sourced.items() if len(ids) > 1}
    current = [f.text for f in facts if f.current]
    assert orphans == 0, f"{orphans} orphan sources"
    assert not missing, f"missing facts for messages {missing}"
    assert not duplicates, f"messages in several facts: {duplicates}"
    assert len(current) == len(set(current)), f"duplicate current facts: {current}"
    # The sources index holds exactly the facts' sources.
    index = set()
    for session in await records.indexed_sessions(tenant):
        for message_id, owner, fact_id in await records.sources_of_session(tenant, session):
            if owner == user:
                index.add((session, message_id, owner, fact_id))
    expected = {(s.session_id, s.message_id, f.user_id, f.id) for f in facts for s in f.sources}
    assert index == expected
    return {"facts": len(facts), "current": len(current), "sources": sum(len(f.sources) for f in facts)}
