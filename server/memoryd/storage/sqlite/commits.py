"""Group commit for the SQLite store: every write goes through one FIFO queue and commits
with the writes queued beside it, in one `BEGIN IMMEDIATE … COMMIT`; a write that fails rolls
back alone (the group runs again with a SAVEPOINT for each write: GroupCommit._commit). A
caller is answered only after the COMMIT, so an acknowledged write is durable; event seqs
commit in queue order.

Where a group commits:

- **On the event loop**, for small writes (`inline`: an append of a few short messages, what
  SaveMessage makes), on a connection of the loop's own. The statements of a small write cost
  less than a hop to a thread and back, and a writer thread that needs the GIL after every
  statement while the loop holds it waits for the GIL's switch interval each time
  (docs/PERFORMANCE.md, run AC: groups of 3 writes, 0.37 ms of wall time per write in the
  statements alone). A loop group waits while the loop still has ready callbacks (other
  requests, whose writes join it), at most INLINE_LINGER_SECONDS: SQLite's COMMIT costs about
  the same for one write as for twenty, so under load a group of many is cheaper per write,
  and when the loop is idle the group commits at once.
- **On the writer thread** for every other write (an import, a clear, a delete, a 1 MiB
  message: their statements may take long, and must not stall the loop), and for a loop
  group that keeps finding the write lock held by another process (`--workers N`, the engine
  process): the loop's connection has no busy timeout, so the loop never waits for the lock;
  it tries again every BUSY_RETRY_SECONDS (another process's group commits in well under
  that) while it serves other calls, up to BUSY_RETRIES times, then the thread waits for it.

The loop's connection never checkpoints the WAL (`wal_autocheckpoint=0`: a checkpoint's
fsyncs would stall the loop); after every CHECKPOINT_EVERY loop commits the writer thread
runs a passive checkpoint, as SQLite's own auto-checkpoint would after ~1,000 pages (and so
after every CHECKPOINT_EVERY groups of its own).

The WAL is bounded: a passive checkpoint copies pages back into the database but never makes
the next commit write from the WAL's start while readers keep reading, which under load they
always do; the WAL then grew with every commit (issue 43: 516-777 MB in one 10 s run of
SaveMessage) and every read searched a longer WAL index. So once a passive checkpoint finds
WAL_BOUND_PAGES or more in the WAL, the writer thread checkpoints it in RESTART mode, waiting
at most WAL_RESTART_WAIT_MS for readers to move off it, and the next commit writes from the
WAL's start. A restart blocks writers while it waits, so one that readers kept from finishing
(a long read: an export's snapshot) is tried again only once the WAL has doubled; `journal_size_limit`
(schema.PRAGMAS) then truncates the file to schema.WAL_LIMIT_BYTES. The WAL file stays at
about WAL_BOUND_PAGES pages plus what CHECKPOINT_EVERY groups add (docs/OPERATIONS.md).
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import sqlite3
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import structlog

from memoryd.domain.errors import StorageUnavailable

log = structlog.get_logger("memoryd.storage.sqlite")

# Writes committed together at most (bounds the latency one group adds to its first write).
GROUP_COMMIT_MAX = 64
# How long a loop group may wait for the loop's other ready work (and the writes it brings).
INLINE_LINGER_SECONDS = 0.005
# Loop commits between two passive checkpoints on the writer thread (~10-20 pages each).
CHECKPOINT_EVERY = 64
# A loop group that finds the write lock held elsewhere tries again this often, this many
# times (asyncio's timers are at least a millisecond), before the writer thread waits for it.
BUSY_RETRY_SECONDS = 0.001
BUSY_RETRIES = 10
# WAL pages (4 KiB each: 16 MiB) from which a checkpoint restarts the WAL (module docstring).
WAL_BOUND_PAGES = 4096
# How long that restart waits for readers still reading the WAL (the writes queue meanwhile).
WAL_RESTART_WAIT_MS = 50


@dataclass(slots=True)
class _Write:
    fn: Callable[[sqlite3.Connection], Any]
    future: asyncio.Future
    loop: asyncio.AbstractEventLoop
    inline: bool


class _Busy(Exception):
    """The loop's group met the write lock held by another connection: the thread retries it."""


