"""SearchMemory semantics: candidate filtering, recency rerank, user boost, context windows,
dedup and truncation (SPEC §5, seed 003).

Pure: no Qdrant or gRPC here. Context windows read messages through a `RangeReader`
(the store's range query bound to a tenant), so the same code runs on every backend.

Ranking of one search, in order:
1. The index returns the `top_k * 4` nearest points (`* 8` with others-only) among those
   that match every condition, pushed into the engine's query: the scope, the query's
   model (a vector without a model id counts as the tenant's legacy model), with
   others-only no role "assistant" (a missing role is "user"), and a semantic score of at
   least `min_score` (0 keeps all). So a search fills `top_k` whenever that many points
   match, however the models are mixed.
2. Other models' points that a filter applied after retrieval would have met among the
   same number of nearest points in scope are counted (`excluded_models`).
3. score = (1 - w) * semantic + w * recency, recency = 0.5 ** (age / half_life):
   1 for a message written now, 0.5 one half-life ago, 0.25 two half-lives ago.
4. In user scope, hits sent by or mentioning a current speaker are multiplied by the boost.
5. Best first, each message once: a candidate already shown (as a hit or as context of a
   better hit) or excluded by the caller is skipped and the next candidate takes its place.
"""

from __future__ import annotations

import asyncio
import enum
from collections import Counter, deque
from collections.abc import Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace

from memoryd.domain.models import Message, Position, RangeQuery
from memoryd.domain.vectors import Candidate, PointFilter, Scope, VectorRecord

DEFAULT_TOP_K = 5
MAX_TOP_K = 100
OVERSCAN = 4
OVERSCAN_OTHERS_ONLY = 8
DEFAULT_TIME_WEIGHT = 0.3
DEFAULT_USER_BOOST = 2.0
DEFAULT_CONTEXT_WINDOW = 2
MAX_CONTEXT_WINDOW = 50
DEFAULT_HALF_LIFE_MS = 7 * 24 * 3600 * 1000
# Event markers that are not anybody's words (compression dividers, directives and their
# replies): never context. Callers override per request.
DEFAULT_CONTROL_KINDS = ("summary", "compress-marker", "directive", "directive-reply")

# Context reads: rows per range query, and the most rows one side of one window may scan.
CONTEXT_PAGE = 64
CONTEXT_SCAN_CAP = 2000
# Backward windows start this wide and grow 8x until they hold enough messages.
FIRST_BACKWARD_SPAN_MS = 10 * 60 * 1000

RangeReader = Callable[[RangeQuery], Awaitable[list[Message]]]


class RecallScope(enum.IntEnum):
    # Values mirror memoryd.v1.RecallScope.
    SESSION = 1
    USER = 2
    PLATFORM = 3
    ALL = 4


@dataclass(frozen=True, slots=True)
class RecallQuery:
    vector: list[float]
    model_id: str
    top_k: int = DEFAULT_TOP_K
    min_score: float = 0.0
    time_weight: float = DEFAULT_TIME_WEIGHT
    scope: RecallScope = RecallScope.ALL
    session_id: str = ""
    platform: str = ""
    speaker_ids: tuple[str, ...] = ()
    user_priority_boost: float = DEFAULT_USER_BOOST
    others_only: bool = False
    context_window: int = DEFAULT_CONTEXT_WINDOW
    expand_cross_session: bool = True
    per_item_max_chars: int = 0
    exclude_message_ids: frozenset[str] = frozenset()
    control_kinds: tuple[str, ...] = DEFAULT_CONTROL_KINDS

    @property
    def candidate_limit(self) -> int:
        return self.top_k * (OVERSCAN_OTHERS_ONLY if self.others_only else OVERSCAN)

    @property
    def index_scope(self) -> Scope:
        """The scope pushed into the index query (a hard boundary, not a preference)."""
        if self.scope is RecallScope.SESSION:
            return Scope(session_id=self.session_id)
        if self.scope is RecallScope.USER:
            return Scope(session_id=self.session_id, speaker_ids=self.speaker_ids)
        if self.scope is RecallScope.PLATFORM:
            return Scope(platform=self.platform)
        return Scope()

    def point_filter(self, tenant: str, legacy_model: str) -> PointFilter:
        """The candidates' conditions: scope, the query's model (legacy vectors count as
        `legacy_model`), and with others-only no assistant replies."""
        return PointFilter(
            tenant,
            self.index_scope,
            model_id=self.model_id,
            legacy=legacy_model == self.model_id,
            exclude_roles=("assistant",) if self.others_only else (),
        )


@dataclass(frozen=True, slots=True)
class Ranked:
    candidate: Candidate
    score: float
    boosted: bool


@dataclass(frozen=True, slots=True)
class Item:
    """A context message, its content cut to the per-item limit."""

    message: Message
    truncated_chars: int = 0


@dataclass(frozen=True, slots=True)
class Hit:
    ranked: Ranked
    text: str
    truncated_chars: int
    before: list[Item] = field(default_factory=list)
    after: list[Item] = field(default_factory=list)

    @property
    def record(self) -> VectorRecord:
        return self.ranked.candidate.record


@dataclass(frozen=True, slots=True)
class Window:
    """Context of one hit: the hit's own stored message (when found) and its neighbours."""

    message: Message | None = None
    before: list[Message] = field(default_factory=list)
    after: list[Message] = field(default_factory=list)


# -- filtering and scoring ---------------------------------------------------------
def excluded_models(pool_models: Counter[str | None], model_id: str, legacy_model: str) -> Counter[str]:
    """Points of other models among the nearest in scope, per model (legacy ones as `legacy_model`)."""
    excluded: Counter[str] = Counter()
    for model, count in pool_models.items():
        effective = model or legacy_model
        if effective != model_id:
            excluded[effective] += count
    return excluded


