"""Prometheus metrics: per-RPC counts and latencies, store latency, subscribers, recall index lag.

RPC series use the grpc-prometheus names and labels (go-grpc-prometheus, py-grpc-prometheus,
go-grpc-middleware's prometheus provider), so the dashboards and alerts written for them
work unchanged:

    grpc_server_started_total{grpc_type,grpc_service,grpc_method}
    grpc_server_handled_total{grpc_type,grpc_service,grpc_method,grpc_code}
    grpc_server_handling_seconds{grpc_type,grpc_service,grpc_method}   (histogram)
    grpc_server_msg_received_total / grpc_server_msg_sent_total{grpc_type,grpc_service,grpc_method}

Calls over HTTP (Connect) are the same RPCs and are counted in the same series; one extra
label, `transport` ("grpc" or "connect"), tells them apart. Connect's codes are gRPC's, so
`grpc_code` is the gRPC code name either way.

Nothing here runs unless the server is started with a metrics port: the interceptors and
the store instrumentation are installed only then, so the default hot path pays nothing.
Metric objects are module globals (prometheus_client's default registry), so other modules
can set them without plumbing, e.g. the index synchronizer:

    from memoryd.observability.metrics import VECTOR_SYNC_LAG
    VECTOR_SYNC_LAG.set(lag)

With several workers each process serves its own registry on `port + worker index`.
"""

from __future__ import annotations

import contextlib
import functools
import inspect
import time
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable
from typing import Any

import grpc
from prometheus_client import Counter, Gauge, Histogram, start_http_server

# Latency buckets from 250us (a cache-hot read) to 10s (a deadline-bound call).
_BUCKETS = (0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)

_RPC_LABELS = ["grpc_type", "grpc_service", "grpc_method", "transport"]
SERVER_STARTED = Counter("grpc_server_started", "Total number of RPCs started on the server.", _RPC_LABELS)
SERVER_HANDLED = Counter(
    "grpc_server_handled",
    "Total number of RPCs completed on the server, regardless of success or failure.",
    [*_RPC_LABELS, "grpc_code"],
)
SERVER_HANDLING_SECONDS = Histogram(
    "grpc_server_handling_seconds",
    "Histogram of response latency (seconds) of RPCs handled by the server (for streams: their lifetime).",
    _RPC_LABELS,
    buckets=_BUCKETS,
)
SERVER_MSG_RECEIVED = Counter(
    "grpc_server_msg_received", "Total number of RPC stream messages received on the server.", _RPC_LABELS
)
SERVER_MSG_SENT = Counter(
    "grpc_server_msg_sent", "Total number of RPC stream messages sent by the server.", _RPC_LABELS
)
STORE_LATENCY = Histogram(
    "memoryd_store_operation_duration_seconds",
    "Storage adapter call duration by operation and outcome (ok or the exception type).",
    ["operation", "outcome"],
    buckets=_BUCKETS,
)
EVENT_SUBSCRIBERS = Gauge("memoryd_event_subscribers", "Open EventService.Watch streams (gRPC and HTTP).")
VECTOR_SYNC_LAG = Gauge(
    "memoryd_vector_sync_lag_events",
    "Events of the tenants' logs not yet applied to the recall index by this process's synchronizer.",
)
VECTOR_SYNC_RETRIES = Counter(
    "memoryd_vector_sync_retries",
    "Index synchronizer passes retried (index or embedder unavailable); nothing is skipped.",
)

WATCH = ("memoryd.v1.EventService", "Watch")
UNARY, SERVER_STREAM, CLIENT_STREAM, BIDI_STREAM = "unary", "server_stream", "client_stream", "bidi_stream"


def start_metrics_server(port: int, host: str = "127.0.0.1") -> int:
    """Serve /metrics over HTTP in a daemon thread; returns the bound port."""
    server, _thread = start_http_server(port, addr=host)
    return server.server_address[1]


class RpcRecorder:
    """One method's series on one transport, resolved once instead of on every call."""

    def __init__(self, grpc_type: str, service: str, method: str, transport: str) -> None:
        labels = (grpc_type, service, method, transport)
        self._labels = labels
        self._started = SERVER_STARTED.labels(*labels)
        self._handling = SERVER_HANDLING_SECONDS.labels(*labels)
        self._received = SERVER_MSG_RECEIVED.labels(*labels)
        self.sent = SERVER_MSG_SENT.labels(*labels)
        self._handled: dict[str, Any] = {}
        self._single_request = grpc_type in (UNARY, SERVER_STREAM)
        self._single_response = grpc_type in (UNARY, CLIENT_STREAM)
        self._subscribers = EVENT_SUBSCRIBERS if (service, method) == WATCH else None

    def start(self) -> float:
        self._started.inc()
        if self._single_request:
            self._received.inc()
        if self._subscribers is not None:
            self._subscribers.inc()
        return time.perf_counter()

    def finish(self, code: str, started: float) -> None:
        handled = self._handled.get(code)
        if handled is None:
            handled = self._handled[code] = SERVER_HANDLED.labels(*self._labels, code)
        handled.inc()
        if code == "OK" and self._single_response:
            self.sent.inc()
        self._handling.observe(time.perf_counter() - started)
        if self._subscribers is not None:
            self._subscribers.dec()

    async def observe(self, call: Awaitable[Any], code_of: Callable[[BaseException | None], str]) -> Any:
        """Await one call, counted and timed; `code_of(error)` names its final status."""
        started = self.start()
        error: BaseException | None = None
        try:
            return await call
        except BaseException as exc:
            error = exc
            raise
        finally:
            self.finish(code_of(error), started)

    async def observe_stream(
        self, responses: AsyncIterator[Any], code_of: Callable[[BaseException | None], str]
    ) -> AsyncGenerator[Any, None]:
        """Relay a response stream, counted and timed, each message counted as sent."""
        started = self.start()
        error: BaseException | None = None
        try:
            async for response in responses:
                self.sent.inc()
                yield response
        except BaseException as exc:
            error = exc
            raise
        finally:
            self.finish(code_of(error), started)


