"""Export and import (domain/transfer.py) between the stores, at the store level: every kind of
record goes across as stored; an import run again or after an interruption gives the same
store; a newer format is refused; an export is one snapshot; memory stays bounded."""

from __future__ import annotations

import contextlib
import json
import tracemalloc

import pytest

from memoryd.domain import transfer
from memoryd.domain.entries import Entries
from memoryd.domain.limits import Limits
from memoryd.domain.memory import Memory
from memoryd.domain.models import ClearTarget, EventType, Message
from memoryd.domain.sessions import SessionAttributes
from memoryd.domain.summaries import Summaries
from memoryd.domain.transfer import Exporter, Importer, TransferError
from tests.conftest import BACKENDS, StoreTarget

TENANTS = ("acme", "globex")


@pytest.fixture
async def open_store(request, tmp_path):
    """`await open_store(backend)`: a fresh store of its own, closed after the test."""
    opened = []

    async def opening(backend: str):
        store = await StoreTarget(backend, request, tmp_path / f"{backend}-{len(opened)}", "memoryd_transfer").open()
        opened.append(store)
        return store

    yield opening
    for store in opened:
        await store.close()


def m(content: str, ts: int = 0, role: str = "user", **fields) -> Message:
    return Message(role=role, content=content, timestamp=ts, **fields)


async def fill(store, tenant: str, big: bool = True) -> None:
    """Every kind of record, written as a client would."""
    memory = Memory(store, Limits())
    await memory.save_messages(
        tenant, "chat",
        [
            m("hello 你好", 1_000, metadata={"platform": "qq", "sender": {"id": "u1", "n": 3}}),
            m("calling", 2_000, "assistant", reasoning_content="why", tool_calls=[{"id": "c1", "name": "f", "arguments": "{}"}]),
            m('{"ok": true}', 2_000, "tool", tool_call_id="c1", kind=""),
            m("with parts", 3_000, segments=[{"type": "image", "data": {"url": "https://x/y.png", "w": 2.5}}], kind="chat"),
            m("stamped by the server"),
            m("to delete", 4_000),
        ],
        "key-1",
        SessionAttributes("ann", "bot", {"plan": "pro", "memoryd.retention-days": "30"}),
    )  # fmt: skip
    await memory.delete_by_timestamps(tenant, "chat", [4_000])  # the newest seq is gone: last_seq stays ahead
    await memory.trim_history(tenant, "chat", 3)
    await memory.update_message_content(tenant, "chat", "hello", "HELLO", 0)
    if big:
        await memory.save_messages(tenant, "big", [m("长" * 349_000, 5_000, "assistant"), m("small", 5_001)])
    await memory.replace_history(tenant, "replaced", [m("old", 1)])
    await memory.replace_history(tenant, "replaced", [m("new one", 2), m("new two", 3)])
    await memory.save_messages(tenant, "emptied", [m("gone", 1)])
    await memory.clear(tenant, "emptied", [ClearTarget.MESSAGES])
    await memory.update_session(tenant, "attributes-only", SessionAttributes("bob", "", {"k": "v"}), [])
    await memory.save_metadata(tenant, "app/settings", "theme", {"dark": True, "sizes": [1, 2.5, None], "nested": {"a": "b"}})
    await memory.save_metadata(tenant, "notes", "chat", {"text": "笔记"})
    await Summaries(store, memory.limits).save(tenant, "chat", 1, 2, "they said hello", {"model": "x"})
    entries = Entries(store, memory.limits)
    await entries.save(tenant, "ann", "ann likes green tea", ["drinks"], [0.6, 0.8], "test:2d")
    await entries.save(tenant, "ann", "ann lives in Lyon", [])


async def export(store, tenants=()) -> list[dict]:
    lines: list[bytes] = []
    await Exporter(store, lines.append).run(tenants)
    return [json.loads(line) for line in lines]


def content(records: list[dict]) -> list[dict]:
    """What an export says of the data: without its header (time and log positions differ)."""
    return records[1:]


async def load(store, records: list[dict]) -> transfer.Counts:
    return await Importer(store).run(json.dumps(r, ensure_ascii=False).encode() for r in records)


@pytest.mark.parametrize(("source", "target"), [(a, b) for a in BACKENDS for b in BACKENDS if a != b] or [("sqlite", "sqlite")])
async def test_an_import_holds_every_record_as_exported(open_store, source, target):
    origin, copy = await open_store(source), await open_store(target)
    for tenant in TENANTS:
        await fill(origin, tenant)
    exported = await export(origin)
    assert exported[0]["tenants"] == {t: {"event_seq": (await origin.event_bounds(t))[1]} for t in TENANTS}

    counts = await load(copy, exported)

    assert content(await export(copy)) == content(exported)
    assert (counts.messages, counts.messages_written) == (exported[-1]["messages"], exported[-1]["messages"])
    for tenant in TENANTS:
        events = await copy.read_events(tenant, 0, 10_000)
        refs = [ref["id"] for e in events if e.type == EventType.MESSAGES_APPENDED for ref in e.payload["messages"]]
        ids = [r["message"]["id"] for r in exported if r.get("type") == "message" and r["tenant"] == tenant]
        assert sorted(refs) == sorted(ids)  # the recall index learns of every imported message
        assert {e.type for e in events} == {EventType.MESSAGES_APPENDED, EventType.METADATA_CHANGED, EventType.SESSION_UPDATED}
    # The imported sessions go on as they would have: seqs after the old ones, never reused.
    memory = Memory(copy, Limits())
    (saved,) = (await memory.save_messages("acme", "chat", [m("after the move")])).messages
    assert saved.seq == 7 and saved.timestamp >= 4_000


