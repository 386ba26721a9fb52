"""One set of vector-index cases (domain.vectors.VectorIndex), every case against every
adapter (conftest.INDEX_TARGETS): Qdrant Edge in-process and behind its process boundary,
and the server adapter against a real Qdrant server over gRPC and over REST (without a
server: against qdrant-client's in-process imitation of its API). Then the congruence
check (qdrant-client's idea): SearchMemory over the same data gives the same hits, order
and scores through each adapter as through Edge in-process."""

from __future__ import annotations

import random
import uuid
from collections import Counter
from dataclasses import replace

import pytest

from memoryd.domain.models import now_ms
from memoryd.domain.recall import Fusion, RecallQuery, RecallScope
from memoryd.domain import keywords
from memoryd.domain.vectors import (
    Deleted,
    IndexQuery,
    KeywordPoint,
    PointFilter,
    Scope,
    VectorPoint,
    VectorRecord,
    VectorSelector,
)
from memoryd.storage.sqlite.store import SqliteStore
from memoryd.vectors.recall import VectorRecall
from tests.vectors.conftest import INDEX_TARGETS, make_index, unit

M1, M2 = "test:one", "test:two"


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


def _mixed_points(rng: random.Random, tenant: str, count: int, other_share: float) -> list[VectorPoint]:
    """Points of M1, M2 and no model, of each role, in two sessions, some without a message id."""
    made = []
    for i in range(count):
        model = M2 if rng.random() < other_share else rng.choice((M1, M1, M1, None))
        record = VectorRecord(
            rng.choice(("s1", "s2")), 1000 + i, model, "" if i % 17 == 0 else f"m{i}", rng.choice(("user", "assistant", ""))
        )
        made.append(VectorPoint(tenant, [rng.gauss(0, 1) for _ in range(8)], record))
    return made


def _conditions() -> list[PointFilter]:
    return [
        PointFilter("a", model_id=M1),
        PointFilter("a", model_id=M1, legacy=True),
        PointFilter("a", Scope(session_id="s2"), model_id=M1, legacy=True, exclude_roles=("assistant",)),
        PointFilter("a", model_id=M1, exclude_roles=("user",), exclude_message_ids=("m3", "m4", "m5")),
        PointFilter("a", model_id=M2),
        PointFilter("a", Scope(session_id="s1")),
    ]


async def test_the_conditions_admit_what_the_engine_filter_admits(index):
    """PointFilter.admits_beyond_scope (applied to a scope-only query's results) and the
    engine filter agree on every point."""
    rng = random.Random(3)
    await index.upsert(_mixed_points(rng, "a", 300, 0.3), 1)
    for flt in _conditions():
        engine = (await index.query(IndexQuery(flt, 300, unit(0, 8)))).candidates
        scope_only = (await index.query(IndexQuery(flt.scope_only, 300, unit(0, 8)))).candidates
        admitted = [c.point_id for c in scope_only if flt.admits_beyond_scope(c.record)]
        assert sorted(c.point_id for c in engine) == sorted(admitted), flt
        assert engine and (len(admitted) < len(scope_only) or flt == flt.scope_only)  # some points, not all


@pytest.mark.parametrize("other_share", [0.05, 0.9])
async def test_candidates_and_pool_from_one_traversal_equal_two_queries(index, other_share):
    """Whether the scope's nearest points fill the candidates (the query model dominates) or
    the filtered query has to run too (another model dominates), a search with a pool gets the
    candidates a search without one gets, and the pool a scope-only query gets."""
    rng = random.Random(5)
    await index.upsert(_mixed_points(rng, "a", 400, other_share), 1)
    for n in range(12):
        vector = [rng.gauss(0, 1) for _ in range(8)]
        for flt in _conditions():
            for min_score in (None, 0.2):
                query = IndexQuery(flt, 12, vector, min_score=min_score, pool_limit=12)
                result = await index.query(query)
                alone = await index.query(replace(query, pool_limit=0))
                pool = await index.query(IndexQuery(flt.scope_only, 12, vector))
                assert [(c.point_id, round(c.semantic, 5)) for c in result.candidates] == [
                    (c.point_id, round(c.semantic, 5)) for c in alone.candidates
                ]
                assert result.pool_models == Counter(c.record.model_id for c in pool.candidates)


