"""Two replicas on one MongoDB-wire server (SecantusDB) and one Qdrant server: one index
synchronizer is active (the lease, vectors/lease.py); after `kill -9` of its holder the other
takes it over (once it expires) and the index ends equal to the store, by message id."""

from __future__ import annotations

import uuid

import grpc

from memoryd.v1 import memory_service_pb2 as mem
from memoryd.v1 import memory_service_pb2_grpc
from memoryd.v1 import message_pb2
from memoryd.v1 import vector_service_pb2 as vpb
from memoryd.v1 import vector_service_pb2_grpc
from memoryd.domain.models import SYSTEM_TENANT
from memoryd.storage.mongo.store import MongoStore
from memoryd.storage.qdrant.server import QdrantServerIndex
from memoryd.consumers.lease import KEY, namespace_of
from memoryd.vectors.sync import CURSOR_NAMESPACE, RecallIndexer
from tests.vectors.index_state import difference
from tests.processes import MemorydServer


async def _save(target: str, session: str, n: int) -> int:
    async with grpc.aio.insecure_channel(target) as channel:
        stub = memory_service_pb2_grpc.MemoryServiceStub(channel)
        saved = await stub.SaveMessages(mem.SaveMessagesRequest(
            session_id=session, messages=[message_pb2.Message(role="user", content=f"{session} lease {i}") for i in range(n)]
        ), timeout=30)  # fmt: skip
        return saved.event_seq


async def _caught_up(target: str, seq: int) -> None:
    """SearchMemory with the position answers once that replica's view of the index has it."""
    async with grpc.aio.insecure_channel(target) as channel:
        stub = vector_service_pb2_grpc.VectorServiceStub(channel)
        await stub.SearchMemory(vpb.SearchMemoryRequest(query_text="lease", wait_for_event_seq=seq), timeout=60)


async def _holder(store: MongoStore) -> str:
    entry = await store.get_metadata(SYSTEM_TENANT, namespace_of(CURSOR_NAMESPACE), KEY)
    return entry.data["holder"] if entry is not None else ""


async def test_one_synchronizer_is_active_and_the_other_takes_over_after_kill_9(tmp_path, mongo_uri, qdrant):
    database = f"memoryd_lease_{uuid.uuid4().hex[:8]}"
    flags = ("--mongodb-uri", mongo_uri, "--mongodb-database", database, *qdrant.flags(), "--qdrant-timeout-seconds", "30")
    replicas = [MemorydServer(tmp_path / name, *flags) for name in "ab"]
    store = MongoStore(mongo_uri, database)
    for replica in replicas:
        replica.start()
    await store.open()
    try:
        seq = max([await _save(r.target, f"s{n}", 50) for n, r in enumerate(replicas)])
        for replica in replicas:
            await _caught_up(replica.target, seq)  # the follower too: it follows the holder's cursor
        holder = await _holder(store)
        pids = {r.process.pid: r for r in replicas}
        [active] = [pid for pid in pids if f":{pid}:" in holder]
        survivor = next(r for pid, r in pids.items() if pid != active)

        pids[active].kill()  # kill -9 of the active synchronizer's process
        seq = await _save(survivor.target, "after", 50)
        await _caught_up(survivor.target, seq)  # only once it took the lease over
        assert f":{survivor.process.pid}:" in await _holder(store)

        index = QdrantServerIndex(qdrant.url, grpc_port=qdrant.grpc_port, prefer_grpc=True, prefix=_prefix(flags))
        await index.open()
        try:
            diff = await difference(RecallIndexer(store, index), "default")
            assert (len(diff.missing), len(diff.orphans)) == (0, 0)
        finally:
            await index.close()
    finally:
        await store.close()
        for replica in replicas:
            replica.stop()


def _prefix(flags: tuple[str, ...]) -> str:
    return next(f.split("=", 1)[1] for f in flags if f.startswith("--qdrant-collection-prefix="))
