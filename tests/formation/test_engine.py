"""Formation in the engine process (the embedded default: SQLite with the vector engine
process): a real `memoryd serve` with --llm-url at the scripted model. The model's calls come
from the engine process, not from the serving one; WaitForFormation and GetFormationStatus
answer from the engine's positions and usage; a correction made meanwhile by the serving
process holds; and `kill -9` of the engine while a facts call is in flight leaves neither a
duplicate nor a gap: the serving process starts another engine, whose consumers go on from
their cursors, and in the end the facts equal what the log determines."""

from __future__ import annotations

import asyncio
import os
import signal
import threading
from pathlib import Path

import grpc

from memoryd.domain.models import DEFAULT_TENANT
from memoryd.storage.sqlite.store import SqliteStore
from memoryd.v1 import (
    event_pb2,
    event_service_pb2,
    event_service_pb2_grpc,
    formation_service_pb2_grpc,
    memory_service_pb2_grpc,
    message_pb2,
)
from memoryd.v1 import formation_service_pb2 as fpb
from memoryd.v1 import memory_service_pb2 as mpb
from tests.faults.test_engine_kill import engine_pid, next_engine
from tests.formation.conftest import check_stored_facts
from tests.formation.script import Model
from tests.llm_server import Call, Reply, ScriptedLLM
from tests.processes import MemorydServer, wait_gone

KILLS = 2
# Upper bounds of waits (never timings).
WAIT_SECONDS = 60.0
# A live Watch stream gets the engine's commits from the serving process's tail of the SQLite
# file (0.1 s); without it, only from its 30 s safety re-read: this bound tells them apart.
WATCH_SECONDS = 20.0


class Held(Model):
    """The scripted model; a facts call tells the test it arrived (`arrived`, with the call)
    and, while `holding`, answers only once the test sets `release`."""

    def __init__(self) -> None:
        super().__init__()
        self.arrived = threading.Event()
        self.release = threading.Event()
        self.holding = False
        self.last: Call | None = None

    def __call__(self, call: Call) -> Reply:
        reply = super().__call__(call)
        if call.schema_name == "memoryd_facts":
            self.last = call
            self.arrived.set()
            if self.holding:
                self.release.wait(WAIT_SECONDS)
        return reply


def socket_owner(local_port: int, remote_port: int, pids: list[int]) -> int | None:
    """Which of `pids` holds the loopback TCP connection from `local_port` to `remote_port`."""
    inodes = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            lines = Path(table).read_text().splitlines()[1:]
        except FileNotFoundError:
            continue
        for line in lines:
            fields = line.split()
            local, remote, inode = fields[1], fields[2], fields[9]
            if int(local.rsplit(":", 1)[1], 16) == local_port and int(remote.rsplit(":", 1)[1], 16) == remote_port:
                inodes.add(f"socket:[{inode}]")
    for pid in pids:
        try:
            for fd in os.listdir(f"/proc/{pid}/fd"):
                try:
                    if os.readlink(f"/proc/{pid}/fd/{fd}") in inodes:
                        return pid
                except FileNotFoundError:
                    continue
        except FileNotFoundError:
            continue
    return None


async def wait_for(event: threading.Event) -> None:
    assert await asyncio.get_running_loop().run_in_executor(None, event.wait, WAIT_SECONDS)


def said(session: str, *texts: str, user: str = "alice") -> mpb.SaveMessagesRequest:
    request = mpb.SaveMessagesRequest(
        session_id=session, session_attributes=message_pb2.SessionAttributes(user_id=user)
    )
    for text in texts:
        request.messages.add(role="user", content=text)
    return request


