"""Read-your-writes: a write's event_seq, passed as SearchMemoryRequest.wait_for_event_seq,
makes the search see that write (docs/VECTORS.md, "Positions")."""

from __future__ import annotations

import grpc
import pytest
from google.rpc import error_details_pb2, status_pb2

from memoryd.v1 import memory_service_pb2 as mem_pb
from memoryd.v1 import message_pb2
from memoryd.v1 import vector_service_pb2 as pb
from memoryd.app import start
from tests.vectors.conftest import on_recall_targets
from tests.vectors.test_service import Client, server_config


@pytest.fixture
async def client(target, tmp_path):
    app = await start(server_config(target, tmp_path))
    client = Client(app.port)
    yield client
    await client.channel.close()
    await app.stop(0)


@on_recall_targets
async def test_save_then_search_with_the_position_finds_the_message_every_time(client):
    found = 0
    for i in range(100):
        word = f"zebra{i:03d}x"
        saved = await client.memory.SaveMessage(
            mem_pb.SaveMessageRequest(session_id=f"s{i % 4}", message=message_pb2.Message(role="user", content=f"the {word}"))
        )
        assert saved.event_seq > 0
        response = await client.vectors.SearchMemory(
            pb.SearchMemoryRequest(query_text=word, top_k=1, context_window=0, wait_for_event_seq=saved.event_seq),
            timeout=30,
        )
        found += [h.message_id for h in response.hits] == [saved.message.id]
    assert found == 100


@on_recall_targets
async def test_deletes_report_their_position_too(client):
    saved = await client.memory.SaveMessages(mem_pb.SaveMessagesRequest(
        session_id="s", messages=[message_pb2.Message(role="user", content=w) for w in ("walrus", "narwhal")]
    ))  # fmt: skip
    deleted = await client.memory.DeleteMessages(mem_pb.DeleteMessagesRequest(session_id="s", ids=[saved.messages[0].id]))
    assert deleted.event_seq > saved.event_seq
    response = await client.vectors.SearchMemory(
        pb.SearchMemoryRequest(query_text="walrus narwhal", top_k=5, context_window=0, wait_for_event_seq=deleted.event_seq)
    )
    assert [h.text for h in response.hits] == ["narwhal"]
    stats = await client.vectors.GetVectorStats(pb.GetVectorStatsRequest())
    assert stats.indexed_through_seq >= deleted.event_seq and stats.event_seq >= deleted.event_seq


@pytest.mark.parametrize("target", ["edge"], indirect=True)
async def test_a_position_the_index_does_not_reach_in_time_is_unavailable_with_a_reason(client):
    saved = await client.memory.SaveMessage(
        mem_pb.SaveMessageRequest(session_id="s", message=message_pb2.Message(role="user", content="hello"))
    )
    await client.vectors.SearchMemory(pb.SearchMemoryRequest(query_text="hello", wait_for_event_seq=saved.event_seq), timeout=30)
    with pytest.raises(grpc.aio.AioRpcError) as raised:
        await client.vectors.SearchMemory(
            pb.SearchMemoryRequest(query_text="hello", wait_for_event_seq=saved.event_seq + 1000), timeout=1
        )
    error = raised.value
    assert error.code() in (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED)
    if error.code() is grpc.StatusCode.UNAVAILABLE:
        status = status_pb2.Status.FromString(dict(error.trailing_metadata())["grpc-status-details-bin"])
        info = error_details_pb2.ErrorInfo()
        [detail] = [d for d in status.details if d.Is(info.DESCRIPTOR)]
        detail.Unpack(info)
        assert info.reason == "INDEX_BEHIND" and int(info.metadata["indexed_through_seq"]) >= saved.event_seq
    with pytest.raises(grpc.aio.AioRpcError) as raised:
        await client.vectors.SearchMemory(pb.SearchMemoryRequest(query_text="hello", wait_for_event_seq=-1))
    assert raised.value.code() is grpc.StatusCode.INVALID_ARGUMENT
