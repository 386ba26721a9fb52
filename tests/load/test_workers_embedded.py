"""`memoryd serve --workers N` on the embedded default: N workers on one port share the SQLite
file and one Qdrant Edge engine process per data dir (storage/qdrant/edge_shared.py); a worker
killed with -9 is replaced and nothing acknowledged is lost; no engine outlives the server."""

from __future__ import annotations

import asyncio
import os
import signal
import sys
import time
from collections import Counter
from pathlib import Path

import grpc
import pytest

from memoryd.v1 import memory_service_pb2 as mem
from memoryd.v1 import memory_service_pb2_grpc, message_pb2
from memoryd.v1 import vector_service_pb2, vector_service_pb2_grpc
from tests.conftest import free_port_pair
from tests.load.test_workers import _saves_handled
from tests.processes import MemorydServer, alive, descendants, wait_gone
from tests import processes

pytestmark = pytest.mark.skipif(not Path("/proc/self/task").exists(), reason="needs Linux /proc")

APPENDERS = 16
MESSAGES_PER_APPENDER = 12


def _cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
    except FileNotFoundError:
        return ""


def _engines(data_dir: Path) -> list[int]:
    """Engine processes (any parent) serving this data dir: shared (unix:) or a worker's own child."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit() and alive(int(entry)):
            line = _cmdline(int(entry))
            engine = "memoryd.engine" in line or "memoryd.storage.qdrant.edge_process" in line
            if engine and str(data_dir / "vectors") in line:
                found.append(int(entry))
    return found


def _workers(server: MemorydServer) -> list[int]:
    return [pid for pid in descendants(server.pid) if " serve " in _cmdline(pid) and pid not in _engines(server.data_dir)]


def _channel(port: int) -> grpc.aio.Channel:
    """A connection of its own (the kernel spreads connections, not calls, over the workers)."""
    return grpc.aio.insecure_channel(f"127.0.0.1:{port}", options=[("grpc.use_local_subchannel_pool", 1)])


async def _history(port: int, session: str) -> list[message_pb2.Message]:
    messages, token = [], ""
    async with _channel(port) as channel:
        stub = memory_service_pb2_grpc.MemoryServiceStub(channel)
        while True:
            page = await stub.GetFullHistory(
                mem.GetFullHistoryRequest(session_id=session, page_size=1000, page_token=token), timeout=30
            )
            messages += page.messages
            token = page.next_page_token
            if not token:
                return messages


async def test_two_workers_share_one_engine_and_find_each_others_saves_by_keyword(tmp_path):
    metrics = free_port_pair()  # worker i serves /metrics on metrics + i
    server = MemorydServer(tmp_path, "--workers", "2", "--metrics-port", str(metrics))
    port = server.start()
    words = ["glacier", "harbour", "orchard", "quarry", "meadow", "lagoon"]
    try:
        engines = _engines(server.data_dir)
        assert len(engines) == 1, engines  # one per data dir, the supervisor's child
        assert engines[0] in [int(p) for p in Path(f"/proc/{server.pid}/task/{server.pid}/children").read_text().split()]
        assert len(_workers(server)) == 2
        # Every save of a word has the same text: recall shows one hit of repeated texts, any of them.
        saved: dict[str, set[str]] = {}
        for attempt in range(64):  # new connections until each worker has taken saves
            if len(saved) >= len(words) and all(_saves_handled(metrics + i) for i in range(2)):
                break
            word = words[attempt % len(words)]
            async with _channel(port) as channel:
                reply = await memory_service_pb2_grpc.MemoryServiceStub(channel).SaveMessage(
                    mem.SaveMessageRequest(
                        session_id=f"s-{word}", message=message_pb2.Message(role="user", content=f"notes on the {word}")
                    ),
                    timeout=10,
                )
            saved.setdefault(word, set()).add(reply.message.id)
        assert all(_saves_handled(metrics + i) for i in range(2)), "the kernel gave every connection to one worker"

        deadline = time.monotonic() + 60  # keyword points are written in the background
        for word, message_ids in saved.items():
            for _ in range(4):  # asked over several connections: each worker finds every save
                while True:
                    async with _channel(port) as channel:
                        reply = await vector_service_pb2_grpc.VectorServiceStub(channel).SearchMemory(
                            vector_service_pb2.SearchMemoryRequest(query_text=word, top_k=3, context_window=0), timeout=10
                        )
                    found = [hit.message_id for hit in reply.hits]
                    if message_ids & set(found):
                        break
                    assert time.monotonic() < deadline, (word, found)
                    await asyncio.sleep(0.1)
        assert _engines(server.data_dir) == engines  # no worker started one of its own
    finally:
        assert server.terminate() == 0
    assert not _engines(server.data_dir)
    assert not (server.data_dir / "vector-engine.sock").exists()


@pytest.mark.parametrize("workers", [1, 2])
async def test_sixteen_appenders_on_one_session_lose_nothing(tmp_path, workers):
    """16 concurrent appenders, each on its own connection, on one session: every message is
    stored once, the seqs are 1..n without a gap, and each appender's own order holds."""
    server = MemorydServer(tmp_path, "--workers", str(workers))
    port = server.start()
    try:
        async def appender(n: int) -> list[str]:
            ids = []
            async with _channel(port) as channel:
                stub = memory_service_pb2_grpc.MemoryServiceStub(channel)
                for i in range(MESSAGES_PER_APPENDER):
                    reply = await stub.SaveMessage(
                        mem.SaveMessageRequest(session_id="race", message=message_pb2.Message(role="user", content=f"a{n}:{i}")),
                        timeout=30,
                    )
                    ids.append(reply.message.id)
            return ids

        acknowledged = [i for ids in await asyncio.gather(*(appender(n) for n in range(APPENDERS))) for i in ids]
        history = await _history(port, "race")
    finally:
        assert server.terminate() == 0
    assert len(acknowledged) == APPENDERS * MESSAGES_PER_APPENDER
    assert sorted(m.id for m in history) == sorted(acknowledged)  # 0 lost, 0 twice
    assert [m.seq for m in history] == list(range(1, len(acknowledged) + 1))
    for n in range(APPENDERS):
        own = [int(m.content.split(":")[1]) for m in history if m.content.startswith(f"a{n}:")]
        assert own == list(range(MESSAGES_PER_APPENDER))