async def test_a_filter_that_fell_short_skips_the_shared_attempt_then_retries_and_the_record_is_bounded(
    index, monkeypatch
):
    """After a shortfall the key's next SHARED_RETRY_AFTER searches make one engine call
    (both queries), then the attempt runs again; past SHARED_KEYS keys the record starts afresh."""
    from memoryd.storage.qdrant import base

    if not hasattr(index, "_shared_skips"):
        pytest.skip("the shared traversal runs inside the engine process; its in-process adapter case covers it")

    rng = random.Random(9)
    await index.upsert(_mixed_points(rng, "a", 200, 0.9), 1)  # M2 dominates: M1 falls short
    calls = []
    search = index._search

    async def counted(space, searches):
        calls.append(len(searches))
        return await search(space, searches)

    monkeypatch.setattr(index, "_search", counted)
    monkeypatch.setattr(base, "SHARED_RETRY_AFTER", 3)
    monkeypatch.setattr(base, "SHARED_KEYS", 2)
    vector = [rng.gauss(0, 1) for _ in range(8)]

    def query(model: str | None, **conditions) -> IndexQuery:
        return IndexQuery(PointFilter("a", model_id=model, **conditions), 12, vector, pool_limit=12)

    await index.query(query(M1))  # the attempt (scope's nearest), short: the filtered query too
    assert calls == [1, 1]
    for _ in range(3):  # skipped: candidates and pool in one call
        await index.query(query(M1))
    assert calls[2:] == [2, 2, 2]
    del calls[:]
    await index.query(query(M1))  # retried
    assert calls == [1, 1]
    await index.query(query(M2))  # M2 dominates: the attempt fills the candidates
    assert calls == [1, 1, 1]
    assert len(index._shared_skips) == 1  # M1's key, short again
    await index.query(query(M1, legacy=True))  # a second key that falls short
    assert len(index._shared_skips) == 2
    await index.query(query(M1, exclude_roles=("assistant",)))  # a third: the record starts afresh
    assert list(index._shared_skips.values()) == [3]


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


async def test_scroll_pages_through_a_tenants_points_of_one_dimension_as_stored(index):
    written = [pt("a", i, sender_id=f"u{i}", mentioned_ids=("x",), text=f"t{i}") for i in range(7)] + [pt("a", 5, model=None)]
    await index.upsert([*written, pt("a", 1, dims=8), pt("b", 1)], 1)
    found, offset = [], None
    while True:
        page, offset = await index.scroll("a", 4, offset, 3)
        assert len(page) <= 3
        found += page
        if offset is None:
            break
    by_id = {point.id: point for point in written}
    assert sorted(point.id for point in found) == sorted(by_id)
    for point in found:  # the record as written, the vector as stored (float32 on Edge)
        assert point.record == by_id[point.id].record and point.tenant == "a"
        assert point.vector == pytest.approx(by_id[point.id].vector, abs=1e-6)
    assert await index.scroll("a", 16, None, 3) == ([], None)  # no such dimension


# -- keywords and hybrid ------------------------------------------------------------
def kw(tenant, text, *, session="s1", ts=1000, role="user", message_id=None, **fields):
    record = VectorRecord(session, ts, None, uuid.uuid4().hex if message_id is None else message_id, role, text=text, **fields)
    return KeywordPoint(tenant, record)


async def keyword_hits(index, flt: PointFilter, text: str, limit=10) -> list[tuple[str, float]]:
    found = await index.query(IndexQuery(flt, limit, text=text))
    assert all(c.semantic is None for c in found.candidates)
    return [(c.record.message_id, c.keyword) for c in found.candidates]


