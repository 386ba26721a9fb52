"""VectorIndex over a Qdrant server through qdrant-client's AsyncQdrantClient (gRPC preferred,
API key). One collection per dimension (`<prefix>_d<dim>`); several memoryd replicas may
share it. Every failure of the server surfaces as StorageUnavailable except a full disk
(Qdrant says "No space left on device"): StorageFull.

On a Qdrant cluster the collections memoryd creates get CollectionLayout's shard count,
replication factor and write consistency (docs/SCALING.md, "A Qdrant cluster"); tenants share
them, the tenant payload index marked `is_tenant` (Qdrant's layout for multitenancy: points
of one tenant stored together, one HNSW graph per tenant). memoryd talks to one node at a
time, which routes each call to the shards' replicas on the other nodes; the url may list
several nodes (comma-separated, one gRPC port for all): a call the node does not answer
(no connection, the connection lost, no answer in time) moves the next calls to the next node
of the list.

The url ":memory:" runs qdrant-client's own in-process implementation of the server API
instead (not a store: nothing is kept). The tests use it to run this adapter's code
against the same cases as Qdrant Edge where no server is at hand.
"""

from __future__ import annotations

import asyncio
import logging
import warnings
from collections.abc import Awaitable
from dataclasses import dataclass
from typing import Any, TypeVar, cast

from qdrant_client import AsyncQdrantClient
from qdrant_client import models as qm

from memoryd.domain import deadline, keywords
from memoryd.domain.errors import StorageFull, StorageUnavailable
from memoryd.storage.qdrant import points as p
from memoryd.storage.qdrant.base import Found, QdrantIndexBase, Row, Search, Vector, no_space

log = logging.getLogger(__name__)

T = TypeVar("T")

MEMORY = ":memory:"
# A collection new to this process waits at most this long (and never past its caller's
# deadline) for its replicas to be Active on a cluster, polling this often.
SETTLE_SECONDS = 5.0
SETTLE_POLL_SECONDS = 0.1


def to_filter(cond: p.All) -> qm.Filter:
    return qm.Filter(
        must=[_condition(c) for c in cond.must] or None,
        should=[_condition(c) for c in cond.should] or None,
        must_not=[_condition(c) for c in cond.must_not] or None,
    )


def _condition(cond: p.Cond) -> qm.Condition:
    match cond:
        case p.Match(key, value):
            return qm.FieldCondition(key=key, match=qm.MatchValue(value=value))
        case p.AnyOf(key, values):
            return qm.FieldCondition(key=key, match=qm.MatchAny(any=cast(list[str] | list[int], list(values))))
        case p.Below(key, lt):
            return qm.FieldCondition(key=key, range=qm.Range(lt=lt))
        case p.HasId(ids):
            return qm.HasIdCondition(has_id=list(ids))
        case p.Missing(key):
            return qm.IsEmptyCondition(is_empty=qm.PayloadField(key=key))
        case p.All():
            return to_filter(cond)
    raise TypeError(f"unknown condition {cond!r}")


# What gRPC itself says when a call never reached a server or lost its connection (a node
# that answers with an error of its own, e.g. a lost peer's shard unavailable, is alive).
GRPC_TRANSPORT_FAILURES = (
    "failed to connect to all addresses",
    "socket closed",
    "connection reset",
    "broken pipe",
    "stream removed",
    "goaway",
    "keepalive",
)


def unreached(error: BaseException) -> bool:
    """The node did not answer the call: no connection, the connection lost, or no answer in
    time. False when it answered with an error (gRPC status or HTTP status of its own)."""
    if isinstance(error, TimeoutError):
        return True
    code = getattr(error, "code", None)
    if callable(code):  # grpc.RpcError
        name = getattr(code(), "name", "")
        details = str(getattr(error, "details", lambda: "")() or "").lower()
        if name == "DEADLINE_EXCEEDED":
            return details == "deadline exceeded"  # gRPC's own words; Qdrant's timeouts say more
        return name == "UNAVAILABLE" and any(words in details for words in GRPC_TRANSPORT_FAILURES)
    return getattr(error, "status_code", None) is None  # REST: no HTTP answer at all


def _status_of(error: Exception) -> str:
    """The failure's kind and status: a gRPC code (gRPC), an HTTP status (REST)."""
    code = getattr(error, "code", None)
    if callable(code):  # grpc.RpcError
        code = getattr(code(), "name", code())
    status = getattr(error, "status_code", None)  # qdrant_client's UnexpectedResponse
    detail = code if code is not None else (f"HTTP {status}" if status is not None else None)
    return type(error).__name__ + (f" {detail}" if detail is not None else "")


