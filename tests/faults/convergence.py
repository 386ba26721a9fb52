"""How the recall index's convergence tests end (issue 26): the server's synchronizer has
applied the whole log (GetVectorStats, polled), then, with the server stopped (Edge is one
process per folder), the index's message ids vs the store's for the whole tenant."""

from __future__ import annotations

import asyncio
from pathlib import Path

import grpc

from memoryd.v1 import vector_service_pb2 as vpb
from memoryd.v1 import vector_service_pb2_grpc
from memoryd.storage.qdrant.edge import EdgeIndex
from memoryd.storage.sqlite.store import SqliteStore
from memoryd.vectors.sync import RecallIndexer
from tests.vectors.index_state import difference

# An upper bound for a loaded machine, not a timing.
CATCH_UP_SECONDS = 60.0


async def caught_up(channel: grpc.aio.Channel) -> vpb.GetVectorStatsResponse:
    """Once the index holds the tenant's log through its newest seq (UNAVAILABLE meanwhile,
    e.g. while a vector engine is restarted, is waited out)."""
    vectors = vector_service_pb2_grpc.VectorServiceStub(channel)
    async with asyncio.timeout(CATCH_UP_SECONDS):
        while True:
            try:
                stats = await vectors.GetVectorStats(vpb.GetVectorStatsRequest(), timeout=10)
                if stats.event_seq and stats.indexed_through_seq == stats.event_seq and not stats.rebuilding:
                    return stats
            except grpc.aio.AioRpcError:
                pass
            await asyncio.sleep(0.1)


async def index_vs_store(data_dir: Path, tenant: str = "default") -> tuple[int, int, int]:
    """(missing, orphans, keyword points) of a stopped embedded server's data dir."""
    store = SqliteStore(data_dir / "memoryd.db")
    index = EdgeIndex(data_dir / "vectors")
    await store.open()
    await index.open()
    try:
        diff = await difference(RecallIndexer(store, index), tenant)
        _, collections = await index.stats(tenant)
        return len(diff.missing), len(diff.orphans), sum(c.count for c in collections if c.dimension == 0)
    finally:
        await index.close()
        await store.close()
