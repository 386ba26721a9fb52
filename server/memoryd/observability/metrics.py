"""Prometheus metrics: per-RPC counts and latencies, store latency, subscribers, vector queue.

Nothing here runs unless the server is started with a metrics port: the interceptor
and the store instrumentation are installed only then, so the default hot path pays
nothing. Metric objects are module globals (prometheus_client's default registry),
so other modules can set them without plumbing, e.g. the vector indexer:

    from memoryd.observability.metrics import VECTOR_QUEUE_DEPTH
    VECTOR_QUEUE_DEPTH.set(queue.qsize())

With several workers each process serves its own registry on `port + worker index`.
"""

from __future__ import annotations

import functools
import inspect
import time
from collections.abc import Awaitable, Callable
from typing import Any

import grpc
from prometheus_client import Counter, Gauge, Histogram, start_http_server

# Latency buckets from 250us (a cache-hot read) to 10s (a deadline-bound call).
_BUCKETS = (0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)

GRPC_REQUESTS = Counter(
    "memoryd_grpc_requests",
    "Finished gRPC calls by method and status code.",
    ["method", "code"],
)
GRPC_LATENCY = Histogram(
    "memoryd_grpc_request_duration_seconds",
    "gRPC call duration (for streams: the stream's lifetime) by method and status code.",
    ["method", "code"],
    buckets=_BUCKETS,
)
GRPC_IN_FLIGHT = Gauge("memoryd_grpc_in_flight", "gRPC calls being handled, by method.", ["method"])
STORE_LATENCY = Histogram(
    "memoryd_store_operation_duration_seconds",
    "Storage adapter call duration by operation and outcome (ok or the exception type).",
    ["operation", "outcome"],
    buckets=_BUCKETS,
)
EVENT_SUBSCRIBERS = Gauge("memoryd_event_subscribers", "Open EventService.Watch streams.")
VECTOR_QUEUE_DEPTH = Gauge("memoryd_vector_queue_depth", "Messages waiting for server-side embedding.")
VECTOR_QUEUE_DROPPED = Counter(
    "memoryd_vector_queue_dropped", "Messages dropped from the full embedding queue (oldest first)."
)

WATCH_METHOD = "/memoryd.v1.EventService/Watch"


def start_metrics_server(port: int, host: str = "127.0.0.1") -> int:
    """Serve /metrics over HTTP in a daemon thread; returns the bound port."""
    server, _thread = start_http_server(port, addr=host)
    return server.server_address[1]


def _code_name(context: grpc.aio.ServicerContext, error: BaseException | None) -> str:
    code = context.code()
    if isinstance(code, grpc.StatusCode):
        return code.name
    if error is None:
        return "OK"
    if isinstance(error, (KeyboardInterrupt, SystemExit)):
        return "UNKNOWN"
    # CancelledError: the client went away or the deadline passed.
    return "CANCELLED" if type(error).__name__ == "CancelledError" else "UNKNOWN"


class _Recorder:
    """Per-method metric children, resolved once instead of on every call."""

    def __init__(self, method: str) -> None:
        self.method = method
        self.in_flight = GRPC_IN_FLIGHT.labels(method)
        self._by_code: dict[str, tuple[Any, Any]] = {}

    def finish(self, code: str, started: float) -> None:
        children = self._by_code.get(code)
        if children is None:
            children = (GRPC_REQUESTS.labels(self.method, code), GRPC_LATENCY.labels(self.method, code))
            self._by_code[code] = children
        children[0].inc()
        children[1].observe(time.perf_counter() - started)


def _unary_behavior(recorder: _Recorder, behavior: Callable[..., Awaitable[Any]]) -> Callable[..., Awaitable[Any]]:
    async def observed(request_or_iterator: Any, context: grpc.aio.ServicerContext) -> Any:
        started = time.perf_counter()
        recorder.in_flight.inc()
        error: BaseException | None = None
        try:
            return await behavior(request_or_iterator, context)
        except BaseException as exc:
            error = exc
            raise
        finally:
            recorder.in_flight.dec()
            recorder.finish(_code_name(context, error), started)

    return observed


