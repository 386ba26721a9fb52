"""Context windows: the messages around a recalled message in its session (SearchMemory).

A window of size N around an anchor (a session, timestamp, and message id or role):
- the anchor's own message: among the messages at its timestamp (control kinds left out),
  the one with its id, else (no id) the first with its role; None when it is gone;
- `before`: the N messages before it in (timestamp, seq) order, `after`: the N after it,
  both oldest first, leaving out `exclude_kinds` (a message without a kind is never
  excluded) and role "system" (delivery reports, stop markers: nobody's words), which do
  not use up N. When the anchor's message is gone, messages at its timestamp count as after.

`read_windows` computes them with any store's range queries (the same reads as
ListMessagesInRange); a store may answer Store.context_windows in fewer reads, with the
same result (the SQLite store: one statement for all windows of a search). A window of N
is the first N on each side of any larger window around the same anchor, so `WindowMemo`
answers a search's later requests from the windows it read before.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field, replace

from memoryd.domain.models import Message, Position, RangeQuery

# Range reads: rows per query, and the most rows one side of one window may scan.
CONTEXT_PAGE = 64
CONTEXT_SCAN_CAP = 2000
# Backward windows start this wide and grow 8x until they hold enough messages.
FIRST_BACKWARD_SPAN_MS = 10 * 60 * 1000

RangeReader = Callable[[RangeQuery], Awaitable[list[Message]]]
WindowReader = Callable[[Sequence["WindowRequest"]], Awaitable[list["Window"]]]


@dataclass(frozen=True, slots=True)
class WindowRequest:
    session_id: str
    timestamp: int
    message_id: str = ""  # empty: the first message at `timestamp` with `role`
    role: str = "user"
    size: int = 0  # 0: only locate the anchor's message
    exclude_kinds: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Window:
    """The anchor's own stored message (when found) and its neighbours, oldest first."""

    message: Message | None = None
    before: list[Message] = field(default_factory=list)
    after: list[Message] = field(default_factory=list)


def counts(message: Message) -> bool:
    """Whether a neighbour is context: system records are nobody's words."""
    return message.role != "system"


def _key(message: Message) -> tuple[int, int]:
    return (message.timestamp, message.seq)


async def _scan(read: RangeReader, query: RangeQuery, cap: int) -> tuple[list[Message], bool]:
    """All rows of a range query, paged; (rows, complete) where complete is False past `cap`."""
    rows: list[Message] = []
    while True:
        page = await read(query)
        rows.extend(page)
        if len(page) < query.limit:
            return rows, True
        if len(rows) >= cap:
            return rows, False
        query = replace(query, after=Position(page[-1].timestamp, page[-1].seq))


def locate(at_timestamp: Sequence[Message], request: WindowRequest) -> Message | None:
    if request.message_id:
        return next((m for m in at_timestamp if m.id == request.message_id), None)
    return next((m for m in at_timestamp if m.role == request.role), None)


async def read_window(
    read: RangeReader, request: WindowRequest, *, page: int = CONTEXT_PAGE, cap: int = CONTEXT_SCAN_CAP
) -> Window:
    """One window through range queries. Backward reads start with a 10-minute span and widen
    8x per step, so old, sparse history costs a few reads and dense history never scans the
    session; every read is bounded by `cap` rows."""
    base = RangeQuery(request.session_id, page, exclude_kinds=request.exclude_kinds)
    ts, size = request.timestamp, request.size
    at_ts, _ = await _scan(read, replace(base, from_ts=ts, to_ts=ts), cap)
    hit = locate(at_ts, request)
    if size <= 0:
        return Window(hit)
    # The hit's position; everything strictly before it is "before", after it "after".
    origin = _key(hit) if hit is not None else (ts, -1)

    after: list[Message] = []
    query = replace(base, from_ts=ts, after=Position(*origin))
    scanned = 0
    while len(after) < size and scanned < cap:
        rows = await read(query)
        scanned += len(rows)
        after.extend(m for m in rows if counts(m))
        if len(rows) < query.limit:
            break
        query = replace(query, after=Position(rows[-1].timestamp, rows[-1].seq))
    after = after[:size]

    before: deque[Message] = deque()
    hi = ts
    span = FIRST_BACKWARD_SPAN_MS
    while len(before) < size and hi >= 0:
        lo = max(0, hi - span)
        rows, complete = await _scan(read, replace(base, from_ts=lo, to_ts=hi), cap)
        if not complete and hi - lo > 1:
            span = max(1, (hi - lo) // 8)  # too dense: narrow the window and read it again
            continue
        older = [m for m in rows if counts(m) and _key(m) < origin]
        need = size - len(before)
        before.extendleft(reversed(older[-need:]))
        hi = lo - 1
        span *= 8
    return Window(hit, list(before), after)


async def read_windows(read: RangeReader, requests: Sequence[WindowRequest]) -> list[Window]:
    return list(await asyncio.gather(*(read_window(read, r) for r in requests)))


class WindowMemo:
    """A WindowReader for one search that keeps what it read: a request for an anchor it has
    a window around (the same session, timestamp, message id or role, and left-out kinds)
    that is no larger is answered from that window, cut to size; only the others are read,
    one window per anchor at the largest size asked. Requests given to `read_ahead` are read
    with the next call's. SearchMemory reads windows around its best candidates (the lift)
    and then around its hits, and knows most hits before the lift (domain/recall.py,
    likely_windows): one read serves both. It keeps at most the windows of one search."""

    def __init__(self, read: WindowReader) -> None:
        self._read = read
        self._kept: dict[tuple, tuple[int, Window]] = {}  # anchor -> (size, window)
        self._ahead: list[WindowRequest] = []

    @staticmethod
    def _anchor(request: WindowRequest) -> tuple:
        return (request.session_id, request.timestamp, request.message_id, request.role, request.exclude_kinds)

    def read_ahead(self, requests: Sequence[WindowRequest]) -> None:
        self._ahead.extend(requests)

    async def __call__(self, requests: Sequence[WindowRequest]) -> list[Window]:
        wanted: dict[tuple, WindowRequest] = {}  # anchor -> the largest request not yet kept
        for request in (*requests, *self._ahead):
            anchor = self._anchor(request)
            kept = self._kept.get(anchor)
            if (kept is None or kept[0] < request.size) and (
                anchor not in wanted or wanted[anchor].size < request.size
            ):
                wanted[anchor] = request
        self._ahead = []
        if wanted:
            for anchor, window in zip(wanted, await self._read(list(wanted.values())), strict=True):
                self._kept[anchor] = (wanted[anchor].size, window)
        return [self._cut(r) for r in requests]

    def _cut(self, request: WindowRequest) -> Window:
        size, window = self._kept[self._anchor(request)]
        if request.size >= size:
            return window
        if request.size <= 0:
            return Window(window.message)
        return Window(window.message, window.before[-request.size :], window.after[: request.size])
