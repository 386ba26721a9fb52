"""The wrapper every servicer method goes through: who calls (authentication, scope and
user confinement: transport/access.py), request decoding, bytes in flight, deadline, error
mapping, logging; and `add_service`, which registers a servicer so that requests reach that
wrapper undecoded.

grpc.aio decodes a request before the handler runs and answers a malformed one (invalid
UTF-8 in a string, nesting past the decoder's depth limit, corrupt bytes) with UNKNOWN and
an internal type name. Services registered by `add_service` take the request as bytes and
the wrapper decodes it, so that such a request answers INVALID_ARGUMENT with a plain
message (reason MALFORMED_REQUEST), like every other bad request.

Other transports (an HTTP/JSON gateway) call the same wrapped methods with decoded
requests; `failure_status` is the status any failure leaves with.
"""

from __future__ import annotations

import asyncio
import collections
import functools
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import grpc
import structlog
from google.protobuf import message as protobuf_message
from google.protobuf import message_factory
from google.protobuf.descriptor import ServiceDescriptor

from memoryd.domain import deadline
from memoryd.domain.errors import MalformedRequest, MemorydError, StorageUnavailable
from memoryd.transport.principals import Caller
from memoryd.transport.status import internal_status, to_status

log = structlog.get_logger("memoryd.rpc")

# Requests smaller than this are not counted against the bytes in flight: they cost little
# memory, and must not queue behind a burst of large writes.
INFLIGHT_MIN_BYTES = 64 << 10


def failure_status(method: str, error: BaseException) -> grpc.Status:
    """The status a failed call answers with, logged once: a domain error's mapped status
    (info level, reason only: never the request's content), anything else INTERNAL (error
    level, with the traceback)."""
    if isinstance(error, MemorydError):
        status = to_status(error)
        log.info("rpc_failed", method=method, code=status.code.name, reason=error.reason)
    else:
        status = internal_status()
        log.error("rpc_crashed", method=method, error_type=type(error).__name__, exc_info=error)
    return status


async def _abort(context: grpc.aio.ServicerContext, method: str, error: BaseException) -> None:
    status = failure_status(method, error)
    await context.abort(status.code, status.details, status.trailing_metadata)


def decode(request_type: type[protobuf_message.Message], raw: bytes) -> protobuf_message.Message:
    """Parse a request off the wire; MalformedRequest (INVALID_ARGUMENT) when it is not one."""
    try:
        return request_type.FromString(raw)
    except protobuf_message.DecodeError:
        raise MalformedRequest(
            f"the request is not a valid {request_type.DESCRIPTOR.full_name}: malformed protobuf, "
            "invalid UTF-8 in a string field, or messages nested deeper than the decoder allows"
        ) from None


