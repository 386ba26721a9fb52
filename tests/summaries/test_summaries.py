"""Summary slices and the summary cursor (docs/CONTEXT.md), on every adapter."""

from __future__ import annotations

import asyncio

import pytest

from memoryd.domain.errors import FailedPrecondition
from memoryd.domain.models import ClearTarget, EventType, Message
from memoryd.domain.summaries import Coverage, Summaries
from tests.summaries.conftest import LIMITS


def msg(content: str, ts: int, role: str = "user", **extra) -> Message:
    return Message(role=role, content=content, timestamp=ts, **extra)


async def seed(memory, tenant: str, session: str, n: int, start_ts: int = 1000) -> list[Message]:
    result = await memory.save_messages(tenant, session, [msg(f"m{i}", start_ts + i) for i in range(1, n + 1)])
    return result.messages


async def test_save_advances_cursor_and_lists_slices(memory, summaries, tenant):
    stored = await seed(memory, tenant, "s", 6)
    assert [m.seq for m in stored] == [1, 2, 3, 4, 5, 6]
    first, cursor, dedup = await summaries.save(tenant, "s", 1, 3, "one to three", {"model": "x"})
    assert (cursor, dedup) == (3, False)
    assert (first.from_seq, first.to_seq, first.saved_message_count, first.coverage) == (1, 3, 3, Coverage.INTACT)
    await summaries.save(tenant, "s", 4, 5, "four and five", {})
    state = await summaries.get_cursor(tenant, "s")
    assert (state.cursor, state.summary_count, state.last_seq) == (5, 2, 6)
    assert state.latest.text == "four and five" and state.latest.present_message_count == 2

    page, token = await summaries.list_summaries(tenant, "s", 1, "")
    rest, end = await summaries.list_summaries(tenant, "s", 1, token)
    assert [s.text for s in page + rest] == ["one to three", "four and five"] and end == ""
    assert page[0].metadata == {"model": "x"} and page[0].create_time <= rest[0].create_time
    # Another session has its own cursor.
    assert (await summaries.get_cursor(tenant, "other")).cursor == 0


async def test_overlapping_and_out_of_range_slices_are_rejected(memory, summaries, tenant):
    await seed(memory, tenant, "s", 5)
    await summaries.save(tenant, "s", 1, 3, "first", {})
    for from_seq, to_seq in [(1, 4), (3, 4), (2, 2)]:
        with pytest.raises(FailedPrecondition) as overlap:
            await summaries.save(tenant, "s", from_seq, to_seq, "again", {})
        assert overlap.value.reason == "SUMMARY_RANGE_OVERLAPS"
        assert overlap.value.metadata["cursor"] == "3"
    with pytest.raises(FailedPrecondition) as beyond:
        await summaries.save(tenant, "s", 4, 9, "future", {})
    assert beyond.value.reason == "SUMMARY_RANGE_BEYOND_HISTORY" and beyond.value.metadata["last_seq"] == "5"
    with pytest.raises(FailedPrecondition) as gap:
        await summaries.save(tenant, "s", 5, 5, "skips seq 4", {})
    assert gap.value.reason == "SUMMARY_RANGE_GAP" and gap.value.metadata["first_unsummarized_seq"] == "4"
    # Nothing was stored by the rejected calls.
    state = await summaries.get_cursor(tenant, "s")
    assert (state.cursor, state.summary_count) == (3, 1)


async def test_gap_of_deleted_messages_may_be_skipped(memory, summaries, tenant):
    stored = await seed(memory, tenant, "s", 5)
    await memory.delete_by_ids(tenant, "s", [stored[0].id, stored[1].id])
    summary, cursor, _ = await summaries.save(tenant, "s", 3, 5, "what is left", {})
    assert cursor == 5 and summary.saved_message_count == 3


async def test_retry_of_the_same_save_is_deduplicated(memory, summaries, tenant, store):
    await seed(memory, tenant, "s", 3)
    first, _, _ = await summaries.save(tenant, "s", 1, 3, "same", {"k": 1})
    again, cursor, dedup = await summaries.save(tenant, "s", 1, 3, "same", {"k": 1})
    assert dedup and again.id == first.id and cursor == 3
    with pytest.raises(FailedPrecondition):
        await summaries.save(tenant, "s", 1, 3, "different text", {"k": 1})
    events = await store.read_events(tenant, 0, 1000)
    assert sum(e.type == EventType.SUMMARY_SAVED for e in events) == 1


async def test_racing_saves_never_both_advance_the_cursor(memory, summaries, tenant):
    await seed(memory, tenant, "s", 8)
    results = await asyncio.gather(
        *(summaries.save(tenant, "s", 1, 4 + i, f"writer {i}", {}) for i in range(4)), return_exceptions=True
    )
    winners = [r for r in results if not isinstance(r, BaseException)]
    losers = [r for r in results if isinstance(r, BaseException)]
    assert len(winners) == 1, results
    assert all(isinstance(r, FailedPrecondition) and r.reason == "SUMMARY_RANGE_OVERLAPS" for r in losers)
    state = await summaries.get_cursor(tenant, "s")
    assert state.summary_count == 1 and state.cursor == winners[0][0].to_seq
    listed, _ = await summaries.list_summaries(tenant, "s", 0, "")
    assert [s.id for s in listed] == [winners[0][0].id]


