"""The VectorIndex operations, written once over a few engine primitives that each Qdrant
adapter implements: a Qdrant server (server.py) and Qdrant Edge in-process (edge.py).

Layout: one collection (server) or shard (Edge) per vector dimension, cosine distance, and
one keyword index (points.KEYWORD_SPACE) of BM25 sparse vectors (keywords.py). Every read
and delete filters on the tenant.
"""

from __future__ import annotations

import abc
import errno
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any, NamedTuple

from memoryd.domain import keywords
from memoryd.domain.vectors import (
    Candidate,
    CollectionCount,
    Deleted,
    IndexQuery,
    IndexResult,
    KeywordPoint,
    ModelCount,
    PointFilter,
    VectorPoint,
    VectorSelector,
    dense_point_ids,
)
from memoryd.storage.qdrant import points as p

Vector = Sequence[float] | keywords.Sparse


def no_space(error: BaseException) -> bool:
    """A write that failed for want of disk space: ENOSPC from a file write, or Qdrant's
    error (Edge's engine, a server over gRPC or REST) quoting it."""
    if isinstance(error, OSError):
        return error.errno == errno.ENOSPC
    return "No space left on device" in str(error)


Row = tuple[str, Vector, dict[str, Any]]
KeywordRow = tuple[str, str, dict[str, Any]]  # a keyword point: id, text, payload


@dataclass(frozen=True, slots=True)
class Search:
    """One engine query: nearest dense points, or (a Sparse vector) best BM25 keyword points
    with IDF statistics over the points of `idf_corpus`."""

    vector: Vector
    filter: p.All
    limit: int
    min_score: float | None = None
    payload: bool | list[str] = True
    idf_corpus: p.All | None = None


class Found(NamedTuple):
    """One point an engine query found (a tuple: a search builds dozens, at half a frozen
    dataclass's cost each)."""

    id: str
    score: float
    payload: dict[str, Any]


# One traversal for candidates and pool (QdrantIndexBase._nearest_and_pool): how many of the
# scope's nearest points it reads, as a multiple of the larger of the two limits, and for how
# many searches a filter that fell short goes straight to two queries (per tenant and conditions).
SHARED_SPAN = 2
SHARED_RETRY_AFTER = 16
SHARED_KEYS = 10_000