class InflightBytes:
    """At most `limit` bytes of (large) requests are handled at once; the others wait in
    arrival order. A request larger than `limit` runs once it would be alone. Waiting
    counts against the call's deadline (it answers UNAVAILABLE when that runs out)."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.used = 0
        self._waiters: collections.deque[tuple[int, asyncio.Future]] = collections.deque()

    async def run(self, size: int, start: Callable[[], Awaitable[Any]]) -> Any:
        """Await `start()` once `size` more bytes fit (at once for a small request)."""
        if size < INFLIGHT_MIN_BYTES:
            return await start()
        size = min(size, self.limit)
        await self._acquire(size)
        try:
            return await start()
        finally:
            self.used -= size
            self._wake()

    async def _acquire(self, size: int) -> None:
        if not self._waiters and self.used + size <= self.limit:
            self.used += size
            return
        turn = asyncio.get_running_loop().create_future()
        self._waiters.append((size, turn))
        try:
            await turn
        except asyncio.CancelledError:
            if turn.done() and not turn.cancelled():  # granted just as we were cancelled
                self.used -= size
                self._wake()
            raise

    def _wake(self) -> None:
        while self._waiters:
            size, turn = self._waiters[0]
            if turn.cancelled():
                self._waiters.popleft()
                continue
            if self.used + size > self.limit:
                return
            self._waiters.popleft()
            self.used += size
            turn.set_result(None)


# Time kept back from the caller's deadline to send the answer: 15% of it, at least
# 300 ms (a busy event loop or a slow network must not turn the answer into the client's
# own DEADLINE_EXCEEDED), at most 1.5 s, and never more than half of a short deadline.
ANSWER_MARGIN_FRACTION = 0.15
ANSWER_MARGIN_MIN_SECONDS = 0.3
ANSWER_MARGIN_MAX_SECONDS = 1.5


def _answer_margin(remaining: float) -> float:
    margin = min(max(remaining * ANSWER_MARGIN_FRACTION, ANSWER_MARGIN_MIN_SECONDS), ANSWER_MARGIN_MAX_SECONDS)
    return min(margin, remaining / 2)


def _budgets(remaining: float | None) -> tuple[float | None, float | None]:
    """(store budget, backstop) in seconds from now, for a call with `remaining` seconds.

    Stores get the deadline minus the whole margin and give up by themselves first (their
    own timeout errors clean up fast: a MongoDB transaction aborted after its client-side
    timeout expired sends nothing). The backstop cancels at half the margin; cancelling a
    store that is still inside a network call can itself wait on the network (pymongo aborts
    the transaction on CancelledError), so it must not be what normally answers.
    """
    if remaining is None or remaining > 1e6:
        return None, None
    margin = _answer_margin(remaining)
    return max(remaining - margin, 0.0), max(remaining - margin / 2, 0.0)


async def _answer_before(backstop: float | None, call: Awaitable[Any]) -> Any:
    """Stop waiting at `backstop` and answer UNAVAILABLE (retryable, with RetryInfo) rather
    than let the caller's deadline pass in silence: a store that hangs (unreachable server,
    lock held by a dead client) still gets a status the client can act on.

    asyncio.timeout's mechanism (a timer that cancels the task, told apart from any other
    cancellation by Task.uncancel) without its context manager's per-call objects: every
    unary call pays this."""
    if backstop is None:
        return await call
    task = asyncio.current_task()
    assert task is not None  # awaited in a task: a call handler
    loop = asyncio.get_running_loop()
    fired = False

    def expire() -> None:
        nonlocal fired
        fired = True
        task.cancel()

    timer = loop.call_at(loop.time() + backstop, expire)
    try:
        return await call
    except asyncio.CancelledError:
        if fired and task.uncancel() == 0:
            raise StorageUnavailable(
                "storage did not answer before the call's deadline", reason="STORAGE_TIMEOUT"
            ) from None
        raise
    finally:
        timer.cancel()


class CallerContext:
    """A call's context as servicer methods see it: the transport's (grpc.aio's, or the HTTP
    transport's), and `caller`, who the Gate admitted (transport/principals.py)."""

    __slots__ = ("_context", "caller")

    def __init__(self, context: Any, caller: Caller) -> None:
        self._context = context
        self.caller = caller

    def __getattr__(self, name: str) -> Any:
        return getattr(self._context, name)


async def confined_call(
    method: Callable[..., Awaitable[Any]], servicer: Any, request: Any, context: CallerContext, rpc: str
) -> Any:
    """`method(servicer, request, context, tenant)` once the Gate let the request through: for
    a caller bound to one end user, what it names must be that user's."""
    await servicer.auth.confine(context.caller, rpc, request)
    return await method(servicer, request, context, context.caller.tenant)


async def confined_stream(
    method: Callable[..., AsyncIterator[Any]], servicer: Any, request: Any, context: CallerContext, rpc: str
):
    """The items of a server-streaming `method`, as confined_call."""
    await servicer.auth.confine(context.caller, rpc, request)
    async for item in method(servicer, request, context, context.caller.tenant):
        yield item


async def call_unary(body: Callable[..., Awaitable[Any]], servicer: Any, request: Any, context: Any, rpc: str) -> Any:
    """The transport-neutral core of a unary call `rpc` (its full name): admission (token and
    scope), deadline budget, backstop.

    `body(servicer, request, context)` runs the method with a CallerContext (decoding first
    when the request is bytes, then confined_call); `context` needs `invocation_metadata()` and
    `time_remaining()` (a grpc.aio context, or the HTTP transport's). Raises what the call
    raised; each transport answers it with failure_status.
    """
    store_budget, backstop = _budgets(context.time_remaining())
    token = deadline.set_remaining(store_budget)
    try:
        caller = await servicer.auth.admit(context, rpc)
        return await _answer_before(backstop, body(servicer, request, CallerContext(context, caller)))
    finally:
        deadline.reset(token)


async def stream_items(body: Callable[..., AsyncIterator[Any]], servicer: Any, request: Any, context: Any, rpc: str):
    """The transport-neutral core of a server-streaming call: admission, then the items of
    `body(servicer, request, context)` (confined_stream, after decoding when needed)."""
    caller = await servicer.auth.admit(context, rpc)
    async for item in body(servicer, request, CallerContext(context, caller)):
        yield item


def unary(method: Callable[..., Awaitable[Any]]):
    """Wrap `async def Rpc(self, request, context, tenant)` as a grpc.aio unary handler.

    The handler's `__wrapped__` (functools.wraps) is `method`, for other transports.
    `rpc` (add_service) is the method's full name, whose access the Gate applies. With
    `request_type` (add_service) the request arrives as bytes and is decoded here, after
    authentication; `inflight` bounds the bytes of large requests handled at once.
    """
    name = method.__name__

    @functools.wraps(method)
    async def handler(self, request, context: grpc.aio.ServicerContext, *, rpc: str, request_type=None, inflight=None):
        async def body(servicer, request, context: CallerContext):
            if request_type is None:
                return await confined_call(method, servicer, request, context, rpc)

            def start():  # decoding waits for the bytes in flight too
                return confined_call(method, servicer, decode(request_type, request), context, rpc)

            return await (inflight.run(len(request), start) if inflight is not None else start())

        started = time.perf_counter()
        try:
            response = await call_unary(body, self, request, context, rpc)
        except Exception as error:  # noqa: BLE001 - every failure leaves as a gRPC status
            await _abort(context, name, error)
        log.debug("rpc", method=name, ms=round((time.perf_counter() - started) * 1000, 3))
        return response

    return handler


def server_stream(method: Callable[..., AsyncIterator[Any]]):
    """Wrap `async def Rpc(self, request, context, tenant)` (an async generator); with
    `request_type` the request arrives as bytes and is decoded here.

    CancelledError is never caught: swallowing it in a streaming handler leaks native
    memory (grpc issue 43360); cleanup belongs in the generator's `finally`.
    """
    name = method.__name__

    @functools.wraps(method)
    async def handler(self, request, context: grpc.aio.ServicerContext, *, rpc: str, request_type=None, inflight=None):
        def body(servicer, request, context: CallerContext):
            if request_type is not None:
                request = decode(request_type, request)
            return confined_stream(method, servicer, request, context, rpc)

        try:
            async for item in stream_items(body, self, request, context, rpc):
                yield item
        except Exception as error:  # noqa: BLE001
            await _abort(context, name, error)

    return handler


class GenericOnly:
    """`server` as a generated add_*Servicer_to_server function sees it: its handlers are
    registered as generic handlers only.

    grpc.aio's serving loop keeps one pending future per *registered* method and, for every
    call that arrives, runs asyncio.wait over all of them: with memoryd's ~50 methods that
    cost ~50 µs of the event loop's time per call (docs/PERFORMANCE.md, run AC). All generic
    handlers share one future; a call's method is then found by a dict lookup per service.
    """

    def __init__(self, server: grpc.aio.Server) -> None:
        self._server = server

    def add_generic_rpc_handlers(self, handlers) -> None:
        self._server.add_generic_rpc_handlers(handlers)

    def add_registered_method_handlers(self, service_name: str, handlers) -> None:
        """Not registered (see the class): add_generic_rpc_handlers has them already."""


def add_service(
    server: grpc.aio.Server, servicer: Any, service: ServiceDescriptor, inflight: InflightBytes | None = None
) -> None:
    """Register `servicer` (methods wrapped by `unary`/`server_stream`) for `service`, as the
    generated add_*Servicer_to_server would, except that requests reach the wrapper as bytes
    and the handlers are generic only (GenericOnly)."""
    handlers: dict[str, grpc.RpcMethodHandler] = {}
    for method in service.methods:
        request_type = message_factory.GetMessageClass(method.input_type)
        response_type = message_factory.GetMessageClass(method.output_type)
        if method.client_streaming:
            raise ValueError(f"{method.full_name}: client streaming is not supported")
        make = grpc.unary_stream_rpc_method_handler if method.server_streaming else grpc.unary_unary_rpc_method_handler
        # A partial of the plain function, not of a bound method: grpc.aio asks
        # inspect.iscoroutinefunction of the behavior on every call, which for a bound
        # method behind a partial takes the slow path of inspect's signature checks.
        behavior = functools.partial(
            getattr(type(servicer), method.name), servicer,
            rpc=method.full_name, request_type=request_type, inflight=inflight,
        )  # fmt: skip
        handlers[method.name] = make(
            behavior, request_deserializer=None, response_serializer=response_type.SerializeToString
        )
    server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler(service.full_name, handlers),))
