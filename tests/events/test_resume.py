"""Resuming with after_seq: exactly once across disconnects and restarts; compaction is an error, never a gap."""

from __future__ import annotations

import grpc

from memoryd.v1 import event_pb2
from memoryd.v1 import metadata_service_pb2 as md_pb
from memoryd.v1 import metadata_service_pb2_grpc
from memoryd.domain.models import DEFAULT_TENANT

from tests.events.conftest import error_info

T = event_pb2


async def all_seqs(app) -> list[int]:
    return [e.seq for e in await app.store.read_events(DEFAULT_TENANT, 0, 100_000)]


async def test_watch_without_after_seq_starts_from_now(servers, session_id):
    _, client = await servers.start()
    await client.save(session_id, "before")
    stream = await client.watch().started()
    await client.save(session_id, "after")
    await stream.wait_for_seq(2)
    assert stream.seqs == [2]
    assert stream.events[0].messages_appended.messages[0].seq == 2
    # The first message is a progress marking the starting point (etcd's "created" revision).
    assert stream.progress[0] == 1
    await stream.close()


async def test_resume_after_disconnect_is_exactly_once(servers, session_id):
    app, client = await servers.start()
    stream = await client.watch(after_seq=0).started()
    for i in range(5):
        await client.save(session_id, f"m{i}")
    await stream.wait_for_seq(5)
    await stream.close()
    last = stream.position
    for i in range(5, 12):
        await client.save(session_id, f"m{i}")
    resumed = client.watch(after_seq=last)
    await client.save(session_id, "live")
    await resumed.wait_for_seq(13)
    assert stream.seqs + resumed.seqs == list(range(1, 14)) == await all_seqs(app)
    await resumed.close()


async def test_resume_after_server_restart(servers, session_id):
    app, client = await servers.start()
    stream = await client.watch(after_seq=0).started()
    await client.save(session_id, "a", "b")
    await client.save(session_id, "c")
    await stream.wait_for_seq(2)
    await servers.stop(app, grace=10)  # graceful: streams end with UNAVAILABLE, the status clients retry
    await stream.wait_ended()
    assert stream.error.code() == grpc.StatusCode.UNAVAILABLE and error_info(stream.error).reason == "SHUTTING_DOWN"
    assert stream.position == 2
    await servers.clients[0].channel.close()

    app, client = await servers.start()  # same data dir / database, new port
    await client.save(session_id, "d")
    resumed = client.watch(after_seq=stream.position)
    await client.save(session_id, "e")
    await resumed.wait_for_seq(4)
    assert stream.seqs + resumed.seqs == [1, 2, 3, 4] == await all_seqs(app)
    await resumed.close()


async def test_after_seq_older_than_retention_is_out_of_range(servers, session_id):
    app, client = await servers.start()
    for i in range(6):
        await client.save(session_id, f"m{i}")
    removed = await app.store.compact_events(older_than=None, keep_last=2)
    assert removed == 4
    stream = client.watch(after_seq=1)
    await stream.wait_ended()
    assert stream.error.code() == grpc.StatusCode.OUT_OF_RANGE and stream.events == []
    info = error_info(stream.error)
    assert info.reason == "EVENTS_COMPACTED" and info.metadata["oldest_seq"] == "5"
    # The oldest kept resume point still works.
    ok = client.watch(after_seq=4)
    await ok.wait_for_seq(6)
    assert ok.seqs == [5, 6]
    await ok.close()


async def test_after_seq_beyond_the_log_is_out_of_range(servers, session_id):
    _, client = await servers.start()
    await client.save(session_id, "m")
    stream = client.watch(after_seq=50)
    await stream.wait_ended()
    assert stream.error.code() == grpc.StatusCode.OUT_OF_RANGE
    assert error_info(stream.error).metadata["latest_seq"] == "1"


async def test_filter_by_session_sees_only_that_session(servers, session_id):
    _, client = await servers.start()
    metadata = metadata_service_pb2_grpc.MetadataServiceStub(client.channel)
    mine = await client.watch(session_ids=[session_id]).started()
    theirs = await client.watch(session_ids=["other"], types=[T.EVENT_TYPE_MESSAGES_APPENDED]).started()
    await client.save(session_id, "one")
    await client.save("other", "x")
    await client.save(session_id, "two")
    await metadata.SaveMetadata(md_pb.SaveMetadataRequest(namespace="ns", key="k"))  # tenant-wide
    await client.save("other", "y")
    await client.save(session_id, "three")
    await mine.wait_for_seq(6)
    assert [(e.seq, e.session_id) for e in mine.events] == [
        (1, session_id), (3, session_id), (4, ""), (6, session_id)
    ]  # fmt: skip
    await theirs.wait_for_seq(5)
    assert theirs.seqs == [2, 5]
    await mine.close()
    await theirs.close()


async def test_idle_streams_get_progress_with_the_latest_seq(servers, session_id):
    _, client = await servers.start(watch_progress_interval_seconds=0.2)
    stream = await client.watch(types=[T.EVENT_TYPE_MESSAGES_DELETED]).started()
    await client.save(session_id, "a", "b")  # filtered out, but it moves the cursor
    await stream.wait_for(lambda s: 1 in s.progress, "a progress past the filtered event")
    assert stream.events == [] and stream.progress[0] == 0
    await stream.close()
