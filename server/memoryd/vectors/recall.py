"""VectorRecall, the vector side of recall: the VectorService operations (SearchMemory,
upserts, deletes, stats) and the hooks that keep the vector index (domain.vectors.VectorIndex:
a Qdrant server or Qdrant Edge) in step with the message store. docs/VECTORS.md has the design.

As `MessageHooks` (domain/hooks.py) it hears about every message change:
- saved / rewritten user and assistant messages are queued for background indexing: a
  keyword point always, a dense point too when an embedder is configured (rewrites only
  replace dense points that exist; a rewrite into nothing searchable removes both);
- deleted messages lose their points (by id and by (session, timestamp)); when Qdrant
  cannot take the delete, it goes to the durable outbox and the message call still succeeds;
- clearing vectors (ClearSession / ClearAll) answers CLEARED, or DEFERRED when the work
  went to the outbox. Clearing all also deletes the legacy-model marker.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import time
from collections import Counter
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from memoryd import shutdown
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
from memoryd.domain.models import ClearOutcome, ClearResult, ClearTarget, Message, RangeQuery, now_ms
from memoryd.domain.store import Store
from memoryd.domain.summaries import FoundSlice, SliceQuery
from memoryd.domain.vectors import (
    LEGACY_KEY,
    Candidate,
    PointFilter,
    LEGACY_NAMESPACE,
    CollectionCount,
    Deleted,
    IndexQuery,
    KeywordPoint,
    ModelCount,
    VectorIndex,
    VectorPoint,
    VectorRecord,
    VectorSelector,
)
from memoryd.domain.windows import WindowMemo
from memoryd.vectors.embedder import OpenAIEmbedder
from memoryd.vectors.indexer import Indexer, IndexJob
from memoryd.vectors.outbox import SYSTEM_TENANT, Outbox, OutboxDrainer
from memoryd.vectors.reconcile import DeletionReconciler
from memoryd.vectors.slices import VectorSlices, slice_selector

log = logging.getLogger(__name__)

INDEXED_ROLES = ("user", "assistant")
KEYWORD_DIMENSION = 0  # the keyword index's row among the collections (VectorIndex.stats)
# Existence checks after indexing read a session's seq range at once up to this span.
EXISTS_SPAN = 1000
# A batch reads its messages back from the store (to take back the points of any deleted
# while it was indexed) only for sessions that had a message delete since this long before
# the job was queued: a delete can commit between a save's commit and its hook (a concurrent
# PopMessages). Sessions whose last delete time is kept: past that the record starts afresh,
# and jobs queued up to then read back.
DELETE_GRACE_SECONDS = 5.0
DELETES_REMEMBERED = 10_000
# How long a consistency delete may wait for Qdrant before it goes to the outbox.
HOOK_DELETE_SECONDS = 2.0
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
    index_queue_length: int
    index_dropped: int
    outbox_pending: int
    keyword_points: int = 0


def _first_str(*values: Any) -> str:
    return next((v for v in values if isinstance(v, str) and v), "")


def message_text(message: Message) -> str:
    """What gets embedded: the visible text when the stored content is an envelope."""
    visible = (message.metadata or {}).get("visibleContent")
    return visible if isinstance(visible, str) and visible.strip() else message.content


def record_of_message(session_id: str, message: Message, model_id: str | None) -> VectorRecord:
    """Source fields from the message's metadata (`senderId`, `mentions`, `senderLabel`, ...)."""
    md = message.metadata or {}
    sender = md.get("sender") if isinstance(md.get("sender"), dict) else {}
    mentions: list[str] = []
    for item in md.get("mentions") or md.get("mentionedIds") or ():
        value = _first_str(item.get("id"), item.get("userId"), item.get("user_id")) if isinstance(item, dict) else item
        if isinstance(value, str) and value:
            mentions.append(value)
    for segment in message.segments or ():
        data = segment.get("data") or {}
        if segment.get("type") == "mention" and isinstance(data, dict):
            value = _first_str(data.get("user_id"), data.get("userId"), data.get("id"))
            if value:
                mentions.append(value)
    return VectorRecord(
        session_id=session_id,
        timestamp=message.timestamp,
        model_id=model_id,
        message_id=message.id,
        role=message.role,
        platform=message.platform or "",
        sender_id=_first_str(md.get("senderId"), md.get("sender_id"), md.get("userId"), sender.get("id")),
        mentioned_ids=tuple(dict.fromkeys(mentions)),
        speaker_label=_first_str(md.get("senderLabel"), md.get("speakerLabel"), sender.get("label"), sender.get("name")),
        text=message_text(message),
    )


