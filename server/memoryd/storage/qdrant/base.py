"""The VectorIndex operations, written once over a few engine primitives that each Qdrant
adapter implements: a Qdrant server (server.py) and Qdrant Edge in-process (edge.py).

Layout: one collection (server) or shard (Edge) per vector dimension, cosine distance.
Every read and delete filters on the tenant.
"""

from __future__ import annotations

import abc
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from memoryd.domain.vectors import (
    Candidate,
    CollectionCount,
    IndexQuery,
    IndexResult,
    ModelCount,
    PointFilter,
    VectorPoint,
    VectorSelector,
)
from memoryd.storage.qdrant import points as p


@dataclass(frozen=True, slots=True)
class Search:
    vector: Sequence[float]
    filter: p.All
    limit: int
    min_score: float | None = None
    payload: bool | list[str] = True


@dataclass(frozen=True, slots=True)
class Found:
    id: str
    score: float
    payload: dict[str, Any]


class QdrantIndexBase(abc.ABC):
    def __init__(self, prefix: str) -> None:
        self.prefix = prefix

    # -- primitives (per adapter) -----------------------------------------------------
    @property
    @abc.abstractmethod
    def target(self) -> str: ...

    @abc.abstractmethod
    async def dimensions(self) -> list[int]:
        """Dimensions that have a collection, ascending."""

    @abc.abstractmethod
    async def _ensure(self, dimension: int) -> None:
        """Create the dimension's collection with its payload indexes, unless it exists."""

    @abc.abstractmethod
    async def _exists(self, dimension: int) -> bool: ...

    @abc.abstractmethod
    async def _upsert(self, dimension: int, points: list[tuple[str, list[float], dict[str, Any]]]) -> None: ...

    @abc.abstractmethod
    async def _count(self, dimension: int, flt: p.All) -> int: ...

    @abc.abstractmethod
    async def _delete(self, dimension: int, flt: p.All) -> None: ...

    @abc.abstractmethod
    async def _facet(self, dimension: int, key: str, flt: p.All) -> list[tuple[Any, int]]: ...

    @abc.abstractmethod
    async def _search(self, dimension: int, searches: list[Search]) -> list[list[Found]]:
        """Several searches in one engine call, results in order."""

    @abc.abstractmethod
    async def _contains(self, dimension: int, point_id: str) -> bool: ...

    def collection(self, dimension: int) -> str:
        return p.collection_name(self.prefix, dimension)

    # -- VectorIndex ------------------------------------------------------------------
    async def upsert(self, points: Sequence[VectorPoint], indexed_at: int) -> list[str]:
        ids = [point.id for point in points]
        by_dimension: dict[int, list[tuple[str, list[float], dict[str, Any]]]] = {}
        for point_id, point in zip(ids, points):
            by_dimension.setdefault(len(point.vector), []).append(
                (point_id, point.vector, p.payload_of(point, indexed_at))
            )
        for dimension, rows in by_dimension.items():
            await self._ensure(dimension)
            await self._upsert(dimension, rows)
        return ids

    async def delete(self, selector: VectorSelector) -> int:
        flt = p.selector_filter(selector)
        removed = 0
        for dimension in await self.dimensions():
            found = await self._count(dimension, flt)
            if found:
                await self._delete(dimension, flt)
                removed += found
        return removed

    async def query(self, query: IndexQuery) -> IndexResult:
        dimension = len(query.vector)
        if not await self._exists(dimension):
            return IndexResult([])
        searches = [Search(query.vector, p.point_filter(query.filter), query.limit, query.min_score)]
        if query.pool_limit > 0:
            scope_only = PointFilter(query.filter.tenant, query.filter.scope)
            searches.append(Search(query.vector, p.point_filter(scope_only), query.pool_limit, payload=["model_id"]))
        results = await self._search(dimension, searches)
        candidates = [Candidate(f.id, f.score, p.record_of(f.payload)) for f in results[0]]
        pool: Counter[str | None] = Counter()
        for found in results[1] if len(results) > 1 else ():
            pool[found.payload.get("model_id") or None] += 1
        return IndexResult(candidates, pool)

    async def has_point(self, dimension: int, point_id: str) -> bool:
        return await self._exists(dimension) and await self._contains(dimension, point_id)

    async def model_dimensions(self, tenant: str, model_id: str) -> list[int]:
        flt = p.tenant_filter(tenant, p.Match("model_id", model_id))
        return [d for d in await self.dimensions() if await self._count(d, flt)]

    async def stats(self, tenant: str) -> tuple[list[ModelCount], list[CollectionCount]]:
        models: list[ModelCount] = []
        collections: list[CollectionCount] = []
        for dimension in await self.dimensions():
            total = await self._count(dimension, p.tenant_filter(tenant))
            collections.append(CollectionCount(self.collection(dimension), dimension, total))
            if not total:
                continue
            for value, count in await self._facet(dimension, "model_id", p.tenant_filter(tenant)):
                if value:
                    models.append(ModelCount(str(value), count, dimension))
            untagged = await self._count(dimension, p.tenant_filter(tenant, p.Missing("model_id")))
            if untagged:
                models.append(ModelCount(None, untagged, dimension))
        models.sort(key=lambda m: (-m.count, m.model_id or ""))
        return models, collections
