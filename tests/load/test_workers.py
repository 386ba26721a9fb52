"""`memoryd serve --workers N`: one port, several processes (the embedded vector engine they share:
test_workers_embedded.py)."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import grpc
import pytest

from memoryd.v1 import memory_service_pb2, memory_service_pb2_grpc, message_pb2
from memoryd.v1 import vector_service_pb2, vector_service_pb2_grpc
from tests.conftest import free_port_pair
from tests.processes import MemorydServer, ServerProcess
from tests.vectors.conftest import unit
from tests import processes

MEMORYD = str(Path(sys.executable).parent / "memoryd")


def _children(pid: int) -> list[int]:
    return [int(p) for p in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]


@pytest.mark.skipif(not Path("/proc/self/task").exists(), reason="needs Linux /proc")
async def test_two_workers_share_one_port(tmp_path):
    server = MemorydServer(tmp_path, "--workers", "2", "--vectors-enabled", "false")
    port = server.start()
    try:
        assert len(_children(server.pid)) == 2
        # Separate channels are separate connections, which the kernel spreads over the workers;
        # every write lands in the one shared database whichever worker takes it.
        for i in range(8):
            async with grpc.aio.insecure_channel(
                f"127.0.0.1:{port}", options=[("grpc.use_local_subchannel_pool", 1)]
            ) as channel:
                stub = memory_service_pb2_grpc.MemoryServiceStub(channel)
                await stub.SaveMessage(
                    memory_service_pb2.SaveMessageRequest(
                        session_id="workers", message=message_pb2.Message(role="user", content=f"m{i}")
                    ),
                    timeout=10,
                )
        async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
            stub = memory_service_pb2_grpc.MemoryServiceStub(channel)
            history = await stub.GetHistory(memory_service_pb2.GetHistoryRequest(session_id="workers"), timeout=10)
        assert [m.content for m in history.messages] == [f"m{i}" for i in range(8)]
    finally:
        assert server.terminate() == 0


def _saves_handled(metrics_port: int) -> float:
    """SaveMessage calls one worker has answered (its Prometheus endpoint)."""
    import urllib.request

    with urllib.request.urlopen(f"http://127.0.0.1:{metrics_port}/metrics", timeout=10) as response:
        lines = response.read().decode().splitlines()
    return sum(
        float(line.rsplit(" ", 1)[1]) for line in lines
        if line.startswith("grpc_server_handled_total{") and 'grpc_method="SaveMessage"' in line
    )  # fmt: skip


@pytest.mark.skipif(not Path("/proc/self/task").exists(), reason="needs Linux /proc")
async def test_workers_index_into_a_shared_qdrant_server_and_find_by_keyword_and_vector(tmp_path, qdrant):
    """`--workers 2 --qdrant-url`, the gRPC port given: saves taken by each worker are indexed
    by that worker (keyword points) into the one real Qdrant server, and any worker finds any
    of them, by keyword and by vector."""
    metrics = free_port_pair()  # worker i serves /metrics on metrics + i
    server = MemorydServer(
        tmp_path, "--workers", "2", "--metrics-port", str(metrics), *qdrant.flags("server-grpc"),
    )  # fmt: skip
    port = server.start()
    model, words = "test:workers", ["glacier", "harbour", "orchard", "quarry", "meadow", "lagoon"]
    try:
        assert len(_children(server.pid)) == 2
        saved: dict[str, message_pb2.Message] = {}
        # Separate connections, spread by the kernel: until each worker has taken saves.
        for attempt in range(64):
            if len(saved) >= len(words) and all(_saves_handled(metrics + i) for i in range(2)):
                break
            word = words[attempt % len(words)]
            async with grpc.aio.insecure_channel(
                f"127.0.0.1:{port}", options=[("grpc.use_local_subchannel_pool", 1)]
            ) as channel:
                memory = memory_service_pb2_grpc.MemoryServiceStub(channel)
                reply = await memory.SaveMessage(
                    memory_service_pb2.SaveMessageRequest(
                        session_id=f"s-{word}", message=message_pb2.Message(role="user", content=f"notes on the {word}")
                    ),
                    timeout=10,
                )
                message = saved[word] = reply.message
                point = vector_service_pb2.VectorPoint(
                    model_id=model, vector=unit(10 * words.index(word)), session_id=f"s-{word}",
                    message_id=message.id, timestamp=message.timestamp, role="user", text=message.content,
                )  # fmt: skip
                vectors = vector_service_pb2_grpc.VectorServiceStub(channel)
                await vectors.UpsertVectors(vector_service_pb2.UpsertVectorsRequest(points=[point]), timeout=10)
        assert all(_saves_handled(metrics + i) for i in range(2)), "the kernel gave every connection to one worker"

        async def search(request: vector_service_pb2.SearchMemoryRequest) -> list[str]:
            async with grpc.aio.insecure_channel(
                f"127.0.0.1:{port}", options=[("grpc.use_local_subchannel_pool", 1)]
            ) as channel:
                vectors = vector_service_pb2_grpc.VectorServiceStub(channel)
                reply = await vectors.SearchMemory(request, timeout=10)
            return [hit.message_id for hit in reply.hits]

        # Keyword points are written in the background by the worker that took the save.
        deadline = asyncio.get_running_loop().time() + 60
        for word, message in saved.items():
            keyword = vector_service_pb2.SearchMemoryRequest(query_text=word, top_k=3, context_window=0)
            while (found := await search(keyword)) != [message.id]:
                assert asyncio.get_running_loop().time() < deadline, (word, found)
                await asyncio.sleep(0.1)
            nearest = vector_service_pb2.SearchMemoryRequest(
                query_vector=unit(10 * words.index(word)), model_id=model, top_k=1, context_window=0
            )
            assert await search(nearest) == [message.id]
    finally:
        assert server.terminate() == 0


def test_a_single_worker_does_not_share_its_port(tmp_path):
    first = MemorydServer(tmp_path / "a")
    port = first.start()
    try:
        second = processes.run(
            [MEMORYD, "serve", "--data-dir", str(tmp_path / "b"), "--listen", f"127.0.0.1:{port}"],
            capture_output=True, timeout=60,
        )  # fmt: skip
        assert second.returncode != 0
    finally:
        first.terminate()


@pytest.mark.skipif(not Path("/proc/self/task").exists(), reason="needs Linux /proc")
def test_workers_serve_http_on_one_shared_port(tmp_path):
    """`--listen host:0` with the default `--http-listen auto`: like gRPC's, the HTTP port is
    fixed in the parent before the fork (a free one, as port 0 means without workers), and
    every worker serves HTTP on it."""
    import json
    import urllib.request

    # --listen host:0, not MemorydServer's own --http-listen: the default `auto` is the point.
    server = ServerProcess(
        [MEMORYD, "serve", "--data-dir", str(tmp_path / "data"), "--listen", "127.0.0.1:0", "--workers", "2",
         "--vectors-enabled", "false"],
        tmp_path,
    )  # fmt: skip
    server.start()
    try:
        serving = [r for r in map(json.loads, server.log().splitlines()) if r.get("event") == "serving"]
        assert len(serving) == 2
        http_ports = {r["http_port"] for r in serving}
        assert len(http_ports) == 1 and 0 not in http_ports
        with urllib.request.urlopen(f"http://127.0.0.1:{http_ports.pop()}/healthz", timeout=10) as response:
            assert response.status == 200
    finally:
        assert server.terminate() == 0


# Each worker asks the parent to stop, waits until the parent's SIGTERM to it is pending
# (it arrives before the worker has a handler, as when a stop comes during start-up), then
# handles it; run_workers must call that a clean stop.
_STOP_DURING_STARTUP = """
import os, signal, sys, threading, time
from memoryd import workers

def worker_main(index, address, started):
    os.kill(os.getppid(), signal.SIGTERM)
    deadline = time.monotonic() + 30
    while signal.SIGTERM not in signal.sigpending() and time.monotonic() < deadline:
        time.sleep(0.01)
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    workers.accept_stop_signals()
    sys.exit(0 if stop.wait(30) else 3)

sys.exit(workers.run_workers(2, "127.0.0.1:0", worker_main))
"""


def test_a_stop_during_startup_is_a_clean_stop():
    done = processes.run([sys.executable, "-c", _STOP_DURING_STARTUP], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
