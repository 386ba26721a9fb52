"""Context assembly under a character budget (docs/CONTEXT.md). Pure: no I/O.

Input: the latest summary, the unsummarized tail (seq after the cursor), the newest raw
messages and recalled memories. Output, in prompt order: the summary, then the tail and
recent messages deduplicated by id and ordered by (timestamp, seq); recalled memories
alongside. When the budget is exceeded, parts are dropped by priority

    tail  >  summary  >  recent (raw messages a summary already covers)  >  recalled

and every cut is reported with its reason.

Rules that keep the result valid for chat-completion APIs:
- Messages are kept in *units*: an assistant message with tool calls together with the
  tool results that answer it. A unit is kept or dropped whole, so a tool result never
  appears without the assistant message that called it. A tool result whose assistant
  message is not among the candidates is dropped (CUT_REASON_ORPHAN_TOOL_RESULT).
- Within a part, units are dropped oldest first and the kept ones stay contiguous (no
  holes in the conversation). The first unit that does not fit may be shortened, when
  it is a single plain message; after it, the part stops.
- Text is cut only on character boundaries: never inside a code point (so never inside
  a multi-byte UTF-8 sequence or a UTF-16 surrogate pair), and never between a base
  character and what extends it (combining marks, variation selectors, emoji
  modifiers, zero-width joiner sequences, regional-indicator pairs).

Characters are Unicode code points of: message content, tool-call names and arguments,
summary text and recalled text.
"""

from __future__ import annotations

import enum
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass, field, replace

from memoryd.domain.models import Message


class Part(enum.IntEnum):
    # Values mirror memoryd.v1.ContextPart.
    SUMMARY = 1
    TAIL = 2
    RECENT = 3
    RECALL = 4


class CutReason(enum.IntEnum):
    # Values mirror memoryd.v1.CutReason.
    BUDGET = 1
    ORPHAN_TOOL_RESULT = 2
    TAIL_LIMIT = 3


@dataclass(frozen=True, slots=True)
class Cut:
    part: Part
    reason: CutReason
    id: str
    cut_chars: int
    truncated: bool = False


@dataclass(frozen=True, slots=True)
class Recalled:
    """A memory recalled for the last user message (a SearchMemory hit)."""

    id: str
    session_id: str
    text: str
    score: float
    timestamp: int = 0
    role: str = ""


@dataclass(frozen=True, slots=True)
class Assembled:
    message: Message
    part: Part
    truncated: bool = False


@dataclass(frozen=True, slots=True)
class SummaryText:
    """The part of a summary slice assembly needs."""

    id: str
    text: str


@dataclass
class Assembly:
    summary_text: str | None = None  # None: no summary included
    summary_truncated: bool = False
    messages: list[Assembled] = field(default_factory=list)
    recalled: list[tuple[Recalled, bool]] = field(default_factory=list)  # (item, truncated)
    used_chars: int = 0
    cuts: list[Cut] = field(default_factory=list)
    deduplicated_count: int = 0


# -- character boundaries -----------------------------------------------------
ZWJ = "\u200d"


def _extends(ch: str) -> bool:
    """True for characters that belong to the character before them."""
    cp = ord(ch)
    return (
        unicodedata.combining(ch) != 0
        or unicodedata.category(ch) in ("Mn", "Me", "Mc")
        or 0xFE00 <= cp <= 0xFE0F  # variation selectors
        or 0xE0100 <= cp <= 0xE01EF
        or 0x1F3FB <= cp <= 0x1F3FF  # emoji skin-tone modifiers
        or 0xE0020 <= cp <= 0xE007F  # emoji tag sequences
        or ch == ZWJ
        or 0xDC00 <= cp <= 0xDFFF  # low surrogate (text decoded with surrogatepass)
    )


def _regional(ch: str) -> bool:
    return 0x1F1E6 <= ord(ch) <= 0x1F1FF


def safe_cut(text: str, limit: int) -> int:
    """The largest n <= limit such that text[:n] ends on a character boundary."""
    if limit >= len(text):
        return len(text)
    n = max(limit, 0)
    while n > 0 and (_extends(text[n]) or text[n - 1] == ZWJ):
        n -= 1
    if n > 0 and _regional(text[n]) and _regional(text[n - 1]):
        # Flags are pairs of regional indicators: do not cut between the two halves.
        run = 0
        while n - run - 1 >= 0 and _regional(text[n - run - 1]):
            run += 1
        if run % 2:
            n -= 1
    return n


def cut_text(text: str, limit: int) -> str:
    return text[: safe_cut(text, limit)]


def message_chars(msg: Message) -> int:
    calls = sum(len(c.get("name", "")) + len(c.get("arguments", "")) for c in msg.tool_calls)
    return len(msg.content) + calls


# -- units ----------------------------------------------------------------------
@dataclass
class _Unit:
    messages: list[Message]
    part: Part

    @property
    def chars(self) -> int:
        return sum(message_chars(m) for m in self.messages)

    @property
    def plain(self) -> bool:
        first = self.messages[0]
        return len(self.messages) == 1 and not first.tool_calls and not first.tool_call_id

    @property
    def key(self) -> tuple[int, int]:
        first = self.messages[0]
        return (first.timestamp, first.seq)


