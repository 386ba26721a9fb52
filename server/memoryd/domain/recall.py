"""SearchMemory semantics: candidates, fusion of keyword and semantic scores, recency rerank,
user boost, selection, context windows and truncation. The rules, with the reasons for the
defaults, are in docs/VECTORS.md ("SearchMemory") and docs/RECALL.md (the benchmark).

Pure: no Qdrant or gRPC here. Context windows are read through a `WindowReader` (the
store's Store.context_windows bound to a tenant), so the same code runs on every backend.

A search has a semantic part (a query vector, unless keyword_weight is 1) and a keyword
part (a query text, unless keyword_weight is 0); with both it is hybrid. Ranking:
1. The index returns up to `candidate_limit` candidates per part, every condition pushed
   into the engine's query (scope, roles, the caller's excluded messages; the model and
   min_score for the semantic part).
   A keyword candidate also gets the semantic score of its message's dense point.
2. With a semantic part and min_score != 0, a candidate without a semantic score of at
   least min_score is dropped (min_score applies to the semantic score only).
3. relevance: semantic only: the cosine. Otherwise the fusion of the two parts
   (RELATIVE_SCORE: the semantic scores min-max normalized over the candidates, the keyword
   scores by `keyword_normalized` (near-ties stay near each other), a candidate without a
   score 0, weighted (1 - keyword_weight) and keyword_weight; RECIPROCAL_RANK: weighted
   1 / (RRF_K + rank) per part, scaled so rank 1 in both is 1). Before fusing, the agreement
   check: a semantic part that ranks the keyword part's clear matches among its weakest
   candidates keeps only part of its weight (`semantic_agreement`, `fusion_keyword_weight`;
   an English model reading Chinese). A hybrid search states the fused score on the span of
   the candidates' cosines (`on_semantic_scale`), so recency weighs against it as it does
   against a cosine.
4. Conversation: a candidate whose adjacent message in its session (the one right before or
   after it, as a context window of 1 counts them) is one of the best `top_k x LIFTERS`
   candidates by relevance gets `neighbor_weight` x that neighbour's relevance above the
   lowest candidate's (what a message that is no candidate counts as) added to its own: the
   answer to a question is often the reply that follows it, in other words (docs/RECALL.md,
   "Conversation"). The store says which messages are adjacent (`adjacency`, one window
   read per search). Dates: a candidate said within a period the query names, or, for a
   question asking when, one that says when, gains a share of the relevance span (`dated`,
   domain/periods.py).
5. score = (1 - w) * (relevance + lift + dated) + w * recency, recency = 0.5 ** (age / half_life)
   with the age measured from the reference time (default now); in user scope, hits sent by
   or mentioning a current speaker are multiplied by the boost.
6. The best `top_k` distinct messages, minus the caller's exclusions, are the hits (a hit
   that is also context of a better hit stays a hit, marked `in_context_of`); unless
   `keep_repeated_texts`, a message with the same text as a better hit is not one (the
   hit counts it in `repeats`). Each gets its context window, minus what better hits
   already showed.

Texts: a message's points carry its text's hash, not the text (domain/vectors.py); the
texts a search needs are read from the store with its context windows, in the same read
(`text_request`: the hit's own message, located by id): the likely hits' (`likely_windows`)
and, for a question asking when, every candidate's (`with_texts`, for `dated`). Repeats
compare hashes. A hit whose message is gone from the store by then is no hit.
"""

from __future__ import annotations

import enum
import heapq
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace

from memoryd.domain.models import Message
from memoryd.domain.periods import asks_when, named_periods, tells_when, within
from memoryd.domain.vectors import Candidate, PointFilter, Scope, VectorRecord
from memoryd.domain.windows import Window, WindowReader, WindowRequest