def _vector(vector: Vector) -> Any:
    """A point's vector: the default dense vector, or the named BM25 sparse one."""
    if isinstance(vector, keywords.Sparse):
        return {p.KEYWORD_VECTOR: qm.SparseVector(indices=vector.indices, values=vector.values)}
    return list(vector)


def _request(search: Search) -> qm.QueryRequest:
    sparse = isinstance(search.vector, keywords.Sparse)
    corpus = search.idf_corpus
    return qm.QueryRequest(
        query=_vector(search.vector)[p.KEYWORD_VECTOR] if sparse else _vector(search.vector),
        using=p.KEYWORD_VECTOR if sparse else None,
        filter=to_filter(search.filter),
        limit=search.limit,
        score_threshold=search.min_score,
        with_payload=search.payload,
        # Per-tenant IDF (Qdrant 1.19+): another tenant's words never change a tenant's scores.
        params=qm.SearchParams(idf=qm.IdfCorpusParams(corpus=to_filter(corpus))) if corpus is not None else None,
    )


@dataclass(frozen=True, slots=True)
class CollectionLayout:
    """How a collection memoryd creates is spread over a Qdrant cluster; 0 leaves a number to
    the server (its defaults: one shard per node at creation, 1 copy, 1 acknowledgement).
    Fixed when the collection is created: a collection that exists is left as it is."""

    shards: int = 0  # shard_number
    replication_factor: int = 0  # copies of each shard, on different nodes
    write_consistency: int = 0  # copies that must apply a write before it is acknowledged

    def differences(self, params: qm.CollectionParams) -> dict[str, tuple[int, int | None]]:
        """(wanted, found) of each set number that an existing collection's params differ in."""
        pairs = {
            "shard_number": (self.shards, params.shard_number),
            "replication_factor": (self.replication_factor, params.replication_factor),
            "write_consistency_factor": (self.write_consistency, params.write_consistency_factor),
        }
        return {key: pair for key, pair in pairs.items() if pair[0] > 0 and pair[0] != pair[1]}


