"""A caller's correction is never undone by an extraction running in another process, on every
adapter: the facts consumer runs here (its model the scripted one behind a real HTTP server),
and at the worst moment, after it has decided a batch on the facts as stored and before it
writes, another process (tests/formation/correct.py, with its own store connection) corrects
or deletes the fact the batch changes. The store's guarded write (every fact the batch writes
guarded on the version it read: formation/records.py Change.guards) refuses the batch; the
consumer reads and decides it again, on the corrected fact. Without the guard the batch
overwrote the correction with the superseded old text (or brought a deleted fact back)."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

from memoryd.consumers.runtime import Runtime
from memoryd.domain.limits import Limits
from memoryd.domain.memory import Memory
from memoryd.domain.models import Message
from memoryd.domain.sessions import SessionAttributes
from memoryd.formation import common
from memoryd.formation.facts import FactsConsumer
from memoryd.formation.meter import Meter
from memoryd.formation.openai_chat import OpenAIChat
from memoryd.formation.records import Change, FactRecords
from memoryd.formation.settings import Settings, SettingsStore
from memoryd.formation.sourced import Batch
from tests import processes
from tests.formation.script import Model
from tests.llm_server import ScriptedLLM

REPO = Path(__file__).resolve().parents[2]
CHILD_SECONDS = 60.0  # an upper bound for the other process (never a timing)


class Racing(FactsConsumer):
    """The facts consumer, with another process's write run once between its decision and
    its write (`race`: the child's arguments)."""

    race: list[str] | None = None
    raced: dict | None = None

    async def decide(self, batch: Batch, proposal, change: Change, now: int) -> None:
        await super().decide(batch, proposal, change, now)
        if self.race is not None:
            argv, self.race = self.race, None
            done = await asyncio.to_thread(
                processes.run, argv, capture_output=True, timeout=CHILD_SECONDS, check=True, cwd=REPO
            )
            self.raced = json.loads(done.stdout.splitlines()[-1])  # after its log lines


def child(store_target, tenant: str, user: str, fact_id: str, *what: str) -> list[str]:
    where = (
        ["--sqlite", str(store_target.sqlite_path)]
        if store_target.backend == "sqlite"
        else ["--mongo", store_target.mongo_uri, "--database", store_target.database]
    )
    return [sys.executable, "-m", "tests.formation.correct", *where, tenant, user, fact_id, *what]


async def rig(store, tenant: str, llm: ScriptedLLM) -> tuple[Racing, Runtime, Memory]:
    meter = Meter(OpenAIChat(llm.url, llm.model, timeout_seconds=10.0))
    consumer = Racing(store, meter, SettingsStore(store, Settings()), common.Locks())
    runtime = Runtime(store, tenants=[tenant], min_backoff_seconds=0.01)
    runtime.add(consumer)
    return consumer, runtime, Memory(store, Limits())


async def say(memory: Memory, tenant: str, session: str, text: str, user: str = "alice") -> None:
    await memory.update_session(tenant, session, SessionAttributes(user, "", {}), [])
    await memory.save_messages(tenant, session, [Message(role="user", content=text)], "")


async def test_a_correction_in_another_process_outlives_a_racing_extraction(store, store_target, tenant):
    model = Model()
    with ScriptedLLM(model) as llm:
        consumer, runtime, memory = await rig(store, tenant, llm)
        try:
            await say(memory, tenant, "s1", "my city is paris")
            await runtime.sync_tenant(tenant)
            records = FactRecords(store)
            (paris,) = await records.facts(tenant, "alice")
            assert paris.text == "user's city is paris"

            # The next batch supersedes paris; the caller corrects it in between.
            consumer.race = child(store_target, tenant, "alice", paris.id, "--text", "user's city is lyon")
            await say(memory, tenant, "s1", "my city is rome")
            calls_before = len(llm.calls_for("memoryd_facts"))
            await runtime.sync_tenant(tenant)
            assert consumer.raced == {"text": "user's city is lyon", "version": 2, "corrected": True}
            # The raced batch was refused and decided again: one more model call.
            assert len(llm.calls_for("memoryd_facts")) == calls_before + 2

            facts = {f.id: f for f in await records.facts(tenant, "alice", include_superseded=True)}
            kept = facts[paris.id]
            assert (kept.text, kept.corrected) == ("user's city is lyon", True)
            assert (kept.superseded_by, kept.valid_to) == ("", 0)  # current: not superseded by rome
            assert sorted(f.text for f in facts.values() if f.current) == ["user's city is lyon", "user's city is rome"]
        finally:
            await consumer.meter.close()


async def test_a_deletion_in_another_process_is_not_undone_by_a_racing_extraction(store, store_target, tenant):
    model = Model()
    with ScriptedLLM(model) as llm:
        consumer, runtime, memory = await rig(store, tenant, llm)
        try:
            await say(memory, tenant, "s1", "my pet is rex")
            await runtime.sync_tenant(tenant)
            records = FactRecords(store)
            (rex,) = await records.facts(tenant, "alice")

            # The next batch says the same again (a duplicate: rex gains a source); the caller
            # deletes rex in between.
            consumer.race = child(store_target, tenant, "alice", rex.id, "--delete")
            await say(memory, tenant, "s2", "my pet is rex")
            await runtime.sync_tenant(tenant)
            assert consumer.raced == {"deleted": True}

            assert await records.get(tenant, "alice", rex.id) is None  # not brought back
            facts = await records.facts(tenant, "alice", include_superseded=True)
            # Decided again without rex: the second message forms a fact of its own.
            assert [(f.text, [s.session_id for s in f.sources]) for f in facts] == [("user's pet is rex", ["s2"])]
            assert await records.by_message(tenant, "s1", rex.sources[0].message_id) == []
        finally:
            await consumer.meter.close()
