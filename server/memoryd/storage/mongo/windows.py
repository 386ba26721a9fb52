"""Context windows on MongoDB (Store.context_windows): every window of a search in one query.

SearchMemory asks for the windows around its hits and a window of 1 around each of its best
candidates (the conversation lift), up to a hundred and more per call. Each window is a span
of its session's time line: [timestamp - before, timestamp + after]. One aggregate reads the
union of the spans of every window (`windows_pipeline`), and each window is cut from the rows
of its own span in memory, by domain/windows.py's rules. A span is read whole, so a side
holding its N messages inside the span is exact; a side that does not (the session's first
or latest messages, a pause in the conversation) is read again, a day wide, with the other
unfinished windows in one more query, and if still short, to the session's edge in a third:
at most `ROUNDS` queries per call, however many windows. Conversations put their messages
seconds to minutes apart, so a window inside a conversation is read in the first.

The shape, two `$match` stages, is chosen for both servers the tests and deployments run:
- SecantusDB (the tests' MongoDB-wire server) plans an index only for a first stage of
  equalities plus one range or `$in` on the next index field, and scans the collection for
  any `$or` (and any `$unionWith` sub-pipeline); its first stage here is served by
  messages_seq, one prefix walk per session, and the spans are applied to those rows.
- mongod coalesces the two stages into one filter and serves it from messages_range (the
  spans' `$or` branches, each an index range on (tenant, session_id, timestamp)).
Every read is bounded by the search's deadline: the store runs this under `pymongo.timeout`
(maxTimeMS from the remaining budget).
"""

from __future__ import annotations

import asyncio
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import bson
from pymongo.asynchronous.collection import AsyncCollection
from pymongo.asynchronous.database import AsyncDatabase

from memoryd.domain.models import Message
from memoryd.domain.windows import FIRST_BACKWARD_SPAN_MS, Window, WindowRequest, counts, locate
from memoryd.storage.mongo.indexes import MESSAGES, SESSIONS
from memoryd.storage.mongo.reads import MESSAGE_FIELDS, raw_collection, sized_message

# How far a side reaches in each round: 10 minutes, a day, then the session's edge.
SPANS_MS: tuple[int | None, ...] = (FIRST_BACKWARD_SPAN_MS, 86_400_000, None)
ROUNDS = len(SPANS_MS)

WINDOW_FIELDS = {**MESSAGE_FIELDS, "session_id": 1}
# Rows in the aggregate's first reply (the server also stops a batch at 16 MiB): a round's
# rows come back in that one reply, not in a getMore per 101 rows (the default).
FIRST_BATCH = 100_000


@dataclass(slots=True)
class _Span:
    """One window's read: its request and how far each side reaches (None: unbounded)."""

    request: WindowRequest
    before_ms: int | None = SPANS_MS[0]
    after_ms: int | None = SPANS_MS[0]
    widened: int = 0

    def bounds(self) -> tuple[int | None, int | None]:
        ts = self.request.timestamp
        lo = None if self.before_ms is None else ts - self.before_ms
        hi = None if self.after_ms is None else ts + self.after_ms
        return lo, hi


def _timestamp_range(lo: int | None, hi: int | None) -> dict[str, Any]:
    # `< hi + 1` for `<= hi` (integer timestamps), as store.range_filter writes it.
    where: dict[str, Any] = {}
    if lo is not None:
        where["$gte"] = lo
    if hi is not None:
        where["$lt"] = hi + 1
    return where


def merged(spans: Sequence[tuple[str, int | None, int | None]]) -> list[tuple[str, int | None, int | None]]:
    """The spans of each session as few disjoint ranges: a search's windows in one
    conversation overlap, and every `$or` branch costs (SecantusDB tests each row against
    each branch; mongod walks each as an index range)."""
    low = float("-inf")
    out: list[tuple[str, int | None, int | None]] = []
    ordered = sorted(spans, key=lambda s: (s[0], low if s[1] is None else s[1]))
    for session_id, lo, hi in ordered:
        if out and out[-1][0] == session_id:
            _, last_lo, last_hi = out[-1]
            if lo is None or last_hi is None or lo <= last_hi + 1:
                top = None if hi is None or last_hi is None else max(hi, last_hi)
                out[-1] = (session_id, last_lo, top)
                continue
        out.append((session_id, lo, hi))
    return out


