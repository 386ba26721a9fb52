"""`memoryd export` / `memoryd import`: a deployment's data as one JSON-lines stream, the way
from one backend to another (docs/OPERATIONS.md has the format and the walk-through).

The stream, one JSON object per line, UTF-8:

    {"format": "memoryd.export", "version": 1, "created": ms, "tenants": {"<tenant>": {"event_seq": n}},
     "vectors": bool}
    {"type": "session", "tenant": t, "session_id": s, "last_seq", "last_timestamp", "last_activity",
     "user_id", "agent_id", "labels", "owner"}                every session row, by tenant and id
    {"type": "message", "tenant": t, "session_id": s, "message": {...}}   its messages, by seq
    {"type": "metadata", "tenant": t, "namespace", "key", "data", "update_time"}   every record
    {"type": "vector", "tenant": t, "point": {...}}           with --vectors: the dense vectors
    {"type": "end", "sessions": n, "messages": n, "metadata": n, "vectors": n}

A message is a memoryd.v1.Message in JSON with its proto field names, every field as
stored: id, seq, timestamp, archived, `kind` present exactly when the message has one
(even ""), the body; fields at their default are left out. Metadata records include
memoryd's own (summary slices and cursors, long-term entries and their counters), so those
travel as they are. With --vectors, every dense vector of the tenant follows, as the vector
store holds it at the end of the export (it has no snapshot): callers' vectors exist only
there. Idempotency records, the event log and the keyword points do not: the target's log
starts with the import's own events.

Export reads a snapshot (Store.snapshot): the whole stream is the store at one instant,
each tenant at the log position its header states; the export reads every position again
at the end in the same snapshot and fails, without an end record, when one moved (a server
that did not hold the snapshot). Import writes in bounded batches, each one transaction
with the events a write of that data makes (messages-appended with the messages' refs,
metadata-changed, session-updated), and is idempotent: whatever
the target already holds as exported is skipped, so running an import again, after an
interruption or not, gives the same store. Both stream: memory is one batch, whatever the size.

Import never stops silently (docs/OPERATIONS.md): a stream may hold several exports, each
imported whole; every refusal names its line (a record out of order or repeated, an id the
id rule refuses, a clash with stored data); `Importer.check` reads a stream writing nothing,
with the store's own checks read-only, so that a file is refused before anything is
written; a write the store or vector store answers unavailable is tried again (RETRY_PAUSES).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import sys
from collections.abc import Awaitable, Callable, Iterable, Sequence
from dataclasses import asdict, dataclass
from typing import Any, TypeVar

from memoryd.domain.errors import FailedPrecondition, StorageUnavailable
from memoryd.domain.identifiers import id_problem
from memoryd.domain.limits import Limits
from memoryd.domain.models import SYSTEM_TENANT, Message, MetadataEntry, SessionRecord, now_ms
from memoryd.domain.sessions import SessionAttributes
from memoryd.domain.store import Snapshot, SnapshotLost, Store
from memoryd.domain.store_rules import ImportConflict, imported_attributes, imported_owner
from memoryd.domain.vectors import VectorIndex, VectorPoint, VectorRecord, finite

T = TypeVar("T")
FORMAT = "memoryd.export"
# 2: sessions carry their owner, vectors their owner stamp (version 1 files import as before:
# the owner from the attributes, vectors unstamped); an older memoryd refuses version 2 rather
# than lose who the data belongs to.
VERSION = 2
# Export reads and import writes this many rows (or this many bytes of them) at a time.
PAGE = 500
PAGE_BYTES = 4 << 20
SESSION_PAGE = 200


class TransferError(Exception):
    """An export or import that cannot go on; the message says why and what to do. `resumable`:
    the same import run again (with the whole input) goes on where this one stopped."""

    def __init__(self, message: str, *, resumable: bool = False):
        super().__init__(message)
        self.resumable = resumable


@dataclass(slots=True)
class Counts:
    sessions: int = 0
    messages: int = 0
    metadata: int = 0
    vectors: int = 0
    # Import only: what it wrote (the rest the target already held as exported).
    messages_written: int = 0
    metadata_written: int = 0
    sessions_written: int = 0
    vectors_written: int = 0


# -- records ------------------------------------------------------------------------------
def _line(record: dict[str, Any]) -> bytes:
    return json.dumps(record, ensure_ascii=False, separators=(",", ":")).encode("utf-8") + b"\n"


def message_json(m: Message) -> dict[str, Any]:
    """A stored message as memoryd.v1.Message JSON (proto field names), defaults left out."""
    data: dict[str, Any] = {"id": m.id, "seq": m.seq, "role": m.role, "timestamp": m.timestamp}
    if m.content:
        data["content"] = m.content
    if m.kind is not None:
        data["kind"] = m.kind
    if m.archived:
        data["archived"] = True
    for name, value in m.body().items():
        if value:
            data[name] = value
    return data


def message_from_json(data: dict[str, Any]) -> Message:
    for name in ("id", "seq", "role", "timestamp"):  # a stored message always has them
        if name not in data:
            raise KeyError(name)
    return Message.from_dict(data)


def session_json(tenant: str, record: SessionRecord) -> dict[str, Any]:
    a = record.attributes
    return {
        "type": "session", "tenant": tenant, "session_id": record.session_id, "last_seq": record.last_seq,
        "last_timestamp": record.last_timestamp, "last_activity": record.last_activity,
        "user_id": a.user_id, "agent_id": a.agent_id, "labels": dict(a.labels), "owner": record.owner,
    }  # fmt: skip


def session_from_json(data: dict[str, Any]) -> SessionRecord:
    """`owner` (sessions "Ownership": a user id, "" the tenant's, null none) restored as stated;
    a record without it (format version 1) leaves the import to derive it from the attributes."""
    attributes = SessionAttributes(data.get("user_id", ""), data.get("agent_id", ""), dict(data.get("labels") or {}))
    owner = data.get("owner")
    if owner is not None and not isinstance(owner, str):
        raise TypeError("owner is not a string")
    return SessionRecord(
        data["session_id"], int(data["last_seq"]), int(data["last_timestamp"]), int(data["last_activity"]), attributes,
        owner, "owner" in data,
    )  # fmt: skip


def metadata_json(tenant: str, entry: MetadataEntry) -> dict[str, Any]:
    return {
        "type": "metadata", "tenant": tenant, "namespace": entry.namespace, "key": entry.key, "data": entry.data,
        "update_time": entry.update_time,
    }  # fmt: skip


def metadata_from_json(data: dict[str, Any]) -> MetadataEntry:
    if not isinstance(data["data"], dict):
        raise TypeError("data is not an object")
    return MetadataEntry(data["namespace"], data["key"], data["data"], int(data["update_time"]))


def check_header(header: Any) -> dict[str, Any]:
    """The stream's first line, or TransferError saying why it is not one this memoryd reads."""
    if not isinstance(header, dict) or header.get("format") != FORMAT:
        raise TransferError(f"not a memoryd export: the first line is not a {FORMAT} header")
    version = header.get("version")
    if not isinstance(version, int) or version < 1:
        raise TransferError(f"the export's header has no valid format version ({version!r})")
    if version > VERSION:
        raise TransferError(
            f"this export is format version {version}, newer than this memoryd reads (up to {VERSION}): "
            "import it with the memoryd release that wrote it, or a later one"
        )
    return header


# -- export -------------------------------------------------------------------------------
class Exporter:
    """Writes a snapshot of `tenants` (all when empty) to `write`, line by line."""

    def __init__(
        self,
        store: Store,
        write: Callable[[bytes], Any],
        progress: Callable[[Counts], None] = lambda c: None,
        vectors: VectorIndex | None = None,
    ):
        self.store = store
        self.write = write
        self.progress = progress
        self.vectors = vectors  # with it, the tenants' dense points are exported too
        self.counts = Counts()

    async def run(self, tenants: Sequence[str] = ()) -> dict[str, Any]:
        """Export; returns the header (its positions). TransferError when the store did not
        hold the snapshot (nothing ends the stream then: an import will refuse it)."""
        await _reachable(self.vectors)
        try:
            async with self.store.snapshot() as view:
                chosen = [t for t in tenants if t != SYSTEM_TENANT] if tenants else await view.tenants()
                positions = {tenant: await view.position(tenant) for tenant in chosen}
                header = {
                    "format": FORMAT,
                    "version": VERSION,
                    "created": now_ms(),
                    "tenants": {tenant: {"event_seq": seq} for tenant, seq in positions.items()},
                    "vectors": self.vectors is not None,
                }
                self.write(_line(header))
                for tenant in chosen:
                    await self._sessions(view, tenant)
                    await self._metadata(view, tenant)
                    await self._vectors(tenant)
                for tenant, seq in positions.items():
                    if (now := await view.position(tenant)) != seq:
                        raise TransferError(
                            f"tenant {tenant!r} moved from event {seq} to {now} while it was exported and the store "
                            "did not hold the snapshot (a MongoDB server without snapshot reads): export while "
                            "writes pause, or stop the server"
                        )
        except SnapshotLost as error:
            raise TransferError(str(error)) from error
        counts = self.counts
        self.write(_line({"type": "end", "sessions": counts.sessions, "messages": counts.messages,
                          "metadata": counts.metadata, "vectors": counts.vectors}))  # fmt: skip
        return header

    async def _sessions(self, view: Snapshot, tenant: str) -> None:
        after: str | None = None
        while True:
            page = await view.sessions(tenant, after, SESSION_PAGE)
            for record in page:
                self.write(_line(session_json(tenant, record)))
                self.counts.sessions += 1
                await self._messages(view, tenant, record.session_id)
            if len(page) < SESSION_PAGE:
                return
            after = page[-1].session_id

    async def _messages(self, view: Snapshot, tenant: str, session_id: str) -> None:
        after = 0
        while True:
            page = await view.messages(tenant, session_id, after, PAGE, PAGE_BYTES)
            for message in page:
                self.write(_line({"type": "message", "tenant": tenant, "session_id": session_id,
                                  "message": message_json(message)}))  # fmt: skip
            self.counts.messages += len(page)
            self.progress(self.counts)
            if not page:
                return
            after = page[-1].seq

    async def _metadata(self, view: Snapshot, tenant: str) -> None:
        after: tuple[str, str] | None = None
        while True:
            page = await view.metadata(tenant, after, PAGE, PAGE_BYTES)
            for entry in page:
                self.write(_line(metadata_json(tenant, entry)))
            self.counts.metadata += len(page)
            self.progress(self.counts)
            if not page:
                return
            after = (page[-1].namespace, page[-1].key)

    async def _vectors(self, tenant: str) -> None:
        """The tenant's dense points as the vector store holds them now (the store has no
        snapshot of them): caller-supplied vectors exist nowhere else."""
        if self.vectors is None:
            return
        for dimension in await self.vectors.dimensions():
            offset: str | None = None
            while True:
                page, offset = await self.vectors.scroll(tenant, dimension, offset, PAGE)
                for point in page:
                    self.write(_line({"type": "vector", "tenant": tenant, "point": point_json(point)}))
                self.counts.vectors += len(page)
                self.progress(self.counts)
                if offset is None:
                    break


async def _reachable(vectors: VectorIndex | None) -> None:
    """TransferError, before anything is read or written, when vectors are asked for and the
    vector store cannot serve them here."""
    if vectors is None:
        return
    try:
        await vectors.ping()
    except StorageUnavailable as error:
        raise TransferError(
            f"the vector store is unavailable here ({error}): Qdrant Edge serves one process at a time, so stop "
            "the server that holds it, or go without --vectors"
        ) from None


def point_json(point: VectorPoint) -> dict[str, Any]:
    """A dense point as a memoryd.v1.VectorPoint in JSON (proto field names; `legacy` for a
    vector without a model), defaults left out; `owner`, beside them, is its owner stamp
    (VectorRecord.owner), left out for a point written before points were stamped."""
    r = point.record
    data: dict[str, Any] = {"vector": point.vector, "session_id": r.session_id, "timestamp": r.timestamp}
    if r.model_id is None:
        data["legacy"] = True
    else:
        data["model_id"] = r.model_id
    for name in ("message_id", "role", "platform", "sender_id", "speaker_label", "text"):
        if value := getattr(r, name):
            data[name] = value
    if r.mentioned_ids:
        data["mentioned_ids"] = list(r.mentioned_ids)
    if r.owner is not None:  # the owner stamp it was written under (sessions.record_owner)
        data["owner"] = r.owner
    if r.text_hash is not None:  # a message's point: its text is the message's, in the store
        data["text_hash"] = r.text_hash
    return data


def point_from_json(tenant: str, data: dict[str, Any]) -> VectorPoint:
    vector = [float(x) for x in data["vector"]]
    if not vector or not finite(vector):
        raise ValueError("a vector must hold finite numbers")
    record = VectorRecord(
        session_id=str(data.get("session_id", "")),
        timestamp=int(data.get("timestamp", 0)),
        model_id=None if data.get("legacy") else str(data["model_id"]),
        message_id=str(data.get("message_id", "")),
        role=str(data.get("role", "")),
        platform=str(data.get("platform", "")),
        sender_id=str(data.get("sender_id", "")),
        mentioned_ids=tuple(str(x) for x in data.get("mentioned_ids") or ()),
        speaker_label=str(data.get("speaker_label", "")),
        text=str(data.get("text", "")),
        owner=str(data["owner"]) if data.get("owner") else None,  # unstamped: written before stamps
        text_hash=int(data["text_hash"]) if data.get("text_hash") is not None else None,
    )
    return VectorPoint(tenant, vector, record)


def _session_ids(record: SessionRecord) -> list[tuple[str, str, bool]]:
    a = record.attributes
    return [
        ("session_id", record.session_id, True), ("user_id", a.user_id, True), ("agent_id", a.agent_id, True),
        *((("label key", key, False)) for key in a.labels), *((("label value", v, False)) for v in a.labels.values()),
    ]  # fmt: skip


def _message_ids(session_id: str, m: Message) -> list[tuple[str, str, bool]]:
    return [("session_id", session_id, True), ("message id", m.id, True), ("role", m.role, True),
            ("kind", m.kind or "", True)]  # fmt: skip


def _point_ids(point: VectorPoint) -> list[tuple[str, str, bool]]:
    r = point.record
    fields = ("session_id", "model_id", "message_id", "role", "platform", "sender_id", "speaker_label")
    mentioned = [("mentioned id", x, False) for x in r.mentioned_ids]
    return [*((name, getattr(r, name) or "", False) for name in fields), *mentioned]


# -- import -------------------------------------------------------------------------------
# A write the store or the vector store refuses as unavailable (a timeout, a restart) is tried
# again after these pauses, seconds; each batch is one transaction or idempotent upserts, so a
# try that failed left nothing, or nothing that the next try does not write again.
RETRY_PAUSES = (0.5, 1.0, 2.0, 4.0, 8.0, 15.0, 30.0, 30.0)


class Importer:
    """Reads a stream line by line and writes it in batches (module docstring).

    A stream may hold several exports one after the other (`cat a.jsonl b.jsonl`), each header
    to end record, of different tenants; each is imported whole. `check` reads a stream with
    no writes: every line of a file that `run` would refuse is refused there, before anything
    is written (from a pipe, the stream can only be read once: what came before a bad line is
    imported, and importing again resumes)."""

    def __init__(
        self,
        store: Store | None,
        progress: Callable[[Counts], None] = lambda c: None,
        now: Callable[[], int] = now_ms,
        vectors: VectorIndex | None = None,
        retrying: Callable[[str, int, float, Exception], None] = lambda what, attempt, pause, error: None,
        pauses: Sequence[float] = RETRY_PAUSES,
        max_id_length: int = Limits().max_id_length,
    ):
        self.store = store  # None: `check` only
        self.progress = progress
        self.now = now
        self.vectors = vectors  # with it, vector records are upserted; without, skipped
        self.retrying = retrying  # told of each write tried again: (what, attempt, pause, error)
        self.pauses = pauses
        self.max_id_length = max_id_length  # the id rule's bound (--max-id-length)
        self.counts = Counts()
        self.header: dict[str, Any] | None = None  # the first export's header
        self._writes = True
        self._reset()

    def _reset(self) -> None:
        self.counts = Counts()
        self.exports = 0  # exports read to their end record
        self._export: dict[str, Any] | None = None  # the header of the export being read
        self._export_line = 0  # and its line
        self._export_counts = Counts()  # what it held so far (its end record states it)
        self._tenants: dict[str, int] = {}  # tenant: line of the header of the export that held it
        # The messages being read, of one session: (tenant, session_id), the last seq and its line.
        self._run: tuple[str, str] | None = None
        self._run_seq = (0, 0)
        # The batch being gathered: (kind, tenant, session_id or "") and its items, their lines, bytes.
        self._batch_key: tuple[str, str, str] | None = None
        self._batch: list[Any] = []
        self._batch_lines: list[int] = []
        self._batch_bytes = 0
        # The batch being written meanwhile: reading the next one overlaps the store's writes.
        self._writing: asyncio.Future[None] | None = None
        self._done_before = 0  # the last line whose records are all written

    async def check(self, lines: Iterable[bytes]) -> Counts:
        """Read the whole stream as `run` would, writing nothing: TransferError naming the line
        of the first thing `run` would refuse in it. With a store, its messages and sessions
        are checked against the store's too (Store.importable_messages, the session's owner).
        Returns what the stream holds (`exports` says how many exports); the importer is then
        as new, for `run`."""
        self._writes = False
        try:
            return await self._read(lines)
        finally:
            exports = self.exports
            self._writes = True
            self.header = None
            self._reset()
            self.exports = exports

    async def run(self, lines: Iterable[bytes]) -> Counts:
        await _reachable(self.vectors)
        return await self._read(lines)

    async def _read(self, lines: Iterable[bytes]) -> Counts:
        number = 0
        try:
            for number, line in enumerate(lines, start=1):
                if not line.strip():
                    continue
                try:
                    record = json.loads(line)
                except ValueError as error:
                    raise TransferError(f"line {number} is not JSON ({error})") from None
                if self._export is None:
                    self._begin(record, number)
                    continue
                try:
                    kind = record["type"]
                    if kind == "end":
                        await self._flush(last=True)
                        self._check_end(record, number)
                        self._export = None
                        if self._writes:
                            self._done_before = number
                        continue
                    await self._take(kind, record, number, len(line))
                except (KeyError, TypeError, ValueError) as error:
                    raise TransferError(f"line {number} is not a record of a memoryd export ({error!r})") from None
                except FailedPrecondition as error:
                    raise self._conflict(number, error) from None
            await self._flush(last=True)
        except BaseException:
            if self._writing is not None:  # a batch being written when a later line failed
                with contextlib.suppress(BaseException):
                    await self._writing
                self._writing = None
            raise
        if self.header is None:
            raise TransferError("the stream is empty: no export header")
        if self._export is not None:
            raise TransferError(
                f"the stream ends after line {number} without its end record: the export was cut short (an "
                "interrupted export, or a partial copy). What it held is imported; import a complete export "
                "(importing again is safe: what is already there is skipped)",
                resumable=True,
            )
        return self.counts

    def _begin(self, record: Any, number: int) -> None:
        """An export's header: the stream's first line, or the line after an end record."""
        if self.header is not None and not (isinstance(record, dict) and "format" in record):
            raise TransferError(
                f"line {number} follows the end record of the export that began at line {self._export_line} "
                "and is not the header of another export"
            )
        try:
            header = check_header(record)
        except TransferError as error:
            raise TransferError(f"line {number}: {error}") from None
        tenants = header.get("tenants")
        if not isinstance(tenants, dict) or not all(isinstance(t, str) for t in tenants):
            raise TransferError(f"line {number}: the export's header names no tenants")
        for tenant in tenants:
            if tenant in self._tenants:
                raise TransferError(
                    f"line {number}: a second export of tenant {tenant!r} in this stream (the export at line "
                    f"{self._tenants[tenant]} held it): import each export of a tenant on its own"
                )
        self._tenants.update(dict.fromkeys(tenants, number))
        self.header = self.header or header
        self._export, self._export_line = header, number
        self._export_counts = Counts()
        self._run = None

    async def _take(self, kind: str, record: dict[str, Any], number: int, size: int) -> None:
        tenant = record["tenant"]
        if not isinstance(tenant, str) or not tenant or tenant == SYSTEM_TENANT:
            raise ValueError(f"not a tenant: {tenant!r}")
        assert self._export is not None
        if tenant not in self._export["tenants"]:
            raise TransferError(f"line {number} holds tenant {tenant!r}, which its export's header does not name")
        counts = self._export_counts
        if kind == "session":
            record_ = session_from_json(record)
            self._check_ids(number, tenant, _session_ids(record_))
            await self._flush(last=True)
            counts.sessions += 1
            self.counts.sessions += 1
            self._run = None
            if not self._writes and self.store is not None:  # check: the target's owner of the session
                await self._check_owner(number, tenant, record_)
            if self._writes:
                assert self.store is not None
                store = self.store
                written = await self._retried(number, number, lambda: store.import_session(tenant, record_, self.now()))
                self.counts.sessions_written += written
                self._done_before = number
            return
        item: Message | MetadataEntry | VectorPoint
        if kind == "message":
            session_id = record["session_id"]
            if not isinstance(session_id, str):
                raise TypeError("session_id is not a string")
            key, item = ("message", tenant, session_id), message_from_json(record["message"])
            self._check_ids(number, tenant, _message_ids(session_id, item))
            self._in_order(tenant, session_id, item, number)
            counts.messages += 1
            self.counts.messages += 1
        elif kind == "metadata":
            key, item = ("metadata", tenant, ""), metadata_from_json(record)
            self._check_ids(number, tenant, [("namespace", item.namespace, False), ("key", item.key, False)])
            counts.metadata += 1
            self.counts.metadata += 1
        elif kind == "vector":
            key, item = ("vector", tenant, ""), point_from_json(tenant, record["point"])
            self._check_ids(number, tenant, _point_ids(item))
            counts.vectors += 1
            self.counts.vectors += 1
            if self.vectors is None:
                return
        else:
            raise ValueError(f"unknown record type {kind!r}")
        if not self._writes and (self.store is None or kind != "message"):
            return
        if key != self._batch_key:
            await self._flush()
            self._batch_key = key
        self._batch.append(item)
        self._batch_lines.append(number)
        self._batch_bytes += size
        if len(self._batch) >= PAGE or self._batch_bytes >= PAGE_BYTES:
            await self._flush()

    async def _check_owner(self, number: int, tenant: str, record: SessionRecord) -> None:
        """FailedPrecondition when import_session would refuse the session: the target holds
        it under another owner (the rules import_session applies, read without writing)."""
        assert self.store is not None
        store = self.store
        current = await self._retried(number, number, lambda: store.get_session(tenant, record.session_id))
        if current is not None:
            after, _ = imported_attributes(record.session_id, current.attributes, record.attributes)
            imported_owner(record.session_id, current.owner, after, record)

    def _check_ids(self, number: int, tenant: str, ids: Iterable[tuple[str, str, bool]]) -> None:
        """The id rule (domain/identifiers.py), as requests meet it, on the record's ids: each
        (field, value, bounded by --max-id-length) that is not empty. Memoryd's own metadata
        keys and the payload ids of vectors are held to its characters only (their length
        follows the ids they are made of)."""
        for field, value, bounded in (("tenant", tenant, True), *ids):
            if value and (problem := id_problem(value, self.max_id_length if bounded else sys.maxsize)):
                raise TransferError(
                    f"line {number}: {field} {value!r} {problem} (the id rule of requests, docs/SECURITY.md): "
                    "an id memoryd no longer accepts; correct it in the export, or leave the record out"
                    + (", or import with a larger --max-id-length" if "at most" in problem else "")
                )

    def _in_order(self, tenant: str, session_id: str, message: Message, number: int) -> None:
        """An export lists a session's messages by seq, each once: a line that repeats a seq (a
        duplicated line, two messages at one seq) or goes back is refused where it is."""
        if self._run == (tenant, session_id):
            seq, line = self._run_seq
            if message.seq <= seq:
                what = "repeats the seq" if message.seq == seq else f"goes back to seq {message.seq} after seq"
                raise TransferError(
                    f"line {number}: message {message.id!r} of session {session_id!r} {what} {seq} of line {line}: "
                    "an export lists each session's messages once, by seq (the stream was altered)"
                )
        self._run = (tenant, session_id)
        self._run_seq = (message.seq, number)

    async def _flush(self, *, last: bool = False) -> None:
        """Hand the gathered batch to the store, once the one before it is written (batches are
        written in stream order, at most one being written while the next is read); with
        `last`, wait for it too."""
        if self._writing is not None:
            writing, self._writing = self._writing, None
            await writing
        if self._batch:
            key, batch, lines = self._batch_key, self._batch, self._batch_lines
            self._batch, self._batch_lines, self._batch_bytes = [], [], 0
            assert key is not None
            self._writing = asyncio.ensure_future(self._write(key, batch, lines))
        if last and self._writing is not None:
            writing, self._writing = self._writing, None
            await writing

    async def _write(self, key: tuple[str, str, str], batch: list[Any], lines: list[int]) -> None:
        kind, tenant, session_id = key
        store = self.store
        assert store is not None
        first, last = lines[0], lines[-1]
        try:
            if kind == "message" and not self._writes:  # check: what it would write, and any clash
                await self._retried(first, last, lambda: store.importable_messages(tenant, session_id, batch))
                return
            if kind == "message":
                written = await self._retried(
                    first, last, lambda: store.import_messages(tenant, session_id, batch, self.now())
                )
                self.counts.messages_written += len(written)
            elif kind == "vector":
                vectors = self.vectors
                assert vectors is not None
                upserted = await self._retried(first, last, lambda: vectors.upsert(batch, self.now()))
                self.counts.vectors_written += len(upserted)
            else:
                self.counts.metadata_written += await self._retried(
                    first, last, lambda: store.import_metadata(tenant, batch, self.now())
                )
        except ImportConflict as error:
            raise self._conflict(lines[error.index if error.index is not None else 0], error) from None
        self._done_before = lines[-1]
        self.progress(self.counts)

    async def _retried(self, first: int, last: int, write: Callable[[], Awaitable[T]]) -> T:
        """`write()` of lines first-last, tried again after each pause while the store answers
        unavailable; then a resumable TransferError."""
        where = f"line {first}" if first == last else f"lines {first}-{last}"
        for attempt, pause in enumerate([*self.pauses, None], start=1):
            try:
                return await write()
            except StorageUnavailable as error:
                if pause is None:
                    done = f"lines 1-{self._done_before} are imported" if self._done_before else "nothing is imported"
                    raise TransferError(
                        f"writing {where}: {error} (tried {attempt} times over {sum(self.pauses):.0f} s); {done}",
                        resumable=True,
                    ) from None
                self.retrying(where, attempt, pause, error)
                await asyncio.sleep(pause)
        raise AssertionError("unreachable")

    def _conflict(self, number: int, error: Exception) -> TransferError:
        return TransferError(
            f"line {number}: {error}: the target holds data this export conflicts with, or the export "
            "is not as memoryd wrote it (import into an empty store, or into the one this export was made "
            f"from). Nothing of line {number}'s batch is written; "
            + (f"lines 1-{self._done_before} are imported" if self._done_before else "nothing is imported")
        )

    def _check_end(self, end: dict[str, Any], number: int) -> None:
        read = asdict(self._export_counts)
        stated = {name: end.get(name, 0) for name in ("sessions", "messages", "metadata", "vectors")}
        if any(read[name] != value for name, value in stated.items()):
            read = {name: read[name] for name in stated}
            raise TransferError(
                f"line {number}: the export's end record counts {stated}, the stream held {read}: it was altered"
            )
        self.exports += 1
