"""Local mode's in-process map (storage/qdrant/local_scope.py) must agree with what Qdrant
holds, also after concurrent upserts and deletes: it decides what deletes remove."""

from __future__ import annotations

import asyncio
import random

from memoryd.domain.models import now_ms
from memoryd.domain.vectors import Scope, VectorPoint, VectorRecord, VectorSelector
from memoryd.storage.qdrant.index import QdrantIndex
from tests.vectors.conftest import unit


def points(count: int) -> list[VectorPoint]:
    rng = random.Random(5)
    made = []
    for i in range(count):
        tenant = rng.choice(["a", "b"])
        record = VectorRecord(
            session_id=f"s{rng.randrange(4)}",
            timestamp=1000 + rng.randrange(50),
            model_id=rng.choice(["m1", "m2", None]),
            message_id=f"msg{i}" if i % 3 else "",
            sender_id=rng.choice(["u1", "u2"]),
            platform=rng.choice(["p1", "p2"]),
        )
        made.append(VectorPoint(tenant, unit(rng.uniform(0, 90)), record))
    return made


async def snapshot(index: QdrantIndex) -> dict:
    seen = {}
    for tenant in ("a", "b"):
        models, collections = await index.stats(tenant)
        seen[tenant] = (sorted((m.model_id or "", m.count) for m in models), [c.count for c in collections])
        for scope in (Scope(), Scope(session_id="s1"), Scope(platform="p2"), Scope(speaker_ids=("u1",))):
            found = await index.query(tenant, unit(30), scope, 1000)
            seen[(tenant, scope)] = sorted(c.point_id for c in found)
    return seen


async def test_the_map_agrees_with_qdrant_after_concurrent_writes(tmp_path):
    index = QdrantIndex(path=tmp_path / "qdrant")
    await index.open()
    batch = points(300)
    now = now_ms()
    writes = [index.upsert([p], now) for p in batch]
    deletes = [
        index.delete(VectorSelector("a", session_id="s1")),
        index.delete(VectorSelector("b", timestamps=(1003, 1004), message_ids=("msg7", "msg8"))),
        index.delete(VectorSelector("a", model_id="m2")),
        index.delete(VectorSelector("b", session_id="s2", indexed_before=now + 1)),
    ]
    order = writes + deletes
    random.Random(9).shuffle(order)
    await asyncio.gather(*order)
    mapped = await snapshot(index)
    await index.close()

    truth = QdrantIndex(path=tmp_path / "qdrant", local_scoring=False)  # Qdrant's own filters
    await truth.open()
    try:
        assert await snapshot(truth) == mapped
    finally:
        await truth.close()
