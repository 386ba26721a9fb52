"""The log-consumer runtime: state derived from the tenants' event logs, kept in step.

Every change a tenant makes writes events in the change's own transaction (the store's
per-tenant log, domain/events.py). A `LogConsumer` turns events into derived state (the recall
index: vectors/sync.py); the `Runtime` does everything else, the same for every consumer:

- **Cursors**: per consumer and tenant, the seq its state is applied through, persisted as the
  metadata record `<consumer name>` / `<tenant>` of the system tenant (`{"seq": n,
  "fingerprint": "…"}`), written at most once per CURSOR_SAVE_SECONDS per tenant (and on
  close): a crash replays at most that much of the log, and `apply` is idempotent.
- **Rebuilds**: a cursor written under another `fingerprint()` (settings that change what the
  derived state holds), a log compacted past the cursor (events never applied are gone), or a
  consumer that says its state is gone (`intact`), makes the tenant `rebuild` from the store;
  the log then continues from the position the rebuild reflects.
- **Batches**: the log after the cursor, in order, only the consumer's `event_types`, at most
  `batch` events a read (a read asks for READ_AHEAD times what the last apply took, at least
  READ_AHEAD_MIN: events of 1,000 messages are not read 500 at a time); `take` says how many
  of the events read one `apply` gets. Events read and not yet applied are applied next, not
  read again.
- **Retries**: an `apply` (or rebuild) that raises keeps the cursor where it was and is tried
  again after a backoff of its own tenant (min_backoff_seconds doubling up to
  max_backoff_seconds): nothing is skipped. The other tenants go on meanwhile, and a tenant's
  turn in a pass lasts at most `turn_seconds` while others wait: one tenant's backlog or
  failure never starves another's.
- **Leases**: with `lease=True` (several processes on one store) each consumer applies the
  logs only in the process holding its lease (consumers/lease.py); the others follow its
  persisted cursors, so their positions still advance.
- **Positions**: `Track.wait_for(tenant, seq)` returns once the consumer applied the tenant's
  log through `seq` (the caller bounds the wait); `Track.status(tenant)` says position, lag,
  rebuilding, retries and the last error. A process where another runs the consumers (the
  embedded engine process) sees the same through consumers/remote.py.

Wake-ups: every local commit (the store's notifier, as Watch uses; then `linger_seconds` so a
stream of saves makes batches), a waiter (`wake(tenant)`, at once, even during that tenant's
backoff), and a poll every `poll_seconds` (other processes' commits). With `quiet_seconds`
(work that can wait: memory formation) a pass also waits while local commits keep coming,
until they pause that long, at most `defer_seconds`: a burst of saves is served first, its
consumers' work done after it (a waiter still starts a pass at once).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from memoryd import shutdown
from memoryd.consumers.lease import Lease, namespace_of
from memoryd.domain.errors import MemorydError
from memoryd.domain.models import SYSTEM_TENANT, Event, EventType, now_ms
from memoryd.domain.store import Store

log = logging.getLogger(__name__)

BATCH = 500
# Events read at once: READ_AHEAD times those the last apply took, at least READ_AHEAD_MIN (at
# most the consumer's `batch`).
READ_AHEAD = 4
READ_AHEAD_MIN = 16
# The persisted cursor is written at most this often per tenant (the in-memory one at once).
CURSOR_SAVE_SECONDS = 1.0
# A tenant's turn in a pass, while other tenants have work too.
TURN_SECONDS = 0.5

Progress = Callable[[str, int, int], None]  # (tenant, applied through, of)


class LogConsumer(Protocol):
    """What derives state from the event log. Subclass `Consumer` for the optional parts."""

    @property
    def name(self) -> str:
        """The cursor namespace, e.g. "memoryd.vector-sync"."""
        ...

    @property
    def event_types(self) -> Collection[EventType]:
        """The events it reads (empty: every type)."""
        ...

    @property
    def batch(self) -> int:
        """Events read at once, at most."""
        ...

    def fingerprint(self) -> str:
        """The settings its state depends on: a cursor written under another one is rebuilt."""
        ...

    def take(self, events: Sequence[Event]) -> int:
        """How many of `events` (read in order) one `apply` gets (at least 1)."""
        ...

    async def apply(self, tenant: str, events: Sequence[Event]) -> None:
        """Apply a batch of the tenant's events, in order. Idempotent (a crash replays up to
        CURSOR_SAVE_SECONDS of the log); raise to have the batch tried again later."""
        ...

    async def rebuild(self, tenant: str) -> int | None:
        """Derive the tenant's state again from the store. Returns the log position (seq) the
        result reflects (events after it are applied next), or None: the newest seq read
        just before the call."""
        ...

    async def intact(self, tenant: str) -> bool:
        """Whether the state the tenant's persisted cursor vouches for is still there."""
        ...

    async def vouch(self, tenant: str) -> None:
        """Called before the tenant's cursor is first persisted by this process: leave what
        `intact` looks for."""
        ...


