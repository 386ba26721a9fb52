"""Qdrant Edge specifics (storage/qdrant/edge.py): index builds in the builder process and the
swap to the rebuilt standby, with searches and writes going on throughout; the operation
log across restarts. The vector-index cases common to both adapters are in
test_index_conformance.py."""

from __future__ import annotations

import asyncio
import random
import time

import pytest

from memoryd.domain.vectors import (
    IndexQuery, KeywordPoint, PointFilter, Scope, VectorPoint, VectorRecord, VectorSelector,
)
from memoryd.storage.qdrant.points import KEYWORD_SPACE
from memoryd.storage.qdrant.edge import EdgeIndex

DIMS = 32
MODEL = "test:edge"


def random_vector(rng: random.Random) -> list[float]:
    return [rng.gauss(0, 1) for _ in range(DIMS)]


def points(rng: random.Random, count: int, session: str, start: int = 0) -> list[VectorPoint]:
    return [
        VectorPoint("t", random_vector(rng), VectorRecord(session, 1000 + start + i, MODEL, f"{session}-{start + i}", "user"))
        for i in range(count)
    ]


def small_index(tmp_path, **overrides) -> EdgeIndex:
    # Tiny thresholds: every build indexes (HNSW) what it gets; no background builds.
    settings = dict(indexing_threshold_kb=1, rebuild_threshold_kb=1 << 30, maintenance_seconds=3600)
    settings.update(overrides)
    return EdgeIndex(tmp_path / "vectors", **settings)


async def nearest(index: EdgeIndex, vector: list[float], limit: int = 10, session: str = "") -> list[str]:
    result = await index.query(IndexQuery(PointFilter("t", Scope(session_id=session), model_id=MODEL), limit, vector))
    return [c.record.message_id for c in result.candidates]


async def count(index: EdgeIndex) -> int:
    models, _ = await index.stats("t")
    return sum(m.count for m in models)


async def test_a_rebuild_swaps_in_an_indexed_standby_while_searches_and_writes_go_on(tmp_path):
    rng = random.Random(1)
    index = small_index(tmp_path)
    await index.open()
    try:
        for batch in range(4):
            await index.upsert(points(rng, 500, "base", batch * 500), 1)
        assert await index.indexing(DIMS) == (2000, 0)  # all in the appendable, unindexed segment
        probe = random_vector(rng)
        before = await nearest(index, probe)

        build = asyncio.create_task(index.rebuild(DIMS))
        written = 0
        searches = 0
        while not build.done():  # the server keeps serving while the builder works
            await index.upsert(points(rng, 20, "during", written), 2)
            written += 20
            assert (await nearest(index, probe, session="base")) == before
            searches += 1
            await asyncio.sleep(0.01)
        assert await build
        assert searches > 0
        await index.delete(VectorSelector("t", session_id="during", message_ids=("during-0",)))

        total, indexed = await index.indexing(DIMS)
        assert total == 2000 + written - 1 and indexed >= 2000  # the rebuilt shard serves, indexed
        assert await nearest(index, probe, session="base") == before
        assert await count(index) == 2000 + written - 1

        # The other shard of the pair (the old serving one) catches up on its build:
        # nothing written during the first build or after it is lost.
        assert await index.rebuild(DIMS)
        assert await index.indexing(DIMS) == (2000 + written - 1, 2000 + written - 1)
        assert await count(index) == 2000 + written - 1
        assert await nearest(index, probe, session="base") == before
        assert "during-0" not in await nearest(index, probe, limit=5000, session="during")
    finally:
        await index.close()


async def test_a_killed_build_changes_nothing_and_the_next_one_succeeds(tmp_path):
    rng = random.Random(2)
    index = small_index(tmp_path)
    await index.open()
    try:
        await index.upsert(points(rng, 1500, "s"), 1)
        probe = random_vector(rng)
        before = await nearest(index, probe)
        build = asyncio.create_task(index.rebuild(DIMS))
        pair = index._pairs[DIMS]
        while pair.builder is None:
            await asyncio.sleep(0.005)
        pair.builder.kill()
        assert await build is False
        assert await nearest(index, probe) == before and await count(index) == 1500
        assert await index.rebuild(DIMS)
        assert await nearest(index, probe) == before and await count(index) == 1500
    finally:
        await index.close()