DEFAULT_TOP_K = 5
MAX_TOP_K = 100
OVERSCAN = 4
OVERSCAN_OTHERS_ONLY = 8
DEFAULT_USER_BOOST = 2.0
DEFAULT_CONTEXT_WINDOW = 2
MAX_CONTEXT_WINDOW = 50
# Server defaults of the ranking knobs, chosen by the recall benchmark (docs/RECALL.md).
# The reference system's time weight (0.3 at a 7-day half-life) remains one request away.
DEFAULT_TIME_WEIGHT = 0.05
DEFAULT_HALF_LIFE_MS = 90 * 24 * 3600 * 1000
DEFAULT_KEYWORD_WEIGHT = 0.5
DEFAULT_NEIGHBOR_WEIGHT = 0.3
# Dates (`dated`): a candidate said within a period the query names ("on 29 Dec 2023", "in
# June", "5月2号") gains date_weight x the candidates' relevance span; for a question asking
# when, a candidate that says when ("yesterday", "3 years ago", a month) gains WHEN_SHARE of that.
DEFAULT_DATE_WEIGHT = 0.5
WHEN_SHARE = 0.6
# Candidates that may lift their neighbours: the best top_k x this by relevance (`lifters`).
LIFTERS = 2
RRF_K = 60
# Keyword scores are spread over at least this share of the best one (keyword_normalized).
KEYWORD_MIN_RANGE = 0.25
# The agreement check of a hybrid search (semantic_agreement, fusion_keyword_weight): the
# keyword part's best 3 clear matches (normalized keyword score at least 0.5), among at least
# 10 candidates; below an agreement of 0.4 the semantic part loses weight in proportion.
AGREEMENT_TOP = 3
AGREEMENT_MIN_KEYWORD = 0.5
AGREEMENT_MIN_CANDIDATES = 10
AGREEMENT_FULL = 0.4
# Event markers that are not anybody's words (compression dividers, directives and their
# replies): never context. Callers override per request.
DEFAULT_CONTROL_KINDS = ("summary", "compress-marker", "directive", "directive-reply")


class RecallScope(enum.IntEnum):
    # Values mirror memoryd.v1.RecallScope.
    SESSION = 1
    USER = 2
    PLATFORM = 3
    ALL = 4


class Fusion(enum.IntEnum):
    # Values mirror memoryd.v1.RecallFusion.
    RELATIVE_SCORE = 1
    RECIPROCAL_RANK = 2


class SliceMode(enum.IntEnum):
    # Values mirror memoryd.v1.RecallSlices (unset: OFF).
    OFF = 1
    FUSED = 2
    FIRST = 3


# RECALL_SLICES_FUSED: a message within the range of one of the best slices gains this share
# of the candidates' relevance span, times the slice's relevance relative to the best slice's
# (docs/VECTORS.md, "Slices"; measured, not swept: docs/RECALL.md, "Slices").
SLICE_WEIGHT = 0.5


@dataclass(frozen=True, slots=True)
class RecallDefaults:
    """The server's defaults for what a request leaves unset (config: MEMORYD_RECALL_*)."""

    time_weight: float = DEFAULT_TIME_WEIGHT
    half_life_ms: int = DEFAULT_HALF_LIFE_MS
    keyword_weight: float = DEFAULT_KEYWORD_WEIGHT
    fusion: Fusion = Fusion.RELATIVE_SCORE
    neighbor_weight: float = DEFAULT_NEIGHBOR_WEIGHT


