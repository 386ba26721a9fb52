"""Where the index's log consumer runs (docs/VECTORS.md, "Where it runs"): on the embedded
default in the engine process (memoryd/engine.py), the serving process only follows its positions; with
`--vector-engine-process false` in the serving process."""

from __future__ import annotations

import pytest

from memoryd.app import start
from memoryd.v1 import memory_service_pb2 as mem_pb
from memoryd.v1 import message_pb2
from memoryd.v1 import vector_service_pb2 as pb
from memoryd.consumers.remote import RemoteTrack
from tests.vectors.index_state import drained
from tests.vectors.test_service import Client, server_config

WORDS = ("aardvark", "bison", "caracal", "dingo", "eland")


async def save_and_find(app) -> None:
    client = Client(app.port)
    try:
        saved = await client.memory.SaveMessages(mem_pb.SaveMessagesRequest(
            session_id="s", messages=[message_pb2.Message(role="user", content=w) for w in WORDS]
        ))  # fmt: skip
        response = await client.vectors.SearchMemory(
            pb.SearchMemoryRequest(query_text="dingo", top_k=1, context_window=0, wait_for_event_seq=saved.event_seq),
            timeout=30,
        )
        assert [h.text for h in response.hits] == ["dingo"]
        await drained(app.vectors)
        stats = await client.vectors.GetVectorStats(pb.GetVectorStatsRequest())
        assert stats.keyword_points == len(WORDS) and stats.indexed_through_seq == stats.event_seq >= saved.event_seq
    finally:
        await client.channel.close()


@pytest.mark.parametrize("target", ["edge"], indirect=True)
async def test_the_engine_process_indexes_and_the_serving_process_follows(target, tmp_path):
    app = await start(server_config(target, tmp_path))
    try:
        # The serving process has no runtime, only the engine's positions.
        assert app.vectors.runtime is None and isinstance(app.vectors.positions, RemoteTrack)
        await save_and_find(app)
    finally:
        await app.stop(0)


@pytest.mark.parametrize("target", ["edge"], indirect=True)
async def test_an_engine_in_the_serving_process_indexes_there(target, tmp_path):
    app = await start(server_config(target, tmp_path, vector_engine_process=False))
    try:
        assert not isinstance(app.vectors.positions, RemoteTrack)
        await save_and_find(app)
        assert app.vectors.runtime.track(app.vectors.indexer.name).applied > 0
    finally:
        await app.stop(0)
