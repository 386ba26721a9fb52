"""Named periods (domain/periods.py) and how SearchMemory ranks candidates said within one
(domain/recall.py, `dated`): pure functions, no index."""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime, timezone

import pytest

from memoryd.domain import recall
from memoryd.domain.periods import AFTER, BEFORE, DAY_MS, asks_when, named_periods, tells_when, within
from memoryd.domain.vectors import Candidate, VectorRecord


def ms(year: int, month: int, day: int) -> int:
    return int(datetime(year, month, day, tzinfo=timezone.utc).timestamp() * 1000)


REFERENCE = ms(2024, 1, 20)


def spans(text: str) -> list[tuple[int, int]]:
    return [(p.start, p.end) for p in named_periods(text, REFERENCE)]


def day(year: int, month: int, d: int) -> tuple[int, int]:
    return ms(year, month, d) - BEFORE, ms(year, month, d) + DAY_MS + AFTER


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("What kind of pasta did Kate make on 29 Dec 2023?", [day(2023, 12, 29)]),
        ("Where was she on December 29th, 2023?", [day(2023, 12, 29)]),
        ("the 3rd of January 2024", [day(2024, 1, 3)]),
        ("party on 2024-01-07", [day(2024, 1, 7)]),
        ("在2023年5月2日我去了哪里？", [day(2023, 5, 2)]),
        # Without a year: the latest such day at or before the reference time.
        ("在5月2号，我的心情是怎么样的？", [day(2023, 5, 2)]),
        ("What did we do on January 5?", [day(2024, 1, 5)]),
        ("Where was John between August 11 and August 15 2023?", [day(2023, 8, 15), day(2023, 8, 11)]),
    ],
)
def test_days_are_read_in_english_and_chinese_forms(text, expected):
    assert spans(text) == expected


def test_months_and_years_cover_their_whole_span():
    june = (ms(2023, 6, 1) - BEFORE, ms(2023, 7, 1) + AFTER)
    assert spans("When did Melanie go camping in June?") == [june]  # the latest June before the reference
    assert spans("in June 2023") == [june] and spans("2023年6月") == [june]
    december = (ms(2023, 12, 1) - BEFORE, ms(2024, 1, 1) + AFTER)
    assert spans("What did she buy in December 2023?") == [december]
    assert spans("What did she do in 2022?") == [(ms(2022, 1, 1) - BEFORE, ms(2023, 1, 1) + AFTER)]
    assert spans("2022年我在哪里") == [(ms(2022, 1, 1) - BEFORE, ms(2023, 1, 1) + AFTER)]


@pytest.mark.parametrize(
    "text",
    [
        "What may Caroline do next?",  # "may" the verb, "march" the verb
        "Will they march at the parade?",
        "What did she do last week?",  # relative times name no calendar period
        "How many 2023 models are there?",  # a number that is no year of anything
        "She has 5 years of experience",
        "2月30号",  # no such day
    ],
)
def test_no_period_where_none_is_named(text):
    assert named_periods(text, REFERENCE) == []


def test_a_month_named_as_a_preposition_phrase_counts_even_for_may():
    may = (ms(2023, 5, 1) - BEFORE, ms(2023, 6, 1) + AFTER)
    assert spans("Which outdoor spot did Joanna visit in May?") == [may]
    assert within(ms(2023, 5, 31), named_periods("in May", REFERENCE))
    assert not within(ms(2023, 4, 29), named_periods("in May", REFERENCE))


def scored(timestamp: int, relevance: float, name: str) -> recall.Scored:
    record = VectorRecord("s", timestamp, "m", name, "user", text=name)  # the name is the text
    return recall.Scored(Candidate(name, relevance, record), relevance)


def test_candidates_said_in_the_named_period_gain_a_share_of_the_relevance_span():
    candidates = [
        scored(ms(2023, 12, 20), 0.9, "before"),  # the best by relevance, said a week earlier
        scored(ms(2023, 12, 30), 0.7, "then"),  # "yesterday I made pasta", the day after
        scored(ms(2023, 12, 30), 0.3, "then, unrelated"),
    ]
    query = replace(recall.RecallQuery(text="What pasta did Kate make on 29 Dec 2023?", time_weight=0.0), date_weight=0.5)
    assert recall.dated(candidates, query, REFERENCE) == pytest.approx([0.0, 0.5 * 0.6, 0.5 * 0.6])
    ranked = recall.rank(candidates, query, REFERENCE)
    assert [r.candidate.point_id for r in ranked] == ["then", "before", "then, unrelated"]
    assert ranked[0].dated == pytest.approx(0.3) and ranked[0].score == pytest.approx(1.0)
    # No named period, or a weight of 0: nothing changes.
    assert recall.dated(candidates, replace(query, text="What pasta did Kate make?"), REFERENCE) == [0.0] * 3
    assert recall.dated(candidates, replace(query, date_weight=0.0), REFERENCE) == [0.0] * 3


@pytest.mark.parametrize(
    ("question", "asks"),
    [
        ("When did Caroline go to the LGBTQ support group?", True),
        ("How long has Nate had his turtles?", True),
        ("Which year did Audrey adopt her dogs?", True),
        ("你什么时候去的厦门？", True),
        ("七宗罪的上映时间是什么？", True),
        ("What did Caroline research?", False),
        ("我喜欢哪些菜系？", False),
    ],
)
def test_questions_that_ask_for_a_time(question, asks):
    assert asks_when(question) is asks


@pytest.mark.parametrize(
    ("message", "tells"),
    [
        ("I went to a LGBTQ support group yesterday and it was so powerful.", True),
        ("I've had them for 3 years now", True),
        ("We went camping last weekend", True),
        ("The concert is next month!", True),
        ("I finished my screenplay on Friday", True),
        ("Back in 2019 I lived in Ohio", True),
        ("我上周去了博物馆", True),
        ("它是2001年12月28日上映的", True),
        # Chat says these all the time: they date nothing.
        ("I'm so tired today, going to bed early tonight", False),
        ("I've been painting a lot recently", False),
        ("我今天很开心", False),
    ],
)
def test_messages_that_say_when(message, tells):
    assert tells_when(message) is tells


def test_a_question_asking_when_lifts_the_candidates_that_say_when_by_a_share_of_the_date_weight():
    candidates = [
        scored(ms(2023, 5, 8), 0.9, "Caroline: The support group was so powerful."),
        scored(ms(2023, 5, 8), 0.8, "Caroline: I went to a support group yesterday."),
        scored(ms(2023, 5, 8), 0.3, "Melanie: Wow, tell me more!"),
    ]
    query = recall.RecallQuery(text="When did Caroline go to the support group?", date_weight=0.5)
    share = recall.WHEN_SHARE * 0.5 * (0.9 - 0.3)
    assert recall.dated(candidates, query, REFERENCE) == pytest.approx([0.0, share, 0.0])
    # A named period takes precedence: a candidate within it gains the whole date_weight.
    named = replace(query, text="When in May 2023 did Caroline go to the support group?")
    assert recall.dated(candidates, named, REFERENCE) == pytest.approx([0.5 * 0.6] * 3)
