"""The texts of SearchMemory's hits (issue 43): a message's points carry no text, so a search
reads each hit's own message from the store in the read of its context windows: a window of
0 around the message's id, of no excluded kind (domain/recall.py, text_request). Every
adapter's Store.context_windows answers it as the domain's definition over range queries
does (domain/windows.py): the message by id whatever its kind or role, beside windows of
other sizes in the same call, and None once the message is deleted."""

from __future__ import annotations

from memoryd.domain import windows
from memoryd.domain.models import Message
from memoryd.domain.recall import text_request
from memoryd.domain.vectors import VectorRecord, text_hash
from memoryd.domain.windows import WindowRequest

CONTROL = ("summary", "directive")


def _hashed(session_id: str, message: Message) -> VectorRecord:
    """The record of a message's point, as the synchronizer writes it (its text's hash)."""
    return VectorRecord(
        session_id, message.timestamp, None, message.id, message.role, text_hash=text_hash(message.content)
    )


async def test_every_adapter_reads_the_hits_own_messages_with_the_windows(memory, store, tenant):
    rows = [
        Message(role="user", content="plain words", timestamp=1_000),
        Message(role="assistant", content="a summary that is its own hit", timestamp=2_000, kind="summary"),
        Message(role="tool", content="tool output", timestamp=2_000),
        Message(role="user", content="three at one millisecond: a", timestamp=3_000),
        Message(role="user", content="three at one millisecond: b", timestamp=3_000),
        Message(role="assistant", content="three at one millisecond: c", timestamp=3_000),
        Message(role="user", content="later", timestamp=9_000),
    ]
    saved = (await memory.save_messages(tenant, "t", rows)).messages
    records = [_hashed("t", m) for m in saved]
    own = [text_request(r) for r in records]
    assert all(r is not None and r.size == 0 and r.exclude_kinds == () for r in own)
    # With context windows of the query's control kinds in the same call, as a search reads them.
    contexts = [
        WindowRequest("t", saved[i].timestamp, saved[i].id, saved[i].role, size, CONTROL)
        for i, size in ((1, 2), (3, 1), (6, 2))
    ]
    requests = [*(r for r in own if r is not None), *contexts]

    async def read(query):
        return await store.range(tenant, query)

    expected = await windows.read_windows(read, requests)
    actual = await store.context_windows(tenant, requests)

    def ids(window):
        anchor = window.message.id if window.message is not None else None
        return anchor, [m.id for m in window.before], [m.id for m in window.after]

    assert [ids(w) for w in actual] == [ids(w) for w in expected]
    found = actual[: len(saved)]
    assert [w.message.content if w.message is not None else None for w in found] == [m.content for m in saved]
    # A window of the control kinds does not find the summary itself; the text read does.
    assert actual[len(saved)].message is None and found[1].message is not None

    await memory.delete_by_ids(tenant, "t", [saved[4].id, saved[1].id])
    after = await store.context_windows(tenant, [r for r in own if r is not None])
    assert [w.message is None for w in after] == [i in (1, 4) for i in range(len(saved))]
    # A point that carries its text (a caller's vector) reads nothing.
    assert text_request(VectorRecord("t", 1_000, None, saved[0].id, "user", text="its own")) is None
