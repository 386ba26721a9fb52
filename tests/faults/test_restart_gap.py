"""No vector gap on a restart: the health service never says VectorService is SERVING while
vector calls fail because the last server's engine process still holds the folder.

The new server starts on the same data dir while the old one is still serving under load (as
a supervisor's restart that overlaps the old stop does, at its worst): its vectors cannot open
the folder, so it must say NOT_SERVING for VectorService until they can. Then the old server
gets SIGTERM: its stop ends only after its engine process has let go of the folder, and the
new server's vector side comes up by itself."""

from __future__ import annotations

import asyncio
import random
import signal
import uuid

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc

from memoryd.v1 import vector_service_pb2 as pb
from memoryd.v1 import vector_service_pb2_grpc
from tests.processes import MemorydServer, alive, descendants

VECTOR_SERVICE = "memoryd.v1.VectorService"
SERVING = health_pb2.HealthCheckResponse.SERVING
MODEL = "test:restart"
WRITERS = 4
SERVING_PROBES = 20  # consecutive SERVING probes with answered vector calls that end the test
PROBE_LIMIT = 2000


async def _load(target: str, stop: asyncio.Event, acknowledged: list[int]) -> None:
    async with grpc.aio.insecure_channel(target) as channel:
        stub = vector_service_pb2_grpc.VectorServiceStub(channel)

        async def writer(n: int) -> None:
            rng = random.Random(n)
            while not stop.is_set():
                points = [
                    pb.VectorPoint(model_id=MODEL, vector=[rng.uniform(-1, 1) for _ in range(16)], session_id="s",
                                   message_id=uuid.uuid4().hex, timestamp=1000, role="user", text="x")
                    for _ in range(50)
                ]  # fmt: skip
                try:
                    await stub.UpsertVectors(pb.UpsertVectorsRequest(points=points), timeout=10)
                except grpc.aio.AioRpcError:
                    return  # the old server stopping
                acknowledged.append(len(points))

        await asyncio.gather(*(writer(n) for n in range(WRITERS)))


async def _probe(target: str, violations: list[str], serving_seen: asyncio.Event, probes: list[str]) -> None:
    """Health, then a vector call, in a loop: a SERVING answer followed by an UNAVAILABLE vector
    call is the gap."""
    async with grpc.aio.insecure_channel(target) as channel:
        health = health_pb2_grpc.HealthStub(channel)
        vectors = vector_service_pb2_grpc.VectorServiceStub(channel)
        consecutive = 0
        for _ in range(PROBE_LIMIT):
            status = (await health.Check(health_pb2.HealthCheckRequest(service=VECTOR_SERVICE), timeout=5)).status
            try:
                await vectors.GetVectorStats(pb.GetVectorStatsRequest(), timeout=5)
                answered = "ok"
            except grpc.aio.AioRpcError as error:
                answered = f"{error.code().name}: {error.details()}"
            probes.append(f"{health_pb2.HealthCheckResponse.ServingStatus.Name(status)} -> {answered}")
            if status == SERVING:
                serving_seen.set()
                if answered != "ok":
                    violations.append(probes[-1])
                consecutive = consecutive + 1 if answered == "ok" else 0
                if consecutive >= SERVING_PROBES:
                    return
            await asyncio.sleep(0.05)


async def test_restart_reports_vectors_not_serving_until_the_engine_is_open(tmp_path):
    old = MemorydServer(tmp_path / "old")
    new = MemorydServer(tmp_path / "new")
    new.data_dir = old.data_dir
    old.start()
    try:
        stop, acknowledged = asyncio.Event(), []
        load = asyncio.create_task(_load(old.target, stop, acknowledged))
        while sum(acknowledged) < 1000:
            await asyncio.sleep(0.05)
        new.start()  # the folder is the old server's: the new one serves, its vectors wait
        violations: list[str] = []
        probes: list[str] = []
        serving_seen = asyncio.Event()
        probing = asyncio.create_task(_probe(new.target, violations, serving_seen, probes))
        while len(probes) < 10:
            await asyncio.sleep(0.05)
        assert not serving_seen.is_set(), probes  # the old server still has the folder

        engine = [pid for pid in descendants(old.pid) if alive(pid)]
        assert engine, "the old server runs its vector engine in a child process"
        old.process.send_signal(signal.SIGTERM)  # under load
        await asyncio.to_thread(old.process.wait, 60)
        stop.set()
        await load
        # Its stop waited for the engine process: the folder is free when the old server is gone.
        assert not [pid for pid in engine if alive(pid)]

        await probing
        assert serving_seen.is_set(), probes[-5:]
        assert violations == []
    finally:
        new.stop()
        old.stop()