@pytest.mark.parametrize("backend", BACKENDS)
async def test_an_import_run_again_or_after_an_interruption_gives_the_same_store(open_store, backend):
    origin, copy = await open_store("sqlite"), await open_store(backend)
    await fill(origin, "acme", big=False)
    exported = await export(origin)
    cut = len(exported) // 2

    with pytest.raises(TransferError, match="cut short"):
        await load(copy, exported[:cut])  # an export cut off in the middle (no end record)
    counts = await load(copy, exported)
    assert counts.messages_written < counts.messages  # what the first run wrote was skipped
    assert content(await export(copy)) == content(exported)

    before = await copy.event_bounds("acme")
    again = await load(copy, exported)
    assert (again.messages_written, again.metadata_written, again.sessions_written) == (0, 0, 0)
    assert await copy.event_bounds("acme") == before  # nothing written, no events
    assert content(await export(copy)) == content(exported)


async def test_a_newer_format_an_altered_stream_and_a_conflicting_target_are_refused(open_store):
    origin, copy = await open_store("sqlite"), await open_store("sqlite")
    await fill(origin, "acme", big=False)
    exported = await export(origin)

    with pytest.raises(TransferError, match="format version 3, newer than this memoryd reads"):
        await load(copy, [{**exported[0], "version": 3}, *exported[1:]])
    with pytest.raises(TransferError, match="not a memoryd export"):
        await load(copy, exported[1:])
    assert await copy.event_bounds("acme") == (0, 0)  # nothing was written

    with pytest.raises(TransferError, match="altered"):
        await load(copy, [*exported[:-1], {**exported[-1], "messages": 1}])

    other = await open_store("sqlite")
    await Memory(other, Limits()).save_messages("acme", "chat", [m("someone else's first message")])
    with pytest.raises(TransferError, match="holds another message at seq 1"):
        await load(other, exported)


@pytest.mark.parametrize("backend", BACKENDS)
async def test_an_export_is_the_store_at_one_instant_or_fails(open_store, backend, monkeypatch):
    store = await open_store(backend)
    await fill(store, "acme", big=False)
    before, (_, position) = content(await export(store)), await store.event_bounds("acme")
    memory = Memory(store, Limits())
    snapshot = store.snapshot

    @contextlib.asynccontextmanager
    async def written_meanwhile():
        """The snapshot, with writes committed once its reads of the data have begun."""
        async with snapshot() as view:
            sessions = view.sessions

            async def sessions_then_writes(*args):
                page = await sessions(*args)
                if not hasattr(view, "wrote"):
                    view.wrote = True
                    await memory.save_messages("acme", "chat", [m("written during the export")])
                    await memory.delete_by_timestamps("acme", "chat", [1_000])
                    await memory.save_metadata("acme", "notes", "late", {})
                return page

            view.sessions = sessions_then_writes
            yield view

    monkeypatch.setattr(store, "snapshot", written_meanwhile)
    lines: list[bytes] = []
    build = await store.db.client.admin.command("buildInfo") if backend != "sqlite" else {}
    if "secantusVersion" in build:  # SecantusDB takes snapshot reads without holding them
        with pytest.raises(TransferError, match="did not hold the snapshot"):
            await Exporter(store, lines.append).run(["acme"])
        assert b'"type":"end"' not in lines[-1]  # an import refuses it
        return
    header = await Exporter(store, lines.append).run(["acme"])
    assert content([json.loads(line) for line in lines]) == before
    assert header["tenants"]["acme"]["event_seq"] == position < (await store.event_bounds("acme"))[1]


async def test_export_and_import_memory_stays_bounded_past_a_page(open_store, tmp_path):
    """On SQLite: the importer's batches are the same on every backend (a MongoDB export reads
    in batches sized by bytes as well: storage/mongo/snapshot.py)."""
    store, copy = await open_store("sqlite"), await open_store("sqlite")
    memory = Memory(store, Limits())
    mib = 48  # 12 pages' bytes (a page: transfer.PAGE_BYTES, 4 MiB)
    for i in range(mib):
        await memory.save_messages("acme", "s0", [m("x" * ((1 << 20) - 16), i)])
    path = tmp_path / "export.jsonl"

    with path.open("wb") as out:
        exported = await traced(Exporter(store, out.write).run(["acme"]))
    with path.open("rb") as lines:
        imported = await traced(Importer(copy).run(lines))

    assert path.stat().st_size > mib << 20
    assert (await copy.get_session("acme", "s0")).message_count == mib
    # A page of rows at a time (a few copies of it: 10-20 MiB), never the tenant: holding it
    # would take more than the 48 MiB of the data.
    assert exported < 36 << 20, exported
    assert imported < 36 << 20, imported


async def traced(work) -> int:
    """The peak of Python's allocations while `work` runs."""
    tracemalloc.start()
    try:
        await work
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
