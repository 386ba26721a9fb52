"""Stalled HTTP/JSON clients against a real `memoryd serve` (issue 44, row 10):

    .venv/bin/python tests/load/bench_stalled_http.py --stalled 10000 --open-files 20000
    .venv/bin/python tests/load/bench_stalled_http.py --stalled 12000 --open-files 4096

Starts `memoryd serve` (embedded, vectors off) under the open-file limit given, opens
`--stalled` connections that each send a SaveMessage request's headers and part of its body
and then nothing, then times one SaveMessage over HTTP/JSON and one GetFullHistory over gRPC,
counts the stalled connections the server has already closed (for newer ones: the
connection bound), the server's descriptors, and the time from SIGTERM to its exit with
the stalled connections still open. The client needs more open files than --stalled (its
own limit is raised to the hard limit). Prints one JSON line. Results: docs/HTTP.md.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import grpc
import httpx

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from memoryd.v1 import memory_service_pb2 as mem_pb  # noqa: E402
from memoryd.v1 import memory_service_pb2_grpc as mem_grpc  # noqa: E402
from tests.processes import memoryd_executable  # noqa: E402

HEAD = (
    b"POST /memoryd.v1.MemoryService/SaveMessage HTTP/1.1\r\nHost: memoryd\r\nContent-Type: application/json\r\n"
    b'Content-Length: 100000\r\n\r\n{"session_id": "stalled", "message": {"role": "user", "content": "'
)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


async def stall(port: int) -> tuple[asyncio.StreamReader, asyncio.StreamWriter] | None:
    try:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        writer.write(HEAD)
        await writer.drain()
        return reader, writer
    except OSError:
        return None


async def closed(reader: asyncio.StreamReader) -> bool:
    try:
        return await asyncio.wait_for(reader.read(1), 0.01) == b""
    except (TimeoutError, OSError):
        return False


async def run(stalled: int, open_files: int, workdir: Path) -> dict:
    grpc_port, http_port = free_port(), free_port()
    port_file = workdir / "memoryd.port"

    def limited() -> None:
        resource.setrlimit(resource.RLIMIT_NOFILE, (open_files, open_files))

    with (workdir / "memoryd.log").open("wb") as log:
        server = subprocess.Popen(
            [memoryd_executable(), "serve", "--listen", f"127.0.0.1:{grpc_port}", "--http-listen",
             f"127.0.0.1:{http_port}", "--data-dir", str(workdir / "data"), "--vectors-enabled", "false",
             "--port-file", str(port_file)],
            stdout=subprocess.DEVNULL, stderr=log, preexec_fn=limited,
        )  # fmt: skip
    connections: list[tuple[asyncio.StreamReader, asyncio.StreamWriter]] = []
    try:
        while not port_file.exists():
            assert server.poll() is None, (workdir / "memoryd.log").read_text()[-2000:]
            await asyncio.sleep(0.05)
        started = time.monotonic()
        for first in range(0, stalled, 500):
            opened = await asyncio.gather(*(stall(http_port) for _ in range(first, min(stalled, first + 500))))
            connections += [pair for pair in opened if pair is not None]
        result: dict = {"stalled": stalled, "opened": len(connections), "open_files": open_files,
                        "open_seconds": round(time.monotonic() - started, 1),
                        "server_descriptors": len(os.listdir(f"/proc/{server.pid}/fd"))}  # fmt: skip
        started = time.monotonic()
        async with httpx.AsyncClient(timeout=120) as http:
            response = await http.post(
                f"http://127.0.0.1:{http_port}/memoryd.v1.MemoryService/SaveMessage",
                json={"session_id": "caller", "message": {"role": "user", "content": "hi"}},
            )
        result["http_status"], result["http_seconds"] = response.status_code, round(time.monotonic() - started, 2)
        started = time.monotonic()
        async with grpc.aio.insecure_channel(f"127.0.0.1:{grpc_port}") as channel:
            history = await mem_grpc.MemoryServiceStub(channel).GetFullHistory(
                mem_pb.GetFullHistoryRequest(session_id="caller"), timeout=120
            )
        result["grpc_messages"], result["grpc_seconds"] = len(history.messages), round(time.monotonic() - started, 2)
        result["closed_for_newer"] = sum(await asyncio.gather(*(closed(reader) for reader, _ in connections)))
        started = time.monotonic()
        server.terminate()
        while server.poll() is None:
            await asyncio.sleep(0.05)
        result["stop_seconds"], result["exit_code"] = round(time.monotonic() - started, 1), server.returncode
        return result
    finally:
        for _, writer in connections:
            writer.close()
        if server.poll() is None:
            server.kill()
            server.wait(30)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--stalled", type=int, default=10_000)
    parser.add_argument("--open-files", type=int, default=20_000, help="the server's open-file limit")
    args = parser.parse_args()
    _soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    with tempfile.TemporaryDirectory(prefix="memoryd-stalled-") as workdir:
        print(json.dumps(asyncio.run(run(args.stalled, args.open_files, Path(workdir)))))


if __name__ == "__main__":
    main()
