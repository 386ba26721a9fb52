"""Slice recall (docs/VECTORS.md, "Slices"): summary slices indexed from the event log, searched by
keywords and by the caller's vectors, bounded messages per hit, scope, deletes that follow
the slices, and slices and messages never seen by each other's searches. On both message
stores and both Qdrant adapters (the `vectors` fixture: Edge and a Qdrant server over gRPC).
"""

from __future__ import annotations

import asyncio
from dataclasses import replace

import pytest

from memoryd.domain import recall
from memoryd.domain.errors import InvalidArgument
from memoryd.domain.models import ClearTarget, SessionAttributes
from memoryd.domain.summaries import SliceQuery, Summaries
from memoryd.domain.vectors import IndexQuery, PointFilter
from memoryd.domain.limits import Limits
from memoryd.domain.memory import Memory
from memoryd.domain.models import ClearOutcome
from memoryd.domain.summaries import Summary
from memoryd.vectors.recall import VectorRecall
from memoryd.vectors.slices import parse_ref, slice_points, slice_tenant
from tests.vectors.conftest import make_index, msg, unit
from tests.vectors.index_state import slice_difference

M1 = "test:model-one"
T0 = 1_700_000_000_000

# Two conversations: each session's turns, and the summary saved over them.
TRIP = [
    "we should plan the holiday soon",
    "yes, the flights to Lisbon are cheap in May",
    "book the hotel near the river then",
    "done, three nights in Alfama",
    "remember to pack the camera",
    "and the charger this time",
]
TRIP_SUMMARY = "Planned a May holiday in Lisbon: flights, a hotel in Alfama, camera gear."
WORK = ["the quarterly report is late", "finance wants numbers by Friday", "I will ask Dana for the spreadsheet"]
WORK_SUMMARY = "Quarterly report overdue; finance deadline Friday; spreadsheet from Dana."


@pytest.fixture
def summaries(store, vectors) -> Summaries:
    return Summaries(store, Limits(), slices=vectors.slices)


async def converse(memory, tenant, session, turns, start=T0):
    await memory.save_messages(
        tenant, session, [msg("user" if i % 2 == 0 else "assistant", t, start + i * 1000) for i, t in enumerate(turns)]
    )


async def setup(memory, summaries, vectors, tenant, *, vectors_for=None):
    """Two sessions with a slice each; `vectors_for`: session -> the slice's vector."""
    await converse(memory, tenant, "trip", TRIP)
    await converse(memory, tenant, "work", WORK, T0 + 3_600_000)
    extra = vectors_for or {}
    for session, turns, text in (("trip", TRIP, TRIP_SUMMARY), ("work", WORK, WORK_SUMMARY)):
        vector = extra.get(session, ())
        await summaries.save(tenant, session, 1, len(turns), text, {}, vector, M1 if vector else "")
    await vectors.runtime.sync_tenant(tenant)


async def test_slice_points_are_pure_and_keyed_apart_from_messages(tenant):
    from memoryd.domain.summaries import Summary

    summary = Summary("abc", "s1", 3, 9, "text", {}, 5, 7)
    keyword, dense = slice_points(tenant, summary, 100, 200, unit(0), M1)
    assert keyword.tenant == dense.tenant == slice_tenant(tenant) != tenant
    assert keyword.record.timestamp == 200 and dense.record.model_id == M1
    assert parse_ref(keyword.record.message_id) == (3, 9, 100, "abc")
    assert slice_points(tenant, summary, 100, 200)[1] is None
    assert keyword.id == slice_points(tenant, summary, 100, 200)[0].id  # indexing again replaces


async def test_keyword_search_finds_the_slice_with_bounded_messages(memory, summaries, vectors, tenant):
    await setup(memory, summaries, vectors, tenant)
    hits, found = await summaries.search(tenant, SliceQuery(text="Lisbon holiday", keyword_weight=1.0), True, 4)
    assert found.keyword and not found.semantic
    assert [h.summary.session_id for h in hits] == ["trip"]
    [hit] = hits
    assert hit.summary.text == TRIP_SUMMARY and hit.summary.coverage == 1
    assert [m.content for m in hit.messages] == TRIP[:4] and hit.messages_truncated  # 6 covered, 4 shown
    assert hit.found.ranked.candidate.keyword > 0
    whole, _ = await summaries.search(tenant, SliceQuery(text="Lisbon holiday", keyword_weight=1.0), True, 50)
    assert [m.content for m in whole[0].messages] == TRIP and not whole[0].messages_truncated
    bare, _ = await summaries.search(tenant, SliceQuery(text="spreadsheet Friday", keyword_weight=1.0), False, 50)
    assert [h.summary.session_id for h in bare] == ["work"] and bare[0].messages == []


