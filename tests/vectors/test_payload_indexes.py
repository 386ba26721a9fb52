"""The payload indexes of each space (points.indexed_fields): what the filters use, nothing
that only costs writes; those an earlier release made are dropped; and the deletes that
filter on the fields left unindexed (`timestamp`, `indexed_at`) still select exactly."""

from __future__ import annotations

import qdrant_edge as qe

from memoryd.domain.vectors import Deleted, KeywordPoint, VectorPoint, VectorRecord, VectorSelector
from memoryd.storage.qdrant import points as p
from memoryd.storage.qdrant.edge import EdgeIndex
from tests.vectors.conftest import make_index, unit


def record(session: str, ts: int, message_id: str, text: str = "", model: str | None = "m1") -> VectorRecord:
    return VectorRecord(session, ts, model, message_id, "user", platform="qq", text=text)


async def index_fields(index, space: int) -> set[str]:
    if isinstance(index, EdgeIndex):
        return set(index._pairs[space].serving.shard.info().payload_schema)
    info = await index._call(index._require().get_collection(index.collection(space)))
    return set(info.payload_schema)


def test_the_indexed_fields_of_each_space():
    assert p.indexed_fields(4) == {
        "tenant", "model_id", "tenant_model", "session_id", "platform", "message_id", "sender_id", "mentioned_ids", "role"
    }
    # keyword points carry no model; timestamps and indexing times only narrow deletes
    assert p.indexed_fields(p.KEYWORD_SPACE) == p.indexed_fields(4) - {"model_id", "tenant_model"}


async def test_each_space_gets_exactly_its_indexes(target, tmp_path):
    index = make_index(target, tmp_path)
    await index.open()
    try:
        await index.upsert([VectorPoint("a", unit(0), record("s1", 1, "m1", "ferry"))], 1)
        await index.upsert_keywords([KeywordPoint("a", record("s1", 1, "m1", "ferry"))], 1)
        for space in (4, p.KEYWORD_SPACE):
            assert await index_fields(index, space) == p.indexed_fields(space)
    finally:
        await index.close()


async def test_indexes_an_earlier_release_made_are_dropped_and_the_points_stay(tmp_path):
    index = EdgeIndex(tmp_path / "vectors")
    await index.open()
    await index.upsert([VectorPoint("a", unit(0), record("s1", 1, "m1", "ferry"))], 1)
    await index.upsert_keywords([KeywordPoint("a", record("s1", 1, "m1", "ferry"))], 1)
    for space in (4, p.KEYWORD_SPACE):  # what an earlier release indexed
        shard = index._pairs[space].serving.shard
        for key in ("timestamp", "indexed_at"):
            shard.update(qe.UpdateOperation.create_field_index(key, qe.IntegerIndexParams(lookup=True, range=True)))
        if space == p.KEYWORD_SPACE:
            shard.update(qe.UpdateOperation.create_field_index("model_id", qe.KeywordIndexParams()))
    await index.close()

    index = EdgeIndex(tmp_path / "vectors")
    await index.open()
    try:
        for space in (4, p.KEYWORD_SPACE):
            assert await index_fields(index, space) == p.indexed_fields(space)
        assert (await index.stats("a"))[1][0].count == 1  # the keyword point
        assert await index.delete(VectorSelector("a", session_id="s1", timestamps=(1,))) == Deleted(1, 1)
    finally:
        await index.close()


async def test_deletes_by_timestamp_and_indexing_time_select_exactly(index):
    """Both fields unindexed: the engine checks them point by point, on both kinds of points."""
    early, late = 100, 200
    for session in ("s1", "s2"):
        for n, at in enumerate((early, late)):
            r = record(session, 1000 + n, f"{session}-{n}", f"note {n} of {session}")
            await index.upsert([VectorPoint("a", unit(n), r)], at)
            await index.upsert_keywords([KeywordPoint("a", r)], at)
    await index.upsert([VectorPoint("b", unit(0), record("s1", 1000, "b"))], early)

    # A session's messages by timestamp, then a tenant-wide clear of what was indexed before `late`.
    assert await index.delete(VectorSelector("a", session_id="s2", timestamps=(1001, 5))) == Deleted(1, 1)
    assert await index.delete(VectorSelector("a", indexed_before=late)) == Deleted(2, 2)
    _, collections = await index.stats("a")
    assert [(c.dimension, c.count) for c in collections] == [(p.KEYWORD_SPACE, 1), (4, 1)]
    assert await index.has_point(4, VectorPoint("a", unit(1), record("s1", 1001, "s1-1")).id)
    assert await index.has_keyword_point(KeywordPoint("a", record("s1", 1001, "s1-1")).id)
    _, collections = await index.stats("b")  # the other tenant keeps its point
    assert [(c.dimension, c.count) for c in collections] == [(p.KEYWORD_SPACE, 0), (4, 1)]
