"""The recall index converges to exactly the store's messages after `kill -9` of memoryd during
a stream of saves and deletes: ten rounds of kill and restart on the same data, then the set
of message ids in the index equals the set in the store (0 missing, 0 orphans). The
synchronizer's cursor is in the store; whatever it had not applied is still in the log."""

from __future__ import annotations

import asyncio
import random

import grpc
import pytest

from memoryd.v1 import memory_service_pb2 as mem
from memoryd.v1 import memory_service_pb2_grpc
from memoryd.v1 import message_pb2
from tests.faults.convergence import caught_up, index_vs_store
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


# Ten server starts: 8-14 s each on a machine at load 12-15, so the default 120 s would pace
# the test, not detect a stall.
@pytest.mark.timeout(600)
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
            await caught_up(channel)
    finally:
        server.terminate()
    missing, orphans, keyword_points = await index_vs_store(server.data_dir)
    assert (missing, orphans) == (0, 0) and keyword_points > 0
