"""`memoryd serve --workers N`: one port, several processes; refused where it cannot work."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import grpc
import pytest

from memoryd.v1 import memory_service_pb2, memory_service_pb2_grpc, message_pb2

MEMORYD = str(Path(sys.executable).parent / "memoryd")


def _serve(tmp_path: Path, *extra: str) -> subprocess.Popen:
    return subprocess.Popen(
        [MEMORYD, "serve", "--data-dir", str(tmp_path / "data"), *extra],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )


def _wait_port(process: subprocess.Popen, port_file: Path) -> int:
    deadline = time.monotonic() + 60
    while not (port_file.exists() and port_file.read_text().strip().isdigit()):
        if process.poll() is not None:
            raise RuntimeError(process.stderr.read())
        if time.monotonic() > deadline:
            process.kill()
            raise RuntimeError("memoryd did not start")
        time.sleep(0.05)
    return int(port_file.read_text())


def _stop(process: subprocess.Popen) -> int:
    process.terminate()
    try:
        return process.wait(30)
    except subprocess.TimeoutExpired:
        process.kill()
        return process.wait()


def _children(pid: int) -> list[int]:
    return [int(p) for p in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]


def test_several_workers_need_a_qdrant_server(tmp_path):
    process = _serve(tmp_path, "--listen", "127.0.0.1:0", "--workers", "2")
    _, stderr = process.communicate(timeout=60)
    assert process.returncode != 0
    assert "Qdrant Edge" in stderr and "needs a Qdrant server" in stderr and "--workers 2" in stderr


@pytest.mark.skipif(not Path("/proc/self/task").exists(), reason="needs Linux /proc")
async def test_two_workers_share_one_port(tmp_path):
    port_file = tmp_path / "port"
    process = _serve(
        tmp_path, "--listen", "127.0.0.1:0", "--workers", "2", "--vectors-enabled", "false", "--port-file", str(port_file)
    )
    try:
        port = _wait_port(process, port_file)
        assert len(_children(process.pid)) == 2
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
        assert _stop(process) == 0


def test_a_single_worker_does_not_share_its_port(tmp_path):
    port_file = tmp_path / "port"
    first = _serve(tmp_path / "a", "--listen", "127.0.0.1:0", "--port-file", str(port_file))
    try:
        port = _wait_port(first, port_file)
        second = _serve(tmp_path / "b", "--listen", f"127.0.0.1:{port}")
        try:
            second.communicate(timeout=60)
        finally:
            if second.poll() is None:
                second.kill()
        assert second.returncode != 0
    finally:
        _stop(first)


@pytest.mark.skipif(not Path("/proc/self/task").exists(), reason="needs Linux /proc")
def test_workers_serve_http_on_one_shared_port(tmp_path):
    """`--listen host:0` with the default `--http-listen auto`: like gRPC's, the HTTP port is
    fixed in the parent before the fork (a free one, as port 0 means without workers), and
    every worker serves HTTP on it."""
    import json
    import urllib.request

    port_file, log_path = tmp_path / "port", tmp_path / "stderr"
    with log_path.open("w") as log:
        process = subprocess.Popen(
            [MEMORYD, "serve", "--data-dir", str(tmp_path / "data"), "--listen", "127.0.0.1:0", "--workers", "2",
             "--vectors-enabled", "false", "--port-file", str(port_file)],
            stdout=subprocess.DEVNULL, stderr=log, text=True,
        )
    try:
        _wait_port(process, port_file)
        serving = [r for r in map(json.loads, log_path.read_text().splitlines()) if r.get("event") == "serving"]
        assert len(serving) == 2
        http_ports = {r["http_port"] for r in serving}
        assert len(http_ports) == 1 and 0 not in http_ports
        with urllib.request.urlopen(f"http://127.0.0.1:{http_ports.pop()}/healthz", timeout=10) as response:
            assert response.status == 200
    finally:
        assert _stop(process) == 0