class _Failed(Exception):
    """A write of an optimistic group (no savepoints) failed with `error`."""

    def __init__(self, error: Exception) -> None:
        super().__init__()
        self.error = error


def _code(exc: BaseException) -> int:
    return (exc.sqlite_errorcode or 0) & 0xFF if isinstance(exc, sqlite3.Error) else 0


def _settle(future: asyncio.Future, ok: bool, value: Any) -> None:
    if future.done():  # the caller was cancelled; its write committed (or failed) regardless
        return
    if ok:
        future.set_result(value)
    else:
        future.set_exception(value)


def _settle_all(settled: list[tuple[asyncio.Future, bool, Any]]) -> None:
    for future, ok, value in settled:
        _settle(future, ok, value)


class GroupCommit:
    """The write queue of one open SqliteStore (module docstring).

    `thread_connection()` is the calling thread's connection (the writer thread's, here);
    `loop_connection()` opens the loop's write connection, once. `failure(exc)` turns a SQLite
    error into the error a write answers (a domain error); `is_full(exc)` says whether the
    disk is full, which fails the whole group (SQLite may have rolled it back already).
    """

    def __init__(
        self,
        executor: ThreadPoolExecutor,
        thread_connection: Callable[[], sqlite3.Connection],
        loop_connection: Callable[[], sqlite3.Connection],
        failure: Callable[[sqlite3.Error], Exception],
        is_full: Callable[[BaseException], bool],
    ) -> None:
        self._executor = executor
        self._thread_connection = thread_connection
        self._open_loop_connection = loop_connection
        self._loop_conn: sqlite3.Connection | None = None
        self._failure = failure
        self._is_full = is_full
        self._queue: collections.deque[_Write] = collections.deque()
        self._lock = threading.Lock()
        self._draining = False  # one drain at a time: on the loop or on the thread
        self._loop_commits = 0
        self._thread_groups = 0
        self._restart_at = 0  # WAL pages that make a restart (0: WAL_BOUND_PAGES; module docstring)
        self._checkpoint_queued = False
        self._busy_tries = 0
        self.closed = False

    async def write(self, fn: Callable[[sqlite3.Connection], Any], *, inline: bool) -> Any:
        """Run `fn(conn)` in a write transaction, committed with the writes queued beside it."""
        loop = asyncio.get_running_loop()
        future: asyncio.Future = loop.create_future()
        with self._lock:
            self._queue.append(_Write(fn, future, loop, inline))
            start = not self._draining
            self._draining = True
        if start:
            self._hand_on(loop)
        return await future

    # -- who commits next ------------------------------------------------------------------
    def _hand_on(self, running: asyncio.AbstractEventLoop | None) -> None:
        """The drain passes to where the queue's head commits (the caller holds the drain);
        `running`: the event loop the caller runs on, None on the writer thread."""
        with self._lock:
            if self.closed:
                queued, self._queue = self._queue, collections.deque()
            elif not self._queue:
                self._draining = False
                return
            else:
                head, queued = self._queue[0], None
        if queued is not None:
            self._fail(queued)
        elif not head.inline:
            self._submit(self._drain_on_thread)
        elif head.loop is running:
            head.loop.call_soon(self._commit_on_loop, None)
        else:
            try:
                head.loop.call_soon_threadsafe(self._commit_on_loop, None)
            except RuntimeError:  # that loop has closed: nobody waits for its writes any more
                with self._lock:
                    while self._queue and self._queue[0].loop is head.loop:
                        self._queue.popleft()
                self._hand_on(running)

    def _submit(self, job: Callable[..., None], *args: Any) -> None:
        try:
            self._executor.submit(job, *args)
        except RuntimeError:  # the store is closing: nothing will drain the queue
            self.close()
            self._hand_on(None)

    def close(self) -> None:
        """From now on queued and new writes answer UNAVAILABLE (the store is closing)."""
        self.closed = True

    @staticmethod
    def _fail(queued: collections.deque[_Write]) -> None:
        error = StorageUnavailable("the SQLite store is closing")
        for write in queued:
            with contextlib.suppress(RuntimeError):  # that loop has closed
                write.loop.call_soon_threadsafe(_settle, write.future, False, error)

    # -- on the event loop -------------------------------------------------------------------
    def _commit_on_loop(self, lingering_since: float | None) -> None:
        loop = asyncio.get_running_loop()
        now = time.monotonic()
        since = now if lingering_since is None else lingering_since
        # asyncio's ready queue: callbacks this loop runs before it next waits for I/O. Other
        # loops (no such attribute) commit at once.
        if (
            getattr(loop, "_ready", None)
            and len(self._queue) < GROUP_COMMIT_MAX
            and now - since < INLINE_LINGER_SECONDS
        ):
            loop.call_soon(self._commit_on_loop, since)
            return
        with self._lock:
            batch: list[_Write] = []
            while self._queue and len(batch) < GROUP_COMMIT_MAX:
                head = self._queue[0]
                if not head.inline or head.loop is not loop:
                    break
                batch.append(self._queue.popleft())
        if not batch or self.closed:
            with self._lock:
                self._queue.extendleft(reversed(batch))
            self._hand_on(loop)
            return
        try:
            outcomes = self._commit(self._loop_connection(), batch, on_loop=True)
        except _Busy:
            with self._lock:
                self._queue.extendleft(reversed(batch))
            # Another process commits (a group takes a fraction of a millisecond): try again
            # shortly, the group growing meanwhile; a lock held longer (an import) is waited
            # for on the thread.
            self._busy_tries += 1
            if self._busy_tries <= BUSY_RETRIES:
                loop.call_later(BUSY_RETRY_SECONDS, self._commit_on_loop, None)
            else:
                self._busy_tries = 0
                self._submit(self._drain_on_thread, True)
            return
        self._busy_tries = 0
        for write, (ok, value) in zip(batch, outcomes, strict=True):
            _settle(write.future, ok, value)
        self._loop_commits += 1
        if self._loop_commits % CHECKPOINT_EVERY == 0 and not self._checkpoint_queued:
            self._checkpoint_queued = True
            self._submit(self._checkpoint)
        self._hand_on(loop)

    def _loop_connection(self) -> sqlite3.Connection:
        if self._loop_conn is None:
            conn = self._open_loop_connection()
            conn.execute("PRAGMA busy_timeout=0")  # a held lock sends the group to the thread
            conn.execute("PRAGMA wal_autocheckpoint=0")  # the thread checkpoints (_checkpoint)
            self._loop_conn = conn
        return self._loop_conn

    # -- on the writer thread ----------------------------------------------------------------
    def _drain_on_thread(self, take_small: bool = False) -> None:
        """Commit queued writes in groups while the head is not the loop's, then hand on.
        `take_small`: the head is a loop group that met a held lock; wait for it here."""
        conn = self._thread_connection()
        while True:
            with self._lock:
                if not self._queue or (self._queue[0].inline and not take_small):
                    break
                batch = [self._queue.popleft() for _ in range(min(GROUP_COMMIT_MAX, len(self._queue)))]
            take_small = False
            outcomes = self._commit(conn, batch, on_loop=False)
            self._thread_groups += 1
            # One wake-up per event loop for the whole group, not one per write.
            by_loop: dict[asyncio.AbstractEventLoop, list] = {}
            for write, (ok, value) in zip(batch, outcomes, strict=True):
                by_loop.setdefault(write.loop, []).append((write.future, ok, value))
            for loop, settled in by_loop.items():
                with contextlib.suppress(RuntimeError):  # the caller's loop has closed
                    loop.call_soon_threadsafe(_settle_all, settled)
            if self._thread_groups % CHECKPOINT_EVERY == 0:
                self._checkpoint()
        self._hand_on(None)

    def _checkpoint(self) -> None:
        """A passive checkpoint; a restart too once the WAL holds WAL_BOUND_PAGES (module docstring)."""
        self._checkpoint_queued = False
        try:
            conn = self._thread_connection()
            row = conn.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()
            if row is not None and row[1] < self._restart_at // 2:
                self._restart_at = 0  # the WAL started over meanwhile
            if row is not None and row[1] >= (self._restart_at or WAL_BOUND_PAGES):
                waits = conn.execute("PRAGMA busy_timeout").fetchone()[0]
                conn.execute(f"PRAGMA busy_timeout={WAL_RESTART_WAIT_MS}")
                try:
                    busy, frames, done = conn.execute("PRAGMA wal_checkpoint(RESTART)").fetchone()
                finally:
                    conn.execute(f"PRAGMA busy_timeout={waits}")
                self._restart_at = 2 * frames if busy else 0  # readers refused: once it doubled
                log.debug("sqlite_wal_restart", busy=busy, frames=frames, checkpointed=done)
        except sqlite3.Error as exc:  # the next one tries again; SQLite's own would have failed alike
            log.info("sqlite_checkpoint_failed", error=str(exc))

    # -- one group -----------------------------------------------------------------------------
    def _commit(self, conn: sqlite3.Connection, batch: list[_Write], *, on_loop: bool) -> list[tuple[bool, Any]]:
        """(ok, result or error) of each write of `batch`, committed as one transaction.

        Optimistic: the writes run one after another without savepoints (two statements a
        write saved); if one fails, the group is rolled back and, when others are in it, run
        again with each write in its own savepoint, so that only the failing one is left
        out. (A write is a function of the database and its arguments: running it again is
        running it once.) On the loop, a lock held elsewhere raises _Busy (nothing stays)."""
        try:
            conn.execute("BEGIN IMMEDIATE")
            try:
                outcomes = self._run(conn, batch, on_loop, savepoints=False)
            except _Failed as failed:
                conn.execute("ROLLBACK")
                if len(batch) == 1:
                    return [(False, failed.error)]
                conn.execute("BEGIN IMMEDIATE")
                outcomes = self._run(conn, batch, on_loop, savepoints=True)
            conn.execute("COMMIT")
        except sqlite3.Error as exc:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            if on_loop and _code(exc) == sqlite3.SQLITE_BUSY:
                raise _Busy from exc
            failure = self._failure(exc)
            return [(False, failure)] * len(batch)
        return outcomes

    def _run(self, conn: sqlite3.Connection, batch: list[_Write], on_loop: bool, *, savepoints: bool):
        """The outcomes of the writes in the open transaction; without savepoints the first
        failure raises _Failed (the caller rolls back)."""
        outcomes: list[tuple[bool, Any]] = []
        for write in batch:
            if savepoints:
                conn.execute("SAVEPOINT write")
            try:
                outcomes.append((True, write.fn(conn)))
            except Exception as exc:  # noqa: BLE001 - handed to that write's caller
                if self._is_full(exc) or (on_loop and _code(exc) == sqlite3.SQLITE_BUSY):
                    raise  # SQLite may have rolled the whole group back already: not this write's alone
                error = self._failure(exc) if isinstance(exc, sqlite3.OperationalError) else exc
                if not savepoints:
                    raise _Failed(error) from None
                conn.execute("ROLLBACK TO write")
                conn.execute("RELEASE write")
                outcomes.append((False, error))
                continue
            if savepoints:
                conn.execute("RELEASE write")
        return outcomes
