"""A real `memoryd serve` process for client tests, and a gRPC fault-injecting proxy.

The server is the installed `memoryd` command (the same one users run) on an
ephemeral port, embedded SQLite in a temporary data dir. The proxy forwards raw
bytes to it and can fail chosen attempts with a status before they reach the
server, or cut a Watch stream; results always come from the real server.

Faults are set on the proxy object (Python tests), or by the calls themselves
through request headers (the Go, TypeScript and Java tests, which run the proxy
as a process: tests/clients/fault_proxy.py):
  memoryd-test-fault: CODE:N:ID     fail the first N attempts carrying ID with CODE
  memoryd-test-lost-ack: CODE:N:ID  the same, after the server has answered them
  memoryd-test-cut: CODE:N:ID       end the first Watch stream carrying ID with CODE
                                    after N events (0: right after the first response)
gRPC's own retries resend the headers, so N counts attempts of one call.
"""

from __future__ import annotations

import asyncio
import functools
import os
import shutil
import signal
import subprocess
import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import grpc

from memoryd.v1 import event_service_pb2

STARTUP_TIMEOUT = 30.0


def memoryd_executable() -> str:
    explicit = os.environ.get("MEMORYD_BIN")
    if explicit:
        return explicit
    beside_python = Path(sys.executable).with_name("memoryd")
    if beside_python.exists():
        return str(beside_python)
    found = shutil.which("memoryd")
    if found is None:
        raise RuntimeError("memoryd not found: pip install -e . (or set MEMORYD_BIN)")
    return found


class MemorydProcess:
    """`memoryd serve --listen 127.0.0.1:PORT --port-file F --data-dir D` as a child process."""

    def __init__(self, workdir: Path, env: dict[str, str] | None = None) -> None:
        self.workdir = workdir
        self.env = {**os.environ, **(env or {})}
        self.data_dir = workdir / "data"
        self.port_file = workdir / "port"
        self.log_path = workdir / "memoryd.log"
        self.port = 0  # 0 until the first start: then the bound port, reused by restarts
        self.process: subprocess.Popen | None = None

    @property
    def target(self) -> str:
        return f"127.0.0.1:{self.port}"

    def start(self) -> None:
        self.port_file.unlink(missing_ok=True)
        log = self.log_path.open("ab")
        self.process = subprocess.Popen(
            [
                memoryd_executable(),
                "serve",
                "--listen",
                f"127.0.0.1:{self.port}",
                "--http-listen",  # restarts reuse the gRPC port, whose + 1 may be taken by then
                "127.0.0.1:0",
                "--port-file",
                str(self.port_file),
                "--data-dir",
                str(self.data_dir),
            ],
            stdout=log,
            stderr=log,
            env=self.env,
        )
        log.close()
        deadline = time.monotonic() + STARTUP_TIMEOUT
        while not self.port_file.exists() or not self.port_file.read_text().strip():
            if self.process.poll() is not None:
                raise RuntimeError(f"memoryd exited with {self.process.returncode}:\n{self.log_path.read_text()}")
            if time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(f"memoryd did not start:\n{self.log_path.read_text()}")
            time.sleep(0.05)
        self.port = int(self.port_file.read_text())

    def stop(self) -> None:
        if self.process is None:
            return
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.process = None


@dataclass
class Fault:
    """Fail the first `times` attempts of `method` with `code`: before they reach the server,
    or, with `lost_ack`, after the server answered (the acknowledgement is lost on the way back)."""

    method: str
    code: grpc.StatusCode
    times: int = 1
    lost_ack: bool = False


@dataclass
class StreamCut:
    """End the first `times` Watch streams with `code` after `after` events (progress not counted)."""

    method: str
    code: grpc.StatusCode
    after: int
    times: int = 1


