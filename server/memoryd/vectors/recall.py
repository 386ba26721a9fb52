"""VectorRecall, the vector side of recall: the VectorService operations (SearchMemory,
upserts, deletes, stats) and the hooks that keep the vector index (domain.vectors.VectorIndex:
a Qdrant server or Qdrant Edge) in step with the message store. docs/VECTORS.md has the design.

The index follows the message store's event log through its log consumer (vectors/sync.py's
`RecallIndexer`, run by the consumer runtime: consumers/runtime.py, here or in the engine
process); it alone writes messages' points, and this class sees it only through its
positions (`self.positions`). As `MessageHooks` (domain/hooks.py) this class only hastens it:
- saved / rewritten messages need nothing: their commit wakes the synchronizer;
- deleted messages lose their points at once, by message id, when the index answers within
  HOOK_DELETE_SECONDS (the synchronizer applies the same delete from the log regardless);
- clearing vectors (ClearSession / ClearAll) answers CLEARED, or DEFERRED when the index did
  not answer: the clear is in the log (its event), and the synchronizer applies it. Clearing
  all also deletes the legacy-model marker.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import time
from collections import Counter
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, replace

from memoryd import shutdown
from memoryd.consumers.runtime import Positions, Runtime
from memoryd.domain import deadline, recall
from memoryd.domain.errors import (
    FailedPrecondition,
    FieldViolation,
    InvalidArgument,
    MemorydError,
    StorageFull,
    StorageUnavailable,
)
from memoryd.domain.hooks import MessageHooks
from memoryd.domain.models import ClearOutcome, ClearResult, ClearTarget, Message, now_ms
from memoryd.domain.store import Store
from memoryd.domain.summaries import FoundSlice, SliceQuery
from memoryd.domain.vectors import (
    LEGACY_KEY,
    LEGACY_NAMESPACE,
    Candidate,
    CollectionCount,
    Deleted,
    IndexQuery,
    KeywordPoint,
    ModelCount,
    PointFilter,
    VectorIndex,
    VectorPoint,
    VectorRecord,
    VectorSelector,
)
from memoryd.domain.windows import WindowMemo
from memoryd.observability.metrics import VECTOR_SYNC_LAG, VECTOR_SYNC_RETRIES
from memoryd.vectors.records import indexed_text
from memoryd.vectors.slices import VectorSlices, slice_selector
from memoryd.vectors.sync import Embedder, RecallIndexer

log = logging.getLogger(__name__)

KEYWORD_DIMENSION = 0  # the keyword index's row among the collections (VectorIndex.stats)
# How long a hook's delete may wait for the index before it leaves the work to the synchronizer.
HOOK_DELETE_SECONDS = 2.0
# How long a search waits for its wait_for_event_seq when the call has no deadline.
WAIT_SECONDS = 10.0
WAIT_MARGIN_SECONDS = 0.1
# A tenant's legacy-model marker is read once per this many seconds, not per search (it
# changes only when all vectors are cleared; another replica's clear shows up this late).
LEGACY_CACHE_SECONDS = 10.0
LEGACY_CACHE_TENANTS = 10_000


@dataclass(frozen=True, slots=True)
class SearchResult:
    hits: list[recall.RecallHit]
    model_id: str  # empty without a semantic part
    excluded_other_models: int
    semantic: bool = True  # which parts ran
    keyword: bool = False


@dataclass(frozen=True, slots=True)
class Stats:
    models: list[ModelCount]
    collections: list[CollectionCount]
    legacy_model: str
    keyword_points: int = 0
    indexed_through_seq: int = 0  # the tenant's log applied through this seq
    event_seq: int = 0  # the tenant's newest event seq
    rebuilding: bool = False


class VectorRecall(MessageHooks):
    has_vector_store = True

    def __init__(
        self,
        index: VectorIndex,
        store: Store,
        *,
        defaults: recall.RecallDefaults = recall.RecallDefaults(),
        control_kinds: Sequence[str] = recall.DEFAULT_CONTROL_KINDS,
        embedder: Embedder | None = None,
        index_message_keywords: bool = True,
        sync_poll_seconds: float = 1.0,
        sync_max_backoff_seconds: float = 30.0,
        sync_batch: int = 500,
        sync_lease: bool = False,
        runtime: Runtime | None = None,
        positions: Positions | None = None,
    ) -> None:
        """The index's log consumer (`self.indexer`) runs in `runtime` (by default one of its
        own: poll, backoff and lease from the `sync_*` arguments), and this class waits on its
        positions there; or, given `positions`, another process runs it (the engine process:
        consumers/remote.py) and `runtime` is None."""
        self.index = index
        self.store = store
        self.defaults = defaults
        self.control_kinds = tuple(control_kinds)
        self.embedder = embedder
        self.index_message_keywords = index_message_keywords
        self._dimensions: dict[tuple[str, str], int] = {}  # (tenant, model) -> dimension, seen in Qdrant
        self._warned_models: set[tuple[str, str]] = set()
        self._legacy: dict[str, tuple[str, float]] = {}  # tenant -> (legacy model, read until)
        self._marker_warned = False
        self.indexer = RecallIndexer(
            store,
            index,
            embedder=embedder,
            index_message_keywords=index_message_keywords,
            control_kinds=self.control_kinds,
            batch=sync_batch,
            on_dimension=self.saw_dimension,
            dimension_of=self._dimension_of,
        )
        self.runtime: Runtime | None = None
        self.positions: Positions
        if positions is not None:
            self.positions = positions
        else:
            self.runtime = runtime or Runtime(
                store, poll_seconds=sync_poll_seconds, max_backoff_seconds=sync_max_backoff_seconds, lease=sync_lease
            )
            self.positions = self.runtime.add(
                self.indexer, lag_gauge=VECTOR_SYNC_LAG, retry_counter=VECTOR_SYNC_RETRIES
            )
        self.slices = VectorSlices(self)

    # -- lifecycle -------------------------------------------------------------
    async def open(self) -> None:
        await self.index.open()

    async def background(self) -> None:
        """What keeps the index in step, until cancelled: the runtime here, or following the
        engine process's positions."""
        if self.runtime is not None:
            await self.runtime.run()
        else:
            await self.positions.run()  # type: ignore[attr-defined]

    async def close(self) -> None:
        if self.runtime is not None:
            await self.runtime.close()
        if self.embedder is not None:
            await self.embedder.close()
        await self.index.close()

    async def watch_health(self, report: Callable[[bool], Awaitable[None]], interval: float) -> None:
        """Probe Qdrant; report changes, and keep reporting "down" while it stays down (the
        message store's health loop may set every service back to SERVING meanwhile)."""
        last: bool | None = None
        while True:
            shutdown.raise_if_cancelled()
            try:
                async with asyncio.timeout(max(interval, 1.0)):
                    await self.index.ping()
                healthy = True
            except (MemorydError, TimeoutError):
                healthy = False
            if healthy != last:
                if not healthy:
                    log.warning("vector store unavailable")
                elif last is not None:
                    log.info("vector store available again")
            if healthy != last or not healthy:
                await report(healthy)
            last = healthy
            await asyncio.sleep(interval)

    # -- dimensions --------------------------------------------------------------
    async def _dimension_of(self, tenant: str, model_id: str) -> int | None:
        known = self._dimensions.get((tenant, model_id))
        if known is not None:
            return known
        dims = await self.index.model_dimensions(tenant, model_id)
        if dims:
            self._dimensions[(tenant, model_id)] = dims[0]
            return dims[0]
        return None

    async def check_dimensions(self, tenant: str, items: Sequence[tuple[str, str, int]]) -> None:
        """items: (field, model_id, dimension). A model's vectors all have one dimension."""
        violations = []
        seen: dict[str, int] = {}
        for field, model_id, dimension in items:
            if not model_id:
                continue
            expected = seen.get(model_id)
            if expected is None:
                expected = await self._dimension_of(tenant, model_id) or dimension
                seen[model_id] = expected
            if dimension != expected:
                violations.append(
                    FieldViolation(field, f"has {dimension} dimensions; model {model_id!r} uses {expected}")
                )
        if violations:
            raise InvalidArgument(violations)

    def saw_dimension(self, tenant: str, model_id: str, dimension: int) -> None:
        self._dimensions[(tenant, model_id)] = dimension

    def _forget_dimensions(self, tenant: str, model_id: str | None = None) -> None:
        for key in [k for k in self._dimensions if k[0] == tenant and (model_id is None or k[1] == model_id)]:
            del self._dimensions[key]

    # -- VectorService -----------------------------------------------------------
    async def upsert(self, tenant: str, points: Sequence[VectorPoint]) -> list[str]:
        """Caller-supplied vectors; points with text also get their message's keyword point."""
        await self.check_dimensions(
            tenant, [(f"points[{i}].vector", p.record.model_id or "", len(p.vector)) for i, p in enumerate(points)]
        )
        indexed_at = now_ms()
        ids = await self.index.upsert(points, indexed_at)
        await self.index.upsert_keywords(
            [KeywordPoint(p.tenant, p.record) for p in points if p.record.text], indexed_at
        )
        for point in points:
            if point.record.model_id:
                self._dimensions[(tenant, point.record.model_id)] = len(point.vector)
        return ids

    async def embed_query(self, text: str) -> tuple[list[float], str]:
        if self.embedder is None:
            raise FailedPrecondition("no embedder is configured; send query_vector", reason="EMBEDDER_NOT_CONFIGURED")
        [vector] = await self.embedder.embed([text])
        return vector, self.embedder.model_id

    async def _with_vector(self, query: recall.RecallQuery) -> recall.RecallQuery:
        """The query with its semantic part: the caller's vector, else the server embedder's
        vector of the text when the semantic part weighs something. Without an embedder a text
        query is keyword-only; a semantic-only one (keyword_weight 0) is FAILED_PRECONDITION."""
        if query.vector or not query.text.strip() or query.keyword_weight >= 1:
            return query
        if self.embedder is None:
            if query.keyword_weight <= 0:
                raise FailedPrecondition(
                    "a semantic search (keyword_weight 0) needs query_vector or a server embedder",
                    reason="EMBEDDER_NOT_CONFIGURED",
                )
            if not self.index_message_keywords:
                raise FailedPrecondition(
                    "keyword indexing of saved messages is off (MEMORYD_INDEX_MESSAGE_KEYWORDS) and no embedder "
                    "is configured: send query_vector",
                    reason="EMBEDDER_NOT_CONFIGURED",
                )
            return query
        vector, model_id = await self.embed_query(query.text)
        return replace(query, vector=vector, model_id=model_id)

    async def legacy_model(self, tenant: str, model_id: str) -> str:
        """The model legacy vectors count as; the first search records the current one."""
        cached = self._legacy.get(tenant)
        if cached is not None and cached[1] > time.monotonic():
            return cached[0]
        try:
            entry = await self.store.get_metadata(tenant, LEGACY_NAMESPACE, LEGACY_KEY)
            recorded = entry.data.get("model_id") if entry is not None else None
            if not (isinstance(recorded, str) and recorded):
                await self.store.save_metadata(
                    tenant, LEGACY_NAMESPACE, LEGACY_KEY, {"model_id": model_id, "recorded_at": now_ms()}, now_ms()
                )
                recorded = model_id
            if len(self._legacy) >= LEGACY_CACHE_TENANTS:
                self._legacy.clear()
            self._legacy[tenant] = (recorded, time.monotonic() + LEGACY_CACHE_SECONDS)
            return recorded
        except MemorydError as error:
            # Without the marker, legacy vectors count as the query's model; the next search retries.
            if not self._marker_warned:
                self._marker_warned = True
                log.warning(
                    "legacy-model marker unavailable (%s); legacy vectors count as the query model", error.reason
                )
        return model_id

    async def search(self, tenant: str, query: recall.RecallQuery) -> SearchResult:
        query = await self._with_vector(query)
        semantic = query.semantic
        if query.sessions is not None and not query.sessions:  # a user-bound caller with no sessions
            return SearchResult([], query.model_id if semantic else "", 0, semantic, query.keyword)
        if semantic:
            await self.check_dimensions(tenant, [("query_vector", query.model_id, len(query.vector))])
            legacy = await self.legacy_model(tenant, query.model_id)
        else:
            legacy = ""
        flt = query.point_filter(tenant, legacy) if semantic else replace(query, model_id="").point_filter(tenant, "")
        slices = await self._slices_for(tenant, query) if query.slices is not recall.SliceMode.OFF else []
        if slices and query.slices is recall.SliceMode.FIRST:
            flt = replace(flt, sessions=tuple(sorted({s.session_id for s in slices})))
        found = await self.index.query(
            IndexQuery(
                flt,
                query.candidate_limit,
                query.vector if semantic else (),
                min_score=query.min_score or None,  # 0 keeps all
                pool_limit=query.candidate_limit if semantic else 0,
                text=query.text if query.keyword else "",
            )
        )
        excluded = recall.excluded_models(found.pool_models, query.model_id, legacy) if semantic else Counter()
        self._warn_excluded(query.model_id, excluded)
        candidates = found.candidates
        if slices:
            candidates = await self._slice_candidates(candidates, flt, query, slices)

        scored = recall.relevances(candidates, query)
        # One read for the lift's windows, those of the likely hits and their texts (and, for
        # a question asking when, every candidate's text): the points carry no message text.
        read = WindowMemo(functools.partial(self.store.context_windows, tenant))
        read.read_ahead(recall.likely_windows(scored, query))
        read.read_ahead(recall.ahead_texts(scored, query))
        adjacent = await recall.adjacency(scored, query, read)
        scored = await recall.with_texts(scored, query, read, indexed_text)
        lifts = recall.sliced(scored, slice_shares(slices)) if query.slices is recall.SliceMode.FUSED else None
        ranked = recall.rank(scored, query, query.reference_time or now_ms(), adjacent, lifts)
        hits = await recall.select_hits(ranked, query, read, indexed_text)
        return SearchResult(hits, query.model_id if semantic else "", sum(excluded.values()), semantic, query.keyword)

    async def _slices_for(self, tenant: str, query: recall.RecallQuery) -> list[FoundSlice]:
        """The best `top_k` slices for a SearchMemory with `slices` (in its scope's session, if any)."""
        found = await self.slices.search(
            tenant,
            SliceQuery(
                text=query.text,
                vector=tuple(query.vector),
                model_id=query.model_id,
                top_k=query.top_k,
                keyword_weight=query.keyword_weight,
                fusion=query.fusion,
                session_id=query.session_id if query.scope is recall.RecallScope.SESSION else "",
                sessions=query.sessions,
                reference_time=query.reference_time,
                reader=query.reader,
            ),
        )
        return found.slices

    async def _slice_candidates(
        self, candidates: list[Candidate], flt: PointFilter, query: recall.RecallQuery, slices: list[FoundSlice]
    ) -> list[Candidate]:
        """FIRST: the candidates within the slices' ranges. FUSED: the candidates, plus those
        of a query within the slices' sessions (the slices' messages), inside their ranges."""
        if query.slices is recall.SliceMode.FUSED:
            more = await self.index.query(
                IndexQuery(
                    replace(flt, sessions=tuple(sorted({s.session_id for s in slices}))),
                    query.candidate_limit,
                    query.vector if query.semantic else (),
                    min_score=query.min_score or None,
                    text=query.text if query.keyword else "",
                )
            )
            seen = {c.record.message_key for c in candidates}
            candidates = candidates + [
                c for c in more.candidates if c.record.message_key not in seen and covering(slices, c.record)
            ]
            return candidates
        return [c for c in candidates if covering(slices, c.record)]

    def _warn_excluded(self, model_id: str, excluded: Counter[str]) -> None:
        new = sorted(m for m in excluded if (model_id, m) not in self._warned_models)
        if new:
            self._warned_models.update((model_id, m) for m in new)
            log.warning(
                "vectors of other models excluded from recall: query_model=%s excluded_models=%s "
                "(re-embed them with the query model, or delete them with DeleteVectors)",
                model_id,
                ",".join(new),
            )

    async def delete(self, selector: VectorSelector, *, clear_marker: bool = False) -> Deleted:
        removed = await self.index.delete(selector)
        if selector.model_id is not None:
            self._forget_dimensions(selector.tenant, selector.model_id)
        elif selector.session_id is None:
            self._forget_dimensions(selector.tenant)
        if clear_marker:
            self._legacy.pop(selector.tenant, None)
            await self.store.delete_metadata(selector.tenant, LEGACY_NAMESPACE, LEGACY_KEY, now_ms())
        return removed

    async def stats(self, tenant: str) -> Stats:
        models, collections = await self.index.stats(tenant)
        entry = await self.store.get_metadata(tenant, LEGACY_NAMESPACE, LEGACY_KEY)
        legacy = entry.data.get("model_id", "") if entry is not None else ""
        status = self.positions.status(tenant)
        return Stats(
            models,
            collections,
            legacy if isinstance(legacy, str) else "",
            sum(c.count for c in collections if c.dimension == KEYWORD_DIMENSION),
            indexed_through_seq=self.positions.position(tenant),
            event_seq=(await self.store.event_bounds(tenant))[1],
            rebuilding=status is not None and status.rebuilding,
        )

    async def wait_indexed(self, tenant: str, seq: int) -> None:
        """Return once the index holds every change of the tenant's log through `seq`, or raise
        IndexBehind when the caller's deadline comes first."""
        if seq <= 0 or self.positions.position(tenant) >= seq:
            return
        remaining = deadline.remaining()
        try:
            # Short of the deadline, so the caller gets the reason, not DEADLINE_EXCEEDED.
            async with asyncio.timeout(
                WAIT_SECONDS if remaining is None else max(0.0, remaining - WAIT_MARGIN_SECONDS)
            ):
                await self.positions.wait_for(tenant, seq)
        except TimeoutError:
            through = self.positions.position(tenant)
            status = self.positions.status(tenant)
            error = (status.last_error if status is not None else "") or self.positions.last_error
            why = f": {error}" if error else ""
            raise IndexBehind(
                f"the recall index is applied through event {through}, not yet {seq}{why}",
                metadata={"indexed_through_seq": str(through)},
            ) from None

    # -- consistency (MessageHooks) -------------------------------------------------
    async def _delete_now(self, selector: VectorSelector) -> tuple[ClearOutcome, int]:
        """Delete at once when the index answers in time; else DEFERRED: the change is in the
        log, and the synchronizer applies it when the index is back."""
        remaining = deadline.remaining()
        token = deadline.set_remaining(
            min(HOOK_DELETE_SECONDS, remaining) if remaining is not None else HOOK_DELETE_SECONDS
        )
        try:
            removed = await self.index.delete(selector)
            return ClearOutcome.CLEARED, removed.vectors
        except (StorageUnavailable, StorageFull):  # a full disk may be freed: the log keeps it
            self.positions.wake(selector.tenant)
            return ClearOutcome.DEFERRED, 0
        finally:
            deadline.reset(token)

    async def messages_deleted(self, tenant: str, session_id: str, removed: Sequence[Message]) -> None:
        if removed:
            ids = tuple(m.id for m in removed if m.id)
            stamps = tuple(sorted({m.timestamp for m in removed}))
            await self._delete_now(
                VectorSelector(tenant, session_id=session_id, message_ids=ids, unowned_timestamps=stamps)
            )

    async def summaries_deleted(self, tenant: str, session_id: str | None, cleared_at: int) -> None:
        # At once when the index answers (one delete); the synchronizer applies the clear's
        # event again from the log, so a delete the index cannot take now is not lost.
        await self._delete_now(slice_selector(tenant, session_id, cleared_at))

    async def clear_vectors(self, tenant: str, session_id: str | None) -> ClearResult:
        selector = VectorSelector(tenant, session_id=session_id, indexed_before=now_ms() + 1)
        if session_id is None:
            self._forget_dimensions(tenant)
            self._legacy.pop(tenant, None)
            try:
                await self.store.delete_metadata(tenant, LEGACY_NAMESPACE, LEGACY_KEY, now_ms())
            except MemorydError as error:
                log.warning("could not delete the legacy-model marker (%s)", error.reason)
        outcome, removed = await self._delete_now(selector)
        return ClearResult(ClearTarget.VECTORS, outcome, removed)

    # Saves and rewrites need no hook: their commit wakes the synchronizer (the store's notifier).

    def indexable(self, message: Message) -> bool:
        return self.indexer.indexable(message)


class IndexBehind(StorageUnavailable):
    """SearchMemory's wait_for_event_seq was not reached before the deadline."""

    reason = "INDEX_BEHIND"


def covering(slices: Sequence[FoundSlice], record: VectorRecord) -> FoundSlice | None:
    """The best of `slices` whose range holds the message of `record` (by session and time)."""
    for found in slices:  # best first
        if found.session_id == record.session_id and found.first_ts <= record.timestamp <= found.last_ts:
            return found
    return None


def slice_shares(slices: Sequence[FoundSlice]) -> Callable[[VectorRecord], float]:
    """A message's share of the slice lift: its best covering slice's relevance over the best
    slice's (0 when no slice covers it)."""
    best = max((s.ranked.relevance for s in slices), default=0.0)

    def share(record: VectorRecord) -> float:
        found = covering(slices, record)
        return found.ranked.relevance / best if found is not None and best > 0 else 0.0

    return share