def _split(full_method: str) -> tuple[str, str]:
    service, _, method = full_method.lstrip("/").partition("/")
    return service, method


# -- gRPC ------------------------------------------------------------------------


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


def _unary_behavior(recorder: RpcRecorder, behavior: Callable[..., Awaitable[Any]]) -> Callable[..., Awaitable[Any]]:
    async def observed(request_or_iterator: Any, context: grpc.aio.ServicerContext) -> Any:
        return await recorder.observe(behavior(request_or_iterator, context), functools.partial(_code_name, context))

    return observed


def _stream_behavior(recorder: RpcRecorder, behavior: Callable[..., Any]) -> Callable[..., Any]:
    # A handler is either an async generator or a coroutine that writes with
    # context.write(); grpc forbids mixing the two, so wrap each in its own style.
    if not inspect.isasyncgenfunction(behavior):
        return _unary_behavior(recorder, behavior)

    async def observed_gen(request_or_iterator: Any, context: grpc.aio.ServicerContext) -> Any:
        code_of = functools.partial(_code_name, context)
        async with contextlib.aclosing(
            recorder.observe_stream(behavior(request_or_iterator, context), code_of)
        ) as stream:
            async for response in stream:
                yield response

    return observed_gen


class MetricsInterceptor(grpc.aio.ServerInterceptor):
    """Counts and times every gRPC call by method and final status code."""

    def __init__(self) -> None:
        self._wrapped: dict[str, tuple[grpc.RpcMethodHandler, grpc.RpcMethodHandler]] = {}

    async def intercept_service(
        self,
        continuation: Callable[[grpc.HandlerCallDetails], Awaitable[grpc.RpcMethodHandler | None]],
        handler_call_details: grpc.HandlerCallDetails,
    ) -> grpc.RpcMethodHandler | None:
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
        kwargs = {
            "request_deserializer": handler.request_deserializer,
            "response_serializer": handler.response_serializer,
        }

        def recorder(grpc_type: str) -> RpcRecorder:
            return RpcRecorder(grpc_type, *_split(method), "grpc")

        if handler.unary_unary is not None:
            return grpc.unary_unary_rpc_method_handler(_unary_behavior(recorder(UNARY), handler.unary_unary), **kwargs)
        if handler.stream_unary is not None:
            return grpc.stream_unary_rpc_method_handler(
                _unary_behavior(recorder(CLIENT_STREAM), handler.stream_unary), **kwargs
            )
        if handler.unary_stream is not None:
            return grpc.unary_stream_rpc_method_handler(
                _stream_behavior(recorder(SERVER_STREAM), handler.unary_stream), **kwargs
            )
        assert handler.stream_stream is not None  # the one kind left
        return grpc.stream_stream_rpc_method_handler(
            _stream_behavior(recorder(BIDI_STREAM), handler.stream_stream), **kwargs
        )


# -- HTTP (Connect) --------------------------------------------------------------


def _connect_code_name(error: BaseException | None) -> str:
    if error is None:
        return "OK"
    code = getattr(error, "code", None)  # connectrpc.errors.ConnectError
    name = getattr(code, "name", None)
    if name is None:
        return "CANCELLED" if type(error).__name__ == "CancelledError" else "UNKNOWN"
    return "CANCELLED" if name == "CANCELED" else name


class ConnectMetricsInterceptor:
    """The same series for calls over HTTP: a connectrpc unary and server-stream interceptor."""

    def __init__(self) -> None:
        self._recorders: dict[tuple[str, str], RpcRecorder] = {}

    def _recorder(self, context: Any, grpc_type: str) -> RpcRecorder:
        method = context.method
        key = (method.service_name, method.name)
        recorder = self._recorders.get(key)
        if recorder is None:
            recorder = self._recorders[key] = RpcRecorder(grpc_type, method.service_name, method.name, "connect")
        return recorder

    async def intercept_unary(self, call_next: Callable[..., Awaitable[Any]], request: Any, context: Any, /) -> Any:
        return await self._recorder(context, UNARY).observe(call_next(request, context), _connect_code_name)

    def intercept_server_stream(
        self, call_next: Callable[..., AsyncIterator[Any]], request: Any, context: Any, /
    ) -> AsyncIterator[Any]:
        return self._recorder(context, SERVER_STREAM).observe_stream(call_next(request, context), _connect_code_name)


def instrument_store(store: Any) -> Any:
    """Time every public coroutine method of a storage adapter, in place; returns the store."""
    for name, _function in inspect.getmembers(type(store), inspect.iscoroutinefunction):
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
