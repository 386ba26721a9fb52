"""Background indexing queue: bounded, drop-oldest, a fixed number of workers, in batches.

Saving a message never waits for its indexing. A worker takes up to `batch` queued jobs at
once (one engine write, one embedder request for all of them); woken with fewer queued, it
first waits `linger_seconds` for more. Jobs of the same message run
in the order they were queued (a rewrite waits for the save before it, never in the same
batch); jobs of different messages run concurrently, up to `concurrency` batches. The queue
holds at most `max_queue` jobs, or one save call's when that is more: beyond that the oldest
job is dropped, counted (`dropped`) and logged. The search path does not go through it.

A batch that fails because a dependency is unavailable (the embedder, Qdrant) is retried
with exponential backoff, up to `attempts` times; meanwhile its messages' later jobs wait,
so order holds. A batch that still fails, or fails otherwise, is counted (`failed`) and
logged: its messages keep the points they had.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections import deque
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass

from memoryd import shutdown
from memoryd.domain.errors import StorageFull, StorageUnavailable
from memoryd.domain.models import Message
from memoryd.observability.metrics import VECTOR_INDEX_FAILED, VECTOR_QUEUE_DEPTH, VECTOR_QUEUE_DROPPED

log = logging.getLogger(__name__)

BATCH = 64
# A worker woken with fewer than a batch of jobs queued waits this long for more first: under
# a stream of saves, batches of tens of messages instead of one or two each (every batch is
# one engine write with its fixed costs). Indexing lags saves by at most this much more.
LINGER_SECONDS = 0.02
ATTEMPTS = 6  # with BACKOFF_SECONDS 0.5 doubling: gives up after ~15 s of outage
BACKOFF_SECONDS = 0.5
MAX_BACKOFF_SECONDS = 30.0


@dataclass(frozen=True, slots=True)
class IndexJob:
    tenant: str
    session_id: str
    message: Message
    rewrite: bool = False  # rewritten content: read the stored message
    queued_at: float = 0.0  # time.monotonic() when it was queued

    @property
    def key(self) -> tuple[str, str, str]:
        return (self.tenant, self.session_id, self.message.id or f"ts:{self.message.timestamp}")


class Indexer:
    def __init__(
        self,
        handle: Callable[[list[IndexJob]], Awaitable[None]],
        *,
        concurrency: int = 10,
        max_queue: int = 500,
        batch: int = BATCH,
        attempts: int = ATTEMPTS,
        backoff_seconds: float = BACKOFF_SECONDS,
        linger_seconds: float = LINGER_SECONDS,
    ) -> None:
        self.handle = handle
        self.attempts = max(1, attempts)
        self.backoff_seconds = backoff_seconds
        self.concurrency = concurrency if concurrency > 0 else 64
        self.max_queue = max_queue
        self.batch = max(1, batch)
        self.linger_seconds = max(0.0, linger_seconds)
        self.dropped = 0
        self.failed = 0  # jobs given up on
        self._queue: deque[IndexJob] = deque()
        self._ready = asyncio.Event()
        self._running: set[tuple[str, str, str]] = set()  # keys of jobs being handled
        self._workers: list[asyncio.Task] = []
        self._busy = 0
        self._idle = asyncio.Event()
        self._idle.set()

    def __len__(self) -> int:
        return len(self._queue)

    def submit(self, job: IndexJob) -> None:
        self.submit_all([job])

    def submit_all(self, jobs: Sequence[IndexJob]) -> None:
        """Queue the jobs of one call; drops the oldest queued jobs beyond the bound (never
        those of this call)."""
        if not jobs:
            return
        if self.max_queue > 0:
            excess = min(len(self._queue), len(self._queue) + len(jobs) - self.max_queue)
            for _ in range(max(0, excess)):
                self._queue.popleft()
                self.dropped += 1
                VECTOR_QUEUE_DROPPED.inc()
                if self.dropped == 1 or self.dropped % 100 == 0:
                    log.warning("index queue full: dropped the oldest job (dropped=%d)", self.dropped)
        self._queue.extend(jobs)
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

    def _take(self) -> list[IndexJob]:
        """Up to `batch` jobs from the front whose message has no job running or queued before
        them; the others keep their places."""
        taken: list[IndexJob] = []
        waiting: deque[IndexJob] = deque()
        blocked: set[tuple[str, str, str]] = set()
        while self._queue and len(taken) < self.batch:
            job = self._queue.popleft()
            if job.key in self._running or job.key in blocked:
                blocked.add(job.key)
                waiting.append(job)
                continue
            self._running.add(job.key)
            taken.append(job)
        waiting.extend(self._queue)
        self._queue = waiting
        VECTOR_QUEUE_DEPTH.set(len(self._queue))
        return taken

    async def _work(self) -> None:
        while True:
            shutdown.raise_if_cancelled()
            jobs = self._take()
            if not jobs:
                self._ready.clear()
                await self._ready.wait()
                if self.linger_seconds and len(self._queue) < self.batch:
                    await asyncio.sleep(self.linger_seconds)
                continue
            self._busy += 1
            try:
                await self._handle_with_retries(jobs)
            finally:
                self._running.difference_update(job.key for job in jobs)
                self._busy -= 1
                self._ready.set()  # jobs waiting for these messages may run now
                if not self._queue and not self._busy:
                    self._idle.set()

    async def _handle_with_retries(self, jobs: list[IndexJob]) -> None:
        for attempt in range(1, self.attempts + 1):
            try:
                await self.handle(jobs)
                return
            except (StorageUnavailable, StorageFull) as error:  # a full disk may be freed
                if attempt == self.attempts:
                    self._give_up(jobs, f"{error.reason} after {attempt} attempts")
                    return
                delay = min(MAX_BACKOFF_SECONDS, self.backoff_seconds * 2 ** (attempt - 1))
                log.info("indexing %d messages: %s; retry %d in %.1f s", len(jobs), error.reason, attempt, delay)
                await asyncio.sleep(delay)
            except Exception:  # noqa: BLE001 - one bad batch must not stop the worker
                log.warning("indexing %d messages failed", len(jobs), exc_info=True)
                self._give_up(jobs, "error")
                return

    def _give_up(self, jobs: list[IndexJob], why: str) -> None:
        self.failed += len(jobs)
        VECTOR_INDEX_FAILED.inc(len(jobs))
        log.warning("indexing %d messages given up (%s): they keep the points they had (failed=%d)",
                    len(jobs), why, self.failed)
