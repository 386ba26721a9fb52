"""Fan-out of the durable event log to Watch streams, one reader per tenant (etcd's watchable store).

The store is the only source of truth; this module holds nothing that correctness needs.
docs/EVENTS.md ("How it is built") describes the design; in short:

- A `Watcher` starts **catching up** ("unsynced" in etcd): it reads the log itself
  (`read_events` after its cursor), one batch of CATCH_UP_BATCH at a time, and reads the next
  batch only when its client has taken the previous one (the gRPC handler's `yield` waits
  for flow control). Memory per stream is one batch, whatever the backlog.
- A read that comes back short has reached the log's end: the watcher joins its tenant's
  `_Feed` at once ("synced"), or reads on if the feed has already read further. The feed is
  the one task per tenant that re-reads the log after each wake-up (one store read per wake,
  however many watchers) and appends new events to every joined watcher's bounded buffer.
  Watchers drop events at or below their own cursor, so joining is gap- and duplicate-free.
- A live watcher whose buffer is full is **moved back to catch-up**: it drops the buffer,
  leaves the feed and re-reads the log from the last event its client received. The feed
  never waits for a watcher, so writers and other watchers are never slowed, memory stays
  bounded, and the client never sees an error for being slow.
- Every stream starts with `Progress(resume point, head)`. While catching up, a batch that
  ends with filtered-out events is followed by a progress, so a filtered watch over a long
  backlog reports its cursor at least once per CATCH_UP_BATCH events read; a stream that caught
  up reports when it goes live; idle live streams report every `progress_interval`.
- Wake-ups come from the store's notifier (commits in this process) and, on MongoDB, from
  `storage/mongo/tail.py` (commits of other processes). They carry no data; a missed one only
  delays delivery until the next one or `safety_interval`.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import logging
import time
from collections.abc import Collection
from dataclasses import dataclass

from memoryd.domain.coalesce import CoalescedReads
from memoryd.domain.errors import MemorydError, OutOfRange, ResourceExhausted, StorageUnavailable
from memoryd.domain.models import Event, EventType
from memoryd.domain.store import Store

log = logging.getLogger(__name__)

FEED_BATCH = 500  # events per read of a tenant's feed (new events, shared by all its live streams)
# Events per read of a stream catching up: its memory bound, and the longest the event loop
# stops for one read (~0.4 ms on SQLite, where these reads run on the loop's connection),
# which live streams wait behind.
CATCH_UP_BATCH = 100
WRITES_RECENT_SECONDS = 0.25  # a commit this recent means writes are going on (see _let_writers_run)


@dataclass(frozen=True, slots=True)
class Progress:
    """Every event matching the watch with seq <= latest_seq has been delivered (the resume
    point); head_seq is the newest seq of the log the stream knew of when it was sent."""

    latest_seq: int
    head_seq: int


@dataclass(frozen=True, slots=True)
class WatchFilter:
    """Sessions and types to deliver; empty means all. Tenant-wide events (no session) pass
    any session filter, since they concern every session.

    With `user_id` (a token bound to that end user) only the events stamped with it pass:
    those of sessions the user owned when they were written (Event.user_id), never a
    tenant-wide one."""

    session_ids: frozenset[str] = frozenset()
    types: frozenset[EventType] = frozenset()
    user_id: str | None = None

    def matches(self, event: Event) -> bool:
        if self.types and event.type not in self.types:
            return False
        if self.user_id is not None and event.user_id != self.user_id:
            return False
        return not self.session_ids or not event.session_id or event.session_id in self.session_ids


def _let_writers_run() -> None:
    """Hand the GIL to a thread waiting for it, once per event a catch-up delivers while
    writes are going on.

    A replay keeps the event loop's thread busy, and Python forces a hand-off to a waiting
    thread only every sys.getswitchinterval(). The SQLite writer thread needs the GIL back
    after each statement of a commit, so during a replay a commit waited for a hand-off per
    statement and live writes, and the deliveries that follow them, slowed down. Sleeping
    0 s releases the GIL for a moment. It costs the replay some of its rate (the hand-off
    goes to gRPC's threads too), hence only while commits are happening.
    """
    time.sleep(0)


def compacted(floor: int) -> OutOfRange:
    return OutOfRange(
        f"events up to seq {floor} were removed by retention; resync and watch from now",
        reason="EVENTS_COMPACTED",
        metadata={"oldest_seq": str(floor + 1)},
    )


def shutting_down() -> StorageUnavailable:
    # UNAVAILABLE, the status clients retry: they resume with after_seq elsewhere.
    return StorageUnavailable("the server is shutting down; resume with after_seq", reason="SHUTTING_DOWN")


class WatchHub:
    """Per-process registry of tenant feeds. `watch()` opens a stream; `close()` ends them all."""

    def __init__(
        self,
        store: Store,
        *,
        buffer_size: int = 1024,
        progress_interval: float = 10.0,
        safety_interval: float = 30.0,
        max_streams: int = 10_000,
    ) -> None:
        if buffer_size < 1 or max_streams < 1:
            raise ValueError("watch buffer size and stream limit must be at least 1")
        self.store = store
        self.buffer_size = buffer_size
        self.progress_interval = progress_interval
        self.safety_interval = safety_interval
        self.max_streams = max_streams
        self.fallbacks = 0  # live watchers moved back to catch-up because their buffer filled
        # Streams opening together (a reconnect storm) share their first read of the log's bounds.
        self.event_bounds = CoalescedReads(store.event_bounds)
        self._feeds: dict[str, _Feed] = {}
        self._streams = 0
        self._closed = False

    def watch(self, tenant: str, after_seq: int | None, watch_filter: WatchFilter) -> Watcher:
        """A stream of Event and Progress items; iterate it, and `close()` it in a finally."""
        if self._closed:
            raise shutting_down()
        if self._streams >= self.max_streams:
            raise ResourceExhausted(
                f"this server already serves {self.max_streams} Watch streams; retry later or elsewhere",
                reason="TOO_MANY_WATCH_STREAMS",
                metadata={"max_watch_streams": str(self.max_streams)},
            )
        return Watcher(self, tenant, after_seq, watch_filter)

    def close(self) -> None:
        """Stop every feed; open watchers deliver what they hold, then end with UNAVAILABLE."""
        self._closed = True
        for feed in list(self._feeds.values()):
            feed.stop(ended=True)

    @property
    def watcher_count(self) -> int:
        """Open streams, catching up or live."""
        return self._streams

    @property
    def live_count(self) -> int:
        """Streams joined to a feed."""
        return sum(len(feed.watchers) for feed in self._feeds.values())

    @property
    def feed_count(self) -> int:
        return len(self._feeds)

    async def read_after(self, tenant: str, cursor: int, limit: int, *, expect_more: bool = False) -> list[Event]:
        """One batch after `cursor`. Seqs have no holes, so a batch that does not start at
        cursor + 1 (or, when events are known to exist, an empty one) means retention passed it."""
        events = await self.store.read_events(tenant, cursor, limit)
        if (events and events[0].seq != cursor + 1) or (not events and expect_more):
            floor, _ = await self.store.event_bounds(tenant)
            if cursor < floor:
                raise compacted(floor)
        return events

    def _join(self, watcher: Watcher) -> bool:
        """Attach a watcher that has just read to the log's end; False if the feed has read
        further (the watcher reads on). A new feed starts at the watcher's cursor."""
        if self._closed:
            return False  # the watcher ends at its next step
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
                watcher._end(shutting_down())
        self.watchers.clear()

    async def _run(self) -> None:
        notifier = self.hub.store.notifier
        try:
            while not self.stopped:
                changed = notifier.current()  # taken before the read: a commit during it re-wakes us
                events = await self.hub.read_after(self.tenant, self.cursor, FEED_BATCH)
                if events and not self.stopped:
                    self.cursor = events[-1].seq
                    for watcher in list(self.watchers):
                        watcher._offer(events)
                    if len(events) == FEED_BATCH:
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
        self.seen = -1  # every event <= seen has been read (delivered, queued or filtered out)
        self.position = -1  # the client has every matching event <= position
        self._head = 0  # newest seq known to exist
        self._started = False
        self._live = False  # joined to the feed
        self._at_head = False  # the last read reached the log's end: join next
        self._read_log = False  # read the log since it was last live
        self._pending: collections.deque[Event] = collections.deque()  # the catch-up batch, unfiltered
        self._buffer: collections.deque[Event] = collections.deque()  # live events that match
        self._ready = asyncio.Event()
        # A progress to send once nothing is left to deliver: True always, False only if it
        # moves the resume point (after a catch-up batch), None: none.
        self._report: bool | None = None
        self._progress_due = False
        self._error: MemorydError | None = None
        self._stopped: MemorydError | None = None
        self._closed = False
        self._released = False
        hub._streams += 1

    @property
    def live(self) -> bool:
        return self._live

    def __aiter__(self) -> Watcher:
        return self

    async def __anext__(self) -> Event | Progress:
        if not self._started:
            await self.start()
        while True:
            if self._closed:
                raise StopAsyncIteration
            if self._stopped is not None:
                self._closed = True
                raise self._stopped
            if self._pending:
                event = self._pending.popleft()
                if self.filter.matches(event):
                    if not self._live and self.hub.store.notifier.notified_within(WRITES_RECENT_SECONDS):
                        _let_writers_run()
                    return self._deliver(event)
                continue
            if self._buffer:
                return self._deliver(self._buffer.popleft())
            if self._report is not None:
                always, self._report = self._report, None
                if always or self.seen > self.position:
                    return self._progress()
            if self._error is not None:
                self._closed = True
                raise self._error
            if not self._live:
                await self._catch_up()
                continue
            if self._progress_due:
                return self._progress()
            self._ready.clear()
            try:
                async with asyncio.timeout(self.hub.progress_interval):
                    await self._ready.wait()
            except TimeoutError:
                self._progress_due = True

    async def start(self) -> None:
        """Fix the starting cursor (validating after_seq); every later write will be delivered.
        The first item is then a progress with the cursor and the log's newest seq."""
        self._started = True
        floor, latest = await self.hub.event_bounds(self.tenant)
        cursor = latest if self._after_seq is None else self._after_seq
        if cursor < floor:
            raise compacted(floor)
        if cursor > latest:
            raise OutOfRange(
                f"after_seq {cursor} is beyond the newest event ({latest})",
                reason="AFTER_SEQ_NOT_WRITTEN",
                metadata={"latest_seq": str(latest)},
            )
        self.seen = cursor
        self._head = latest
        self._at_head = cursor == latest
        self._report = True

    async def _catch_up(self) -> None:
        """One step of catching up, taken when the previous batch has been delivered: join
        the feed if the log's end was reached, else read the next batch."""
        if self.hub._closed:
            self._error = shutting_down()
            return
        if self._at_head and self._join():
            return
        events = await self.hub.read_after(self.tenant, self.seen, CATCH_UP_BATCH, expect_more=self._head > self.seen)
        if events:
            self.seen = events[-1].seq
            self._head = max(self._head, self.seen)
            self._pending.extend(events)
        self._report = False
        self._read_log = True
        # A short batch reached the log's end: join now, before delivering it, so that a new
        # feed starts exactly where this read ended.
        self._at_head = len(events) < CATCH_UP_BATCH
        if self._at_head:
            self._join()

    def _join(self) -> bool:
        if not self.hub._join(self):
            self._at_head = False
            self._head = max(self._head, self.seen + 1)  # the feed has read further
            return False
        self._live = True
        if self._read_log:  # it caught up from the log: report once it is live
            self._report = True
            self._read_log = False
        return True

    def _deliver(self, event: Event) -> Event:
        self.position = event.seq
        self._progress_due = False
        return event

    def _progress(self) -> Progress:
        self._progress_due = False
        self.position = max(self.position, self.seen)
        self._head = max(self._head, self.seen)
        return Progress(self.position, self._head)

    # -- called by the feed (synchronously, between the watcher's awaits) ------------
    def _offer(self, events: Collection[Event]) -> None:
        added = False
        for event in events:
            if event.seq <= self.seen:
                continue
            if self.filter.matches(event):
                if len(self._buffer) >= self.hub.buffer_size:
                    self._fall_back()
                    return
                self._buffer.append(event)
                added = True
            self.seen = event.seq
        if added:
            self._ready.set()

    def _fall_back(self) -> None:
        """Too slow for the live feed (etcd moves such a watcher to "unsynced"): drop the
        buffer and catch up from the log, from just before the oldest event not yet delivered."""
        self.seen = self._buffer[0].seq - 1  # what came before it was delivered or filtered out
        self._buffer.clear()
        self._live = self._at_head = False
        self.hub.fallbacks += 1
        self.hub._leave(self)
        self._ready.set()

    def _end(self, error: MemorydError) -> None:
        self._error = error
        self._ready.set()

    def stop(self, error: MemorydError) -> None:
        """End the stream with `error` at its next step, delivering nothing more (its token
        was revoked): what it holds is dropped, and a read in flight is discarded."""
        self._stopped = error
        self._pending.clear()
        self._buffer.clear()
        self._ready.set()

    def close(self) -> None:
        """Leave the feed and drop buffers; idempotent, safe from a finally."""
        self._closed = True
        if not self._released:
            self._released = True
            self.hub._streams -= 1
        self._pending.clear()
        self._buffer.clear()
        if self._live:
            self._live = False
            self.hub._leave(self)