async def test_semantic_search_with_caller_vectors(memory, summaries, vectors, tenant):
    await setup(memory, summaries, vectors, tenant, vectors_for={"trip": unit(10), "work": unit(60)})
    hits, found = await summaries.search(
        tenant, SliceQuery(vector=tuple(unit(0)), model_id=M1, keyword_weight=0.0), False, 0
    )
    assert found.semantic and found.model_id == M1
    assert [h.summary.session_id for h in hits] == ["trip", "work"]
    assert hits[0].found.ranked.candidate.semantic == pytest.approx(unit(10)[0], abs=1e-5)
    far, _ = await summaries.search(tenant, SliceQuery(vector=tuple(unit(70)), model_id=M1, keyword_weight=0.0), False, 0)
    assert [h.summary.session_id for h in far] == ["work", "trip"]
    hybrid, found = await summaries.search(
        tenant, SliceQuery(text="spreadsheet", vector=tuple(unit(0)), model_id=M1), False, 0
    )
    assert found.semantic and found.keyword and hybrid[0].summary.session_id == "work"
    await memory.save_messages(tenant, "work", [msg("user", "one more", T0 + 7_200_000)])
    with pytest.raises(InvalidArgument):  # a model's vectors have one dimension
        await summaries.save(tenant, "work", 4, 4, "x", {}, unit(0, 8), M1)


async def test_scope_and_user_sessions(memory, summaries, vectors, tenant):
    await setup(memory, summaries, vectors, tenant)
    query = SliceQuery(text="Lisbon report spreadsheet holiday", keyword_weight=1.0, top_k=5)
    every, _ = await summaries.search(tenant, query, False, 0)
    assert {h.summary.session_id for h in every} == {"trip", "work"}
    one, _ = await summaries.search(tenant, replace(query, session_id="work"), False, 0)
    assert [h.summary.session_id for h in one] == ["work"]
    theirs, _ = await summaries.search(tenant, replace(query, sessions=("trip",)), False, 0)
    assert [h.summary.session_id for h in theirs] == ["trip"]
    nothing, _ = await summaries.search(tenant, replace(query, sessions=()), False, 0)
    assert nothing == []
    other, _ = await summaries.search(tenant + "-other", query, False, 0)
    assert other == []


async def slice_point_count(vectors, tenant) -> int:
    found = await vectors.index.query(IndexQuery(PointFilter(slice_tenant(tenant)), 100, text="Lisbon report holiday"))
    return len(found.candidates)


async def slices_exact(vectors, tenant) -> None:
    """Once the log is applied, the slice points are the stored slices (no more, no fewer)."""
    await vectors.runtime.sync_tenant(tenant)
    assert (await slice_difference(vectors.indexer, tenant)).exact


async def test_deletes_follow_the_slices(memory, summaries, vectors, store, tenant):
    await setup(memory, summaries, vectors, tenant, vectors_for={"trip": unit(10), "work": unit(60)})
    assert await slice_point_count(vectors, tenant) == 2
    await slices_exact(vectors, tenant)
    # Messages deleted: the slice stays (the summary is all that is left), and so do its points.
    await memory.clear(tenant, "trip", [ClearTarget.MESSAGES])
    assert await slice_point_count(vectors, tenant) == 2
    hits, _ = await summaries.search(tenant, SliceQuery(text="Lisbon", keyword_weight=1.0), True, 10)
    assert hits[0].summary.coverage == 3 and hits[0].messages == []  # DELETED
    # The slices deleted with the session's metadata: their points go.
    await memory.clear(tenant, "trip", [ClearTarget.METADATA])
    assert await slice_point_count(vectors, tenant) == 1
    dense = await vectors.index.query(
        IndexQuery(PointFilter(slice_tenant(tenant), model_id=M1), 10, unit(0))
    )
    assert [c.record.session_id for c in dense.candidates] == ["work"]
    await slices_exact(vectors, tenant)  # applying the clears again from the log changes nothing
    assert await slice_point_count(vectors, tenant) == 1
    await memory.clear(tenant, None, [ClearTarget.METADATA])  # ClearAll
    assert await slice_point_count(vectors, tenant) == 0
    await slices_exact(vectors, tenant)