def _units(candidates: Sequence[tuple[Message, Part]], cuts: list[Cut]) -> list[_Unit]:
    """Group messages (ordered by (timestamp, seq)) into units; report orphan tool results."""
    callers: dict[str, _Unit] = {}
    units: list[_Unit] = []
    for msg, part in candidates:
        if msg.tool_call_id:
            unit = callers.get(msg.tool_call_id)
            if unit is None:
                cuts.append(Cut(part, CutReason.ORPHAN_TOOL_RESULT, msg.id, message_chars(msg)))
                continue
            unit.messages.append(msg)
            if part == Part.TAIL:
                unit.part = Part.TAIL
            continue
        unit = _Unit([msg], part)
        units.append(unit)
        for call in msg.tool_calls:
            if call.get("id"):
                callers[call["id"]] = unit
    return units


# -- assembly -------------------------------------------------------------------
class _Budget:
    def __init__(self, budget: int | None) -> None:
        self.remaining = budget  # None: unlimited
        self.used = 0

    def fits(self, chars: int) -> bool:
        return self.remaining is None or chars <= self.remaining

    def take(self, chars: int) -> None:
        self.used += chars
        if self.remaining is not None:
            self.remaining -= chars

    @property
    def room(self) -> int:
        return 1 << 62 if self.remaining is None else self.remaining


def _fill_units(units: list[_Unit], budget: _Budget, cuts: list[Cut]) -> list[Assembled]:
    """Keep units newest first while they fit; shorten the first plain one that does not."""
    kept: list[Assembled] = []
    stopped = False
    for unit in sorted(units, key=lambda u: u.key, reverse=True):
        chars = unit.chars
        if not stopped and budget.fits(chars):
            budget.take(chars)
            kept.extend(Assembled(m, unit.part) for m in unit.messages)
            continue
        if not stopped and unit.plain and budget.room > 0:
            msg = unit.messages[0]
            text = cut_text(msg.content, budget.room)
            if text:
                budget.take(len(text))
                kept.append(Assembled(replace(msg, content=text), unit.part, truncated=True))
                cuts.append(Cut(unit.part, CutReason.BUDGET, msg.id, chars - len(text), truncated=True))
                stopped = True
                continue
        stopped = True
        cuts.extend(Cut(unit.part, CutReason.BUDGET, m.id, message_chars(m)) for m in unit.messages)
    return kept


def assemble(
    *,
    summary: SummaryText | None,
    tail: Sequence[Message],
    recent: Sequence[Message],
    recalled: Sequence[Recalled] = (),
    budget_chars: int = 0,
    tail_left_out: Message | None = None,
) -> Assembly:
    """Assemble a context. `budget_chars` 0 means unlimited.

    `tail_left_out`: the newest tail message the caller could not read (tail too long);
    reported as CUT_REASON_TAIL_LIMIT.
    """
    out = Assembly()
    budget = _Budget(budget_chars if budget_chars > 0 else None)
    if tail_left_out is not None:
        out.cuts.append(Cut(Part.TAIL, CutReason.TAIL_LIMIT, tail_left_out.id, message_chars(tail_left_out)))

    # Candidates: tail first (it wins the dedup), then recent messages not in the tail.
    parts: dict[str, tuple[Message, Part]] = {m.id: (m, Part.TAIL) for m in tail}
    for msg in recent:
        if msg.id in parts:
            out.deduplicated_count += 1
        else:
            parts[msg.id] = (msg, Part.RECENT)
    candidates = sorted(parts.values(), key=lambda item: (item[0].timestamp, item[0].seq))
    units = _units(candidates, out.cuts)

    kept = _fill_units([u for u in units if u.part == Part.TAIL], budget, out.cuts)

    if summary is not None:
        chars = len(summary.text)
        if budget.fits(chars):
            budget.take(chars)
            out.summary_text = summary.text
        else:
            text = cut_text(summary.text, budget.room)
            if text:
                budget.take(len(text))
                out.summary_text, out.summary_truncated = text, True
            out.cuts.append(Cut(Part.SUMMARY, CutReason.BUDGET, summary.id, chars - len(text), truncated=bool(text)))

    kept += _fill_units([u for u in units if u.part == Part.RECENT], budget, out.cuts)
    kept.sort(key=lambda a: (a.message.timestamp, a.message.seq))
    out.messages = kept

    present = {a.message.id for a in kept}
    stopped = False
    for item in recalled:
        if item.id and item.id in present:
            continue  # already in the context as a message
        chars = len(item.text)
        if not stopped and budget.fits(chars):
            budget.take(chars)
            out.recalled.append((item, False))
            continue
        text = cut_text(item.text, budget.room) if not stopped else ""
        stopped = True
        if text:
            budget.take(len(text))
            out.recalled.append((replace(item, text=text), True))
        out.cuts.append(Cut(Part.RECALL, CutReason.BUDGET, item.id, chars - len(text), truncated=bool(text)))

    out.used_chars = budget.used
    return out
