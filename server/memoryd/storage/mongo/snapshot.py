"""The MongoDB store's snapshot (Store.snapshot): a snapshot read session.

Every read of a session started with `snapshot=True` (MongoDB 5.0+, a replica set or a
sharded cluster) sees the data at one cluster time, fixed by its first read, without a
transaction's time and size limits; the server keeps that history for
`minSnapshotHistoryWindowInSeconds` (300 s by default): a longer export fails with
SnapshotTooOld (raise the parameter, or export while writes pause). Servers that accept
snapshot reads without holding them (SecantusDB, single node) are caught by the export's
own check (domain/transfer.py): each exported tenant's log position, read again at the end
in the same session, must not have moved.
"""

from __future__ import annotations

from typing import Any

import pymongo
from pymongo.asynchronous.client_session import AsyncClientSession
from pymongo.asynchronous.database import AsyncDatabase
from pymongo.errors import OperationFailure

from memoryd.domain.models import SYSTEM_TENANT, Message, MetadataEntry, SessionRecord
from memoryd.domain.store import Snapshot, SnapshotLost
from memoryd.storage.mongo.indexes import EVENT_LOG, MESSAGES, METADATA, SESSIONS
from memoryd.storage.mongo.reads import (
    MESSAGE_FIELDS,
    READ_BATCH,
    raw_collection,
    read_sized,
    session_doc_attributes,
    sized_message,
    translated_errors,
)

SNAPSHOT_TOO_OLD = 239
# Message sizes that set the batches of a message read: a first guess (as large as content
# gets, so that the first page's batches stay small), and the least assumed.
FIRST_GUESS_BYTES = 1 << 20
MIN_MESSAGE_BYTES = 256
SNAPSHOT_ADVICE = (
    "MongoDB no longer holds the snapshot this export started from (SnapshotTooOld: it keeps "
    "minSnapshotHistoryWindowInSeconds, 300 s by default): raise that parameter for the export, "
    "export while writes pause, or export one tenant at a time"
)


class MongoSnapshot(Snapshot):
    def __init__(self, db: AsyncDatabase) -> None:
        self._db = db
        self._session: AsyncClientSession | None = None
        # The average size of the messages read so far (a guess until the first page).
        self._message_bytes = FIRST_GUESS_BYTES

    async def __aenter__(self) -> MongoSnapshot:
        with translated_errors():
            self._session = self._db.client.start_session(snapshot=True)
        return self

    async def __aexit__(self, *exc: Any) -> None:
        if self._session is not None:
            await self._session.end_session()

    async def _find(
        self, collection: str, where: dict, order: list, limit: int, projection: dict | None = None
    ) -> list:
        with translated_errors():
            try:
                cursor = self._db[collection].find(where, projection, session=self._session).sort(order).limit(limit)
                return [doc async for doc in cursor]
            except OperationFailure as exc:
                if exc.code == SNAPSHOT_TOO_OLD:
                    raise SnapshotLost(SNAPSHOT_ADVICE) from exc
                raise

    async def tenants(self) -> list[str]:
        docs = await self._find(EVENT_LOG, {}, [("tenant", pymongo.ASCENDING)], 0, {"_id": 0, "tenant": 1})
        return [doc["tenant"] for doc in docs if doc["tenant"] != SYSTEM_TENANT]

    async def position(self, tenant: str) -> int:
        docs = await self._find(EVENT_LOG, {"tenant": tenant}, [("tenant", pymongo.ASCENDING)], 1)
        return docs[0]["last_seq"] if docs else 0

    async def sessions(self, tenant: str, after: str | None, limit: int) -> list[SessionRecord]:
        where = {"tenant": tenant, "session_id": {"$gt": after or ""}}
        docs = await self._find(SESSIONS, where, [("session_id", pymongo.ASCENDING)], limit, {"_id": 0})
        return [
            SessionRecord(
                doc["session_id"],
                doc.get("last_seq", 0),
                doc.get("last_timestamp", 0),
                doc.get("last_activity", 0),
                session_doc_attributes(doc),
                # A document written before owners were kept apart: its user_id, else the tenant's.
                doc["owner"] if "owner" in doc else doc.get("user_id", ""),
                owner_stated=True,
            )
            for doc in docs
        ]

    async def messages(self, tenant: str, session_id: str, after_seq: int, limit: int, max_bytes: int) -> list[Message]:
        where = {"tenant": tenant, "session_id": session_id, "seq": {"$gt": after_seq}}
        cursor = (
            raw_collection(self._db, MESSAGES)
            .find(where, MESSAGE_FIELDS, session=self._session)
            .sort("seq", pymongo.ASCENDING)
        )
        # Batches of about `max_bytes`, by the size of the messages read so far: the server fills
        # a batch up to 16 MiB, and the driver holds a batch about three times over (the reply,
        # its documents, their decoding), which for large messages would be most of the memory.
        batch = max(1, min(READ_BATCH, max_bytes // self._message_bytes))
        page = await self._sized(cursor, limit, max_bytes, sized_message, batch)
        if page:
            self._message_bytes = max(MIN_MESSAGE_BYTES, sum(m.stored_bytes for m in page) // len(page))
        return page

    async def metadata(
        self, tenant: str, after: tuple[str, str] | None, limit: int, max_bytes: int
    ) -> list[MetadataEntry]:
        where: dict[str, Any] = {"tenant": tenant}
        if after is not None:
            where["namespace"] = {"$gte": after[0]}
            where["$nor"] = [{"namespace": after[0], "key": {"$lte": after[1]}}]
        cursor = (
            raw_collection(self._db, METADATA)
            .find(where, {"_id": 0, "tenant": 0}, session=self._session)
            .sort([("namespace", pymongo.ASCENDING), ("key", pymongo.ASCENDING)])
            .hint("metadata_id")
        )

        def build(doc: dict[str, Any], size: int) -> MetadataEntry:
            return MetadataEntry(doc["namespace"], doc["key"], doc["data"], doc["update_time"], size)

        return await self._sized(cursor, limit, max_bytes, build)

    async def _sized(self, cursor, limit: int, max_bytes: int, build, batch: int = READ_BATCH) -> list:
        with translated_errors():
            try:
                return await read_sized(cursor, limit, max_bytes, build, batch)
            except OperationFailure as exc:
                if exc.code == SNAPSHOT_TOO_OLD:
                    raise SnapshotLost(SNAPSHOT_ADVICE) from exc
                raise
