"""EventService.Watch as an async iterator that survives reconnects."""

from __future__ import annotations

import asyncio
import logging
import random
from collections.abc import Callable, Sequence

import grpc

from memoryd.v1 import event_pb2, event_service_pb2, event_service_pb2_grpc

from .errors import UnavailableError, from_rpc_error

logger = logging.getLogger(__name__)

# Ends of a stream after which resuming from the last seq loses nothing: the
# server went away or restarted (UNAVAILABLE, or a clean end during shutdown),
# or it dropped a subscriber that fell behind (RESOURCE_EXHAUSTED).
RESUMABLE = frozenset({grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.RESOURCE_EXHAUSTED})


class EventWatch:
    """Events of EventService.Watch, in seq order, across reconnects.

    Iterate with `async for event in watch`. When the stream breaks with a
    resumable status, the watch reopens it with `after_seq = last_seq`, so
    every event is delivered exactly once. Progress notifications advance
    `last_seq` without being yielded. A resume point older than the server's
    retention raises EventsCompactedError; other failures raise RpcError.

    Use `async with` (or call `aclose()`) to stop watching early.
    """

    def __init__(
        self,
        stub: event_service_pb2_grpc.EventServiceStub,
        *,
        session_ids: Sequence[str],
        types: Sequence[event_pb2.EventType.ValueType],
        after_seq: int | None,
        metadata: Callable[[], tuple[tuple[str, str], ...]],
        max_reconnects: int | None,
        initial_backoff: float,
        max_backoff: float,
    ) -> None:
        self._stub = stub
        self._session_ids = list(session_ids)
        self._types = list(types)
        self._metadata = metadata
        self._max_reconnects = max_reconnects
        self._initial_backoff = initial_backoff
        self._max_backoff = max_backoff
        self._call: grpc.aio.UnaryStreamCall | None = None
        self._failures = 0  # consecutive reconnects without receiving anything
        self._closed = False
        self.last_seq: int | None = after_seq
        """Seq to resume from: the last event delivered (or progress seen). None: from now."""
        self.reconnects = 0
        """How many times the stream was reopened."""

    def _open(self) -> grpc.aio.UnaryStreamCall:
        request = event_service_pb2.WatchRequest(
            session_ids=self._session_ids, types=self._types, after_seq=self.last_seq
        )
        return self._stub.Watch(request, metadata=self._metadata())

    async def started(self) -> None:
        """Opens the stream now and waits for the server's response headers.

        Useful when the watch starts "from now" (no after_seq): once this
        returns the server has accepted the watch, provided it sends its
        headers when the watch is registered.
        """
        if self._call is None:
            self._call = self._open()
        try:
            await self._call.initial_metadata()
        except grpc.aio.AioRpcError as err:
            self._call = None
            raise from_rpc_error(err) from None

    def __aiter__(self) -> EventWatch:
        return self

    async def __anext__(self) -> event_pb2.Event:
        while not self._closed:
            if self._call is None:
                self._call = self._open()
            try:
                response = await self._call.read()
            except grpc.aio.AioRpcError as err:
                self._call = None
                if self._closed:
                    break
                if err.code() not in RESUMABLE:
                    raise from_rpc_error(err) from None
                await self._reconnect_after(err.code().name)
                continue
            if response is grpc.aio.EOF:
                # A clean end (for example a server shutting down): resume.
                self._call = None
                await self._reconnect_after("end of stream")
                continue
            self._failures = 0
            if response.HasField("event"):
                self.last_seq = response.event.seq
                return response.event
            if response.HasField("progress"):
                self.last_seq = max(self.last_seq or 0, response.progress.latest_seq)
        raise StopAsyncIteration

    async def _reconnect_after(self, why: str) -> None:
        if self._max_reconnects is not None and self._failures >= self._max_reconnects:
            self._closed = True
            raise UnavailableError(grpc.StatusCode.UNAVAILABLE, f"watch gave up after {self._failures} reconnects ({why})")
        delay = min(self._max_backoff, self._initial_backoff * (2**self._failures))
        self._failures += 1
        self.reconnects += 1
        logger.info("watch stream ended (%s); resuming after seq %s", why, self.last_seq)
        await asyncio.sleep(delay * random.uniform(0.5, 1.0))

    async def aclose(self) -> None:
        """Stops watching and cancels the stream."""
        self._closed = True
        if self._call is not None:
            self._call.cancel()
            self._call = None

    async def __aenter__(self) -> EventWatch:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

