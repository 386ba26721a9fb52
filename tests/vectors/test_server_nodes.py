"""`--qdrant-url` listing several nodes of a cluster: a call that fails on one node moves the
next calls to the next node of the list (the call that failed answers StorageUnavailable, it is
not retried). Here the first "node" is a closed port and the second the test server, on the
server's REST port (one --qdrant-grpc-port serves every node, so this runs over REST). The
cluster itself, with a node killed, is tests/faults/test_qdrant_cluster.py."""

from __future__ import annotations

import pytest

from memoryd.domain.errors import StorageUnavailable
from memoryd.domain.vectors import VectorPoint, VectorRecord
from memoryd.storage.qdrant.server import QdrantServerIndex
from tests.conftest import free_port
from tests.qdrant_server import collection_prefix
from tests.vectors.conftest import unit


async def test_a_failed_call_moves_the_next_calls_to_the_next_node(qdrant):
    dead = f"http://127.0.0.1:{free_port()}"  # nothing listens there
    index = QdrantServerIndex(f"{dead}, {qdrant.url}", prefer_grpc=False, prefix=collection_prefix(), timeout=5)
    assert index.urls == [dead, qdrant.url]
    await index.open()
    try:
        with pytest.raises(StorageUnavailable):
            await index.ping()
        await index.ping()  # the next node
        point = VectorPoint("a", unit(0), VectorRecord("s", 1, "m", "m1", "user", text="x"))
        assert await index.upsert([point], 1) == [point.id]
        assert await index.has_point(4, point.id)
    finally:
        await index.close()


async def test_a_single_url_stays_on_its_node(qdrant):
    index = QdrantServerIndex(qdrant.url, prefer_grpc=False, prefix=collection_prefix())
    assert index.urls == [qdrant.url]
    await index.open()
    try:
        await index.ping()
        index._next_node(0)  # one node: nowhere else to go
        assert index._require() is index._clients[0]
    finally:
        await index.close()
