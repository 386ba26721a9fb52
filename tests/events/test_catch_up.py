"""Catching up from the durable log at any backlog: exactly once and in order, at the pace the
client reads (one read batch in memory per stream), then live."""

from __future__ import annotations

import asyncio

import grpc
import pytest

from memoryd.v1 import event_pb2, event_service_pb2
from memoryd.domain.models import DEFAULT_TENANT, EventType
from memoryd.domain.watch import CATCH_UP_BATCH

from tests.events.conftest import WAIT, Client, error_info, seed_events

BUFFER = 1024  # the default watch_buffer_size, which the old code could not catch up past
# The largest backlog per backend: the MongoDB-wire test server is slower, keep it modest there.
LARGE = {"sqlite": 100_000, "mongo": 5_000, "mongo-external": 5_000}
SMALL_WINDOW = [("grpc.http2.bdp_probe", 0), ("grpc.http2.lookahead_bytes", 16384)]
# What a stalled stream may hold, read but not received: its batch plus what gRPC's
# flow-control windows and write buffers take (about 500 small events here).
HELD_BOUND = 10 * CATCH_UP_BATCH


def backlog_size(backend: str, size: str) -> int:
    return {"buffer-1": BUFFER - 1, "buffer": BUFFER, "buffer+1": BUFFER + 1}.get(size) or LARGE[backend]


@pytest.mark.parametrize("size", ["buffer-1", "buffer", "buffer+1", "large"])
async def test_resume_over_any_backlog_is_exactly_once_then_live(servers, session_id, size):
    app, client = await servers.start(watch_buffer_size=BUFFER)
    await seed_events(app.store, 10)  # history before the resume point
    backlog = backlog_size(servers.backend, size)
    last = await seed_events(app.store, backlog)
    stream = await client.watch(after_seq=10).started()
    await client.save(session_id, "written while the stream catches up")
    await stream.wait_for_seq(last + 1)

    assert stream.seqs == list(range(11, last + 2))
    assert stream.events[-1].type == event_pb2.EVENT_TYPE_MESSAGES_APPENDED
    # The first message says where the stream starts and where the log is.
    assert stream.positions[0] == stream.progress[0] == 10 and stream.heads[0] == last
    assert stream.error is None and not stream.ended
    # Live now: the next write arrives through the feed.
    await client.save(session_id, "live")
    await stream.wait_for_seq(last + 2)
    assert stream.seqs[-2:] == [last + 1, last + 2]
    assert app.hub.live_count == 1
    await stream.close()


@pytest.mark.parametrize("count", [2 * BUFFER + 7, 20 * CATCH_UP_BATCH])  # the second ends on a batch boundary
async def test_full_replay_from_zero_starts_with_the_log_head(servers, count):
    app, client = await servers.start()
    last = await seed_events(app.store, count)
    stream = client.watch(after_seq=0)
    await stream.wait_for_seq(last)
    assert stream.seqs == list(range(1, last + 1))
    assert (stream.progress[0], stream.heads[0]) == (0, last)
    # Once caught up it says so: a progress whose resume point is the head.
    await stream.wait_for(lambda s: len(s.progress) >= 2, "the progress that marks the stream live")
    assert stream.progress[1] == stream.heads[1] == last
    await stream.close()


async def test_catch_up_reads_at_the_pace_of_the_client(servers):
    """A client that stops reading stops the server reading the log: what the stream holds
    stays within a few read batches (plus what gRPC's flow-control windows hold)."""
    app, _ = await servers.start()
    backlog = LARGE["mongo"]
    last = await seed_events(app.store, backlog)
    read = {"events": 0}
    read_events = app.store.read_events

    async def counting_read(tenant, after_seq, limit, **kwargs):
        events = await read_events(tenant, after_seq, limit, **kwargs)
        read["events"] += len(events)
        return events

    app.store.read_events = counting_read
    slow = Client.connect(app.port, SMALL_WINDOW)
    servers.clients.append(slow)
    stream = slow.watch(after_seq=0)
    await stream.wait_for(lambda s: len(s.events) >= 10, "the first events")
    stream.pause()
    # Wait until the server stops reading (bounded by WAIT, never asserted as a time).
    async with asyncio.timeout(WAIT):
        while True:
            before = read["events"]
            await asyncio.sleep(0.3)
            if read["events"] == before:
                break
    held = read["events"] - len(stream.events)
    print(f"\n[{servers.backend}] stalled client: server read {read['events']} of {backlog}, {held} not yet received")
    assert held <= HELD_BOUND
    assert read["events"] < backlog // 2

    stream.resume()
    await stream.wait_for_seq(last)
    assert stream.seqs == list(range(1, last + 1))
    await stream.close()


