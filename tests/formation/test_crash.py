"""kill -9 of the server around formation's writes leaves neither a duplicate nor a gap: a real
`memoryd serve` with --llm-url at the scripted model is killed while a facts call is in flight
or just after its answer (before or after the write, before the log cursor is saved),
restarted on the same data, and in the end the facts equal what the log determines."""

from __future__ import annotations

import asyncio
import threading

import grpc

from memoryd.domain.models import DEFAULT_TENANT
from memoryd.storage.sqlite.store import SqliteStore
from memoryd.v1 import formation_service_pb2 as fpb
from memoryd.v1 import formation_service_pb2_grpc, memory_service_pb2_grpc, message_pb2
from memoryd.v1 import memory_service_pb2 as mpb
from tests.formation.conftest import check_stored_facts
from tests.formation.script import Model
from tests.llm_server import Call, Reply, ScriptedLLM
from tests.processes import MemorydServer

ROUNDS = 4


class Gate(Model):
    """The scripted model; each facts call tells the test it arrived, and answers after
    `delay` seconds (in flight when the test kills the server)."""

    def __init__(self) -> None:
        super().__init__()
        self.arrived = threading.Event()
        self.delay = 0.0

    def __call__(self, call: Call) -> Reply:
        reply = super().__call__(call)
        if call.schema_name == "memoryd_facts":
            reply.delay = self.delay
            self.arrived.set()
        return reply


async def test_kill_9_around_formation_writes_converges(tmp_path):
    model = Gate()
    with ScriptedLLM(model) as llm:
        server = MemorydServer(
            tmp_path, "--llm-url", llm.url, "--llm-model", llm.model, "--vectors-enabled", "false",
            "--formation-summary-max-messages", "3",
        )  # fmt: skip
        try:
            for round_ in range(ROUNDS):
                server.start()
                model.arrived.clear()
                model.delay = 0.5 if round_ % 2 == 0 else 0.0  # in flight / answered and maybe written
                async with grpc.aio.insecure_channel(server.target) as channel:
                    memory = memory_service_pb2_grpc.MemoryServiceStub(channel)
                    request = mpb.SaveMessagesRequest(
                        session_id=f"s{round_ % 2}", session_attributes=message_pb2.SessionAttributes(user_id="alice")
                    )
                    request.messages.add(role="user", content=f"my thing{round_} is v{round_}")
                    request.messages.add(role="user", content=f"my city is c{round_}")
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
        counts = await check_stored_facts(store, DEFAULT_TENANT, "alice")
    finally:
        await store.close()
    # Every round's two facts, the cities superseding each other in one chain.
    assert counts == {"facts": 2 * ROUNDS, "current": ROUNDS + 1, "sources": 2 * ROUNDS}
