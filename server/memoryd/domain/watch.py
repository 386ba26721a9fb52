"""Fan-out of the durable event log to Watch streams, one reader per tenant (etcd's watchable store).

The store is the only source of truth; this module holds nothing that correctness needs.

- A `Watcher` first catches up by reading the log itself (`read_events` after its cursor),
  one bounded batch at a time, at the pace its client reads.
- Once it has read as far as its tenant's `_Feed`, it joins the feed. The feed is the one
  task per tenant that re-reads the log after each wake-up (one store read per wake, however
  many watchers) and appends the new events to every joined watcher's bounded buffer.
  Watchers drop events at or below their own cursor, so joining is gap- and duplicate-free
  even when the watcher read further than the feed.
- A watcher whose buffer is full is removed from the feed and ends with RESOURCE_EXHAUSTED
  (reason WATCHER_TOO_SLOW, metadata last_seq): the feed never waits for a watcher, so
  writers and other watchers are never slowed, and memory stays bounded.
- Idle watchers get `Progress(latest_seq)`; the first progress marks the join (the watch is
  live from there on, which is what a "from now" client needs to know).
- Wake-ups come from the store's notifier (commits in this process) and, on MongoDB, from
  `storage/mongo/tail.py` (commits of other processes). They carry no data; a missed one only
  delays delivery until the next one or `safety_interval`.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import logging
from collections.abc import Collection
from dataclasses import dataclass

from memoryd.domain.errors import MemorydError, OutOfRange, ResourceExhausted, StorageUnavailable
from memoryd.domain.models import Event, EventType
from memoryd.domain.store import Store

log = logging.getLogger(__name__)

READ_BATCH = 500


@dataclass(frozen=True, slots=True)
class Progress:
    """Every event matching the watch with seq <= latest_seq has been delivered."""

    latest_seq: int


@dataclass(frozen=True, slots=True)
class WatchFilter:
    """Sessions and types to deliver; empty means all. Tenant-wide events (no session) pass
    any session filter, since they concern every session."""

    session_ids: frozenset[str] = frozenset()
    types: frozenset[EventType] = frozenset()

    def matches(self, event: Event) -> bool:
        if self.types and event.type not in self.types:
            return False
        return not self.session_ids or not event.session_id or event.session_id in self.session_ids


def compacted(floor: int) -> OutOfRange:
    return OutOfRange(
        f"events up to seq {floor} were removed by retention; resync and watch from now",
        reason="EVENTS_COMPACTED",
        metadata={"oldest_seq": str(floor + 1)},
    )


class WatchHub:
    """Per-process registry of tenant feeds. `watch()` opens a stream; `close()` ends them all."""

    def __init__(
        self,
        store: Store,
        *,
        buffer_size: int = 1024,
        progress_interval: float = 10.0,
        safety_interval: float = 30.0,
    ) -> None:
        self.store = store
        self.buffer_size = buffer_size
        self.progress_interval = progress_interval
        self.safety_interval = safety_interval
        self._feeds: dict[str, _Feed] = {}
        self._closed = False

    def watch(self, tenant: str, after_seq: int | None, watch_filter: WatchFilter) -> Watcher:
        """A stream of Event and Progress items; iterate it, and `close()` it in a finally."""
        if self._closed:
            raise StorageUnavailable("the server is shutting down; resume on another replica", reason="SHUTTING_DOWN")
        return Watcher(self, tenant, after_seq, watch_filter)

    def close(self) -> None:
        """Stop every feed; open watchers deliver what they hold, then end with UNAVAILABLE."""
        self._closed = True
        for feed in list(self._feeds.values()):
            feed.stop(ended=True)

    @property
    def watcher_count(self) -> int:
        return sum(len(feed.watchers) for feed in self._feeds.values())

    @property
    def feed_count(self) -> int:
        return len(self._feeds)

    async def read_after(self, tenant: str, cursor: int, *, expect_more: bool = False) -> list[Event]:
        """One batch after `cursor`. Seqs have no holes, so a batch that does not start at
        cursor + 1 (or, when events are known to exist, an empty one) means retention passed it."""
        events = await self.store.read_events(tenant, cursor, READ_BATCH)
        if (events and events[0].seq != cursor + 1) or (not events and expect_more):
            floor, _ = await self.store.event_bounds(tenant)
            if cursor < floor:
                raise compacted(floor)
        return events

    def _join(self, watcher: Watcher) -> bool:
        """Attach a watcher that has read the log up to its cursor; False if it must read on."""
        feed = self._feeds.get(watcher.tenant)
        if feed is None:
            feed = self._feeds[watcher.tenant] = _Feed(self, watcher.tenant, watcher.seen)
        elif watcher.seen < feed.cursor:
            return False
        feed.watchers.add(watcher)
        return True

    def _leave(self, watcher: Watcher) -> None:
        feed = self._feeds.get(watcher.tenant)
        if feed is None or watcher not in feed.watchers:
            return
        feed.watchers.discard(watcher)
        if not feed.watchers:
            feed.stop(ended=False)

    def _forget(self, feed: _Feed) -> None:
        if self._feeds.get(feed.tenant) is feed:
            del self._feeds[feed.tenant]


class _Feed:
    """The one reader of a tenant's log in this process."""

    def __init__(self, hub: WatchHub, tenant: str, cursor: int) -> None:
        self.hub = hub
        self.tenant = tenant
        self.cursor = cursor  # every event <= cursor has been offered to the watchers
        self.watchers: set[Watcher] = set()
        self.stopped = False
        self.task = asyncio.get_running_loop().create_task(self._run(), name=f"watch-feed:{tenant}")

    def stop(self, *, ended: bool) -> None:
        self.stopped = True  # a cancellation swallowed below (asyncio.wait_for before 3.12) still ends the loop
        self.hub._forget(self)
        self.task.cancel()
        if ended:
            for watcher in self.watchers:
                # UNAVAILABLE, the status clients retry: they resume with after_seq elsewhere.
                watcher._end(
                    StorageUnavailable("the server is shutting down; resume with after_seq", reason="SHUTTING_DOWN")
                )
        self.watchers.clear()

    async def _run(self) -> None:
        notifier = self.hub.store.notifier
        try:
            while not self.stopped:
                changed = notifier.current()  # taken before the read: a commit during it re-wakes us
                events = await self.hub.read_after(self.tenant, self.cursor)
                if events and not self.stopped:
                    self.cursor = events[-1].seq
                    for watcher in list(self.watchers):
                        watcher._offer(events)
                    if len(events) == READ_BATCH:
                        continue
                with contextlib.suppress(TimeoutError):
                    async with asyncio.timeout(self.hub.safety_interval):
                        await changed.wait()
        except MemorydError as error:
            log.warning("watch feed stopped: %s", error.reason)
            self._fail(error)
        except Exception as error:  # noqa: BLE001 - watchers must end, not hang
            log.exception("watch feed crashed")
            self._fail(MemorydError(f"event feed failed: {type(error).__name__}"))
        finally:
            self.hub._forget(self)

    def _fail(self, error: MemorydError) -> None:
        for watcher in self.watchers:
            watcher._end(error)
        self.watchers.clear()