class QdrantIndexBase(abc.ABC):
    def __init__(self, prefix: str) -> None:
        self.prefix = prefix
        self._shared_skips: dict[tuple, int] = {}  # see _nearest_and_pool

    # -- primitives (per adapter) -----------------------------------------------------
    @property
    @abc.abstractmethod
    def target(self) -> str: ...

    @abc.abstractmethod
    async def dimensions(self) -> list[int]:
        """Dimensions that have a dense collection, ascending."""

    @abc.abstractmethod
    async def _ensure(self, space: int) -> None:
        """Create the space's collection with its payload indexes, unless it exists."""

    @abc.abstractmethod
    async def _exists(self, space: int) -> bool: ...

    @abc.abstractmethod
    async def _upsert(self, space: int, points: list[Row]) -> None: ...

    @abc.abstractmethod
    async def _count(self, space: int, flt: p.All) -> int: ...

    @abc.abstractmethod
    async def _delete(self, space: int, flt: p.All) -> None: ...

    @abc.abstractmethod
    async def _facet(self, space: int, key: str, flt: p.All) -> list[tuple[Any, int]]: ...

    @abc.abstractmethod
    async def _search(self, space: int, searches: list[Search]) -> list[list[Found]]:
        """Several searches in one engine call, results in order."""

    @abc.abstractmethod
    async def _contains(self, space: int, point_id: str) -> bool: ...

    @abc.abstractmethod
    async def _scroll(
        self, space: int, flt: p.All, offset: str | None, limit: int, with_vectors: bool = True
    ) -> tuple[list[tuple[list[float], dict[str, Any]]], str | None]:
        """(vector, payload) of points matching `flt` by id from `offset`, and the next offset
        (without `with_vectors`, each vector is empty)."""

    def collection(self, space: int) -> str:
        return p.collection_name(self.prefix, space)

    # -- VectorIndex ------------------------------------------------------------------
    async def upsert(self, points: Sequence[VectorPoint], indexed_at: int) -> list[str]:
        ids = [point.id for point in points]
        by_dimension: dict[int, list[Row]] = {}
        for point_id, point in zip(ids, points, strict=True):
            by_dimension.setdefault(len(point.vector), []).append(
                (point_id, point.vector, p.payload_of(point.tenant, point.record, indexed_at))
            )
        for dimension, rows in by_dimension.items():
            await self._ensure(dimension)
            await self._upsert(dimension, rows)
        return ids

    async def upsert_keywords(self, points: Sequence[KeywordPoint], indexed_at: int) -> list[str]:
        ids = [point.id for point in points]
        if points:
            rows: list[KeywordRow] = [
                (point_id, point.record.text, p.payload_of(point.tenant, point.record, indexed_at, keyword=True))
                for point_id, point in zip(ids, points, strict=True)
            ]
            await self._ensure(p.KEYWORD_SPACE)
            await self._upsert_keywords(rows)
        return ids

    async def _upsert_keywords(self, rows: list[KeywordRow]) -> None:
        """Keyword points, each with the BM25 vector of its text."""
        await self._upsert(p.KEYWORD_SPACE, [(i, keywords.document_vector(text), payload) for i, text, payload in rows])

    async def delete(self, selector: VectorSelector) -> Deleted:
        flt = p.selector_filter(selector)
        removed = Deleted()
        spaces = await self.dimensions()
        if selector.model_id is None and await self._exists(p.KEYWORD_SPACE):
            spaces.append(p.KEYWORD_SPACE)  # keyword points have no model
        for space in spaces:
            found = await self._count(space, flt)
            if found:
                await self._delete(space, flt)
                removed += Deleted(keywords=found) if space == p.KEYWORD_SPACE else Deleted(vectors=found)
        return removed

    async def query(self, query: IndexQuery) -> IndexResult:
        """Keyword candidates first; then one batch in the dense collection: the nearest points
        (and with them the pool), and the semantic scores of the keyword candidates (by their
        dense point ids)."""
        found_by_keyword = await self._keyword_candidates(query) if query.text else []
        if not query.vector:
            return IndexResult(found_by_keyword)
        dimension = len(query.vector)
        if not await self._exists(dimension):
            return IndexResult(found_by_keyword)
        flt = query.filter
        owners: dict[str, Candidate] = {}  # dense point id -> the keyword candidate of its message
        for candidate in found_by_keyword:
            for point_id in dense_point_ids(flt.tenant, candidate.record, flt.model_id or "", flt.legacy):
                owners[point_id] = candidate
        lookup = None
        if owners:
            lookup = Search(query.vector, p.point_filter(flt, p.HasId(tuple(owners))), len(owners), query.min_score)
        nearest, pool, looked_up = await self._nearest_and_pool(dimension, query, lookup)
        return IndexResult(merge(nearest, looked_up, owners, found_by_keyword), _models(pool))

    async def _nearest_and_pool(
        self, dimension: int, query: IndexQuery, lookup: Search | None
    ) -> tuple[list[Candidate], list[Found], list[Found]]:
        """The candidates (the `limit` nearest points `filter` admits), the pool (when asked
        for) and what `lookup` found, in one call to the engine when it can be.

        With a pool, one traversal can serve both: the scope's nearest `span` points are the
        pool's first `pool_limit`, and when at least `limit` of them meet the model, role and
        min_score conditions, those are the candidates too (a point the conditions admit that
        lies nearer would be among them). When they are not (another model's vectors dominate
        the scope), the filtered query runs as well; a key that fell short skips the attempt
        for its next SHARED_RETRY_AFTER searches."""
        flt, vector = query.filter, query.vector
        candidates_search = Search(vector, p.point_filter(flt), query.limit, query.min_score)
        if query.pool_limit <= 0:
            [found], looked_up = await self._search_with(dimension, [candidates_search], lookup)
            return _candidates(found), [], looked_up
        pool_search = Search(vector, p.point_filter(flt.scope_only), query.pool_limit, payload=["model_id"])
        key = (flt.tenant, flt.model_id, flt.legacy, flt.exclude_roles, bool(flt.exclude_message_ids))
        if self._shared_skips.get(key, 0) > 0:
            self._shared_skips[key] -= 1
            [found, pool], looked_up = await self._search_with(dimension, [candidates_search, pool_search], lookup)
            return _candidates(found), pool, looked_up
        span = max(query.limit, query.pool_limit) * SHARED_SPAN
        [nearest], looked_up = await self._search_with(
            dimension, [replace(pool_search, limit=span, payload=True)], lookup
        )
        pool = nearest[: query.pool_limit]
        admitted, complete = _admitted(nearest, flt, query.limit, query.min_score, span)
        if not complete:
            if len(self._shared_skips) >= SHARED_KEYS:
                self._shared_skips.clear()
            self._shared_skips[key] = SHARED_RETRY_AFTER
            [found] = await self._search(dimension, [candidates_search])
            admitted = _candidates(found)
        return admitted, pool, looked_up

    async def _search_with(
        self, dimension: int, searches: list[Search], lookup: Search | None
    ) -> tuple[list[list[Found]], list[Found]]:
        """`searches` and, in the same engine call, `lookup` (what it found: [] without one)."""
        results = await self._search(dimension, [*searches, *([lookup] if lookup is not None else [])])
        return results[: len(searches)], results[len(searches)] if lookup is not None else []

    async def _keyword_candidates(self, query: IndexQuery) -> list[Candidate]:
        vector = keywords.query_vector(query.text)
        if not vector.indices or not await self._exists(p.KEYWORD_SPACE):
            return []
        flt = query.filter
        no_model = replace(flt, model_id=None, legacy=False)
        search = Search(vector, p.point_filter(no_model), query.limit, idf_corpus=p.corpus_filter(flt))
        [found] = await self._search(p.KEYWORD_SPACE, [search])
        return [Candidate(f.id, None, p.record_of(f.payload), keyword=f.score) for f in found]

    async def has_point(self, dimension: int, point_id: str) -> bool:
        return dimension > 0 and await self._exists(dimension) and await self._contains(dimension, point_id)

    async def has_keyword_point(self, point_id: str) -> bool:
        return await self._exists(p.KEYWORD_SPACE) and await self._contains(p.KEYWORD_SPACE, point_id)

    async def model_dimensions(self, tenant: str, model_id: str) -> list[int]:
        flt = p.tenant_filter(tenant, p.Match("model_id", model_id))
        return [d for d in await self.dimensions() if await self._count(d, flt)]

    async def stats(self, tenant: str) -> tuple[list[ModelCount], list[CollectionCount]]:
        models: list[ModelCount] = []
        collections: list[CollectionCount] = []
        if await self._exists(p.KEYWORD_SPACE):
            keyword_points = await self._count(p.KEYWORD_SPACE, p.tenant_filter(tenant))
            collections.append(CollectionCount(self.collection(p.KEYWORD_SPACE), p.KEYWORD_SPACE, keyword_points))
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

    async def scroll(
        self, tenant: str, dimension: int, offset: str | None, limit: int
    ) -> tuple[list[VectorPoint], str | None]:
        if not await self._exists(dimension):
            return [], None
        rows, after = await self._scroll(dimension, p.tenant_filter(tenant), offset, limit)
        return [
            VectorPoint(tenant, [float(x) for x in vector], p.record_of(payload)) for vector, payload in rows
        ], after

    async def messages(
        self, tenant: str, dimension: int, offset: str | None, limit: int
    ) -> tuple[list[tuple[str, str]], str | None]:
        if not await self._exists(dimension):
            return [], None
        rows, after = await self._scroll(dimension, p.tenant_filter(tenant), offset, limit, False)
        return [
            (str(payload.get("session_id", "")), str(payload.get("message_id") or "")) for _, payload in rows
        ], after


