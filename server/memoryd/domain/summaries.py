"""Summary slices over message-seq ranges with a per-session cursor, and context assembly
(docs/CONTEXT.md). Nothing here calls an LLM: callers save slices, and so does memory formation
(formation/summary.py, docs/MEMORY.md) when it is on.

Storage is metadata records, written with the guarded (compare-and-set) metadata write
of the Store, so both adapters behave the same and nothing new is needed in them:

    namespace "memoryd.summary-cursor", key "cursor/<session>"  -> the cursor record
    namespace "memoryd.summaries/<session>", key "<from_seq, 20 digits>" -> one slice

The slice and the cursor are written in one transaction guarded on the cursor's value,
so two racing SaveSummary calls can never both advance it. Slices are created in seq
order, so key order is also time order. Keys never equal a session id, so
ClearSession(targets=metadata) leaves summaries alone (seqs are never reused, so the
cursor stays meaningful after messages are cleared); ClearAll(metadata) removes them.
"""

from __future__ import annotations

import asyncio
import enum
import logging
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any, Protocol

from memoryd.domain import context, paging, recall, search_defaults
from memoryd.domain import events as ev
from memoryd.domain.errors import Aborted, FailedPrecondition, StorageUnavailable
from memoryd.domain.limits import Limits
from memoryd.domain.models import Message, now_ms
from memoryd.domain.sessions import OWNER_KEY, owner_stamps, readable_by
from memoryd.domain.store import MetadataGuard, MetadataWrite, Store

log = logging.getLogger(__name__)

CURSOR_NAMESPACE = "memoryd.summary-cursor"
SLICES_NAMESPACE = "memoryd.summaries/"
SEQ_MAX = 2**63 - 1
DEFAULT_PAGE = 100
# The cursor record's slices saved per owner stamp ([[stamp, n], ...]: pairs, not an object,
# since user ids may hold what MongoDB field names must not), beside its total `count`:
# GetSummaryCursor's summary_count for a user-bound reader.
COUNTS_KEY = "counts"
_COUNT_PAGE = 500
# Unsummarized tail messages read at most per AssembleContext; older ones are reported cut.
MAX_TAIL_MESSAGES = 1000
# Coverage counts of a ListSummaries page run this many at a time.
COVERAGE_BATCH = 32
# Compare-and-set attempts before a contended cursor gives up.
CAS_ATTEMPTS = 5


def cursor_key(session_id: str) -> str:
    return "cursor/" + session_id


def slices_namespace(session_id: str) -> str:
    return SLICES_NAMESPACE + session_id


def session_records(session_id: str) -> list[tuple[str, str | None]]:
    """The metadata ClearSession(METADATA) removes besides records keyed by the session:
    its summary slices (text derived from the conversation). The cursor stays, because
    it never moves backwards: new slices start after it."""
    return [(slices_namespace(session_id), None)]


def forgotten_records(session_id: str) -> list[tuple[str, str | None]]:
    """What forgetting a session (ForgetUser, retention) removes of memoryd's own records:
    its summary slices and its cursor too, so that nothing derived from the conversation
    stays (seqs are never reused, so a later conversation under the same id starts after
    the old seqs whatever the cursor)."""
    return [*session_records(session_id), (CURSOR_NAMESPACE, cursor_key(session_id))]


def slice_key(from_seq: int) -> str:
    return f"{from_seq:020d}"


class Coverage(enum.IntEnum):
    # Values mirror memoryd.v1.SummaryCoverage.
    INTACT = 1
    PARTIALLY_DELETED = 2
    DELETED = 3


@dataclass(frozen=True, slots=True)
class Summary:
    id: str
    session_id: str
    from_seq: int
    to_seq: int
    text: str
    metadata: dict[str, Any]
    create_time: int
    saved_message_count: int
    # Computed on read.
    present_message_count: int = 0
    archived_message_count: int = 0
    coverage: Coverage | None = None
    # The session's owner when the slice was written (sessions.record_owner); None: a slice
    # written before slices were stamped. A user-bound read returns only its user's.
    owner: str | None = None

    def record(self) -> dict[str, Any]:
        record = {
            "id": self.id,
            "from_seq": self.from_seq,
            "to_seq": self.to_seq,
            "text": self.text,
            "metadata": self.metadata,
            "create_time": self.create_time,
            "saved_message_count": self.saved_message_count,
        }
        if self.owner is not None:
            record[OWNER_KEY] = self.owner
        return record

    @classmethod
    def from_record(cls, session_id: str, data: dict[str, Any]) -> Summary:
        return cls(
            id=data["id"],
            session_id=session_id,
            from_seq=int(data["from_seq"]),
            to_seq=int(data["to_seq"]),
            text=data["text"],
            metadata=data.get("metadata") or {},
            create_time=int(data["create_time"]),
            saved_message_count=int(data.get("saved_message_count", 0)),
            owner=data.get(OWNER_KEY),
        )

    def readable_by(self, reader: str | None) -> bool:
        """Whether a caller bound to `reader` (None: a tenant token) may read the slice."""
        return readable_by(self.owner, reader)