async def test_cursor_is_monotonic_across_restarts(memory, summaries, tenant, store_target):
    await seed(memory, tenant, "s", 6)
    await summaries.save(tenant, "s", 1, 4, "before restart", {})
    reopened = await store_target.open()  # a new process's view: nothing comes from memory
    try:
        again = Summaries(reopened, LIMITS)
        assert (await again.get_cursor(tenant, "s")).cursor == 4
        with pytest.raises(FailedPrecondition) as overlap:
            await again.save(tenant, "s", 3, 6, "would go backwards", {})
        assert overlap.value.reason == "SUMMARY_RANGE_OVERLAPS"
        _, cursor, _ = await again.save(tenant, "s", 5, 6, "after restart", {})
        assert cursor == 6
    finally:
        await reopened.close()
    assert (await summaries.get_cursor(tenant, "s")).cursor == 6


async def test_slices_stay_consistent_after_trim_delete_and_clear(memory, summaries, tenant):
    stored = await seed(memory, tenant, "s", 8)
    await summaries.save(tenant, "s", 1, 3, "a", {})
    await summaries.save(tenant, "s", 4, 6, "b", {})
    await memory.trim_history(tenant, "s", 2)  # archives seqs 1-6
    listed, _ = await summaries.list_summaries(tenant, "s", 0, "")
    assert [(s.coverage, s.present_message_count, s.archived_message_count) for s in listed] == [
        (Coverage.INTACT, 3, 3),
        (Coverage.INTACT, 3, 3),
    ]
    await memory.delete_by_ids(tenant, "s", [stored[0].id])
    await memory.delete_by_timestamps(tenant, "s", [m.timestamp for m in stored[3:6]])
    listed, _ = await summaries.list_summaries(tenant, "s", 0, "")
    assert [(s.coverage, s.present_message_count) for s in listed] == [
        (Coverage.PARTIALLY_DELETED, 2),
        (Coverage.DELETED, 0),
    ]
    # Clearing the session's messages keeps the cursor (seqs are never reused); clearing its
    # metadata removes the slices, whose text came from the conversation.
    await memory.clear(tenant, "s", [ClearTarget.MESSAGES])
    state = await summaries.get_cursor(tenant, "s")
    assert (state.cursor, state.latest.coverage) == (6, Coverage.DELETED)
    await memory.clear(tenant, "s", [ClearTarget.METADATA])
    state = await summaries.get_cursor(tenant, "s")
    assert (state.cursor, state.latest) == (6, None)
    assert (await summaries.list_summaries(tenant, "s", 0, ""))[0] == []
    await memory.save_messages(tenant, "s", [msg("fresh", 5000)])
    with pytest.raises(FailedPrecondition):
        await summaries.save(tenant, "s", 1, 9, "old range", {})
    _, cursor, _ = await summaries.save(tenant, "s", 7, 9, "new range", {})
    assert cursor == 9


async def test_summary_saved_events(memory, summaries, tenant, store):
    await seed(memory, tenant, "s", 2)
    after = (await store.event_bounds(tenant))[1]
    summary, _, _ = await summaries.save(tenant, "s", 1, 2, "x", {})
    events = await store.read_events(tenant, after, 100)
    saved = [e for e in events if e.type == EventType.SUMMARY_SAVED]
    assert len(saved) == 1 and saved[0].session_id == "s"
    assert saved[0].payload == {"summary_id": summary.id, "from_seq": 1, "to_seq": 2}
    assert all(e.type in (EventType.SUMMARY_SAVED, EventType.METADATA_CHANGED) for e in events)


async def test_tenants_never_see_each_other(memory, summaries, entries, tenant):
    other = tenant + "-other"
    await seed(memory, tenant, "s", 3)
    await seed(memory, other, "s", 3)
    await summaries.save(tenant, "s", 1, 3, "mine", {})
    assert (await summaries.get_cursor(other, "s")).cursor == 0
    assert (await summaries.list_summaries(other, "s", 0, ""))[0] == []
    _, cursor, _ = await summaries.save(other, "s", 1, 2, "theirs", {})
    assert cursor == 2 and (await summaries.get_cursor(tenant, "s")).latest.text == "mine"
    saved = await entries.save(tenant, "scope", "a private fact", [])
    assert (await entries.search(other, "scope", "private", 10))[0] == []
    assert await entries.forget(other, "scope", saved.entry.id) is False
    assert not (await entries.save(other, "scope", "a private fact", [])).deduplicated


async def test_a_vector_without_a_vector_store_is_refused_before_the_save(memory, summaries, tenant):
    await seed(memory, tenant, "s", 2)
    with pytest.raises(FailedPrecondition):
        await summaries.save(tenant, "s", 1, 2, "both", {}, [0.1, 0.2], "test:model")
    assert (await summaries.get_cursor(tenant, "s")).cursor == 0
    _, cursor, _ = await summaries.save(tenant, "s", 1, 2, "both", {})  # keywords need no store: nothing to index
    assert cursor == 2
