"""The recall index converges to exactly the store's messages after `kill -9` of the vector
engine process (the embedded default's child that holds Qdrant Edge and runs the index
synchronizer), not of memoryd: four kills during a stream of saves and batch-mate deletes,
within one memoryd lifetime, each once that engine's synchronizer is at work (it has applied
a write made after the previous kill). memoryd starts another engine by itself (the first at
once, the next ones after a pause that doubles: 0.5 + 1 + 2 s for these four); the saves never
wait for it (the store is the truth), and the new engine's synchronizer goes on from the
cursor in the store. Then the index holds exactly the store's messages: 0 missing, 0 orphans.

Four rounds, not more: an engine takes 2-3 s to open on a loaded 2-core machine, and a fifth
kill adds its open and a 4 s pause (the test took 35-41 s with five)."""

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
from memoryd.v1 import vector_service_pb2 as vpb
from memoryd.v1 import vector_service_pb2_grpc
from tests.faults.convergence import caught_up, index_vs_store
from tests.processes import MemorydServer, alive, wait_gone

ROUNDS = 4  # the respawn pauses of four quick deaths add up to 3.5 s (edge_process.py)
WRITERS = 3
# Upper bounds of waits for a process to come or go, or the index to catch up (never timings).
WAIT_SECONDS = 60.0
# The engine's program: memoryd/engine.py (it runs the log consumers on SQLite), or the index alone.
ENGINE_MODULES = (b"memoryd.engine", b"memoryd.storage.qdrant.edge_process")


def engine_pid(server_pid: int) -> int | None:
    """The server's running engine child (its command line names an ENGINE_MODULES), if any."""
    try:
        with open(f"/proc/{server_pid}/task/{server_pid}/children") as children:
            pids = [int(p) for p in children.read().split()]
    except FileNotFoundError:
        return None
    for pid in pids:
        try:
            command = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
            if any(module in command for module in ENGINE_MODULES) and alive(pid):
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


async def applied(vectors, seq: int) -> None:
    """Wait (bounded) until the synchronizer has applied the log through `seq`: written after the
    last kill, so the engine running now applied it (it is at work, not still opening)."""
    async with asyncio.timeout(WAIT_SECONDS):
        while True:
            try:
                stats = await vectors.GetVectorStats(vpb.GetVectorStatsRequest(), timeout=10)
                if stats.indexed_through_seq >= seq:
                    return
            except grpc.aio.AioRpcError:
                pass  # UNAVAILABLE while the engine restarts
            await asyncio.sleep(0.05)


async def save_and_delete(stub, rng: random.Random) -> int:
    """Five messages, and (sometimes) one of them deleted again: its batch-mates keep their
    points. Returns the tenant's event seq after it."""
    session = f"s{rng.randrange(6)}"
    saved = await stub.SaveMessages(mem.SaveMessagesRequest(
        session_id=session, messages=[message_pb2.Message(role="user", content=f"w{rng.random()}") for _ in range(5)]
    ), timeout=10)  # fmt: skip
    if rng.random() < 0.3:
        deleted = await stub.DeleteMessages(mem.DeleteMessagesRequest(session_id=session, ids=[saved.messages[1].id]), timeout=10)
        return deleted.event_seq
    return saved.event_seq


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
            vectors = vector_service_pb2_grpc.VectorServiceStub(channel)
            stop = asyncio.Event()
            writers = [asyncio.create_task(_load(channel, stop, n, failures)) for n in range(WRITERS)]
            engine, written = None, 1
            for _ in range(ROUNDS):
                engine = await next_engine(server.pid, engine)
                await applied(vectors, written)
                await asyncio.sleep(rng.uniform(0.05, 0.5))
                os.kill(engine, signal.SIGKILL)  # mid-stream: its synchronizer dies amid its batches
                wait_gone([engine], WAIT_SECONDS)
                written = await save_and_delete(memory, rng)  # no engine: the store still takes writes
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
