"""The dates of a query and of a message, for SearchMemory's `dated` rule (domain/recall.py;
docs/VECTORS.md, "Dates"): the date of what a message tells is its timestamp, which neither
the keyword nor the semantic part sees.

- `named_periods`: the periods a query names: "on 29 Dec 2023", "December 29, 2023", "in
  June", "in 2022", "5月2号", "2023年5月", "2024-01-07". Candidates said within them rank higher.
- `asks_when` / `tells_when`: a question that asks for a time ("When did ...", "How long
  ...", "什么时候") and a message that says when ("yesterday", "3 years ago", "last Friday", a
  month or year, "上周"). For such a question, such candidates rank higher: the answer to
  "When did Caroline go to the support group?" is "I went to the support group yesterday".
  English and Chinese only, as the keyword index's stopwords.

Pure: text and a reference time in, intervals of ms since the epoch (UTC) out. A date or a
month without a year is the latest one at or before the reference time. A day, month or year
is widened by `AFTER` past its end, since a message tells what happened a few days before
("yesterday", "last week"), and by `BEFORE` before its start (time zones). Only explicit
calendar names count: "last week" or "recently" name no period.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

DAY_MS = 86_400_000
BEFORE = 1 * DAY_MS
AFTER = 7 * DAY_MS

_MONTHS = {
    "january": 1, "february": 2, "march": 3, "april": 4, "may": 5, "june": 6, "july": 7, "august": 8,
    "september": 9, "october": 10, "november": 11, "december": 12,
    "jan": 1, "feb": 2, "mar": 3, "apr": 4, "jun": 6, "jul": 7, "aug": 8, "sep": 9, "sept": 9, "oct": 10,
    "nov": 11, "dec": 12,
}  # fmt: skip
_MONTH = (
    r"(january|february|march|april|may|june|july|august|september|october|november|december"
    r"|jan|feb|mar|apr|jun|jul|aug|sept|sep|oct|nov|dec)\.?"
)
_DAY = r"(\d{1,2})(?:st|nd|rd|th)?"
_YEAR = r"((?:19|20)\d\d)"
# Longest forms first: each match removes its text, so "29 Dec 2023" is not also "Dec 2023".
_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (kind, re.compile(pattern, re.IGNORECASE))
    for kind, pattern in (
        ("ymd", r"\b((?:19|20)\d\d)[-/.](\d{1,2})[-/.](\d{1,2})\b"),
        ("ymd", r"((?:19|20)\d\d)\s*年\s*(\d{1,2})\s*月\s*(\d{1,2})\s*[日号號]"),
        ("dmy", rf"\b{_DAY}\s+(?:of\s+)?{_MONTH},?\s+{_YEAR}\b"),
        ("mdy", rf"\b{_MONTH}\s+{_DAY},?\s+{_YEAR}\b"),
        ("md", r"(\d{1,2})\s*月\s*(\d{1,2})\s*[日号號]"),
        ("dm", rf"\b{_DAY}\s+(?:of\s+)?{_MONTH}\b"),
        ("md_en", rf"\b{_MONTH}\s+{_DAY}\b"),
        ("ym", r"((?:19|20)\d\d)\s*年\s*(\d{1,2})\s*月"),
        ("my", rf"\b{_MONTH},?\s+{_YEAR}\b"),
        ("y", r"((?:19|20)\d\d)\s*年"),
        ("y", rf"\b(?:in|during|of|since|from|until|by)\s+{_YEAR}\b"),
        ("m", r"(?<![\d年])(\d{1,2})\s*月(?!\s*\d)"),
        # A bare month name; "may" and "march" only after a preposition (else they are verbs).
        ("m_en", r"\b(?:in|during|of|early|late|mid|since|until|by)[\s-]+(may|march)\b"),
        ("m_en", r"\b(january|february|april|june|july|august|september|october|november|december)\b"),
    )
)


@dataclass(frozen=True, slots=True)
class Period:
    """[start, end) in ms since the epoch, widened as the module says."""

    start: int
    end: int

    def __contains__(self, timestamp: int) -> bool:
        return self.start <= timestamp < self.end


def _ms(moment: datetime) -> int:
    return int(moment.timestamp() * 1000)


def _span(start: datetime, end: datetime) -> Period:
    return Period(_ms(start) - BEFORE, _ms(end) + AFTER)


def _day(year: int, month: int, day: int) -> Period | None:
    try:
        start = datetime(year, month, day, tzinfo=UTC)
    except ValueError:
        return None
    return _span(start, start + timedelta(days=1))


def _month(year: int, month: int) -> Period | None:
    if not 1 <= month <= 12:
        return None
    start = datetime(year, month, 1, tzinfo=UTC)
    end = datetime(year + month // 12, month % 12 + 1, 1, tzinfo=UTC)
    return _span(start, end)


def _year(year: int) -> Period:
    return _span(datetime(year, 1, 1, tzinfo=UTC), datetime(year + 1, 1, 1, tzinfo=UTC))


def _latest(reference: datetime, month: int, day: int = 1) -> int:
    """The year of the latest (month, day) at or before the reference."""
    year = reference.year
    try:
        if datetime(year, month, day, tzinfo=UTC) > reference:
            year -= 1
    except ValueError:
        pass
    return year


def _month_number(name: str) -> int:
    return _MONTHS[name.lower().rstrip(".")]


def named_periods(text: str, reference_ms: int) -> list[Period]:
    """The periods `text` names, in the order found; [] when it names none."""
    reference = datetime.fromtimestamp(reference_ms / 1000, tz=UTC)
    found: list[Period | None] = []
    for kind, pattern in _PATTERNS:
        for match in pattern.finditer(text):
            g = match.groups()
            if kind == "ymd":
                found.append(_day(int(g[0]), int(g[1]), int(g[2])))
            elif kind == "dmy":
                found.append(_day(int(g[2]), _month_number(g[1]), int(g[0])))
            elif kind == "mdy":
                found.append(_day(int(g[2]), _month_number(g[0]), int(g[1])))
            elif kind in ("md", "dm", "md_en"):
                month, day = (int(g[0]), int(g[1])) if kind == "md" else (
                    (_month_number(g[1]), int(g[0])) if kind == "dm" else (_month_number(g[0]), int(g[1])))  # fmt: skip
                found.append(_day(_latest(reference, month, day) if 1 <= month <= 12 else 0, month, day))
            elif kind == "ym":
                found.append(_month(int(g[0]), int(g[1])))
            elif kind == "my":
                found.append(_month(int(g[1]), _month_number(g[0])))
            elif kind == "y":
                found.append(_year(int(g[0])))
            else:
                month = int(g[0]) if kind == "m" else _month_number(g[0])
                found.append(_month(_latest(reference, month), month) if 1 <= month <= 12 else None)
        text = pattern.sub(" ", text)
    return list(dict.fromkeys(p for p in found if p is not None))


def within(timestamp: int, periods: list[Period]) -> bool:
    return any(timestamp in p for p in periods)


_ASKS_WHEN = re.compile(
    r"\b(?:when|what time|what date|which (?:year|month|day|date|week)|how long|how many (?:years|months|weeks|days))\b"
    r"|什么时候|何时|哪天|哪一天|哪年|哪一年|几号|几月|多久|多长时间|日期|时间",
    re.IGNORECASE,
)
_WEEKDAY = r"(?:mon|tues|wednes|thurs|fri|satur|sun)day"
_TELLS_WHEN = re.compile(
    rf"\b(?:yesterday|ago|since|{_WEEKDAY}s?"
    r"|(?:last|next|past|coming) (?:week|weekend|month|year|night|time|summer|winter|spring|fall|autumn|\w+day)"
    r"|\d+\s*(?:years?|months?|weeks?|days?|hours?)"
    r"|(?:january|february|march|april|may|june|july|august|september|october|november|december)"
    r"|(?:19|20)\d\d)\b"
    r"|昨天|前天|上周|上个月|去年|前年|当时|那天|以前|之前"
    r"|[周星期礼拜][一二三四五六日天]|\d+\s*(?:年|月|日|号|天|周|个月|小时|分钟)",
    re.IGNORECASE,
)


def asks_when(text: str) -> bool:
    """Whether a question asks for a time ("When did ...", "How long ...", "什么时候 ...")."""
    return bool(_ASKS_WHEN.search(text))


def tells_when(text: str) -> bool:
    """Whether a message says when something happened: a past or coming time relative to it
    ("yesterday", "last week", "next month", "3 years ago", "上周"), a weekday, a month or a
    year. "Today", "tomorrow", "recently" and the like are left out: chat says them all the
    time, and counting them cost REALTALK's questions (docs/RECALL.md, "Dates")."""
    return bool(_TELLS_WHEN.search(text))
