"""A data dir written by earlier releases (vectors in qdrant-client's local mode under
<data-dir>/qdrant) is migrated into Qdrant Edge on first start: every point arrives with its
id, vector and payload, the counts are logged, and the old folder goes only after the copy
was verified."""

from __future__ import annotations

import logging
import math
import random
import uuid

import numpy as np
from qdrant_client import QdrantClient
from qdrant_client import models as qm

from memoryd.v1 import vector_service_pb2 as pb
from memoryd.app import start
from memoryd.domain.vectors import VectorPoint, VectorRecord
from memoryd.storage.qdrant.migrate import unit
from memoryd.storage.qdrant.points import TENANT_MODEL_FIELD, payload_of, with_tenant_model
from tests.vectors.test_service import Client, server_config


def write_local_mode(folder, rng: random.Random) -> dict[str, dict]:
    """What the earlier release wrote: one collection per dimension, its payload layout,
    legacy points without a model id, two tenants. Returns {collection: {id: (vector, payload)}}."""
    client = QdrantClient(path=str(folder))
    written: dict[str, dict] = {}
    for dims, count in ((4, 1200), (16, 300)):
        name = f"memoryd_d{dims}"
        client.create_collection(name, vectors_config=qm.VectorParams(size=dims, distance=qm.Distance.COSINE),
                                 hnsw_config=qm.HnswConfigDiff(payload_m=16, m=0))
        structs = []
        for i in range(count):
            tenant = "default" if i % 3 else "other"
            model = None if i % 7 == 0 else f"test:model-{dims}"
            record = VectorRecord(f"s{i % 11}", 1000 + i, model, f"m{i}" if i % 5 else "", rng.choice(["user", "assistant"]),
                                  "qq", f"u{i % 4}", (f"u{(i + 1) % 4}",), f"speaker {i}", f"text {i}")
            point = VectorPoint(tenant, [rng.uniform(-1, 1) for _ in range(dims)], record)
            payload = payload_of(point.tenant, point.record, 500 + i)
            del payload[TENANT_MODEL_FIELD]  # (that release had no tenant-and-model key)
            structs.append(qm.PointStruct(id=point.id, vector=point.vector, payload=payload))
        client.upsert(name, points=structs)
        stored, offset = [], None
        while True:
            page, offset = client.scroll(name, limit=500, offset=offset, with_payload=True, with_vectors=True)
            stored += page
            if offset is None:
                break
        written[name] = {str(r.id): (r.vector, r.payload) for r in stored}
        assert len(written[name]) == count
    client.close()
    return written


async def test_a_local_mode_data_dir_moves_into_edge_point_by_point(tmp_path, caplog):
    old = tmp_path / "qdrant"
    written = write_local_mode(old, random.Random(3))

    with caplog.at_level(logging.INFO, logger="memoryd.storage.qdrant.migrate"):
        # In-process engine: the test reads the shards (retrieve) and the migration's log records.
        app = await start(server_config("edge", tmp_path, vector_engine_process=False))
    try:
        assert not old.exists()  # verified, then removed
        index = app.vectors.index
        for name, points in written.items():
            dims = int(name.rsplit("_d", 1)[1])
            found = {str(r.id): r for r in await index.retrieve(dims, list(points))}
            assert found.keys() == points.keys()
            for point_id, (vector, payload) in points.items():
                assert found[point_id].payload == with_tenant_model(payload)  # the key model filters match
                assert np.allclose(unit(found[point_id].vector), unit(vector), atol=1e-6)
        messages = [r.getMessage() for r in caplog.records]
        assert any("memoryd_d4: 1200 points copied and verified" in m for m in messages)
        assert any("1500 points in 2 collections" in m for m in messages)

        # And it serves them: the default tenant's stats and a search.
        client = Client(app.port)
        stats = await client.vectors.GetVectorStats(pb.GetVectorStatsRequest())
        assert sum(c.count for c in stats.collections) == sum(
            1 for points in written.values() for _, payload in points.values() if payload["tenant"] == "default"
        )
        response = await client.vectors.SearchMemory(pb.SearchMemoryRequest(
            query_vector=[1.0, 0.0, 0.0, 0.0], model_id="test:model-4", top_k=3, context_window=0))
        assert len(response.hits) == 3 and all(math.isfinite(h.semantic_score) for h in response.hits)
        await client.channel.close()
    finally:
        await app.stop(0)

    again = await start(server_config("edge", tmp_path))  # the second start has nothing to migrate
    await again.stop(0)


async def test_an_unreadable_old_folder_is_kept_and_vectors_still_work(tmp_path, caplog):
    old = tmp_path / "qdrant"
    old.mkdir()
    (old / "meta.json").write_text("{not json")
    with caplog.at_level(logging.ERROR, logger="memoryd.storage.qdrant.migrate"):
        # In-process engine: the test reads the shards (retrieve) and the migration's log records.
        app = await start(server_config("edge", tmp_path, vector_engine_process=False))
    try:
        assert (old / "meta.json").exists()
        assert any("the folder is kept" in r.getMessage() for r in caplog.records)
        client = Client(app.port)
        point = pb.VectorPoint(model_id="test:m", vector=[1, 0, 0, 0], session_id="s", message_id=uuid.uuid4().hex,
                               timestamp=1000, role="user", text="hi")
        await client.vectors.UpsertVectors(pb.UpsertVectorsRequest(points=[point]))
        assert await client.count() == 1
        await client.channel.close()
    finally:
        await app.stop(0)
