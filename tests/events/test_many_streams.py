"""Thousands of concurrent Watch streams: none ends unless its client cancels it; past the
configured limit new streams are refused with RESOURCE_EXHAUSTED and a reason."""

from __future__ import annotations

import asyncio

import grpc

from memoryd_client import MemoryClient

from memoryd.domain.watch import CATCH_UP_BATCH

from tests.events.conftest import Client, error_info, seed_events

STREAMS = 2000
CHANNELS = 4


async def test_two_thousand_streams_opened_at_once_all_stay_open(servers, session_id):
    # gRPC's default queue of calls not yet taken by the server held 1,000 (random drops up
    # to 3,000): a burst like this one lost ~9% of its streams with a bare CANCELLED.
    app, client = await servers.start()
    channels = [Client.connect(app.port) for _ in range(CHANNELS)]
    servers.clients.extend(channels)
    streams = [channels[i % CHANNELS].watch() for i in range(STREAMS)]  # all at once
    await asyncio.gather(*(s.wait_for(lambda s: bool(s.progress), "the first progress") for s in streams))
    assert app.hub.watcher_count == STREAMS

    await client.save(session_id, "to every stream")
    await asyncio.gather(*(s.wait_for_seq(1) for s in streams))
    ended = [s for s in streams if s.ended]
    assert not ended, f"{len(ended)} streams ended: {ended[0].error!r}"
    assert all(s.seqs == [1] for s in streams)
    assert app.hub.live_count == STREAMS and app.hub.feed_count == 1

    await asyncio.gather(*(s.close() for s in streams))
    async with asyncio.timeout(30):
        while app.hub.watcher_count:
            await asyncio.sleep(0.05)


async def test_streams_past_the_limit_are_refused_and_established_ones_carry_on(servers, session_id):
    app, client = await servers.start(watch_max_streams=20)
    streams = [await client.watch().started() for _ in range(20)]

    refused = client.watch()
    await refused.wait_ended()
    assert refused.error.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
    info = error_info(refused.error)
    assert info.reason == "TOO_MANY_WATCH_STREAMS" and info.metadata["max_watch_streams"] == "20"

    await client.save(session_id, "still delivered")
    await asyncio.gather(*(s.wait_for_seq(1) for s in streams))
    assert not any(s.ended for s in streams)

    await streams.pop().close()
    async with asyncio.timeout(30):
        while app.hub.watcher_count > 19:
            await asyncio.sleep(0.02)
    accepted = await client.watch(after_seq=0).started()
    await accepted.wait_for_seq(1)
    assert accepted.error is None
    await asyncio.gather(*(s.close() for s in [*streams, accepted]))


async def test_the_python_client_waits_out_the_limit_and_then_catches_up(servers, session_id):
    """memoryd_client's watch() retries RESOURCE_EXHAUSTED with backoff and resumes from its
    last seq: refused at the limit, it gets in once a stream closes and replays the backlog."""
    app, client = await servers.start(watch_max_streams=1)
    holder = await client.watch().started()
    last = await seed_events(app.store, 3 * CATCH_UP_BATCH)
    received: list[int] = []
    async with MemoryClient(client.target) as memory:
        async with memory.watch(after_seq=0, initial_backoff=0.05, max_backoff=0.2) as events:

            async def consume() -> None:
                async for event in events:
                    received.append(event.seq)
                    if event.seq == last + 1:
                        return

            consumer = asyncio.create_task(consume())
            async with asyncio.timeout(30):
                while events.reconnects < 2:  # refused, and refused again after a backoff
                    await asyncio.sleep(0.02)
            assert received == []
            await holder.close()
            await client.save(session_id, "after the backlog")
            await asyncio.wait_for(consumer, 30)
    assert received == list(range(1, last + 2))
