"""Fan-out: many concurrent subscribers each get every event of a mixed write load, in order, exactly once."""

from __future__ import annotations

import asyncio

from memoryd.v1 import event_service_pb2 as ev_pb
from memoryd.v1 import memory_service_pb2 as pb
from memoryd.v1 import metadata_service_pb2 as md_pb
from memoryd.v1 import metadata_service_pb2_grpc
from memoryd.domain.models import DEFAULT_TENANT

from tests.events.conftest import Client

SUBSCRIBERS = 200
CHANNELS = 4
WRITERS = 4
ROUNDS = 8


async def mixed_writes(client: Client, writer: int) -> None:
    """Appends, deletions, rewrites, trims, metadata and published events on a few sessions."""
    metadata = metadata_service_pb2_grpc.MetadataServiceStub(client.channel)
    session = f"fanout-{writer}"
    for round_ in range(ROUNDS):
        saved = await client.save(session, f"hello {round_}", f"world {round_}", f"again {round_}")
        await client.memory.DeleteMessages(pb.DeleteMessagesRequest(session_id=session, ids=[saved[0].id]))
        await client.memory.UpdateMessageContent(
            pb.UpdateMessageContentRequest(session_id=session, old_text="world", new_text="there")
        )
        await metadata.SaveMetadata(md_pb.SaveMetadataRequest(namespace=f"w{writer}", key=f"k{round_}"))
        if round_ % 3 == 2:
            await client.memory.TrimHistory(pb.TrimHistoryRequest(session_id=session, keep_recent=2))
            await client.events.PublishEvent(
                ev_pb.PublishEventRequest(
                    session_id=session, compress_progress={"phase": "summarizing", "progress": 0.5}
                )
            )


async def test_every_subscriber_gets_every_event_in_order(servers):
    app, client = await servers.start()
    await client.save("warmup", "before the watchers")  # not part of what they must see
    start = (await app.store.event_bounds(DEFAULT_TENANT))[1]
    channels = [Client.connect(app.port) for _ in range(CHANNELS)]
    servers.clients.extend(channels)
    streams = [channels[i % CHANNELS].watch() for i in range(SUBSCRIBERS)]
    await asyncio.gather(*(s.started() for s in streams))

    await asyncio.gather(*(mixed_writes(client, w) for w in range(WRITERS)))
    stored = await app.store.read_events(DEFAULT_TENANT, start, 100_000)
    latest = stored[-1].seq
    assert [e.seq for e in stored] == list(range(start + 1, latest + 1))
    assert len(stored) >= WRITERS * ROUNDS * 6

    await asyncio.gather(*(s.wait_for_seq(latest) for s in streams))
    expected = [(e.seq, int(e.type), e.session_id) for e in stored]
    for stream in streams:
        assert [(e.seq, e.type, e.session_id) for e in stream.events] == expected
        assert stream.error is None
    assert app.hub.watcher_count == SUBSCRIBERS and app.hub.feed_count == 1
    await asyncio.gather(*(s.close() for s in streams))