async def test_writes_survive_a_restart_before_and_after_a_swap(tmp_path):
    rng = random.Random(3)
    index = small_index(tmp_path)
    await index.open()
    await index.upsert(points(rng, 300, "s"), 1)
    assert await index.rebuild(DIMS)
    await index.upsert(points(rng, 200, "s", 300), 2)
    await index.delete(VectorSelector("t", message_ids=("s-0", "s-450")))
    await index.close()

    again = small_index(tmp_path)
    await again.open()
    try:
        assert await count(again) == 498
        assert await again.rebuild(DIMS)  # the standby replays the log kept across the restart
        assert await count(again) == 498
        assert not await again.has_point(DIMS, points(random.Random(3), 1, "s")[0].id)
    finally:
        await again.close()


async def test_keyword_points_survive_a_restart_before_and_after_a_swap(tmp_path):
    def note(i: int, text: str) -> KeywordPoint:
        return KeywordPoint("t", VectorRecord("s", 1000 + i, None, f"k-{i}", "user", text=text))

    async def found(index: EdgeIndex, text: str) -> list[str]:
        result = await index.query(IndexQuery(PointFilter("t"), 10, text=text))
        return [c.record.message_id for c in result.candidates]

    index = small_index(tmp_path)
    await index.open()
    await index.upsert_keywords([note(i, "a lost umbrella" if i == 3 else f"filler note number {i}") for i in range(50)], 1)
    await index.upsert_keywords([note(50, "we booked the ferry to Naxos"), note(51, "我们去杭州西湖")], 1)
    assert await index.rebuild(KEYWORD_SPACE)
    await index.upsert_keywords([note(52, "the ferry back leaves at noon")], 2)
    await index.delete(VectorSelector("t", message_ids=("k-3",)))
    await index.close()

    again = small_index(tmp_path)
    await again.open()
    try:
        for _ in range(2):  # as reopened, then after the standby replayed the log kept across the restart
            assert sorted(await found(again, "ferry")) == ["k-50", "k-52"]
            assert await found(again, "西湖") == ["k-51"]
            assert await found(again, "umbrella") == []  # deleted before the restart
            assert await again.rebuild(KEYWORD_SPACE)
    finally:
        await again.close()


async def test_background_builds_start_past_the_threshold(tmp_path):
    rng = random.Random(4)
    # 200 points of 32 float32 = 25 KB: past a 16 KB threshold.
    index = small_index(tmp_path, rebuild_threshold_kb=16, maintenance_seconds=0.05)
    await index.open()
    try:
        await index.upsert(points(rng, 200, "s"), 1)
        for _ in range(600):
            if (await index.indexing(DIMS))[1] == 200:
                break
            await asyncio.sleep(0.1)
        assert await index.indexing(DIMS) == (200, 200)
    finally:
        await index.close()


@pytest.mark.parametrize("threads", [1, 2])
async def test_calls_queued_past_their_deadline_never_run(tmp_path, threads):
    from memoryd.domain import deadline
    from memoryd.domain.errors import StorageUnavailable

    index = small_index(tmp_path, threads=threads)
    await index.open()
    try:
        await index.upsert(points(random.Random(5), 10, "s"), 1)
        ran = []
        blockers = [index._run(time.sleep, 0.5, budget=None) for _ in range(threads)]  # every thread busy
        started = asyncio.gather(*blockers)
        await asyncio.sleep(0.05)
        token = deadline.set_remaining(0.1)
        try:
            with pytest.raises(StorageUnavailable):
                await index._run(lambda: ran.append(1))
        finally:
            deadline.reset(token)
        await started
        await asyncio.sleep(0.05)
        assert ran == []
    finally:
        await index.close()


async def test_reads_on_the_loop_answer_as_the_pool_and_keep_the_deadline(tmp_path):
    """The engine process's setting (edge_process.py): reads run on the loop's thread."""
    from memoryd.domain import deadline
    from memoryd.domain.errors import StorageUnavailable

    rng = random.Random(7)
    probe = random_vector(rng)
    found = {}
    for on_loop in (False, True):
        index = small_index(tmp_path, reads_on_loop=on_loop)
        await index.open()
        try:
            if not on_loop:
                await index.upsert(points(rng, 50, "s"), 1)
            found[on_loop] = (await nearest(index, probe), await count(index))
            ran = []
            token = deadline.set_remaining(0.0)
            try:
                with pytest.raises(StorageUnavailable):
                    await index._read(DIMS, lambda shard: ran.append(1))
            finally:
                deadline.reset(token)
            assert ran == [] or not on_loop  # (a pool thread may start it before the timeout fires)
            with pytest.raises(StorageUnavailable, match="ValueError"):
                await index._read(DIMS, lambda shard: int("not a number"))
        finally:
            await index.close()
    assert found[True] == found[False] and found[True][1] == 50


