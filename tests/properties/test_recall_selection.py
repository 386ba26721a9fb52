"""Property-based: SearchMemory's selection (domain/recall.select_hits) against a reference
model of its rule (docs/VECTORS.md, "Selection"), over random ranked candidates whose texts
repeat: the hits are the first `top_k` candidates in rank order that are neither excluded,
nor a message already chosen, nor (unless `keep_repeated_texts`) a non-empty text already
chosen; each hit's `repeats` is the number of other candidate messages with its text.

Context windows are 0 and every candidate has a message id, so no window is read (the
reader asserts it); windows are covered against real stores in tests/vectors/test_recall.py.
"""

from __future__ import annotations

import asyncio
from collections import Counter

from hypothesis import given, settings
from hypothesis import strategies as st

from memoryd.domain.recall import Ranked, RecallQuery, select_hits
from memoryd.domain.vectors import Candidate, VectorRecord

TEXTS = ("", "hi", "The train was late again.", "Sounds good!", "I row now.")


async def no_windows(requests):
    assert not requests, "context window 0 with message ids reads nothing"
    return []


SESSIONS = ("s1", "s2")
MESSAGES_PER_SESSION = 8
candidates = st.lists(st.tuples(st.sampled_from(SESSIONS), st.integers(0, MESSAGES_PER_SESSION - 1)), max_size=30)
# The text of each message (a message's points all carry its text).
message_texts = st.lists(
    st.sampled_from(TEXTS), min_size=len(SESSIONS) * MESSAGES_PER_SESSION, max_size=len(SESSIONS) * MESSAGES_PER_SESSION
)


def ranked_of(rows: list[tuple[str, int]], text_of: list[str]) -> list[Ranked]:
    """Best first; a message may come twice (its dense and its keyword point)."""
    ranked = []
    for i, (session, n) in enumerate(rows):
        text = text_of[SESSIONS.index(session) * MESSAGES_PER_SESSION + n]
        record = VectorRecord(session, 1000 + i, "m", f"{session}-{n}", text=text)
        ranked.append(Ranked(Candidate(f"p{i}", 1.0 - i / 100, record), 1.0 - i / 100, False))
    return ranked


def expected(ranked: list[Ranked], query: RecallQuery) -> list[tuple[str, int]]:
    messages: dict[tuple[str, str], str] = {}
    for r in ranked:
        messages.setdefault(r.candidate.record.message_key, r.candidate.record.text)
    said = Counter(t for t in messages.values() if t)
    hits, keys, texts = [], set(), set()
    for r in ranked:
        record = r.candidate.record
        if len(hits) == query.top_k:
            break
        if record.message_id in query.exclude_message_ids or record.message_key in keys:
            continue
        if record.text and record.text in texts and not query.keep_repeated_texts:
            continue
        keys.add(record.message_key)
        texts.add(record.text)
        repeats = 0 if query.keep_repeated_texts or not record.text else said[record.text] - 1
        hits.append((record.message_id, repeats))
    return hits


@settings(max_examples=300, deadline=None)
@given(
    rows=candidates,
    text_of=message_texts,
    top_k=st.integers(1, 8),
    keep=st.booleans(),
    excluded=st.sets(st.integers(0, MESSAGES_PER_SESSION - 1), max_size=3),
)
def test_selection_matches_the_reference_rule(rows, text_of, top_k, keep, excluded):
    ranked = ranked_of(rows, text_of)
    query = RecallQuery(
        top_k=top_k,
        context_window=0,
        keep_repeated_texts=keep,
        exclude_message_ids=frozenset(f"s1-{n}" for n in excluded),
    )
    hits = asyncio.run(select_hits(ranked, query, no_windows))
    assert [(h.record.message_id, h.repeats) for h in hits] == expected(ranked, query)
    if not keep:
        said = [h.text for h in hits if h.text]
        assert len(said) == len(set(said))
