"""Property-based: a search's WindowMemo (domain/windows.py) answers every request exactly as a
read of that request alone would, whatever was read before and read ahead, and reads each
anchor once per call at the largest size asked (none when what it kept covers the call).

The windows are domain.windows.read_windows over the range reads of one session held in a
list (the rule every store's context_windows matches: tests/conformance/test_context_windows.py).
"""

from __future__ import annotations

import asyncio

from hypothesis import given, settings
from hypothesis import strategies as st

from memoryd.domain.models import Message, RangeQuery
from memoryd.domain.windows import WindowMemo, WindowRequest, read_windows

# (timestamp, role, kind): shared timestamps, system records and a control kind among them.
ROWS = [
    (100, "user", None), (100, "assistant", None), (200, "system", None), (300, "assistant", "summary"),
    (300, "user", None), (400, "assistant", None), (500, "user", "summary"), (600, "user", None),
    (600, "system", None), (700, "assistant", None), (800, "user", None), (900, "assistant", None),
]
MESSAGES = [
    Message(role=role, content=f"m{seq}", kind=kind, timestamp=ts, id=f"id{seq}", seq=seq)
    for seq, (ts, role, kind) in enumerate(ROWS, start=1)
]


async def range_read(query: RangeQuery) -> list[Message]:
    rows = [
        m for m in MESSAGES
        if (query.from_ts is None or m.timestamp >= query.from_ts)
        and (query.to_ts is None or m.timestamp <= query.to_ts)
        and (query.after is None or (m.timestamp, m.seq) > (query.after.timestamp, query.after.seq))
        and not (m.kind is not None and m.kind in query.exclude_kinds)
    ]
    return sorted(rows, key=lambda m: (m.timestamp, m.seq))[: query.limit]


anchors = st.one_of(
    st.sampled_from([(m.timestamp, m.id, m.role) for m in MESSAGES]),  # by id
    st.sampled_from([(m.timestamp, "", m.role) for m in MESSAGES]),  # by role at its timestamp
    st.sampled_from([(250, "", "user"), (650, "gone", "user")]),  # no such message
)
requests = st.builds(
    lambda anchor, size, kinds: WindowRequest("s", anchor[0], anchor[1], anchor[2], size, kinds),
    anchors, st.integers(0, 3), st.sampled_from([(), ("summary",)]),
)
calls = st.lists(st.tuples(st.lists(requests, max_size=4), st.lists(requests, min_size=1, max_size=5)), min_size=1, max_size=4)


def anchor_of(r: WindowRequest) -> tuple:
    return (r.session_id, r.timestamp, r.message_id, r.role, r.exclude_kinds)


@settings(max_examples=200, deadline=None)
@given(calls)
def test_the_memo_answers_as_fresh_reads_and_reads_each_anchor_once(sequence):
    read: list[list[WindowRequest]] = []

    async def store(batch):
        read.append(list(batch))
        return await read_windows(range_read, batch)

    async def run() -> None:
        memo = WindowMemo(store)
        kept: dict[tuple, int] = {}  # anchor -> the largest size read so far
        for ahead, batch in sequence:
            memo.read_ahead(ahead)
            before = len(read)
            answers = await memo(batch)
            for request, window in zip(batch, answers):
                assert window == (await read_windows(range_read, [request]))[0], request
            asked: dict[tuple, int] = {}
            for r in (*batch, *ahead):
                asked[anchor_of(r)] = max(asked.get(anchor_of(r), -1), r.size)
            needed = {a: size for a, size in asked.items() if kept.get(a, -1) < size}
            if not needed:
                assert len(read) == before  # all kept: nothing read
                continue
            [done] = read[before:]
            assert {anchor_of(r): r.size for r in done} == needed and len(done) == len(needed)
            kept.update(needed)

    asyncio.run(run())
