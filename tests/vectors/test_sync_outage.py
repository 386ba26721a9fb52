"""No orphan vectors: what Qdrant cannot take waits in the event log, and the index
synchronizer applies it when Qdrant is back (docs/VECTORS.md, "The index synchronizer").

"Unreachable" is real, never mocked: either the index itself is closed (Edge: its shards
and the folder are released; server: the connection is gone) and opened again, or the server
runs with a real Qdrant client pointed at a closed port and is then restarted with the
real vector store.
"""

from __future__ import annotations

import asyncio
import socket
import uuid

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc

from memoryd.v1 import memory_service_pb2 as mem_pb
from memoryd.v1 import vector_service_pb2 as pb
from memoryd.app import start
from memoryd.domain.limits import Limits
from memoryd.domain.memory import Memory
from memoryd.domain.models import ClearOutcome, ClearTarget
from memoryd.domain.recall import RecallQuery
from memoryd.domain.vectors import VectorPoint, VectorRecord
from memoryd.domain.errors import StorageUnavailable
from memoryd.storage.qdrant.edge import EdgeIndex
from memoryd.storage.sqlite.store import SqliteStore
from memoryd.vectors.recall import VectorRecall
from memoryd.vectors.sync import CURSOR_NAMESPACE
from memoryd.domain.models import SYSTEM_TENANT
from tests.vectors.conftest import make_index, msg, unit
from tests.vectors.test_service import Client, server_config, user
from tests.vectors.index_state import drained

MODEL = "test:outbox"
WAIT_SECONDS = 60.0


async def eventually(probe, timeout: float = WAIT_SECONDS) -> None:
    """Poll until probe() is true (the synchronizer works in the background)."""
    loop = asyncio.get_running_loop()
    end = loop.time() + timeout
    while not await probe():
        assert loop.time() < end, "condition not reached"
        await asyncio.sleep(0.05)


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]  # nothing listens here once the socket is closed


async def test_changes_wait_in_the_log_while_qdrant_is_down(target, tmp_path, store, tenant):
    vectors = VectorRecall(make_index(target, tmp_path), store, sync_poll_seconds=0.05, sync_max_backoff_seconds=0.2)
    vectors.runtime.tenants = {tenant}  # the session's store holds other tests' tenants
    await vectors.open()
    memory = Memory(store, Limits(), hooks=vectors)
    saved = (await memory.save_messages(tenant, "s1", [msg("user", f"m{i}", 1000 * (i + 1)) for i in range(3)])).messages
    other = (await memory.save_messages(tenant, "s2", [msg("user", "o", 1000)])).messages
    await vectors.upsert(
        tenant,
        [
            VectorPoint(tenant, unit(i), VectorRecord("s1", m.timestamp, MODEL, m.id, "user", text=m.content))
            for i, m in enumerate(saved)
        ]
        + [VectorPoint(tenant, unit(9), VectorRecord("s2", other[0].timestamp, MODEL, other[0].id, "user"))],
    )
    syncing = asyncio.create_task(vectors.runtime.run())
    try:
        # Applied so far first: closing Edge while the synchronizer creates its keyword shard
        # races the shard's open (an adapter matter, not this test's).
        await asyncio.wait_for(drained(vectors), WAIT_SECONDS)
        await vectors.index.close()  # Qdrant is gone

        # The message calls still succeed; the vector work waits in the log.
        assert await memory.delete_by_ids(tenant, "s1", [saved[0].id]) == 1
        assert await memory.delete_by_timestamps(tenant, "s1", [saved[1].timestamp]) == 1
        _, cleared = await memory.clear(tenant, "s2", [ClearTarget.MESSAGES, ClearTarget.VECTORS])
        assert cleared.outcome is ClearOutcome.DEFERRED
        latest = (await store.event_bounds(tenant))[1]
        await asyncio.sleep(0.3)  # a few failed retries while it stays down
        assert vectors.positions.position(tenant) < latest and vectors.positions.retries > 0

        await vectors.index.open()  # Qdrant is back

        async def caught_up() -> bool:
            return vectors.positions.position(tenant) >= latest

        await eventually(caught_up)
        models, _ = await vectors.index.stats(tenant)
        assert [(m.model_id, m.count) for m in models] == [(MODEL, 1)]
        result = await vectors.search(tenant, RecallQuery(vector=unit(0), model_id=MODEL, context_window=0))
        assert [h.record.message_id for h in result.hits] == [saved[2].id]
    finally:
        syncing.cancel()
        await asyncio.gather(syncing, return_exceptions=True)
        await vectors.close()


