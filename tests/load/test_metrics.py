"""Prometheus metrics: off by default; with --metrics-port, grpc-prometheus series per RPC and code,
for calls over gRPC and over HTTP (Connect) alike."""

from __future__ import annotations

import asyncio
import socket
import urllib.error
import urllib.request
from pathlib import Path

import grpc
import httpx
import pytest

from memoryd.v1 import (
    event_service_pb2,
    event_service_pb2_grpc,
    memory_service_pb2,
    memory_service_pb2_grpc,
    message_pb2,
)
from tests.processes import MemorydServer


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _start(tmp_path: Path, *extra: str) -> MemorydServer:
    server = MemorydServer(tmp_path, *extra)
    server.start()
    return server


def _scrape(port: int) -> dict[str, float]:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as response:
        text = response.read().decode()
    samples = {}
    for line in text.splitlines():
        if line and not line.startswith("#"):
            name, _, value = line.rpartition(" ")
            samples[name] = float(value)
    return samples


def _sample(samples: dict[str, float], name: str, **labels: str) -> float:
    wanted = [f'{key}="{value}"' for key, value in labels.items()]
    matches = [v for k, v in samples.items() if k.split("{")[0] == name and all(w in k for w in wanted)]
    return sum(matches)


@pytest.fixture
def metrics_server(tmp_path):
    metrics_port, http_port = _free_port(), _free_port()
    server = _start(tmp_path, "--metrics-port", str(metrics_port), "--http-listen", f"127.0.0.1:{http_port}")
    yield server.target, metrics_port, http_port
    server.terminate()


async def test_metrics_count_calls_per_method_and_status(metrics_server):
    address, metrics_port, http_port = metrics_server
    async with grpc.aio.insecure_channel(address) as channel:
        memory = memory_service_pb2_grpc.MemoryServiceStub(channel)
        for i in range(3):
            await memory.SaveMessage(
                memory_service_pb2.SaveMessageRequest(
                    session_id="metrics", message=message_pb2.Message(role="user", content=f"hello {i}")
                )
            )
        await memory.GetHistory(memory_service_pb2.GetHistoryRequest(session_id="metrics", limit=10))
        with pytest.raises(grpc.aio.AioRpcError) as rejected:
            await memory.GetHistory(memory_service_pb2.GetHistoryRequest(session_id="", limit=10))
        assert rejected.value.code() == grpc.StatusCode.INVALID_ARGUMENT

        async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{http_port}") as http:
            body = {"session_id": "metrics", "limit": 10}
            assert (await http.post("/memoryd.v1.MemoryService/GetHistory", json=body)).status_code == 200
            assert (await http.post("/memoryd.v1.MemoryService/GetHistory", json={"limit": 1})).status_code == 400

        events = event_service_pb2_grpc.EventServiceStub(channel)
        watch = events.Watch(event_service_pb2.WatchRequest(session_ids=["metrics"]))
        try:
            assert (await watch.read()).HasField("progress")  # live: counted as sent before we scrape
            samples = {}
            for _ in range(100):  # the stream registers asynchronously on the server
                samples = _scrape(metrics_port)
                if _sample(samples, "memoryd_event_subscribers") == 1:
                    break
                await asyncio.sleep(0.05)
            assert _sample(samples, "memoryd_event_subscribers") == 1
        finally:
            watch.cancel()

    memory = {"grpc_service": "memoryd.v1.MemoryService", "grpc_type": "unary"}
    over_grpc, over_http = {**memory, "transport": "grpc"}, {**memory, "transport": "connect"}
    handled = "grpc_server_handled_total"
    assert _sample(samples, "grpc_server_started_total", grpc_method="SaveMessage", **over_grpc) == 3
    assert _sample(samples, handled, grpc_method="SaveMessage", grpc_code="OK", **over_grpc) == 3
    assert _sample(samples, handled, grpc_method="GetHistory", grpc_code="OK", **over_grpc) == 1
    assert _sample(samples, handled, grpc_method="GetHistory", grpc_code="INVALID_ARGUMENT", **over_grpc) == 1
    assert _sample(samples, handled, grpc_method="GetHistory", grpc_code="OK", **over_http) == 1
    assert _sample(samples, handled, grpc_method="GetHistory", grpc_code="INVALID_ARGUMENT", **over_http) == 1
    assert _sample(samples, "grpc_server_handling_seconds_count", grpc_method="SaveMessage", **over_grpc) == 3
    assert _sample(samples, "grpc_server_msg_received_total", grpc_method="SaveMessage", **over_grpc) == 3
    assert _sample(samples, "grpc_server_msg_sent_total", grpc_method="SaveMessage", **over_grpc) == 3
    watch = {"grpc_service": "memoryd.v1.EventService", "grpc_method": "Watch", "grpc_type": "server_stream"}
    assert _sample(samples, "grpc_server_started_total", **watch) == 1
    assert _sample(samples, "grpc_server_msg_sent_total", **watch) >= 1  # the progress that marks it live
    assert _sample(samples, "memoryd_store_operation_duration_seconds_count", operation="append", outcome="ok") == 3
    # Rejected before storage: only the valid GetHistory calls (one per transport) reached the store.
    assert _sample(samples, "memoryd_store_operation_duration_seconds_count", operation="history", outcome="ok") == 2
    assert "memoryd_vector_sync_lag_events" in samples


def _listening_ports(pid: int) -> set[int]:
    """TCP ports the process listens on, from /proc (Linux)."""
    inodes = set()
    fd_dir = Path(f"/proc/{pid}/fd")
    for fd in fd_dir.iterdir():
        try:
            target = str(fd.readlink())
        except OSError:
            continue
        if target.startswith("socket:["):
            inodes.add(target[8:-1])
    ports = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        with open(table) as f:
            next(f)
            for line in f:
                fields = line.split()
                local, state, inode = fields[1], fields[3], fields[9]
                if state == "0A" and inode in inodes:  # 0A: LISTEN
                    ports.add(int(local.rsplit(":", 1)[1], 16))
    return ports


@pytest.mark.skipif(not Path("/proc/net/tcp").exists(), reason="needs Linux /proc")
def test_metrics_are_off_by_default(tmp_path):
    server = _start(tmp_path, "--http-listen", "off")
    try:
        assert _listening_ports(server.pid) == {server.port}
    finally:
        server.terminate()