async def test_keyword_search_is_bm25_in_english_and_in_chinese(index):
    texts = {
        "hike": "We went hiking in the mountains last weekend",
        "hikes": "Hiking, hiking, always hiking: she hikes every day",
        "lake": "The lake near the mountains was cold",
        "zh-hike": "我昨天和朋友去山里徒步旅行",
        "zh-book": "他喜欢在图书馆读书",
    }
    await index.upsert_keywords([kw("a", t, message_id=m) for m, t in texts.items()], 1)
    hits = await keyword_hits(index, PointFilter("a"), "hiking trip")
    # Stemmed ("hikes", "hiking"), term frequency saturates but counts; "trip" matches nothing.
    assert [m for m, _ in hits] == ["hikes", "hike"]
    assert hits[0][1] > hits[1][1] > 0
    # The score is BM25 with Qdrant's IDF over the tenant's keyword points.
    documents = [keywords.document_vector(t) for t in texts.values()]
    frequencies: dict[int, int] = {}
    for d in documents:
        for token in d.indices:
            frequencies[token] = frequencies.get(token, 0) + 1
    expected = keywords.score(keywords.query_vector("hiking trip"), keywords.document_vector(texts["hike"]), frequencies, 5)
    assert hits[1][1] == pytest.approx(expected, rel=1e-4)
    # Chinese is segmented into words: one word finds its sentence.
    assert [m for m, _ in await keyword_hits(index, PointFilter("a"), "徒步")] == ["zh-hike"]
    assert [m for m, _ in await keyword_hits(index, PointFilter("a"), "图书馆")] == ["zh-book"]
    # Length normalization: of two texts with the word once, the shorter ranks first.
    assert [m for m, _ in await keyword_hits(index, PointFilter("a"), "mountain")] == ["lake", "hike"]
    # Stopwords and words of no point find nothing.
    assert await keyword_hits(index, PointFilter("a"), "the and of") == []
    assert await keyword_hits(index, PointFilter("a"), "volcano") == []


async def test_keyword_idf_scopes_and_roles(index):
    await index.upsert_keywords(
        [
            kw("a", "coffee every morning", message_id="a1", session="s1"),
            kw("a", "tea in the afternoon", message_id="a2", session="s2", role="assistant", platform="qq"),
            kw("a", "coffee and tea", message_id="a3", session="s2", sender_id="bob"),
        ],
        1,
    )
    before = await keyword_hits(index, PointFilter("a"), "coffee")
    # Another tenant's words never change a tenant's scores (IDF per tenant) nor its hits.
    await index.upsert_keywords([kw("b", f"coffee {i}", message_id=f"b{i}") for i in range(20)], 1)
    assert await keyword_hits(index, PointFilter("a"), "coffee") == before
    assert {m for m, _ in before} == {"a1", "a3"}
    assert [m for m, _ in await keyword_hits(index, PointFilter("a", Scope(session_id="s1")), "coffee tea")] == ["a1"]
    assert [m for m, _ in await keyword_hits(index, PointFilter("a", Scope(platform="qq")), "tea")] == ["a2"]
    others = PointFilter("a", exclude_roles=("assistant",))
    assert [m for m, _ in await keyword_hits(index, others, "tea")] == ["a3"]
    # The caller's excluded messages are never candidates, by keyword or by vector.
    assert [m for m, _ in await keyword_hits(index, PointFilter("a", exclude_message_ids=("a1",)), "coffee")] == ["a3"]
    await index.upsert([pt("a", 10, message_id="a1"), pt("a", 20, message_id="a3")], 1)
    assert await ids(index, PointFilter("a", exclude_message_ids=("a1", "zz"))) == ["a3"]
    # The model condition does not apply to keyword points (they have no model).
    assert {m for m, _ in await keyword_hits(index, PointFilter("a", model_id=M1), "tea")} == {"a2", "a3"}
    assert [m for m, _ in await keyword_hits(index, PointFilter("a"), "coffee", limit=1)] == [before[0][0]]