class Consumer:
    """Defaults of LogConsumer's optional parts."""

    name = ""
    event_types: Collection[EventType] = ()
    batch = BATCH

    def take(self, events: Sequence[Event]) -> int:
        return len(events)

    async def intact(self, tenant: str) -> bool:
        return True

    async def vouch(self, tenant: str) -> None:
        return None


@dataclass(frozen=True, slots=True)
class TenantStatus:
    position: int  # the log applied through this seq
    latest: int  # the log's newest seq when last read
    rebuilding: bool = False
    retries: int = 0  # failed applies since the process started
    last_error: str = ""  # the reason of the last failure, "" once an apply succeeded

    @property
    def lag(self) -> int:
        return max(0, self.latest - self.position)


class Positions(Protocol):
    """How a process sees a consumer: where it is, and a wait for a position. A `Track` (the
    consumer runs here) or a `RemoteTrack` (it runs in the engine process: remote.py)."""

    @property
    def running(self) -> bool:
        """Something applies the log (a wait for a position can end)."""
        ...

    @property
    def retries(self) -> int: ...

    @property
    def last_error(self) -> str: ...

    def position(self, tenant: str) -> int: ...

    def status(self, tenant: str) -> TenantStatus | None: ...

    def lag(self) -> int: ...

    def wake(self, tenant: str | None = None) -> None: ...

    async def wait_for(self, tenant: str, seq: int) -> None: ...


class Gauge(Protocol):
    def set(self, value: float) -> None: ...


class Counter(Protocol):
    def inc(self, amount: float = 1) -> None: ...


@dataclass(slots=True)
class Cursor:
    through: int = 0  # applied through this seq (in memory)
    saved: int = 0  # ... as persisted
    saved_at: float = 0.0
    latest: int = 0  # the log's newest seq when last read
    rebuilding: bool = False
    vouched: bool = False  # `vouch` done (or `intact` confirmed) for this cursor
    retries: int = 0
    last_error: str = ""
    backoff: float = 0.0
    retry_at: float = 0.0  # monotonic: not tried before then (unless a waiter wakes it)
    pending: Sequence[Event] = ()  # read, not yet applied (kept from a turn that ran out)
    read_through: int = 0  # the `through_seq` of the read that left `pending`
    more: bool = False  # that read was full: more events may follow up to read_through
    limit: int = 0  # events the next read asks for (0: the consumer's batch)

    def status(self) -> TenantStatus:
        return TenantStatus(self.through, self.latest, self.rebuilding, self.retries, self.last_error)


