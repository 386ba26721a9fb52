"""Imports that never lie (issue 44, rows 3, 4 and 8): a stream of several exports imports
each whole; a repeated line, two messages at one seq or a clash with stored data is refused
naming its exact line, on every backend, with nothing of its batch written; a file is checked
whole before anything is written; a vector store that times out for a while is waited for.
At the store level and through `memoryd import` itself."""

from __future__ import annotations

import asyncio
import json
import urllib.request
import uuid

import pytest

from memoryd.app import open_store as open_configured
from memoryd.config import Config
from memoryd.domain.errors import StorageUnavailable
from memoryd.domain.limits import Limits
from memoryd.domain.memory import Memory
from memoryd.domain.sessions import SessionAttributes
from memoryd.domain.store_rules import ImportConflict
from memoryd.domain.transfer import Exporter, Importer, TransferError
from memoryd.domain.vectors import VectorPoint, VectorRecord
from memoryd.storage.qdrant.edge import EdgeIndex
from tests import processes
from tests.conftest import BACKENDS, StoreTarget
from tests.lifecycle.test_transfer import content, export, fill, m
from tests.processes import memoryd_executable
from tests.vectors.conftest import unit


@pytest.fixture
async def open_store(request, tmp_path):
    """`await open_store(backend)`: a fresh store of its own, closed after the test."""
    opened = []

    async def opening(backend: str):
        store = await StoreTarget(backend, request, tmp_path / f"{backend}-{len(opened)}", "memoryd_import").open()
        opened.append(store)
        return store

    yield opening
    for store in opened:
        await store.close()


def encoded(records: list[dict]) -> list[bytes]:
    return [json.dumps(r, ensure_ascii=False).encode() + b"\n" for r in records]


def message_lines(records: list[dict], session_id: str) -> list[int]:
    """The indexes in `records` of the session's message records (line = index + 1)."""
    return [i for i, r in enumerate(records) if r.get("type") == "message" and r["session_id"] == session_id]


@pytest.mark.parametrize("backend", BACKENDS)
async def test_several_exports_in_one_stream_each_import_whole(open_store, backend):
    origin, copy = await open_store("sqlite"), await open_store(backend)
    await fill(origin, "acme", big=False)
    await fill(origin, "globex", big=False)
    acme, globex = await export(origin, ["acme"]), await export(origin, ["globex"])

    importer = Importer(copy)
    counts = await importer.run(encoded(acme + globex))  # `cat acme.jsonl globex.jsonl | memoryd import`

    assert importer.exports == 2
    assert content(await export(copy, ["acme"])) == content(acme)
    assert content(await export(copy, ["globex"])) == content(globex)
    assert counts.messages_written == acme[-1]["messages"] + globex[-1]["messages"] > 0


@pytest.mark.parametrize(
    ("stream", "refusal"),
    [
        (lambda a, g: a + a, r"^line {a1}: a second export of tenant 'acme' in this stream \(the export at line 1"),
        (lambda a, g: a + g[1:], r"^line {a1} follows the end record of the export that began at line 1 and is not"),
        (lambda a, g: a + g[:-1], r"^the stream ends after line {ag} without its end record"),
        (lambda a, g: a + [{**g[0], "version": 3}, *g[1:]], r"^line {a1}: this export is format version 3"),
        (lambda a, g: a + g[:-1] + [{**g[-1], "messages": 1}], r"^line {ag}: the export's end record counts"),
    ],
    ids=["tenant-twice", "no-header-after-end", "second-cut-short", "second-newer", "second-altered"],
)
async def test_a_stream_of_exports_is_refused_before_anything_is_written(open_store, stream, refusal):
    origin, copy = await open_store("sqlite"), await open_store("sqlite")
    await fill(origin, "acme", big=False)
    await fill(origin, "globex", big=False)
    acme, globex = await export(origin, ["acme"]), await export(origin, ["globex"])
    lines = encoded(stream(acme, globex))
    expected = refusal.format(a1=len(acme) + 1, ag=len(lines))

    with pytest.raises(TransferError, match=expected):
        await Importer(None).check(lines)  # what `memoryd import --input FILE` runs first
    assert await copy.event_bounds("acme") == (0, 0)  # nothing written
    with pytest.raises(TransferError, match=expected):
        await Importer(copy).run(lines)  # from a pipe: the same refusal, at the same line


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("change", ["duplicated-line", "two-at-one-seq", "seq-goes-back"])
async def test_a_repeated_or_reordered_message_is_refused_at_its_line(open_store, backend, change):
    origin, copy = await open_store("sqlite"), await open_store(backend)
    await fill(origin, "acme", big=False)
    records = await export(origin, ["acme"])
    chat = message_lines(records, "chat")
    first, second = records[chat[0]], records[chat[1]]
    if change == "duplicated-line":
        altered = [*records[: chat[1] + 1], second, *records[chat[1] + 1 :]]
        line, what = chat[1] + 2, f"repeats the seq {second['message']['seq']} of line {chat[1] + 1}"
    elif change == "two-at-one-seq":
        other = {**second, "message": {**second["message"], "seq": first["message"]["seq"], "id": str(uuid.uuid4())}}
        altered = [*records[: chat[1]], other, *records[chat[1] + 1 :]]
        line, what = chat[1] + 1, f"repeats the seq {first['message']['seq']} of line {chat[0] + 1}"
    else:
        altered = [*records[: chat[0]], second, first, *records[chat[1] + 1 :]]
        line = chat[1] + 1
        what = f"goes back to seq {first['message']['seq']} after seq {second['message']['seq']} of line {chat[0] + 1}"
    # The end record still counts the lines (an altered stream whose counts agree).
    altered[-1] = {**altered[-1], "messages": sum(1 for r in altered if r.get("type") == "message")}

    for check in (Importer(None).check, Importer(copy).run):
        with pytest.raises(TransferError, match=rf"^line {line}: message '[^']+' of session 'chat' {what}"):
            await check(encoded(altered))
    assert (await copy.get_session("acme", "chat")).message_count == 0  # its batch never reached the store


