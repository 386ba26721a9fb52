"""The tenant-and-model key (points.TENANT_MODEL_FIELD) that model-filtered searches match:
unambiguous for any tenant and model, on every point a search can reach, including points
written before it existed (given theirs when a shard / collection is opened) and points an
operation log of that time still holds."""

from __future__ import annotations

import pytest
import qdrant_edge as qe
from qdrant_client import models as qm

from memoryd.domain.vectors import IndexQuery, PointFilter, VectorPoint, VectorRecord
from memoryd.storage.qdrant import edge_engine as engine
from memoryd.storage.qdrant import points as p
from memoryd.storage.qdrant.edge import EdgeIndex
from tests.vectors.conftest import SERVER_INDEX_TARGETS, make_index, unit

LEGACY_EMPTY = "legacy stored with an empty model_id by an earlier release"


def test_the_key_is_unambiguous():
    assert p.tenant_model_key("a", "b:c") != p.tenant_model_key("a:b", "c")
    assert p.tenant_model_key("a", "1:b") != p.tenant_model_key("a:1", "b")
    assert p.tenant_model_key("a", None) == p.tenant_model_key("a", "") != p.tenant_model_key("a:", None)


def points() -> list[VectorPoint]:
    """Tenant a: three of model m1, one of m2, one legacy; tenant b: one of m1."""
    made = [VectorPoint("a", unit(n), VectorRecord("s1", 100 + n, "m1", f"a-m1-{n}", "user")) for n in range(3)]
    made.append(VectorPoint("a", unit(5), VectorRecord("s1", 110, "m2", "a-m2", "user")))
    made.append(VectorPoint("a", unit(6), VectorRecord("s1", 111, None, "a-legacy", "user")))
    made.append(VectorPoint("b", unit(0), VectorRecord("s1", 100, "m1", "b-m1", "user")))
    return made


async def found(index, flt: PointFilter) -> set[str]:
    result = await index.query(IndexQuery(flt, 10, unit(0)))
    return {c.record.message_id for c in result.candidates}


async def assert_model_filters(index) -> None:
    """Each tenant's points of each model, legacy ones with the legacy model, nothing else."""
    assert await found(index, PointFilter("a", model_id="m1")) == {"a-m1-0", "a-m1-1", "a-m1-2"}
    assert await found(index, PointFilter("b", model_id="m1")) == {"b-m1"}
    assert await found(index, PointFilter("a", model_id="m2")) == {"a-m2"}
    assert await found(index, PointFilter("a", model_id="m2", legacy=True)) == {"a-m2", "a-legacy"}
    assert await found(index, PointFilter("c", model_id="m1")) == set()


def strip(shard: qe.EdgeShard) -> None:
    """Make a shard what an earlier release wrote: no key, no index of it."""
    shard.update(qe.UpdateOperation.delete_payload_by_filter(qe.Filter(), [p.TENANT_MODEL_FIELD]))
    shard.update(qe.UpdateOperation.delete_field_index(p.TENANT_MODEL_FIELD))


async def test_every_dense_point_carries_its_key(tmp_path):
    index = EdgeIndex(tmp_path / "vectors")
    await index.open()
    try:
        await index.upsert(points(), 1)
        stored = await index.retrieve(4, [pt.id for pt in points()])
        assert {r.payload[p.TENANT_MODEL_FIELD] for r in stored} == {
            p.tenant_model_key(t, m) for t, m in [("a", "m1"), ("a", "m2"), ("a", None), ("b", "m1")]
        }
        await assert_model_filters(index)
    finally:
        await index.close()


async def test_an_edge_shard_written_before_the_key_gets_it_on_open(tmp_path):
    index = EdgeIndex(tmp_path / "vectors")
    await index.open()
    await index.upsert(points(), 1)
    pair = index._pairs[4]
    await index.close()
    empty = VectorPoint("a", unit(7), VectorRecord("s1", 112, None, LEGACY_EMPTY, "user"))
    for name in engine.SHARD_NAMES:  # both shards of the pair, as that release left them
        shard = qe.EdgeShard.load(str(pair.folder / name))
        shard.update(qe.UpdateOperation.upsert_points([qe.Point(empty.id, unit(7), {**old_payload(empty), "model_id": ""})]))
        strip(shard)
        shard.flush()
        shard.close()
    # A write logged by that release but not yet in the serving shard (a crash before it applied).
    late = VectorPoint("a", unit(1), VectorRecord("s1", 120, "m1", "a-m1-logged", "user"))
    state = engine.PairState.load(pair.folder)
    log = engine.OpLog(pair.folder / engine.OPLOG_FILE)
    log.append(state.serving_seq + 1, engine.Upsert.of([(late.id, unit(1), old_payload(late))]))
    log.close()

    index = EdgeIndex(tmp_path / "vectors")
    await index.open()
    try:
        assert await found(index, PointFilter("a", model_id="m1")) == {"a-m1-0", "a-m1-1", "a-m1-2", "a-m1-logged"}
        assert p.TENANT_MODEL_FIELD in index._pairs[4].serving.shard.info().payload_schema
        assert await found(index, PointFilter("a", model_id="m2", legacy=True)) == {"a-m2", "a-legacy", LEGACY_EMPTY}
        assert await found(index, PointFilter("b", model_id="m1")) == {"b-m1"}
        # The rewrite voided the tenants' graph links: the pair is due an index build, even
        # after a restart, and the build (the standby given its keys too) clears it.
        assert index._pairs[4].state.reindex and engine.PairState.load(pair.folder).reindex
        assert await index.rebuild(4)
        assert not engine.PairState.load(pair.folder).reindex
        assert await found(index, PointFilter("a", model_id="m1")) == {"a-m1-0", "a-m1-1", "a-m1-2", "a-m1-logged"}
        assert await found(index, PointFilter("a", model_id="m2", legacy=True)) == {"a-m2", "a-legacy", LEGACY_EMPTY}
    finally:
        await index.close()