def recency(timestamp: int, now: int, half_life_ms: int) -> float:
    """1.0 for a message written now, halving every half-life; future timestamps count as now."""
    age = max(0, now - timestamp)
    return 0.5 ** (age / half_life_ms)


def spoken_by_or_mentions(record: VectorRecord, speaker_ids: Sequence[str]) -> bool:
    speakers = set(speaker_ids)
    return record.sender_id in speakers or not speakers.isdisjoint(record.mentioned_ids)


def rank(candidates: Iterable[Candidate], query: RecallQuery, now: int, half_life_ms: int) -> list[Ranked]:
    w = query.time_weight
    ranked = []
    for candidate in candidates:
        score = (1 - w) * candidate.semantic + w * recency(candidate.record.timestamp, now, half_life_ms)
        boosted = query.scope is RecallScope.USER and spoken_by_or_mentions(candidate.record, query.speaker_ids)
        if boosted:
            score *= query.user_priority_boost
        ranked.append(Ranked(candidate, score, boosted))
    ranked.sort(key=lambda r: (-r.score, -r.candidate.semantic, -r.candidate.record.timestamp, r.candidate.point_id))
    return ranked


def truncate(text: str, max_chars: int) -> tuple[str, int]:
    """Cut to `max_chars` characters and say how many were cut; 0 means no limit."""
    if max_chars <= 0 or len(text) <= max_chars:
        return text, 0
    cut = len(text) - max_chars
    return f"{text[:max_chars]}…[truncated {cut} chars]", cut


def _truncate_message(message: Message, max_chars: int) -> Item:
    content, cut = truncate(message.content, max_chars)
    if not cut:
        return Item(message)
    return Item(replace(message, content=content), cut)


# -- context windows ---------------------------------------------------------------
def _counts(message: Message) -> bool:
    # Control kinds are already left out by the range query; system records (delivery
    # reports, stop markers) are read but are nobody's words.
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


def _locate(at_ts: list[Message], record: VectorRecord) -> Message | None:
    if record.message_id:
        return next((m for m in at_ts if m.id == record.message_id), None)
    return next((m for m in at_ts if m.role == record.effective_role), None)


async def context_window(
    read: RangeReader,
    record: VectorRecord,
    size: int,
    control_kinds: Sequence[str],
    *,
    page: int = CONTEXT_PAGE,
    cap: int = CONTEXT_SCAN_CAP,
) -> Window:
    """`size` counted messages before and after the hit in its session, oldest first.

    The hit's message is found among the messages at its timestamp (by message id, else
    the first with its role); if it is gone, messages at that timestamp count as after.
    """
    kinds = tuple(control_kinds)
    base = RangeQuery(record.session_id, page, exclude_kinds=kinds)
    ts = record.timestamp
    at_ts, _ = await _scan(read, replace(base, from_ts=ts, to_ts=ts), cap)
    hit = _locate(at_ts, record)
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
        after.extend(m for m in rows if _counts(m))
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
        older = [m for m in rows if _counts(m) and _key(m) < origin]
        need = size - len(before)
        before.extendleft(reversed(older[-need:]))
        hi = lo - 1
        span *= 8
    return Window(hit, list(before), after)


# -- selection ---------------------------------------------------------------------
Expander = Callable[[VectorRecord], Awaitable[Window]]


def _record_key(record: VectorRecord, found: Message | None) -> tuple[str, str]:
    if record.message_id:
        return (record.session_id, "id:" + record.message_id)
    if found is not None:
        return (record.session_id, "id:" + found.id)
    return (record.session_id, f"ts:{record.timestamp}")


async def select_hits(ranked: Sequence[Ranked], query: RecallQuery, expand: Expander | None) -> list[Hit]:
    """Best `top_k` distinct messages, each with its context window (when `expand`)."""
    seen: set[tuple[str, str]] = set()
    excluded = query.exclude_message_ids
    hits: list[Hit] = []
    position = 0

    def fresh(message: Message, session_id: str) -> bool:
        return message.id not in excluded and (session_id, "id:" + message.id) not in seen

    while len(hits) < query.top_k and position < len(ranked):
        batch: list[Ranked] = []
        batch_keys: set[tuple[str, str]] = set()
        while position < len(ranked) and len(batch) < query.top_k - len(hits):
            candidate = ranked[position]
            position += 1
            record = candidate.candidate.record
            key = _record_key(record, None)
            if record.message_id in excluded or key in seen or key in batch_keys:
                continue
            batch_keys.add(key)
            batch.append(candidate)
        windows = await asyncio.gather(
            *(_window_for(r.candidate.record, query, expand) for r in batch)
        )
        for candidate, window in zip(batch, windows):
            record = candidate.candidate.record
            key = _record_key(record, window.message)
            if key in seen or (window.message is not None and window.message.id in excluded):
                continue
            seen.add(key)
            seen.add(_record_key(record, None))
            before = [m for m in window.before if fresh(m, record.session_id)]
            after = [m for m in window.after if fresh(m, record.session_id)]
            seen.update((record.session_id, "id:" + m.id) for m in (*before, *after))
            text, cut = truncate(record.text, query.per_item_max_chars)
            hits.append(
                Hit(
                    candidate,
                    text,
                    cut,
                    [_truncate_message(m, query.per_item_max_chars) for m in before],
                    [_truncate_message(m, query.per_item_max_chars) for m in after],
                )
            )
            if len(hits) == query.top_k:
                break
    return hits


async def _window_for(record: VectorRecord, query: RecallQuery, expand: Expander | None) -> Window:
    if expand is None:
        return Window()
    if not query.expand_cross_session and record.session_id != query.session_id:
        return Window()
    return await expand(record)
