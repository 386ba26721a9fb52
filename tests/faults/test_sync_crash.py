"""The recall index converges to exactly the store's messages after `kill -9` of memoryd during
a stream of saves and deletes: ten rounds of kill and restart on the same data, then the set
of message ids in the index equals the set in the store (0 missing, 0 orphans). The
synchronizer's cursor is in the store; whatever it had not applied is still in the log."""

from __future__ import annotations

import asyncio
import random

import grpc

from memoryd.v1 import memory_service_pb2 as mem
from memoryd.v1 import memory_service_pb2_grpc
from memoryd.v1 import message_pb2
from memoryd.v1 import vector_service_pb2 as vpb
from memoryd.v1 import vector_service_pb2_grpc
from memoryd.storage.qdrant.edge import EdgeIndex
from memoryd.storage.sqlite.store import SqliteStore
from memoryd.vectors.sync import IndexSync, difference
from tests.processes import MemorydServer

ROUNDS = 10
WRITERS = 4


async def _load(channel: grpc.aio.Channel, stop: asyncio.Event, seed: int) -> None:
    stub = memory_service_pb2_grpc.MemoryServiceStub(channel)
    rng = random.Random(seed)
    while not stop.is_set():
        session = f"s{rng.randrange(6)}"
        try:
            saved = await stub.SaveMessages(mem.SaveMessagesRequest(
                session_id=session, messages=[message_pb2.Message(role="user", content=f"w{rng.random()}") for _ in range(5)]
            ), timeout=10)  # fmt: skip
            if rng.random() < 0.3:  # a batch-mate goes: the others keep their points
                await stub.DeleteMessages(mem.DeleteMessagesRequest(session_id=session, ids=[saved.messages[1].id]), timeout=10)
        except grpc.aio.AioRpcError:
            return  # killed


async def test_the_index_converges_after_kill_9_during_saves(tmp_path):
    server = MemorydServer(tmp_path)
    rng = random.Random(7)
    for round_ in range(ROUNDS):
        server.start()
        async with grpc.aio.insecure_channel(server.target) as channel:
            stop = asyncio.Event()
            writers = [asyncio.create_task(_load(channel, stop, round_ * WRITERS + n)) for n in range(WRITERS)]
            await asyncio.sleep(rng.uniform(0.5, 2.0))
            server.kill()  # kill -9, mid-stream
            stop.set()
            await asyncio.gather(*writers)

    server.start()
    try:
        async with grpc.aio.insecure_channel(server.target) as channel:
            vectors = vector_service_pb2_grpc.VectorServiceStub(channel)
            for _ in range(600):
                stats = await vectors.GetVectorStats(vpb.GetVectorStatsRequest(), timeout=30)
                if stats.event_seq and stats.indexed_through_seq == stats.event_seq:
                    break
                await asyncio.sleep(0.1)
            assert stats.indexed_through_seq == stats.event_seq > 0
    finally:
        server.terminate()

    # Index vs store, by message id, for the whole tenant (the server is stopped: Edge is one process).
    store = SqliteStore(server.data_dir / "memoryd.db")
    index = EdgeIndex(server.data_dir / "vectors")
    await store.open()
    await index.open()
    try:
        diff = await difference(IndexSync(store, index), "default")
        assert (len(diff.missing), len(diff.orphans)) == (0, 0)
        _, collections = await index.stats("default")
        assert [c.count for c in collections if c.dimension == 0][0] > 0
    finally:
        await index.close()
        await store.close()
