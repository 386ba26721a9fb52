"""The collection layout flags (--qdrant-shards, --qdrant-replication-factor,
--qdrant-write-consistency) on a real Qdrant server: the numbers set reach the collections
memoryd creates, 0 leaves them to the server, a collection that exists keeps its layout (a
warning names what differs), and a write consistency above the copies is refused at start.
The cluster itself (copies on other nodes, a node lost) is tests/faults/test_qdrant_cluster.py."""

from __future__ import annotations

import logging

import pytest

from memoryd import config
from memoryd.domain.vectors import VectorPoint, VectorRecord
from memoryd.storage.qdrant.server import CollectionLayout, QdrantServerIndex
from tests.qdrant_server import QdrantEndpoint, collection_prefix
from tests.vectors.conftest import unit


async def _created(qdrant: QdrantEndpoint, prefix: str, layout: CollectionLayout | None) -> tuple[int, int, int]:
    """Write one point through an index with `layout`; the dense collection's numbers."""
    index = QdrantServerIndex(qdrant.url, grpc_port=qdrant.grpc_port, prefix=prefix, layout=layout)
    await index.open()
    try:
        await index.upsert([VectorPoint("a", unit(0), VectorRecord("s", 1, "m", "m1", "user", text="x"))], 1)
        params = (await index._require().get_collection(index.collection(4))).config.params
        return params.shard_number, params.replication_factor, params.write_consistency_factor
    finally:
        await index.close()


async def test_the_layout_set_reaches_new_collections_and_zero_leaves_the_servers_default(qdrant):
    assert await _created(qdrant, collection_prefix(), CollectionLayout(shards=2)) == (2, 1, 1)
    assert await _created(qdrant, collection_prefix(), None) == (1, 1, 1)  # one node: one shard


async def test_a_collection_that_exists_keeps_its_layout_and_the_difference_is_logged(qdrant, caplog):
    prefix = collection_prefix()
    await _created(qdrant, prefix, CollectionLayout(shards=2))
    with caplog.at_level(logging.WARNING, logger="memoryd.storage.qdrant.server"):
        assert await _created(qdrant, prefix, CollectionLayout(shards=3)) == (2, 1, 1)
    [warning] = [r.getMessage() for r in caplog.records if "keeps its layout" in r.getMessage()]
    assert "'shard_number': (3, 2)" in warning


def test_a_write_consistency_above_the_copies_is_refused():
    with pytest.raises(ValueError, match="--qdrant-write-consistency"):
        config.load(environ={"MEMORYD_QDRANT_REPLICATION_FACTOR": "2", "MEMORYD_QDRANT_WRITE_CONSISTENCY": "3"})
    loaded = config.load(environ={"MEMORYD_QDRANT_WRITE_CONSISTENCY": "2"})  # copies left to the server
    assert (loaded.qdrant_replication_factor, loaded.qdrant_write_consistency) == (0, 2)
