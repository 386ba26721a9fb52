"""An acknowledged UpsertVectors survives `kill -9` of memoryd: Qdrant Edge writes every
update to its WAL (and memoryd to its operation log) before the call returns. Upserts run
concurrently, single points and batches, with no flush, until the kill."""

from __future__ import annotations

import asyncio
import random
import uuid

import grpc

from memoryd.v1 import vector_service_pb2 as pb
from memoryd.v1 import vector_service_pb2_grpc
from memoryd.storage.qdrant.edge import EdgeIndex
from tests.processes import MemorydServer

MODEL = "test:crash"
WRITERS = 6


def _point(rng: random.Random, key: str) -> pb.VectorPoint:
    return pb.VectorPoint(model_id=MODEL, vector=[rng.uniform(-1, 1) for _ in range(16)], session_id="s",
                          message_id=key, timestamp=1000, role="user", text=key)


async def test_acknowledged_vector_upserts_survive_kill_9(tmp_path):
    server = MemorydServer(tmp_path)
    server.start()
    acknowledged: dict[str, str] = {}  # message id -> point id
    try:
        async with grpc.aio.insecure_channel(server.target) as channel:
            stub = vector_service_pb2_grpc.VectorServiceStub(channel)
            stop = asyncio.Event()

            async def writer(n: int) -> None:
                rng = random.Random(n)
                while not stop.is_set():
                    keys = [uuid.uuid4().hex for _ in range(1 if rng.random() < 0.5 else 50)]
                    try:
                        response = await stub.UpsertVectors(
                            pb.UpsertVectorsRequest(points=[_point(rng, k) for k in keys]), timeout=10
                        )
                    except grpc.aio.AioRpcError:
                        return  # the kill
                    acknowledged.update(zip(keys, response.point_ids))

            tasks = [asyncio.create_task(writer(n)) for n in range(WRITERS)]
            while len(acknowledged) < 2000:
                await asyncio.sleep(0.05)
            server.kill()
            stop.set()
            await asyncio.gather(*tasks)

        server.start()
        async with grpc.aio.insecure_channel(server.target) as channel:
            stub = vector_service_pb2_grpc.VectorServiceStub(channel)
            stats = await stub.GetVectorStats(pb.GetVectorStatsRequest(), timeout=30)
            stored = sum(m.count for m in stats.models if m.model_id == MODEL)
            assert stored >= len(acknowledged)  # in-flight upserts may have landed too
    finally:
        server.stop()
    # Every acknowledged point, by id, in the shard the restarted server left behind.
    index = EdgeIndex(server.data_dir / "vectors")
    await index.open()
    try:
        present = {str(r.id) for r in await index.retrieve(16, list(acknowledged.values()))}
        assert present == set(acknowledged.values())
    finally:
        await index.close()
