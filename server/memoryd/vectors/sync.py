"""The index synchronizer: the recall index as a function of the message store's event log.

Every change to a tenant's messages writes events in the change's own transaction (the
store's per-tenant log). `IndexSync` reads each tenant's log after a persisted cursor, in
order and in batches of `batch` events, and applies what changes recall, by message id:

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

The cursor advances only after the index accepted the batch; when the index or the embedder
is down the batch is retried with backoff and nothing is skipped. Falling behind only means
reading more of the log (there is no queue to overflow). A log compacted past the cursor, or a
cursor written for other indexing settings (its fingerprint), makes the tenant rebuild from
the store itself (`rebuild`). Each event type that changes recall is one entry of `HANDLERS`.

The class needs only a Store and a VectorIndex (and an embedder), so it runs wherever both
are at hand: the serving process, the engine process, or `memoryd reindex`.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import AsyncIterator, Callable, Collection, Sequence
from dataclasses import dataclass, field, replace

from memoryd import shutdown
from memoryd.domain import keywords
from memoryd.domain.errors import MemorydError
from memoryd.domain.models import SYSTEM_TENANT, Event, EventType, Message, now_ms
from memoryd.domain.recall import DEFAULT_CONTROL_KINDS
from memoryd.domain.store import Snapshot, Store
from memoryd.domain.summaries import SLICES_NAMESPACE, Summary
from memoryd.domain.vectors import KeywordPoint, VectorIndex, VectorPoint, VectorRecord, VectorSelector
from memoryd.observability.metrics import VECTOR_SYNC_LAG, VECTOR_SYNC_RETRIES
from memoryd.vectors.lease import Lease
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

CURSOR_NAMESPACE = "memoryd.vector-sync"
BATCH = 500
# A batch holds at most this many messages (appended, rewritten, deleted), whatever its events.
MESSAGES_PER_BATCH = 2000
# Events read at once: READ_AHEAD times those the last batch took, at least READ_AHEAD_MIN
# (at most `batch`): events of 1,000 messages are not read 500 at a time.
READ_AHEAD = 4
READ_AHEAD_MIN = 16
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
# The persisted cursor is written at most this often per tenant (the in-memory one at once):
# a crash replays at most this much of the log, idempotently.
CURSOR_SAVE_SECONDS = 1.0
# Bump when what a message's points hold changes: every tenant rebuilds once.
POINTS_VERSION = 1


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
        if isinstance(last, VectorSelector) and replace(last, indexed_before=None) == replace(selector, indexed_before=None):
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


async def wait_any(events: Sequence[asyncio.Event], timeout: float) -> None:
    """Until one of `events` is set, or `timeout` seconds."""
    waits = [asyncio.ensure_future(event.wait()) for event in events]
    try:
        await asyncio.wait(waits, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for waiter in waits:
            waiter.cancel()


def _bounded(events: Sequence[Event], messages: int) -> Sequence[Event]:
    """The first events that name at most `messages` messages (at least one event): a batch of
    SaveMessages calls of 1,000 each stays a batch of a few thousand messages."""
    named = 0
    for n, event in enumerate(events):
        named += len(event.payload.get("messages") or event.payload.get("ids") or ())
        if named > messages and n > 0:
            return events[:n]
    return events


def marker_id(tenant: str) -> str:
    return marker(tenant).id


def marker(tenant: str) -> KeywordPoint:
    """A point (of the system tenant: no search or count of a tenant sees it) whose presence
    says the index still holds what the tenant's cursor vouches for: a lost or emptied index
    (its folder deleted) has no marker, and the tenant is rebuilt."""
    return KeywordPoint(SYSTEM_TENANT, VectorRecord(tenant, 0, message_id="index-marker", text="marker"))


@dataclass(slots=True)
class TenantState:
    through: int = 0  # applied through this seq (in memory)
    saved: int = 0  # ... as persisted
    saved_at: float = 0.0
    latest: int = 0  # the log's newest seq when last read
    rebuilding: bool = False
    marked: bool = False  # the tenant's marker point is known to be in the index


class IndexSync:
    def __init__(
        self,
        store: Store,
        index: VectorIndex,
        *,
        embedder=None,
        index_message_keywords: bool = True,
        control_kinds: Sequence[str] = DEFAULT_CONTROL_KINDS,
        batch: int = BATCH,
        poll_seconds: float = 1.0,
        linger_seconds: float = 0.02,
        min_backoff_seconds: float = 0.2,
        max_backoff_seconds: float = 30.0,
        system_tenant: str = SYSTEM_TENANT,
        on_dimension: Callable[[str, str, int], None] | None = None,
        dimension_of=None,
        tenants: Collection[str] | None = None,
        lease: Lease | None = None,
    ) -> None:
        self.store = store
        self.index = index
        self.embedder = embedder
        self.index_message_keywords = index_message_keywords
        self.control_kinds = tuple(control_kinds)
        self.batch = max(1, batch)
        self.poll_seconds = poll_seconds
        self.linger_seconds = linger_seconds
        self.min_backoff = min_backoff_seconds
        self.max_backoff = max_backoff_seconds
        self.system_tenant = system_tenant
        self.on_dimension = on_dimension  # (tenant, model, dimension) of every dense point written
        self.dimension_of = dimension_of  # async (tenant, model) -> known dimension or None
        self.tenants = tenants  # only these (`memoryd reindex --tenant`, tests); None: every tenant
        # With a lease (several processes on one store), only its holder applies the logs; the
        # others follow the persisted cursors (what their searches' positions wait for).
        self.lease = lease
        self.states: dict[str, TenantState] = {}
        self.retries = 0  # batches retried (index or embedder down)
        self.applied = 0  # events applied
        self.last_error = ""
        self._wake = asyncio.Event()
        self._advanced = asyncio.Event()
        self._lock = asyncio.Lock()  # one pass at a time (run loop, reindex, drained)
        self.running = False  # the loop (`run`) is applying the logs: a wait for a position ends

    # -- what the index holds ------------------------------------------------------
    @property
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

    def indexed_through(self, tenant: str) -> int:
        state = self.states.get(tenant)
        return state.through if state is not None else 0

    def lag(self) -> int:
        return sum(max(0, s.latest - s.through) for s in self.states.values())

    # -- cursor ---------------------------------------------------------------------
    async def _state(self, tenant: str) -> TenantState:
        state = self.states.get(tenant)
        if state is None:
            entry = await self.store.get_metadata(self.system_tenant, CURSOR_NAMESPACE, tenant)
            data = entry.data if entry is not None else {}
            seq = int(data.get("seq", 0))
            state = TenantState(seq, seq, time.monotonic())
            if entry is not None and data.get("fingerprint") != self.fingerprint:
                # Indexed under other settings (or by a release that kept no fingerprint). A
                # tenant never synchronized replays its log from the start (or rebuilds when
                # the log was compacted: _sync_tenant).
                state.rebuilding = True
            elif entry is not None and seq > 0:
                state.marked = await self.index.has_keyword_point(marker_id(tenant))
                if not state.marked:
                    log.warning("index sync: the index lost what the cursor says it holds (folder deleted?): rebuilding")
                    state.rebuilding = True
            self.states[tenant] = state
        return state

    async def _advance(self, tenant: str, state: TenantState, seq: int, *, force: bool = False) -> None:
        state.through = max(state.through, seq)
        if force or (state.through != state.saved and time.monotonic() - state.saved_at >= CURSOR_SAVE_SECONDS):
            await self.save_cursor(tenant, state)
        self._advanced.set()
        self._advanced = asyncio.Event()
        VECTOR_SYNC_LAG.set(self.lag())

    async def save_cursor(self, tenant: str, state: TenantState) -> None:
        if not state.marked:  # the marker first: a cursor never vouches for an index without it
            await self.index.upsert_keywords([marker(tenant)], now_ms())
            state.marked = True
        data = {"seq": state.through, "fingerprint": self.fingerprint}
        await self.store.save_metadata(self.system_tenant, CURSOR_NAMESPACE, tenant, data, now_ms())
        state.saved, state.saved_at = state.through, time.monotonic()

    async def flush_cursors(self, *, due_only: bool = False) -> None:
        """Persist the cursors that moved (`due_only`: those not written for CURSOR_SAVE_SECONDS:
        a pass per save must not cost a write per save)."""
        now = time.monotonic()
        for tenant, state in list(self.states.items()):
            if state.through != state.saved and not state.rebuilding:
                if not due_only or now - state.saved_at >= CURSOR_SAVE_SECONDS:
                    await self.save_cursor(tenant, state)

    # -- the loop ---------------------------------------------------------------------
    def wake(self) -> None:
        self._wake.set()

    async def run(self) -> None:
        self.running = True
        try:
            await self._run()
        finally:
            self.running = False

    async def _run(self) -> None:
        backoff = self.min_backoff
        holding = self.lease is None
        while True:
            shutdown.raise_if_cancelled()
            changed = self.store.notifier.current()
            self._wake.clear()
            try:
                if self.lease is None or await self.lease.hold():
                    if not holding:  # taken over: check every tenant afresh (fingerprint, marker)
                        self.states.clear()
                        holding = True
                    await self.sync_once()
                else:
                    holding = False
                    await self.follow()
                backoff, delay = self.min_backoff, self.poll_seconds
                self.last_error = ""
            except MemorydError as error:
                delay, backoff = backoff, min(backoff * 2, self.max_backoff)
                self._retry(error.reason, delay)
            except Exception as error:  # noqa: BLE001 - the loop must outlive any one batch
                log.warning("index sync failed", exc_info=True)
                delay, backoff = backoff, min(backoff * 2, self.max_backoff)
                self._retry(type(error).__name__, delay)
            # After a failure only the backoff (or a search waiting for a position) starts the
            # next pass, not every commit: an index or disk that is down is not hammered.
            waiting = [self._wake] if self.last_error else [changed, self._wake]
            await wait_any(waiting, delay)
            if self.linger_seconds and not self._wake.is_set():
                # A stream of saves makes batches, not a pass each (a search waiting for a
                # position wakes it without the wait, or cuts it short).
                with contextlib.suppress(TimeoutError):
                    async with asyncio.timeout(self.linger_seconds):
                        await self._wake.wait()

    def _retry(self, reason: str, delay: float) -> None:
        self.retries += 1
        self.last_error = reason
        VECTOR_SYNC_RETRIES.inc()
        log.info("index sync: %s; retrying in %.1f s (the cursor stays)", reason, delay)

    async def sync_once(self) -> int:
        """Apply every tenant's log up to its newest seq; returns events applied. Raises the
        first failure (the cursor of that tenant stays where the index last accepted)."""
        async with self._lock:
            applied = 0
            for tenant in await self.tenant_logs():
                applied += await self._sync_tenant(tenant)
            await self.flush_cursors(due_only=True)
            return applied

    async def follow(self) -> None:
        """Not the lease holder: take each tenant's position from its persisted cursor."""
        advanced = False
        for tenant in await self.tenant_logs():
            entry = await self.store.get_metadata(self.system_tenant, CURSOR_NAMESPACE, tenant)
            seq = int(entry.data.get("seq", 0)) if entry is not None else 0
            state = self.states.setdefault(tenant, TenantState(seq, seq, time.monotonic()))
            state.rebuilding = False  # the holder's business
            state.latest = (await self.store.event_bounds(tenant))[1]
            if seq > state.through:
                state.through = state.saved = seq
                advanced = True
        if advanced:
            self._advanced.set()
            self._advanced = asyncio.Event()
        VECTOR_SYNC_LAG.set(self.lag())

    async def tenant_logs(self) -> list[str]:
        """The tenants whose logs this synchronizer follows."""
        every = await self.store.event_tenants()
        return [t for t in every if t != self.system_tenant and (self.tenants is None or t in self.tenants)]

    async def sync_tenant(self, tenant: str, progress: Callable[[str, int, int], None] | None = None) -> int:
        """Apply one tenant's log up to its newest seq (`memoryd reindex`, tests)."""
        async with self._lock:
            applied = await self._sync_tenant(tenant, progress)
            state = self.states[tenant]
            if state.through != state.saved:
                await self.save_cursor(tenant, state)
            return applied

    async def _sync_tenant(self, tenant: str, progress: Callable[[str, int, int], None] | None = None) -> int:
        state = await self._state(tenant)
        floor, latest = await self.store.event_bounds(tenant)
        state.latest = latest
        if state.through < floor:
            log.warning("index sync: the log was compacted past the cursor (%d < %d): rebuilding", state.through, floor)
            state.rebuilding = True
        if state.rebuilding:
            await self.rebuild(tenant, progress)
            floor, latest = await self.store.event_bounds(tenant)
            state.latest = latest
        applied = 0
        types = tuple(HANDLERS)
        # Events read and not yet applied (a batch takes at most MESSAGES_PER_BATCH messages'
        # worth): applied next, not read and decoded again. A read asks for a few times the
        # events the last batch took (SaveMessages of 1,000: 16 events, not `batch`).
        pending: Sequence[Event] = ()
        limit, more = self.batch, False
        while state.through < latest:
            if self.lease is not None and not await self.lease.hold():
                break  # another process took over
            if not pending:
                pending = await self.store.read_events(tenant, state.through, limit, types=types, through_seq=latest)
                more = len(pending) == limit  # (fewer: none is left up to `latest`)
            if not pending:  # nothing up to `latest` changes recall
                await self._advance(tenant, state, latest)
                break
            taken = _bounded(pending, MESSAGES_PER_BATCH)
            pending = pending[len(taken) :]
            await self.apply(tenant, taken)
            applied += len(taken)
            self.applied += len(taken)
            limit = min(self.batch, max(READ_AHEAD_MIN, READ_AHEAD * len(taken)))
            whole = not pending and not more
            await self._advance(tenant, state, latest if whole else taken[-1].seq)
            if progress is not None:
                progress(tenant, state.through, latest)
        return applied

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
        for session_id, ids in dropped.items():
            await self.delete_messages(tenant, session_id, ids)
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

    async def _read(self, tenant: str, session_id: str, wanted: dict[str, tuple[int, bool]]) -> AsyncIterator[list[Message]]:
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
        model_id = self.embedder.model_id
        # EmbedderUnavailable propagates: the batch is retried, the cursor stays.
        texts = [record.text for record, _ in current]
        vectors = [v for start in range(0, len(texts), EMBED_CHUNK) for v in await self.embedder.embed(texts[start : start + EMBED_CHUNK])]
        expected = await self.dimension_of(tenant, model_id) if self.dimension_of is not None else None
        points = []
        for (record, rewrite), vector in zip(current, vectors):
            if expected is not None and expected != len(vector):
                log.warning("embedder returned %d dimensions; model %s uses %d: not indexed", len(vector), model_id, expected)
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
            [slice_points(tenant, s, first, last)[0] for s, (first, last) in zip(summaries, spans)], indexed_at
        )
        if self.embedder is None:
            return
        model_id, key = self.embedder.model_id, slice_tenant(tenant)
        texts = [s.text for s in summaries]
        vectors = [v for start in range(0, len(texts), EMBED_CHUNK) for v in await self.embedder.embed(texts[start : start + EMBED_CHUNK])]
        expected = await self.dimension_of(key, model_id) if self.dimension_of is not None else None
        points = []
        for summary, (first, last), vector in zip(summaries, spans, vectors):
            if expected is not None and expected != len(vector):
                log.warning("embedder returned %d dimensions; model %s uses %d: slice not indexed", len(vector), model_id, expected)
                continue
            points.append(slice_points(tenant, summary, first, last, vector, model_id)[1])
        if points:
            await self.index.upsert(points, indexed_at)
            if self.on_dimension is not None:
                self.on_dimension(key, model_id, len(points[0].vector))

    # -- waiting for a position ---------------------------------------------------------
    async def wait_for(self, tenant: str, seq: int) -> None:
        """Return once the tenant's log is applied through `seq` (the caller bounds the wait)."""
        while True:
            state = self.states.get(tenant) or await self._state(tenant)
            if state.through >= seq and not state.rebuilding:
                return
            advanced = self._advanced
            self.wake()
            await advanced.wait()

    async def drained(self) -> None:
        """Wait until every tenant's log, as it is now, is applied (tests, shutdown)."""
        for tenant in await self.tenant_logs():
            await self.wait_for(tenant, (await self.store.event_bounds(tenant))[1])

    # -- rebuild --------------------------------------------------------------------
    async def reindex(self, tenant: str, progress: Callable[[str, int, int], None] | None = None) -> int:
        """Rebuild the tenant from the store, then apply its log up to now (`memoryd reindex`).
        Returns the messages indexed by the rebuild."""
        async with self._lock:
            indexed = await self.rebuild(tenant, progress)
            await self._sync_tenant(tenant, progress)
            await self.save_cursor(tenant, self.states[tenant])
            return indexed

    async def rebuild(self, tenant: str, progress: Callable[[str, int, int], None] | None = None) -> int:
        """Index every stored message of the tenant again and remove the points of messages
        the store no longer has, then continue the log from where the store's view was.
        Searches keep answering from the points there are meanwhile. Returns messages indexed."""
        state = await self._state(tenant)
        state.rebuilding = True
        log.info("index sync: rebuilding a tenant's index from the store")
        indexed = 0
        stored: set[tuple[str, str]] = set()
        async with self.store.snapshot() as view:
            position = await view.position(tenant)
            async for session_id, messages in stored_pages(view, tenant, self.batch):
                records = (self.indexed(session_id, m) for m in messages)
                todo = [(record, False) for record in records if record is not None]
                stored.update((session_id, m.id) for m in messages)
                await self.index_messages(tenant, todo)
                indexed += len(todo)
                if progress is not None:
                    progress(tenant, indexed, -1)
        orphans: dict[str, list[str]] = {}
        for session_id, message_id in await self.orphans(tenant, stored):
            orphans.setdefault(session_id, []).append(message_id)
        for session_id, ids in orphans.items():
            await self.delete_messages(tenant, session_id, ids)
        await self.rebuild_slices(tenant)
        state.through = max(position, 0)
        state.rebuilding = False
        await self.save_cursor(tenant, state)
        return indexed

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


