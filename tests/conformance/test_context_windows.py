"""Context windows (domain/windows.py): every adapter's Store.context_windows, which may read
in its own way (SQLite: one statement; MongoDB: walks bounded by the window's size), gives
what the domain's definition over range queries gives."""

from __future__ import annotations

import random

from memoryd.domain import windows
from memoryd.domain.models import Message
from memoryd.domain.windows import WindowRequest

CONTROL = ("summary", "directive")


def _messages(rng: random.Random, count: int) -> list[Message]:
    """A session with what windows must step over: system messages, control kinds, kinds
    that are not excluded, several messages in one millisecond, and gaps of days."""
    rows, ts = [], 1_000_000
    for i in range(count):
        ts += rng.choice((0, 0, 1, 30_000, 3 * 86_400_000))
        role = rng.choice(("user", "assistant", "assistant", "tool", "system"))
        kind = rng.choice((None, None, None, "summary", "directive", "note"))
        rows.append(Message(role=role, content=f"m{i}", timestamp=ts, kind=kind))
    return rows


def _requests(rng: random.Random, saved: list[Message]) -> list[WindowRequest]:
    requests = []
    for m in rng.sample(saved, 25):
        size = rng.choice((0, 1, 1, 2, 5))
        kinds = rng.choice(((), CONTROL))
        requests.append(WindowRequest("w", m.timestamp, m.id, m.role, size, kinds))
        requests.append(WindowRequest("w", m.timestamp, "", rng.choice(("user", "assistant")), size, kinds))
    # Anchors whose message is gone (or never was): what is at the timestamp counts as after.
    requests.append(WindowRequest("w", saved[10].timestamp, "no-such-id", "user", 2, CONTROL))
    requests.append(WindowRequest("w", saved[-1].timestamp + 1, "", "user", 3))
    requests.append(WindowRequest("w", 1, "", "user", 2))
    requests.append(WindowRequest("other-session", saved[5].timestamp, saved[5].id, "user", 2))
    return requests


async def test_every_adapter_reads_the_windows_the_domain_defines(memory, store, tenant):
    rng = random.Random(7)
    saved = (await memory.save_messages(tenant, "w", _messages(rng, 120))).messages
    await memory.trim_history(tenant, "w", 40)  # archived messages are context too
    requests = _requests(rng, saved)

    async def read(query):
        return await store.range(tenant, query)

    expected = await windows.read_windows(read, requests)
    actual = await store.context_windows(tenant, requests)

    def ids(window):
        anchor = window.message.id if window.message is not None else None
        return anchor, [m.id for m in window.before], [m.id for m in window.after]

    assert [ids(w) for w in actual] == [ids(w) for w in expected]
    assert any(w.before and w.after for w in expected) and any(w.message is None for w in expected)