def _candidates(found: list[Found]) -> list[Candidate]:
    return [Candidate(f.id, f.score, p.record_of(f.payload)) for f in found]


def _models(pool: list[Found]) -> Counter[str | None]:
    return Counter(f.payload.get("model_id") or None for f in pool)


def _admitted(
    scope_nearest: list[Found], flt: PointFilter, limit: int, min_score: float | None, span: int
) -> tuple[list[Candidate], bool]:
    """The first `limit` of the scope's nearest points that `flt` and `min_score` admit, and
    whether they are all there are: `limit` of them, or the scope (or the points at or above
    min_score) ran out within the span."""
    admitted: list[Candidate] = []
    for found in scope_nearest:
        if min_score is not None and found.score < min_score:
            return admitted, True  # nearest first: nothing further reaches min_score
        record = p.record_of(found.payload)
        if flt.admits_beyond_scope(record):
            admitted.append(Candidate(found.id, found.score, record))
            if len(admitted) == limit:
                return admitted, True
    return admitted, len(scope_nearest) < span


def merge(
    nearest: list[Candidate],
    looked_up: list[Found],
    owners: dict[str, Candidate],
    found_by_keyword: list[Candidate],
) -> list[Candidate]:
    """One candidate per message: the nearest dense points (with the keyword score of their
    message when it was a keyword candidate), then the other keyword candidates (with the
    semantic score of their dense point when the lookup found one)."""
    by_message: dict[tuple[str, str], Candidate] = {c.record.message_key: c for c in found_by_keyword}
    dense: dict[tuple[str, str], Candidate] = {}
    for found in looked_up:
        owner = owners[found.id]
        key = owner.record.message_key
        if key not in dense or found.score > (dense[key].semantic or -2.0):
            dense[key] = Candidate(found.id, found.score, p.record_of(found.payload), owner.keyword)
    merged: dict[tuple[str, str], Candidate] = {}
    for candidate in nearest:
        key = candidate.record.message_key
        if key in merged:
            continue
        keyword = by_message.get(key)
        merged[key] = replace(candidate, keyword=keyword.keyword) if keyword is not None else candidate
    for candidate in found_by_keyword:
        key = candidate.record.message_key
        if key not in merged:
            merged[key] = dense.get(key, candidate)
    return list(merged.values())
