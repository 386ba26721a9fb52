"""One set of vector-index cases (domain.vectors.VectorIndex), every case against every
adapter: Qdrant Edge always, the server adapter against qdrant-client's in-process server
API always and against a real Qdrant server when MEMORYD_TEST_QDRANT_URL is set. Then the
congruence check (qdrant-client's idea): SearchMemory over the same data gives the same
hits, order and scores through either adapter."""

from __future__ import annotations

import random
import uuid

import pytest

from memoryd.domain.models import now_ms
from memoryd.domain.recall import RecallQuery, RecallScope
from memoryd.domain.vectors import Deleted, IndexQuery, PointFilter, Scope, VectorPoint, VectorRecord, VectorSelector
from memoryd.storage.sqlite.store import SqliteStore
from memoryd.vectors.memory import VectorMemory
from tests.vectors.conftest import INDEX_TARGETS, make_index, unit

M1, M2 = "test:one", "test:two"


@pytest.fixture(params=INDEX_TARGETS)
async def index(request, tmp_path):
    index = make_index(request.param, tmp_path)
    await index.open()
    yield index
    await index.close()


def pt(tenant, angle, *, model=M1, session="s1", ts=1000, role="user", message_id=None, dims=4, **fields):
    record = VectorRecord(session, ts, model, uuid.uuid4().hex if message_id is None else message_id, role, **fields)
    return VectorPoint(tenant, unit(angle, dims), record)


async def ids(index, flt: PointFilter, *, limit=100, vector=None, min_score=None) -> list[str]:
    found = await index.query(IndexQuery(flt, limit, vector or unit(0), min_score=min_score))
    return [c.record.message_id for c in found.candidates]


async def test_upsert_replaces_by_id_and_has_point(index):
    first = pt("a", 10, message_id="m1")
    await index.upsert([first], 1)
    await index.upsert([pt("a", 50, message_id="m1", text="again")], 2)
    [found] = (await index.query(IndexQuery(PointFilter("a"), 10, unit(0)))).candidates
    assert found.point_id == first.id and found.record.text == "again"
    assert found.semantic == pytest.approx(unit(50)[0], abs=1e-5)
    assert await index.has_point(4, first.id)
    assert not await index.has_point(4, pt("a", 1).id) and not await index.has_point(7, first.id)


async def test_results_are_nearest_first_with_cosine_scores(index):
    await index.upsert([pt("a", a, message_id=f"m{a}") for a in (40, 10, 30, 20)], 1)
    found = (await index.query(IndexQuery(PointFilter("a"), 3, unit(0)))).candidates
    assert [c.record.message_id for c in found] == ["m10", "m20", "m30"]
    assert [round(c.semantic, 4) for c in found] == [round(unit(a)[0], 4) for a in (10, 20, 30)]


async def test_tenants_and_scopes(index):
    await index.upsert(
        [
            pt("a", 1, session="here", platform="qq", sender_id="alice", message_id="here-alice"),
            pt("a", 2, session="there", platform="qq", sender_id="bob", message_id="there-bob"),
            pt("a", 3, session="far", platform="discord", sender_id="carol", mentioned_ids=("alice",), message_id="far-mention"),
            pt("a", 4, session="far", platform="discord", sender_id="dave", message_id="far-dave"),
            pt("b", 0, session="here", message_id="other-tenant"),
        ],
        1,
    )
    assert await ids(index, PointFilter("a")) == ["here-alice", "there-bob", "far-mention", "far-dave"]
    assert await ids(index, PointFilter("b")) == ["other-tenant"]
    assert await ids(index, PointFilter("nobody")) == []
    assert await ids(index, PointFilter("a", Scope(session_id="here"))) == ["here-alice"]
    assert await ids(index, PointFilter("a", Scope(platform="discord"))) == ["far-mention", "far-dave"]
    assert await ids(index, PointFilter("a", Scope(session_id="there", speaker_ids=("alice",)))) == [
        "here-alice", "there-bob", "far-mention"
    ]


async def test_model_legacy_role_and_score_conditions(index):
    await index.upsert(
        [
            pt("a", 1, model=M2, message_id="m2"),
            pt("a", 2, model=None, message_id="legacy"),
            pt("a", 3, role="assistant", message_id="assistant"),
            pt("a", 4, role="", message_id="roleless"),
            pt("a", 60, message_id="far"),
        ],
        1,
    )
    assert await ids(index, PointFilter("a", model_id=M1)) == ["assistant", "roleless", "far"]
    assert await ids(index, PointFilter("a", model_id=M1, legacy=True)) == ["legacy", "assistant", "roleless", "far"]
    assert await ids(index, PointFilter("a", model_id=M2)) == ["m2"]
    others = PointFilter("a", model_id=M1, legacy=True, exclude_roles=("assistant",))
    assert await ids(index, others) == ["legacy", "roleless", "far"]  # no role counts as a user
    users_excluded = PointFilter("a", model_id=M1, exclude_roles=("user",))
    assert await ids(index, users_excluded) == ["assistant"]
    assert await ids(index, PointFilter("a", model_id=M1), min_score=0.9) == ["assistant", "roleless"]
    assert await ids(index, PointFilter("a", model_id=M1), min_score=-1.0, limit=2) == ["assistant", "roleless"]


