"""Concurrent reads of the same key share one store read (group commit, for reads).

A reconnect storm opens thousands of Watch streams of one tenant within a second, and each
starts by reading the log's bounds. One read each would queue thousands of identical reads on
the store (on MongoDB, past the connection pool's wait limit: UNAVAILABLE for streams that did
nothing wrong). Here at most one read per key runs, and callers that arrive meanwhile wait for
the *next* one, which starts after all of them arrived: every caller gets a result at least as
new as the moment it asked, exactly what a read of its own would give.
"""

from __future__ import annotations

import asyncio
import contextlib
import weakref
from collections.abc import Awaitable, Callable
from typing import Generic, TypeVar

T = TypeVar("T")


class CoalescedReads(Generic[T]):
    """`await reads(key)`: the value of `read(key)` from a read that started after this call."""

    def __init__(self, read: Callable[[str], Awaitable[T]]) -> None:
        self._read = read
        self._waiting: dict[str, asyncio.Future[T]] = {}  # per key: the read that has not started yet
        self._locks: weakref.WeakValueDictionary[str, asyncio.Lock] = weakref.WeakValueDictionary()
        self.reads = 0  # reads started, however many callers shared them

    async def __call__(self, key: str) -> T:
        future = self._waiting.get(key)
        if future is None:
            future = self._waiting[key] = asyncio.ensure_future(self._run(key))
            future.add_done_callback(_retrieve)
        # shield: one caller giving up does not cancel the read the others wait for.
        return await asyncio.shield(future)

    async def _run(self, key: str) -> T:
        lock = self._locks.get(key)
        if lock is None:
            lock = self._locks[key] = asyncio.Lock()
        async with lock:  # one read per key at a time
            # From here on, new callers wait for the next read: this one may predate them.
            if self._waiting.get(key) is asyncio.current_task():
                del self._waiting[key]
            self.reads += 1
            return await self._read(key)


def _retrieve(future: asyncio.Future) -> None:
    # Every caller may have given up; the error is theirs to see, not the loop's to log.
    with contextlib.suppress(asyncio.CancelledError):
        future.exception()