async def test_a_growing_log_starts_a_build_even_when_few_points_wait(tmp_path):
    # The same 10 points rewritten again and again: few unindexed points, a growing log.
    index = small_index(tmp_path, rebuild_threshold_kb=16, maintenance_seconds=0.05)
    log_file = tmp_path / "vectors" / "memoryd_d32" / "oplog"
    await index.open()
    try:
        rng = random.Random(6)
        largest = 0
        for _ in range(120):
            await index.upsert(points(rng, 10, "s"), 1)
            largest = max(largest, log_file.stat().st_size)
        assert largest >= 16 * 16 * 1024  # the log passed 16x the threshold
        for _ in range(600):
            if log_file.stat().st_size < largest and (await index.indexing(DIMS))[1] == 10:
                break
            await asyncio.sleep(0.1)
        assert log_file.stat().st_size < largest  # a build ran and the log started over
        assert await count(index) == 10
    finally:
        await index.close()


def test_keyword_writes_upsert_new_texts_and_rewrite_only_the_changed_payload_of_the_same_text():
    from memoryd.storage.qdrant import edge_engine as engine

    base = {"tenant": "t", "session_id": "s", "timestamp": 1, "indexed_at": 1, "text": "same words"}
    stored = {
        "same": {**base, "platform": "qq", "role": "user"},
        "other-text": {**base, "text": "old words"},
        "gone-field": {**base, "sender_id": "alice", "mentioned_ids": ["bob"]},
        "unchanged": {**base, "indexed_at": 2},
    }
    rows = [
        ("new", "fresh words", {**base, "text": "fresh words"}),
        ("same", "same words", {**base, "indexed_at": 2, "platform": "qq", "role": "user"}),
        ("other-text", "new words", {**base, "text": "new words"}),
        ("gone-field", "same words", {**base, "indexed_at": 2, "mentioned_ids": ["bob", "carol"]}),
        ("unchanged", "same words", {**base, "indexed_at": 2}),
        ("same", "same words", {**base, "indexed_at": 2, "platform": "discord", "role": "user"}),  # the last row wins
    ]
    upserts, ops = engine.keyword_writes(rows, stored)
    assert [(i, v, pl["text"]) for i, v, pl in upserts] == [
        ("new", engine.keywords.document_vector("fresh words"), "fresh words"),
        ("other-text", engine.keywords.document_vector("new words"), "new words"),
    ]
    assert ops[0] == engine.Upsert.of(upserts)
    assert sorted(ops[1:], key=repr) == sorted([
        engine.SetPayload(("same",), {"indexed_at": 2, "platform": "discord"}),
        engine.SetPayload(("gone-field",), {"indexed_at": 2, "mentioned_ids": ["bob", "carol"]}),
        engine.DeletePayload(("gone-field",), ("sender_id",)),
    ], key=repr)  # "unchanged" needs no write at all


async def test_rewritten_keyword_payloads_replay_after_a_crash_even_past_a_later_delete(tmp_path):
    """The serving shard after kill -9 holds every write (its WAL) and replays the operation
    log over it: a payload rewrite of a point a later write deleted must apply as a no-op.
    The builder replays the same log into the standby."""
    import json

    def note(i: int, platform: str, text: str = "") -> KeywordPoint:
        return KeywordPoint("t", VectorRecord("s", 1000 + i, None, f"k-{i}", "user", platform, text=text or f"ferry note {i}"))

    async def stored(index: EdgeIndex) -> dict[str, dict]:
        records = await index.retrieve(KEYWORD_SPACE, [note(i, "").id for i in range(3)])
        return {r.payload["message_id"]: {k: v for k, v in r.payload.items() if k != "indexed_at"} for r in records}

    index = small_index(tmp_path)
    await index.open()
    await index.upsert_keywords([note(i, "qq") for i in range(3)], 1)
    await index.upsert_keywords([note(0, "discord"), note(1, ""), note(2, "qq", "a new text")], 2)
    await index.delete(VectorSelector("t", message_ids=("k-1",)))
    before = await stored(index)
    await index.close()
    state = tmp_path / "vectors" / "memoryd_keywords" / "state.json"
    state.write_text(json.dumps({**json.loads(state.read_text()), "serving_seq": 1}))  # kill -9 after a swap that followed the first write

    again = small_index(tmp_path)
    await again.open()
    try:
        assert await stored(again) == before
        assert before["k-0"]["platform"] == "discord" and "k-1" not in before and before["k-2"]["text"] == "a new text"
        result = await again.query(IndexQuery(PointFilter("t", Scope(platform="discord")), 10, text="ferry"))
        assert [c.record.message_id for c in result.candidates] == ["k-0"]
        assert await again.rebuild(KEYWORD_SPACE)  # the builder replays the same log into the standby
        assert await stored(again) == before
    finally:
        await again.close()
