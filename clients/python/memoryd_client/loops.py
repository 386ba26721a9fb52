"""grpc.aio channels for any event loop: MemoryClient's channel, usable from whichever loop
calls it.

A grpc.aio channel belongs to the event loop it was made on; a call from another loop fails
or hangs. Frameworks call their sessions from loops they make themselves: the Agents SDK's
`Runner.run_sync`, `asyncio.run` in a worker thread, sync code that wraps each call in its
own `asyncio.run` (as their SQLite sessions may be used). So MemoryClient's `channel` is a
LoopChannels: the stubs are made on it once, and each call goes through the channel of the
loop it runs on, opened on that loop's first call and kept while the loop lives (a weak
reference: a loop that is gone takes its channel with it).
"""

from __future__ import annotations

import asyncio
import threading
import weakref
from collections.abc import Callable, Sequence
from typing import Any

import grpc

Opener = Callable[[], grpc.aio.Channel]


class LoopChannels:
    """A grpc.aio.Channel stand-in for the stubs: one real channel per running event loop."""

    def __init__(self, open_channel: Opener) -> None:
        self._open = open_channel
        self._channels: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, grpc.aio.Channel] = (
            weakref.WeakKeyDictionary()
        )
        self._lock = threading.Lock()
        self._closed = False

    def current(self) -> grpc.aio.Channel:
        """The running loop's channel (opened on its first call)."""
        loop = asyncio.get_running_loop()
        with self._lock:
            if self._closed:
                raise RuntimeError("this MemoryClient is closed")
            channel = self._channels.get(loop)
            if channel is None:
                channel = self._channels[loop] = self._open()
            return channel

    def unary_unary(
        self, method: str, request_serializer: Any = None, response_deserializer: Any = None, **kw: Any
    ) -> Any:
        return _PerLoop(self, "unary_unary", method, request_serializer, response_deserializer, kw)

    def unary_stream(
        self, method: str, request_serializer: Any = None, response_deserializer: Any = None, **kw: Any
    ) -> Any:
        return _PerLoop(self, "unary_stream", method, request_serializer, response_deserializer, kw)

    def stream_unary(
        self, method: str, request_serializer: Any = None, response_deserializer: Any = None, **kw: Any
    ) -> Any:
        return _PerLoop(self, "stream_unary", method, request_serializer, response_deserializer, kw)

    def stream_stream(
        self, method: str, request_serializer: Any = None, response_deserializer: Any = None, **kw: Any
    ) -> Any:
        return _PerLoop(self, "stream_stream", method, request_serializer, response_deserializer, kw)

    async def close(self, grace: float | None = None) -> None:
        """Closes every loop's channel: this loop's here, a running other loop's on that loop;
        a channel whose loop has stopped is let go (nothing can run on it any more)."""
        with self._lock:
            self._closed = True
            channels = list(self._channels.items())
            self._channels.clear()
        here = asyncio.get_running_loop()
        waits: list[Any] = []
        for loop, channel in channels:
            if loop is here:
                waits.append(channel.close(grace))
            elif loop.is_running() and not loop.is_closed():
                waits.append(asyncio.wrap_future(asyncio.run_coroutine_threadsafe(channel.close(grace), loop)))
        if waits:
            await asyncio.gather(*waits, return_exceptions=True)

    def loops(self) -> Sequence[asyncio.AbstractEventLoop]:
        """The loops that have a channel now (for tests and diagnostics)."""
        with self._lock:
            return list(self._channels.keys())


class _PerLoop:
    """A stub's multi-callable: made on the calling loop's channel at each call (cached per loop)."""

    __slots__ = ("_owner", "_kind", "_method", "_serializer", "_deserializer", "_extra", "_made")

    def __init__(
        self, owner: LoopChannels, kind: str, method: str, serializer: Any, deserializer: Any, extra: dict[str, Any]
    ) -> None:
        self._owner = owner
        self._kind = kind
        self._method = method
        self._serializer = serializer
        self._deserializer = deserializer
        self._extra = extra
        self._made: weakref.WeakKeyDictionary[grpc.aio.Channel, Any] = weakref.WeakKeyDictionary()

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        channel = self._owner.current()
        callable_ = self._made.get(channel)
        if callable_ is None:
            callable_ = getattr(channel, self._kind)(self._method, self._serializer, self._deserializer, **self._extra)
            self._made[channel] = callable_
        return callable_(*args, **kwargs)
