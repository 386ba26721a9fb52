"""kill -9 of the server around formation's writes leaves neither a duplicate nor a gap: a real
`memoryd serve` with --llm-url at the scripted model is killed while a strategy's call is in
flight or just after its answer (before or after the write, before the log cursor is saved),
restarted on the same data, and in the end the strategy's records equal what the log
determines (0 missing, 0 orphans, 0 duplicates). One case per sourced strategy: facts, and a
tenant's custom strategy."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

import grpc
import pytest

from memoryd.domain.models import DEFAULT_TENANT
from memoryd.formation.settings import Settings, SettingsStore
from memoryd.storage.sqlite.store import SqliteStore
from memoryd.v1 import formation_service_pb2 as fpb
from memoryd.v1 import formation_service_pb2_grpc, memory_service_pb2_grpc, message_pb2
from memoryd.v1 import memory_service_pb2 as mpb
from tests.formation.conftest import check_stored_facts
from tests.formation.script import Model
from tests.formation.test_custom import _strategy, check_stored_custom
from tests.llm_server import Call, Reply, ScriptedLLM
from tests.processes import MemorydServer

ROUNDS = 4


@dataclass(frozen=True)
class Case:
    """A sourced strategy under the kills: which model calls are held (`gated`), the server's
    extra flags, the settings the tenant stores first (None: the defaults), the two messages
    a round saves, the set-equality check, and the counts it must end with."""

    gated: Callable[[str], bool]
    flags: tuple[str, ...]
    settings: fpb.FormationSettings | None
    said: Callable[[int], tuple[str, str]]
    check: Callable[[SqliteStore], Awaitable[dict[str, int]]]
    counts: dict[str, int]


def _custom_settings() -> fpb.FormationSettings:
    settings = fpb.FormationSettings()
    settings.custom_strategies.strategies.append(_strategy())
    return settings


CASES = {
    # Every round's two facts, the cities superseding each other in one chain.
    "facts": Case(
        gated=lambda schema: schema == "memoryd_facts",
        flags=("--formation-summary-max-messages", "3"),
        settings=None,
        said=lambda n: (f"my thing{n} is v{n}", f"my city is c{n}"),
        check=lambda store: check_stored_facts(store, DEFAULT_TENANT, "alice"),
        counts={"facts": 2 * ROUNDS, "current": ROUNDS + 1, "sources": 2 * ROUNDS},
    ),
    # Each round's own thing, and "tea" once with a source per round.
    "custom": Case(
        gated=lambda schema: schema.startswith("memoryd_custom_"),
        flags=(),
        settings=_custom_settings(),
        said=lambda n: (f"i like thing{n}", "i like tea"),
        check=lambda store: check_stored_custom(store, DEFAULT_TENANT, SettingsStore(store, Settings()), "alice"),
        counts={"records": ROUNDS + 1, "sources": 2 * ROUNDS},
    ),
}


class Gate(Model):
    """The scripted model; each call of the case's strategy tells the test it arrived, and
    answers after `delay` seconds (in flight when the test kills the server)."""

    def __init__(self, gated: Callable[[str], bool]) -> None:
        super().__init__()
        self.gated = gated
        self.arrived = threading.Event()
        self.delay = 0.0

    def __call__(self, call: Call) -> Reply:
        reply = super().__call__(call)
        if self.gated(call.schema_name):
            reply.delay = self.delay
            self.arrived.set()
        return reply


@pytest.mark.parametrize("name", CASES)
async def test_kill_9_around_formation_writes_converges(tmp_path, name):
    case = CASES[name]
    model = Gate(case.gated)
    with ScriptedLLM(model) as llm:
        server = MemorydServer(
            tmp_path, "--llm-url", llm.url, "--llm-model", llm.model, "--vectors-enabled", "false", *case.flags
        )
        try:
            for round_ in range(ROUNDS):
                server.start()
                model.arrived.clear()
                model.delay = 0.5 if round_ % 2 == 0 else 0.0  # in flight / answered and maybe written
                async with grpc.aio.insecure_channel(server.target) as channel:
                    if round_ == 0 and case.settings is not None:
                        await formation_service_pb2_grpc.FormationServiceStub(channel).SetFormationSettings(
                            fpb.SetFormationSettingsRequest(settings=case.settings)
                        )
                    memory = memory_service_pb2_grpc.MemoryServiceStub(channel)
                    request = mpb.SaveMessagesRequest(
                        session_id=f"s{round_ % 2}", session_attributes=message_pb2.SessionAttributes(user_id="alice")
                    )
                    for text in case.said(round_):
                        request.messages.add(role="user", content=text)
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
        counts = await case.check(store)
    finally:
        await store.close()
    assert counts == case.counts
