"""Subscribe/cancel churn releases everything: no leaked watchers, feeds or tasks; RSS stays flat (reported)."""

from __future__ import annotations

import asyncio
import collections
import gc

from memoryd.domain.models import DEFAULT_TENANT

from tests.events.conftest import WAIT, rss_kib

CYCLES = 1000
CONCURRENCY = 50
TASK_SLACK = 20  # generous: grpc and the driver may keep a few helper tasks around


async def settle(app) -> int:
    """Wait until the server holds no watch state; return the number of asyncio tasks then."""
    async with asyncio.timeout(WAIT):
        while app.hub.watcher_count or app.hub.feed_count:
            await asyncio.sleep(0.02)
    await asyncio.sleep(0.2)
    gc.collect()
    return len(asyncio.all_tasks())


async def churn(client, session_id, cycles: int) -> None:
    async def one(i: int) -> None:
        # Alternate: cancelled while live (from now), cancelled during catch-up (from 0).
        stream = client.watch(after_seq=0) if i % 2 else client.watch()
        if i % 2:
            await stream.wait_for(lambda s: bool(s.events), "the first historical event")
        else:
            await stream.started()
        if i % 10 == 0:
            await client.save(session_id, f"churn {i}")
        await stream.close()

    for start in range(0, cycles, CONCURRENCY):
        await asyncio.gather(*(one(i) for i in range(start, min(cycles, start + CONCURRENCY))))


async def test_subscribe_cancel_cycles_release_everything(servers, session_id, record_property):
    app, client = await servers.start()
    await client.save(session_id, *[f"history {i}" for i in range(600)])  # more than one read batch
    await churn(client, session_id, 100)  # warm-up: imports, channels, caches
    tasks_before = await settle(app)
    rss_before = rss_kib()

    await churn(client, session_id, CYCLES)
    tasks_after = await settle(app)
    rss_after = rss_kib()

    record_property("rss_kib_before", rss_before)
    record_property("rss_kib_after", rss_after)
    print(
        f"\n[{servers.backend}] {CYCLES} watch cycles: RSS {rss_before} -> {rss_after} KiB "
        f"({rss_after - rss_before:+d}), asyncio tasks {tasks_before} -> {tasks_after}"
    )
    assert app.hub.watcher_count == 0 and app.hub.feed_count == 0
    running = collections.Counter(t.get_coro().__qualname__ for t in asyncio.all_tasks())
    assert tasks_after <= tasks_before + TASK_SLACK, f"tasks left running: {running}"
    # The log is intact: every churn write is there once.
    events = await app.store.read_events(DEFAULT_TENANT, 0, 100_000)
    assert [e.seq for e in events] == list(range(1, len(events) + 1))