async def test_retention_during_catch_up_is_an_error_never_a_gap(servers):
    app, _ = await servers.start()
    slow = Client.connect(app.port, SMALL_WINDOW)
    servers.clients.append(slow)
    last = await seed_events(app.store, LARGE["mongo"])
    stream = slow.watch(after_seq=0)
    await stream.wait_for(lambda s: len(s.events) >= 10, "the first events")
    stream.pause()
    await app.store.compact_events(older_than=None, keep_last=10)
    stream.resume()
    await stream.wait_ended()
    assert stream.error.code() == grpc.StatusCode.OUT_OF_RANGE
    info = error_info(stream.error)
    assert info.reason == "EVENTS_COMPACTED" and info.metadata["oldest_seq"] == str(last - 9)
    # Everything delivered before the error is contiguous from the start.
    assert stream.seqs == list(range(1, len(stream.seqs) + 1))


async def test_shutdown_during_catch_up_is_unavailable_and_resumes_elsewhere(servers):
    app, _ = await servers.start()
    slow = Client.connect(app.port, SMALL_WINDOW)
    last = await seed_events(app.store, 4 * CATCH_UP_BATCH)
    stream = slow.watch(after_seq=0)
    await stream.wait_for(lambda s: len(s.events) >= 10, "the first events")
    stop = asyncio.create_task(servers.stop(app, grace=WAIT))
    await stream.wait_ended()
    await stop
    await slow.channel.close()
    assert stream.error.code() == grpc.StatusCode.UNAVAILABLE
    assert error_info(stream.error).reason == "SHUTTING_DOWN"

    app, client = await servers.start()  # the same data: another replica, or the restarted one
    resumed = client.watch(after_seq=stream.position)
    await resumed.wait_for_seq(last)
    assert stream.seqs + resumed.seqs == list(range(1, last + 1))
    await resumed.close()


async def test_filtered_watch_over_a_long_backlog_reports_progress_while_it_skips(servers, session_id):
    """1% of the backlog matches, in ten clusters: between clusters the stream skips long
    runs of other events, and reports its cursor at least once per read batch of them."""
    app, client = await servers.start()
    backlog = LARGE[servers.backend]
    cluster = backlog // 1000  # ten clusters of `cluster` matching events, one every tenth of the log
    matching = {i for i in range(backlog) if i % (backlog // 10) < cluster}

    def session_of(i: int) -> str:
        return session_id if i in matching else f"other-{i % 7}"

    def type_of(i: int) -> EventType:
        return EventType.COMPRESS_REQUESTED if i in matching else EventType.COMPRESS_PROGRESS

    last = await seed_events(app.store, backlog, session_of, type_of)
    expected = [i + 1 for i in sorted(matching)]
    by_session = client.watch(after_seq=0, session_ids=[session_id])
    by_type = client.watch(after_seq=0, types=[event_pb2.EVENT_TYPE_COMPRESS_REQUESTED])
    for stream in (by_session, by_type):
        await stream.wait_for(lambda s: bool(s.positions) and s.positions[-1] >= last, "the end of the backlog")
        assert stream.seqs == expected
        gaps = [b - a for a, b in zip(stream.positions, stream.positions[1:])]
        assert max(gaps) <= CATCH_UP_BATCH, "a silence of more than one read batch"
        assert len(stream.progress) >= (backlog - len(matching)) // CATCH_UP_BATCH // 2
        assert stream.error is None and not stream.ended

    # Then live, still filtered.
    await client.events.PublishEvent(
        event_service_pb2.PublishEventRequest(session_id=session_id, compress_requested={"requested_by": "test"})
    )
    await by_session.wait_for_seq(last + 1)
    await by_type.wait_for_seq(last + 1)
    await by_session.close()
    await by_type.close()


async def test_events_read_back_match_the_store(servers):
    """The replay carries the stored events themselves (type, session, payload)."""
    app, client = await servers.start()
    last = await seed_events(app.store, 3 * CATCH_UP_BATCH + 3, lambda i: f"s{i % 3}")
    stream = client.watch(after_seq=0)
    await stream.wait_for_seq(last)
    stored = await app.store.read_events(DEFAULT_TENANT, 0, 10_000)
    assert [(e.seq, e.session_id, int(e.type)) for e in stored] == [
        (e.seq, e.session_id, e.type) for e in stream.events
    ]
    assert all(e.compress_progress.phase == "seed" for e in stream.events)
    await stream.close()