@pytest.mark.parametrize("target", INDEX_TARGETS, indirect=True)
async def test_keyword_points_re_upserted_with_the_same_text_search_as_if_written_afresh(target, tmp_path):
    """Messages first indexed with other fields (as SaveMessage's indexing leaves them), then
    upserted with text and their final fields (Edge then rewrites only the changed payload),
    against an index that only ever saw the final points: the same hits, scores and records
    for keyword and hybrid searches with every filter."""
    texts = ["coffee every morning", "tea in the afternoon", "coffee and tea", "green tea", "the ferry to Naxos"]
    final = [
        dict(session="s1", platform="qq", sender_id="bob", mentioned_ids=("carol",), speaker_label="Bob"),
        dict(session="s2", role="assistant", platform="qq"),
        dict(session="s2", sender_id="alice"),
        dict(session="s1", role="assistant", mentioned_ids=("bob", "dave")),
        dict(session="s3", platform="discord", sender_id="carol"),
    ]
    first = [dict(session=f["session"], platform="web", sender_id="zed", speaker_label="Z") for f in final]

    def points(fields, indexed_at):
        notes = [kw("a", t, message_id=f"m{i}", ts=1000 + i, **{k: v for k, v in f.items() if k != "session"}, session=f["session"])
                 for i, (t, f) in enumerate(zip(texts, fields))]
        return notes, [VectorPoint("a", unit(10 * i), n.record) for i, n in enumerate(notes)]

    rewritten, fresh = make_index(target, tmp_path / "rewritten"), make_index(target, tmp_path / "fresh")
    for index in (rewritten, fresh):
        await index.open()
    try:
        notes, _ = points(first, 1)
        await rewritten.upsert_keywords(notes, 1)
        for index in (rewritten, fresh):
            notes, dense = points(final, 2)
            await index.upsert(dense, 2)
            await index.upsert_keywords(notes, 2)
        filters = [
            PointFilter("a"),
            PointFilter("a", Scope(session_id="s2")),
            PointFilter("a", Scope(platform="qq")),
            PointFilter("a", Scope(speaker_ids=("bob",))),
            PointFilter("a", Scope(speaker_ids=("carol",))),
            PointFilter("a", exclude_roles=("assistant",)),
            PointFilter("a", exclude_message_ids=("m2",)),
            PointFilter("a", model_id=M1),
        ]
        for flt in filters:
            for query in (IndexQuery(flt, 10, text="coffee tea ferry"), IndexQuery(flt, 10, unit(0), text="tea")):
                got = [(await index.query(query)).candidates for index in (rewritten, fresh)]
                # (by message: the engine orders equal scores by where the points lie)
                assert sorted((c.record.message_id, c.record, c.keyword, c.semantic) for c in got[0]) == sorted(
                    (c.record.message_id, c.record, c.keyword, c.semantic) for c in got[1]
                )
        assert [m for m, _ in await keyword_hits(rewritten, PointFilter("a", Scope(platform="web")), "tea")] == []
        assert [m for m, _ in await keyword_hits(rewritten, PointFilter("a", Scope(speaker_ids=("bob",))), "coffee tea")] == ["m0", "m3"]
    finally:
        for index in (rewritten, fresh):
            await index.close()