async def test_formation_runs_in_the_engine_process_and_resumes_after_its_kill_9(tmp_path):
    model = Held()
    with ScriptedLLM(model) as llm:
        llm_port = int(llm.url.rsplit(":", 1)[1].split("/")[0])
        server = MemorydServer(
            tmp_path, "--llm-url", llm.url, "--llm-model", llm.model, "--formation-summary-max-messages", "3",
        )  # fmt: skip
        server.start()
        try:
            async with grpc.aio.insecure_channel(server.target) as channel:
                memory = memory_service_pb2_grpc.MemoryServiceStub(channel)
                formation = formation_service_pb2_grpc.FormationServiceStub(channel)
                engine = await next_engine(server.pid, None)

                # 1. The facts call comes from the engine process; the serving process answers
                # the caller's correction meanwhile, and the extraction does not undo it.
                first = await memory.SaveMessages(said("s0", "my city is paris"), timeout=10)
                waited = await formation.WaitForFormation(
                    fpb.WaitForFormationRequest(event_seq=first.event_seq, timeout_ms=int(WAIT_SECONDS * 1000))
                )
                assert {s.position for s in waited.strategies} and all(
                    s.position >= first.event_seq for s in waited.strategies
                )
                facts = await formation.ListFacts(fpb.ListFactsRequest(user_id="alice"))
                assert [f.text for f in facts.facts] == ["user's city is paris"]
                model.arrived.clear()
                model.holding = True
                await memory.SaveMessages(said("s0", "my city is rome"), timeout=10)
                await wait_for(model.arrived)
                assert model.last is not None
                owner = socket_owner(model.last.peer, llm_port, [server.pid, engine])
                assert owner == engine, f"the model was called by pid {owner}, not the engine {engine}"
                corrected = await formation.UpdateFact(
                    fpb.UpdateFactRequest(user_id="alice", fact_id=facts.facts[0].id, text="user's city is lyon")
                )
                assert corrected.fact.corrected
                model.holding = False
                model.release.set()
                last = await memory.SaveMessage(
                    mpb.SaveMessageRequest(session_id="s0", message=message_pb2.Message(role="user", content="ok"))
                )
                await formation.WaitForFormation(
                    fpb.WaitForFormationRequest(event_seq=last.event_seq, timeout_ms=int(WAIT_SECONDS * 1000))
                )
                history = await formation.ListFacts(fpb.ListFactsRequest(user_id="alice", include_superseded=True))
                by_id = {f.id: f for f in history.facts}
                kept = by_id[facts.facts[0].id]
                assert kept.text == "user's city is lyon" and kept.corrected and not kept.superseded_by
                assert sorted(f.text for f in history.facts) == ["user's city is lyon", "user's city is rome"]
                # A settings change made by the serving process reaches the engine's consumers
                # (read from the store per batch, never cached there).
                await formation.SetFormationSettings(
                    fpb.SetFormationSettingsRequest(
                        session_id="quiet", settings=fpb.FormationSettings(facts_enabled=False)
                    )
                )
                muted = await memory.SaveMessages(said("quiet", "my food is pizza"), timeout=10)
                await formation.WaitForFormation(
                    fpb.WaitForFormationRequest(event_seq=muted.event_seq, timeout_ms=int(WAIT_SECONDS * 1000))
                )
                texts = [f.text for f in (await formation.ListFacts(fpb.ListFactsRequest(user_id="alice"))).facts]
                assert "user's food is pizza" not in texts and "user's city is rome" in texts

                # A live Watch stream sees what the engine's formation commits.
                events = event_service_pb2_grpc.EventServiceStub(channel)
                watch = events.Watch(
                    event_service_pb2.WatchRequest(after_seq=last.event_seq, types=[event_pb2.EVENT_TYPE_MEMORY_FORMED])
                )
                blue = await memory.SaveMessages(said("s0", "my color is blue"), timeout=10)
                await formation.WaitForFormation(
                    fpb.WaitForFormationRequest(event_seq=blue.event_seq, timeout_ms=int(WAIT_SECONDS * 1000))
                )
                async with asyncio.timeout(WATCH_SECONDS):
                    async for item in watch:
                        if item.HasField("event") and item.event.type == event_pb2.EVENT_TYPE_MEMORY_FORMED:
                            break
                watch.cancel()
                status = await formation.GetFormationStatus(fpb.GetFormationStatusRequest())
                assert status.enabled and status.model == llm.model
                calls = {s.strategy: s.llm_calls for s in status.strategies}
                assert calls[fpb.FORMATION_STRATEGY_FACTS] >= 3 and calls[fpb.FORMATION_STRATEGY_PROFILE] >= 1

                # 2. kill -9 of the engine while a facts call is in flight (bob's sessions): another
                # engine goes on from the cursors; every write is acknowledged throughout.
                for round_ in range(KILLS):
                    model.arrived.clear()
                    model.release.clear()
                    model.holding = True
                    await memory.SaveMessages(
                        said(f"k{round_}", f"my thing{round_} is v{round_}", user="bob"), timeout=10
                    )
                    await wait_for(model.arrived)
                    os.kill(engine, signal.SIGKILL)
                    wait_gone([engine], WAIT_SECONDS)
                    model.holding = False
                    model.release.set()
                    await memory.SaveMessages(
                        said(f"k{round_}", f"my pet{round_} is p{round_}", user="bob"), timeout=10
                    )
                    engine = await next_engine(server.pid, engine)
                last = await memory.SaveMessage(
                    mpb.SaveMessageRequest(session_id="s0", message=message_pb2.Message(role="user", content="bye"))
                )
                await formation.WaitForFormation(
                    fpb.WaitForFormationRequest(event_seq=last.event_seq, timeout_ms=int(WAIT_SECONDS * 1000))
                )
                assert server.process.poll() is None  # memoryd itself lived through it
                assert engine_pid(server.pid) == engine
            server.terminate()
        finally:
            model.release.set()
            server.stop()
    store = SqliteStore(server.data_dir / "memoryd.db")
    await store.open()
    try:
        counts = await check_stored_facts(store, DEFAULT_TENANT, "bob")
    finally:
        await store.close()
    # Per kill round a thing and a pet, each exactly once: 0 missing, 0 orphans, 0 duplicates.
    assert counts == {"facts": 2 * KILLS, "current": 2 * KILLS, "sources": 2 * KILLS}