@dataclass(frozen=True, slots=True)
class CursorState:
    cursor: int
    summary_count: int
    latest: Summary | None
    last_seq: int


@dataclass
class ContextResult:
    assembly: context.Assembly
    summary: Summary | None
    cursor: int
    recall_status: RecallStatus
    recall_detail: str = ""


class RecallStatus(enum.IntEnum):
    # Values mirror memoryd.v1.RecallStatus.
    NOT_REQUESTED = 0
    OK = 1
    UNAVAILABLE = 2
    SKIPPED = 3


class RecallUnavailable(Exception):
    """Recall cannot run (no vector service or embedder, or it failed); the text says why."""


@dataclass(frozen=True, slots=True)
class ContextRecallQuery:
    """What AssembleContext asks recall for; a Recaller turns it into its own search."""

    session_id: str
    text: str
    top_k: int
    exclude_message_ids: tuple[str, ...] = ()
    query_vector: tuple[float, ...] = ()
    model_id: str = ""
    sessions: tuple[str, ...] | None = None  # as RecallQuery.sessions
    slices: recall.SliceMode = recall.SliceMode.OFF
    reader: str | None = None  # as RecallQuery.reader


class Recaller(Protocol):
    """Recall for AssembleContext; implemented over VectorRecall's search (SearchRecaller)."""

    async def recall(self, tenant: str, query: ContextRecallQuery) -> list[context.Recalled]: ...


class NoRecall:
    async def recall(self, tenant: str, query: ContextRecallQuery) -> list[context.Recalled]:
        raise RecallUnavailable("no vector service is configured on this server")


class SearchRecaller:
    """Recall through SearchMemory's search, across the tenant's sessions.

    `vectors` is the server's VectorRecall (vectors/recall.py): its `search(tenant,
    recall.RecallQuery)` and its `defaults`. The text is searched like SearchMemory's query_text: hybrid with the
    caller's vector or the server embedder's, keyword-only without either.
    """

    def __init__(self, vectors: Any) -> None:
        self.vectors = vectors

    async def recall(self, tenant: str, query: ContextRecallQuery) -> list[context.Recalled]:
        settled = search_defaults.settle(
            search_defaults.Search.CONTEXT,
            search_defaults.Asked(top_k=query.top_k),
            self.vectors.defaults,
            self.vectors.control_kinds,
        )
        try:
            result = await self.vectors.search(
                tenant,
                settled.recall_query(
                    vector=list(query.query_vector),
                    model_id=query.model_id,
                    text=query.text,
                    exclude_message_ids=frozenset(query.exclude_message_ids),
                    sessions=query.sessions,
                    slices=query.slices,
                    reader=query.reader,
                ),
            )
        except (StorageUnavailable, FailedPrecondition) as error:
            raise RecallUnavailable(f"vector recall failed: {error.reason}") from error
        return [
            context.Recalled(
                id=hit.record.message_id or hit.ranked.candidate.point_id,
                session_id=hit.record.session_id,
                text=hit.text,
                score=hit.ranked.score,
                timestamp=hit.record.timestamp,
                role=hit.record.role,
            )
            for hit in result.hits
        ]


@dataclass(frozen=True, slots=True)
class SliceQuery:
    """A search of summary slices (SearchSummaries, SearchMemory's slices): the query's parts
    as RecallQuery has them; `session_id` set: that session only (RECALL_SCOPE_SESSION)."""

    text: str = ""
    vector: tuple[float, ...] = ()
    model_id: str = ""
    top_k: int = recall.DEFAULT_TOP_K
    keyword_weight: float = recall.DEFAULT_KEYWORD_WEIGHT
    fusion: recall.Fusion = recall.Fusion.RELATIVE_SCORE
    session_id: str = ""
    sessions: tuple[str, ...] | None = None  # as RecallQuery.sessions
    reference_time: int | None = None  # for the query's dates (recall.dated)
    reader: str | None = None  # a user-bound caller's user: only slices stamped with it


