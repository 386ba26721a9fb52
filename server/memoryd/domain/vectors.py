"""The vector index: the data types and the vector-index interface that the recall logic, the
vector sync and the Qdrant adapters (server, Edge) share.

An indexed message has a *keyword point* (the BM25 vector of its text; no model, no dense
vector) and, when it was embedded, a *dense point* per model. Both carry the same payload
(VectorRecord) and are deleted by the same selectors (docs/VECTORS.md, "Storage layout").
Neither carries the message's text, only its hash (`text_hash`): the text lives in the store,
and a search reads the texts it returns from there. A caller's vector (UpsertVectors), whose
text lives nowhere else, and a summary slice's points carry their text.
"""

from __future__ import annotations

import hashlib
import math
import uuid
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol

import numpy as np

# Metadata record (per tenant) naming the model that vectors without a model id belong to.
LEGACY_NAMESPACE = "memory-vector"
LEGACY_KEY = "legacy-model"

# uuid5 namespaces of point ids; fixed forever (changing one would duplicate every point).
POINT_NAMESPACE = uuid.UUID("6f1c2a52-41e4-5d0b-9a51-8e2d3f0c7b10")
KEYWORD_NAMESPACE = uuid.UUID("0b9e4f7a-2c61-5d38-8f14-63a5c9d2e7b4")


def finite(values: Sequence[float]) -> bool:
    """Whether every number is finite: JSON cannot carry NaN or Inf, and Qdrant refuses them.
    A finite sum proves it in one pass (NaN and Inf propagate through a sum); only a sum that
    overflowed needs the element-wise check."""
    return math.isfinite(sum(values)) or bool(np.isfinite(np.asarray(values, dtype=np.float64)).all())


def _source(message_id: str, timestamp: int) -> str:
    return f"id:{message_id}" if message_id else f"ts:{timestamp}"


def _uuid5(namespace: bytes, name: str) -> str:
    """str(uuid.uuid5(UUID(bytes=namespace), name)) without building UUID objects (a third of
    the time; every upserted point computes one or two)."""
    digest = bytearray(hashlib.sha1(namespace + name.encode()).digest()[:16])
    digest[6] = (digest[6] & 0x0F) | 0x50  # version 5
    digest[8] = (digest[8] & 0x3F) | 0x80  # RFC 4122 variant
    x = digest.hex()
    return f"{x[:8]}-{x[8:12]}-{x[12:16]}-{x[16:20]}-{x[20:]}"


def text_hash(text: str) -> int:
    """A short content hash of an indexed text (64 bits of BLAKE2b, as a signed integer: an
    engine's integer payload). A message's points carry it instead of the text, which lives in
    the store: equal texts have equal hashes (recall collapses repeats by it) and a changed
    text a new one (the keyword point's BM25 vector is recomputed)."""
    digest = hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=8).digest()
    return int.from_bytes(digest, "big", signed=True)


def point_id(tenant: str, session_id: str, message_id: str, timestamp: int, model_id: str | None) -> str:
    """Deterministic id of the point indexing one message in one model: re-indexing replaces it."""
    source = _source(message_id, timestamp)
    return _uuid5(POINT_NAMESPACE.bytes, "\x1f".join((tenant, session_id, source, model_id or "")))


def keyword_point_id(tenant: str, session_id: str, message_id: str, timestamp: int) -> str:
    """Deterministic id of a message's keyword point (one per message, whatever its models)."""
    return _uuid5(KEYWORD_NAMESPACE.bytes, "\x1f".join((tenant, session_id, _source(message_id, timestamp))))


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
    # The owner its session had when the point was written (sessions.record_owner): caller
    # vectors and summary slices carry it; None: a point without one (a message's, or one
    # written before points were stamped). A user-bound search sees its user's and unstamped.
    owner: str | None = None
    # A message's point (the synchronizer's): the hash of its text (text_hash), which it
    # carries instead of the text; a search reads the text from the store. None: the point
    # carries its text (a caller's vector, a summary slice, or one written before hashes).
    text_hash: int | None = None

    @property
    def stored_text(self) -> bool:
        """Whether the text is the store's (read back by message id), not the point's."""
        return self.text_hash is not None

    @property
    def text_key(self) -> int | None:
        """What equal texts share (None: no text): the hash, also of a point carrying its text."""
        if self.text_hash is not None:
            return self.text_hash
        return text_hash(self.text) if self.text else None

    @property
    def effective_role(self) -> str:
        # A point without a role is the other party's (docs/VECTORS.md, SearchMemory: Roles).
        return self.role or "user"

    @property
    def message_key(self) -> tuple[str, str]:
        """The message this record indexes: its session and id (its timestamp when it has none).
        A message's keyword point and dense points share it."""
        return (self.session_id, _source(self.message_id, self.timestamp))


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
class KeywordPoint:
    """A message's text for keyword (BM25) search; the adapter tokenizes `record.text`."""

    tenant: str
    record: VectorRecord

    @property
    def id(self) -> str:
        r = self.record
        return keyword_point_id(self.tenant, r.session_id, r.message_id, r.timestamp)


