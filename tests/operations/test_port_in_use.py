"""Every port memoryd opens names itself when it is taken (issue 44, row 9): the startup error
says which listener (its flag), the address and the port, never a bare `[Errno 98]`, for one
process and for a `--workers` set, which exits as a whole with that line."""

from __future__ import annotations

import json
import os
import socket

import pytest

from tests import processes
from tests.processes import memoryd_executable


def taken_port() -> socket.socket:
    """A socket listening on a free loopback port, without SO_REUSEPORT: nobody else can bind it."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    sock.listen(8)
    return sock


def failed_start(tmp_path, *args: str) -> tuple[int, list[dict], str]:
    process = processes.run(
        [memoryd_executable(), "serve", "--data-dir", str(tmp_path / "data"), "--vectors-enabled", "false", *args],
        capture_output=True, text=True, timeout=90, env={**os.environ},
    )  # fmt: skip
    records = [json.loads(line) for line in process.stderr.splitlines() if line.strip()]
    return process.returncode, records, process.stderr


GRPC, HTTP, METRICS = "gRPC (--listen)", "HTTP/JSON (--http-listen)", "metrics (--metrics-port {port})"
TAKEN, ANY, WORKERS = "127.0.0.1:{port}", "127.0.0.1:0", ("--workers", "2")
CASES = {
    "grpc": (["--listen", TAKEN, "--http-listen", "off"], GRPC),
    "http": (["--listen", ANY, "--http-listen", TAKEN], HTTP),
    "metrics": (["--listen", ANY, "--http-listen", "off", "--metrics-port", "{port}"], METRICS),
    "workers-grpc": ([*WORKERS, "--listen", TAKEN, "--http-listen", "off"], GRPC),
    "workers-http": ([*WORKERS, "--listen", ANY, "--http-listen", TAKEN], HTTP),
    "workers-metrics": ([*WORKERS, "--listen", ANY, "--http-listen", "off", "--metrics-port", "{port}"], METRICS),
}


@pytest.mark.parametrize("case", CASES)
def test_a_port_in_use_is_named_with_its_listener(tmp_path, case):
    args, listener = CASES[case]
    blocker = taken_port()
    try:
        port = blocker.getsockname()[1]
        code, records, text = failed_start(tmp_path, *(a.format(port=port) for a in args))
    finally:
        blocker.close()
    assert code == 1, text
    assert "Traceback" not in text, text
    failures = [r for r in records if r["event"] == "startup_failed"]
    assert failures, text
    expected = f"{listener.format(port=port)} cannot listen on 127.0.0.1:{port}: port {port} is already in use"
    assert any(r["error"].startswith(expected) for r in failures), failures
    assert not any(r.get("error", "").startswith("[Errno") for r in records), records


def test_the_mcp_servers_http_port_in_use_is_named():
    """`memoryd mcp --transport http` is a port memoryd opens too."""
    blocker = taken_port()
    try:
        port = blocker.getsockname()[1]
        process = processes.run(
            [memoryd_executable(), "mcp", "--transport", "http", "--port", str(port)],
            capture_output=True, text=True, timeout=90,
        )  # fmt: skip
    finally:
        blocker.close()
    assert process.returncode == 1 and "Traceback" not in process.stderr, process.stderr
    (line,) = [json.loads(text) for text in process.stderr.splitlines() if text.strip()]
    assert line["level"] == "error" and line["event"].startswith(
        f"memoryd-mcp: MCP over HTTP (--host/--port) cannot listen on 127.0.0.1:{port}: port {port} is already in use"
    )