@dataclass
class FaultProxy:
    """A grpc.aio server that forwards every call, as bytes, to `upstream`."""

    upstream: str
    faults: list[Fault] = field(default_factory=list)
    cuts: list[StreamCut] = field(default_factory=list)
    attempts: Counter = field(default_factory=Counter)
    metadata: list[dict[str, str]] = field(default_factory=list)
    requests: list[tuple[str, bytes]] = field(default_factory=list)
    deadlines: list[float | None] = field(default_factory=list)  # seconds left on arrival
    port: int = 0
    _headers_seen: set[str] = field(default_factory=set)

    async def start(self) -> None:
        self._channel = grpc.aio.insecure_channel(self.upstream)
        self._server = grpc.aio.server(options=[("grpc.so_reuseport", 0)])
        self._server.add_generic_rpc_handlers([_Forwarder(self)])
        self.port = self._server.add_insecure_port("127.0.0.1:0")
        await self._server.start()

    async def stop(self) -> None:
        await self._server.stop(0)
        await self._channel.close()

    @property
    def target(self) -> str:
        return f"127.0.0.1:{self.port}"

    def _first_sight(self, header: str) -> bool:
        """True the first time a fault header value arrives (its ID makes it unique)."""
        if header in self._headers_seen:
            return False
        self._headers_seen.add(header)
        return True

    def _record(self, method: str, request: bytes, context: grpc.aio.ServicerContext) -> Fault | None:
        self.attempts[method] += 1
        self.requests.append((method, request))
        self.deadlines.append(context.time_remaining())
        headers = {k: v for k, v in context.invocation_metadata() if isinstance(v, str)}
        self.metadata.append(headers)
        for header, lost_ack in ((FAULT_HEADER, False), (LOST_ACK_HEADER, True)):
            if header in headers and self._first_sight(headers[header]):
                code, times = _parse_fault(headers[header])
                self.faults.append(Fault(method, code, times, lost_ack))
        if method in _Forwarder.STREAMING and CUT_HEADER in headers and self._first_sight(headers[CUT_HEADER]):
            code, after = _parse_fault(headers[CUT_HEADER])
            self.cuts.append(StreamCut(method, code, after))
        for fault in self.faults:
            if fault.method == method and fault.times > 0:
                fault.times -= 1
                return fault
        return None

    async def unary(self, method: str, request: bytes, context: grpc.aio.ServicerContext) -> bytes:
        fault = self._record(method, request, context)
        if fault is not None and not fault.lost_ack:
            await context.abort(fault.code, f"injected {fault.code.name}")
        call = self._channel.unary_unary(method)(
            request, metadata=_forwardable(context), timeout=context.time_remaining()
        )
        try:
            response = await call
        except grpc.aio.AioRpcError as err:
            await context.abort(err.code(), err.details(), tuple(err.trailing_metadata() or ()))
        if fault is not None:
            await context.abort(fault.code, f"injected {fault.code.name} after the server answered")
        return response

    async def stream(self, method: str, request: bytes, context: grpc.aio.ServicerContext):
        fault = self._record(method, request, context)
        if fault is not None:
            await context.abort(fault.code, f"injected {fault.code.name}")
        cut = next((c for c in self.cuts if c.method == method and c.times > 0), None)
        if cut is not None:
            cut.times -= 1
        call = self._channel.unary_stream(method)(request, metadata=_forwardable(context))
        try:
            await context.send_initial_metadata(await call.initial_metadata())
            sent = 0
            async for response in call:
                yield response
                if event_service_pb2.WatchResponse.FromString(response).HasField("event"):
                    sent += 1
                # after=0 cuts right after the first response (the server's join progress).
                if cut is not None and sent >= cut.after:
                    call.cancel()
                    await context.abort(cut.code, f"injected {cut.code.name}")
        except grpc.aio.AioRpcError as err:
            await context.abort(err.code(), err.details(), tuple(err.trailing_metadata() or ()))
        finally:
            call.cancel()


FAULT_HEADER = "memoryd-test-fault"
LOST_ACK_HEADER = "memoryd-test-lost-ack"
CUT_HEADER = "memoryd-test-cut"


def _parse_fault(value: str) -> tuple[grpc.StatusCode, int]:
    code, count, _id = value.split(":", 2)
    return grpc.StatusCode[code], int(count)


def _forwardable(context: grpc.aio.ServicerContext) -> tuple[tuple[str, str | bytes], ...]:
    """The caller's own metadata (authorization, ...), without transport headers."""
    return tuple(
        (key, value)
        for key, value in context.invocation_metadata() or ()
        if not key.startswith((":", "grpc-")) and key not in {"user-agent", "content-type", "te"}
    )


class _Forwarder(grpc.GenericRpcHandler):
    STREAMING = {"/memoryd.v1.EventService/Watch"}

    def __init__(self, proxy: FaultProxy) -> None:
        self.proxy = proxy

    def service(self, details: grpc.HandlerCallDetails):
        # partial keeps the coroutine / async-generator nature grpc.aio looks for.
        if details.method in self.STREAMING:
            return grpc.unary_stream_rpc_method_handler(functools.partial(self.proxy.stream, details.method))
        return grpc.unary_unary_rpc_method_handler(functools.partial(self.proxy.unary, details.method))


async def eventually(predicate, timeout: float = 20.0, interval: float = 0.05) -> None:
    """Waits until predicate() is true (a condition, not a timing assertion)."""
    deadline = asyncio.get_running_loop().time() + timeout
    while not predicate():
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError("condition not reached")
        await asyncio.sleep(interval)
