"""Summary slices in the vector index: their points (`slice_points`, pure), their search
(SearchSummaries, SearchMemory's `slices`) and their deletes. docs/VECTORS.md, "Slices".

A slice's points live under the tenant key `slice_tenant(tenant)` ("<tenant> slices": a
tenant never has a space), beside the messages' points in the same collections: every
message search, count, stat, export and delete filters on the tenant, so none of them sees a
slice, and a slice search (which filters on the slice key) never sees a message. The key is
also the slices' own BM25 IDF corpus and HNSW graph (Qdrant keys both by tenant).

A slice point is a VectorRecord: `session_id`; `message_id` = slice_ref (the slice's range,
the time of its first message and its summary id); `timestamp` = the time of its last
message (recency and the query's dates read it); `text` = the summary. Its ids follow from
those, so indexing a slice again replaces its points.

Slices are indexed and deleted by the recall index's log consumer (vectors/sync.py) from the event log:
SUMMARY_SAVED indexes the slice as stored (`stored_slice`, `slice_span`), a clear with the
metadata target (ClearSession / ClearAll, ForgetUser, retention) deletes the session's
(tenant's) slice points written before it, and a rebuild indexes every stored slice again
(`stored_slices`) and deletes the points of slices the store no longer has. A slice point's
`indexed_at` is its summary's create_time (the SUMMARY_SAVED event's time), so a clear, applied
at once or from the log, takes exactly the slices saved before it. Only a caller's vector
(SaveSummary with `vector`, stored nowhere else) is indexed synchronously (`VectorSlices.index`).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Sequence
from dataclasses import replace
from typing import Any, Protocol

from memoryd.consumers.runtime import Positions
from memoryd.domain import deadline, recall
from memoryd.domain.errors import FailedPrecondition, MemorydError
from memoryd.domain.models import now_ms
from memoryd.domain.store import Store
from memoryd.domain.summaries import (
    SLICES_NAMESPACE,
    FoundSlice,
    SliceQuery,
    SlicesFound,
    Summary,
    slice_key,
    slices_namespace,
)
from memoryd.domain.vectors import (
    IndexQuery,
    KeywordPoint,
    PointFilter,
    Scope,
    VectorIndex,
    VectorPoint,
    VectorRecord,
    VectorSelector,
)

SLICE_TENANT_SUFFIX = " slices"
# How long SaveSummary waits for the synchronizer to index its slice (read-your-writes).
SAVE_WAIT_SECONDS = 2.0
log = logging.getLogger(__name__)


def slice_tenant(tenant: str) -> str:
    return tenant + SLICE_TENANT_SUFFIX


def slice_ref(summary: Summary, first_ts: int) -> str:
    return f"{summary.from_seq}-{summary.to_seq}-{first_ts}-{summary.id}"


def parse_ref(ref: str) -> tuple[int, int, int, str] | None:
    """(from_seq, to_seq, first_ts, summary id) of a slice point's message_id."""
    parts = ref.split("-", 3)
    if len(parts) != 4 or not all(p.isdigit() for p in parts[:3]):
        return None
    return int(parts[0]), int(parts[1]), int(parts[2]), parts[3]


def slice_points(
    tenant: str, summary: Summary, first_ts: int, last_ts: int, vector: Sequence[float] = (), model_id: str = ""
) -> tuple[KeywordPoint, VectorPoint | None]:
    """The points of a slice: its keyword point, and its dense point when it has a vector.
    `first_ts` / `last_ts`: the times of the first and last messages it covers."""
    record = VectorRecord(
        session_id=summary.session_id,
        timestamp=last_ts,
        message_id=slice_ref(summary, first_ts),
        text=summary.text,
        owner=summary.owner,
    )
    keyword = KeywordPoint(slice_tenant(tenant), record)
    dense = VectorPoint(slice_tenant(tenant), list(vector), replace(record, model_id=model_id)) if vector else None
    return keyword, dense


def slice_selector(tenant: str, session_id: str | None, cleared_at: int | None = None) -> VectorSelector:
    """Every point of the slices of a session (None: of the tenant) saved until `cleared_at`
    (the clear's time; None: now). A slice saved after the clear keeps its points."""
    before = now_ms() if cleared_at is None else cleared_at
    return VectorSelector(slice_tenant(tenant), session_id=session_id, indexed_before=before + 1)


def slice_identity(session_id: str, ref: str) -> tuple[str, str] | None:
    """(session, "from_seq/summary id") of a slice point (None: not a slice ref): what a
    point and its stored slice share (the ref's time may differ once messages went)."""
    parsed = parse_ref(ref)
    return None if parsed is None else (session_id, f"{parsed[0]}/{parsed[3]}")


async def slice_span(store: Store, tenant: str, summary: Summary) -> tuple[int, int]:
    """Times of the first and last stored messages of the range (the slice's time when none is)."""
    first = await store.messages_by_seq(tenant, summary.session_id, summary.from_seq, summary.to_seq, 1)
    last = await store.messages_by_seq(
        tenant, summary.session_id, summary.from_seq, summary.to_seq, 1, newest_first=True
    )
    if not first or not last:
        return summary.create_time, summary.create_time
    return first[0].timestamp, last[0].timestamp


async def stored_slice(store: Store, tenant: str, session_id: str, from_seq: int, summary_id: str) -> Summary | None:
    """The slice a SUMMARY_SAVED event names, as stored now (None: deleted or replaced since;
    `summary_id` "": whichever is stored)."""
    entry = await store.get_metadata(tenant, slices_namespace(session_id), slice_key(from_seq))
    if entry is None:
        return None
    summary = Summary.from_record(session_id, entry.data)
    return summary if summary.id == summary_id or not summary_id else None


