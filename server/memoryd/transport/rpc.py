"""The wrapper every servicer method goes through: tenant, deadline, error mapping, logging."""

from __future__ import annotations

import asyncio
import contextlib
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


async def _abort(context: grpc.aio.ServicerContext, method: str, error: BaseException) -> None:
    if isinstance(error, MemorydError):
        status = to_status(error)
        log.info("rpc_failed", method=method, code=status.code.name, reason=error.reason)
    else:
        status = internal_status()
        log.error("rpc_crashed", method=method, error_type=type(error).__name__, exc_info=error)
    await context.abort(status.code, status.details, status.trailing_metadata)


# Time kept back from the caller's deadline to send the answer: a tenth of it, at least
# 250 ms (a busy event loop or a slow network must not turn the answer into the client's
# own DEADLINE_EXCEEDED), at most a second, and never more than half of a short deadline.
ANSWER_MARGIN_FRACTION = 0.1
ANSWER_MARGIN_MIN_SECONDS = 0.25
ANSWER_MARGIN_MAX_SECONDS = 1.0


def _answer_margin(remaining: float) -> float:
    margin = min(max(remaining * ANSWER_MARGIN_FRACTION, ANSWER_MARGIN_MIN_SECONDS), ANSWER_MARGIN_MAX_SECONDS)
    return min(margin, remaining / 2)


@contextlib.asynccontextmanager
async def _answer_before(remaining: float | None):
    """Stop waiting shortly before the caller's deadline and answer UNAVAILABLE (retryable,
    with RetryInfo) rather than let the deadline pass in silence: a store that hangs
    (unreachable server, lock held by a dead client) still gets a status the client can act on.
    Adapters bound their own I/O by `deadline.remaining()` too; this is the backstop."""
    if remaining is None or remaining > 1e6:
        yield
        return
    scope = asyncio.timeout(max(remaining - _answer_margin(remaining), 0.0))
    try:
        async with scope:
            yield
    except TimeoutError:
        if scope.expired():
            raise StorageUnavailable(
                "storage did not answer before the call's deadline", reason="STORAGE_TIMEOUT"
            ) from None
        raise


def unary(method: Callable[..., Awaitable[Any]]):
    """Wrap `async def Rpc(self, request, context, tenant)` as a grpc.aio unary handler."""
    name = method.__name__

    @functools.wraps(method)
    async def handler(self, request, context: grpc.aio.ServicerContext):
        started = time.perf_counter()
        remaining = context.time_remaining()
        token = deadline.set_remaining(remaining)
        try:
            tenant = self.auth.tenant(context)
            async with _answer_before(remaining):
                response = await method(self, request, context, tenant)
        except Exception as error:  # noqa: BLE001 - every failure leaves as a gRPC status
            await _abort(context, name, error)
        finally:
            deadline.reset(token)
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
            tenant = self.auth.tenant(context)
            async for item in method(self, request, context, tenant):
                yield item
        except Exception as error:  # noqa: BLE001
            await _abort(context, name, error)

    return handler