def dense_point_ids(tenant: str, record: VectorRecord, model_id: str, legacy: bool) -> tuple[str, ...]:
    """Ids the dense points of the message `record` indexes may have in `model_id` (and, when
    `legacy`, as a vector without a model id)."""
    ids: tuple[str, ...] = (point_id(tenant, record.session_id, record.message_id, record.timestamp, model_id),)
    if legacy:
        ids += (point_id(tenant, record.session_id, record.message_id, record.timestamp, None),)
    return ids


@dataclass(frozen=True, slots=True)
class Candidate:
    """A message the vector index returned for a query, with the scores it found.

    `semantic`: cosine similarity of the message's dense point of the query's model to the
    query vector (None: no such point, or it scored below min_score, or no vector query).
    `keyword`: BM25 score of its keyword point (None: not among the keyword candidates, or
    no text query). `point_id` and `record` are the dense point's when it has one.
    """

    point_id: str
    semantic: float | None
    record: VectorRecord
    keyword: float | None = None


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
    or at one of those timestamps (in the selected session) matches (DeleteVectors).
    `unowned_timestamps` adds, as a third alternative, the points of no message id at those
    timestamps (a message delete takes the points of exactly its messages: those with their
    ids, and points the caller wrote without an id at their (session, timestamp); never a
    point of another message at the same timestamp).
    `indexed_before` protects points written after the delete was decided (a clear applied
    from the event log never removes a point written after the clear).
    """

    tenant: str
    session_id: str | None = None
    timestamps: tuple[int, ...] = ()
    message_ids: tuple[str, ...] = ()
    model_id: str | None = None
    indexed_before: int | None = None
    unowned_timestamps: tuple[int, ...] = ()


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


@dataclass(frozen=True, slots=True)
class PointFilter:
    """Which of a tenant's points a query may return: the scope (within `sessions` when set)
    and, when `model_id` is set, that model (`legacy`: vectors without a model id count as it
    too), minus `exclude_roles` (a point without a role is a "user", see
    VectorRecord.effective_role) and minus the points of the messages `exclude_message_ids`."""

    tenant: str
    scope: Scope = Scope()
    model_id: str | None = None
    legacy: bool = False
    exclude_roles: tuple[str, ...] = ()
    exclude_message_ids: tuple[str, ...] = ()
    # Only points of these sessions (a user-bound caller's own: a hard boundary beside the
    # tenant, in every query, the pool and the keyword IDF corpus too); None: any session.
    sessions: tuple[str, ...] | None = None
    # A user-bound caller's user: only points stamped with it or not stamped at all
    # (VectorRecord.owner), beside `sessions` wherever it applies; None: any owner.
    reader: str | None = None

    def admits_beyond_scope(self, record: VectorRecord) -> bool:
        """Whether a point of the tenant's scope also meets the model, role and message
        conditions: the same rule the adapters push into the engine (storage/qdrant/points.py
        point_filter), for results of a scope-only query."""
        if self.model_id is not None and record.model_id != self.model_id:
            if not (self.legacy and record.model_id is None):
                return False
        if record.effective_role in self.exclude_roles:
            return False
        return not (record.message_id and record.message_id in self.exclude_message_ids)

    @property
    def scope_only(self) -> PointFilter:
        """The tenant's scope (and sessions), without the model, role and message conditions."""
        return PointFilter(self.tenant, self.scope, sessions=self.sessions, reader=self.reader)


