"""What only a real Qdrant server shows about the server adapter (qdrant-client's in-process
imitation keeps one store per client, so it cannot): replicas sharing its collections."""

from __future__ import annotations

import asyncio

import pytest

from memoryd.domain.vectors import IndexQuery, KeywordPoint, PointFilter, VectorPoint, VectorRecord
from memoryd.storage.qdrant import points as p
from tests.qdrant_server import SERVER_TARGETS, collection_prefix
from tests.vectors.conftest import make_index, unit

REPLICAS = 3


@pytest.mark.parametrize("target", SERVER_TARGETS, indirect=True)
async def test_replicas_that_create_the_same_collections_at_once_all_write_and_read(target, tmp_path):
    """Several memoryd replicas meeting a new dimension (and the keyword index) at the same
    moment: one creates each collection, the others find it made, every write lands, and
    each collection ends with exactly its payload indexes."""
    prefix = collection_prefix()
    replicas = [make_index(target, tmp_path, prefix=prefix) for _ in range(REPLICAS)]
    for replica in replicas:
        await replica.open()
    try:
        records = [VectorRecord("s1", 100 + n, "m1", f"m{n}", "user", text=f"note {n}") for n in range(REPLICAS)]
        await asyncio.gather(*(
            replica.upsert([VectorPoint("a", unit(10 * n), record)], 1)
            for n, (replica, record) in enumerate(zip(replicas, records))
        ))  # fmt: skip
        await asyncio.gather(*(
            replica.upsert_keywords([KeywordPoint("a", record)], 1) for replica, record in zip(replicas, records)
        ))  # fmt: skip
        for replica in replicas:
            models, collections = await replica.stats("a")
            assert [(m.model_id, m.count) for m in models] == [("m1", REPLICAS)]
            assert [(c.dimension, c.count) for c in collections] == [(p.KEYWORD_SPACE, REPLICAS), (4, REPLICAS)]
        client = replicas[0]._require()
        for space in (4, p.KEYWORD_SPACE):
            info = await client.get_collection(replicas[0].collection(space))
            assert set(info.payload_schema) == p.indexed_fields(space)
        found = await replicas[-1].query(IndexQuery(PointFilter("a", model_id="m1"), 10, unit(0), text="note"))
        assert sorted(c.record.message_id for c in found.candidates) == [r.message_id for r in records]
    finally:
        for replica in replicas:
            await replica.close()
