"""The index synchronizer (vectors/sync.py): the recall index follows the message store's event
log exactly, by message id, on every message backend and vector target (docs/VECTORS.md,
"The index synchronizer"). Real stores and real Qdrant; nothing mocked."""

from __future__ import annotations

import asyncio

import pytest

from memoryd.domain.limits import Limits
from memoryd.domain.memory import Memory
from memoryd.domain.models import ClearTarget, Message
from memoryd.domain.vectors import VectorPoint, VectorRecord
from memoryd.vectors.recall import VectorRecall
from memoryd.vectors.sync import Segment, indexed_messages
from tests.vectors.conftest import make_index, unit
from tests.vectors.index_state import difference, drained

MODEL = "test:sync"


def said(content: str, timestamp: int = 0) -> Message:
    return Message(role="user", content=content, timestamp=timestamp)


@pytest.fixture
async def vectors(target, tmp_path, store, tenant):
    vectors = VectorRecall(make_index(target, tmp_path), store)
    vectors.runtime.tenants = {tenant}  # the session's store holds other tests' tenants
    await vectors.open()
    yield vectors
    await vectors.close()


async def indexed(vectors: VectorRecall, tenant: str) -> set[str]:
    """Message ids the tenant's points index, once the log is applied; the index equals the store."""
    await vectors.runtime.sync_tenant(tenant)
    assert (await difference(vectors.indexer, tenant)).exact
    return {message_id for _, message_id in await indexed_messages(vectors.index, tenant)}


def test_a_message_appended_within_a_batch_is_new_whatever_rewrote_it():
    """A rewrite re-embeds only the dense points a message has; one appended in the same batch
    has none yet, so it is new: all its points (the embedder-outage test found it without)."""
    segment = Segment()
    segment.touch("s", [{"id": "saved-then-rewritten", "seq": 1}], rewrite=False)
    segment.touch("s", [{"id": "saved-then-rewritten", "seq": 1}, {"id": "rewritten", "seq": 2}], rewrite=True)
    segment.touch("s", [{"id": "rewritten-then-saved", "seq": 3}], rewrite=True)
    segment.touch("s", [{"id": "rewritten-then-saved", "seq": 4}], rewrite=False)
    assert segment.touched == {
        ("s", "saved-then-rewritten"): (1, False),
        ("s", "rewritten"): (2, True),
        ("s", "rewritten-then-saved"): (4, False),
    }


async def test_every_delete_path_removes_exactly_its_messages(vectors, store, tenant):
    """Messages of one SaveMessages call share their server-assigned timestamp; deleting some
    of them keeps the others' points (keyword points and the caller's vectors)."""
    memory = Memory(store, Limits(), hooks=vectors)

    async def batch(session: str, n: int) -> list[Message]:
        stored = (await memory.save_messages(tenant, session, [said(f"{session} word{i}") for i in range(n)])).messages
        assert len({m.timestamp for m in stored}) == 1
        return stored

    def ids(messages) -> set[str]:
        return {m.id for m in messages}

    a = await batch("a", 4)
    await vectors.upsert(tenant, [VectorPoint(tenant, unit(i), VectorRecord("a", m.timestamp, MODEL, m.id, "user"))
                                  for i, m in enumerate(a)])  # fmt: skip
    b, c, d, e = [await batch(s, 3) for s in "bcde"]
    assert await indexed(vectors, tenant) == ids(a + b + c + d + e)

    assert await memory.delete_by_ids(tenant, "a", [a[1].id]) == 1  # DeleteMessages
    left = ids(a + b + c + d + e) - {a[1].id}
    assert await indexed(vectors, tenant) == left
    models, _ = await vectors.index.stats(tenant)
    assert [(m.model_id, m.count) for m in models] == [(MODEL, 3)]  # the batch-mates' vectors stay

    popped, _ = await memory.pop_messages(tenant, "b", 1)  # PopMessages
    left -= ids(popped)
    assert await indexed(vectors, tenant) == left and len(popped) == 1

    stored, removed = await memory.replace_history(tenant, "c", [said("c replaced")])  # ReplaceHistory
    left = (left - ids(c)) | ids(stored)
    assert await indexed(vectors, tenant) == left and removed == 3

    stamped = (await memory.save_messages(tenant, "f", [said("f one", 1000), said("f two", 1000), said("f three", 2000)])).messages
    left |= ids(stamped)
    assert await memory.delete_by_timestamps(tenant, "f", [2000]) == 1  # DeleteMessagesByTimestamps
    left -= {stamped[2].id}
    assert await indexed(vectors, tenant) == left

    await memory.clear(tenant, "d", [ClearTarget.MESSAGES])  # ClearSession
    left -= ids(d)
    assert await indexed(vectors, tenant) == left

    await memory.clear(tenant, None, [ClearTarget.MESSAGES, ClearTarget.VECTORS])  # ClearAll
    assert await indexed(vectors, tenant) == set()


