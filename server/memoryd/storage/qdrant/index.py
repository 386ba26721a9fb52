"""Vector index over Qdrant through qdrant-client's AsyncQdrantClient.

A Qdrant server when a URL is configured (gRPC preferred, API key supported), Qdrant's
local mode (on-disk, in-process, one process per folder) under the data dir otherwise.

Layout: one collection per vector dimension (`<prefix>_d<dim>`), cosine distance. Every
point carries the tenant; every read and delete filters on it. Keyword payload indexes
(tenant with `is_tenant`, model_id, session_id, platform, ...) are created idempotently;
local mode ignores payload indexes, which is fine for an embedded default.

Every failure of the vector store surfaces as StorageUnavailable.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
import warnings
from collections.abc import Awaitable, Sequence
from pathlib import Path
from typing import Any, TypeVar

import numpy as np
import portalocker
from qdrant_client import AsyncQdrantClient
from qdrant_client import models as qm

from memoryd.domain import deadline
from memoryd.domain.errors import StorageUnavailable
from memoryd.domain.vectors import (
    Candidate,
    CollectionCount,
    ModelCount,
    Scope,
    VectorPoint,
    VectorRecord,
    VectorSelector,
    VectorStats,
)
from memoryd.storage.qdrant.local_scope import PAYLOAD_KEYS, LocalScopeIndex

log = logging.getLogger(__name__)

T = TypeVar("T")

KEYWORD_FIELDS = ("model_id", "session_id", "platform", "message_id", "sender_id", "mentioned_ids", "role")
INTEGER_FIELDS = ("timestamp", "indexed_at")
FACET_LIMIT = 10_000
# Local mode: a scope admitting at most this many points is scored in process (numpy)
# instead of through Qdrant's Python filter; larger ones go through Qdrant.
LOCAL_SCORING_LIMIT = 5_000
# Local mode: while another process holds the folder, check again this often.
LOCAL_LOCK_RETRY_SECONDS = 5.0


def _match(key: str, value: Any) -> qm.FieldCondition:
    return qm.FieldCondition(key=key, match=qm.MatchValue(value=value))


def _match_any(key: str, values: Sequence[Any]) -> qm.FieldCondition:
    return qm.FieldCondition(key=key, match=qm.MatchAny(any=list(values)))


def tenant_filter(tenant: str, *conditions: qm.Condition) -> qm.Filter:
    return qm.Filter(must=[_match("tenant", tenant), *conditions])


def scope_filter(tenant: str, scope: Scope, *, by_tenant: bool = True) -> qm.Filter | None:
    """The tenant (unless the caller knows the collection holds no other) and the scope."""
    must = [_match("tenant", tenant)] if by_tenant else []
    if scope.unrestricted:
        return qm.Filter(must=must) if must else None
    alternatives: list[qm.Condition] = []
    if scope.session_id:
        alternatives.append(_match("session_id", scope.session_id))
    if scope.platform:
        alternatives.append(_match("platform", scope.platform))
    if scope.speaker_ids:
        alternatives.append(_match_any("sender_id", scope.speaker_ids))
        alternatives.append(_match_any("mentioned_ids", scope.speaker_ids))
    return qm.Filter(must=must or None, should=alternatives)


def selector_filter(selector: VectorSelector) -> qm.Filter:
    must: list[qm.Condition] = [_match("tenant", selector.tenant)]
    if selector.session_id is not None:
        must.append(_match("session_id", selector.session_id))
    if selector.model_id is not None:
        must.append(_match("model_id", selector.model_id))
    if selector.indexed_before is not None:
        must.append(qm.FieldCondition(key="indexed_at", range=qm.Range(lt=selector.indexed_before)))
    should: list[qm.Condition] = []
    if selector.message_ids:
        should.append(_match_any("message_id", selector.message_ids))
    if selector.timestamps:
        should.append(_match_any("timestamp", selector.timestamps))
    return qm.Filter(must=must, should=should or None)


def payload_of(point: VectorPoint, indexed_at: int) -> dict[str, Any]:
    r = point.record
    payload: dict[str, Any] = {
        "tenant": point.tenant,
        "session_id": r.session_id,
        "timestamp": r.timestamp,
        "role": r.role,
        "platform": r.platform,
        "sender_id": r.sender_id,
        "mentioned_ids": list(r.mentioned_ids),
        "speaker_label": r.speaker_label,
        "text": r.text,
        "indexed_at": indexed_at,
    }
    if r.model_id:
        payload["model_id"] = r.model_id
    if r.message_id:
        payload["message_id"] = r.message_id
    return payload


def record_of(payload: dict[str, Any]) -> VectorRecord:
    return VectorRecord(
        session_id=str(payload.get("session_id", "")),
        timestamp=int(payload.get("timestamp") or 0),
        model_id=payload.get("model_id") or None,
        message_id=str(payload.get("message_id") or ""),
        role=str(payload.get("role") or ""),
        platform=str(payload.get("platform") or ""),
        sender_id=str(payload.get("sender_id") or ""),
        mentioned_ids=tuple(payload.get("mentioned_ids") or ()),
        speaker_label=str(payload.get("speaker_label") or ""),
        text=str(payload.get("text") or ""),
    )


class QdrantIndex:
    def __init__(
        self,
        *,
        url: str = "",
        api_key: str = "",
        prefer_grpc: bool = True,
        grpc_port: int = 6334,
        path: Path | None = None,
        prefix: str = "memoryd",
        timeout: float = 5.0,
        local_scoring: bool = True,
        local_scoring_limit: int = LOCAL_SCORING_LIMIT,
        local_lock_retry_seconds: float = LOCAL_LOCK_RETRY_SECONDS,
    ) -> None:
        if not url and path is None:
            raise ValueError("QdrantIndex needs a server url or a local path")
        self.url = url
        self.api_key = api_key
        self.prefer_grpc = prefer_grpc
        self.grpc_port = grpc_port
        self.path = path
        self.prefix = prefix
        self.timeout = timeout
        self.local_scoring = local_scoring
        self.local_scoring_limit = local_scoring_limit
        self.local_lock_retry_seconds = local_lock_retry_seconds
        self._client: AsyncQdrantClient | None = None
        self._closed = True
        self._next_local_attempt = 0.0
        self._lock_warned = False
        self._ready: set[int] = set()  # dimensions whose collection exists with its indexes
        self._local_scopes: dict[int, LocalScopeIndex] = {}  # local mode only, see local_scope.py
        self._create_lock = asyncio.Lock()
        self._scope_lock = asyncio.Lock()
        # Local mode: writes and their map updates happen one at a time, so the map is
        # exact (an upsert can never land between a delete's id lookup and the delete).
        self._local_write = asyncio.Lock()

    @property
    def local(self) -> bool:
        return not self.url

    @property
    def target(self) -> str:
        return self.url or f"local:{self.path}"

    # -- lifecycle -------------------------------------------------------------
    async def open(self) -> None:
        self._closed = False
        if self.local:
            Path(self.path).mkdir(parents=True, exist_ok=True)
            self._next_local_attempt = 0.0
            self._open_local()
        else:
            self._client = AsyncQdrantClient(
                url=self.url,
                api_key=self.api_key or None,
                prefer_grpc=self.prefer_grpc,
                grpc_port=self.grpc_port,
                timeout=max(1, int(self.timeout)),
                # The check is a blocking request in the constructor; startup must not
                # wait for (or fail on) an unreachable Qdrant: the outbox covers that.
                check_compatibility=False,
            )
        self._ready.clear()
        self._local_scopes.clear()

    def _local_folder_free(self) -> bool:
        lock_path = Path(self.path) / ".lock"
        if not lock_path.exists():
            return True
        with open(lock_path, "r+") as handle:
            try:
                portalocker.lock(handle, portalocker.LockFlags.EXCLUSIVE | portalocker.LockFlags.NON_BLOCKING)
            except portalocker.exceptions.LockException:
                return False
            portalocker.unlock(handle)
            return True

    def _open_local(self) -> None:
        """Open local mode unless another process holds the folder (then vectors are
        unavailable in this process, like an unreachable server, and opening is retried)."""
        now = asyncio.get_running_loop().time()
        if now < self._next_local_attempt:
            return
        self._next_local_attempt = now + self.local_lock_retry_seconds
        try:
            # Checked first: the client loads every collection before it tries the lock.
            if not self._local_folder_free():
                raise RuntimeError("locked")
            self._client = AsyncQdrantClient(path=str(self.path))
        except RuntimeError:
            if not self._lock_warned:
                self._lock_warned = True
                log.warning(
                    "local vector store %s is in use by another process: vectors are unavailable here "
                    "until it is free (several processes need a Qdrant server)",
                    self.path,
                )
            return
        self._lock_warned = False
        self._ready.clear()
        self._local_scopes.clear()

    async def close(self) -> None:
        self._closed = True
        client, self._client = self._client, None
        if client is not None:
            await client.close()

    async def ping(self) -> None:
        await self._call(self._require().get_collections())

    # -- calls -----------------------------------------------------------------
    def _require(self) -> AsyncQdrantClient:
        if self._client is None and self.local and not self._closed:
            self._open_local()
        if self._client is None:
            raise StorageUnavailable("vector store is closed", reason="VECTOR_STORE_UNAVAILABLE")
        return self._client

    async def _call(self, awaitable: Awaitable[T]) -> T:
        """Bound by the caller's deadline; any vector store failure becomes StorageUnavailable."""
        try:
            async with asyncio.timeout(deadline.remaining(self.timeout)):
                return await awaitable
        except (StorageUnavailable, asyncio.CancelledError):
            raise
        except Exception as error:  # noqa: BLE001 - transport, server and closed-client errors alike
            raise StorageUnavailable(
                f"vector store unavailable ({type(error).__name__})", reason="VECTOR_STORE_UNAVAILABLE"
            ) from error

    def collection(self, dimension: int) -> str:
        return f"{self.prefix}_d{dimension}"

    async def dimensions(self) -> list[int]:
        """Dimensions that have a collection, ascending."""
        response = await self._call(self._require().get_collections())
        marker = f"{self.prefix}_d"
        dims = []
        for description in response.collections:
            name = description.name
            if name.startswith(marker) and name[len(marker) :].isdigit():
                dims.append(int(name[len(marker) :]))
        return sorted(dims)

    async def _ensure(self, dimension: int) -> str:
        name = self.collection(dimension)
        if dimension in self._ready:
            return name
        async with self._create_lock:
            if dimension in self._ready:
                return name
            client = self._require()
            if not await self._call(client.collection_exists(name)):
                try:
                    await self._call(
                        client.create_collection(
                            name,
                            vectors_config=qm.VectorParams(size=dimension, distance=qm.Distance.COSINE),
                            # Multitenancy: per-tenant graphs instead of one global graph;
                            # every search filters on the tenant.
                            hnsw_config=qm.HnswConfigDiff(payload_m=16, m=0),
                        )
                    )
                except StorageUnavailable:
                    # Another replica may have created it first.
                    if not await self._call(client.collection_exists(name)):
                        raise
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # local mode warns that payload indexes have no effect
                await self._call(
                    client.create_payload_index(
                        name,
                        "tenant",
                        field_schema=qm.KeywordIndexParams(type=qm.KeywordIndexType.KEYWORD, is_tenant=True),
                    )
                )
                # Filter-only fields: no payload-aware HNSW links (with m=0 the server would
                # otherwise build a graph per value, e.g. per message id).
                for key in KEYWORD_FIELDS:
                    await self._index(
                        name, key, qm.KeywordIndexParams(type=qm.KeywordIndexType.KEYWORD, enable_hnsw=False),
                        qm.PayloadSchemaType.KEYWORD,
                    )
                for key in INTEGER_FIELDS:
                    await self._index(
                        name, key,
                        qm.IntegerIndexParams(type=qm.IntegerIndexType.INTEGER, lookup=True, range=True, enable_hnsw=False),
                        qm.PayloadSchemaType.INTEGER,
                    )
            self._ready.add(dimension)
            log.info("vector collection ready: %s", name)
        return name

    async def _index(self, collection: str, key: str, params, plain: qm.PayloadSchemaType) -> None:
        client = self._require()
        try:
            await self._call(client.create_payload_index(collection, key, field_schema=params))
        except StorageUnavailable:
            # Servers older than `enable_hnsw` refuse the parameters: a plain index then.
            await self._call(client.create_payload_index(collection, key, field_schema=plain))

    async def _exists(self, dimension: int) -> bool:
        if dimension in self._ready:
            return True
        return await self._call(self._require().collection_exists(self.collection(dimension)))

    # -- writes ----------------------------------------------------------------
    async def upsert(self, points: Sequence[VectorPoint], indexed_at: int) -> None:
        by_dimension: dict[int, list[qm.PointStruct]] = {}
        for point in points:
            by_dimension.setdefault(len(point.vector), []).append(
                qm.PointStruct(id=point.id, vector=list(point.vector), payload=payload_of(point, indexed_at))
            )
        for dimension, structs in by_dimension.items():
            name = await self._ensure(dimension)
            async with self._writing(dimension):
                scopes = await self._local_scope(dimension) if self.local and self.local_scoring else None
                await self._call(self._require().upsert(name, points=structs, wait=True))
                if scopes is not None:
                    scopes.add_all((str(s.id), s.payload) for s in structs)

    @contextlib.asynccontextmanager
    async def _writing(self, dimension: int):
        """Local mode: one write at a time; a failed write drops the map (rebuilt on next use)."""
        if not self.local:
            yield
            return
        async with self._local_write:
            try:
                yield
            except BaseException:
                self._local_scopes.pop(dimension, None)
                raise

    async def _local_scope(self, dimension: int) -> LocalScopeIndex:
        """Local mode: the collection's scope map, read once per process. Built under a
        lock so that no upsert lands between the scroll and the map's first use."""
        known = self._local_scopes.get(dimension)
        if known is not None:
            return known
        async with self._scope_lock:
            known = self._local_scopes.get(dimension)
            if known is not None:
                return known
            return await self._build_local_scope(dimension)

    async def _build_local_scope(self, dimension: int) -> LocalScopeIndex:
        scopes = LocalScopeIndex()
        offset = None
        while True:
            points, offset = await self._call(
                self._require().scroll(
                    self.collection(dimension), limit=1000, offset=offset, with_payload=PAYLOAD_KEYS, with_vectors=False
                )
            )
            scopes.add_all((str(p.id), p.payload or {}) for p in points)
            if offset is None:
                break
        self._local_scopes[dimension] = scopes
        return scopes

    async def _score_locally(self, dimension: int, ids: set[str], vector: Sequence[float], limit: int) -> list[Candidate]:
        """Cosine over the given points only (what Qdrant computes, without its filter scan)."""
        client, name = self._require(), self.collection(dimension)
        records = await self._call(client.retrieve(name, ids=list(ids), with_payload=False, with_vectors=True))
        if not records:
            return []
        matrix = np.asarray([r.vector for r in records], dtype=np.float32)
        matrix /= np.maximum(np.linalg.norm(matrix, axis=1, keepdims=True), 1e-12)
        query = np.asarray(vector, dtype=np.float32)
        query /= max(float(np.linalg.norm(query)), 1e-12)
        scores = matrix @ query
        order = np.argsort(-scores, kind="stable")[:limit]
        top = [str(records[i].id) for i in order]
        with_payload = await self._call(client.retrieve(name, ids=top, with_payload=True, with_vectors=False))
        payloads = {str(r.id): r.payload or {} for r in with_payload}
        return [
            Candidate(top[k], float(scores[i]), record_of(payloads[top[k]]))
            for k, i in enumerate(order)
            if top[k] in payloads
        ]

    async def delete(self, selector: VectorSelector) -> int:
        """Delete matching points in every collection; returns how many there were."""
        client = self._require()
        flt = selector_filter(selector)
        removed = 0
        for dimension in await self.dimensions():
            name = self.collection(dimension)
            if self.local and self.local_scoring:
                # Exact ids from the in-process map: no Python scan of every payload.
                async with self._writing(dimension):
                    scopes = await self._local_scope(dimension)
                    ids = scopes.matching(selector)
                    if ids:
                        await self._call(client.delete(name, points_selector=qm.PointIdsList(points=ids), wait=True))
                        scopes.discard(ids)
                        removed += len(ids)
                continue
            found = await self._call(client.count(name, count_filter=flt, exact=True))
            if found.count:
                await self._call(client.delete(name, points_selector=qm.FilterSelector(filter=flt), wait=True))
                removed += found.count
        return removed

    # -- reads -----------------------------------------------------------------
    async def query(self, tenant: str, vector: Sequence[float], scope: Scope, limit: int) -> list[Candidate]:
        dimension = len(vector)
        if not await self._exists(dimension):
            return []
        by_tenant = True
        if self.local and self.local_scoring:
            scopes = await self._local_scope(dimension)
            if scope.unrestricted and scopes.only_tenant(tenant):
                by_tenant = False  # the plain search is numpy-fast; a filter would scan in Python
            else:
                admitted = scopes.admitted(tenant, scope)
                if len(admitted) <= self.local_scoring_limit:
                    return await self._score_locally(dimension, admitted, vector, limit)
                found = await self._search_share(dimension, admitted, len(scopes), vector, limit)
                if found is not None:
                    return found
        response = await self._call(
            self._require().query_points(
                self.collection(dimension),
                query=list(vector),
                query_filter=scope_filter(tenant, scope, by_tenant=by_tenant),
                limit=limit,
                with_payload=True,
            )
        )
        return [Candidate(str(p.id), float(p.score), record_of(p.payload or {})) for p in response.points]

    async def has_point(self, dimension: int, point_id: str) -> bool:
        if not await self._exists(dimension):
            return False
        found = await self._call(
            self._require().retrieve(self.collection(dimension), ids=[point_id], with_payload=False)
        )
        return bool(found)

    async def _search_share(
        self, dimension: int, admitted: set[str], total: int, vector: Sequence[float], limit: int
    ) -> list[Candidate] | None:
        """Local mode, a scope admitting many points: a plain (numpy) search over-fetching by
        the inverse of the admitted share, keeping admitted points. None when that did not
        yield `limit` of them (the caller then filters in Qdrant)."""
        fetch = min(total, max(limit, math.ceil(limit * total / max(len(admitted), 1) * 2)))
        response = await self._call(
            self._require().query_points(self.collection(dimension), query=list(vector), limit=fetch, with_payload=True)
        )
        kept = [p for p in response.points if str(p.id) in admitted][:limit]
        if len(kept) < limit and len(response.points) >= fetch:
            return None
        return [Candidate(str(p.id), float(p.score), record_of(p.payload or {})) for p in kept]

    async def model_dimensions(self, tenant: str, model_id: str) -> list[int]:
        """Dimensions of the collections that hold the tenant's points of `model_id`."""
        client = self._require()
        flt = tenant_filter(tenant, _match("model_id", model_id))
        found = []
        for dimension in await self.dimensions():
            if self.local and self.local_scoring:
                if (await self._local_scope(dimension)).model_counts(tenant)[model_id]:
                    found.append(dimension)
                continue
            points, _ = await self._call(
                client.scroll(self.collection(dimension), scroll_filter=flt, limit=1, with_payload=False)
            )
            if points:
                found.append(dimension)
        return found

    async def stats(self, tenant: str) -> tuple[list[ModelCount], list[CollectionCount]]:
        client = self._require()
        models: list[ModelCount] = []
        collections: list[CollectionCount] = []
        legacy = qm.IsEmptyCondition(is_empty=qm.PayloadField(key="model_id"))
        for dimension in await self.dimensions():
            name = self.collection(dimension)
            if self.local and self.local_scoring:
                counts = (await self._local_scope(dimension)).model_counts(tenant)
                collections.append(CollectionCount(name, dimension, sum(counts.values())))
                models += [ModelCount(m or None, n, dimension) for m, n in counts.items()]
                continue
            total = await self._call(client.count(name, count_filter=tenant_filter(tenant), exact=True))
            collections.append(CollectionCount(name, dimension, total.count))
            if not total.count:
                continue
            facets = await self._call(
                client.facet(name, key="model_id", facet_filter=tenant_filter(tenant), limit=FACET_LIMIT, exact=True)
            )
            for hit in facets.hits:
                if hit.value:
                    models.append(ModelCount(str(hit.value), hit.count, dimension))
            untagged = await self._call(client.count(name, count_filter=tenant_filter(tenant, legacy), exact=True))
            if untagged.count:
                models.append(ModelCount(None, untagged.count, dimension))
        models.sort(key=lambda m: (-m.count, m.model_id or ""))
        return models, collections


__all__ = ["QdrantIndex", "VectorStats"]