@dataclass(frozen=True, slots=True)
class RecallQuery:
    vector: list[float] = field(default_factory=list)
    model_id: str = ""
    text: str = ""
    top_k: int = DEFAULT_TOP_K
    min_score: float = 0.0
    time_weight: float = DEFAULT_TIME_WEIGHT
    half_life_ms: int = DEFAULT_HALF_LIFE_MS
    reference_time: int | None = None  # ms; None: now
    keyword_weight: float = DEFAULT_KEYWORD_WEIGHT
    fusion: Fusion = Fusion.RELATIVE_SCORE
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
    keep_repeated_texts: bool = False
    neighbor_weight: float = DEFAULT_NEIGHBOR_WEIGHT
    date_weight: float = DEFAULT_DATE_WEIGHT
    # Only these sessions (a user-bound caller's own), pushed into the index query with the
    # scope; None: every session of the tenant.
    sessions: tuple[str, ...] | None = None
    slices: SliceMode = SliceMode.OFF
    # A user-bound caller's user: only points stamped with it or unstamped (PointFilter.reader).
    reader: str | None = None

    @property
    def semantic(self) -> bool:
        """Whether the search has a semantic part (a query vector that weighs something)."""
        return bool(self.vector) and self.keyword_weight < 1

    @property
    def keyword(self) -> bool:
        """Whether the search has a keyword part (a query text that weighs something)."""
        return bool(self.text.strip()) and self.keyword_weight > 0

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
        `legacy_model`), with others-only no assistant replies, and none of the messages the
        caller excludes (so they take no candidate's place and shift no normalization)."""
        return PointFilter(
            tenant,
            self.index_scope,
            model_id=self.model_id or None,
            legacy=bool(self.model_id) and legacy_model == self.model_id,
            exclude_roles=("assistant",) if self.others_only else (),
            exclude_message_ids=tuple(sorted(self.exclude_message_ids)),
            sessions=self.sessions,
            reader=self.reader,
        )


@dataclass(frozen=True, slots=True)
class Ranked:
    candidate: Candidate
    score: float
    boosted: bool
    relevance: float = 0.0
    lift: float = 0.0  # added to relevance by the best adjacent candidate (neighbor_weight x ...)
    dated: float = 0.0  # added to relevance by the query's dates (`dated`)
    semantic_weight: float = 1.0  # of the semantic score in `relevance`
    sliced: float = 0.0  # added to relevance by a slice covering the message (RECALL_SLICES_FUSED)


@dataclass(frozen=True, slots=True)
class Item:
    """A context message, its content cut to the per-item limit."""

    message: Message
    truncated_chars: int = 0


@dataclass(frozen=True, slots=True)
class RecallHit:
    """One SearchMemory hit (`MemoryHit` in the contract) with its context messages."""

    ranked: Ranked
    text: str
    truncated_chars: int
    before: list[Item] = field(default_factory=list)
    after: list[Item] = field(default_factory=list)
    in_context_of: int | None = None  # index of the better hit whose context shows this one
    repeats: int = 0  # candidates with this hit's text that it stands for (not hits themselves)

    @property
    def record(self) -> VectorRecord:
        return self.ranked.candidate.record


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
    """1.0 for a message written at `now`, halving every half-life; later ones count as now."""
    age = max(0, now - timestamp)
    return 0.5 ** (age / half_life_ms)


def spoken_by_or_mentions(record: VectorRecord, speaker_ids: Sequence[str]) -> bool:
    speakers = set(speaker_ids)
    return record.sender_id in speakers or not speakers.isdisjoint(record.mentioned_ids)


def min_max(scores: Sequence[float | None]) -> list[float]:
    """Scores scaled to [0, 1] over those present (the lowest 0, the highest 1; all equal: 1);
    a missing score is 0."""
    present = [s for s in scores if s is not None]
    if not present:
        return [0.0] * len(scores)
    lo, hi = min(present), max(present)
    if hi <= lo:
        return [0.0 if s is None else 1.0 for s in scores]
    return [0.0 if s is None else (s - lo) / (hi - lo) for s in scores]


def keyword_normalized(scores: Sequence[float | None], cut: bool) -> list[float]:
    """BM25 scores on [0, 1]: (s - floor) / max(best - floor, KEYWORD_MIN_RANGE * best), a
    missing score 0. The floor is what a point the keyword part did not return scores: 0 (it
    matches no query word) unless the part's list was `cut` at its limit, when unlisted points
    may score up to the lowest listed one, the floor. Listed scores within a quarter of the
    best are near-ties (the same common word, such as a speaker's name, in turns of different
    lengths) and stay within a quarter of each other instead of spanning [0, 1]."""
    present = [s for s in scores if s is not None]
    if not present:
        return [0.0] * len(scores)
    best = max(present)
    floor = min(present) if cut else 0.0
    span = max(best - floor, KEYWORD_MIN_RANGE * best)
    if span <= 0:
        return [0.0 if s is None else 1.0 for s in scores]
    return [0.0 if s is None else (s - floor) / span for s in scores]


def on_semantic_scale(fused: Sequence[float], semantic: Sequence[float | None]) -> list[float]:
    """Fused scores on [0, 1] restated on the span of the semantic scores (lowest cosine +
    fused * (highest - lowest)), so that a time weight trades relevance for recency at the
    same rate in a hybrid search as in a semantic one; unchanged with fewer than two distinct
    semantic scores (no span to state them on)."""
    present = [s for s in semantic if s is not None]
    if not present or max(present) <= min(present):
        return list(fused)
    lo, hi = min(present), max(present)
    return [lo + (hi - lo) * f for f in fused]


def reciprocal_ranks(scores: Sequence[float | None]) -> list[float]:
    """1 / (RRF_K + rank) by descending score (rank 1 is the best; equal scores share the
    better rank, so the order an engine returns ties in never matters), 0 for a missing score."""
    present = sorted((s for s in scores if s is not None), reverse=True)
    first_rank: dict[float, int] = {}
    for rank, score in enumerate(present, start=1):
        first_rank.setdefault(score, rank)
    return [0.0 if s is None else 1.0 / (RRF_K + first_rank[s]) for s in scores]


def semantic_agreement(semantic: Sequence[float | None], keyword: Sequence[float]) -> float | None:
    """How the semantic part ranks the keyword part's clear matches among the candidates: for
    each of the (up to) AGREEMENT_TOP best by keyword score among those with a normalized
    `keyword` score of at least AGREEMENT_MIN_KEYWORD and a semantic score, the share of
    candidates whose semantic score is lower; their mean. About 1: the semantic part also puts
    what the query's words select first; 0.5 or less: it does not tell those from the rest,
    as an English model does not with Chinese text. None when there is nothing to check (no
    clear keyword match, or fewer than AGREEMENT_MIN_CANDIDATES semantic scores). Equal keyword
    scores are taken by semantic score, so the order an engine returns ties in never matters."""
    present = [s for s in semantic if s is not None]
    pairs = ((k, s) for s, k in zip(semantic, keyword, strict=True) if s is not None and k >= AGREEMENT_MIN_KEYWORD)
    clear = sorted(pairs, key=lambda pair: (-pair[0], -pair[1]))[:AGREEMENT_TOP]
    if not clear or len(present) < AGREEMENT_MIN_CANDIDATES:
        return None
    return sum(sum(other < s for other in present) / len(present) for _, s in clear) / len(clear)


def fusion_keyword_weight(keyword_weight: float, agreement: float | None) -> float:
    """The keyword part's weight in the fusion: `keyword_weight`, unless the semantic part
    disagrees (`semantic_agreement` below AGREEMENT_FULL), when the semantic part keeps only
    agreement / AGREEMENT_FULL of its weight (the two weights still add up to 1)."""
    if agreement is None or agreement >= AGREEMENT_FULL:
        return keyword_weight
    semantic = (1 - keyword_weight) * agreement / AGREEMENT_FULL
    return keyword_weight / (keyword_weight + semantic) if keyword_weight + semantic > 0 else keyword_weight


@dataclass(frozen=True, slots=True)
class Fused:
    relevance: list[float]  # in [0, 1]
    keyword_weight: float  # the keyword part's weight after the agreement check


def fusion_of(
    semantic: Sequence[float | None],
    keyword: Sequence[float | None],
    keyword_weight: float,
    fusion: Fusion,
    keyword_cut: bool = False,
) -> Fused:
    """Relevance in [0, 1] of each candidate from its semantic and keyword scores;
    `keyword_cut`: the keyword scores are a list cut at a limit (keyword_normalized)."""
    normalized = keyword_normalized(keyword, keyword_cut)
    w = fusion_keyword_weight(keyword_weight, semantic_agreement(semantic, normalized))
    if fusion is Fusion.RECIPROCAL_RANK:
        best = 1.0 / (RRF_K + 1)
        return Fused(
            [
                ((1 - w) * s + w * k) / best
                for s, k in zip(reciprocal_ranks(semantic), reciprocal_ranks(keyword), strict=True)
            ],
            w,
        )
    return Fused([(1 - w) * s + w * k for s, k in zip(min_max(semantic), normalized, strict=True)], w)


def fuse(
    semantic: Sequence[float | None],
    keyword: Sequence[float | None],
    keyword_weight: float,
    fusion: Fusion,
    keyword_cut: bool = False,
) -> list[float]:
    """The relevance `fusion_of` gives (SearchEntries ranks with it too)."""
    return fusion_of(semantic, keyword, keyword_weight, fusion, keyword_cut).relevance


Key = tuple[str, str]
# message key -> the keys its adjacent messages may have as candidates (by id, or by timestamp
# for a point without a message id)
Adjacency = dict[Key, tuple[Key, ...]]


def _message_key(session_id: str, message: Message) -> Key:
    return (session_id, "id:" + message.id)


@dataclass(frozen=True, slots=True)
class Scored:
    """A candidate that may rank, with its relevance (steps 1-3)."""

    candidate: Candidate
    relevance: float
    semantic_weight: float = 1.0  # of the semantic score in `relevance` (fusion_keyword_weight)

    @property
    def key(self) -> Key:
        return self.candidate.record.message_key


def relevances(candidates: Iterable[Candidate], query: RecallQuery) -> list[Scored]:
    """Steps 2-3: the candidates that may rank (min_score) and their relevance."""
    kept = list(candidates)
    # The keyword part returned as many as it was asked for: more points may match.
    keyword_cut = sum(c.keyword is not None for c in kept) >= query.candidate_limit
    if query.semantic and query.min_score != 0:
        kept = [c for c in kept if c.semantic is not None and c.semantic >= query.min_score]
    if not query.keyword:
        return [Scored(c, c.semantic if c.semantic is not None else 0.0) for c in kept]
    if not query.semantic:
        relevance = fuse([None] * len(kept), [c.keyword for c in kept], 1.0, query.fusion, keyword_cut)
        return [Scored(c, r, 0.0) for c, r in zip(kept, relevance, strict=True)]
    semantic = [c.semantic for c in kept]
    fused = fusion_of(semantic, [c.keyword for c in kept], query.keyword_weight, query.fusion, keyword_cut)
    return [
        Scored(c, r, 1 - fused.keyword_weight)
        for c, r in zip(kept, on_semantic_scale(fused.relevance, semantic), strict=True)
    ]


def semantic_weight(query: RecallQuery, semantic: bool, keyword: bool, ranked: Sequence[Ranked]) -> float:
    """The weight of the semantic score in the relevance of a search that ran these parts:
    1 or 0 with one part; with both, what the fusion kept (fusion_keyword_weight), or as asked
    when nothing ranked."""
    if not keyword:
        return 1.0 if semantic else 0.0
    if not semantic:
        return 0.0
    return ranked[0].semantic_weight if ranked else 1 - query.keyword_weight


def _neighbor_keys(session_id: str, message: Message) -> tuple[Key, ...]:
    return (
        _message_key(session_id, message),
        VectorRecord(session_id=session_id, timestamp=message.timestamp).message_key,
    )


def lifters(scored: Sequence[Scored], query: RecallQuery) -> list[Scored]:
    """The candidates that may lift their neighbours: the best `top_k x LIFTERS` by relevance
    that share their session with another candidate (none at neighbor_weight 0). A message
    outside them, next to another outside them, could not rank among the hits anyway unless
    the two are nearly as relevant as the hits themselves, and every window read costs."""
    if query.neighbor_weight <= 0:
        return []
    per_session = Counter(s.candidate.record.session_id for s in scored)
    best = sorted(scored, key=lambda s: -s.relevance)[: query.top_k * LIFTERS]
    return [s for s in best if per_session[s.candidate.record.session_id] > 1]


async def adjacency(scored: Sequence[Scored], query: RecallQuery, read: WindowReader) -> Adjacency:
    """The messages next to each lifter in its session: one read of a window of 1 around
    each (`lifters`), keyed by the lifter's message."""
    records = [s.candidate.record for s in lifters(scored, query)]  # one candidate per message
    if not records:
        return {}
    windows = await read([_window_around(r, 1, query) for r in records])
    return {
        r.message_key: tuple(k for m in (*w.before, *w.after) for k in _neighbor_keys(r.session_id, m))
        for r, w in zip(records, windows, strict=True)
        if w.message is not None
    }


def lifts(scored: Sequence[Scored], adjacent: Adjacency, weight: float) -> list[float]:
    """What each candidate's best adjacent lifter adds to its relevance: `weight` x that
    lifter's relevance above the lowest candidate's (what a non-candidate counts as)."""
    if weight <= 0 or not adjacent or not scored:
        return [0.0] * len(scored)
    floor = min(s.relevance for s in scored)
    relevance = {s.key: s.relevance for s in scored}
    above: dict[Key, float] = {}  # neighbour -> its best lifter's relevance above the floor
    for lifter, neighbours in adjacent.items():
        for key in neighbours:
            above[key] = max(above.get(key, 0.0), relevance[lifter] - floor)
    return [weight * above.get(s.key, 0.0) for s in scored]


def dated(scored: Sequence[Scored], query: RecallQuery, now: int) -> list[float]:
    """What the query's dates add to each candidate's relevance, in shares of the candidates'
    relevance span: `date_weight` for a message said within a period the query names (its
    timestamp, which neither part sees, dates what it tells), else WHEN_SHARE x `date_weight`
    for a message that says when (periods.tells_when) if the query asks when (the answer to
    "When did ...?" is a message that dates its event: "... yesterday", "3 years ago")."""
    if query.date_weight <= 0 or not query.text or not scored:
        return [0.0] * len(scored)
    periods = named_periods(query.text, now)
    when = asks_when(query.text)
    if not (periods or when):
        return [0.0] * len(scored)
    span = max(s.relevance for s in scored) - min(s.relevance for s in scored)
    added = []
    for s in scored:
        if periods and within(s.candidate.record.timestamp, periods):
            added.append(query.date_weight * span)
        elif when and tells_when(s.candidate.record.text):
            added.append(WHEN_SHARE * query.date_weight * span)
        else:
            added.append(0.0)
    return added


def sliced(scored: Sequence[Scored], shares: Callable[[VectorRecord], float]) -> list[float]:
    """What slices add to each candidate's relevance: SLICE_WEIGHT x the candidates' relevance
    span x `shares(record)` (the best covering slice's relevance relative to the best slice's,
    0 when none covers it)."""
    if not scored:
        return []
    span = max(s.relevance for s in scored) - min(s.relevance for s in scored)
    return [SLICE_WEIGHT * span * shares(s.candidate.record) for s in scored]


def rank(
    scored: Sequence[Scored],
    query: RecallQuery,
    now: int,
    adjacent: Adjacency | None = None,
    slice_lifts: Sequence[float] | None = None,
) -> list[Ranked]:
    """Steps 4-5: the candidates by score, best first; `adjacent` (from `adjacency`) lifts, and
    so do `slice_lifts` (from `sliced`)."""
    w = query.time_weight
    ranked = []
    extra = slice_lifts if slice_lifts is not None else [0.0] * len(scored)
    for s, lift, when, by_slice in zip(
        scored, lifts(scored, adjacent or {}, query.neighbor_weight), dated(scored, query, now), extra, strict=True
    ):
        candidate = s.candidate
        score = (1 - w) * (s.relevance + lift + when + by_slice) + w * recency(
            candidate.record.timestamp, now, query.half_life_ms
        )
        boosted = query.scope is RecallScope.USER and spoken_by_or_mentions(candidate.record, query.speaker_ids)
        if boosted:
            score *= query.user_priority_boost
        ranked.append(Ranked(candidate, score, boosted, s.relevance, lift, when, s.semantic_weight, by_slice))
    ranked.sort(key=lambda r: (-r.score, -r.relevance, -r.candidate.record.timestamp, r.candidate.point_id))
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


# -- texts -------------------------------------------------------------------------
TextOf = Callable[[Message], str]  # a stored message's indexed text (vectors/records.indexed_text)


def text_request(record: VectorRecord, kinds: tuple[str, ...] = ()) -> WindowRequest | None:
    """What to read for the text of the message `record` indexes: the message itself, by id
    (None: the record carries its text, or it was read already). Left out `kinds`, it is the
    anchor of the record's context window (one lookup serves both); a message of those kinds
    is then read again without them (`_read_texts`)."""
    if not record.stored_text or record.text:
        return None
    return WindowRequest(record.session_id, record.timestamp, record.message_id, record.effective_role, 0, kinds)


async def _read_texts(
    requests: Sequence[WindowRequest | None], found: list[Window | None], read: WindowReader
) -> list[Window | None]:
    """`found` (the windows of `requests`), with the messages a request's left-out kinds hid
    read again without them: a hit of a kind the query leaves out of context is still a hit."""
    again = [
        i for i, (r, w) in enumerate(zip(requests, found, strict=True)) if r and r.exclude_kinds and w and not w.message
    ]
    if again:
        hidden = [replace(r, exclude_kinds=()) for i in again if (r := requests[i]) is not None]
        for i, window in zip(again, await read(hidden), strict=True):
            found[i] = window
    return found


def _with_text(candidate: Candidate, window: Window | None, text_of: TextOf) -> Candidate | None:
    """The candidate with its stored text read (`window`: its text_request's); None when its
    message is gone from the store."""
    if window is None:
        return candidate
    if window.message is None:
        return None
    return replace(candidate, record=replace(candidate.record, text=text_of(window.message)))


def needs_texts(query: RecallQuery) -> bool:
    """Whether ranking reads the candidates' texts (`dated`: a question asking when)."""
    return query.date_weight > 0 and bool(query.text) and asks_when(query.text)


async def with_texts(scored: Sequence[Scored], query: RecallQuery, read: WindowReader, text_of: TextOf) -> list[Scored]:
    """The candidates with the texts ranking reads (none unless `needs_texts`), in one read
    with whatever was read ahead (windows.WindowMemo). A candidate whose message is gone
    keeps no text (it is no hit: select_hits)."""
    if not needs_texts(query):
        return list(scored)
    requests = [text_request(s.candidate.record, query.control_kinds) for s in scored]
    wanted = [r for r in requests if r is not None]
    if not wanted:
        return list(scored)
    read_back = iter(await read(wanted))
    found = await _read_texts(requests, [next(read_back) if r is not None else None for r in requests], read)
    out = []
    for s, window in zip(scored, found, strict=True):
        candidate = _with_text(s.candidate, window, text_of)
        out.append(replace(s, candidate=candidate) if candidate is not None else s)
    return out


def ahead_texts(scored: Sequence[Scored], query: RecallQuery) -> list[WindowRequest]:
    """The text reads `with_texts` will make (to read them ahead, with the windows)."""
    if not needs_texts(query):
        return []
    requests = (text_request(s.candidate.record, query.control_kinds) for s in scored)
    return [r for r in requests if r is not None]


# -- selection ---------------------------------------------------------------------
def _window_around(record: VectorRecord, size: int, query: RecallQuery) -> WindowRequest:
    """The window of `size` around the message `record` indexes (by id, else its role at its
    timestamp), leaving out the query's control kinds."""
    return WindowRequest(
        record.session_id, record.timestamp, record.message_id, record.effective_role, size, query.control_kinds
    )


def _window_request(record: VectorRecord, query: RecallQuery) -> WindowRequest | None:
    """What to read for a hit: its context window, or only its message (to know which one a
    point without a message id indexes); None when nothing is needed."""
    expand = query.expand_cross_session or record.session_id == query.session_id
    size = query.context_window if expand else 0
    if size <= 0 and (record.message_id or not expand):
        return None
    return _window_around(record, size, query)


def likely_windows(scored: Sequence[Scored], query: RecallQuery) -> list[WindowRequest]:
    """The windows `select_hits` would read first were the best `top_k` by relevance the
    hits: what a search reads ahead, with the lift's windows (windows.WindowMemo). Most hits
    are (the lift, recency and dates reorder few); a hit that is not costs a read after."""
    best = heapq.nlargest(query.top_k, scored, key=lambda s: s.relevance)
    requests = (_window_request(s.candidate.record, query) for s in best)
    texts = (text_request(s.candidate.record, query.control_kinds) for s in best)
    return [r for r in (*requests, *texts) if r is not None]


def _repeated_text(record: VectorRecord, query: RecallQuery, texts: set[int | None]) -> bool:
    """Whether the record says exactly what a better hit says (and the search collapses
    repeats). The same small talk or greeting said in many sessions would otherwise fill the
    hit list with copies that tell the agent nothing new (docs/RECALL.md, "Repeated texts")."""
    key = record.text_key
    return not query.keep_repeated_texts and key is not None and key in texts


async def _choose(
    ranked: Sequence[Ranked], query: RecallQuery, read: WindowReader, text_of: TextOf
) -> list[tuple[Ranked, Window, Key]]:
    """The best `top_k` distinct messages the caller does not exclude and the store still
    has, with their windows and texts; no two with the same text unless the query keeps
    repeats."""
    excluded = query.exclude_message_ids
    chosen: list[tuple[Ranked, Window, Key]] = []
    taken: set[Key] = set()
    texts: set[int | None] = set()  # text keys of the chosen and of the batch being read
    position = 0
    while len(chosen) < query.top_k and position < len(ranked):
        batch: list[Ranked] = []
        keys: set[Key] = set()
        while position < len(ranked) and len(batch) < query.top_k - len(chosen):
            candidate = ranked[position]
            position += 1
            record = candidate.candidate.record
            if record.message_id in excluded or record.message_key in taken or record.message_key in keys:
                continue
            if _repeated_text(record, query, texts):
                continue
            keys.add(record.message_key)
            texts.add(record.text_key)
            batch.append(candidate)
        requests = [_window_request(r.candidate.record, query) for r in batch]
        own = [text_request(r.candidate.record, query.control_kinds) for r in batch]  # in the same read
        wanted = [r for r in (*requests, *own) if r is not None]
        found = iter(await read(wanted) if wanted else [])
        windows = [next(found) if r is not None else Window() for r in requests]
        own_windows = await _read_texts(own, [next(found) if r is not None else None for r in own], read)
        for candidate, window, own_window in zip(batch, windows, own_windows, strict=True):
            record = candidate.candidate.record
            read_back = _with_text(candidate.candidate, own_window, text_of)
            if read_back is None:  # its message is gone from the store since it was indexed
                texts.discard(record.text_key)
                continue
            candidate = replace(candidate, candidate=read_back)
            key = _message_key(record.session_id, window.message) if window.message is not None else record.message_key
            if key in taken or (window.message is not None and window.message.id in excluded):
                # Not a hit after all (its message already is one, or is excluded): its text
                # no longer stands for later repeats. (Repeats this batch already skipped stay
                # skipped; a point without a message id has its message's text in practice.)
                texts.discard(record.text_key)
                continue
            taken.update((key, record.message_key))
            chosen.append((candidate, window, key))
            if len(chosen) == query.top_k:
                break
    return chosen


def _repeats(ranked: Sequence[Ranked], query: RecallQuery) -> Counter[int]:
    """How many distinct candidate messages have each text (by its key; collapsed searches only)."""
    if query.keep_repeated_texts:
        return Counter()
    keys = {r.candidate.record.message_key: r.candidate.record.text_key for r in ranked}
    return Counter(k for k in keys.values() if k is not None)


async def select_hits(
    ranked: Sequence[Ranked], query: RecallQuery, read: WindowReader, text_of: TextOf = lambda m: m.content
) -> list[RecallHit]:
    """The hits, best first, each with its text (read from the store for a message's point:
    `text_of` its stored message) and the part of its window that no better hit showed."""
    excluded = query.exclude_message_ids
    shown: dict[Key, int] = {}  # message -> the hit that showed it (as itself or as context)
    hits: list[RecallHit] = []
    said = _repeats(ranked, query)
    for index, (candidate, window, key) in enumerate(await _choose(ranked, query, read, text_of)):
        record = candidate.candidate.record
        in_context_of = shown.get(key)
        shown[key] = index

        def fresh(message: Message, session_id: str = record.session_id) -> bool:
            return message.id not in excluded and _message_key(session_id, message) not in shown

        before = [m for m in window.before if fresh(m)]
        after = [m for m in window.after if fresh(m)]
        for m in (*before, *after):
            shown[_message_key(record.session_id, m)] = index
        text, cut = truncate(record.text, query.per_item_max_chars)
        hits.append(
            RecallHit(
                candidate,
                text,
                cut,
                [_truncate_message(m, query.per_item_max_chars) for m in before],
                [_truncate_message(m, query.per_item_max_chars) for m in after],
                in_context_of,
                max(0, said[record.text_key] - 1) if record.text_key is not None else 0,
            )
        )
    return hits