class VectorRecall(MessageHooks):
    has_vector_store = True

    def __init__(
        self,
        index: VectorIndex,
        store: Store,
        *,
        defaults: recall.RecallDefaults = recall.RecallDefaults(),
        control_kinds: Sequence[str] = recall.DEFAULT_CONTROL_KINDS,
        embedder: OpenAIEmbedder | None = None,
        index_message_keywords: bool = True,
        index_concurrency: int = 10,
        index_queue_size: int = 500,
        outbox_poll_seconds: float = 5.0,
        outbox_max_backoff_seconds: float = 60.0,
        deletes_remembered: int = DELETES_REMEMBERED,
    ) -> None:
        self.index = index
        self.store = store
        self.defaults = defaults
        self.control_kinds = tuple(control_kinds)
        self.embedder = embedder
        self.index_message_keywords = index_message_keywords
        self.outbox = Outbox(store)
        self.drainer = OutboxDrainer(
            self.outbox,
            index,
            poll_seconds=outbox_poll_seconds,
            max_backoff_seconds=outbox_max_backoff_seconds,
            reconciler=DeletionReconciler(store, index, SYSTEM_TENANT),
        )
        # Saved messages get a keyword point (unless index_message_keywords is off), so the
        # indexer runs with or without an embedder.
        self.indexer = Indexer(self._index, concurrency=index_concurrency, max_queue=index_queue_size)
        self._dimensions: dict[tuple[str, str], int] = {}  # (tenant, model) -> dimension, seen in Qdrant
        self._warned_models: set[tuple[str, str]] = set()
        self._legacy: dict[str, tuple[str, float]] = {}  # tenant -> (legacy model, read until)
        self._marker_warned = False
        # (tenant, session) -> time.monotonic() of its last message delete heard here.
        self._deleted_at: dict[tuple[str, str], float] = {}
        self._deletes_remembered = max(1, deletes_remembered)
        self._deletes_forgotten_at = float("-inf")
        self.read_backs = 0  # sessions read back after indexing (tests)
        self.slices = VectorSlices(self)

    # -- lifecycle -------------------------------------------------------------
    async def open(self) -> None:
        await self.index.open()
        self.indexer.start()

    async def close(self) -> None:
        await self.indexer.stop()
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
        await self.index.upsert_keywords([KeywordPoint(p.tenant, p.record) for p in points if p.record.text], indexed_at)
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
                log.warning("legacy-model marker unavailable (%s); legacy vectors count as the query model", error.reason)
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
        # One read for the lift's windows and those of the likely hits.
        read = WindowMemo(functools.partial(self.store.context_windows, tenant))
        read.read_ahead(recall.likely_windows(scored, query))
        adjacent = await recall.adjacency(scored, query, read)
        lifts = recall.sliced(scored, slice_shares(slices)) if query.slices is recall.SliceMode.FUSED else None
        ranked = recall.rank(scored, query, query.reference_time or now_ms(), adjacent, lifts)
        hits = await recall.select_hits(ranked, query, read)
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
        return Stats(
            models,
            collections,
            legacy if isinstance(legacy, str) else "",
            len(self.indexer),
            self.indexer.dropped,
            await self.outbox.count(),
            sum(c.count for c in collections if c.dimension == KEYWORD_DIMENSION),
        )

    # -- consistency (MessageHooks) -------------------------------------------------
    async def _delete_or_defer(self, selector: VectorSelector) -> tuple[ClearOutcome, int]:
        remaining = deadline.remaining()
        token = deadline.set_remaining(min(HOOK_DELETE_SECONDS, remaining) if remaining is not None else HOOK_DELETE_SECONDS)
        try:
            removed = await self.index.delete(selector)
            return ClearOutcome.CLEARED, removed.vectors
        except (StorageUnavailable, StorageFull):  # the outbox retries it
            pass
        finally:
            deadline.reset(token)
        await self.outbox.add(selector)
        self.drainer.wake()
        return ClearOutcome.DEFERRED, 0

    async def messages_deleted(self, tenant: str, session_id: str, removed: Sequence[Message]) -> None:
        if not removed:
            return
        self._note_delete(tenant, session_id)  # before the points go: an indexing batch checks it after writing
        await self._delete_or_defer(
            VectorSelector(
                tenant,
                session_id=session_id,
                timestamps=tuple(sorted({m.timestamp for m in removed})),
                message_ids=tuple(m.id for m in removed if m.id),
                indexed_before=now_ms() + 1,
            )
        )

    async def summaries_deleted(self, tenant: str, session_id: str | None) -> None:
        await self._delete_or_defer(slice_selector(tenant, session_id))

    async def clear_vectors(self, tenant: str, session_id: str | None) -> ClearResult:
        selector = VectorSelector(tenant, session_id=session_id, indexed_before=now_ms() + 1)
        if session_id is None:
            self._forget_dimensions(tenant)
            self._legacy.pop(tenant, None)
            try:
                await self.store.delete_metadata(tenant, LEGACY_NAMESPACE, LEGACY_KEY, now_ms())
            except MemorydError as error:
                log.warning("could not delete the legacy-model marker (%s)", error.reason)
        outcome, removed = await self._delete_or_defer(selector)
        return ClearResult(ClearTarget.VECTORS, outcome, removed)

    async def messages_saved(self, tenant: str, session_id: str, messages: Sequence[Message]) -> None:
        self._queue(tenant, session_id, messages, rewrite=False)

    async def messages_rewritten(self, tenant: str, session_id: str, messages: Sequence[Message]) -> None:
        self._queue(tenant, session_id, messages, rewrite=True)

    # -- background indexing -------------------------------------------------------
    def indexable(self, message: Message) -> bool:
        return (
            message.role in INDEXED_ROLES
            and message.kind not in self.control_kinds
            and bool(message_text(message).strip())
        )

    def _queue(self, tenant: str, session_id: str, messages: Sequence[Message], *, rewrite: bool) -> None:
        if not (rewrite or self.index_message_keywords or self.embedder):
            return  # nothing to index a new message for
        # Rewrites arrive as references (no content): the job reads the stored message. Only
        # role and kind are looked at here: whether the text is empty is the job's question,
        # since reading it decodes the body, which the save's response would then re-encode
        # instead of copying (domain/models.py, EncodedBodyMessage).
        queued_at = time.monotonic()
        self.indexer.submit_all(
            [
                IndexJob(tenant, session_id, message, rewrite, queued_at)
                for message in messages
                if message.role in INDEXED_ROLES and (rewrite or message.kind not in self.control_kinds)
            ]
        )

    async def _index(self, jobs: list[IndexJob]) -> None:
        """Index a batch: keyword points for every message (with index_message_keywords off, for
        a rewrite only where one exists), dense points when an embedder is configured (for a
        rewrite only where one exists), then take back the points of messages
        deleted meanwhile (read back only where a delete may have happened: _may_be_gone)."""
        current: list[tuple[IndexJob, Message]] = []
        for job in jobs:
            message = job.message
            if job.rewrite:
                stored = await self._stored(job)
                if stored is None:
                    continue  # deleted: the delete removed its points
                if not self.indexable(stored):
                    await self.index.delete(self._points_of(job))  # rewritten into nothing searchable
                    continue
                message = stored
            elif not self.indexable(message):
                continue  # nothing to search for (no text)
            current.append((job, message))
        if not current:
            return
        indexed_at = now_ms()
        keyword_points = [KeywordPoint(job.tenant, record_of_message(job.session_id, m, None)) for job, m in current]
        if not self.index_message_keywords:
            keyword_points = [
                point for (job, _), point in zip(current, keyword_points)
                if job.rewrite and await self.index.has_keyword_point(point.id)
            ]
        await self.index.upsert_keywords(keyword_points, indexed_at)
        if self.embedder is not None:
            await self._embed(current)
        gone = await self._gone([job for job, _ in current if self._may_be_gone(job)])
        for job in gone:
            await self.index.delete(self._points_of(job))

    async def _embed(self, current: list[tuple[IndexJob, Message]]) -> None:
        assert self.embedder is not None
        model_id = self.embedder.model_id
        # EmbedderUnavailable propagates: the indexer retries the batch (keyword upserts are idempotent).
        vectors = await self.embedder.embed([message_text(m) for _, m in current])
        points = []
        for (job, message), vector in zip(current, vectors):
            point = VectorPoint(job.tenant, vector, record_of_message(job.session_id, message, model_id))
            expected = await self._dimension_of(job.tenant, model_id)
            if expected is not None and expected != len(vector):
                log.warning("embedder returned %d dimensions; model %s uses %d: not indexed", len(vector), model_id, expected)
                continue
            if job.rewrite and not await self.index.has_point(len(vector), point.id):
                continue  # never embedded: a rewrite re-embeds only vectors that exist (docs/VECTORS.md)
            points.append(point)
        if points:
            await self.index.upsert(points, now_ms())
            for point in points:
                self._dimensions[(point.tenant, model_id)] = len(point.vector)

    def _note_delete(self, tenant: str, session_id: str) -> None:
        if len(self._deleted_at) >= self._deletes_remembered:
            self._deleted_at.clear()
            self._deletes_forgotten_at = time.monotonic()
        self._deleted_at[(tenant, session_id)] = time.monotonic()

    def _may_be_gone(self, job: IndexJob) -> bool:
        """Whether the job's message may have been deleted since it was queued. On an index
        other processes write too (a Qdrant server shared by replicas) always: their deletes
        are never heard here."""
        if self.index.shared:
            return True
        since = job.queued_at - DELETE_GRACE_SECONDS
        return self._deleted_at.get((job.tenant, job.session_id), float("-inf")) >= since or (
            self._deletes_forgotten_at >= since
        )

    @staticmethod
    def _points_of(job: IndexJob) -> VectorSelector:
        return VectorSelector(job.tenant, session_id=job.session_id, message_ids=(job.message.id,))

    async def _gone(self, jobs: Sequence[IndexJob]) -> list[IndexJob]:
        """Jobs whose message is no longer stored (deleted while it was being indexed): one
        read of the seq range per session when it is compact, else one per message."""
        by_session: dict[tuple[str, str], list[IndexJob]] = {}
        for job in jobs:
            by_session.setdefault((job.tenant, job.session_id), []).append(job)
        gone: list[IndexJob] = []
        self.read_backs += len(by_session)
        for (tenant, session_id), group in by_session.items():
            seqs = [job.message.seq for job in group]
            low, high = min(seqs), max(seqs)
            if low > 0 and high - low < EXISTS_SPAN:
                rows = await self.store.messages_by_seq(tenant, session_id, low, high, high - low + 1)
                present = {m.id for m in rows}
                gone += [job for job in group if job.message.id not in present]
            else:
                gone += [job for job in group if await self._stored(job) is None]
        return gone

    async def _stored(self, job: IndexJob) -> Message | None:
        """The message as stored now (None once deleted)."""
        ts = job.message.timestamp
        rows = await self.store.range(job.tenant, RangeQuery(job.session_id, 1000, from_ts=ts, to_ts=ts))
        return next((m for m in rows if m.id == job.message.id), None)


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