async def stored_messages(store: Store, tenant: str, indexable: Callable[[Message], bool]) -> set[tuple[str, str]]:
    """(session, message id) of the tenant's stored messages that `indexable` admits."""
    async with store.snapshot() as view:
        return {(s, m.id) async for s, messages in stored_pages(view, tenant, 1000) for m in messages if indexable(m)}


@dataclass(frozen=True, slots=True)
class Difference:
    missing: set[tuple[str, str]]  # stored and indexable, no point of the space compared
    orphans: set[tuple[str, str]]  # a point, no stored message

    @property
    def exact(self) -> bool:
        return not (self.missing or self.orphans)


async def slice_difference(sync: IndexSync, tenant: str) -> Difference:
    """Slice points vs stored slices, by (session, "from_seq/summary id"): every stored slice
    has a keyword point, and every slice point (keyword or dense) a stored slice."""
    stored: set[tuple[str, str]] = set()
    async for page in stored_slices(sync.store, tenant, SESSION_PAGE):
        stored.update((s.session_id, f"{s.from_seq}/{s.id}") for s in page)
    key = slice_tenant(tenant)
    keyword = {slice_identity(s, r) for s, r in await indexed_messages(sync.index, key, dimensions=())}
    every = {slice_identity(s, r) for s, r in await indexed_messages(sync.index, key)}
    return Difference(stored - keyword, every - stored)  # type: ignore[operator]


async def difference(sync: IndexSync, tenant: str, *, dimension: int = 0) -> Difference:
    """Index vs store by message id for a whole tenant: every indexable message has a point of
    `dimension` (0: its keyword point; an embedding model's: its dense point, with the
    synchronizer's embedder), and every point (keyword or dense) a stored message."""
    stored = await stored_messages(sync.store, tenant, sync.indexable)
    covered = await indexed_messages(sync.index, tenant, dimensions=[dimension] if dimension else (), keyword=not dimension)
    every = await indexed_messages(sync.index, tenant)
    all_stored = await stored_messages(sync.store, tenant, lambda m: True)
    return Difference(stored - covered, every - all_stored)