async def test_the_log_outlives_a_restart_and_is_applied_when_qdrant_returns(target, tmp_path):
    prefix = f"t{uuid.uuid4().hex[:10]}"
    real = dict(qdrant_collection_prefix=prefix)

    app = await start(server_config(target, tmp_path, **real))
    client = Client(app.port)
    stored = await client.save("s1", *(user(f"m{i}", 1000 * (i + 1)) for i in range(4)))
    await client.index("s1", stored, [1, 2, 3, 4], model=MODEL)
    kept = await client.save("s2", user("kept", 1000))
    await client.index("s2", kept, [5], model=MODEL)
    assert (await client.vectors.GetVectorStats(pb.GetVectorStatsRequest())).models[0].count == 5
    await client.channel.close()
    await app.stop(0)

    # The same data, but Qdrant unreachable: a real client pointed at a closed port.
    port = closed_port()
    down = await start(
        server_config(target, tmp_path, qdrant_url=f"http://127.0.0.1:{port}",
                      qdrant_grpc_port=0 if target == "server-rest" else port,
                      qdrant_timeout_seconds=1.0, vector_sync_poll_seconds=3600,
                      health_check_interval_seconds=0.1, **real)
    )
    client = Client(down.port)
    health = health_pb2_grpc.HealthStub(client.channel)

    async def vectors_not_serving() -> bool:
        answer = await health.Check(health_pb2.HealthCheckRequest(service="memoryd.v1.VectorService"))
        return answer.status == health_pb2.HealthCheckResponse.NOT_SERVING

    await eventually(vectors_not_serving)  # the message services keep serving
    overall = await health.Check(health_pb2.HealthCheckRequest(service="memoryd.v1.MemoryService"))
    assert overall.status == health_pb2.HealthCheckResponse.SERVING
    deleted = await client.memory.DeleteMessages(mem_pb.DeleteMessagesRequest(session_id="s1", ids=[stored[0].id]))
    assert deleted.deleted_count == 1
    by_ts = await client.memory.DeleteMessagesByTimestamps(
        mem_pb.DeleteMessagesByTimestampsRequest(session_id="s1", timestamps=[stored[1].timestamp])
    )
    assert by_ts.deleted_count == 1
    cleared = await client.memory.ClearSession(
        mem_pb.ClearSessionRequest(session_id="s1", targets=[mem_pb.CLEAR_TARGET_VECTORS])
    )
    assert cleared.results[0].outcome == mem_pb.CLEAR_OUTCOME_DEFERRED
    try:
        await client.vectors.GetVectorStats(pb.GetVectorStatsRequest(), timeout=10)
        raise AssertionError("stats answered without Qdrant")
    except grpc.aio.AioRpcError as error:
        assert error.code() is grpc.StatusCode.UNAVAILABLE
    await client.channel.close()
    await down.stop(0)

    # The log is in the message store, so it outlived the process; the cursor stayed behind.
    store = SqliteStore(tmp_path / "memoryd.db")
    await store.open()
    try:
        cursor = await store.get_metadata(SYSTEM_TENANT, CURSOR_NAMESPACE, "default")
        assert cursor is not None and cursor.data["seq"] < (await store.event_bounds("default"))[1]
    finally:
        await store.close()

    # Restart with the real vector store: the synchronizer applies the log on its own.
    back = await start(server_config(target, tmp_path, **real))
    client = Client(back.port)
    try:
        async def drained() -> bool:
            stats = await client.vectors.GetVectorStats(pb.GetVectorStatsRequest())
            return stats.indexed_through_seq == stats.event_seq

        await eventually(drained)
        stats = await client.vectors.GetVectorStats(pb.GetVectorStatsRequest())
        assert [(m.model_id, m.count) for m in stats.models] == [(MODEL, 1)]  # only s2's point is left
        response = await client.vectors.SearchMemory(
            pb.SearchMemoryRequest(query_vector=unit(0), model_id=MODEL, top_k=10, context_window=0)
        )
        assert [h.text for h in response.hits] == ["kept"]
    finally:
        await client.channel.close()
        await back.stop(0)


async def test_an_edge_folder_held_by_another_process_is_an_unavailable_vector_store(tmp_path):
    # Qdrant Edge is one process per folder; a second server on the same data dir (a
    # replica on MongoDB, say) serves messages and treats vectors as unreachable.
    owner = EdgeIndex(tmp_path / "vectors")
    await owner.open()
    await owner.upsert([VectorPoint("t", unit(0), VectorRecord("s1", 1000, MODEL, "m1", "user"))], 1)
    other = EdgeIndex(tmp_path / "vectors", lock_retry_seconds=0)
    await other.open()
    try:
        with pytest.raises(StorageUnavailable):
            await other.ping()
        await owner.close()
        await other.ping()  # takes the folder once it is free
        models, _ = await other.stats("t")
        assert [(m.model_id, m.count) for m in models] == [(MODEL, 1)]
    finally:
        await other.close()
        await owner.close()


async def test_a_crash_between_the_message_delete_and_the_vector_delete_leaves_no_orphan(target, tmp_path, store, tenant):
    """The message transaction commits, then the process dies before touching Qdrant: here the
    deletions go straight to the store, so no vector hook ever runs. The deletion events that
    committed with them are all the synchronizer needs."""
    vectors = VectorRecall(make_index(target, tmp_path), store)
    vectors.runtime.tenants = {tenant}
    await vectors.open()
    try:
        crashed = Memory(store, Limits())  # no hooks: the immediate vector delete never happens
        saved = (await crashed.save_messages(tenant, "s1", [msg("user", f"m{i}", 1000 * (i + 1)) for i in range(4)])).messages
        await vectors.upsert(
            tenant,
            [
                VectorPoint(tenant, unit(i), VectorRecord("s1", m.timestamp, MODEL, m.id, "user", text=m.content))
                for i, m in enumerate(saved)
            ],
        )
        assert await crashed.delete_by_ids(tenant, "s1", [saved[0].id]) == 1
        assert await crashed.delete_by_timestamps(tenant, "s1", [saved[1].timestamp]) == 1
        await crashed.replace_history(tenant, "s1", [msg("user", "summary", 9000)])  # removes m2, m3
        await crashed.clear(tenant, "s1", [ClearTarget.MESSAGES])

        models, _ = await vectors.index.stats(tenant)
        assert [(m.model_id, m.count) for m in models] == [(MODEL, 4)]
        assert await vectors.runtime.apply_all() >= 3
        models, _ = await vectors.index.stats(tenant)
        assert models == [] or [m.count for m in models] == [0]
        assert await vectors.runtime.apply_all() == 0  # the cursor moved past them
    finally:
        await vectors.close()
