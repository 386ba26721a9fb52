"""A consumer's positions in a process where another process runs it.

On the embedded default (SQLite + Qdrant Edge) the engine process runs the log consumers
(memoryd/engine.py); a serving process keeps a `RemoteTrack` per consumer it needs positions
of (search waits, GetVectorStats, the lag gauge). It reads them from the engine's runtime
over a `RuntimeLink` (the engine socket: `Runtime.snapshot`), once per poll and every
`linger_seconds` while someone waits for a position, and wakes the engine after each local
commit: SQLite commits of another process wake no one in the engine. A tenant the engine has
not loaded yet: its persisted cursor.

Several consumers of one engine (the recall index's, and memory formation's strategies, which
run in a runtime of their own there): one RemoteTrack each. A waiter's wake names its
consumer, so only that consumer's runtime starts a pass at once (`urgent`); a commit's wake
reaches every runtime of the engine, so one track forwards commits (`wake_engine`) and the
others only follow. Tracks of consumers that run together (formation's strategies) share their
periodic look: one track `leads` the others, whose positions each of its looks sets too (one
engine call and one read of the tenants' log bounds for all); a track that is led looks on its
own only while someone waits on it. The engine may add what else its consumers report (memory
formation: model calls and tokens) as the consumer's "report": `RemoteTrack.report`.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Sequence
from typing import Any, Protocol

from memoryd import shutdown
from memoryd.consumers.runtime import Cursor, Gauge, TenantStatus, wait_any
from memoryd.domain.errors import MemorydError
from memoryd.domain.models import SYSTEM_TENANT
from memoryd.domain.store import Store

log = logging.getLogger(__name__)

# The engine's runtime gathers a stream of commits this long into one pass: fewer, larger
# batches cost less per event (a waiter's wake cuts it short).
ENGINE_LINGER_SECONDS = 0.1
# While someone waits, the engine is told so (an urgent wake: a pass at once) when the wait
# starts and again at most this often; the polls between only read its positions (an urgent
# wake on every poll kept the engine's runtime in back-to-back passes).
URGENT_EVERY_SECONDS = 1.0


class RuntimeLink(Protocol):
    """The calls a process running the consumers answers (storage/qdrant/edge_process.py's
    EdgeProcessIndex over the engine socket)."""

    async def runtime_wake(self, urgent: bool = False, consumer: str = "") -> None:
        """A commit happened (`urgent`: a waiter waits for a position of `consumer`: its
        runtime starts a pass now; "": every runtime's)."""
        ...

    async def runtime_state(self, wake: bool = False, urgent: bool = False, consumer: str = "") -> dict[str, Any]:
        """Every runtime's `Runtime.snapshot()`, by consumer name (after a `runtime_wake` when
        `wake`)."""
        ...


class RemoteTrack:
    """The Positions of consumer `name`, which a runtime behind `link` runs."""

    def __init__(
        self,
        link: RuntimeLink,
        store: Store,
        name: str,
        *,
        poll_seconds: float = 1.0,
        linger_seconds: float = 0.02,
        system_tenant: str = SYSTEM_TENANT,
        lag_gauge: Gauge | None = None,
        wake_engine: bool = True,
        leads: Sequence[RemoteTrack] = (),
    ) -> None:
        """`wake_engine`: forward this process's commits to the engine (False: another track
        of the same engine does); `leads`: tracks whose positions this one's looks set too
        (they look on their own only for their waiters)."""
        self.link = link
        self.store = store
        self.name = name
        self.poll_seconds = poll_seconds
        self.linger_seconds = linger_seconds
        self.system_tenant = system_tenant
        self.lag_gauge = lag_gauge
        self.cursors: dict[str, Cursor] = {}
        self.running = False
        self.retries = 0
        self.last_error = ""
        self.wake_engine = wake_engine
        self.leads = tuple(leads)
        self.led = False  # another track's looks set this one's positions
        for track in self.leads:
            track.led = True
        self.report: dict[str, Any] = {}  # what the engine reports of the consumer besides positions
        self._wake = asyncio.Event()
        self._advanced = asyncio.Event()
        self._waiters = 0

    # -- Positions ------------------------------------------------------------------
    def position(self, tenant: str) -> int:
        cursor = self.cursors.get(tenant)
        return cursor.through if cursor is not None else 0

    def status(self, tenant: str) -> TenantStatus | None:
        cursor = self.cursors.get(tenant)
        return cursor.status() if cursor is not None else None

    def lag(self) -> int:
        return sum(max(0, c.latest - c.through) for c in self.cursors.values())

    def wake(self, tenant: str | None = None) -> None:
        self._wake.set()

    async def wait_for(self, tenant: str, seq: int) -> None:
        self._waiters += 1
        try:
            woken = False
            while True:
                cursor = self.cursors.get(tenant)
                if cursor is not None and cursor.through >= seq and not cursor.rebuilding:
                    return
                advanced = self._advanced
                if not woken:  # then the loop polls every linger while someone waits
                    self.wake()
                    woken = True
                await advanced.wait()
        finally:
            self._waiters -= 1

    # -- following --------------------------------------------------------------------
    async def run(self) -> None:
        self.running = True
        try:
            await self._run()
        finally:
            self.running = False

    async def _run(self) -> None:
        follow_at = urgent_at = 0.0
        while True:
            shutdown.raise_if_cancelled()
            changed = self.store.notifier.current()
            now = time.monotonic()
            urgent = self._wake.is_set() or (self._waiters > 0 and now >= urgent_at)
            polled = urgent or self._waiters > 0
            if urgent:
                urgent_at = now + URGENT_EVERY_SECONDS
            self._wake.clear()
            try:
                if polled or (not self.led and time.monotonic() >= follow_at):
                    follow_at = time.monotonic() + self.poll_seconds  # a failure too: not retried at once
                    await self.follow(urgent=urgent)
                elif self.wake_engine:  # a local commit: wake the engine, nothing to read here
                    await self.link.runtime_wake()
            except MemorydError as error:
                self.last_error = error.reason
            if self._waiters:
                delay = self.linger_seconds
            elif self.led:  # the leading track's looks set the positions: only a waiter wakes it
                delay = self.poll_seconds
            else:
                delay = max(0.0, follow_at - time.monotonic())
            # Local commits matter only to the track that forwards them.
            await wait_any((changed, self._wake) if self.wake_engine else (self._wake,), delay)
            if self.wake_engine and self.linger_seconds and not self._wake.is_set():
                # A stream of saves: the engine gathers them for ENGINE_LINGER_SECONDS anyway, so
                # one wake per engine linger (a waiter cuts it short).
                if self._waiters:
                    await asyncio.sleep(self.linger_seconds)
                else:
                    await wait_any((self._wake,), ENGINE_LINGER_SECONDS)

    async def follow(self, *, urgent: bool = False) -> None:
        """The engine's positions (a tenant it has not loaded yet: its persisted cursor), for
        this track and the ones it leads."""
        # A track that forwards no commits wakes the engine only for a waiter: its polls are no
        # commits (formation's runtime there defers while commits keep coming).
        wake = urgent or self.wake_engine
        state = await self.link.runtime_state(wake, urgent, self.name)
        tenants = [t for t in await self.store.event_tenants() if t != self.system_tenant]
        latest = {tenant: (await self.store.event_bounds(tenant))[1] for tenant in tenants}
        for track in (self, *self.leads):
            await track._absorb(state.get(track.name) or {}, latest)

    async def _absorb(self, remote: dict[str, Any], latest: dict[str, int]) -> None:
        self.last_error = remote.get("error", "")
        self.retries = remote.get("retries", 0)
        self.report = remote.get("report") or {}
        known = remote.get("tenants") or {}
        for tenant, newest in latest.items():
            if tenant in known:
                seq, _, rebuilding = known[tenant]
            else:
                entry = await self.store.get_metadata(self.system_tenant, self.name, tenant)
                seq, rebuilding = (int(entry.data.get("seq", 0)) if entry is not None else 0), False
            cursor = self.cursors.setdefault(tenant, Cursor(seq, seq, time.monotonic()))
            cursor.rebuilding = rebuilding
            cursor.latest = newest
            cursor.through = cursor.saved = max(cursor.through, seq)
        # Waiters check their position again after every look (they are few).
        self._advanced.set()
        self._advanced = asyncio.Event()
        if self.lag_gauge is not None:
            self.lag_gauge.set(self.lag())
