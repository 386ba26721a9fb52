"""A real `memoryd serve` process for client tests, and a gRPC fault-injecting proxy.

The server is the installed `memoryd` command (the same one users run) on an
ephemeral port, embedded SQLite in a temporary data dir (tests.processes.MemorydServer). The proxy forwards raw
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
from collections import Counter
from dataclasses import dataclass, field

import grpc

from memoryd.v1 import event_service_pb2


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