async def test_hybrid_query_gives_each_message_both_scores(index):
    # m1..m4 have dense points of M1 (m1 nearest); m3 and m5 mention "camera"; m5 has no vector.
    dense = [pt("a", angle, message_id=f"m{i}", text=f"text {i}") for i, angle in enumerate((5, 20, 60, 80), start=1)]
    await index.upsert(dense, 1)
    await index.upsert([pt("a", 1, message_id="m3", model=M2, text="other model")], 1)
    await index.upsert_keywords(
        [
            kw("a", "text 1", message_id="m1"),
            kw("a", "text 2", message_id="m2"),
            kw("a", "my new camera", message_id="m3"),
            kw("a", "text 4", message_id="m4"),
            kw("a", "camera shop", message_id="m5"),
        ],
        1,
    )
    found = await index.query(IndexQuery(PointFilter("a", model_id=M1), 2, unit(0), text="camera"))
    by_id = {c.record.message_id: c for c in found.candidates}
    # The 2 nearest, plus the 2 keyword candidates: one candidate per message.
    assert sorted(by_id) == ["m1", "m2", "m3", "m5"]
    assert by_id["m1"].keyword is None and by_id["m1"].semantic == pytest.approx(unit(5)[0], abs=1e-5)
    # A keyword candidate beyond the nearest still gets its exact semantic score, of M1's point.
    assert by_id["m3"].semantic == pytest.approx(unit(60)[0], abs=1e-5) and by_id["m3"].keyword > 0
    assert by_id["m3"].point_id == dense[2].id and by_id["m3"].record.model_id == M1
    assert by_id["m5"].semantic is None and by_id["m5"].keyword > 0
    # min_score applies to the semantic score of keyword candidates too.
    found = await index.query(IndexQuery(PointFilter("a", model_id=M1), 2, unit(0), min_score=0.9, text="camera"))
    by_id = {c.record.message_id: c for c in found.candidates}
    assert by_id["m3"].semantic is None and by_id["m1"].semantic is not None


async def test_deletes_and_stats_of_keyword_points(index):
    a1, a2 = kw("a", "first words", message_id="a1", session="s1"), kw("a", "second words", session="s2", ts=7)
    await index.upsert_keywords([a1, a2, kw("b", "words of b", message_id="b1")], 1)
    await index.upsert([pt("a", 1, message_id="a1", session="s1")], 1)
    assert await index.has_keyword_point(a1.id) and not await index.has_keyword_point(kw("a", "x").id)
    _, collections = await index.stats("a")
    assert [(c.collection, c.dimension, c.count) for c in collections] == [
        (f"{index.prefix}_keywords", 0, 2), (f"{index.prefix}_d4", 4, 1)
    ]
    assert await index.dimensions() == [4]  # the keyword index is no dense dimension
    # A model selector leaves keyword points alone; the others delete them too.
    assert await index.delete(VectorSelector("a", model_id=M1)) == Deleted(1, 0)
    assert await index.delete(VectorSelector("a", session_id="s2", timestamps=(7,))) == Deleted(0, 1)
    assert await index.delete(VectorSelector("a", session_id="s1", message_ids=("a1",))) == Deleted(0, 1)
    assert not await index.has_keyword_point(a1.id)
    assert await index.delete(VectorSelector("b")) == Deleted(0, 1)


async def test_keyword_re_upserts_replace_text_and_count_as_indexed_again(index):
    """Re-sending keyword points (what UpsertVectors does for texts the background indexing
    already has) leaves one point per message with its latest text (the last of a batch) and
    its latest indexed_at: a delete decided between the two writes (a delete applied from the log) spares it."""
    await index.upsert_keywords([kw("a", "alpine hiking", message_id="m1"), kw("a", "lake swimming", message_id="m2")], 100)
    await index.upsert_keywords([kw("a", "alpine hiking", message_id="m1"), kw("a", "lake sailing", message_id="m2")], 200)
    await index.upsert_keywords([kw("a", "first draft", message_id="m3"), kw("a", "final words", message_id="m3")], 200)
    found = await keyword_hits(index, PointFilter("a"), "alpine sailing final")
    assert sorted(m for m, _ in found) == ["m1", "m2", "m3"]
    assert await keyword_hits(index, PointFilter("a"), "swimming") == []
    assert await keyword_hits(index, PointFilter("a"), "draft") == []
    assert await index.delete(VectorSelector("a", indexed_before=150)) == Deleted(0, 0)
    assert await index.delete(VectorSelector("a", indexed_before=201)) == Deleted(0, 3)


