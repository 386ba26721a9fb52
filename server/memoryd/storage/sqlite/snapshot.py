"""The SQLite store's snapshot (Store.snapshot): one read transaction on a connection of its own.

In WAL mode a read transaction sees the database as of its first read, however long it
stays open, while writers go on committing (`memoryd export` of a live server). What it
costs them: the WAL cannot be checkpointed past the snapshot, so it grows by what is
written meanwhile and is folded back once the snapshot ends. The connection is used from
one thread of its own, as sqlite3 connections must be.
"""

from __future__ import annotations

import asyncio
import json
import sqlite3
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, TypeVar

from memoryd.domain.errors import StorageUnavailable
from memoryd.domain.models import SYSTEM_TENANT, Message, MetadataEntry, SessionRecord, utf8_len
from memoryd.domain.paging import read_within
from memoryd.domain.sessions import SessionAttributes
from memoryd.domain.store import Snapshot
from memoryd.storage.sqlite.rows import MESSAGE_COLUMNS, read_messages
from memoryd.storage.sqlite.schema import PRAGMAS

T = TypeVar("T")


class SqliteSnapshot(Snapshot):
    def __init__(self, path: Path) -> None:
        self._path = path
        self._thread = ThreadPoolExecutor(1, thread_name_prefix="sqlite-snapshot")
        self._conn: sqlite3.Connection | None = None

    async def _run(self, job: Callable[[sqlite3.Connection], T]) -> T:
        def call() -> T:
            assert self._conn is not None
            return job(self._conn)

        try:
            return await asyncio.get_running_loop().run_in_executor(self._thread, call)
        except sqlite3.OperationalError as exc:
            raise StorageUnavailable(f"SQLite: {exc}") from exc

    async def __aenter__(self) -> SqliteSnapshot:
        def begin() -> None:
            conn = sqlite3.connect(self._path, isolation_level=None, check_same_thread=False)
            for pragma in PRAGMAS:
                conn.execute(pragma)
            conn.execute("PRAGMA query_only=ON")
            conn.execute("BEGIN")
            conn.execute("SELECT count(*) FROM event_log").fetchone()  # the first read fixes the snapshot
            self._conn = conn

        await asyncio.get_running_loop().run_in_executor(self._thread, begin)
        return self

    async def __aexit__(self, *exc: Any) -> None:
        def end() -> None:
            if self._conn is not None:
                self._conn.execute("COMMIT")
                self._conn.close()

        try:
            await asyncio.get_running_loop().run_in_executor(self._thread, end)
        finally:
            self._thread.shutdown(wait=False)

    async def tenants(self) -> list[str]:
        rows = await self._run(lambda c: c.execute("SELECT tenant FROM event_log ORDER BY tenant").fetchall())
        return [tenant for (tenant,) in rows if tenant != SYSTEM_TENANT]

    async def position(self, tenant: str) -> int:
        row = await self._run(
            lambda c: c.execute("SELECT last_seq FROM event_log WHERE tenant = ?", (tenant,)).fetchone()
        )
        return row[0] if row else 0

    async def sessions(self, tenant: str, after: str | None, limit: int) -> list[SessionRecord]:
        sql = (
            "SELECT session_id, last_seq, last_timestamp, last_activity, user_id, agent_id, labels, owner"
            " FROM sessions WHERE tenant = ? AND session_id > ? ORDER BY session_id LIMIT ?"
        )
        rows = await self._run(lambda c: c.execute(sql, (tenant, after or "", limit)).fetchall())
        return [
            SessionRecord(
                sid, last_seq, last_ts, last_activity, SessionAttributes(user, agent, json.loads(labels)), owner, True
            )
            for sid, last_seq, last_ts, last_activity, user, agent, labels, owner in rows
        ]

    async def messages(self, tenant: str, session_id: str, after_seq: int, limit: int, max_bytes: int) -> list[Message]:
        sql = (
            f"SELECT {MESSAGE_COLUMNS} FROM messages"
            " WHERE tenant = ? AND session_id = ? AND seq > ? ORDER BY seq LIMIT ?"
        )
        return await self._run(
            lambda c: read_messages(c.execute(sql, (tenant, session_id, after_seq, limit)), max_bytes)
        )

    async def metadata(
        self, tenant: str, after: tuple[str, str] | None, limit: int, max_bytes: int
    ) -> list[MetadataEntry]:
        sql = (
            "SELECT namespace, key, data, update_time FROM metadata WHERE tenant = ? AND (namespace, key) > (?, ?)"
            " ORDER BY namespace, key LIMIT ?"
        )
        params = (tenant, *(after or ("", "")), limit)

        def read(conn: sqlite3.Connection) -> list[MetadataEntry]:
            rows = conn.execute(sql, params)
            entries = (MetadataEntry(n, k, json.loads(d), t, utf8_len(d)) for n, k, d, t in rows)
            return read_within(entries, max_bytes, lambda entry: entry.stored_bytes)

        return await self._run(read)
