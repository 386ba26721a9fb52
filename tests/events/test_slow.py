"""A subscriber that stops reading is cut off with RESOURCE_EXHAUSTED; writers and fast subscribers carry on."""

from __future__ import annotations

import grpc

from memoryd.v1 import event_service_pb2 as ev_pb
from memoryd.domain.models import DEFAULT_TENANT

from tests.events.conftest import Client, Stream, error_info

WRITES = 150
BATCH = 40  # refs per messages-appended event: enough bytes to fill HTTP/2 windows quickly
SMALL_WINDOW = [("grpc.http2.bdp_probe", 0), ("grpc.http2.lookahead_bytes", 16384)]


async def test_slow_subscriber_is_cut_off_while_a_fast_one_gets_everything(servers, session_id):
    app, client = await servers.start(watch_buffer_size=16)
    # gRPC clients grow their receive window (BDP probing) and buffer unread messages in
    # the client; a fixed small window makes this one as slow as a stalled consumer.
    slow_client = Client.connect(app.port, SMALL_WINDOW)
    servers.clients.append(slow_client)
    # The slow subscriber reads nothing until the load is over.
    slow_call = slow_client.events.Watch(ev_pb.WatchRequest(after_seq=0))
    await slow_call.initial_metadata()
    fast = await client.watch(after_seq=0).started()

    for i in range(WRITES):
        await client.save(session_id, *[f"message {i}.{j} " + "x" * 40 for j in range(BATCH)])
    await fast.wait_for_seq(WRITES)
    assert fast.seqs == list(range(1, WRITES + 1)) and fast.error is None
    assert app.hub.watcher_count == 1  # only the fast one is still attached

    slow = Stream(slow_call)  # now read what the server had already sent, then the error
    await slow.wait_ended()
    assert slow.error is not None and slow.error.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
    info = error_info(slow.error)
    assert info.reason == "WATCHER_TOO_SLOW"
    assert slow.seqs == list(range(1, len(slow.seqs) + 1)) and len(slow.seqs) < WRITES
    assert int(info.metadata["last_seq"]) >= slow.position

    # It resumes from its last seq and gets the rest, exactly once.
    resumed = slow_client.watch(after_seq=slow.position)
    await resumed.wait_for_seq(WRITES)
    assert slow.seqs + resumed.seqs == list(range(1, WRITES + 1))
    stored = await app.store.read_events(DEFAULT_TENANT, 0, 10_000)
    assert [e.seq for e in stored] == fast.seqs
    await resumed.close()
    await fast.close()
