"""Vector memory data types shared by the recall logic, the vector sync and the Qdrant adapter."""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from typing import Any

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
