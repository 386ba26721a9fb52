"""The wrapper every servicer method goes through: tenant, deadline, error mapping, logging."""

from __future__ import annotations

import asyncio
import functools
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import grpc
import structlog

from memoryd.domain import deadline
from memoryd.domain.errors import MemorydError, StorageUnavailable
from memoryd.transport.status import internal_status, to_status

log = structlog.get_logger("memoryd.rpc")


def failure_status(method: str, error: BaseException) -> grpc.Status:
    """The status a failed call answers with (logged here, once, for every transport)."""
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
    lock held by a dead client) still gets a status the client can act on."""
    if backstop is None:
        return await call
    scope = asyncio.timeout(backstop)
    try:
        async with scope:
            return await call
    except TimeoutError:
        if scope.expired():
            raise StorageUnavailable(
                "storage did not answer before the call's deadline", reason="STORAGE_TIMEOUT"
            ) from None
        raise


async def call_unary(method: Callable[..., Awaitable[Any]], servicer: Any, request: Any, context: Any) -> Any:
    """The transport-neutral core of a unary call: tenant, deadline budget, backstop.

    `method` is the undecorated `Rpc(self, request, context, tenant)`; `context` needs
    `invocation_metadata()` and `time_remaining()` (a grpc.aio context, or the HTTP
    transport's). Raises what the call raised; each transport answers it with failure_status.
    """
    store_budget, backstop = _budgets(context.time_remaining())
    token = deadline.set_remaining(store_budget)
    try:
        tenant = servicer.auth.tenant(context)
        return await _answer_before(backstop, method(servicer, request, context, tenant))
    finally:
        deadline.reset(token)


async def stream_items(method: Callable[..., AsyncIterator[Any]], servicer: Any, request: Any, context: Any):
    """The transport-neutral core of a server-streaming call: the tenant, then the items."""
    tenant = servicer.auth.tenant(context)
    async for item in method(servicer, request, context, tenant):
        yield item


def unary(method: Callable[..., Awaitable[Any]]):
    """Wrap `async def Rpc(self, request, context, tenant)` as a grpc.aio unary handler.

    The handler's `__wrapped__` (functools.wraps) is `method`, for other transports.
    """
    name = method.__name__

    @functools.wraps(method)
    async def handler(self, request, context: grpc.aio.ServicerContext):
        started = time.perf_counter()
        try:
            response = await call_unary(method, self, request, context)
        except Exception as error:  # noqa: BLE001 - every failure leaves as a gRPC status
            await _abort(context, name, error)
        log.debug("rpc", method=name, ms=round((time.perf_counter() - started) * 1000, 3))
        return response

    return handler


def server_stream(method: Callable[..., AsyncIterator[Any]]):
    """Wrap `async def Rpc(self, request, context, tenant)` (an async generator).

    CancelledError is never caught: swallowing it in a streaming handler leaks native
    memory (grpc issue 43360); cleanup belongs in the generator's `finally`.
    """
    name = method.__name__

    @functools.wraps(method)
    async def handler(self, request, context: grpc.aio.ServicerContext):
        try:
            async for item in stream_items(method, self, request, context):
                yield item
        except Exception as error:  # noqa: BLE001
            await _abort(context, name, error)

    return handler