async def test_a_worker_killed_with_sigkill_is_replaced_and_loses_nothing(tmp_path):
    server = MemorydServer(tmp_path, "--workers", "2")
    port = server.start()
    acknowledged: Counter = Counter()
    stop = asyncio.Event()
    try:
        engine = _engines(server.data_dir)
        victim, survivor = _workers(server)

        async def writer(n: int) -> None:
            # Each call on a new connection, retried (same idempotency key) while the killed worker's
            # connections fail: a client's retry loop.
            i = 0
            while not stop.is_set():
                key = f"w{n}-{i}"
                for _ in range(100):
                    try:
                        async with _channel(port) as channel:
                            reply = await memory_service_pb2_grpc.MemoryServiceStub(channel).SaveMessage(
                                mem.SaveMessageRequest(
                                    session_id="kill", idempotency_key=key,
                                    message=message_pb2.Message(role="user", content=key),
                                ),
                                timeout=10,
                            )  # fmt: skip
                        acknowledged[(key, reply.message.id)] += 1
                        break
                    except grpc.aio.AioRpcError as error:
                        if error.code() not in (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.CANCELLED):
                            raise
                        await asyncio.sleep(0.05)
                i += 1

        writers = [asyncio.create_task(writer(n)) for n in range(8)]
        while sum(acknowledged.values()) < 40:
            await asyncio.sleep(0.05)
        os.kill(victim, signal.SIGKILL)
        before_kill = sum(acknowledged.values())
        deadline = time.monotonic() + 60
        while not (len(_workers(server)) == 2 and "worker replaced" in server.log()):
            assert time.monotonic() < deadline, server.log()[-3000:]
            await asyncio.sleep(0.1)
        replacement = set(_workers(server)) - {survivor}
        assert replacement and victim not in replacement
        while sum(acknowledged.values()) < before_kill + 40:  # the set serves on
            await asyncio.sleep(0.05)
        stop.set()
        await asyncio.gather(*writers)
        assert _engines(server.data_dir) == engine  # the engine was not restarted
        history = await _history(port, "kill")
    finally:
        stop.set()
        assert server.terminate() == 0
    stored = Counter((m.content, m.id) for m in history)
    assert stored == Counter(set(acknowledged)), "an acknowledged write is missing or stored twice"
    assert '"exited: replacing it"' in server.log() or "exited: replacing it" in server.log()


