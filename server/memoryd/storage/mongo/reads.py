"""Reading MongoDB documents as domain values, and its errors as the domain's: what the store
(store.py) and its export snapshot (snapshot.py) both use, so that neither imports the
other for it."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

import bson
import structlog
from bson.codec_options import CodecOptions
from bson.raw_bson import RawBSONDocument
from pymongo.asynchronous.collection import AsyncCollection
from pymongo.asynchronous.cursor import AsyncCursor
from pymongo.asynchronous.database import AsyncDatabase
from pymongo.errors import (
    BulkWriteError,
    ConnectionFailure,
    ExecutionTimeout,
    InvalidOperation,
    OperationFailure,
    PyMongoError,
    WTimeoutError,
)

from memoryd.domain.errors import StorageFull, StorageUnavailable
from memoryd.domain.models import Message
from memoryd.domain.paging import ReadBudget
from memoryd.domain.sessions import LABEL_PAIR_SEPARATOR, SessionAttributes

log = structlog.get_logger("memoryd.storage.mongo")

T = TypeVar("T")

# Server error codes that mean "cannot serve right now" rather than "the request is wrong".
UNAVAILABLE_CODES = frozenset(
    {
        6,  # HostUnreachable
        7,  # HostNotFound
        50,  # MaxTimeMSExpired
        89,  # NetworkTimeout
        91,  # ShutdownInProgress
        189,  # PrimarySteppedDown
        262,  # ExceededTimeLimit
        9001,  # SocketException
        10107,  # NotWritablePrimary
        11600,  # InterruptedAtShutdown
        11602,  # InterruptedDueToReplStateChange
        13435,  # NotPrimaryNoSecondaryOk
        13436,  # NotPrimaryOrSecondary
    }
)
# The server's code for a write refused because its disk is full.
OUT_OF_DISK_SPACE = 14031

# Documents per batch of a byte-bounded read (see read_sized).
READ_BATCH = 101
RAW_DOCUMENTS = CodecOptions(document_class=RawBSONDocument)

# Stored message fields the domain reads back; `tenant` and `platform` are query-only.
MESSAGE_FIELDS = {
    "_id": 0,
    "id": 1,
    "seq": 1,
    "role": 1,
    "content": 1,
    "kind": 1,
    "timestamp": 1,
    "archived": 1,
    "segments": 1,
    "metadata": 1,
    "reasoning_content": 1,
    "tool_calls": 1,
    "tool_call_id": 1,
}


def doc_to_message(doc: dict[str, Any]) -> Message:
    return Message(
        role=doc["role"],
        content=doc.get("content", ""),
        kind=doc.get("kind"),
        timestamp=doc["timestamp"],
        segments=doc.get("segments") or [],
        metadata=doc.get("metadata") or {},
        reasoning_content=doc.get("reasoning_content", ""),
        tool_calls=doc.get("tool_calls") or [],
        tool_call_id=doc.get("tool_call_id", ""),
        id=doc["id"],
        seq=doc["seq"],
        archived=bool(doc.get("archived", False)),
    )


def sized_message(doc: dict[str, Any], size: int) -> Message:
    msg = doc_to_message(doc)
    msg.stored_bytes = size
    return msg


def raw_collection(db: AsyncDatabase, name: str) -> AsyncCollection:
    """A collection whose reads return RawBSONDocument: sizes are known before decoding."""
    return db.get_collection(name, codec_options=RAW_DOCUMENTS)


async def read_sized(
    cursor: AsyncCursor,
    limit: int,
    max_bytes: int | None,
    build: Callable[[dict[str, Any], int], T],
    batch: int = READ_BATCH,
) -> list[T]:
    """Up to `limit` items of a raw cursor, stopping after the one that takes the BSON bytes
    read past `max_bytes` (Store's byte-bounded reads). The server sends batches of at most
    `batch` documents (and 16 MiB), so an early stop leaves at most one batch unread."""
    cursor = cursor.limit(limit)
    if max_bytes is not None:
        cursor = cursor.batch_size(min(limit, batch))
    budget = ReadBudget(max_bytes)
    items: list[T] = []
    try:
        async for raw in cursor:
            size = len(raw.raw)
            items.append(build(bson.decode(raw.raw), size))
            if budget.spend(size):
                break
    finally:
        await cursor.close()
    return items


def session_doc_attributes(doc: dict[str, Any]) -> SessionAttributes:
    pairs = (pair.split(LABEL_PAIR_SEPARATOR, 1) for pair in doc.get("label_pairs") or [])
    return SessionAttributes(doc.get("user_id", ""), doc.get("agent_id", ""), dict(sorted(pairs)))


def is_out_of_disk(exc: PyMongoError) -> bool:
    """The server could not store the write for want of disk space (OutOfDiskSpace, or the
    storage engine's ENOSPC in its words)."""
    codes = {exc.code} if isinstance(exc, OperationFailure) else set()
    if isinstance(exc, BulkWriteError):
        codes |= {e.get("code") for e in exc.details.get("writeErrors", [])}
    return OUT_OF_DISK_SPACE in codes or "No space left on device" in str(exc)


def is_unavailable(exc: PyMongoError) -> bool:
    if isinstance(exc, (ConnectionFailure, ExecutionTimeout, WTimeoutError)):
        return True
    if isinstance(exc, InvalidOperation) and "after close" in str(exc):
        return True  # the store was closed under a running call
    if isinstance(exc, OperationFailure) and exc.code in UNAVAILABLE_CODES:
        return True
    # The driver labels errors that a retry against a healthy server would clear.
    return exc.has_error_label("TransientTransactionError") or exc.has_error_label("RetryableWriteError")


@contextmanager
def translated_errors() -> Iterator[None]:
    try:
        yield
    except PyMongoError as exc:
        if is_out_of_disk(exc):  # before is_unavailable: a transaction's retries would not clear it
            log.info("mongodb_out_of_disk", error_type=type(exc).__name__)
            raise StorageFull(f"MongoDB: out of disk space ({type(exc).__name__})", store="messages") from exc
        if is_unavailable(exc):
            # Server addresses stay in the log; callers learn only that storage is unavailable.
            log.info("mongodb_unavailable", error_type=type(exc).__name__, error=str(exc)[:500])
            raise StorageUnavailable(f"MongoDB is unavailable ({type(exc).__name__})") from exc
        raise