def windows_pipeline(tenant: str, spans: Sequence[tuple[str, int | None, int | None]]) -> list[dict[str, Any]]:
    """The messages of every (session_id, lo, hi) span, in one aggregate (see the module
    docstring for why two `$match` stages)."""
    sessions = sorted({session_id for session_id, _, _ in spans})
    branches = []
    for session_id, lo, hi in merged(spans):
        branch: dict[str, Any] = {"session_id": session_id}
        timestamp = _timestamp_range(lo, hi)
        if timestamp:
            branch["timestamp"] = timestamp
        branches.append(branch)
    return [
        {"$match": {"tenant": tenant, "session_id": {"$in": sessions}}},
        {"$match": {"$or": branches}},
        {"$project": WINDOW_FIELDS},
    ]


def _excluded(message: Message, exclude_kinds: tuple[str, ...]) -> bool:
    # As `$nin`: a message without a kind is never excluded.
    return message.kind is not None and message.kind in exclude_kinds


def _cut(span: _Span, rows: Sequence[Message], whole: bool) -> tuple[Window, bool, bool]:
    """The window from its session's rows (sorted by (timestamp, seq)), and whether each
    side is exact: it holds its N messages inside the span, the span is unbounded, or the
    rows are the `whole` session."""
    request = span.request
    lo, hi = (None, None) if whole else span.bounds()
    ts, size = request.timestamp, request.size
    kinds = request.exclude_kinds
    inside = [
        m
        for m in rows
        if (lo is None or m.timestamp >= lo) and (hi is None or m.timestamp <= hi) and not _excluded(m, kinds)
    ]
    anchor = locate([m for m in inside if m.timestamp == ts], request)
    if size <= 0:
        return Window(anchor), True, True
    origin = (anchor.timestamp, anchor.seq) if anchor is not None else (ts, -1)
    older = [m for m in inside if counts(m) and (m.timestamp, m.seq) < origin]
    newer = [m for m in inside if counts(m) and (m.timestamp, m.seq) > origin]
    before_done = len(older) >= size or lo is None
    after_done = len(newer) >= size or hi is None
    return Window(anchor, older[-size:] if older else [], newer[:size]), before_done, after_done


async def _rows(
    messages: AsyncCollection, tenant: str, wanted: Sequence[tuple[str, int | None, int | None]]
) -> dict[str, list[Message]]:
    """The spans' messages by session, each session's in (timestamp, seq) order."""
    by_session: dict[str, list[Message]] = defaultdict(list)
    cursor = await messages.aggregate(windows_pipeline(tenant, wanted), batchSize=FIRST_BATCH)
    try:
        async for raw in cursor:
            doc = bson.decode(raw.raw)
            by_session[doc["session_id"]].append(sized_message(doc, len(raw.raw)))
    finally:
        await cursor.close()
    for found in by_session.values():
        found.sort(key=lambda m: (m.timestamp, m.seq))
    return by_session


async def session_sizes(db: AsyncDatabase, tenant: str, session_ids: set[str]) -> dict[str, int]:
    """Each session's stored messages (its document's message_count; served by sessions_id)."""
    where = {"tenant": tenant, "session_id": {"$in": sorted(session_ids)}}
    cursor = db[SESSIONS].find(where, {"_id": 0, "session_id": 1, "message_count": 1}, batch_size=len(session_ids) + 1)
    return {doc["session_id"]: int(doc.get("message_count", 0)) async for doc in cursor}


async def read_windows(db: AsyncDatabase, tenant: str, requests: Sequence[WindowRequest]) -> list[Window]:
    """Store.context_windows: one aggregate per round, nearly always one round."""
    spans = [_Span(r) for r in requests]
    done: list[Window | None] = [None] * len(spans)
    pending = list(range(len(spans)))
    messages = raw_collection(db, MESSAGES)
    sizes: dict[str, int] = {}
    first = True
    while pending:
        wanted = [(spans[i].request.session_id, *spans[i].bounds()) for i in pending]
        if first:  # beside the first round: a short session is read whole in it
            first = False
            by_session, sizes = await asyncio.gather(
                _rows(messages, tenant, wanted), session_sizes(db, tenant, {s for s, _, _ in wanted})
            )
        else:
            by_session = await _rows(messages, tenant, wanted)
        still = []
        for i in pending:
            span = spans[i]
            session_id = span.request.session_id
            found = by_session.get(session_id, [])
            # As many rows as the session holds: they are all of it (a write between the two
            # reads is seen or not, as by any read beside a write).
            size = sizes.get(session_id)
            whole = size is not None and len(found) >= size
            window, before_done, after_done = _cut(span, found, whole)
            if before_done and after_done:
                done[i] = window
                continue
            span.widened += 1
            if not before_done:
                span.before_ms = SPANS_MS[span.widened]
            if not after_done:
                span.after_ms = SPANS_MS[span.widened]
            still.append(i)
        pending = still
    return [w for w in done if w is not None]