async def test_an_engine_killed_with_sigkill_is_replaced_and_the_workers_reconnect(tmp_path):
    server = MemorydServer(tmp_path, "--workers", "2")
    port = server.start()
    try:
        [engine] = _engines(server.data_dir)
        os.kill(engine, signal.SIGKILL)
        deadline = time.monotonic() + 60
        # Replaced, and listening (its second "serving" line) before the save below is indexed.
        while (
            len(replacement := [pid for pid in _engines(server.data_dir) if pid != engine]) != 1
            or server.log().count("vector engine serving") < 2
        ):
            assert time.monotonic() < deadline, server.log()[-3000:]
            await asyncio.sleep(0.1)
        async with _channel(port) as channel:
            saved = await memory_service_pb2_grpc.MemoryServiceStub(channel).SaveMessage(
                mem.SaveMessageRequest(session_id="after", message=message_pb2.Message(role="user", content="a walrus")),
                timeout=10,
            )
        while True:  # every worker reconnects on its next call (the first ones may be UNAVAILABLE)
            try:
                async with _channel(port) as channel:
                    reply = await vector_service_pb2_grpc.VectorServiceStub(channel).SearchMemory(
                        vector_service_pb2.SearchMemoryRequest(query_text="walrus", top_k=3, context_window=0), timeout=10
                    )
                if [hit.message_id for hit in reply.hits] == [saved.message.id]:
                    break
            except grpc.aio.AioRpcError as error:
                assert error.code() == grpc.StatusCode.UNAVAILABLE
            assert time.monotonic() < deadline, server.log()[-3000:]
            await asyncio.sleep(0.2)
        assert _engines(server.data_dir) == replacement
    finally:
        assert server.terminate() == 0
    assert not _engines(server.data_dir)


def test_no_engine_outlives_a_supervisor_killed_with_sigkill(tmp_path):
    server = MemorydServer(tmp_path, "--workers", "2")
    server.start()
    family = descendants(server.pid)
    engines = _engines(server.data_dir)
    assert len(engines) == 1
    server.process.kill()  # the workers follow (parent-death signal); the engine's pipe ends
    server.process.wait(30)
    wait_gone(family, 30)
    assert not _engines(server.data_dir)


def test_in_process_edge_cannot_be_shared(tmp_path):
    process = processes.run(
        [str(Path(sys.executable).parent / "memoryd"), "serve", "--data-dir", str(tmp_path / "data"),
         "--listen", "127.0.0.1:0", "--workers", "2", "--vector-engine-process", "false"],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert process.returncode == 2
    assert "--workers 2 needs Qdrant Edge in its own process" in process.stderr


# A worker that dies as soon as it serves, every time: replaced with backoff until the limit,
# then the parent stops and exits 1 (the service manager sees a crash loop).
_CRASH_LOOP = """
import os, sys, time
from memoryd import workers

workers.RESTART_BACKOFF_MAX_S = 0.01

def worker_main(index, address, started):
    started()
    time.sleep(0.2)
    os._exit(7)

sys.exit(workers.run_workers(1, "127.0.0.1:0", worker_main))
"""


def test_a_worker_that_keeps_dying_stops_the_set_after_the_restart_limit():
    done = processes.run([sys.executable, "-c", _CRASH_LOOP], capture_output=True, text=True, timeout=120)
    assert done.returncode == 1, done.stderr[-2000:]
    from memoryd import workers

    assert done.stderr.count("exited: replacing it") == workers.RESTART_LIMIT
    assert "exited too often: stopping" in done.stderr