async def test_forgetting_a_user_deletes_their_slice_points(memory, summaries, vectors, tenant):
    await memory.save_messages(tenant, "mine", [msg("user", "my Lisbon holiday", T0)], attributes=SessionAttributes(user_id="u1"))
    await summaries.save(tenant, "mine", 1, 1, TRIP_SUMMARY, {})
    await converse(memory, tenant, "work", WORK)
    await summaries.save(tenant, "work", 1, 3, WORK_SUMMARY + " Lisbon", {})
    await slices_exact(vectors, tenant)
    assert await slice_point_count(vectors, tenant) == 2
    await memory.forget_user(tenant, "u1")
    assert await slice_point_count(vectors, tenant) == 1
    await slices_exact(vectors, tenant)


async def test_slices_are_indexed_and_deleted_from_the_log_alone(store, vectors, tenant):
    """Saves and clears through a process with no vector hooks (or one that died before
    them): the synchronizer finds every slice change in the event log."""
    crashed = Memory(store, Limits())
    summaries = Summaries(store, Limits())  # no slice index: nothing is indexed synchronously
    await converse(crashed, tenant, "trip", TRIP)
    await converse(crashed, tenant, "work", WORK, T0 + 3_600_000)
    await summaries.save(tenant, "trip", 1, len(TRIP), TRIP_SUMMARY, {})
    await summaries.save(tenant, "work", 1, len(WORK), WORK_SUMMARY, {})
    assert await slice_point_count(vectors, tenant) == 0
    await slices_exact(vectors, tenant)
    assert await slice_point_count(vectors, tenant) == 2
    found, _ = await Summaries(store, Limits(), slices=vectors.slices).search(
        tenant, SliceQuery(text="Lisbon holiday", keyword_weight=1.0), False, 0
    )
    assert [h.summary.text for h in found] == [TRIP_SUMMARY]
    # A slice saved and deleted before the synchronizer ran is never indexed.
    await converse(crashed, tenant, "trip", ["one more about Lisbon"], T0 + 7_200_000)
    await summaries.save(tenant, "trip", len(TRIP) + 1, len(TRIP) + 1, "Lisbon again", {})
    await crashed.clear(tenant, "trip", [ClearTarget.METADATA])
    await slices_exact(vectors, tenant)
    assert await slice_point_count(vectors, tenant) == 1
    await crashed.clear(tenant, None, [ClearTarget.METADATA])
    await slices_exact(vectors, tenant)
    assert await slice_point_count(vectors, tenant) == 0


@pytest.mark.parametrize("target", ["edge"], indirect=True)
async def test_a_slice_delete_while_the_index_is_down_is_applied_from_the_log(target, tmp_path, store, tenant):
    vectors = VectorRecall(make_index(target, tmp_path), store)
    vectors.runtime.tenants = {tenant}
    await vectors.open()
    try:
        memory = Memory(store, Limits(), hooks=vectors)
        summaries = Summaries(store, Limits(), slices=vectors.slices)
        await setup(memory, summaries, vectors, tenant, vectors_for={"trip": unit(10)})
        assert await slice_point_count(vectors, tenant) == 2
        await vectors.index.close()  # the index is gone when the clear comes
        [cleared, _] = await memory.clear(tenant, "trip", [ClearTarget.METADATA, ClearTarget.VECTORS])
        assert cleared.outcome is ClearOutcome.CLEARED
        await vectors.index.open()  # back: the clear's event is still in the log
        assert await slice_point_count(vectors, tenant) == 2
        await slices_exact(vectors, tenant)
        assert await slice_point_count(vectors, tenant) == 1
        dense = await vectors.index.query(IndexQuery(PointFilter(slice_tenant(tenant), model_id=M1), 10, unit(0)))
        assert dense.candidates == []  # the caller's vector went with its slice
    finally:
        await vectors.close()


@pytest.mark.parametrize("target", ["edge"], indirect=True)
async def test_a_rebuild_restores_the_slice_points_and_drops_stale_ones(target, tmp_path, store, tenant):
    memory = Memory(store, Limits())
    summaries = Summaries(store, Limits())
    await converse(memory, tenant, "trip", TRIP)
    await converse(memory, tenant, "work", WORK, T0 + 3_600_000)
    await summaries.save(tenant, "trip", 1, len(TRIP), TRIP_SUMMARY, {})
    await summaries.save(tenant, "work", 1, len(WORK), WORK_SUMMARY, {})
    first = VectorRecall(make_index(target, tmp_path / "a"), store)
    first.runtime.tenants = {tenant}
    await first.open()
    try:
        await slices_exact(first, tenant)
        # A point of a slice the store does not have (another summary over the same range: a
        # replaced slice's old point) goes with the rebuild; the stored slice's stays.
        stale = Summary("replaced", "trip", 1, len(TRIP), "Lisbon holiday, an older summary", {}, T0, 0)
        await first.index.upsert_keywords([slice_points(tenant, stale, T0, T0)[0]], T0)
        assert not (await slice_difference(first.indexer, tenant)).exact
        await first.runtime.reindex(tenant)
        assert (await slice_difference(first.indexer, tenant)).exact
        assert await slice_point_count(first, tenant) == 2
    finally:
        await first.close()
    # A fresh, empty index (the folder deleted) under the same store and cursor: rebuilt.
    second = VectorRecall(make_index(target, tmp_path / "b"), store)
    second.runtime.tenants = {tenant}
    await second.open()
    try:
        await slices_exact(second, tenant)
        assert await slice_point_count(second, tenant) == 2
    finally:
        await second.close()


