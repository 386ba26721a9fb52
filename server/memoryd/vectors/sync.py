"""The recall index as a log consumer: what each event of a tenant's log changes in the
index, and a tenant's index rebuilt from the store. The runtime (consumers/runtime.py) does
the rest: cursors and their fingerprints, batches, retries, leases, positions.

`RecallIndexer.apply` takes a batch of events, in order, and applies what changes recall, by
message id:

- messages appended / rewritten: read from the store by (session, seq); those stored and
  indexable get their keyword point and, with an embedder, their dense point (one embedder
  request per batch). Points have deterministic ids, so applying twice is harmless.
- messages deleted (DeleteMessages, DeleteMessagesByTimestamps, PopMessages, ReplaceHistory,
  ClearSession / ClearAll / ForgetUser with the messages target): their points, by message id
  only; a batch-mate sharing the timestamp keeps its points.
- a clear with the vectors target: every point of the session (tenant) written before it.
- summary slices saved (SUMMARY_SAVED): the slice as stored now (none when deleted or replaced
  since) gets its keyword point and, with an embedder, its dense point (vectors/slices.py).
- a clear with the metadata target (ClearSession / ClearAll, ForgetUser, retention; a
  session's slice records deleted: metadata-changed events): the session's (tenant's) slice
  points saved before it.

When the index or the embedder is down, `apply` raises and the runtime tries the batch again
(the cursor stays). Its fingerprint holds what a point depends on besides its message (the
points' version, BM25 parameters, keyword indexing, the embedder's model); a marker point
of the system tenant per tenant (`marker`) is what `intact` looks for: an index folder
deleted under a persisted cursor makes the tenant rebuild. Each event type that changes
recall is one entry of `HANDLERS`.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Protocol

from memoryd.consumers.runtime import BATCH, Consumer
from memoryd.domain import keywords
from memoryd.domain.models import SYSTEM_TENANT, Event, EventType, Message, now_ms
from memoryd.domain.recall import DEFAULT_CONTROL_KINDS
from memoryd.domain.store import Snapshot, Store
from memoryd.domain.summaries import SLICES_NAMESPACE, Summary
from memoryd.domain.vectors import KeywordPoint, VectorIndex, VectorPoint, VectorRecord, VectorSelector
from memoryd.vectors.records import record_of_message
from memoryd.vectors.slices import (
    slice_identity,
    slice_points,
    slice_selector,
    slice_span,
    slice_tenant,
    stored_slice,
    stored_slices,
)

log = logging.getLogger(__name__)


class Embedder(Protocol):
    """The server's embedder (vectors/embedder.py's OpenAIEmbedder)."""

    model_id: str

    async def embed(self, texts: Sequence[str]) -> list[list[float]]: ...

    async def close(self) -> None: ...


CURSOR_NAMESPACE = "memoryd.vector-sync"
# A batch holds at most this many messages (appended, rewritten, deleted), whatever its events.
MESSAGES_PER_BATCH = 2000
# Texts per embedder request (endpoints cap their inputs: OpenAI's at 2,048).
EMBED_CHUNK = 512
# Messages of one session read at once by seq range while the range stays this compact; a
# read starts at FIRST_SPAN and doubles while its messages stay small, halves while big.
SEQ_SPAN = 1000
FIRST_SPAN = 16
# Message text indexed per engine call, and so held at once: a burst of 1 MiB messages goes a
# few at a time (one call of 200 MiB outlived its deadline, was retried, and kept the
# engine's RSS at 1 GB for minutes: docs/PERFORMANCE.md, memory under bursts).
INDEX_BYTES = 8 << 20
DELETE_CHUNK = 1000
SESSION_PAGE = 100
MAX_PAGE_BYTES = 64 << 20  # a page of messages read whole (the snapshot's byte bound)
INDEXED_ROLES = ("user", "assistant")
# Bump when what a message's points hold changes: every tenant rebuilds once. 2: a message's
# points carry its text's hash, not its text (searches read texts from the store).
POINTS_VERSION = 2
# A rebuild logs its progress (messages indexed so far) every this many messages.
REBUILD_LOG_EVERY = 50_000


@dataclass(slots=True)
class Segment:
    """The work of consecutive events up to a barrier (a vectors clear)."""

    # (session, message id) -> (seq, rewrite), in log order.
    touched: dict[tuple[str, str], tuple[int, bool]] = field(default_factory=dict)
    deleted: dict[str, set[str]] = field(default_factory=dict)  # session -> message ids
    # session -> timestamps of deleted messages (for the caller's points of no message id)
    deleted_at: dict[str, set[int]] = field(default_factory=dict)
    slices: dict[tuple[str, int], str] = field(default_factory=dict)  # (session, from_seq) -> summary id

    def touch(self, session_id: str, refs: Sequence[dict], rewrite: bool) -> None:
        for ref in refs:
            if ref.get("id"):
                key = (session_id, ref["id"])
                # Appended within the segment, rewritten or not after: a new message (all its
                # points), not a rewrite (only the points it has: it has none yet).
                _, before = self.touched.get(key, (0, rewrite))
                self.touched[key] = (int(ref.get("seq") or 0), rewrite and before)

    def delete(self, session_id: str, ids: Sequence[str], timestamps: Sequence[int]) -> None:
        self.deleted.setdefault(session_id, set()).update(i for i in ids if i)
        self.deleted_at.setdefault(session_id, set()).update(int(t) for t in timestamps)

    def forget(self, session_id: str | None) -> None:
        """Drop the pending upserts a vectors clear of the session (None: all) makes void."""
        self.touched = {k: v for k, v in self.touched.items() if session_id is not None and k[0] != session_id}

    def __bool__(self) -> bool:
        return bool(self.touched or self.deleted or self.slices)


@dataclass(slots=True)
class Plan:
    """A batch of events as steps: segments, each followed by the clear that ended it."""

    steps: list[Segment | VectorSelector] = field(default_factory=lambda: [Segment()])

    @property
    def segment(self) -> Segment:
        last = self.steps[-1]
        if isinstance(last, Segment):
            return last
        self.steps.append(Segment())
        return self.steps[-1]  # type: ignore[return-value]

    def clear(self, selector: VectorSelector, *, messages: bool = True) -> None:
        """A barrier; `messages`: it voids the pending message upserts of its session."""
        if messages:
            self.segment.forget(selector.session_id)
        last = self.steps[-1]
        if isinstance(last, VectorSelector) and replace(last, indexed_before=None) == replace(
            selector, indexed_before=None
        ):
            # One delete for a clear's many records (a metadata-changed event each).
            selector = replace(selector, indexed_before=max(last.indexed_before or 0, selector.indexed_before or 0))
            self.steps.pop()
        self.steps.append(selector)


def _appended(plan: Plan, event: Event) -> None:
    plan.segment.touch(event.session_id, event.payload.get("messages") or (), rewrite=False)


def _rewritten(plan: Plan, event: Event) -> None:
    plan.segment.touch(event.session_id, event.payload.get("messages") or (), rewrite=True)


def _deleted(plan: Plan, event: Event) -> None:
    plan.segment.delete(event.session_id, event.payload.get("ids") or (), event.payload.get("timestamps") or ())


def _cleared(plan: Plan, event: Event) -> None:
    # The messages of a clear come as messages-deleted events before it; with the vectors
    # target, the caller's points (UpsertVectors) written before the clear go too; with the
    # metadata target, the slices (their points are indexed "at" their save: slice_selector).
    targets = event.payload.get("targets") or ()
    session = event.session_id if event.type == EventType.SESSION_CLEARED else None
    if "vectors" in targets:
        plan.clear(VectorSelector(event.tenant, session_id=session, indexed_before=event.time + 1))
    if "metadata" in targets:
        plan.clear(slice_selector(event.tenant, session, event.time), messages=False)


def _summary_saved(plan: Plan, event: Event) -> None:
    payload = event.payload
    plan.segment.slices[(event.session_id, int(payload.get("from_seq") or 0))] = str(payload.get("summary_id") or "")


def _metadata_changed(plan: Plan, event: Event) -> None:
    # A session's slice records deleted by a clear of its metadata alone (ClearSession without
    # the messages target writes no session-cleared event): its slice points saved before.
    # A slice record written otherwise (an import): indexed as stored.
    namespace = str(event.payload.get("namespace") or "")
    if not namespace.startswith(SLICES_NAMESPACE):
        return
    session = namespace[len(SLICES_NAMESPACE) :]
    if event.payload.get("deleted"):
        plan.clear(slice_selector(event.tenant, session, event.time), messages=False)
    elif str(event.payload.get("key") or "").isdigit():
        plan.segment.slices[(session, int(event.payload["key"]))] = ""


# What each event type changes in the index (a new kind of point is one entry).
HANDLERS: dict[EventType, Callable[[Plan, Event], None]] = {
    EventType.MESSAGES_APPENDED: _appended,
    EventType.MESSAGES_REWRITTEN: _rewritten,
    EventType.MESSAGES_DELETED: _deleted,
    EventType.SESSION_CLEARED: _cleared,
    EventType.ALL_CLEARED: _cleared,
    EventType.SUMMARY_SAVED: _summary_saved,
    EventType.METADATA_CHANGED: _metadata_changed,
}


def marker_id(tenant: str) -> str:
    return marker(tenant).id


def marker(tenant: str) -> KeywordPoint:
    """A point (of the system tenant: no search or count of a tenant sees it) whose presence
    says the index still holds what the tenant's cursor vouches for: a lost or emptied index
    (its folder deleted) has no marker, and the tenant is rebuilt."""
    return KeywordPoint(SYSTEM_TENANT, VectorRecord(tenant, 0, message_id="index-marker", text="marker"))


class RecallIndexer(Consumer):
    """The recall index as a log consumer (consumers/runtime.py runs it): what each event
    changes in the index (`HANDLERS`), and a tenant's index rebuilt from the store."""

    name = CURSOR_NAMESPACE
    event_types = tuple(HANDLERS)

    def __init__(
        self,
        store: Store,
        index: VectorIndex,
        *,
        embedder: Embedder | None = None,
        index_message_keywords: bool = True,
        control_kinds: Sequence[str] = DEFAULT_CONTROL_KINDS,
        batch: int = BATCH,
        on_dimension: Callable[[str, str, int], None] | None = None,
        dimension_of: Callable[[str, str], Awaitable[int | None]] | None = None,
    ) -> None:
        self.store = store
        self.index = index
        self.embedder = embedder
        self.index_message_keywords = index_message_keywords
        self.control_kinds = tuple(control_kinds)
        self.batch = max(1, batch)
        self.on_dimension = on_dimension  # (tenant, model, dimension) of every dense point written
        self.dimension_of = dimension_of  # async (tenant, model) -> known dimension or None
        # `memoryd reindex`: told (tenant, messages indexed, -1) as a rebuild goes; what it indexed.
        self.progress: Callable[[str, int, int], None] | None = None
        self.rebuilt: dict[str, int] = {}

    # -- what the index holds ------------------------------------------------------
    def fingerprint(self) -> str:
        """What a message's points depend on besides the message: a cursor written under
        another one is rebuilt from the store (a keyword-parameter or embedder change)."""
        bm25 = f"bm25:{keywords.K1}/{keywords.B}/{keywords.AVG_LEN}"
        model = self.embedder.model_id if self.embedder is not None else ""
        return f"v{POINTS_VERSION};{bm25};kw={int(self.index_message_keywords)};emb={model}"

    def indexable(self, message: Message) -> bool:
        return self.indexed(None, message) is not None

    def indexed(self, session_id: str | None, message: Message) -> VectorRecord | None:
        """The message's record (no model) when it is indexed, else None: the role and kind
        are checked before the body is looked at."""
        if message.role not in INDEXED_ROLES or message.kind in self.control_kinds:
            return None
        record = record_of_message(session_id or "", message, None)
        return record if record.text.strip() else None

    def take(self, events: Sequence[Event]) -> int:
        """The first events that name at most MESSAGES_PER_BATCH messages (at least one): a
        batch of SaveMessages calls of 1,000 each stays a batch of a few thousand messages."""
        named = 0
        for n, event in enumerate(events):
            named += len(event.payload.get("messages") or event.payload.get("ids") or ())
            if named > MESSAGES_PER_BATCH and n > 0:
                return n
        return len(events)

    async def intact(self, tenant: str) -> bool:
        """The tenant's marker point is there (a lost or emptied index has none)."""
        return await self.index.has_keyword_point(marker_id(tenant))

    async def vouch(self, tenant: str) -> None:
        await self.index.upsert_keywords([marker(tenant)], now_ms())

    # -- applying -------------------------------------------------------------------
    async def apply(self, tenant: str, events: Sequence[Event]) -> None:
        """Apply a batch of the tenant's events, in order; idempotent."""
        plan = Plan()
        for event in events:
            HANDLERS[event.type](plan, event)
        for step in plan.steps:
            if isinstance(step, VectorSelector):
                await self.index.delete(step)
            elif step:
                await self._apply_segment(tenant, step)

    async def _apply_segment(self, tenant: str, segment: Segment) -> None:
        # Deletes first: a message deleted and imported again within the batch is stored.
        for session_id, ids in segment.deleted.items():
            await self.delete_messages(tenant, session_id, sorted(ids), sorted(segment.deleted_at.get(session_id, ())))
        by_session: dict[str, dict[str, tuple[int, bool]]] = {}
        for (session_id, message_id), value in segment.touched.items():
            by_session.setdefault(session_id, {})[message_id] = value
        if not (self.index_message_keywords or self.embedder is not None):
            # Nothing to index for a new message: only rewrites of points that exist.
            by_session = {s: {i: v for i, v in w.items() if v[1]} for s, w in by_session.items()}
        current: list[tuple[VectorRecord, bool]] = []
        held = 0
        dropped: dict[str, list[str]] = {}
        for session_id, wanted in by_session.items():
            async for messages in self._read(tenant, session_id, wanted):
                for message in messages:
                    rewrite = wanted[message.id][1]
                    if (record := self.indexed(session_id, message)) is not None:
                        current.append((record, rewrite))
                        held += len(record.text)
                        if held >= INDEX_BYTES:
                            await self.index_messages(tenant, current)
                            current, held = [], 0
                    elif rewrite:
                        dropped.setdefault(session_id, []).append(message.id)  # rewritten into nothing searchable
        for session_id, gone in dropped.items():
            await self.delete_messages(tenant, session_id, gone)
        await self.index_messages(tenant, current)
        if segment.slices:
            await self.index_slices(tenant, segment.slices)

    async def delete_messages(
        self, tenant: str, session_id: str, ids: Sequence[str], timestamps: Sequence[int] = ()
    ) -> None:
        """The points of those messages: by id, and the caller's of no id at their timestamps."""
        for start in range(0, max(len(ids), len(timestamps)), DELETE_CHUNK):
            await self.index.delete(
                VectorSelector(
                    tenant,
                    session_id=session_id,
                    message_ids=tuple(ids[start : start + DELETE_CHUNK]),
                    unowned_timestamps=tuple(timestamps[start : start + DELETE_CHUNK]),
                )
            )

    async def _read(
        self, tenant: str, session_id: str, wanted: dict[str, tuple[int, bool]]
    ) -> AsyncIterator[list[Message]]:
        """The wanted messages as stored now (those deleted since are not), a read at a time:
        compact runs of seqs in one read each, fewer rows per read while the messages are big."""
        seqs = sorted(seq for seq, _ in wanted.values() if seq > 0)
        span, start = FIRST_SPAN, 0
        while start < len(seqs):
            end = start
            while end + 1 < len(seqs) and seqs[end + 1] - seqs[start] < span:
                end += 1
            low, high = seqs[start], seqs[end]
            rows = await self.store.messages_by_seq(tenant, session_id, low, high, high - low + 1)
            size = sum(m.stored_bytes or len(m.content) for m in rows)  # (decodes no body)
            yield [m for m in rows if m.id in wanted]
            rows = []
            span = max(1, span // 2) if size > INDEX_BYTES else min(SEQ_SPAN, span * 2)
            start = end + 1

    async def index_messages(self, tenant: str, current: Sequence[tuple[VectorRecord, bool]]) -> None:
        """Keyword points (with keyword indexing off, a rewrite's only where it has one) and,
        with an embedder, dense points (a rewrite's only where it has one of that model).
        `current`: the messages' records (`indexed`) and whether each is a rewrite."""
        if not current:
            return
        indexed_at = now_ms()
        points = [(KeywordPoint(tenant, record), rewrite) for record, rewrite in current]
        if self.index_message_keywords:
            keyword_points = [point for point, _ in points]
        else:
            keyword_points = [p for p, rewrite in points if rewrite and await self.index.has_keyword_point(p.id)]
        await self.index.upsert_keywords(keyword_points, indexed_at)
        if self.embedder is not None:
            await self._embed(tenant, current)

    async def _embed(self, tenant: str, current: Sequence[tuple[VectorRecord, bool]]) -> None:
        embedder = self.embedder
        if embedder is None:
            return
        model_id = embedder.model_id
        # EmbedderUnavailable propagates: the batch is retried, the cursor stays.
        texts = [record.text for record, _ in current]
        vectors = [
            v
            for start in range(0, len(texts), EMBED_CHUNK)
            for v in await embedder.embed(texts[start : start + EMBED_CHUNK])
        ]
        expected = await self.dimension_of(tenant, model_id) if self.dimension_of is not None else None
        points = []
        for (record, rewrite), vector in zip(current, vectors, strict=True):
            if expected is not None and expected != len(vector):
                log.warning(
                    "embedder returned %d dimensions; model %s uses %d: not indexed", len(vector), model_id, expected
                )
                continue
            point = VectorPoint(tenant, vector, replace(record, model_id=model_id))
            if rewrite and not await self.index.has_point(len(vector), point.id):
                continue  # a rewrite re-embeds only vectors that exist (docs/VECTORS.md)
            points.append(point)
        if points:
            await self.index.upsert(points, now_ms())
            if self.on_dimension is not None:
                self.on_dimension(tenant, model_id, len(points[0].vector))

    async def index_slices(self, tenant: str, saved: dict[tuple[str, int], str]) -> None:
        """The slices SUMMARY_SAVED events name, as stored now (skipped: deleted or replaced since)."""
        found = [await stored_slice(self.store, tenant, s, f, i) for (s, f), i in saved.items()]
        await self.upsert_slices(tenant, [s for s in found if s is not None])

    async def upsert_slices(self, tenant: str, summaries: Sequence[Summary]) -> None:
        """Keyword points and, with an embedder, dense points, indexed "at" the latest save
        (never after a clear that follows them in the log: that clear takes them)."""
        if not summaries:
            return
        indexed_at = max(s.create_time for s in summaries)
        spans = [await slice_span(self.store, tenant, s) for s in summaries]
        await self.index.upsert_keywords(
            [slice_points(tenant, s, first, last)[0] for s, (first, last) in zip(summaries, spans, strict=True)],
            indexed_at,
        )
        if self.embedder is None:
            return
        model_id, key = self.embedder.model_id, slice_tenant(tenant)
        texts = [s.text for s in summaries]
        vectors = [
            v
            for start in range(0, len(texts), EMBED_CHUNK)
            for v in await self.embedder.embed(texts[start : start + EMBED_CHUNK])
        ]
        expected = await self.dimension_of(key, model_id) if self.dimension_of is not None else None
        points = []
        for summary, (first, last), vector in zip(summaries, spans, vectors, strict=True):
            if expected is not None and expected != len(vector):
                log.warning(
                    "embedder returned %d dimensions; model %s uses %d: slice not indexed",
                    len(vector),
                    model_id,
                    expected,
                )
                continue
            dense = slice_points(tenant, summary, first, last, vector, model_id)[1]
            if dense is not None:
                points.append(dense)
        if points:
            await self.index.upsert(points, indexed_at)
            if self.on_dimension is not None:
                self.on_dimension(key, model_id, len(points[0].vector))

    # -- rebuild --------------------------------------------------------------------
    async def rebuild(self, tenant: str) -> int:
        """Index every stored message of the tenant again and remove the points of messages
        the store no longer has; the slices likewise. Searches keep answering from the points
        there are meanwhile. Returns the store's position its view had (the log goes on from it)."""
        progress = self.progress
        indexed = 0
        stored: set[tuple[str, str]] = set()
        async with self.store.snapshot() as view:
            position = await view.position(tenant)
            async for session_id, messages in stored_pages(view, tenant, self.batch):
                records = (self.indexed(session_id, m) for m in messages)
                todo = [(record, False) for record in records if record is not None]
                stored.update((session_id, m.id) for m in messages)
                await self.index_messages(tenant, todo)
                if (indexed + len(todo)) // REBUILD_LOG_EVERY > indexed // REBUILD_LOG_EVERY:
                    log.info("recall index rebuild: %d messages of a tenant indexed so far", indexed + len(todo))
                indexed += len(todo)
                if progress is not None:
                    progress(tenant, indexed, -1)
        orphans: dict[str, list[str]] = {}
        for session_id, message_id in await self.orphans(tenant, stored):
            orphans.setdefault(session_id, []).append(message_id)
        for session_id, ids in orphans.items():
            await self.delete_messages(tenant, session_id, ids)
        await self.rebuild_slices(tenant)
        self.rebuilt[tenant] = indexed
        return position

    async def rebuild_slices(self, tenant: str) -> None:
        """Index every stored slice again; delete the points of slices the store no longer has.
        Read after the rebuild's position: what changes since is applied again from the log."""
        stored: set[tuple[str, str]] = set()
        async for page in stored_slices(self.store, tenant, SESSION_PAGE):
            await self.upsert_slices(tenant, page)
            stored.update((s.session_id, f"{s.from_seq}/{s.id}") for s in page)
        orphans: dict[str, list[str]] = {}
        for session_id, ref in await indexed_messages(self.index, slice_tenant(tenant)):
            if slice_identity(session_id, ref) not in stored:
                orphans.setdefault(session_id, []).append(ref)
        for session_id, refs in orphans.items():
            await self.delete_messages(slice_tenant(tenant), session_id, refs)

    async def orphans(self, tenant: str, stored: set[tuple[str, str]]) -> list[tuple[str, str]]:
        """(session, message id) of the tenant's message points (keyword and dense) whose
        message is not in `stored`. Points without a message id are the caller's, not counted."""
        return sorted(k for k in await indexed_messages(self.index, tenant) if k not in stored)


async def indexed_messages(
    index: VectorIndex, tenant: str, *, dimensions: Sequence[int] | None = None, keyword: bool = True
) -> set[tuple[str, str]]:
    """(session, message id) of every message the tenant's points (keyword unless not
    `keyword`, and dense of `dimensions`, default all) index."""
    found: set[tuple[str, str]] = set()
    spaces = [*([0] if keyword else []), *(await index.dimensions() if dimensions is None else dimensions)]
    for space in spaces:
        offset: str | None = None
        while True:
            page, offset = await index.messages(tenant, space, offset, 1000)
            found.update(k for k in page if k[1])
            if offset is None:
                break
    return found


async def stored_pages(view: Snapshot, tenant: str, limit: int) -> AsyncIterator[tuple[str, list[Message]]]:
    """(session id, up to `limit` of its messages) for every stored message of the tenant, as
    the snapshot `view` sees them."""
    after: str | None = None
    while True:
        sessions = await view.sessions(tenant, after, SESSION_PAGE)
        for session in sessions:
            after_seq = 0
            while messages := await view.messages(tenant, session.session_id, after_seq, limit, MAX_PAGE_BYTES):
                after_seq = messages[-1].seq
                yield session.session_id, messages
        if len(sessions) < SESSION_PAGE:
            return
        after = sessions[-1].session_id
