"""A stream that caught up from the log joins its tenant's live feed even when the feed's own
read lags behind it (WatchHub._join lets it in while the feed's cursor is at or below its
own): the feed then offers events the stream has already read, and the stream drops them
(Watcher._offer's `event.seq <= self.seen`). Each event arrives exactly once, in order.
"""

from __future__ import annotations

import asyncio

from memoryd.app import open_store
from memoryd.domain.models import DEFAULT_TENANT
from memoryd.domain.watch import FEED_BATCH, Progress, WatchFilter, WatchHub
from tests.events.conftest import WAIT, seed_events


async def collect(stream, until_seq: int, into: list[int]) -> None:
    """Append the seq of every event `stream` delivers until it delivers `until_seq`."""
    async for item in stream:
        if isinstance(item, Progress):
            continue
        into.append(item.seq)
        if item.seq >= until_seq:
            return


async def test_a_stream_joining_a_feed_whose_read_lags_behind_it_gets_each_event_once(servers):
    store = open_store(servers.config(vectors_enabled=False))
    await store.open()
    hub = WatchHub(store)
    real_read = store.read_events
    hold_next_feed_read, feed_read_held, release = False, asyncio.Event(), asyncio.Event()

    async def read_events(tenant, after_seq, limit, **kwargs):
        nonlocal hold_next_feed_read
        if limit == FEED_BATCH and hold_next_feed_read:  # the feed's read (catch-up reads are smaller)
            hold_next_feed_read = False
            feed_read_held.set()
            await release.wait()
        return await real_read(tenant, after_seq, limit, **kwargs)

    store.read_events = read_events
    first = second = None
    try:
        async with asyncio.timeout(WAIT):
            await seed_events(store, 3)  # seqs 1..3
            # A live stream creates the feed at seq 3; the feed's first read is held in progress.
            hold_next_feed_read = True
            first = hub.watch(DEFAULT_TENANT, None, WatchFilter())
            first_seqs: list[int] = []
            first_task = asyncio.create_task(collect(first, 8, first_seqs))
            await feed_read_held.wait()
            assert first.live and hub._feeds[DEFAULT_TENANT].cursor == 3

            # Meanwhile 4..6 are written, and a second stream catches up from 0 past the feed.
            await seed_events(store, 3)
            second = hub.watch(DEFAULT_TENANT, 0, WatchFilter())
            second_seqs: list[int] = []
            while not second.live:  # its first event comes after its catch-up read and join
                item = await anext(second)
                if not isinstance(item, Progress):
                    second_seqs.append(item.seq)
            assert second.seen == 6 and hub._feeds[DEFAULT_TENANT].cursor == 3  # joined ahead of the feed

            # The feed's read goes on: it reads 4..6 (and later 7..8) and offers them to both.
            release.set()
            await seed_events(store, 2)
            await collect(second, 8, second_seqs)
            await first_task
    finally:
        for stream in (first, second):
            if stream is not None:
                stream.close()
        hub.close()
        await store.close()
    assert second_seqs == list(range(1, 9))
    assert first_seqs == list(range(4, 9))
