"""kill -9 of the server around a custom strategy's writes leaves neither a duplicate nor a gap:
a real `memoryd serve` with --llm-url at the scripted model and a tenant's custom strategy is
killed while a custom call is in flight or just after its answer (before or after the write,
before the log cursor is saved), restarted on the same data, and in the end the records equal
what the log determines (0 missing, 0 orphans, 0 duplicates), a value said in every round
being one record with a source per round."""

from __future__ import annotations

import asyncio
import threading

import grpc

from memoryd.domain.models import DEFAULT_TENANT
from memoryd.formation.settings import Settings, SettingsStore
from memoryd.storage.sqlite.store import SqliteStore
from memoryd.v1 import formation_service_pb2 as fpb
from memoryd.v1 import formation_service_pb2_grpc, memory_service_pb2_grpc, message_pb2
from memoryd.v1 import memory_service_pb2 as mpb
from tests.formation.script import Model
from tests.formation.test_custom import _strategy, check_stored_custom
from tests.llm_server import Call, Reply, ScriptedLLM
from tests.processes import MemorydServer

ROUNDS = 4


class Gate(Model):
    """The scripted model; each custom call tells the test it arrived, and answers after
    `delay` seconds (in flight when the test kills the server)."""

    def __init__(self) -> None:
        super().__init__()
        self.arrived = threading.Event()
        self.delay = 0.0

    def __call__(self, call: Call) -> Reply:
        reply = super().__call__(call)
        if call.schema_name.startswith("memoryd_custom_"):
            reply.delay = self.delay
            self.arrived.set()
        return reply


async def test_kill_9_around_custom_writes_converges(tmp_path):
    model = Gate()
    with ScriptedLLM(model) as llm:
        server = MemorydServer(tmp_path, "--llm-url", llm.url, "--llm-model", llm.model, "--vectors-enabled", "false")
        try:
            for round_ in range(ROUNDS):
                server.start()
                model.arrived.clear()
                model.delay = 0.5 if round_ % 2 == 0 else 0.0  # in flight / answered and maybe written
                async with grpc.aio.insecure_channel(server.target) as channel:
                    if round_ == 0:
                        settings = fpb.SetFormationSettingsRequest()
                        settings.settings.custom_strategies.strategies.append(_strategy())
                        await formation_service_pb2_grpc.FormationServiceStub(channel).SetFormationSettings(settings)
                    memory = memory_service_pb2_grpc.MemoryServiceStub(channel)
                    request = mpb.SaveMessagesRequest(
                        session_id=f"s{round_ % 2}", session_attributes=message_pb2.SessionAttributes(user_id="alice")
                    )
                    request.messages.add(role="user", content=f"i like thing{round_}")
                    request.messages.add(role="user", content="i like tea")
                    await memory.SaveMessages(request)
                    await asyncio.get_running_loop().run_in_executor(None, model.arrived.wait, 20)
                    await asyncio.sleep(0.02 * round_)
                server.kill()
            server.start()
            async with grpc.aio.insecure_channel(server.target) as channel:
                memory = memory_service_pb2_grpc.MemoryServiceStub(channel)
                formation = formation_service_pb2_grpc.FormationServiceStub(channel)
                model.delay = 0.0
                last = await memory.SaveMessage(
                    mpb.SaveMessageRequest(session_id="s0", message=message_pb2.Message(role="user", content="bye"))
                )
                await formation.WaitForFormation(
                    fpb.WaitForFormationRequest(event_seq=last.event_seq, timeout_ms=90_000)
                )
            server.terminate()
        finally:
            server.stop()
    store = SqliteStore(server.data_dir / "memoryd.db")
    await store.open()
    try:
        counts = await check_stored_custom(store, DEFAULT_TENANT, SettingsStore(store, Settings()), "alice")
    finally:
        await store.close()
    # Each round's own thing, and "tea" once with a source per round.
    assert counts == {"records": ROUNDS + 1, "sources": 2 * ROUNDS}