@pytest.mark.parametrize("backend", BACKENDS)
async def test_the_store_refuses_a_batch_holding_an_id_or_a_seq_twice(open_store, backend):
    """The rule under the importer's order check (store_rules.importable), on every adapter:
    an ImportConflict naming the message, never the database's own unique-key error."""
    store = await open_store(backend)
    a, b = str(uuid.uuid4()), str(uuid.uuid4())
    batches = {
        "same-line": [m("one", 1, id=a, seq=1), m("one", 1, id=a, seq=1)],
        "same-seq": [m("one", 1, id=a, seq=1), m("two", 2, id=b, seq=1)],
        "same-id": [m("one", 1, id=a, seq=1), m("two", 2, id=a, seq=2)],
    }
    for name, batch in batches.items():
        with pytest.raises(ImportConflict) as raised:
            await store.import_messages("acme", name, batch, 10)
        assert raised.value.index == 1, name
        session = await store.get_session("acme", name)
        assert session is None or session.message_count == 0
    assert await store.event_bounds("acme") == (0, 0)


@pytest.mark.parametrize("backend", BACKENDS)
async def test_a_clash_with_stored_data_names_the_line_of_the_message(open_store, backend):
    origin, target = await open_store("sqlite"), await open_store(backend)
    await fill(origin, "acme", big=False)
    records = await export(origin, ["acme"])
    chat = message_lines(records, "chat")
    # The target holds other messages at the seqs of the export's "chat" but its first one.
    memory = Memory(target, Limits())
    last = records[chat[-1]]["message"]["seq"]
    held = (await memory.save_messages("acme", "chat", [m(f"other {i}") for i in range(last)])).messages
    assert await memory.delete_by_ids("acme", "chat", [held[records[chat[0]]["message"]["seq"] - 1].id]) == 1

    seq = records[chat[1]]["message"]["seq"]
    clash = f"line {chat[1] + 1}: session 'chat' holds another message at seq {seq} here"
    before = await target.event_bounds("acme")

    with pytest.raises(TransferError) as raised:
        await Importer(target).check(encoded(records))  # what `memoryd import --input FILE` runs first
    assert str(raised.value).startswith(clash) and str(raised.value).endswith("nothing is imported")
    assert await target.event_bounds("acme") == before  # the target as it was

    with pytest.raises(TransferError) as raised:
        await Importer(target).run(encoded(records))  # from a pipe: stops at the same line
    assert str(raised.value).startswith(clash)
    assert not raised.value.resumable
    assert (await target.get_session("acme", "chat")).message_count == last - 1  # nothing of the batch