async def test_the_log_alone_indexes_and_deletes_when_no_hook_ran(vectors, store, tenant):
    """Writes through a Memory without hooks (another process, or one that died before its
    hook): the synchronizer finds every change in the log."""
    memory = Memory(store, Limits())
    saved = (await memory.save_messages(tenant, "s", [said(f"m{i}") for i in range(5)])).messages
    await memory.delete_by_ids(tenant, "s", [saved[0].id])
    await memory.update_message_content(tenant, "s", "m1", "", 10)  # rewritten into nothing searchable
    assert await indexed(vectors, tenant) == {m.id for m in saved[2:]}


async def test_an_import_in_batches_is_indexed_whole(vectors, store, tenant):
    """Many SaveMessages calls at once: nothing is dropped, whatever the synchronizer's pace."""
    calls, size = (30, 100) if type(store).__name__ == "SqliteStore" else (6, 100)  # SecantusDB is slow
    memory = Memory(store, Limits(), hooks=vectors)
    task = asyncio.create_task(vectors.runtime.run())
    try:
        for call in range(calls):
            await memory.save_messages(tenant, f"s{call % 3}", [said(f"import {call} {i}") for i in range(size)])
        await asyncio.wait_for(drained(vectors), 120)
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
    assert (await difference(vectors.indexer, tenant)).exact
    assert len(await indexed(vectors, tenant)) == calls * size


@pytest.mark.parametrize("target", ["edge"], indirect=True)
async def test_a_lost_index_folder_is_rebuilt_from_the_store(target, tmp_path, store, tenant):
    memory = Memory(store, Limits())
    saved = (await memory.save_messages(tenant, "s", [said(f"lost {i}") for i in range(20)])).messages
    first = VectorRecall(make_index(target, tmp_path / "a"), store)
    first.runtime.tenants = {tenant}
    await first.open()
    await first.runtime.sync_tenant(tenant)
    await first.close()
    # A fresh, empty index (the folder deleted) under the same store and cursor.
    second = VectorRecall(make_index(target, tmp_path / "b"), store)
    second.runtime.tenants = {tenant}
    await second.open()
    try:
        await second.runtime.sync_tenant(tenant)
        assert not second.positions.status(tenant).rebuilding
        assert await indexed(second, tenant) == {m.id for m in saved}
        stats = await second.stats(tenant)
        assert stats.keyword_points == 20 and stats.indexed_through_seq == stats.event_seq
    finally:
        await second.close()


@pytest.mark.parametrize("target", ["edge"], indirect=True)
async def test_a_keyword_setting_change_rebuilds(target, tmp_path, store, tenant):
    memory = Memory(store, Limits())
    await memory.save_messages(tenant, "s", [said(f"kept {i}") for i in range(5)])
    off = VectorRecall(make_index(target, tmp_path / "v"), store, index_message_keywords=False)
    off.runtime.tenants = {tenant}
    await off.open()
    await off.runtime.sync_tenant(tenant)
    assert (await off.stats(tenant)).keyword_points == 0
    await off.close()
    on = VectorRecall(make_index(target, tmp_path / "v"), store)
    on.runtime.tenants = {tenant}
    await on.open()
    try:
        await on.positions.load(tenant)
        assert on.positions.status(tenant).rebuilding  # another fingerprint
        await on.runtime.sync_tenant(tenant)
        assert (await on.stats(tenant)).keyword_points == 5 and not on.positions.status(tenant).rebuilding
    finally:
        await on.close()