@dataclass(frozen=True, slots=True)
class IndexQuery:
    """A semantic query (`vector`), a keyword query (`text`) or both (hybrid), among the
    points `filter` admits.

    - `vector`: the `limit` dense points of its dimension nearest to it, cosine similarity
      at least `min_score` (None: any).
    - `text`: the `limit` keyword points with the best BM25 score for it (IDF over the
      tenant's keyword points); the model condition does not apply to keyword points.
    - Both: the union, one Candidate per message (VectorRecord.message_key). A message
      found by keyword also gets the semantic score of its dense point, when it has one
      that `filter` and `min_score` admit, so every candidate's semantic score is exact.

    `pool_limit` > 0 also asks which models the `pool_limit` nearest dense points of the
    scope hold, whatever their model and role (what a search filtering after retrieval
    would have seen; SearchMemory reports and warns about them).
    """

    filter: PointFilter
    limit: int
    vector: Sequence[float] = ()
    min_score: float | None = None
    pool_limit: int = 0
    text: str = ""


@dataclass(frozen=True, slots=True)
class Deleted:
    """What a delete removed: dense points (vectors) and keyword points."""

    vectors: int = 0
    keywords: int = 0

    def __add__(self, other: Deleted) -> Deleted:
        return Deleted(self.vectors + other.vectors, self.keywords + other.keywords)


@dataclass(frozen=True, slots=True)
class IndexResult:
    candidates: list[Candidate]
    pool_models: Counter[str | None] = field(default_factory=Counter)  # None: vectors without a model id


class VectorIndex(Protocol):
    """What VectorRecall needs from a vector engine. Adapters: storage/qdrant/server.py
    (a Qdrant server) and storage/qdrant/edge.py (Qdrant Edge in-process, the embedded default).

    One collection (server) or shard (Edge) per vector dimension. Every failure of the engine
    raises StorageUnavailable; every call is bounded by the caller's deadline (domain/deadline.py).
    """

    @property
    def target(self) -> str: ...

    @property
    def shared(self) -> bool:
        """Whether other processes may write it too (a Qdrant server shared by replicas): then
        this process does not hear of every message delete (VectorRecall reads back after indexing)."""

    async def open(self) -> None: ...

    async def close(self) -> None: ...

    async def ping(self) -> None: ...

    async def upsert(self, points: Sequence[VectorPoint], indexed_at: int) -> list[str]:
        """Insert or replace (same id) dense points; durable once it returns. Their ids, in order."""

    async def upsert_keywords(self, points: Sequence[KeywordPoint], indexed_at: int) -> list[str]:
        """Insert or replace (same id) keyword points; durable once it returns. Their ids, in order."""

    async def delete(self, selector: VectorSelector) -> Deleted:
        """Delete the selected dense points in every dimension and, unless the selector names
        a model, the selected keyword points; says how many of each there were."""

    async def query(self, query: IndexQuery) -> IndexResult: ...

    async def has_point(self, dimension: int, point_id: str) -> bool: ...

    async def has_keyword_point(self, point_id: str) -> bool: ...

    async def model_dimensions(self, tenant: str, model_id: str) -> list[int]:
        """Dimensions that hold the tenant's points of `model_id`, ascending."""

    async def stats(self, tenant: str) -> tuple[list[ModelCount], list[CollectionCount]]:
        """The tenant's dense points per (model, dimension), most first, and per collection
        (the keyword index is the collection of dimension 0)."""

    async def dimensions(self) -> list[int]:
        """The dimensions that have dense points (a collection or shard each), ascending."""

    async def scroll(
        self, tenant: str, dimension: int, offset: str | None, limit: int
    ) -> tuple[list[VectorPoint], str | None]:
        """Up to `limit` of the tenant's dense points of one dimension (vectors as stored:
        normalized for cosine), by point id from `offset`, and the offset of the next page
        (None: no more). What `memoryd export --vectors` reads."""

    async def messages(
        self, tenant: str, dimension: int, offset: str | None, limit: int
    ) -> tuple[list[tuple[str, str]], str | None]:
        """(session id, message id) of up to `limit` of the tenant's points of one dimension (0:
        keyword points), by point id from `offset`, and the next offset (None: no more); the
        message id is empty for a point of no message. What the synchronizer's rebuild and the
        index-vs-store comparison read."""
