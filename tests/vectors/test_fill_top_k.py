"""SearchMemory fills top_k however models are mixed: the model condition is part of the
engine query, not a filter after retrieval. Sized past the point where a filter after a
4x overscan breaks down: 100,000 vectors, 90% of them another model's."""

from __future__ import annotations

import random

import pytest

from memoryd.domain.recall import RecallQuery, RecallScope
from memoryd.domain.vectors import VectorPoint, VectorRecord

DIMS = 8
POINTS = 100_000
BATCH = 1000
QUERY_MODEL, OTHER_MODEL = "test:wanted", "test:dominant"


@pytest.fixture
async def store(tmp_path):
    """SQLite only: the message store plays no part here (no context windows)."""
    from memoryd.storage.sqlite.store import SqliteStore

    store = SqliteStore(tmp_path / "memoryd.db")
    await store.open()
    yield store
    await store.close()


async def test_a_dominant_second_model_never_starves_the_query_model(vectors, tenant):
    rng = random.Random(7)
    wanted = 0
    for start in range(0, POINTS, BATCH):
        batch = []
        for i in range(start, start + BATCH):
            # 1 in 10 is the query's model (half of those legacy vectors without a model id),
            # the rest another model of the same dimension.
            model = OTHER_MODEL if i % 10 else (QUERY_MODEL if i % 20 else None)
            wanted += model != OTHER_MODEL
            record = VectorRecord(f"s{i % 100}", 1000 + i, model, f"m{i}", "assistant" if i % 30 == 0 else "user")
            batch.append(VectorPoint(tenant, [rng.gauss(0, 1) for _ in range(DIMS)], record))
        await vectors.upsert(tenant, batch)
    assert wanted == POINTS // 10

    hits = excluded = 0
    for n in range(50):
        query = RecallQuery(vector=[rng.gauss(0, 1) for _ in range(DIMS)], model_id=QUERY_MODEL, top_k=5,
                            time_weight=0.0, context_window=0, others_only=n % 2 == 1)
        result = await vectors.search(tenant, query)
        assert len(result.hits) == 5
        assert all(h.record.model_id in (QUERY_MODEL, None) for h in result.hits)
        if query.others_only:
            assert all(h.record.role != "assistant" for h in result.hits)
        hits += len(result.hits)
        excluded += result.excluded_other_models
    assert hits == 250
    assert excluded > 0  # what a filter after retrieval would have dropped is still reported

    # Sessions s0, s10, ... hold the query model's points; s1 holds 1,000 of the other model only.
    def in_session(session_id: str) -> RecallQuery:
        return RecallQuery(vector=[1.0] * DIMS, model_id=QUERY_MODEL, top_k=20, time_weight=0.0,
                           context_window=0, scope=RecallScope.SESSION, session_id=session_id)

    assert len((await vectors.search(tenant, in_session("s0"))).hits) == 20
    none = await vectors.search(tenant, in_session("s1"))
    assert none.hits == [] and none.excluded_other_models == 80