async def wait_any(events: Sequence[asyncio.Event], timeout: float) -> None:
    """Until one of `events` is set, or `timeout` seconds."""
    waits = [asyncio.ensure_future(event.wait()) for event in events]
    try:
        await asyncio.wait(waits, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for waiter in waits:
            waiter.cancel()


class Track:
    """One consumer in a runtime: its cursors, lease and status (its `Positions` here)."""

    def __init__(
        self,
        runtime: Runtime,
        consumer: LogConsumer,
        lease: Lease | None,
        lag_gauge: Gauge | None = None,
        retry_counter: Counter | None = None,
    ) -> None:
        self.runtime = runtime
        self.consumer = consumer
        self.name = consumer.name
        self.store = runtime.store
        self.lease = lease
        self.lag_gauge = lag_gauge
        self.retry_counter = retry_counter
        self.cursors: dict[str, Cursor] = {}
        self.holding = lease is None
        self.retries = 0  # failed applies (and passes)
        self.applied = 0  # events applied
        self.last_error = ""
        self._advanced: dict[str, asyncio.Event] = {}

    # -- Positions ------------------------------------------------------------------
    @property
    def running(self) -> bool:
        return self.runtime.running

    def position(self, tenant: str) -> int:
        cursor = self.cursors.get(tenant)
        return cursor.through if cursor is not None else 0

    def status(self, tenant: str) -> TenantStatus | None:
        cursor = self.cursors.get(tenant)
        return cursor.status() if cursor is not None else None

    def lag(self) -> int:
        return sum(max(0, c.latest - c.through) for c in self.cursors.values())

    def wake(self, tenant: str | None = None) -> None:
        self.runtime.wake(tenant)

    async def wait_for(self, tenant: str, seq: int) -> None:
        """Return once the tenant's log is applied through `seq` (the caller bounds the wait)."""
        while True:
            cursor = self.cursors.get(tenant) or await self.load(tenant)
            if cursor.through >= seq and not cursor.rebuilding:
                return
            advanced = self._advanced.setdefault(tenant, asyncio.Event())
            self.runtime.wake(tenant)
            await advanced.wait()

    def _moved(self, tenant: str) -> None:
        advanced = self._advanced.pop(tenant, None)
        if advanced is not None:
            advanced.set()

    def _gauge(self) -> None:
        if self.lag_gauge is not None:
            self.lag_gauge.set(self.lag())

    # -- cursors --------------------------------------------------------------------
    async def load(self, tenant: str) -> Cursor:
        """The tenant's cursor, read from the store the first time (and checked: fingerprint,
        `intact`)."""
        cursor = self.cursors.get(tenant)
        if cursor is not None:
            return cursor
        entry = await self.store.get_metadata(self.runtime.system_tenant, self.name, tenant)
        data = entry.data if entry is not None else {}
        seq = int(data.get("seq", 0))
        cursor = Cursor(seq, seq, time.monotonic())
        if entry is not None and data.get("fingerprint") != self.consumer.fingerprint():
            # Applied under other settings (or by a release that kept no fingerprint). A tenant
            # never seen replays its log from the start (or rebuilds when it was compacted).
            cursor.rebuilding = True
        elif entry is not None and seq > 0:
            cursor.vouched = await self.consumer.intact(tenant)
            if not cursor.vouched:
                log.warning("%s: the state the cursor vouches for is gone: rebuilding", self.name)
                cursor.rebuilding = True
        return self.cursors.setdefault(tenant, cursor)

    async def save(self, tenant: str, cursor: Cursor) -> None:
        if not cursor.vouched:  # first: a cursor never vouches for state without it
            await self.consumer.vouch(tenant)
            cursor.vouched = True
        data = {"seq": cursor.through, "fingerprint": self.consumer.fingerprint()}
        await self.store.save_metadata(self.runtime.system_tenant, self.name, tenant, data, now_ms())
        cursor.saved, cursor.saved_at = cursor.through, time.monotonic()

    async def flush(self, *, due_only: bool = False) -> None:
        """Persist the cursors that moved (`due_only`: those not written for CURSOR_SAVE_SECONDS)."""
        now = time.monotonic()
        for tenant, cursor in list(self.cursors.items()):
            if cursor.through != cursor.saved and not cursor.rebuilding:
                if not due_only or now - cursor.saved_at >= CURSOR_SAVE_SECONDS:
                    await self.save(tenant, cursor)

    async def _advance(self, tenant: str, cursor: Cursor, seq: int) -> None:
        cursor.through = max(cursor.through, seq)
        if cursor.through != cursor.saved and time.monotonic() - cursor.saved_at >= CURSOR_SAVE_SECONDS:
            await self.save(tenant, cursor)
        self._moved(tenant)
        self._gauge()

    # -- the lease ------------------------------------------------------------------
    async def hold(self) -> bool:
        """Whether this process applies the consumer's logs now (it holds the lease, or there is none)."""
        if self.lease is None:
            return True
        if await self.lease.hold():
            if not self.holding:  # taken over: every tenant checked afresh (fingerprint, intact)
                self.cursors.clear()
                self.holding = True
            return True
        self.holding = False
        return False

    async def follow(self, tenants: Sequence[str]) -> None:
        """Not the lease holder: each tenant's position from its persisted cursor."""
        for tenant in tenants:
            entry = await self.store.get_metadata(self.runtime.system_tenant, self.name, tenant)
            seq = int(entry.data.get("seq", 0)) if entry is not None else 0
            cursor = self.cursors.setdefault(tenant, Cursor(seq, seq, time.monotonic()))
            cursor.rebuilding = False  # the holder's business
            cursor.pending = ()
            cursor.latest = (await self.store.event_bounds(tenant))[1]
            if seq > cursor.through:
                cursor.through = cursor.saved = seq
                self._moved(tenant)
        self._gauge()

    # -- applying -------------------------------------------------------------------
    async def rebuild(self, tenant: str, cursor: Cursor, latest: int) -> None:
        cursor.rebuilding = True
        cursor.pending, cursor.limit = (), 0
        log.info("%s: rebuilding a tenant from the store", self.name)
        position = await self.consumer.rebuild(tenant)
        cursor.through = max(latest if position is None else position, 0)
        cursor.rebuilding = False
        await self.save(tenant, cursor)
        self._moved(tenant)

    async def advance(self, tenant: str, budget: float | None = None, progress: Progress | None = None) -> bool:
        """Apply the tenant's log up to its newest seq; False when `budget` seconds ran out
        first. Raises the consumer's failure (the cursor stays where the last apply ended)."""
        consumer = self.consumer
        cursor = await self.load(tenant)
        floor, latest = await self.store.event_bounds(tenant)
        cursor.latest = latest
        if cursor.through < floor:
            log.warning(
                "%s: the log was compacted past the cursor (%d < %d): rebuilding", self.name, cursor.through, floor
            )
            cursor.rebuilding = True
        if cursor.rebuilding:
            await self.rebuild(tenant, cursor, latest)
            floor, latest = await self.store.event_bounds(tenant)
            cursor.latest = latest
        end = None if budget is None else time.monotonic() + budget
        types = tuple(consumer.event_types)
        while cursor.through < latest:
            if self.lease is not None and not await self.lease.hold():
                return True  # another process took over
            if not cursor.pending:
                limit = cursor.limit or consumer.batch
                cursor.pending = await self.store.read_events(
                    tenant, cursor.through, limit, types=types, through_seq=latest
                )
                cursor.read_through, cursor.more = latest, len(cursor.pending) == limit
            if not cursor.pending:  # nothing up to `read_through` is the consumer's
                await self._advance(tenant, cursor, cursor.read_through)
                continue
            pending = cursor.pending
            taken = pending[: max(1, min(len(pending), consumer.take(pending)))]
            await consumer.apply(tenant, taken)
            cursor.pending = pending[len(taken) :]
            self.applied += len(taken)
            cursor.limit = min(consumer.batch, max(READ_AHEAD_MIN, READ_AHEAD * len(taken)))
            whole = not cursor.pending and not cursor.more
            await self._advance(tenant, cursor, cursor.read_through if whole else taken[-1].seq)
            if progress is not None:
                progress(tenant, cursor.through, latest)
            if end is not None and cursor.through < latest and time.monotonic() >= end:
                return False
        cursor.last_error, cursor.backoff, cursor.retry_at = "", 0.0, 0.0
        cursor.limit = 0  # the next pass reads a whole batch again
        return True

    def failed(self, tenant: str | None, reason: str) -> float:
        """Count a failure (of one tenant, or of a whole pass); returns the tenant's backoff."""
        self.retries += 1
        self.last_error = reason
        if self.retry_counter is not None:
            self.retry_counter.inc()
        cursor = self.cursors.get(tenant) if tenant is not None else None
        if cursor is None:
            return 0.0
        runtime = self.runtime
        cursor.retries += 1
        cursor.last_error = reason
        # Read again when retried: the batch then takes what the log gained meanwhile (a
        # retry of the first event alone would hold every later one back).
        cursor.pending, cursor.limit = (), 0
        cursor.backoff = runtime.min_backoff if cursor.backoff <= 0 else min(cursor.backoff * 2, runtime.max_backoff)
        cursor.retry_at = time.monotonic() + cursor.backoff
        log.info("%s: %s; retrying in %.1f s (the cursor stays)", self.name, reason, cursor.backoff)
        return cursor.backoff

    def settle(self) -> None:
        """After a pass: the last error is the one a tenant still has ("" when none has)."""
        self.last_error = next((c.last_error for c in self.cursors.values() if c.last_error), "")


class Runtime:
    """Runs log consumers over one store: `add` them, then `run` until cancelled."""

    def __init__(
        self,
        store: Store,
        consumers: Sequence[LogConsumer] = (),
        *,
        poll_seconds: float = 1.0,
        linger_seconds: float = 0.02,
        min_backoff_seconds: float = 0.2,
        max_backoff_seconds: float = 30.0,
        turn_seconds: float = TURN_SECONDS,
        lease: bool = False,
        tenants: Collection[str] | None = None,
        system_tenant: str = SYSTEM_TENANT,
        quiet_seconds: float = 0.0,
        defer_seconds: float = 0.0,
    ) -> None:
        """`lease`: several processes run the same consumers on this store (one applies each
        consumer's logs at a time). `tenants`: only these logs (`memoryd reindex --tenant`,
        tests); None: every tenant's."""
        self.store = store
        self.poll_seconds = poll_seconds
        self.linger_seconds = linger_seconds
        self.quiet_seconds = quiet_seconds
        self.defer_seconds = defer_seconds
        self.min_backoff = min_backoff_seconds
        self.max_backoff = max_backoff_seconds
        self.turn_seconds = turn_seconds
        self.leased = lease
        self.tenants = tenants
        self.system_tenant = system_tenant
        self.tracks: dict[str, Track] = {}
        self.running = False  # the loop (`run`) is applying the logs
        self._wake = asyncio.Event()
        self._urgent: set[str] = set()  # tenants a waiter woke: tried now, backoff or not
        self._urgent_all = False  # ... every tenant (a waiter in another process)
        self._lock = asyncio.Lock()  # one pass at a time (run loop, sync_tenant, reindex)
        for consumer in consumers:
            self.add(consumer)

    def add(
        self, consumer: LogConsumer, *, lag_gauge: Gauge | None = None, retry_counter: Counter | None = None
    ) -> Track:
        if not consumer.name or consumer.name in self.tracks:
            raise ValueError(f"a consumer needs a name of its own (got {consumer.name!r})")
        lease = Lease(self.store, namespace_of(consumer.name)) if self.leased else None
        track = self.tracks[consumer.name] = Track(self, consumer, lease, lag_gauge, retry_counter)
        return track

    def track(self, name: str) -> Track:
        return self.tracks[name]

    def _chosen(self, name: str | None) -> list[Track]:
        return list(self.tracks.values()) if name is None else [self.tracks[name]]

    async def tenant_logs(self) -> list[str]:
        """The tenants whose logs the consumers follow."""
        every = await self.store.event_tenants()
        return [t for t in every if t != self.system_tenant and (self.tenants is None or t in self.tenants)]

    def wake(self, tenant: str | None = None, *, urgent: bool = False) -> None:
        """Start a pass now. A waiter's tenant (`tenant`; every tenant when `urgent`) is tried
        even while it backs off."""
        if tenant is not None:
            self._urgent.add(tenant)
        self._urgent_all = self._urgent_all or urgent
        self._wake.set()

    def snapshot(self) -> dict[str, Any]:
        """Every consumer's positions, plain values (what remote.py reads over the engine socket)."""
        return {
            name: {
                "tenants": {t: (c.through, c.latest, c.rebuilding) for t, c in track.cursors.items()},
                "error": track.last_error,
                "retries": track.retries,
            }
            for name, track in self.tracks.items()
        }

    # -- the loop -------------------------------------------------------------------
    async def run(self) -> None:
        self.running = True
        try:
            await self._run()
        finally:
            self.running = False

    async def _run(self) -> None:
        backoff = self.min_backoff
        while True:
            shutdown.raise_if_cancelled()
            changed = self.store.notifier.current()
            self._wake.clear()
            urgent: Collection[str] | None = None if self._urgent_all else self._urgent
            self._urgent, self._urgent_all = set(), False
            failed = False
            try:
                more = await self._pass(urgent)
                backoff, delay = self.min_backoff, self._delay()
            except Exception as error:  # noqa: BLE001 - the loop must outlive any one pass
                # The store itself (the tenants, a lease, a cursor write): every consumer waits.
                if not isinstance(error, MemorydError):
                    log.warning("log consumers: a pass failed", exc_info=True)
                reason = error.reason if isinstance(error, MemorydError) else type(error).__name__
                delay, backoff, more, failed = backoff, min(backoff * 2, self.max_backoff), False, True
                for track in self.tracks.values():
                    track.failed(None, reason)
                log.info("log consumers: %s; retrying in %.1f s", reason, delay)
            if more:  # a tenant's turn ended with work left: the next pass at once
                await asyncio.sleep(0)
                continue
            # After a failed pass only the backoff (or a waiter) starts the next one, not every
            # commit: a store that is down is not hammered.
            await wait_any([self._wake] if failed else [changed, self._wake], delay)
            if self.linger_seconds and not self._wake.is_set():
                # A stream of saves makes batches, not a pass each (a waiter cuts it short).
                with contextlib.suppress(TimeoutError):
                    async with asyncio.timeout(self.linger_seconds):
                        await self._wake.wait()
            await self._until_quiet()

    async def _until_quiet(self) -> None:
        """While local commits keep coming (`quiet_seconds`), wait, at most `defer_seconds`;
        a waiter's wake ends it."""
        if not self.quiet_seconds:
            return
        end = time.monotonic() + self.defer_seconds
        while not self._wake.is_set() and self.store.notifier.notified_within(self.quiet_seconds):
            left = end - time.monotonic()
            if left <= 0:
                return
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(min(self.quiet_seconds, left)):
                    await self._wake.wait()

    def _delay(self) -> float:
        """Until the next poll, or the next retry of a tenant that backs off."""
        now, delay = time.monotonic(), self.poll_seconds
        for track in self.tracks.values():
            for cursor in track.cursors.values():
                if cursor.retry_at > now:
                    delay = min(delay, cursor.retry_at - now)
        return delay

    async def _pass(self, urgent: Collection[str] | None) -> bool:
        """One turn of every tenant of every consumer; whether work is left. `urgent`: the
        tenants tried even while they back off (None: every one)."""
        async with self._lock:
            tenants = await self.tenant_logs()
            more = False
            for track in self.tracks.values():
                if not await track.hold():
                    await track.follow(tenants)
                    continue
                now = time.monotonic()
                for tenant in tenants:
                    cursor = track.cursors.get(tenant)
                    if cursor is not None and cursor.retry_at > now and urgent is not None and tenant not in urgent:
                        continue
                    try:
                        more |= not await track.advance(tenant, self.turn_seconds)
                    except MemorydError as error:
                        track.failed(tenant, error.reason)
                    except Exception as error:  # noqa: BLE001 - one tenant's failure is its own
                        log.warning("%s: applying a tenant's log failed", track.name, exc_info=True)
                        track.failed(tenant, type(error).__name__)
                await track.flush(due_only=True)
                track.settle()
            return more

    # -- one-off work (the CLI, tests) -------------------------------------------------------
    async def apply_all(self) -> int:
        """Apply every tenant's log up to its newest seq, for every consumer; returns events
        applied. Raises the first failure (that tenant's cursor stays)."""
        async with self._lock:
            before = sum(t.applied for t in self.tracks.values())
            tenants = await self.tenant_logs()
            for track in self.tracks.values():
                for tenant in tenants:
                    await track.advance(tenant)
                await track.flush(due_only=True)
            return sum(t.applied for t in self.tracks.values()) - before

    async def sync_tenant(self, tenant: str, name: str | None = None, progress: Progress | None = None) -> int:
        """Apply one tenant's log up to its newest seq (every consumer, or `name`'s); returns
        events applied. The cursors are persisted."""
        async with self._lock:
            applied = 0
            for track in self._chosen(name):
                before = track.applied
                await track.advance(tenant, progress=progress)
                cursor = track.cursors[tenant]
                if cursor.through != cursor.saved:
                    await track.save(tenant, cursor)
                applied += track.applied - before
            return applied

    async def reindex(self, tenant: str, name: str | None = None, progress: Progress | None = None) -> None:
        """Rebuild the tenant from the store, then apply its log up to now (`memoryd reindex`)."""
        async with self._lock:
            for track in self._chosen(name):
                cursor = await track.load(tenant)
                await track.rebuild(tenant, cursor, (await self.store.event_bounds(tenant))[1])
                await track.advance(tenant, progress=progress)
                await track.save(tenant, track.cursors[tenant])

    async def flush_cursors(self, *, due_only: bool = False) -> None:
        for track in self.tracks.values():
            await track.flush(due_only=due_only)

    async def close(self) -> None:
        """Persist the cursors this process owns and hand the leases on (a graceful stop)."""
        try:
            for track in self.tracks.values():
                if track.lease is None or track.lease.held:
                    await track.flush()
                if track.lease is not None:
                    await track.lease.release()
        except MemorydError as error:
            log.info(
                "log consumers: cursors not saved on close (%s): the log is replayed from the last ones", error.reason
            )