class QdrantServerIndex(QdrantIndexBase):
    def __init__(
        self,
        url: str,
        *,
        api_key: str = "",
        prefer_grpc: bool = True,
        grpc_port: int = 6334,
        prefix: str = "memoryd",
        timeout: float = 5.0,
        layout: CollectionLayout | None = None,
    ) -> None:
        super().__init__(prefix)
        self.layout = layout or CollectionLayout()
        self.url = url
        self.api_key = api_key
        self.prefer_grpc = prefer_grpc
        self.grpc_port = grpc_port
        self.timeout = timeout
        self.urls = [u.strip() for u in url.split(",") if u.strip()] if url != MEMORY else [url]
        self._clients: list[AsyncQdrantClient] = []  # one per node of `urls`
        self._current = 0  # the node calls go to
        self._ready: set[int] = set()  # spaces whose collection exists with its indexes
        self._create_lock = asyncio.Lock()

    @property
    def shared(self) -> bool:
        return True  # several memoryd replicas may share the collections

    @property
    def target(self) -> str:
        return self.url

    # -- lifecycle -------------------------------------------------------------------
    async def open(self) -> None:
        self._current = 0
        self._ready.clear()
        if self.url == MEMORY:
            self._clients = [AsyncQdrantClient(location=MEMORY)]
            return
        self._clients = [
            AsyncQdrantClient(
                url=url,
                api_key=self.api_key or None,
                prefer_grpc=self.prefer_grpc,
                grpc_port=self.grpc_port,
                timeout=max(1, int(self.timeout)),
                # The check is a blocking request in the constructor; startup must not wait
                # for (or fail on) an unreachable Qdrant: the event log keeps the index's work.
                check_compatibility=False,
            )
            for url in self.urls
        ]

    async def close(self) -> None:
        clients, self._clients = self._clients, []
        for client in clients:
            await client.close()

    async def ping(self) -> None:
        await self._call(self._require().get_collections())

    def _require(self) -> AsyncQdrantClient:
        if not self._clients:
            raise StorageUnavailable("vector store is closed", reason="VECTOR_STORE_UNAVAILABLE")
        return self._clients[self._current]

    def _next_node(self, failed: int) -> None:
        """After node `failed` did not answer a call: later calls go to the next node of the
        list (once for the calls that failed together)."""
        if len(self._clients) > 1 and self._current == failed:
            self._current = (failed + 1) % len(self._clients)
            log.warning(
                "qdrant node %s failed a call; the next calls go to %s", self.urls[failed], self.urls[self._current]
            )

    async def _call(self, awaitable: Awaitable[T]) -> T:
        """Bound by the caller's deadline; any vector store failure becomes StorageUnavailable.
        `awaitable` is a call on `_require()`'s client, made just before (no await between)."""
        node = self._current
        try:
            async with asyncio.timeout(deadline.remaining(self.timeout)):
                return await awaitable
        except (StorageUnavailable, asyncio.CancelledError):
            raise
        except Exception as error:  # noqa: BLE001 - transport, server and closed-client errors alike
            # Qdrant's own words may quote a request; they stay at debug, the status goes up.
            log.debug("qdrant call failed: %r", error)
            if unreached(error):
                self._next_node(node)
            if no_space(error):
                raise StorageFull(f"vector store: no space left ({_status_of(error)})", store="vectors") from error
            raise StorageUnavailable(
                f"vector store unavailable ({_status_of(error)})", reason="VECTOR_STORE_UNAVAILABLE"
            ) from error

    # -- primitives ------------------------------------------------------------------
    async def dimensions(self) -> list[int]:
        response = await self._call(self._require().get_collections())
        return p.dimensions_of(self.prefix, [c.name for c in response.collections])

    async def _exists(self, space: int) -> bool:
        if space in self._ready:
            return True
        return await self._call(self._require().collection_exists(self.collection(space)))

    async def _ensure(self, space: int) -> None:
        if space in self._ready:
            return
        async with self._create_lock:
            if space in self._ready:
                return
            client, name = self._require(), self.collection(space)
            if not await self._call(client.collection_exists(name)):
                if space == p.KEYWORD_SPACE:
                    vectors: Any = {}
                    sparse = {p.KEYWORD_VECTOR: qm.SparseVectorParams(modifier=qm.Modifier.IDF)}
                else:
                    vectors, sparse = qm.VectorParams(size=space, distance=qm.Distance.COSINE), None
                try:
                    await self._call(
                        client.create_collection(
                            name,
                            vectors_config=vectors,
                            sparse_vectors_config=sparse,
                            shard_number=self.layout.shards or None,
                            replication_factor=self.layout.replication_factor or None,
                            write_consistency_factor=self.layout.write_consistency or None,
                            hnsw_config=qm.HnswConfigDiff(
                                m=p.HNSW_M,
                                payload_m=p.HNSW_PAYLOAD_M,
                                ef_construct=p.HNSW_EF_CONSTRUCT,
                                full_scan_threshold=p.FULL_SCAN_THRESHOLD_KB,
                            ),
                        )
                    )
                except StorageUnavailable:
                    # Another replica may have created it first.
                    if not await self._call(client.collection_exists(name)):
                        raise
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # ":memory:" warns that payload indexes have no effect
                await self._ensure_indexes(name, space)
            await self._settled(name)
            self._ready.add(space)
            log.info("vector collection ready: %s", name)

    async def _settled(self, name: str) -> None:
        """Wait until every replica of the collection is Active, within SETTLE_SECONDS and the
        caller's deadline, then go on either way. A Qdrant 1.19 cluster node was seen to answer
        batch queries with no results at all in a new collection's first seconds (fewer once
        its creator waits for this; readers that find it made meanwhile do not wait)."""
        if self.url == MEMORY:
            return
        client = self._require()

        async def active() -> None:
            while True:
                info = await client.collection_cluster_info(name)
                states = [r.state for r in info.local_shards] + [r.state for r in info.remote_shards]
                if all(state == qm.ReplicaState.ACTIVE for state in states):
                    return
                await asyncio.sleep(SETTLE_POLL_SECONDS)

        try:
            async with asyncio.timeout(min(SETTLE_SECONDS, deadline.remaining(self.timeout))):
                await self._call(active())
        except (TimeoutError, StorageUnavailable):
            log.info("vector collection %s: not every replica is Active yet", name)

    async def _ensure_indexes(self, name: str, space: int) -> None:
        """The space's payload indexes (points.indexed_fields); those no longer wanted (a
        collection written by an earlier release) are dropped."""
        client = self._require()
        wanted = p.indexed_fields(space)
        info = await self._call(client.get_collection(name))
        differences = self.layout.differences(info.config.params)
        if differences:
            # Shards are fixed at creation; copies change through Qdrant's cluster API.
            log.warning("vector collection %s keeps its layout (wanted, found): %s", name, differences)
        present = set(info.payload_schema or {})
        for key in sorted(present - wanted):
            await self._call(client.delete_payload_index(name, key))
        await self._call(
            client.create_payload_index(
                name,
                p.TENANT_FIELD,
                field_schema=qm.KeywordIndexParams(type=qm.KeywordIndexType.KEYWORD, is_tenant=True),
            )
        )
        for key in p.keyword_fields(space):
            if key == p.TENANT_MODEL_FIELD and key not in present:
                await self._backfill_tenant_model(space)
            await self._index(
                name,
                key,
                qm.KeywordIndexParams(type=qm.KeywordIndexType.KEYWORD, enable_hnsw=False),
                qm.PayloadSchemaType.KEYWORD,
            )

    async def _backfill_tenant_model(self, space: int) -> None:
        """points.tenant_model_backfill on this collection (the index, created after it,
        marks it done)."""
        steps = p.tenant_model_backfill()
        answer: Any = None  # what the step asked for: a count, facet values, or nothing
        while True:
            try:
                step = steps.send(answer)
            except StopIteration:
                return
            match step:
                case p.Count(flt):
                    answer = await self._count(space, flt)
                case p.Facet(key, flt):
                    answer = [str(value) for value, _ in await self._facet(space, key, flt)]
                case p.SetPayloadWhere(flt, payload):
                    await self._call(
                        self._require().set_payload(
                            self.collection(space), payload=payload, points=to_filter(flt), wait=True
                        )
                    )
                    answer = None

    async def _index(self, collection: str, key: str, params: Any, plain: qm.PayloadSchemaType) -> None:
        client = self._require()
        try:
            await self._call(client.create_payload_index(collection, key, field_schema=params))
        except StorageUnavailable:
            # Servers older than `enable_hnsw` refuse the parameters: a plain index then.
            await self._call(client.create_payload_index(collection, key, field_schema=plain))

    async def _upsert(self, space: int, points: list[Row]) -> None:
        structs = [qm.PointStruct(id=i, vector=_vector(v), payload=payload) for i, v, payload in points]
        await self._call(self._require().upsert(self.collection(space), points=structs, wait=True))

    async def _count(self, space: int, flt: p.All) -> int:
        found = await self._call(self._require().count(self.collection(space), count_filter=to_filter(flt), exact=True))
        return found.count

    async def _delete(self, space: int, flt: p.All) -> None:
        await self._call(
            self._require().delete(
                self.collection(space), points_selector=qm.FilterSelector(filter=to_filter(flt)), wait=True
            )
        )

    async def _facet(self, space: int, key: str, flt: p.All) -> list[tuple[Any, int]]:
        response = await self._call(
            self._require().facet(
                self.collection(space), key=key, facet_filter=to_filter(flt), limit=p.FACET_LIMIT, exact=True
            )
        )
        return [(hit.value, hit.count) for hit in response.hits]

    async def _search(self, space: int, searches: list[Search]) -> list[list[Found]]:
        requests = [_request(s) for s in searches]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # ":memory:" warns that search params other than idf have no effect
            responses = await self._call(self._require().query_batch_points(self.collection(space), requests=requests))
        if len(responses) != len(requests):
            # Seen from a Qdrant 1.19 cluster node in a new collection's first seconds: a batch
            # answered with no results at all (the node answered: it stays the one called).
            raise StorageUnavailable(
                f"vector store answered {len(responses)} of {len(requests)} searches", reason="VECTOR_STORE_UNAVAILABLE"
            )
        return [[Found(str(pt.id), float(pt.score), pt.payload or {}) for pt in r.points] for r in responses]

    async def _scroll(
        self, space: int, flt: p.All, offset: str | None, limit: int, with_vectors: bool = True
    ) -> tuple[list[tuple[list[float], dict[str, Any]]], str | None]:
        records, after = await self._call(
            self._require().scroll(
                self.collection(space), scroll_filter=to_filter(flt), limit=limit, offset=offset,
                with_payload=True, with_vectors=with_vectors,
            )
        )  # fmt: skip
        return [
            (list(cast(list[float], r.vector)) if with_vectors else [], r.payload or {}) for r in records
        ], None if after is None else str(after)

    async def _contains(self, space: int, point_id: str) -> bool:
        found = await self._call(self._require().retrieve(self.collection(space), ids=[point_id], with_payload=False))
        return bool(found)
