"""Vector memory: the data types and the vector-index interface that the recall logic, the
vector sync and the Qdrant adapters (server, Edge) share."""

from __future__ import annotations

import uuid
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

# Metadata record (per tenant) naming the model that vectors without a model id belong to.
LEGACY_NAMESPACE = "memory-vector"
LEGACY_KEY = "legacy-model"

# uuid5 namespace of point ids; fixed forever (changing it would duplicate every point).
POINT_NAMESPACE = uuid.UUID("6f1c2a52-41e4-5d0b-9a51-8e2d3f0c7b10")


def point_id(tenant: str, session_id: str, message_id: str, timestamp: int, model_id: str | None) -> str:
    """Deterministic id of the point indexing one message in one model: re-indexing replaces it."""
    source = f"id:{message_id}" if message_id else f"ts:{timestamp}"
    return str(uuid.uuid5(POINT_NAMESPACE, "\x1f".join((tenant, session_id, source, model_id or ""))))


@dataclass(frozen=True, slots=True)
class VectorRecord:
    """What a point says about the message it indexes (its payload)."""

    session_id: str
    timestamp: int
    model_id: str | None = None  # None: a legacy vector written before models were tagged
    message_id: str = ""
    role: str = ""
    platform: str = ""
    sender_id: str = ""
    mentioned_ids: tuple[str, ...] = ()
    speaker_label: str = ""
    text: str = ""

    @property
    def effective_role(self) -> str:
        # Legacy vectors without a role are treated as the other party (seed 003).
        return self.role or "user"


@dataclass(frozen=True, slots=True)
class VectorPoint:
    tenant: str
    vector: list[float]
    record: VectorRecord

    @property
    def id(self) -> str:
        r = self.record
        return point_id(self.tenant, r.session_id, r.message_id, r.timestamp, r.model_id)


@dataclass(frozen=True, slots=True)
class Candidate:
    """A point the vector index returned for a query, with its cosine similarity."""

    point_id: str
    semantic: float
    record: VectorRecord


@dataclass(frozen=True, slots=True)
class Scope:
    """Which points a search may see, beyond the tenant. Empty fields do not restrict.

    A point is in scope when it matches `session_id` or `platform` (when set), or
    — with `speaker_ids` — when it was sent by or mentions one of them. The
    conditions that are set are alternatives (any one admits the point).
    """

    session_id: str = ""
    platform: str = ""
    speaker_ids: tuple[str, ...] = ()

    @property
    def unrestricted(self) -> bool:
        return not (self.session_id or self.platform or self.speaker_ids)


@dataclass(frozen=True, slots=True)
class VectorSelector:
    """Which of a tenant's points a delete removes (all fields that are set must match).

    `message_ids` and `timestamps` are alternatives: a point of one of those messages
    or at one of those timestamps (in the selected session) matches — deleting messages
    removes the vectors of their (session, timestamp) pairs (SPEC §2).
    `indexed_before` protects points written after the delete was decided (a retried
    delete from the outbox never removes a newer re-index of the same message).
    """

    tenant: str
    session_id: str | None = None
    timestamps: tuple[int, ...] = ()
    message_ids: tuple[str, ...] = ()
    model_id: str | None = None
    indexed_before: int | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "tenant": self.tenant,
            "session_id": self.session_id,
            "timestamps": list(self.timestamps),
            "message_ids": list(self.message_ids),
            "model_id": self.model_id,
            "indexed_before": self.indexed_before,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> VectorSelector:
        return cls(
            tenant=data["tenant"],
            session_id=data.get("session_id"),
            timestamps=tuple(int(t) for t in data.get("timestamps") or ()),
            message_ids=tuple(data.get("message_ids") or ()),
            model_id=data.get("model_id"),
            indexed_before=None if data.get("indexed_before") is None else int(data["indexed_before"]),
        )


@dataclass(frozen=True, slots=True)
class ModelCount:
    model_id: str | None
    count: int
    dimension: int


@dataclass(frozen=True, slots=True)
class CollectionCount:
    collection: str
    dimension: int
    count: int


@dataclass(slots=True)
class VectorStats:
    models: list[ModelCount] = field(default_factory=list)
    collections: list[CollectionCount] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class PointFilter:
    """Which of a tenant's points a query may return: the scope and, when `model_id` is set,
    that model (`legacy`: vectors without a model id count as it too), minus `exclude_roles`
    (a point without a role is a "user", see VectorRecord.effective_role)."""

    tenant: str
    scope: Scope = Scope()
    model_id: str | None = None
    legacy: bool = False
    exclude_roles: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class IndexQuery:
    """One nearest-neighbour query: the `limit` points of `vector`'s dimension nearest to it
    among those `filter` admits, cosine similarity at least `min_score` (None: any).

    `pool_limit` > 0 also asks which models the `pool_limit` nearest points of the scope
    hold, whatever their model and role (what a search filtering after retrieval would
    have seen; SearchMemory reports and warns about them).

    New kinds of query (a sparse / BM25 text query next to or instead of `vector`) are
    new optional fields here and a new score on Candidate, not a new method.
    """

    filter: PointFilter
    limit: int
    vector: Sequence[float]
    min_score: float | None = None
    pool_limit: int = 0


@dataclass(frozen=True, slots=True)
class IndexResult:
    candidates: list[Candidate]
    pool_models: Counter[str | None] = field(default_factory=Counter)  # None: vectors without a model id


class VectorIndex(Protocol):
    """What the vector memory needs from a vector engine. Adapters: storage/qdrant/server.py
    (a Qdrant server) and storage/qdrant/edge.py (Qdrant Edge in-process, the embedded default).

    One collection (server) or shard (Edge) per vector dimension. Every failure of the engine
    raises StorageUnavailable; every call is bounded by the caller's deadline (domain/deadline.py).
    """

    @property
    def target(self) -> str: ...

    async def open(self) -> None: ...

    async def close(self) -> None: ...

    async def ping(self) -> None: ...

    async def upsert(self, points: Sequence[VectorPoint], indexed_at: int) -> list[str]:
        """Insert or replace (same id) points; durable once it returns. Their ids, in order."""

    async def delete(self, selector: VectorSelector) -> int:
        """Delete the selected points in every dimension; returns how many there were."""

    async def query(self, query: IndexQuery) -> IndexResult: ...

    async def has_point(self, dimension: int, point_id: str) -> bool: ...

    async def model_dimensions(self, tenant: str, model_id: str) -> list[int]:
        """Dimensions that hold the tenant's points of `model_id`, ascending."""

    async def stats(self, tenant: str) -> tuple[list[ModelCount], list[CollectionCount]]:
        """The tenant's points per (model, dimension), most first, and per collection."""
