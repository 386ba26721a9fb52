"""`memoryd reindex`: the recall index rebuilt from the message store, with progress output
(docs/VECTORS.md, "Rebuild")."""

from __future__ import annotations

import shutil

import grpc

from memoryd.v1 import memory_service_pb2 as mpb
from memoryd.v1 import vector_service_pb2 as vpb
from tests.lifecycle.api import Stubs, event, indexed, memoryd
from tests.processes import MemorydServer


async def test_memoryd_reindex_rebuilds_a_deleted_index_folder(tmp_path):
    server = MemorydServer(tmp_path / "server")
    server.start()
    try:
        async with grpc.aio.insecure_channel(server.target) as channel:
            stubs = Stubs.on(channel)
            for call in range(3):
                await stubs.memory.SaveMessages(mpb.SaveMessagesRequest(
                    session_id=f"s{call}", messages=[{"role": "user", "content": f"otter {call} {i}"} for i in range(10)]
                ))  # fmt: skip
            await indexed(stubs, 30)
    finally:
        server.terminate()
    shutil.rmtree(server.data_dir / "vectors")  # the index is lost; the store is not

    logs = await memoryd("reindex", "--data-dir", str(server.data_dir))
    tenant = event(logs, "reindex_tenant_done")
    assert tenant["tenant"] == "default" and tenant["messages"] == 30
    assert event(logs, "reindex_done")["messages"] == 30

    server.start()
    try:
        async with grpc.aio.insecure_channel(server.target) as channel:
            stubs = Stubs.on(channel)
            stats = await stubs.vectors.GetVectorStats(vpb.GetVectorStatsRequest())
            assert stats.keyword_points == 30 and not stats.rebuilding
            hits = await stubs.vectors.SearchMemory(vpb.SearchMemoryRequest(query_text="otter", top_k=5))
            assert len(hits.hits) == 5
    finally:
        server.terminate()
