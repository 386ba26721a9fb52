"""EventService.Watch as an iterator that survives reconnects (async and sync)."""

from __future__ import annotations

import asyncio
import logging
import random
import threading
import time
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, cast

import grpc

from memoryd.v1 import event_pb2, event_service_pb2, event_service_pb2_grpc

from .errors import UnavailableError, from_rpc_error

logger = logging.getLogger(__name__)

# Ends of a stream after which resuming from the last seq loses nothing: the
# server went away or restarted (UNAVAILABLE, or a clean end during shutdown),
# or it refused the stream at its Watch stream limit (RESOURCE_EXHAUSTED, reason
# TOO_MANY_WATCH_STREAMS; older servers also ended a slow subscriber this way).
RESUMABLE = frozenset({grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.RESOURCE_EXHAUSTED})
TOKEN_EXPIRED = "TOKEN_EXPIRED"


class Resumption:
    """Where a watch stands and when to reopen it; the I/O is the iterators' own.

    The resume point is the seq of the last event delivered, or the latest
    seq of a progress notification (the server sends one when the watch
    joins and on idle streams), so a reopened stream with `after_seq` set to
    it delivers every later event exactly once.
    """

    def __init__(
        self,
        session_ids: Sequence[str],
        types: Sequence[event_pb2.EventType],
        after_seq: int | None,
        max_reconnects: int | None,
        initial_backoff: float,
        max_backoff: float,
    ) -> None:
        self.session_ids = list(session_ids)
        self.types = list(types)
        self.last_seq = after_seq
        self.max_reconnects = max_reconnects
        self.initial_backoff = initial_backoff
        self.max_backoff = max_backoff
        self.failures = 0  # consecutive reopenings without receiving anything
        self.reconnects = 0
        # With a token provider, a stream the server ended because its token expired is
        # reopened with the provider's next token (servers end streams at a JWT's expiry).
        self.resume_on_expiry = False

    def request(self) -> event_service_pb2.WatchRequest:
        return event_service_pb2.WatchRequest(session_ids=self.session_ids, types=self.types, after_seq=self.last_seq)

    def receive(self, response: event_service_pb2.WatchResponse) -> event_pb2.Event | None:
        """Advances the resume point; returns the event to deliver, if the response is one."""
        self.failures = 0
        if response.HasField("event"):
            self.last_seq = response.event.seq
            return response.event
        if response.HasField("progress"):
            self.last_seq = max(self.last_seq or 0, response.progress.latest_seq)
        return None

    def _expired_and_renewable(self, error: grpc.RpcError) -> bool:
        return (
            self.resume_on_expiry
            and error.code() == grpc.StatusCode.UNAUTHENTICATED
            and from_rpc_error(error).reason == TOKEN_EXPIRED
        )

    def ended(self, error: grpc.RpcError | None) -> float:
        """The stream ended (cleanly when `error` is None): seconds to wait before reopening.

        Raises the RpcError when the end is not resumable, and UnavailableError
        after `max_reconnects` consecutive failed reopenings.
        """
        code = error.code() if error is not None else None
        if error is not None and code not in RESUMABLE and not self._expired_and_renewable(error):
            raise from_rpc_error(error) from None
        why = code.name if code is not None else "end of stream"
        if self.max_reconnects is not None and self.failures >= self.max_reconnects:
            raise UnavailableError(
                grpc.StatusCode.UNAVAILABLE, f"watch gave up after {self.failures} reconnects ({why})"
            )
        delay = min(self.max_backoff, self.initial_backoff * (2**self.failures))
        self.failures += 1
        self.reconnects += 1
        logger.info("watch stream ended (%s); resuming after seq %s", why, self.last_seq)
        return delay * random.uniform(0.5, 1.0)


class _Watch:
    """What both iterators expose."""

    def __init__(self, state: Resumption, metadata: Callable[[], Any]) -> None:
        self._state = state
        self._metadata = metadata
        self._closed = False

    @property
    def last_seq(self) -> int | None:
        """Seq to resume from: the last event delivered (or progress seen). None: from now."""
        return self._state.last_seq

    @property
    def reconnects(self) -> int:
        """How many times the stream was reopened."""
        return self._state.reconnects


class EventWatch(_Watch):
    """Events of EventService.Watch, in seq order, across reconnects (grpc.aio).

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
        state: Resumption,
        metadata: Callable[[], Awaitable[tuple[tuple[str, str], ...]]],
    ) -> None:
        super().__init__(state, metadata)
        self._stub = stub
        self._call: grpc.aio.UnaryStreamCall | None = None

    async def _open(self) -> grpc.aio.UnaryStreamCall:
        return self._stub.Watch(self._state.request(), metadata=await self._metadata())

    async def started(self) -> None:
        """Opens the stream now and waits until the server has registered the watch
        (it sends its response headers then); from here on no event is missed."""
        if self._call is None:
            self._call = await self._open()
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
                self._call = await self._open()
            try:
                response = await self._call.read()
            except grpc.aio.AioRpcError as err:
                self._call = None
                if self._closed:
                    break
                await asyncio.sleep(self._state.ended(err))
                continue
            if response is grpc.aio.EOF:  # a clean end (a server shutting down): resume
                self._call = None
                await asyncio.sleep(self._state.ended(None))
                continue
            event = self._state.receive(cast(event_service_pb2.WatchResponse, response))
            if event is not None:
                return event
        raise StopAsyncIteration

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


class SyncEventWatch(_Watch):
    """EventWatch for the sync client: `for event in watch`, `with`, `close()`.

    Same resumption as EventWatch. Iterating blocks the calling thread until
    the next event; `close()` from another thread ends the iteration.
    """

    def __init__(
        self,
        stub: event_service_pb2_grpc.EventServiceStub,
        state: Resumption,
        metadata: Callable[[], tuple[tuple[str, str], ...]],
    ) -> None:
        super().__init__(state, metadata)
        self._stub = stub
        self._call = None  # grpc's stream call: an iterator of responses that is also a grpc.Call
        self._lock = threading.Lock()  # close() may come from another thread than the reader

    def _current(self):
        """The open stream (opening one when needed); None once closed."""
        with self._lock:
            if self._closed:
                return None
            if self._call is None:
                self._call = self._stub.Watch(self._state.request(), metadata=self._metadata())
            return self._call

    def _forget(self, call) -> None:
        with self._lock:
            if self._call is call:
                self._call = None

    def started(self) -> None:
        """Opens the stream now and waits until the server has registered the watch."""
        call = self._current()
        if call is None:
            return
        call.initial_metadata()  # returns once the headers arrived or the call ended
        if call.done() and call.code() is not grpc.StatusCode.OK:
            self._forget(call)
            raise from_rpc_error(call)

    def __iter__(self) -> SyncEventWatch:
        return self

    def __next__(self) -> event_pb2.Event:
        while (call := self._current()) is not None:
            try:
                response = next(call)
            except grpc.RpcError as err:
                self._forget(call)
                if self._closed:
                    break
                time.sleep(self._state.ended(err))
                continue
            except StopIteration:  # a clean end (a server shutting down): resume
                self._forget(call)
                time.sleep(self._state.ended(None))
                continue
            event = self._state.receive(cast(event_service_pb2.WatchResponse, response))
            if event is not None:
                return event
        raise StopIteration

    def close(self) -> None:
        """Stops watching and cancels the stream."""
        with self._lock:
            self._closed = True
            call, self._call = self._call, None
        if call is not None:
            call.cancel()

    def __enter__(self) -> SyncEventWatch:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