async def stored_slices(store: Store, tenant: str, page: int) -> AsyncIterator[list[Summary]]:
    """Every stored slice of the tenant, `page` at a time (a rebuild)."""
    after: tuple[str, str] | None = None
    while True:
        entries = await store.list_metadata_by_prefix(tenant, SLICES_NAMESPACE, after, page)
        if not entries:
            return
        yield [Summary.from_record(e.namespace[len(SLICES_NAMESPACE) :], e.data) for e in entries]
        if len(entries) < page:
            return
        after = (entries[-1].namespace, entries[-1].key)


class SliceHost(Protocol):
    """What VectorSlices uses of VectorRecall (vectors/recall.py)."""

    index: VectorIndex
    store: Store
    embedder: Any
    positions: Positions

    async def check_dimensions(self, tenant: str, items: Sequence[tuple[str, str, int]]) -> None: ...

    async def embed_query(self, text: str) -> tuple[list[float], str]: ...

    def saw_dimension(self, tenant: str, model_id: str, dimension: int) -> None: ...


class VectorSlices:
    """The SliceIndex (domain/summaries.py) over VectorRecall's index and embedder."""

    def __init__(self, vectors: SliceHost) -> None:
        self.vectors = vectors

    async def index(self, tenant: str, summary: Summary, vector: Sequence[float], model_id: str) -> None:
        """A slice with the caller's vector (SaveSummary's `vector`): its points now, because that
        vector is stored nowhere the synchronizer could read it from (the synchronizer writes
        the keyword point, and an embedder's vector, from the log: docs/VECTORS.md, "Slices")."""
        vectors = self.vectors
        await vectors.check_dimensions(slice_tenant(tenant), [("vector", model_id, len(vector))])
        first_ts, last_ts = await slice_span(vectors.store, tenant, summary)
        keyword, dense = slice_points(tenant, summary, first_ts, last_ts, vector, model_id)
        # Indexed "at" the save: a clear after the save takes them, one before it never does.
        await vectors.index.upsert_keywords([keyword], summary.create_time)
        if dense is not None:
            await vectors.index.upsert([dense], summary.create_time)
            vectors.saw_dimension(dense.tenant, model_id, len(dense.vector))

    async def saved(self, tenant: str) -> None:
        """Wait (briefly) until the synchronizer indexed the slice just saved, so a search right
        after SaveSummary finds it; past SAVE_WAIT_SECONDS the call returns and the slice is
        indexed when the synchronizer gets to it (the log keeps it)."""
        positions = self.vectors.positions
        if not positions.running:
            return  # `memoryd reindex`, tests: nothing applies the log meanwhile
        seq = (await self.vectors.store.event_bounds(tenant))[1]
        remaining = deadline.remaining()
        try:
            async with asyncio.timeout(SAVE_WAIT_SECONDS if remaining is None else min(SAVE_WAIT_SECONDS, remaining)):
                await positions.wait_for(tenant, seq)
        except (TimeoutError, MemorydError):  # saved: the log keeps it
            log.info("summary slice saved; the index synchronizer indexes it when it catches up")

    async def _with_vector(self, query: SliceQuery) -> SliceQuery:
        if query.vector or not query.text.strip() or query.keyword_weight >= 1:
            return query
        if self.vectors.embedder is None:
            if query.keyword_weight <= 0:
                raise FailedPrecondition(
                    "a semantic search (keyword_weight 0) needs query_vector or a server embedder",
                    reason="EMBEDDER_NOT_CONFIGURED",
                )
            return query  # keyword-only: a slice's keywords are always indexed
        vector, model_id = await self.vectors.embed_query(query.text)
        return replace(query, vector=tuple(vector), model_id=model_id)

    async def search(self, tenant: str, query: SliceQuery) -> SlicesFound:
        query = await self._with_vector(query)
        q = recall.RecallQuery(
            vector=list(query.vector),
            model_id=query.model_id,
            text=query.text,
            top_k=query.top_k,
            time_weight=0.0,
            keyword_weight=query.keyword_weight,
            fusion=query.fusion,
            neighbor_weight=0.0,
            context_window=0,
            sessions=query.sessions,
        )
        semantic, keyword = q.semantic, q.keyword
        if query.sessions is not None and not query.sessions:
            return SlicesFound([], q.model_id if semantic else "", semantic, keyword)
        key = slice_tenant(tenant)
        if semantic:
            await self.vectors.check_dimensions(key, [("query_vector", q.model_id, len(q.vector))])
        flt = PointFilter(
            key,
            Scope(session_id=query.session_id),
            model_id=q.model_id if semantic else None,
            sessions=query.sessions,
            reader=query.reader,
        )
        found = await self.vectors.index.query(
            IndexQuery(flt, q.candidate_limit, q.vector if semantic else (), text=q.text if keyword else "")
        )
        scored = recall.relevances(found.candidates, q)
        ranked = recall.rank(scored, q, query.reference_time or now_ms())[: q.top_k]
        slices = []
        for r in ranked:
            parsed = parse_ref(r.candidate.record.message_id)
            if parsed is None:
                continue
            from_seq, to_seq, first_ts, summary_id = parsed
            slices.append(
                FoundSlice(
                    r.candidate.record.session_id,
                    summary_id,
                    from_seq,
                    to_seq,
                    first_ts,
                    r.candidate.record.timestamp,
                    r,
                )
            )
        return SlicesFound(slices, q.model_id if semantic else "", semantic, keyword)
