"""MEMORYD_INDEX_MESSAGE_KEYWORDS: on (the default), saved messages get keyword points and a
text SearchMemory needs no embedder; off, they get none, a text search without an embedder is
FAILED_PRECONDITION saying why, and only UpsertVectors texts are keyword-indexed (a rewrite
replaces such a point, it creates none)."""

from __future__ import annotations

import grpc
import pytest
from google.rpc import error_details_pb2, status_pb2

from memoryd.v1 import memory_service_pb2 as mem_pb
from memoryd.v1 import message_pb2
from memoryd.v1 import vector_service_pb2 as pb
from memoryd.app import start
from tests.vectors.conftest import on_recall_targets, unit
from tests.vectors.test_service import Client, server_config
from tests.vectors.index_state import drained

pytestmark = on_recall_targets


def user(content: str, ts: int) -> message_pb2.Message:
    return message_pb2.Message(role="user", content=content, timestamp=ts)


def reason(error: grpc.aio.AioRpcError) -> str:
    for key, value in error.trailing_metadata() or ():
        if key == "grpc-status-details-bin":
            for detail in status_pb2.Status.FromString(value).details:
                if detail.Is(error_details_pb2.ErrorInfo.DESCRIPTOR):
                    info = error_details_pb2.ErrorInfo()
                    detail.Unpack(info)
                    return info.reason
    return ""


@pytest.mark.parametrize("keywords", [True, False], ids=["on", "off"])
async def test_saved_messages_get_keyword_points_only_when_on(target, tmp_path, keywords):
    app = await start(server_config(target, tmp_path, index_message_keywords=keywords))
    client = Client(app.port)
    try:
        await client.save("trip", user("We went hiking in the Alps", 1000), user("The lake was cold", 2000))
        await drained(app.vectors)
        assert await client.keyword_points() == (2 if keywords else 0)
        search = pb.SearchMemoryRequest(query_text="hiking", context_window=0)
        if keywords:
            assert [h.text for h in (await client.vectors.SearchMemory(search)).hits] == ["We went hiking in the Alps"]
        else:
            with pytest.raises(grpc.aio.AioRpcError) as caught:
                await client.vectors.SearchMemory(search)
            assert caught.value.code() is grpc.StatusCode.FAILED_PRECONDITION
            assert reason(caught.value) == "EMBEDDER_NOT_CONFIGURED"
            assert "MEMORYD_INDEX_MESSAGE_KEYWORDS" in caught.value.details()
        # A vector search works either way.
        hits = (await client.vectors.SearchMemory(pb.SearchMemoryRequest(query_vector=unit(0), model_id="m"))).hits
        assert hits == []
    finally:
        await client.channel.close()
        await app.stop(0)


async def test_off_upsert_texts_are_indexed_and_rewrites_replace_only_existing_keyword_points(target, tmp_path):
    app = await start(server_config(target, tmp_path, index_message_keywords=False))
    client = Client(app.port)
    try:
        [with_text] = await client.save("a", user("we go hiking tomorrow", 1000))
        [without] = await client.save("b", user("we go hiking on sunday", 1000))
        await client.index("a", [with_text], [0], model="m")  # its point carries the text
        await drained(app.vectors)
        assert await client.keyword_points() == 1
        changed = await client.memory.UpdateMessageContent(
            mem_pb.UpdateMessageContentRequest(session_id="a", old_text="hiking", new_text="sailing")
        )
        await client.memory.UpdateMessageContent(
            mem_pb.UpdateMessageContentRequest(session_id="b", old_text="hiking", new_text="sailing")
        )
        assert changed.changed_count == 1
        await drained(app.vectors)
        assert await client.keyword_points() == 1  # replaced in "a", none created in "b"
        found = await client.vectors.SearchMemory(
            pb.SearchMemoryRequest(query_vector=unit(0), model_id="m", query_text="sailing", context_window=0)
        )
        assert [(h.session_id, h.keyword_match) for h in found.hits] == [("a", True)]
    finally:
        await client.channel.close()
        await app.stop(0)