@dataclass(frozen=True, slots=True)
class FoundSlice:
    """A slice the index returned: its place (session, range, summary id), the time span of
    the messages it covered when indexed, and its ranking (recall.Ranked: scores and parts)."""

    session_id: str
    summary_id: str
    from_seq: int
    to_seq: int
    first_ts: int
    last_ts: int
    ranked: recall.Ranked


@dataclass(frozen=True, slots=True)
class SlicesFound:
    slices: list[FoundSlice]
    model_id: str  # empty without a semantic part
    semantic: bool
    keyword: bool


class SliceIndex(Protocol):
    """The vector side of slices (vectors/slices.py): the points of a slice saved with the
    caller's vector (the index synchronizer indexes every slice from the log), and search."""

    async def index(self, tenant: str, summary: Summary, vector: Sequence[float], model_id: str) -> None: ...

    async def saved(self, tenant: str) -> None:
        """After a save: return once the slice is searchable, or soon (it is, later, from the log)."""

    async def search(self, tenant: str, query: SliceQuery) -> SlicesFound: ...


class NoSliceIndex:
    async def index(self, tenant: str, summary: Summary, vector: Sequence[float], model_id: str) -> None:
        if vector:
            raise FailedPrecondition("no vector store is configured on this server")

    async def saved(self, tenant: str) -> None:
        pass

    async def search(self, tenant: str, query: SliceQuery) -> SlicesFound:
        raise FailedPrecondition("no vector store is configured on this server")


@dataclass(frozen=True, slots=True)
class SummaryHit:
    summary: Summary
    found: FoundSlice
    messages: list[Message]
    messages_truncated: bool


@dataclass(frozen=True, slots=True)
class ContextRequest:
    session_id: str
    budget_chars: int = 0
    recent_raw_n: int = 0
    include_recall: bool = False
    recall_top_k: int = 0
    recall_query_vector: tuple[float, ...] = ()
    recall_model_id: str = ""
    # Recall only within these sessions (a user-bound caller's own); None: the tenant's.
    recall_sessions: tuple[str, ...] | None = None
    recall_slices: recall.SliceMode = recall.SliceMode.OFF
    # A user-bound caller's user: the summary and recall only of records stamped with it.
    reader: str | None = None