def old_payload(point: VectorPoint) -> dict:
    payload = p.payload_of(point.tenant, point.record, 1)
    del payload[p.TENANT_MODEL_FIELD]
    return payload


@pytest.mark.parametrize("target", SERVER_INDEX_TARGETS, indirect=True)
async def test_a_server_collection_written_before_the_key_gets_it(target, tmp_path):
    index = make_index(target, tmp_path)
    await index.open()
    try:
        await index.upsert(points(), 1)
        client, name = index._require(), index.collection(4)
        await client.delete_payload(name, [p.TENANT_MODEL_FIELD], points=qm.Filter())
        await client.delete_payload_index(name, p.TENANT_MODEL_FIELD)
        assert await found(index, PointFilter("a", model_id="m1")) == set()  # what the key is for
        index._ready.discard(4)  # as a new server process first using the collection
        await index._ensure(4)
        await assert_model_filters(index)
    finally:
        await index.close()


def test_the_backfill_steps_name_each_tenant_and_model():
    """Driven by hand: per tenant, one SetPayloadWhere per model ("" and absent: legacy)."""
    steps = p.tenant_model_backfill()
    assert steps.send(None) == p.Count(p.All(must=(p.Missing(p.TENANT_MODEL_FIELD),)))
    assert isinstance(steps.send(3), p.Facet)  # the tenants
    assert steps.send(["t"]).key == "model_id"
    assert isinstance(steps.send(["m", ""]), p.Count)  # points of t without a model id
    sets = [steps.send(1), steps.send(None), steps.send(None)]
    assert [s.payload[p.TENANT_MODEL_FIELD] for s in sets] == [
        p.tenant_model_key("t", "m"), p.tenant_model_key("t", None), p.tenant_model_key("t", None)
    ]
    assert p.Missing("model_id") in sets[2].filter.must and p.Match("model_id", "") in sets[1].filter.must
    assert all(p.Match(p.TENANT_FIELD, "t") in s.filter.must for s in sets)
    assert isinstance(steps.send(None), p.Count)  # what is left
    with pytest.raises(StopIteration) as done:
        steps.send(0)
    assert done.value.value is True


def many_tenants() -> list[VectorPoint]:
    """Eight tenants of two models each (and a legacy point): past a facet page of three."""
    return [
        VectorPoint(f"t{n}", unit(m), VectorRecord("s1", 100 + m, model, f"t{n}-{m}", "user"))
        for n in range(8) for m, model in enumerate(("m1", "m2", None))
    ]


async def test_an_edge_backfill_goes_past_one_facet_page_of_tenants(tmp_path, monkeypatch):
    monkeypatch.setattr(p, "FACET_LIMIT", 3)
    made = many_tenants()
    shard = engine.create_shard(tmp_path / "shard", 4, 1, engine.INDEXING_THRESHOLD_KB)
    try:
        shard.update(qe.UpdateOperation.upsert_points([qe.Point(pt.id, pt.vector, old_payload(pt)) for pt in made]))
        shard.update(qe.UpdateOperation.delete_field_index(p.TENANT_MODEL_FIELD))
        assert engine.ensure_indexes(shard, 4)
        stored = shard.retrieve([pt.id for pt in made], True, False)
        assert {str(r.id): r.payload[p.TENANT_MODEL_FIELD] for r in stored} == {
            pt.id: p.tenant_model_key(pt.tenant, pt.record.model_id) for pt in made
        }
        assert not engine.ensure_indexes(shard, 4)  # done: the index is there
    finally:
        shard.close()


@pytest.mark.parametrize("target", SERVER_INDEX_TARGETS, indirect=True)
async def test_a_server_backfill_goes_past_one_facet_page_of_tenants(target, tmp_path, monkeypatch):
    monkeypatch.setattr(p, "FACET_LIMIT", 3)
    made = many_tenants()
    index = make_index(target, tmp_path)
    await index.open()
    try:
        await index.upsert(made, 1)
        client, name = index._require(), index.collection(4)
        await client.delete_payload(name, [p.TENANT_MODEL_FIELD], points=qm.Filter())
        await client.delete_payload_index(name, p.TENANT_MODEL_FIELD)
        index._ready.discard(4)
        await index._ensure(4)
        stored = await client.retrieve(name, [pt.id for pt in made], with_payload=True)
        assert {str(r.id): r.payload[p.TENANT_MODEL_FIELD] for r in stored} == {
            pt.id: p.tenant_model_key(pt.tenant, pt.record.model_id) for pt in made
        }
        for n in range(8):
            assert await found(index, PointFilter(f"t{n}", model_id="m2", legacy=True)) == {f"t{n}-1", f"t{n}-2"}
    finally:
        await index.close()
