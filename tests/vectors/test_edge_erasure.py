"""Qdrant Edge erasure (storage/qdrant/edge.py, edge_build.py): a delete that removed points
makes its shard pair owe two rewrites from the live points; once both ran, no file of the
folder (shard WALs, segments, payload pages, the operation log) holds a deleted point's
text, while the kept points are all there and still found. An owed rewrite survives a
restart, and a rewrite killed between its renames leaves a standby the next one can use."""

from __future__ import annotations

import asyncio
import json
import random
from pathlib import Path

from memoryd.domain.vectors import VectorPoint, VectorRecord, VectorSelector
from memoryd.storage.qdrant import edge_build
from memoryd.storage.qdrant.edge import EdgeIndex
from tests.vectors.test_edge import MODEL, count, nearest, random_vector


def texts(rng: random.Random, session: str, marker: str, n: int) -> list[VectorPoint]:
    return [
        VectorPoint(
            "t",
            random_vector(rng),
            VectorRecord(session, 1000 + i, MODEL, f"{session}-{i}", "user", text=f"{marker} {i}"),
        )
        for i in range(n)
    ]


def files_holding(root: Path, needle: str) -> list[str]:
    return sorted(
        str(p.relative_to(root)) for p in root.rglob("*") if p.is_file() and needle.encode() in p.read_bytes()
    )


def owed(root: Path) -> dict[str, int]:
    return {p.parent.name: json.loads(p.read_text()).get("purge", 0) for p in root.glob("*/state.json")}


async def settled(index: EdgeIndex) -> None:
    async with asyncio.timeout(120):
        while index.erasure_pending():
            await asyncio.sleep(0.1)


def erasing_index(root: Path) -> EdgeIndex:
    return EdgeIndex(
        root, indexing_threshold_kb=1, rebuild_threshold_kb=1 << 30, maintenance_seconds=0.1, erase_seconds=0
    )


async def test_deleted_points_leave_no_byte_in_the_folder_and_the_kept_ones_stay(tmp_path):
    rng = random.Random(3)
    root = tmp_path / "vectors"
    index = erasing_index(root)
    await index.open()
    try:
        await index.upsert(texts(rng, "keep", "KEEPMARKER", 40), 1)
        await index.upsert(texts(rng, "gone", "GONEMARKER", 40), 1)
        await index.delete(VectorSelector("t", session_id="nothing-here"))  # removes nothing: owes nothing
        assert set(owed(root).values()) == {0}
        assert files_holding(root, "GONEMARKER")

        await index.delete(VectorSelector("t", session_id="gone"))
        assert index.erasure_pending()
        await settled(index)

        assert await count(index) == 40
        probe = texts(random.Random(3), "keep", "KEEPMARKER", 1)[0].vector  # the first kept point's vector
        assert (await nearest(index, probe, 1))[0] == "keep-0"
    finally:
        await index.close()
    assert files_holding(root, "GONEMARKER") == []
    assert files_holding(root, "KEEPMARKER")


async def test_an_owed_rewrite_survives_a_restart(tmp_path):
    rng = random.Random(4)
    root = tmp_path / "vectors"
    index = EdgeIndex(root, indexing_threshold_kb=1, rebuild_threshold_kb=1 << 30, maintenance_seconds=3600)
    await index.open()
    try:
        await index.upsert(texts(rng, "keep", "KEEPMARKER", 20), 1)
        await index.upsert(texts(rng, "gone", "GONEMARKER", 20), 1)
        await index.delete(VectorSelector("t", session_id="gone"))
    finally:
        await index.close()  # before any maintenance ran
    assert set(owed(root).values()) == {2}
    assert files_holding(root, "GONEMARKER")

    index = erasing_index(root)
    await index.open()
    try:
        await settled(index)
        assert await count(index) == 20
    finally:
        await index.close()
    assert set(owed(root).values()) == {0}
    assert files_holding(root, "GONEMARKER") == []


def test_a_rewrite_killed_between_its_renames_leaves_a_standby(tmp_path):
    folder = tmp_path / "pair"
    (folder / ("b" + edge_build.OLD_SUFFIX)).mkdir(parents=True)  # killed after the first rename
    (folder / ("b" + edge_build.OLD_SUFFIX) / "marker").write_text("old standby")
    (folder / ("a" + edge_build.PURGE_SUFFIX)).mkdir()  # and a half-written new one of the other
    edge_build._recover(folder, "b")
    edge_build._recover(folder, "a")
    assert (folder / "b" / "marker").read_text() == "old standby"
    assert sorted(p.name for p in folder.iterdir()) == ["b"]
