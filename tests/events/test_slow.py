"""A subscriber too slow for the live feed falls back to catching up from the log: it misses
nothing, sees no error, and writers and fast subscribers never wait for it."""

from __future__ import annotations

import asyncio

from memoryd.domain.models import DEFAULT_TENANT

from tests.events.conftest import WAIT, Client

BUFFER = 16
WRITES = 150
# Enough to fill the paused client's window (~26 of these events), what the server has in
# flight, and the buffer, with room to spare.
CYCLE_WRITES = 75
BATCH = 40  # refs per messages-appended event: enough bytes to fill HTTP/2 windows quickly
# gRPC clients grow their receive window (BDP probing) and buffer unread messages in the
# client; a fixed small window makes a paused reader as slow as a stalled consumer.
SMALL_WINDOW = [("grpc.http2.bdp_probe", 0), ("grpc.http2.lookahead_bytes", 16384)]


async def write_load(client: Client, session_id: str, writes: int, tag: str) -> None:
    for i in range(writes):
        await client.save(session_id, *[f"message {tag}.{i}.{j} " + "x" * 40 for j in range(BATCH)])


async def wait_for_fallbacks(app, count: int) -> None:
    await wait_until(lambda: app.hub.fallbacks >= count, f"{count} fall-backs")


async def test_slow_subscriber_falls_back_to_the_log_while_a_fast_one_gets_everything(servers, session_id):
    app, client = await servers.start(watch_buffer_size=BUFFER)
    slow_client = Client.connect(app.port, SMALL_WINDOW)
    servers.clients.append(slow_client)
    slow = await slow_client.watch(after_seq=0).started()
    fast = await client.watch(after_seq=0).started()
    await slow.wait_for(lambda s: bool(s.progress), "the first progress")
    slow.pause()

    await write_load(client, session_id, WRITES, "a")  # never waits for the slow subscriber
    await fast.wait_for_seq(WRITES)
    assert fast.seqs == list(range(1, WRITES + 1)) and fast.error is None
    await wait_for_fallbacks(app, 1)  # its buffer filled: it left the live feed
    assert app.hub.watcher_count == 2 and app.hub.live_count == 1
    assert len(slow.seqs) < WRITES

    slow.resume()  # it catches up from the log, then rejoins the feed
    await slow.wait_for_seq(WRITES)
    await write_load(client, session_id, 3, "b")
    await slow.wait_for_seq(WRITES + 3)
    await fast.wait_for_seq(WRITES + 3)
    assert slow.seqs == fast.seqs == list(range(1, WRITES + 4))
    assert slow.error is None and not slow.ended
    assert app.hub.live_count == 2
    stored = await app.store.read_events(DEFAULT_TENANT, 0, 10_000)
    assert [e.seq for e in stored] == slow.seqs
    await slow.close()
    await fast.close()


async def test_three_fall_behind_disconnect_and_resume_cycles_lose_nothing(servers, session_id):
    """Each cycle: the resumed subscriber catches up and goes live, stops reading until it
    falls off the live feed, is disconnected, and reconnects with after_seq = the last seq
    it received."""
    app, client = await servers.start(watch_buffer_size=BUFFER)
    slow_client = Client.connect(app.port, SMALL_WINDOW)
    servers.clients.append(slow_client)
    received: list[int] = []
    after_seq = 0
    for cycle in range(3):
        stream = await slow_client.watch(after_seq=after_seq).started()
        _, head = await app.store.event_bounds(DEFAULT_TENANT)
        await stream.wait_for(lambda s: bool(s.progress) and s.position >= head, "caught up")
        await wait_until(lambda: app.hub.live_count == 1, "the resumed stream live")
        assert stream.progress[0] == after_seq
        stream.pause()
        fallbacks = app.hub.fallbacks
        await write_load(client, session_id, CYCLE_WRITES, f"cycle{cycle}")
        await wait_for_fallbacks(app, fallbacks + 1)
        await stream.close()  # disconnected, with events it never read
        assert stream.error is None
        received += stream.seqs
        after_seq = stream.position
    final = client.watch(after_seq=after_seq)
    _, latest = await app.store.event_bounds(DEFAULT_TENANT)
    await final.wait_for_seq(latest)
    received += final.seqs
    assert received == list(range(1, latest + 1)) and latest == 3 * CYCLE_WRITES
    await final.close()


async def wait_until(condition, what: str) -> None:
    try:
        async with asyncio.timeout(WAIT):
            while not condition():
                await asyncio.sleep(0.02)
    except TimeoutError:
        raise AssertionError(f"timed out waiting for {what}") from None
