"""`memoryd export` / `memoryd import`: a deployment's data as one JSON-lines stream, the way
from one backend to another (docs/OPERATIONS.md has the format and the walk-through).

The stream, one JSON object per line, UTF-8:

    {"format": "memoryd.export", "version": 1, "created": ms, "tenants": {"<tenant>": {"event_seq": n}},
     "vectors": bool}
    {"type": "session", "tenant": t, "session_id": s, "last_seq", "last_timestamp", "last_activity",
     "user_id", "agent_id", "labels"}                         every session row, by tenant and id
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
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from memoryd.domain.errors import FailedPrecondition, StorageUnavailable
from memoryd.domain.models import SYSTEM_TENANT, Message, MetadataEntry, SessionRecord, now_ms
from memoryd.domain.sessions import SessionAttributes
from memoryd.domain.store import Snapshot, SnapshotLost, Store
from memoryd.domain.store_rules import ImportConflict
from memoryd.domain.vectors import VectorIndex, VectorPoint, VectorRecord, finite

FORMAT = "memoryd.export"
VERSION = 1
# Export reads and import writes this many rows (or this many bytes of them) at a time.
PAGE = 500
PAGE_BYTES = 4 << 20
SESSION_PAGE = 200


class TransferError(Exception):
    """An export or import that cannot go on; the message says why and what to do."""


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
        "user_id": a.user_id, "agent_id": a.agent_id, "labels": dict(a.labels),
    }  # fmt: skip


def session_from_json(data: dict[str, Any]) -> SessionRecord:
    attributes = SessionAttributes(data.get("user_id", ""), data.get("agent_id", ""), dict(data.get("labels") or {}))
    return SessionRecord(
        data["session_id"], int(data["last_seq"]), int(data["last_timestamp"]), int(data["last_activity"]), attributes
    )


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
    vector without a model), defaults left out."""
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
    )
    return VectorPoint(tenant, vector, record)


# -- import -------------------------------------------------------------------------------
class Importer:
    """Reads a stream line by line and writes it in batches (module docstring)."""

    def __init__(
        self,
        store: Store,
        progress: Callable[[Counts], None] = lambda c: None,
        now: Callable[[], int] = now_ms,
        vectors: VectorIndex | None = None,
    ):
        self.store = store
        self.progress = progress
        self.now = now
        self.vectors = vectors  # with it, vector records are upserted; without, skipped
        self.counts = Counts()
        self.header: dict[str, Any] | None = None
        # The batch being gathered: (kind, tenant, session_id or "") and its items and bytes.
        self._batch_key: tuple[str, str, str] | None = None
        self._batch: list[Any] = []
        self._batch_bytes = 0
        # The batch being written meanwhile: reading the next one overlaps the store's writes.
        self._writing: asyncio.Future[None] | None = None

    async def run(self, lines: Iterable[bytes]) -> Counts:
        await _reachable(self.vectors)
        number = 0
        for number, line in enumerate(lines, start=1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except ValueError as error:
                raise TransferError(f"line {number} is not JSON ({error})") from None
            if self.header is None:
                self.header = check_header(record)
                continue
            try:
                kind = record["type"]
                if kind == "end":
                    await self._flush(last=True)
                    self._check_end(record)
                    return self.counts
                await self._take(kind, record, len(line))
            except (KeyError, TypeError, ValueError) as error:
                raise TransferError(f"line {number} is not a record of a memoryd export ({error!r})") from None
            except (ImportConflict, FailedPrecondition) as error:
                raise TransferError(
                    f"at line {number}: {error}: the target holds data this export conflicts with "
                    "(import into an empty store, or into the one this export was made from)"
                ) from None
        await self._flush(last=True)
        if self.header is None:
            raise TransferError("the stream is empty: no export header")
        raise TransferError(
            f"the stream ends after line {number} without its end record: the export was cut short (an "
            "interrupted export, or a partial copy). What it held is imported; import a complete export "
            "(importing again is safe: what is already there is skipped)"
        )

    async def _take(self, kind: str, record: dict[str, Any], size: int) -> None:
        tenant = record["tenant"]
        if not isinstance(tenant, str) or not tenant or tenant == SYSTEM_TENANT:
            raise ValueError(f"not a tenant: {tenant!r}")
        if kind == "session":
            await self._flush(last=True)
            self.counts.sessions += 1
            self.counts.sessions_written += await self.store.import_session(tenant, session_from_json(record), self.now())
            return
        if kind == "message":
            key, item = ("message", tenant, record["session_id"]), message_from_json(record["message"])
            self.counts.messages += 1
        elif kind == "metadata":
            key, item = ("metadata", tenant, ""), metadata_from_json(record)
            self.counts.metadata += 1
        elif kind == "vector":
            key, item = ("vector", tenant, ""), point_from_json(tenant, record["point"])
            self.counts.vectors += 1
            if self.vectors is None:
                return
        else:
            raise ValueError(f"unknown record type {kind!r}")
        if key != self._batch_key:
            await self._flush()
            self._batch_key = key
        self._batch.append(item)
        self._batch_bytes += size
        if len(self._batch) >= PAGE or self._batch_bytes >= PAGE_BYTES:
            await self._flush()

    async def _flush(self, *, last: bool = False) -> None:
        """Hand the gathered batch to the store, once the one before it is written (batches are
        written in stream order, at most one being written while the next is read); with
        `last`, wait for it too."""
        if self._writing is not None:
            writing, self._writing = self._writing, None
            await writing
        if self._batch:
            key, batch, self._batch, self._batch_bytes = self._batch_key, self._batch, [], 0
            self._writing = asyncio.ensure_future(self._write(key, batch))
        if last and self._writing is not None:
            writing, self._writing = self._writing, None
            await writing

    async def _write(self, key: tuple[str, str, str], batch: list[Any]) -> None:
        kind, tenant, session_id = key
        if kind == "message":
            self.counts.messages_written += len(await self.store.import_messages(tenant, session_id, batch, self.now()))
        elif kind == "vector":
            assert self.vectors is not None
            self.counts.vectors_written += len(await self.vectors.upsert(batch, self.now()))
        else:
            self.counts.metadata_written += await self.store.import_metadata(tenant, batch, self.now())
        self.progress(self.counts)

    def _check_end(self, end: dict[str, Any]) -> None:
        read = asdict(self.counts)
        stated = {name: end.get(name, 0) for name in ("sessions", "messages", "metadata", "vectors")}
        if any(read[name] != value for name, value in stated.items()):
            raise TransferError(f"the export's end record counts {stated}, the stream held {read}: it was altered")