def _stream_behavior(recorder: _Recorder, behavior: Callable[..., Any], subscribers: Gauge | None) -> Callable[..., Any]:
    # A handler is either an async generator or a coroutine that writes with
    # context.write(); grpc forbids mixing the two, so wrap each in its own style.
    if inspect.isasyncgenfunction(behavior):

        async def observed_gen(request_or_iterator: Any, context: grpc.aio.ServicerContext) -> Any:
            started = time.perf_counter()
            recorder.in_flight.inc()
            if subscribers is not None:
                subscribers.inc()
            error: BaseException | None = None
            try:
                async for response in behavior(request_or_iterator, context):
                    yield response
            except BaseException as exc:
                error = exc
                raise
            finally:
                recorder.in_flight.dec()
                if subscribers is not None:
                    subscribers.dec()
                recorder.finish(_code_name(context, error), started)

        return observed_gen

    async def observed_coro(request_or_iterator: Any, context: grpc.aio.ServicerContext) -> Any:
        if subscribers is not None:
            subscribers.inc()
        try:
            return await _unary_behavior(recorder, behavior)(request_or_iterator, context)
        finally:
            if subscribers is not None:
                subscribers.dec()

    return observed_coro


class MetricsInterceptor(grpc.aio.ServerInterceptor):
    """Counts and times every RPC by method and final status code."""

    def __init__(self) -> None:
        self._wrapped: dict[str, tuple[grpc.RpcMethodHandler, grpc.RpcMethodHandler]] = {}

    async def intercept_service(
        self,
        continuation: Callable[[grpc.HandlerCallDetails], Awaitable[grpc.RpcMethodHandler]],
        handler_call_details: grpc.HandlerCallDetails,
    ) -> grpc.RpcMethodHandler:
        handler = await continuation(handler_call_details)
        if handler is None:
            return handler
        method = handler_call_details.method
        cached = self._wrapped.get(method)
        if cached is not None and cached[0] is handler:
            return cached[1]
        wrapped = self._wrap(method, handler)
        self._wrapped[method] = (handler, wrapped)
        return wrapped

    @staticmethod
    def _wrap(method: str, handler: grpc.RpcMethodHandler) -> grpc.RpcMethodHandler:
        recorder = _Recorder(method)
        kwargs = {
            "request_deserializer": handler.request_deserializer,
            "response_serializer": handler.response_serializer,
        }
        if handler.unary_unary is not None:
            return grpc.unary_unary_rpc_method_handler(_unary_behavior(recorder, handler.unary_unary), **kwargs)
        if handler.stream_unary is not None:
            return grpc.stream_unary_rpc_method_handler(_unary_behavior(recorder, handler.stream_unary), **kwargs)
        subscribers = EVENT_SUBSCRIBERS if method == WATCH_METHOD else None
        if handler.unary_stream is not None:
            return grpc.unary_stream_rpc_method_handler(
                _stream_behavior(recorder, handler.unary_stream, subscribers), **kwargs
            )
        return grpc.stream_stream_rpc_method_handler(
            _stream_behavior(recorder, handler.stream_stream, subscribers), **kwargs
        )


def instrument_store(store: Any) -> Any:
    """Time every public coroutine method of a storage adapter, in place; returns the store."""
    for name, member in inspect.getmembers(type(store), inspect.iscoroutinefunction):
        if name.startswith("_"):
            continue
        bound = getattr(store, name)
        setattr(store, name, _timed(name, bound))
    return store


def _timed(operation: str, call: Callable[..., Awaitable[Any]]) -> Callable[..., Awaitable[Any]]:
    ok = STORE_LATENCY.labels(operation, "ok")

    @functools.wraps(call)
    async def timed(*args: Any, **kwargs: Any) -> Any:
        started = time.perf_counter()
        try:
            result = await call(*args, **kwargs)
        except BaseException as exc:
            STORE_LATENCY.labels(operation, type(exc).__name__).observe(time.perf_counter() - started)
            raise
        ok.observe(time.perf_counter() - started)
        return result

    return timed