class Watcher:
    """One Watch stream: an async iterator of Event and Progress items.

    Not a generator on purpose: `close()` is synchronous and releases everything at once,
    wherever the stream was cancelled.
    """

    def __init__(self, hub: WatchHub, tenant: str, after_seq: int | None, watch_filter: WatchFilter) -> None:
        self.hub = hub
        self.tenant = tenant
        self.filter = watch_filter
        self._after_seq = after_seq
        self.seen = -1  # every event <= seen has been read (delivered, buffered or filtered out)
        self.position = -1  # the client has every matching event <= position
        self._started = False
        self._live = False
        self._pending: collections.deque[Event] = collections.deque()  # catch-up batch
        self._buffer: collections.deque[Event] = collections.deque()  # live events
        self._ready = asyncio.Event()
        self._announce: int | None = None
        self._progress_due = False
        self._overflowed = False
        self._ended = False
        self._error: MemorydError | None = None
        self._closed = False

    def __aiter__(self) -> Watcher:
        return self

    async def __anext__(self) -> Event | Progress:
        if not self._started:
            await self.start()
        while True:
            if self._closed:
                raise StopAsyncIteration
            if self._pending:
                event = self._pending.popleft()
                if self.filter.matches(event):
                    return self._deliver(event)
                continue
            if not self._live:
                await self._catch_up()
                continue
            if self._announce is not None:
                return self._progress(self._announce)
            if self._buffer:
                return self._deliver(self._buffer.popleft())
            if self._overflowed:
                raise ResourceExhausted(
                    f"watcher fell more than {self.hub.buffer_size} events behind; resume with after_seq",
                    reason="WATCHER_TOO_SLOW",
                    metadata={"last_seq": str(self.position)},
                )
            if self._error is not None:
                raise self._error
            if self._ended:
                self._closed = True
                return self._progress(self.seen)
            if self._progress_due:
                self._progress_due = False
                return self._progress(self.seen)
            self._ready.clear()
            try:
                async with asyncio.timeout(self.hub.progress_interval):
                    await self._ready.wait()
            except TimeoutError:
                self._progress_due = True

    async def start(self) -> None:
        """Fix the starting cursor (validating after_seq); every later write will be delivered."""
        self._started = True
        floor, latest = await self.hub.store.event_bounds(self.tenant)
        cursor = latest if self._after_seq is None else self._after_seq
        if cursor < floor:
            raise compacted(floor)
        if cursor > latest:
            raise OutOfRange(
                f"after_seq {cursor} is beyond the newest event ({latest})",
                reason="AFTER_SEQ_NOT_WRITTEN",
                metadata={"latest_seq": str(latest)},
            )
        self.seen = self.position = cursor

    async def _catch_up(self) -> None:
        if self.hub._closed:
            self._ended = self._live = True
            return
        if self.hub._join(self):
            self._live = True
            self._announce = self.seen
            return
        events = await self.hub.read_after(self.tenant, self.seen, expect_more=True)  # the feed is ahead
        if events:
            self.seen = events[-1].seq
            self._pending.extend(events)


    def _deliver(self, event: Event) -> Event:
        self.position = event.seq
        self._progress_due = False
        return event

    def _progress(self, seq: int) -> Progress:
        self._announce = None
        self.position = max(self.position, seq)
        return Progress(self.position)

    # -- called by the feed (synchronously, between the watcher's awaits) ------------
    def _offer(self, events: Collection[Event]) -> None:
        added = False
        for event in events:
            if event.seq <= self.seen:
                continue
            self.seen = event.seq
            if not self.filter.matches(event):
                continue
            if len(self._buffer) >= self.hub.buffer_size:
                self._overflowed = True
                self._buffer.clear()
                self.hub._leave(self)
                break
            self._buffer.append(event)
            added = True
        if added or self._overflowed:
            self._ready.set()

    def _end(self, error: MemorydError | None) -> None:
        self._ended = True
        self._error = error
        self._ready.set()

    def close(self) -> None:
        """Leave the feed and drop buffers; idempotent, safe from a finally."""
        self._closed = True
        self._pending.clear()
        self._buffer.clear()
        if self._live:
            self.hub._leave(self)