async def test_vector_store_outages_during_an_import_are_waited_for(open_store, tmp_path):
    """The vector store goes away after the messages are written (closed: real, as in
    tests/vectors/test_sync_outage.py) and comes back; the import waits and completes. With no
    pauses to wait, the same outage is a resumable failure, and a second run completes it."""
    origin = await open_store("sqlite")
    await fill(origin, "acme", big=False)
    source = EdgeIndex(tmp_path / "source")
    await source.open()
    try:
        await source.upsert(
            [VectorPoint("acme", unit(i), VectorRecord("chat", 1_000 + i, "test:4d", f"m{i}", "user", text=f"v{i}"))
             for i in range(7)],
            1,
        )  # fmt: skip
        lines: list[bytes] = []
        await Exporter(origin, lines.append, vectors=source).run(["acme"])
    finally:
        await source.close()

    for pauses in ((), (0.05, 0.1, 0.2, 0.4, 0.8, 1.6, 3.2)):
        copy = await open_store("sqlite")
        target = EdgeIndex(tmp_path / f"target-{len(pauses)}")
        await target.open()
        retries: list[tuple[str, int]] = []
        reopening: list[asyncio.Task] = []

        async def back_soon(index=target):
            await asyncio.sleep(0.3)
            await index.open()

        def outage(counts, index=target, reopening=reopening, retries=retries):
            if counts.messages_written and not reopening and not retries:
                reopening.append(asyncio.ensure_future(index.close()))

        def retrying(where, attempt, pause, error, reopening=reopening, retries=retries):
            assert isinstance(error, StorageUnavailable)
            retries.append((where, attempt))
            if attempt == 1:
                reopening.append(asyncio.ensure_future(back_soon()))

        try:
            importer = Importer(copy, outage, vectors=target, retrying=retrying, pauses=pauses)
            if not pauses:
                with pytest.raises(TransferError, match="lines 1-[0-9]+ are imported") as raised:
                    await importer.run(lines)
                assert raised.value.resumable
                await asyncio.gather(*reopening)
                await target.open()
                counts = await Importer(copy, vectors=target).run(lines)  # the resume
            else:
                counts = await importer.run(lines)
                await asyncio.gather(*reopening)
                assert retries and retries[0][1] == 1
            assert counts.vectors == 7
            assert len((await target.scroll("acme", 4, None, 100))[0]) == 7
        finally:
            await asyncio.gather(*reopening, return_exceptions=True)
            await target.close()