async def test_the_pool_reports_the_models_nearest_in_scope(index):
    await index.upsert([pt("a", i, model=M2) for i in range(1, 6)] + [pt("a", 30 + i) for i in range(3)], 1)
    await index.upsert([pt("a", 7, model=None), pt("a", 8, session="elsewhere", model=M2)], 1)
    query = IndexQuery(PointFilter("a", Scope(session_id="s1"), model_id=M1), 2, unit(0), pool_limit=7)
    result = await index.query(query)
    assert len(result.candidates) == 2
    assert result.pool_models == {M2: 5, None: 1, M1: 1}


async def test_deletes_by_each_selector_across_dimensions(index):
    now = now_ms()
    await index.upsert(
        [
            pt("a", 1, session="s1", ts=1000, message_id="s1-1000"),
            pt("a", 2, session="s1", ts=2000, message_id=""),
            pt("a", 3, session="s1", ts=3000, message_id="s1-3000", dims=8),
            pt("a", 4, session="s2", ts=1000, message_id="s2-1000", model=M2),
            pt("a", 5, session="s2", ts=5000, message_id="s2-5000"),
            pt("b", 1, session="s1", ts=1000, message_id="b-1000"),
        ],
        now,
    )
    # message ids or timestamps (alternatives), within the session
    assert await index.delete(VectorSelector("a", session_id="s1", timestamps=(2000,), message_ids=("s1-3000",))) == Deleted(2)
    assert await index.delete(VectorSelector("a", model_id=M2)) == Deleted(1)
    assert await index.delete(VectorSelector("a", session_id="s2", indexed_before=now)) == Deleted(0)  # written later
    assert await index.delete(VectorSelector("a", session_id="s2", indexed_before=now + 1)) == Deleted(1)
    models, collections = await index.stats("a")
    assert [(m.model_id, m.count, m.dimension) for m in models] == [(M1, 1, 4)]
    assert [(c.dimension, c.count) for c in collections] == [(4, 1), (8, 0)]
    assert await index.delete(VectorSelector("a")) == Deleted(1)
    assert (await index.stats("b"))[0][0].count == 1  # the other tenant keeps its points


async def test_stats_and_model_dimensions(index):
    await index.upsert([pt("a", 1), pt("a", 2), pt("a", 3, model=None), pt("a", 4, model=M2, dims=8), pt("b", 1)], 1)
    models, collections = await index.stats("a")
    assert [(m.model_id, m.count, m.dimension) for m in models] == [(M1, 2, 4), (None, 1, 4), (M2, 1, 8)]
    assert [(c.collection, c.dimension, c.count) for c in collections] == [
        (f"{index.prefix}_d4", 4, 3), (f"{index.prefix}_d8", 8, 1)
    ]
    assert await index.model_dimensions("a", M2) == [8]
    assert await index.model_dimensions("a", "test:none") == []
    assert await index.dimensions() == [4, 8]


# -- congruence ---------------------------------------------------------------------
def corpus(tenant: str, rng: random.Random, now: int) -> list[VectorPoint]:
    made = []
    for i in range(400):
        vector = [rng.gauss(0, 1) for _ in range(16)]
        record = VectorRecord(
            session_id=f"s{i % 7}",
            timestamp=now - rng.randrange(30 * 86_400_000),
            model_id=rng.choice([M1, M1, M1, M2, None]),
            message_id=f"msg{i}",
            role=rng.choice(["user", "assistant", ""]),
            platform=rng.choice(["qq", "discord"]),
            sender_id=rng.choice(["alice", "bob", "carol"]),
            mentioned_ids=tuple(rng.sample(["alice", "bob", "carol"], rng.randrange(2))),
            text=f"text {i}",
        )
        made.append(VectorPoint(tenant, vector, record))
    return made


def searches(rng: random.Random) -> list[RecallQuery]:
    made = []
    for scope, extra in (
        (RecallScope.ALL, {}),
        (RecallScope.SESSION, {"session_id": "s3"}),
        (RecallScope.PLATFORM, {"platform": "qq"}),
        (RecallScope.USER, {"session_id": "s1", "speaker_ids": ("alice",)}),
    ):
        for others_only in (False, True):
            made.append(
                RecallQuery(
                    vector=[rng.gauss(0, 1) for _ in range(16)], model_id=M1, top_k=7, scope=scope,
                    others_only=others_only, min_score=0.05 if others_only else 0.0, context_window=0, **extra,
                )
            )
    return made


async def test_search_memory_is_congruent_across_adapters(tmp_path):
    """The same data through each adapter: the same hits in the same order with the same scores."""
    rng = random.Random(11)
    now = now_ms()
    data = corpus("t", rng, now)
    queries = searches(rng)
    outcomes = {}
    for target in INDEX_TARGETS:
        folder = tmp_path / target
        folder.mkdir()
        store = SqliteStore(folder / "memoryd.db")
        await store.open()
        vectors = VectorMemory(make_index(target, folder), store)
        await vectors.open()
        try:
            await vectors.upsert("t", data)
            seen = []
            for q in queries:
                result = await vectors.search("t", q)
                seen.append(
                    (
                        [h.record.message_id for h in result.hits],
                        [round(h.ranked.candidate.semantic, 5) for h in result.hits],
                        result.excluded_other_models,
                    )
                )
            outcomes[target] = seen
        finally:
            await vectors.close()
            await store.close()
    reference = outcomes["edge"]
    assert any(hits for hits, _, _ in reference) and any(excluded for _, _, excluded in reference)
    for target, seen in outcomes.items():
        assert seen == reference, target