# -- congruence ---------------------------------------------------------------------
# Common words, and rare ones that queries ask for: each query matches fewer texts than its
# keyword candidates, so no engine's order of tied scores at the cut decides what is found.
COMMON = "hiking coffee garden music 咖啡 旅行 读书 朋友".split()
RARE = "camera piano lake 徒步 摄影 花园".split()


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
            text=" ".join(rng.choices(COMMON, k=rng.randrange(1, 6)) + [w for w in RARE if rng.random() < 0.03]),
        )
        made.append(VectorPoint(tenant, vector, record))
    return made


def searches(rng: random.Random, now: int) -> list[RecallQuery]:
    """The queries, all ranked for recency at `now`: the reference is computed minutes before an
    adapter's run on a loaded machine, and recency measured at each search's own clock would
    move scores and reorder near-ties."""
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
                    others_only=others_only, min_score=0.05 if others_only else 0.0, context_window=0,
                    reference_time=now, **extra,
                )
            )
    # Hybrid (both fusions) and keyword-only, in English and Chinese.
    for i, text in enumerate(("camera piano", "徒步 摄影", "lake 花园")):
        vector = [rng.gauss(0, 1) for _ in range(16)]
        made.append(RecallQuery(vector=vector, model_id=M1, text=text, top_k=7, context_window=0, reference_time=now))
        made.append(
            RecallQuery(vector=vector, model_id=M1, text=text, top_k=7, context_window=0, fusion=Fusion(2 - i % 2),
                        reference_time=now)
        )
        made.append(
            RecallQuery(text=text, top_k=7, context_window=0, scope=RecallScope.SESSION, session_id=f"s{i + 3}",
                        reference_time=now)
        )
    return made


SCORE_TOLERANCE = 1e-6


async def search_outcomes(target: str, folder, data: list[VectorPoint], queries: list[RecallQuery]) -> list[tuple]:
    """Per query through `target`: the hits' message ids in order, their semantic, keyword
    and fused scores, and the count of other models' vectors it excluded."""
    folder.mkdir()
    store = SqliteStore(folder / "memoryd.db")
    await store.open()
    vectors = VectorRecall(make_index(target, folder), store)
    await vectors.open()
    try:
        await vectors.upsert("t", data)
        seen = []
        for q in queries:
            result = await vectors.search("t", q)
            hits = [(h.ranked.candidate.semantic, h.ranked.candidate.keyword, h.ranked.score) for h in result.hits]
            seen.append(([h.record.message_id for h in result.hits], hits, result.excluded_other_models))
        return seen
    finally:
        await vectors.close()
        await store.close()


def _close(a: float | None, b: float | None) -> bool:
    return a is None and b is None or a is not None and b is not None and abs(a - b) <= SCORE_TOLERANCE


@pytest.fixture(scope="module")
async def congruence(tmp_path_factory):
    """The data, the queries and what Qdrant Edge in-process answers: the reference."""
    rng = random.Random(11)
    now = now_ms()
    data = corpus("t", rng, now)
    queries = searches(rng, now)
    reference = await search_outcomes("edge", tmp_path_factory.mktemp("congruence") / "edge", data, queries)
    assert any(hits for hits, *_ in reference) and any(excluded for *_, excluded in reference)
    keyworded = [i for i, (_, scores, _) in enumerate(reference) if any(k is not None for _, k, _ in scores)]
    assert keyworded == list(range(8, 17))
    return data, queries, reference


@pytest.mark.parametrize("target", INDEX_TARGETS[1:], indirect=True)
async def test_search_memory_is_congruent_across_adapters(target, tmp_path, congruence):
    """The same data through each adapter as through Edge: the same hits in the same order
    with the same scores (to 1e-6)."""
    data, queries, reference = congruence
    seen = await search_outcomes(target, tmp_path / target, data, queries)
    for q, ((ids, scores, excluded), (ref_ids, ref_scores, ref_excluded)) in enumerate(zip(seen, reference)):
        assert (ids, excluded) == (ref_ids, ref_excluded), (target, q)
        for mine, theirs in zip(scores, ref_scores):
            assert all(_close(a, b) for a, b in zip(mine, theirs)), (target, q, mine, theirs)
