"""Qdrant Edge behind its process boundary (storage/qdrant/edge_process.py), the embedded
default: what the boundary itself must do. Every VectorIndex case also runs through it in
test_index_conformance.py (target "edge-process")."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import textwrap

import pytest

from memoryd.domain import deadline
from memoryd.domain.errors import StorageUnavailable
from memoryd.domain.vectors import IndexQuery, PointFilter, VectorPoint, VectorRecord
from memoryd.storage.qdrant.edge import EdgeIndex
from memoryd.storage.qdrant.edge_process import EdgeProcessIndex
from tests.processes import descendants, wait_gone
from tests.vectors.conftest import unit
from tests import processes

# Bounded waits for a process to come or go (never a speed assertion).
WAIT_SECONDS = 30.0


def point(message_id: str, angle: float = 0.0) -> VectorPoint:
    return VectorPoint("t", unit(angle), VectorRecord("s1", 1000, "test:one", message_id, "user", text=f"text {message_id}"))


async def found(index, message_id: str) -> bool:
    result = await index.query(IndexQuery(PointFilter("t"), 10, unit(0)))
    return message_id in {c.record.message_id for c in result.candidates}


async def noticed_exit(index: EdgeProcessIndex) -> None:
    """Wait (bounded) until the index has seen its engine process exit."""
    async with asyncio.timeout(WAIT_SECONDS):
        while index.pid is not None:
            await asyncio.sleep(0.02)


@pytest.fixture
async def index(tmp_path):
    index = EdgeProcessIndex(tmp_path / "vectors")
    await index.open()
    yield index
    await index.close()


async def test_the_engine_runs_in_a_child_process_that_stops_with_close(index):
    await index.upsert([point("m1")], 1)
    pid = index.pid
    assert pid is not None and pid != os.getpid()
    assert pid in descendants(os.getpid())  # our child
    await index.close()
    wait_gone([pid], WAIT_SECONDS)
    assert index.pid is None
    with pytest.raises(StorageUnavailable):
        await index.ping()


async def test_a_killed_engine_process_answers_unavailable_then_the_next_call_starts_another(index):
    await index.upsert([point("acked")], 1)
    pid = index.pid
    os.kill(pid, signal.SIGSTOP)  # a call is in flight when the engine dies
    in_flight = asyncio.create_task(index.upsert([point("unacknowledged", 20)], 2))
    await asyncio.sleep(0.2)
    os.kill(pid, signal.SIGKILL)
    with pytest.raises(StorageUnavailable):
        await in_flight
    wait_gone([pid], WAIT_SECONDS)
    # The next call starts a new engine process on the same folder: the acknowledged write is there.
    assert await found(index, "acked")
    assert index.pid not in (None, pid)


async def test_an_engine_that_keeps_dying_is_not_restarted_in_a_loop(tmp_path):
    """The first death is replaced by the next call; a second soon after waits out a pause
    (doubling while deaths go on) instead of a new process per call. The pause here is long
    enough that no test run reaches its end."""
    others = set(descendants(os.getpid()))  # the session's servers (Qdrant, SecantusDB), if started
    index = EdgeProcessIndex(tmp_path / "vectors", respawn_first_seconds=3600)
    await index.open()
    try:
        await index.upsert([point("acked")], 1)
        first = index.pid
        os.kill(first, signal.SIGKILL)
        await noticed_exit(index)
        assert await found(index, "acked")  # replaced at once
        second = index.pid
        assert second not in (None, first)
        os.kill(second, signal.SIGKILL)
        await noticed_exit(index)
        for _ in range(20):  # what a health probe and a retrying indexer would send meanwhile
            with pytest.raises(StorageUnavailable):
                await index.ping()
        assert index.pid is None
        assert not [pid for pid in descendants(os.getpid()) if pid not in {first, second, *others}]  # none started
    finally:
        await index.close()


async def test_signals_to_the_process_group_leave_the_engine_to_the_server(index):
    """Ctrl-C or a service manager's SIGTERM reach the whole group; the server stops the engine
    itself (it may still be writing while it stops), so the engine ignores them."""
    await index.upsert([point("m1")], 1)
    for signum in (signal.SIGINT, signal.SIGTERM):
        os.kill(index.pid, signum)
    await asyncio.sleep(0.2)
    await index.upsert([point("m2", 10)], 2)
    assert await found(index, "m2")


async def test_a_call_past_its_deadline_is_unavailable_and_never_runs(index):
    await index.ping()
    token = deadline.set_remaining(0.0)
    try:
        with pytest.raises(StorageUnavailable):
            await index.upsert([point("late")], 1)
    finally:
        deadline.reset(token)
    assert not await found(index, "late")


async def test_the_engine_process_exits_when_the_server_process_is_killed(tmp_path):
    """kill -9 of the server: the engine sees the end of the socket, closes its shards and
    exits, so that the next server on the data dir can open them; acknowledged writes stay."""
    script = textwrap.dedent(
        f"""
        import asyncio, sys, time
        from memoryd.storage.qdrant.edge_process import EdgeProcessIndex
        from tests.vectors.test_edge_process import point

        async def main():
            index = EdgeProcessIndex({str(tmp_path / "vectors")!r})
            await index.open()
            await index.upsert([point("acked")], 1)
            print(index.pid, flush=True)
            await asyncio.sleep(3600)

        asyncio.run(main())
        """
    )
    server = processes.popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True, cwd=os.getcwd())
    try:
        pid = int(server.stdout.readline())
        server.kill()
        server.wait(WAIT_SECONDS)
        wait_gone([pid], WAIT_SECONDS)
    finally:
        if server.poll() is None:
            server.kill()
    again = EdgeIndex(tmp_path / "vectors")
    await again.open()
    try:
        assert await found(again, "acked")
    finally:
        await again.close()
