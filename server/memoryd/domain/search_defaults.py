"""The search defaults, in one place: what a search request leaves unset and what fills it.

Four searches rank with recall's knobs (domain/recall.py): SearchMemory (messages),
SearchSummaries (summary slices), SearchEntries (entries) and AssembleContext's recall.
A transport reads what the request set into `Asked` (None, or 0 for a count: unset) and
`settle` fills the rest, from the server's configured `RecallDefaults` (MEMORYD_RECALL_*:
time weight and half-life, keyword weight, fusion, neighbour weight) and from the
per-search constants below. gRPC and HTTP/JSON share the servicers that do this; the MCP
server is a gRPC client, so it gets the same defaults for what its tools leave unset.
"""

from __future__ import annotations

import enum
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TypeVar

from memoryd.domain import recall

T = TypeVar("T")

HOUR_MS = 3_600_000


class Search(enum.Enum):
    MESSAGES = "SearchMemory"
    SLICES = "SearchSummaries"
    ENTRIES = "SearchEntries"
    CONTEXT = "AssembleContext"  # its recall: the tenant's messages for the latest user text


# Hits returned when the request's count (top_k, limit, recall_top_k) is 0.
TOP_K = {
    Search.MESSAGES: recall.DEFAULT_TOP_K,
    Search.SLICES: recall.DEFAULT_TOP_K,
    Search.ENTRIES: 10,
    Search.CONTEXT: 5,
}
# Messages around each hit: SearchMemory's context_window; AssembleContext's recall lists
# the hits alone (the assembly has the session's own tail beside them); slices and entries
# have no neighbours.
CONTEXT_WINDOW = {
    Search.MESSAGES: recall.DEFAULT_CONTEXT_WINDOW,
    Search.SLICES: 0,
    Search.ENTRIES: 0,
    Search.CONTEXT: 0,
}
# SearchSummaries' messages per hit when include_messages asks for them and gives no count.
MESSAGES_PER_HIT = 50


def half_life_ms(hours: float) -> int:
    """A half-life given in hours (the contract's unit), in milliseconds, at least 1."""
    return max(1, round(hours * HOUR_MS))


@dataclass(frozen=True, slots=True)
class Asked:
    """The knobs a request set; None (0 for top_k, () for control_kinds): unset."""

    top_k: int = 0
    keyword_weight: float | None = None
    fusion: recall.Fusion | None = None
    time_weight: float | None = None
    half_life_ms: int | None = None
    neighbor_weight: float | None = None
    date_weight: float | None = None
    user_priority_boost: float | None = None
    context_window: int | None = None
    expand_cross_session: bool | None = None
    control_kinds: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Settled:
    """Every knob of one search, set: what the request asked, else the default."""

    top_k: int
    keyword_weight: float
    fusion: recall.Fusion
    time_weight: float
    half_life_ms: int
    neighbor_weight: float
    date_weight: float
    user_priority_boost: float
    context_window: int
    expand_cross_session: bool
    control_kinds: tuple[str, ...]

    def recall_query(self, **rest) -> recall.RecallQuery:
        """A message search with these knobs; `rest`: the query and its filters (vector,
        text, scope, sessions, exclusions, ...), none of them a knob here."""
        return recall.RecallQuery(
            top_k=self.top_k,
            keyword_weight=self.keyword_weight,
            fusion=self.fusion,
            time_weight=self.time_weight,
            half_life_ms=self.half_life_ms,
            neighbor_weight=self.neighbor_weight,
            date_weight=self.date_weight,
            user_priority_boost=self.user_priority_boost,
            context_window=self.context_window,
            expand_cross_session=self.expand_cross_session,
            control_kinds=self.control_kinds,
            **rest,
        )


def settle(
    search: Search,
    asked: Asked,
    defaults: recall.RecallDefaults,
    control_kinds: Sequence[str] = recall.DEFAULT_CONTROL_KINDS,
) -> Settled:
    """`asked`, with each unset knob filled: the server's `defaults` (configured), the
    constants of `search`, and the server's `control_kinds` (--recall-control-kinds)."""

    return Settled(
        top_k=asked.top_k or TOP_K[search],
        keyword_weight=given(asked.keyword_weight, defaults.keyword_weight),
        fusion=asked.fusion or defaults.fusion,
        time_weight=given(asked.time_weight, defaults.time_weight),
        half_life_ms=given(asked.half_life_ms, defaults.half_life_ms),
        neighbor_weight=given(asked.neighbor_weight, defaults.neighbor_weight),
        date_weight=given(asked.date_weight, recall.DEFAULT_DATE_WEIGHT),
        user_priority_boost=given(asked.user_priority_boost, recall.DEFAULT_USER_BOOST),
        context_window=given(asked.context_window, CONTEXT_WINDOW[search]),
        expand_cross_session=given(asked.expand_cross_session, True),
        control_kinds=asked.control_kinds or tuple(control_kinds),
    )


def given(value: T | None, default: T) -> T:
    return default if value is None else value
