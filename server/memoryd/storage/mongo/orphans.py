"""Transactions of a replica that died: found through a registry of logical sessions, killed.

A replica killed (kill -9, a lost host) in the middle of a transaction leaves it open on the
server, holding its writes' locks until the server's transaction lifetime limit reaps it
(`transactionLifetimeLimitSeconds`, 60 s by default): every transaction of MongoStore writes
the tenant's counter document first (store.py, `_claim`), so for that long no replica could
write the tenant. MongoDB can end another client's transaction only by its logical session
id (`killSessions`), which lives in the client that died, so each replica publishes its own:

- `replica_sessions` holds one document per running store: its id, a heartbeat (wall-clock
  ms, renewed every HEARTBEAT_S) and the lsids its transactions have used (pymongo pools
  server sessions, so the list stays as long as the replica's peak concurrency).
- A writer whose transaction keeps meeting conflicts for STALL_S calls `reap()`: it kills
  the sessions of every replica whose heartbeat is older than STALE_S and drops its entry,
  and this replica's own abandoned sessions (a transaction given up on while the server did
  not answer, whose abort may never have arrived: a hung server that comes back runs the
  statements queued on its connections and holds their locks).
  Killing a live replica's transaction would be harmless (it is retried as a conflict), so
  a replica merely slow to heartbeat loses nothing.

With authentication, the memoryd user needs the `killAnySession` privilege for this; without
it the server's lifetime limit is the bound (lower it to ~10 s: memoryd's own transactions
never run longer than `--mongodb-timeout-ms`, except the bulk ones).
"""

from __future__ import annotations

import asyncio
import contextlib
import time
import uuid
from typing import Any

import pymongo
import structlog
from pymongo.asynchronous.client_session import AsyncClientSession
from pymongo.asynchronous.database import AsyncDatabase
from pymongo.errors import PyMongoError

log = structlog.get_logger("memoryd.storage.mongo")

REPLICA_SESSIONS = "replica_sessions"
HEARTBEAT_S = 1.0
STALE_S = 4.0
# How long a writer meets conflicts before it looks for a dead replica's transactions.
STALL_S = 2.0
# Abandoned sessions remembered at most (each one a hung server's lost abort).
MAX_ABANDONED = 10_000
# Each registry call's own budget: it runs beside, not inside, a caller's transaction.
CALL_BUDGET = 2.0


def _now_ms() -> int:
    return int(time.time() * 1000)


class OrphanReaper:
    def __init__(self) -> None:
        self.replica_id = uuid.uuid4().hex
        self._known: set[bytes] = set()
        # This replica's sessions whose transaction was given up without the server's word that
        # it ended (their abort may never have arrived): never pooled again, killed on a stall.
        self._abandoned: dict[bytes, Any] = {}
        self._db: AsyncDatabase | None = None
        self._heartbeat: asyncio.Task | None = None
        self._reaping: asyncio.Task | None = None

    async def start(self, db: AsyncDatabase) -> None:
        self._db = db
        with pymongo.timeout(CALL_BUDGET):
            await db[REPLICA_SESSIONS].update_one(
                {"_id": self.replica_id}, {"$set": {"heartbeat": _now_ms(), "lsids": []}}, upsert=True
            )
        self._heartbeat = asyncio.get_running_loop().create_task(self._beat())

    async def stop(self) -> None:
        for task in (self._heartbeat, self._reaping):
            if task is not None:
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError, PyMongoError):
                    await task
        db, self._db = self._db, None
        if db is not None:
            with contextlib.suppress(PyMongoError), pymongo.timeout(CALL_BUDGET):
                await db[REPLICA_SESSIONS].delete_one({"_id": self.replica_id})

    async def _beat(self) -> None:
        while self._db is not None:
            await asyncio.sleep(HEARTBEAT_S)
            try:
                with pymongo.timeout(CALL_BUDGET):
                    await self._db[REPLICA_SESSIONS].update_one(
                        {"_id": self.replica_id}, {"$set": {"heartbeat": _now_ms()}}, upsert=True
                    )
            except PyMongoError as exc:
                log.info("mongodb_heartbeat_failed", error_type=type(exc).__name__)

    async def register(self, session: AsyncClientSession, budget: float = CALL_BUDGET) -> None:
        """Publish the session's lsid before its first transaction here (once per pooled session)."""
        lsid = session.session_id["id"]
        key = bytes(lsid)
        if key in self._known or self._db is None:
            return
        with pymongo.timeout(min(budget, CALL_BUDGET)):
            await self._db[REPLICA_SESSIONS].update_one(
                {"_id": self.replica_id}, {"$addToSet": {"lsids": lsid}, "$set": {"heartbeat": _now_ms()}}, upsert=True
            )
        self._known.add(key)

    def abandon(self, session: AsyncClientSession) -> None:
        server_session = session._server_session  # noqa: SLF001 (pymongo has no public way to drop it from the pool)
        if server_session is not None:
            server_session.mark_dirty()
        lsid = session.session_id["id"]
        if len(self._abandoned) < MAX_ABANDONED:
            self._abandoned[bytes(lsid)] = lsid

    def reap(self) -> None:
        """Kill the sessions of replicas that stopped heartbeating, once at a time, in the background."""
        if self._db is not None and (self._reaping is None or self._reaping.done()):
            self._reaping = asyncio.get_running_loop().create_task(self._reap(self._db))

    async def _reap(self, db: AsyncDatabase) -> None:
        try:
            with pymongo.timeout(CALL_BUDGET):
                stale = [
                    d
                    async for d in db[REPLICA_SESSIONS].find(
                        {"heartbeat": {"$lt": _now_ms() - int(STALE_S * 1000)}, "_id": {"$ne": self.replica_id}}
                    )
                ]
                own = list(self._abandoned.items())
                if own:
                    await db.client.admin.command("killSessions", [{"id": lsid} for _, lsid in own])
                    await db[REPLICA_SESSIONS].update_one(
                        {"_id": self.replica_id}, {"$pull": {"lsids": {"$in": [lsid for _, lsid in own]}}}
                    )
                    for key, _ in own:
                        self._abandoned.pop(key, None)
                        self._known.discard(key)
                    log.info("mongodb_abandoned_sessions_killed", sessions=len(own))
                for doc in stale:
                    lsids = [{"id": lsid} for lsid in doc.get("lsids", [])]
                    if lsids:
                        await db.client.admin.command("killSessions", lsids)
                    await db[REPLICA_SESSIONS].delete_one({"_id": doc["_id"], "heartbeat": doc["heartbeat"]})
                    log.warning("mongodb_dead_replica_sessions_killed", sessions=len(lsids))
        except PyMongoError as exc:
            log.info("mongodb_reap_failed", error_type=type(exc).__name__)
