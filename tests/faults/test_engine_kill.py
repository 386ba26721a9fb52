"""The recall index converges to exactly the store's messages after `kill -9` of the vector
engine process (the embedded default's child that holds Qdrant Edge and runs the index
synchronizer), not of memoryd: five kills during a stream of saves and batch-mate deletes,
within one memoryd lifetime. memoryd starts another engine by itself (the first at once, the
next ones after a pause that doubles: 0.5 + 1 + 2 + 4 s for these five); the saves never
wait for it (the store is the truth), and the new engine's synchronizer goes on from the
cursor in the store. Then the index holds exactly the store's messages: 0 missing, 0 orphans."""

from __future__ import annotations

import asyncio
import os
import random
import signal
from pathlib import Path

import grpc

from memoryd.v1 import memory_service_pb2 as mem
from memoryd.v1 import memory_service_pb2_grpc
from memoryd.v1 import message_pb2
from tests.faults.convergence import caught_up, index_vs_store
from tests.processes import MemorydServer, alive, wait_gone

ROUNDS = 5  # the respawn pauses of five quick deaths add up to 7.5 s (edge_process.py)
WRITERS = 3
# Upper bounds of waits for a process to come or go, or the index to catch up (never timings).
WAIT_SECONDS = 60.0
ENGINE_MODULE = b"memoryd.storage.qdrant.edge_process"


def engine_pid(server_pid: int) -> int | None:
    """The server's running engine child (its command line names edge_process), if any."""
    try:
        with open(f"/proc/{server_pid}/task/{server_pid}/children") as children:
            pids = [int(p) for p in children.read().split()]
    except FileNotFoundError:
        return None
    for pid in pids:
        try:
            if ENGINE_MODULE in Path(f"/proc/{pid}/cmdline").read_bytes() and alive(pid):
                return pid
        except FileNotFoundError:
            continue
    return None


async def next_engine(server_pid: int, previous: int | None) -> int:
    """Wait (bounded) for an engine process other than `previous`."""
    async with asyncio.timeout(WAIT_SECONDS):
        while (pid := engine_pid(server_pid)) in (None, previous):
            await asyncio.sleep(0.05)
    return pid


async def save_and_delete(stub, rng: random.Random) -> None:
    """Five messages, and (sometimes) one of them deleted again: its batch-mates keep their points."""
    session = f"s{rng.randrange(6)}"
    saved = await stub.SaveMessages(mem.SaveMessagesRequest(
        session_id=session, messages=[message_pb2.Message(role="user", content=f"w{rng.random()}") for _ in range(5)]
    ), timeout=10)  # fmt: skip
    if rng.random() < 0.3:
        await stub.DeleteMessages(mem.DeleteMessagesRequest(session_id=session, ids=[saved.messages[1].id]), timeout=10)


async def _load(channel: grpc.aio.Channel, stop: asyncio.Event, seed: int, failures: list[str]) -> int:
    """Saves (and deletes) until `stop`; every failure is recorded (none is expected)."""
    stub = memory_service_pb2_grpc.MemoryServiceStub(channel)
    rng = random.Random(seed)
    done = 0
    while not stop.is_set():
        try:
            await save_and_delete(stub, rng)
            done += 1
        except grpc.aio.AioRpcError as error:
            failures.append(f"{error.code().name}: {error.details()}")
        await asyncio.sleep(0.01)
    return done


async def test_the_index_converges_after_kill_9_of_the_engine_process(tmp_path):
    server = MemorydServer(tmp_path)
    server.start()
    rng = random.Random(11)
    failures: list[str] = []
    try:
        async with grpc.aio.insecure_channel(server.target) as channel:
            memory = memory_service_pb2_grpc.MemoryServiceStub(channel)
            stop = asyncio.Event()
            writers = [asyncio.create_task(_load(channel, stop, n, failures)) for n in range(WRITERS)]
            engine = None
            for _ in range(ROUNDS):
                engine = await next_engine(server.pid, engine)
                await asyncio.sleep(rng.uniform(0.3, 1.5))
                os.kill(engine, signal.SIGKILL)  # mid-stream: the synchronizer dies mid-batch too
                wait_gone([engine], WAIT_SECONDS)
                await save_and_delete(memory, rng)  # the engine is gone: the store still takes writes
            await asyncio.sleep(0.5)
            stop.set()
            done = await asyncio.gather(*writers)
            assert failures == [] and all(done)  # every write acknowledged, throughout
            assert server.process.poll() is None  # memoryd itself lived through it

            await caught_up(channel)  # the last engine catches up by itself
    finally:
        server.terminate()
    missing, orphans, keyword_points = await index_vs_store(server.data_dir)
    assert (missing, orphans) == (0, 0) and keyword_points > 0
