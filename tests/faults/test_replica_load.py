"""Two `memoryd serve` replicas on one MongoDB-wire server (SecantusDB), twelve writers on one
tenant for a bounded time, as a client with retries sees them (tests/faults/replica_load.py):
every write is acknowledged within its 10 s deadline, none is lost or stored twice, and the
tenant's event log is contiguous and names every message once. Then the same under a kill -9
of one replica: the survivor takes the writes (within the same 10 s deadline), the recall
synchronizer's lease moves to it, and the index ends equal to the store."""

from __future__ import annotations

import time
import uuid

import grpc
import pytest

from memoryd.consumers.lease import KEY, namespace_of
from memoryd.domain.models import SYSTEM_TENANT
from memoryd.storage.mongo.store import MongoStore
from memoryd.storage.qdrant.server import QdrantServerIndex
from memoryd.v1 import vector_service_pb2 as vpb
from memoryd.v1 import vector_service_pb2_grpc
from memoryd.vectors.sync import CURSOR_NAMESPACE, RecallIndexer
from tests.faults import replica_load
from tests.processes import MemorydServer
from tests.vectors.index_state import difference

WRITERS = 12
DURATION = 20.0
KILL_AFTER = 5.0


def _clean(audit: replica_load.Audit) -> dict:
    return {
        "lost": audit.lost, "duplicated": audit.duplicated, "unexpected": audit.unexpected,
        "seq_gaps": audit.seq_gaps, "appended_twice": audit.appended_twice, "appended_missing": audit.appended_missing,
    }  # fmt: skip


NOTHING_WRONG = {
    "lost": [],
    "duplicated": [],
    "unexpected": [],
    "seq_gaps": 0,
    "appended_twice": [],
    "appended_missing": 0,
}


@pytest.mark.timeout(180)
async def test_two_replicas_twelve_writers_one_tenant(tmp_path, mongo_uri):
    database = f"memoryd_scale_{uuid.uuid4().hex[:8]}"
    flags = ("--mongodb-uri", mongo_uri, "--mongodb-database", database, "--vectors-enabled", "false")
    replicas = [MemorydServer(tmp_path / name, *flags) for name in "ab"]
    store = MongoStore(mongo_uri, database)
    try:
        for replica in replicas:
            replica.start()
        result = await replica_load.run([r.target for r in replicas], WRITERS, DURATION)
        await store.open()
        audit = await replica_load.audit(store, result)
    finally:
        await store.close()
        for replica in replicas:
            replica.stop()
    assert result.writes > 0
    assert result.unacknowledged == [], (
        f"{len(result.unacknowledged)} writes not acknowledged ({result.failed_attempts})"
    )
    assert _clean(audit) == NOTHING_WRONG
    assert audit.events >= result.writes


@pytest.mark.timeout(240)
async def test_kill_9_of_one_replica_under_load(tmp_path, mongo_uri, qdrant):
    database = f"memoryd_scale_{uuid.uuid4().hex[:8]}"
    flags = (
        "--mongodb-uri",
        mongo_uri,
        "--mongodb-database",
        database,
        *qdrant.flags(),
        "--qdrant-timeout-seconds",
        "30",
    )
    prefix = next(f.split("=", 1)[1] for f in flags if f.startswith("--qdrant-collection-prefix="))
    replicas = [MemorydServer(tmp_path / name, *flags) for name in "ab"]
    store = MongoStore(mongo_uri, database)
    killed: list[float] = []

    def kill_one(elapsed: float) -> None:
        if elapsed >= KILL_AFTER and not killed:
            replicas[0].kill()
            killed.append(time.monotonic())

    try:
        for replica in replicas:
            replica.start()
        survivor_pid = replicas[1].process.pid
        result = await replica_load.run([r.target for r in replicas], WRITERS, DURATION, during=kill_one)
        await store.open()
        audit = await replica_load.audit(store, result)
        survivor = replicas[1]
        # The survivor's index has everything once it holds the lease (it follows the holder's cursor).
        async with grpc.aio.insecure_channel(survivor.target) as channel:
            stub = vector_service_pb2_grpc.VectorServiceStub(channel)
            last = (await store.event_bounds("default"))[1]
            await stub.SearchMemory(vpb.SearchMemoryRequest(query_text="w0", wait_for_event_seq=last), timeout=60)
        holder = await store.get_metadata(SYSTEM_TENANT, namespace_of(CURSOR_NAMESPACE), KEY)
        index = QdrantServerIndex(qdrant.url, grpc_port=qdrant.grpc_port, prefer_grpc=True, prefix=prefix)
        await index.open()
        try:
            diff = await difference(RecallIndexer(store, index), "default")
        finally:
            await index.close()
    finally:
        await store.close()
        for replica in replicas:
            replica.stop()
    assert killed
    assert result.unacknowledged == [], (
        f"{len(result.unacknowledged)} writes not acknowledged ({result.failed_attempts})"
    )
    assert _clean(audit) == NOTHING_WRONG
    assert holder is not None and f":{survivor_pid}:" in holder.data["holder"]
    assert (len(diff.missing), len(diff.orphans)) == (0, 0)