# -- through `memoryd import` -------------------------------------------------------------
async def run_memoryd(*args: str, stdin: bytes | None = None) -> tuple[int, list[dict], str]:
    process = await processes.exec_async(
        memoryd_executable(), *args,
        stdin=asyncio.subprocess.PIPE if stdin is not None else asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    try:
        _, err = await asyncio.wait_for(process.communicate(stdin), 120)
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()
    text = err.decode()
    return process.returncode, [json.loads(line) for line in text.splitlines() if line.strip()], text


async def test_memoryd_import_refuses_a_bad_file_naming_the_line_and_imports_a_stream_of_exports(open_store, tmp_path):
    origin = await open_store("sqlite")
    await fill(origin, "acme", big=False)
    await fill(origin, "globex", big=False)
    acme, globex = await export(origin, ["acme"]), await export(origin, ["globex"])
    chat = message_lines(globex, "chat")
    repeated = [*globex[: chat[0] + 1], globex[chat[0]], *globex[chat[0] + 1 :]]
    repeated[-1] = {**repeated[-1], "messages": repeated[-1]["messages"] + 1}
    bad = tmp_path / "bad.jsonl"
    bad.write_bytes(b"".join(encoded(acme + repeated)))
    target = tmp_path / "target"

    code, logs, text = await run_memoryd("import", "--data-dir", str(target), "--input", str(bad))

    assert code == 1 and "Traceback" not in text, text
    (failed,) = [line for line in logs if line["event"] == "import_failed"]
    assert failed["level"] == "error"
    assert failed["error"].startswith(f"line {len(acme) + chat[0] + 2}: message ")
    store = open_configured(Config(data_dir=target))
    await store.open()
    try:
        assert await store.event_bounds("acme") == (0, 0)  # the file was refused whole: acme neither
    finally:
        await store.close()

    # Both exports through a pipe: each tenant whole.
    code, logs, text = await run_memoryd("import", "--data-dir", str(target), stdin=b"".join(encoded(acme + globex)))
    assert code == 0, text
    (done,) = [line for line in logs if line["event"] == "import_done"]
    assert done["exports"] == 2 and done["messages_written"] == acme[-1]["messages"] + globex[-1]["messages"]
    store = open_configured(Config(data_dir=target))
    await store.open()
    try:
        assert content(await export(store, ["acme"])) == content(acme)
        assert content(await export(store, ["globex"])) == content(globex)
    finally:
        await store.close()


async def test_memoryd_import_cut_short_prints_the_command_that_resumes_it(open_store, tmp_path):
    origin = await open_store("sqlite")
    await fill(origin, "acme", big=False)
    records = await export(origin, ["acme"])
    cut = tmp_path / "cut.jsonl"
    cut.write_bytes(b"".join(encoded(records[:-3])))
    target = tmp_path / "target"

    code, logs, text = await run_memoryd("import", "--data-dir", str(target), stdin=cut.read_bytes())

    assert code == 1 and "Traceback" not in text, text
    (failed,) = [line for line in logs if line["event"] == "import_failed"]
    assert "cut short" in failed["error"]
    assert failed["resume"].startswith("the same export piped into `memoryd import --data-dir")
    whole = tmp_path / "whole.jsonl"
    whole.write_bytes(b"".join(encoded(records)))
    code, logs, text = await run_memoryd("import", "--data-dir", str(target), "--input", str(whole))
    assert code == 0, text
    (checked,) = [line for line in logs if line["event"] == "import_checked"]  # the file, read first
    assert (checked["exports"], checked["messages"]) == (1, records[-1]["messages"])
    store = open_configured(Config(data_dir=target))
    await store.open()
    try:
        assert content(await export(store, ["acme"])) == content(records)
    finally:
        await store.close()


async def test_memoryd_import_of_a_file_that_clashes_with_the_target_writes_nothing(open_store, tmp_path):
    origin = await open_store("sqlite")
    await fill(origin, "acme", big=False)
    records = await export(origin, ["acme"])
    chat = message_lines(records, "chat")
    path = tmp_path / "acme.jsonl"
    path.write_bytes(b"".join(encoded(records)))
    target = tmp_path / "target"
    store = open_configured(Config(data_dir=target))
    await store.open()
    try:  # the target holds another message at the seq of the export's last "chat" message
        memory = Memory(store, Limits())
        last = records[chat[-1]]["message"]["seq"]
        await memory.save_messages("acme", "chat", [m(f"other {i}") for i in range(last)])
        before = await store.event_bounds("acme")
    finally:
        await store.close()

    code, logs, text = await run_memoryd("import", "--data-dir", str(target), "--input", str(path))

    assert code == 1 and "Traceback" not in text, text
    (failed,) = [line for line in logs if line["event"] == "import_failed"]
    assert failed["error"].startswith(f"line {chat[0] + 1}: ")  # the first message of "chat" clashes
    assert failed["error"].endswith("nothing is imported") and "resume" not in failed
    store = open_configured(Config(data_dir=target))
    await store.open()
    try:
        assert await store.event_bounds("acme") == before  # the sessions before "chat" were not written either
    finally:
        await store.close()


class StallingProxy:
    """TCP between `memoryd import` and a real Qdrant server's REST port, holding the first
    points upsert it sees for `stall` seconds and then dropping its connection: a vector store
    that times out under load, once, as in the issue's `export --vectors | import --vectors`."""

    def __init__(self, upstream: str, stall: float) -> None:
        self.host, port = upstream.removeprefix("http://").rsplit(":", 1)
        self.upstream_port = int(port)
        self.stall = stall
        self.stalled = 0

    async def __aenter__(self) -> StallingProxy:
        self.server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        self.port = self.server.sockets[0].getsockname()[1]
        return self

    async def __aexit__(self, *exc: object) -> None:
        self.server.close()
        await self.server.wait_closed()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        up_reader, up_writer = await asyncio.open_connection(self.host, self.upstream_port)

        async def pipe(source: asyncio.StreamReader, sink: asyncio.StreamWriter, requests: bool) -> None:
            try:
                while data := await source.read(65536):
                    if requests and not self.stalled and data.startswith(b"PUT /collections/") and b"/points" in data:
                        self.stalled += 1
                        await asyncio.sleep(self.stall)  # never forwarded: the caller's timeout fires
                        return
                    sink.write(data)
                    await sink.drain()
            except OSError:
                pass
            finally:
                sink.close()

        await asyncio.gather(pipe(reader, up_writer, True), pipe(up_reader, writer, False))
        writer.close()


async def test_memoryd_import_vectors_waits_out_a_vector_store_timeout(open_store, tmp_path, qdrant):
    origin = await open_store("sqlite")
    await fill(origin, "acme", big=False)
    source = EdgeIndex(tmp_path / "source")
    await source.open()
    try:
        await source.upsert(
            [VectorPoint("acme", unit(i), VectorRecord("chat", 1_000 + i, "test:4d", f"m{i}", "user", text=f"v{i}"))
             for i in range(7)],
            1,
        )  # fmt: skip
        path = tmp_path / "export.jsonl"
        with path.open("wb") as out:
            await Exporter(origin, out.write, vectors=source).run(["acme"])
    finally:
        await source.close()
    settings = qdrant.settings("server-rest")

    async with StallingProxy(settings["qdrant_url"], stall=4.0) as proxy:
        code, logs, text = await run_memoryd(
            "import", "--data-dir", str(tmp_path / "target"), "--input", str(path), "--vectors",
            "--qdrant-url", f"http://127.0.0.1:{proxy.port}", "--qdrant-grpc-port", "0",
            "--qdrant-collection-prefix", settings["qdrant_collection_prefix"], "--qdrant-timeout-seconds", "1",
        )  # fmt: skip

    assert proxy.stalled == 1
    assert code == 0, text
    retrying = [line for line in logs if line["event"] == "import_retrying"]
    assert retrying and retrying[0]["level"] == "warning" and retrying[0]["attempt"] == 1, logs
    (done,) = [line for line in logs if line["event"] == "import_done"]
    assert done["vectors_written"] == 7
    collection = f"{settings['qdrant_collection_prefix']}_d4"
    request = urllib.request.Request(
        f"{settings['qdrant_url']}/collections/{collection}/points/count", data=b'{"exact": true}',
        headers={"Content-Type": "application/json"}, method="POST",
    )  # fmt: skip
    with urllib.request.urlopen(request, timeout=30) as response:
        assert json.loads(response.read())["result"]["count"] == 7


LOOK_ALIKES = {
    "session-id": (lambda r: r.get("type") == "session", lambda r: {**r, "session_id": "chat\u200b"}, "session_id"),
    "user-id": (lambda r: r.get("type") == "session", lambda r: {**r, "user_id": "ann\u00a0b"}, "user_id"),
    "label": (lambda r: r.get("type") == "session", lambda r: {**r, "labels": {"plan": "\u3164"}}, "label value"),
    "message-id": (
        lambda r: r.get("type") == "message", lambda r: {**r, "message": {**r["message"], "id": "\u0301"}}, "message id"
    ),
    "metadata-key": (lambda r: r.get("type") == "metadata", lambda r: {**r, "key": "notes\u202e"}, "key"),
}


@pytest.mark.parametrize("case", LOOK_ALIKES)
async def test_an_id_the_id_rule_refuses_is_refused_at_its_line(open_store, case):
    """The one rule for identifiers (domain/identifiers.py) holds for import files as for
    requests: a look-alike id in an export is refused at its line, before anything is written."""
    origin, target = await open_store("sqlite"), await open_store("sqlite")
    await fill(origin, "acme", big=False)
    records = await export(origin, ["acme"])
    chosen, change, field = LOOK_ALIKES[case]
    index = next(i for i, r in enumerate(records) if chosen(r))
    altered = [*records[:index], change(records[index]), *records[index + 1 :]]

    for check in (Importer(None).check, Importer(target).check):
        with pytest.raises(TransferError, match=rf"^line {index + 1}: {field} '.+' .*\(the id rule"):
            await check(encoded(altered))
    assert await target.event_bounds("acme") == (0, 0)


@pytest.mark.parametrize("backend", BACKENDS)
async def test_a_session_of_another_owner_at_the_target_is_refused_before_anything_is_written(open_store, backend):
    origin, target = await open_store("sqlite"), await open_store(backend)
    await fill(origin, "acme", big=False)
    records = await export(origin, ["acme"])
    line = next(i for i, r in enumerate(records) if r.get("type") == "session" and r["session_id"] == "chat") + 1
    assert records[line - 1]["user_id"] == "ann"
    memory = Memory(target, Limits())
    await memory.save_messages("acme", "chat", [m("zed's own")], attributes=SessionAttributes("zed"))
    before = await target.event_bounds("acme")

    with pytest.raises(TransferError, match=rf"^line {line}: session 'chat' belongs to another user_id") as raised:
        await Importer(target).check(encoded(records))
    assert str(raised.value).endswith("nothing is imported")
    assert await target.event_bounds("acme") == before