async def test_message_searches_never_see_slices_and_back(memory, summaries, vectors, tenant):
    await setup(memory, summaries, vectors, tenant, vectors_for={"trip": unit(0), "work": unit(1)})
    stats = await vectors.stats(tenant)
    assert stats.keyword_points == len(TRIP) + len(WORK)  # slices' points are not the tenant's
    assert stats.models == []  # the messages have no vectors; the slices' are not counted
    # "Alfama" is in a message and in the trip slice: the message search returns messages only.
    result = await vectors.search(tenant, recall.RecallQuery(text="Alfama camera", keyword_weight=1.0, top_k=10))
    assert result.hits and all(h.record.message_id and parse_ref(h.record.message_id) is None for h in result.hits)
    assert {h.text for h in result.hits} <= set(TRIP + WORK)
    semantic = await vectors.search(tenant, recall.RecallQuery(vector=unit(0), model_id=M1, keyword_weight=0.0))
    assert semantic.hits == []  # only slices have vectors
    # And a slice search never returns a message: "the charger this time" is a message's text only.
    hits, _ = await summaries.search(tenant, SliceQuery(text="charger", keyword_weight=1.0), False, 0)
    assert hits == []


@pytest.mark.parametrize("mode", [recall.SliceMode.FIRST, recall.SliceMode.FUSED])
async def test_search_memory_with_slices(memory, summaries, vectors, tenant, mode):
    await setup(memory, summaries, vectors, tenant)
    # "May holiday" matches the trip slice; of its messages only one says "May".
    base = recall.RecallQuery(text="May holiday gear", keyword_weight=1.0, top_k=3, context_window=0, time_weight=0.0)
    plain = await vectors.search(tenant, base)
    sliced = await vectors.search(tenant, replace(base, slices=mode))
    assert all(h.record.session_id == "trip" for h in sliced.hits)
    assert {h.record.message_id for h in plain.hits} <= {h.record.message_id for h in sliced.hits} | set()
    if mode is recall.SliceMode.FUSED:
        assert any(h.ranked.sliced > 0 for h in sliced.hits)
    else:
        assert all(h.ranked.sliced == 0 for h in sliced.hits)
    # Without a matching slice, both modes are the plain search.
    none = await vectors.search(tenant, replace(base, text="zebra", slices=mode))
    assert none.hits == []


async def test_assemble_context_recall_through_slices(memory, store, vectors, tenant):
    from memoryd.domain.summaries import ContextRequest, SearchRecaller

    summaries = Summaries(store, Limits(), SearchRecaller(vectors), slices=vectors.slices)
    await setup(memory, summaries, vectors, tenant)
    await memory.save_messages(tenant, "now", [msg("user", "which holiday gear did we plan?", T0 + 9_000_000)])
    request = ContextRequest("now", include_recall=True, recall_top_k=3, recall_slices=recall.SliceMode.FIRST)
    result = await summaries.assemble(tenant, request)
    assert result.recall_status == 1 and result.assembly.recalled
    assert {r.session_id for r, _ in result.assembly.recalled} == {"trip"}


async def test_a_saved_slice_is_searchable_when_save_returns(memory, summaries, vectors, tenant):
    """SaveSummary returns once the running synchronizer indexed the slice (read-your-writes)."""
    vectors.runtime.tenants = {tenant}
    syncing = asyncio.create_task(vectors.runtime.run())
    try:
        await converse(memory, tenant, "trip", TRIP)
        await summaries.save(tenant, "trip", 1, len(TRIP), TRIP_SUMMARY, {})
        hits, _ = await summaries.search(tenant, SliceQuery(text="Lisbon holiday", keyword_weight=1.0), False, 0)
        assert [h.summary.text for h in hits] == [TRIP_SUMMARY]
    finally:
        syncing.cancel()
        await asyncio.gather(syncing, return_exceptions=True)