class Summaries:
    def __init__(
        self,
        store: Store,
        limits: Limits,
        recaller: Recaller | None = None,
        page_tokens: paging.PageTokens | None = None,
        slices: SliceIndex | None = None,
        recall_defaults: recall.RecallDefaults = recall.RecallDefaults(),
    ) -> None:
        self.store = store
        self.limits = limits
        self.recaller: Recaller = recaller or NoRecall()
        self.page_tokens = page_tokens or paging.PageTokens.ephemeral()
        self.slices: SliceIndex = slices or NoSliceIndex()
        self.recall_defaults = recall_defaults

    # -- reads -----------------------------------------------------------------
    async def _cursor_record(self, tenant: str, session_id: str) -> dict[str, Any] | None:
        entry = await self.store.get_metadata(tenant, CURSOR_NAMESPACE, cursor_key(session_id))
        return entry.data if entry else None

    async def _slice(self, tenant: str, session_id: str, from_seq: int) -> Summary | None:
        entry = await self.store.get_metadata(tenant, slices_namespace(session_id), slice_key(from_seq))
        return Summary.from_record(session_id, entry.data) if entry else None

    async def with_coverage(self, tenant: str, summary: Summary) -> Summary:
        present, archived = await self.store.count_by_seq(tenant, summary.session_id, summary.from_seq, summary.to_seq)
        if present == 0:
            coverage = Coverage.DELETED
        elif present < summary.saved_message_count:
            coverage = Coverage.PARTIALLY_DELETED
        else:
            coverage = Coverage.INTACT
        return replace(summary, present_message_count=present, archived_message_count=archived, coverage=coverage)

    async def get_cursor(self, tenant: str, session_id: str, reader: str | None = None) -> CursorState:
        """The cursor; its latest slice only when `reader` (a user-bound caller's user) may
        read it (Summary.readable_by), and for a reader the count of its own slices only
        (`_readers_count`). The cursor itself is the session's, whoever wrote the slices up
        to it: it is where the next SaveSummary must start (from_seq = cursor + 1), and the
        seqs below it are the reader's messages' (docs/SECURITY.md)."""
        record = await self._cursor_record(tenant, session_id)
        last_seq = await self.store.last_seq(tenant, session_id)
        if record is None:
            return CursorState(0, 0, None, last_seq)
        latest = await self._slice(tenant, session_id, int(record["latest_from_seq"]))
        if latest is not None and not latest.readable_by(reader):
            latest = None
        if latest is not None:
            latest = await self.with_coverage(tenant, latest)
        count = int(record["count"])
        if reader is not None:
            count = await self._readers_count(tenant, session_id, record, reader)
        return CursorState(int(record["cursor"]), count, latest, last_seq)

    async def _readers_count(self, tenant: str, session_id: str, record: dict[str, Any], reader: str) -> int:
        """The slices saved under `reader`'s stamp: the cursor record's count per stamp
        (COUNTS_KEY), when it accounts for every save; else (a record written before it kept
        them) the stored slices `reader` may read, counted page by page."""
        counts = dict(record.get(COUNTS_KEY) or ())
        if sum(counts.values()) == int(record["count"]):
            return int(counts.get(reader, 0))
        count, after = 0, None
        while True:
            rows = await self.store.list_metadata(tenant, slices_namespace(session_id), after, _COUNT_PAGE)
            count += sum(Summary.from_record(session_id, row.data).readable_by(reader) for row in rows)
            if len(rows) < _COUNT_PAGE:
                return count
            after = rows[-1].key

    async def list_summaries(
        self, tenant: str, session_id: str, page_size: int, page_token: str, reader: str | None = None
    ) -> tuple[list[Summary], str]:
        """A page of the session's slices; for a user-bound caller (`reader`), only those
        stamped with its user (a page may then hold fewer than its size, or none)."""
        size = min(page_size or DEFAULT_PAGE, self.limits.max_page_size)
        scope = ("summaries", session_id)
        position = await self.page_tokens.decode(tenant, scope, page_token)
        max_bytes = self.limits.max_response_bytes
        rows = await self.store.list_metadata(
            tenant, slices_namespace(session_id), position["after"] if position else None, size + 1, max_bytes
        )
        rows, more = paging.fit(rows, size, max_bytes)
        token = await self.page_tokens.encode(tenant, scope, {"after": rows[-1].key}) if more else ""
        summaries = [s for s in (Summary.from_record(session_id, row.data) for row in rows) if s.readable_by(reader)]
        covered: list[Summary] = []
        for start in range(0, len(summaries), COVERAGE_BATCH):
            batch = summaries[start : start + COVERAGE_BATCH]
            covered += await asyncio.gather(*(self.with_coverage(tenant, s) for s in batch))
        return covered, token

    # -- writes ----------------------------------------------------------------
    async def save(
        self,
        tenant: str,
        session_id: str,
        from_seq: int,
        to_seq: int,
        text: str,
        metadata: dict[str, Any],
        vector: Sequence[float] = (),
        model_id: str = "",
    ) -> tuple[Summary, int, bool]:
        """Returns (slice, cursor, deduplicated). Input was validated (1 <= from_seq <= to_seq).
        A caller's vector is indexed after it (`_index`), on a retry too; the rest from the log."""
        if vector and isinstance(self.slices, NoSliceIndex):  # refused before anything is stored
            await self.slices.index(
                tenant, Summary("", session_id, from_seq, to_seq, text, metadata, 0, 0), vector, model_id
            )
        summary, cursor, deduplicated = await self._save(tenant, session_id, from_seq, to_seq, text, metadata)
        await self._index(tenant, summary, vector, model_id)
        return summary, cursor, deduplicated

    async def _index(self, tenant: str, summary: Summary, vector: Sequence[float], model_id: str) -> None:
        """A slice's points come from the event log (SUMMARY_SAVED: the index synchronizer,
        docs/VECTORS.md "Slices"), keywords and the server embedder's vector alike. Only a
        caller's vector is indexed here, because it exists nowhere else: its failure fails the
        call (a retry is deduplicated and indexes again)."""
        if vector:
            await self.slices.index(tenant, summary, vector, model_id)
        await self.slices.saved(tenant)

    async def _save(
        self, tenant: str, session_id: str, from_seq: int, to_seq: int, text: str, metadata: dict[str, Any]
    ) -> tuple[Summary, int, bool]:
        stamp = (await owner_stamps(self.store, tenant, [session_id]))[session_id]
        for _ in range(CAS_ATTEMPTS):
            record = await self._cursor_record(tenant, session_id)
            cursor = int(record["cursor"]) if record else 0
            if record and int(record["latest_from_seq"]) == from_seq and cursor == to_seq:
                latest = await self._slice(tenant, session_id, from_seq)
                if latest is not None and latest.text == text and latest.metadata == metadata:
                    if latest.owner in (None, stamp):  # a retry; never another owner's slice
                        return await self.with_coverage(tenant, latest), cursor, True
            await self._check_range(tenant, session_id, cursor, from_seq, to_seq)
            saved_count, _ = await self.store.count_by_seq(tenant, session_id, from_seq, to_seq)
            summary = Summary(
                id=uuid.uuid4().hex,
                session_id=session_id,
                from_seq=from_seq,
                to_seq=to_seq,
                text=text,
                metadata=metadata,
                create_time=now_ms(),
                saved_message_count=saved_count,
                owner=stamp,
            )
            counts = dict((record or {}).get(COUNTS_KEY) or ())
            counts[stamp] = counts.get(stamp, 0) + 1
            new_record = {
                "cursor": to_seq,
                "count": (int(record["count"]) if record else 0) + 1,
                COUNTS_KEY: [[owner, n] for owner, n in sorted(counts.items())],
                "latest_id": summary.id,
                "latest_from_seq": from_seq,
                OWNER_KEY: stamp,
            }
            written = await self.store.write_metadata_guarded(
                tenant,
                [
                    MetadataWrite(slices_namespace(session_id), slice_key(from_seq), summary.record()),
                    MetadataWrite(CURSOR_NAMESPACE, cursor_key(session_id), new_record),
                ],
                MetadataGuard(CURSOR_NAMESPACE, cursor_key(session_id), "cursor", cursor if record else None),
                ev.summary_saved(session_id, summary.id, from_seq, to_seq),
                summary.create_time,
            )
            if written:
                return await self.with_coverage(tenant, summary), to_seq, False
            # Another writer moved the cursor first: re-read and re-check (usually an overlap now).
        raise Aborted(
            "the summary cursor kept changing under this call; retry",
            reason="SUMMARY_CURSOR_CONTENDED",
            metadata={"session_id": session_id},
        )

    async def _check_range(self, tenant: str, session_id: str, cursor: int, from_seq: int, to_seq: int) -> None:
        details = {"cursor": str(cursor), "from_seq": str(from_seq), "to_seq": str(to_seq)}
        if from_seq <= cursor:
            raise FailedPrecondition(
                f"the slice [{from_seq}, {to_seq}] overlaps what is already summarized (cursor {cursor});"
                f" the next slice starts at {cursor + 1}",
                reason="SUMMARY_RANGE_OVERLAPS",
                metadata=details,
            )
        last_seq = await self.store.last_seq(tenant, session_id)
        if to_seq > last_seq:
            raise FailedPrecondition(
                f"to_seq {to_seq} is beyond the newest message of the session (seq {last_seq})",
                reason="SUMMARY_RANGE_BEYOND_HISTORY",
                metadata={**details, "last_seq": str(last_seq)},
            )
        if from_seq > cursor + 1:
            skipped = await self.store.messages_by_seq(tenant, session_id, cursor + 1, from_seq - 1, 1)
            if skipped:
                raise FailedPrecondition(
                    f"the slice would leave stored messages unsummarized: seq {skipped[0].seq} is after the"
                    f" cursor {cursor} and before from_seq {from_seq}",
                    reason="SUMMARY_RANGE_GAP",
                    metadata={**details, "first_unsummarized_seq": str(skipped[0].seq)},
                )

    # -- search ----------------------------------------------------------------
    async def search(
        self, tenant: str, query: SliceQuery, include_messages: bool, max_messages: int
    ) -> tuple[list[SummaryHit], SlicesFound]:
        """SearchSummaries: the best slices, read back from the store (a slice deleted since
        its points were written is no hit), each with up to `max_messages` of its messages,
        all hits' messages together within max_response_bytes."""
        found = await self.slices.search(tenant, query)
        budget = self.limits.max_response_bytes
        hits: list[SummaryHit] = []
        for item in found.slices:
            summary = await self._slice(tenant, item.session_id, item.from_seq)
            if summary is None or summary.id != item.summary_id or not summary.readable_by(query.reader):
                continue
            summary = await self.with_coverage(tenant, summary)
            messages: list[Message] = []
            truncated = False
            if include_messages:
                rows = await self.store.messages_by_seq(
                    tenant, summary.session_id, summary.from_seq, summary.to_seq, max_messages + 1
                )
                messages, truncated = _within(rows, max_messages, budget)
                budget -= sum(m.stored_bytes for m in messages)
            hits.append(SummaryHit(summary, item, messages, truncated))
        return hits, found

    # -- context assembly ------------------------------------------------------
    async def assemble(self, tenant: str, request: ContextRequest) -> ContextResult:
        session_id = request.session_id
        record = await self._cursor_record(tenant, session_id)
        cursor = int(record["cursor"]) if record else 0
        summary = await self._slice(tenant, session_id, int(record["latest_from_seq"])) if record else None
        if summary is not None and not summary.readable_by(request.reader):
            # Written under another owner (the tenant's, before it gave the session away):
            # not this caller's; the context starts from the first message instead.
            summary, cursor = None, 0
        if summary is not None:
            summary = await self.with_coverage(tenant, summary)

        # The unsummarized tail: unarchived messages after the cursor, newest MAX_TAIL_MESSAGES.
        rows = await self.store.messages_by_seq(
            tenant, session_id, cursor + 1, SEQ_MAX, MAX_TAIL_MESSAGES + 1, newest_first=True
        )
        left_out = rows[0] if len(rows) > MAX_TAIL_MESSAGES else None
        tail = [m for m in rows[1:] if not m.archived] if left_out else [m for m in rows if not m.archived]
        recent: list[Message] = []
        if request.recent_raw_n > 0:
            recent = await self.store.history(tenant, session_id, min(request.recent_raw_n, self.limits.max_page_size))

        recalled: list[context.Recalled] = []
        status, detail = RecallStatus.NOT_REQUESTED, ""
        if request.include_recall:
            status, detail, recalled = await self._recall(tenant, request, tail, recent)

        assembly = context.assemble(
            summary=context.SummaryText(summary.id, summary.text) if summary else None,
            tail=tail,
            recent=recent,
            recalled=recalled,
            budget_chars=request.budget_chars,
            tail_left_out=left_out,
        )
        return ContextResult(assembly, summary, cursor, status, detail)

    async def _recall(
        self, tenant: str, request: ContextRequest, tail: list[Message], recent: list[Message]
    ) -> tuple[RecallStatus, str, list[context.Recalled]]:
        messages = sorted({m.id: m for m in [*tail, *recent]}.values(), key=lambda m: (m.timestamp, m.seq))
        users = [m for m in messages if m.role == "user" and m.content.strip()]
        if not users:
            latest = await self.store.history(tenant, request.session_id, 50)
            users = [m for m in latest if m.role == "user" and m.content.strip()]
        if not users:
            return RecallStatus.SKIPPED, "the session has no user message to recall for", []
        query = ContextRecallQuery(
            session_id=request.session_id,
            text=users[-1].content,
            top_k=request.recall_top_k or search_defaults.TOP_K[search_defaults.Search.CONTEXT],
            exclude_message_ids=tuple(m.id for m in messages),
            query_vector=request.recall_query_vector,
            model_id=request.recall_model_id,
            sessions=request.recall_sessions,
            slices=request.recall_slices,
            reader=request.reader,
        )
        try:
            return RecallStatus.OK, "", await self.recaller.recall(tenant, query)
        except RecallUnavailable as exc:
            return RecallStatus.UNAVAILABLE, str(exc), []


def _within(rows: list[Message], limit: int, budget: int) -> tuple[list[Message], bool]:
    """The first `limit` rows whose sizes fit in `budget` (none when the budget is spent), and
    whether any were left out."""
    kept: list[Message] = []
    for row in rows[:limit]:
        if row.stored_bytes > budget:
            return kept, True
        budget -= row.stored_bytes
        kept.append(row)
    return kept, len(rows) > len(kept)
