"""Background indexing queue: bounded, drop-oldest, a fixed number of workers.

Saving a message never waits for its embedding. Jobs of the same message run in the
order they were queued (a rewrite waits for the save before it), jobs of different
messages run concurrently up to `concurrency`. A full queue drops its oldest job and
counts it (`dropped`, logged); the search path does not go through this queue.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections import deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from memoryd.domain.models import Message
from memoryd.observability.metrics import VECTOR_QUEUE_DEPTH, VECTOR_QUEUE_DROPPED

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class IndexJob:
    tenant: str
    session_id: str
    message: Message
    rewrite: bool = False  # a rewrite replaces an existing point only

    @property
    def key(self) -> tuple[str, str, str]:
        return (self.tenant, self.session_id, self.message.id or f"ts:{self.message.timestamp}")


class Indexer:
    def __init__(
        self, handle: Callable[[IndexJob], Awaitable[None]], *, concurrency: int = 10, max_queue: int = 500
    ) -> None:
        self.handle = handle
        self.concurrency = concurrency if concurrency > 0 else 64
        self.max_queue = max_queue
        self.dropped = 0
        self._queue: deque[IndexJob] = deque()
        self._ready = asyncio.Event()
        self._locks: dict[tuple[str, str, str], tuple[asyncio.Lock, int]] = {}
        self._workers: list[asyncio.Task] = []
        self._busy = 0
        self._idle = asyncio.Event()
        self._idle.set()

    def __len__(self) -> int:
        return len(self._queue)

    def submit(self, job: IndexJob) -> None:
        if self.max_queue > 0 and len(self._queue) >= self.max_queue:
            self._queue.popleft()
            self.dropped += 1
            VECTOR_QUEUE_DROPPED.inc()
            if self.dropped == 1 or self.dropped % 100 == 0:
                log.warning("index queue full: dropped the oldest job (dropped=%d)", self.dropped)
        self._queue.append(job)
        VECTOR_QUEUE_DEPTH.set(len(self._queue))
        self._idle.clear()
        self._ready.set()

    def start(self) -> None:
        for number in range(self.concurrency):
            self._workers.append(asyncio.create_task(self._work(), name=f"vector-indexer-{number}"))

    async def stop(self) -> None:
        for task in self._workers:
            task.cancel()
        for task in self._workers:
            with contextlib.suppress(asyncio.CancelledError):
                await task
        self._workers.clear()

    async def drained(self) -> None:
        """Wait until the queue is empty and no job runs (tests, graceful shutdown)."""
        await self._idle.wait()

    async def _work(self) -> None:
        while True:
            while not self._queue:
                self._ready.clear()
                await self._ready.wait()
            job = self._queue.popleft()
            VECTOR_QUEUE_DEPTH.set(len(self._queue))
            self._busy += 1
            lock = self._lock(job.key)
            try:
                async with lock:
                    await self.handle(job)
            except Exception:  # noqa: BLE001 - one bad job must not stop the worker
                log.warning("indexing a message failed", exc_info=True)
            finally:
                self._release(job.key)
                self._busy -= 1
                if not self._queue and not self._busy:
                    self._idle.set()

    def _lock(self, key: tuple[str, str, str]) -> asyncio.Lock:
        lock, users = self._locks.get(key, (None, 0))
        if lock is None:
            lock = asyncio.Lock()
        self._locks[key] = (lock, users + 1)
        return lock

    def _release(self, key: tuple[str, str, str]) -> None:
        lock, users = self._locks[key]
        if users <= 1:
            del self._locks[key]
        else:
            self._locks[key] = (lock, users - 1)
