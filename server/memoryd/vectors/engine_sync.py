"""The index synchronizer in the engine process (embedded default: SQLite + Qdrant Edge).

The engine process (storage/qdrant/edge_process.py, or edge_shared.py with `--workers N`)
hosts `run` as a hook: it opens the data dir's SQLite file itself and runs the IndexSync of a
VectorRecall there, so the serving processes do no reading, tokenizing, embedding or point
building for indexing. There is one engine per data dir (its folder lock), so no lease.

The serving process keeps an `EngineFollower` in its place: it answers positions (search
waits, GetVectorStats, the lag gauge) from the engine's in-memory cursors, over the engine
socket (`sync_state`), and wakes the engine's synchronizer after each local commit
(`sync_wake`): SQLite commits of another process wake no one in this one.
"""

from __future__ import annotations

import asyncio
import logging
import os
import time
from typing import Any

from memoryd import shutdown
from memoryd.domain.errors import MemorydError
from memoryd.domain.recall import DEFAULT_CONTROL_KINDS
from memoryd.observability.metrics import VECTOR_SYNC_LAG
from memoryd.vectors.sync import CURSOR_NAMESPACE, IndexSync, TenantState, wait_any

log = logging.getLogger(__name__)

HOOK = "memoryd.vectors.engine_sync:run"
# The embedder's key reaches the engine process in its environment, not its command line.
API_KEY_ENV = "MEMORYD_ENGINE_EMBEDDER_API_KEY"
# The engine's synchronizer gathers a stream of commits this long into one pass: fewer, larger
# batches cost less per message (a search waiting for a position cuts it short).
LINGER_SECONDS = 0.1


def settings(config) -> dict[str, Any]:
    """What the engine's synchronizer needs of Config (plain values: the engine's command line)."""
    return {
        "keywords": config.index_message_keywords,
        "control_kinds": [k.strip() for k in config.recall_control_kinds.split(",") if k.strip()],
        "batch": config.index_sync_batch,
        "poll_seconds": config.vector_sync_poll_seconds,
        "max_backoff_seconds": config.vector_sync_max_backoff_seconds,
        "embedder_url": config.embedder_url,
        "embedder_model": config.embedder_model,
        "embedder_model_id": config.embedder_model_id,
        "sqlite_synchronous": config.sqlite_synchronous,
    }


def secrets(config) -> dict[str, str]:
    """Environment the engine process gets besides its parent's."""
    return {API_KEY_ENV: config.embedder_api_key} if config.embedder_api_key else {}


# -- the engine process's side ------------------------------------------------------------
async def run(engine) -> None:
    """Engine hook: apply the data dir's logs to the engine's index until cancelled."""
    from memoryd.storage.sqlite.store import SqliteStore
    from memoryd.vectors.embedder import OpenAIEmbedder
    from memoryd.vectors.recall import VectorRecall

    options = engine.host.get("sync") or {}
    store = SqliteStore(engine.database, synchronous=options.get("sqlite_synchronous", "NORMAL"))
    embedder = None
    if options.get("embedder_url"):
        embedder = OpenAIEmbedder(
            options["embedder_url"], options.get("embedder_model", ""),
            api_key=os.environ.get(API_KEY_ENV, ""), model_id=options.get("embedder_model_id", ""),
        )  # fmt: skip
    recall = VectorRecall(
        engine.index, store, embedder=embedder,
        control_kinds=options.get("control_kinds") or DEFAULT_CONTROL_KINDS,
        index_message_keywords=options.get("keywords", True),
        sync_batch=options.get("batch", 500),
        sync_poll_seconds=options.get("poll_seconds", 1.0),
        sync_max_backoff_seconds=options.get("max_backoff_seconds", 30.0),
    )  # fmt: skip
    sync = recall.sync
    sync.linger_seconds = LINGER_SECONDS
    engine.calls["sync_wake"] = lambda urgent=False: _wake(sync, urgent)
    engine.calls["sync_state"] = lambda wake=False, urgent=False: _state(sync, wake, urgent)
    while True:  # the SQLite file may not be openable yet (a full disk): retried
        try:
            await store.open()
            break
        except MemorydError as error:
            log.warning("index sync in the engine: the message store did not open (%s); retrying", error.reason)
            await asyncio.sleep(sync.poll_seconds)
    log.info("index sync runs in the vector engine process")
    try:
        await sync.run()
    finally:
        try:
            await sync.flush_cursors()
        except MemorydError as error:
            log.info("index sync cursor not saved on stop (%s): the log is replayed from the last one", error.reason)
        finally:
            if embedder is not None:
                await embedder.close()
            await store.close()


async def _wake(sync: IndexSync, urgent: bool) -> None:
    # A commit: as the store's own commits would wake it (not while it backs off after a
    # failure); urgent: a search waits for a position.
    if urgent:
        sync.wake()
    else:
        sync.store.notifier.notify()


async def _state(sync: IndexSync, wake: bool, urgent: bool) -> dict[str, Any]:
    if wake:
        await _wake(sync, urgent)
    return {
        "tenants": {t: (s.through, s.latest, s.rebuilding) for t, s in sync.states.items()},
        "error": sync.last_error,
        "retries": sync.retries,
    }


# -- the serving process's side -------------------------------------------------------------
class EngineFollower(IndexSync):
    """In the serving process: positions from the engine's synchronizer, which does the work."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._waiters = 0

    async def _run(self) -> None:
        follow_at = 0.0
        while True:
            shutdown.raise_if_cancelled()
            changed = self.store.notifier.current()
            urgent = self._wake.is_set() or self._waiters > 0
            self._wake.clear()
            try:
                if urgent or time.monotonic() >= follow_at:
                    follow_at = time.monotonic() + self.poll_seconds  # a failure too: not retried at once
                    await self.follow(urgent=urgent)
                else:  # a local commit: wake the engine, nothing to read here
                    await self.index.sync_wake()
            except MemorydError as error:
                self.last_error = error.reason
            delay = self.linger_seconds if self._waiters else max(0.0, follow_at - time.monotonic())
            await wait_any((changed, self._wake), delay)
            if self.linger_seconds and not self._wake.is_set():
                # A stream of saves: the engine gathers them for LINGER_SECONDS anyway, so one
                # wake per engine linger (a search's wait for a position cuts it short).
                if self._waiters:
                    await asyncio.sleep(self.linger_seconds)
                else:
                    await wait_any((self._wake,), LINGER_SECONDS)

    async def follow(self, *, urgent: bool = False) -> None:
        """The engine's positions (a tenant it has not loaded yet: its persisted cursor)."""
        remote = await self.index.sync_state(True, urgent)
        self.last_error = remote["error"]
        self.retries = remote["retries"]
        known = remote["tenants"]
        for tenant in await self.tenant_logs():
            if tenant in known:
                seq, _, rebuilding = known[tenant]
            else:
                entry = await self.store.get_metadata(self.system_tenant, CURSOR_NAMESPACE, tenant)
                seq, rebuilding = (int(entry.data.get("seq", 0)) if entry is not None else 0), False
            state = self.states.setdefault(tenant, TenantState(seq, seq, time.monotonic()))
            state.rebuilding = rebuilding
            state.latest = (await self.store.event_bounds(tenant))[1]
            state.through = state.saved = max(state.through, seq)
        # Waiters check their position again after every look (they are few: searches with one).
        self._advanced.set()
        self._advanced = asyncio.Event()
        VECTOR_SYNC_LAG.set(self.lag())

    async def wait_for(self, tenant: str, seq: int) -> None:
        self._waiters += 1
        try:
            await super().wait_for(tenant, seq)
        finally:
            self._waiters -= 1

    async def flush_cursors(self, *, due_only: bool = False) -> None:
        """The engine's synchronizer writes the cursors."""

    async def sync_once(self) -> int:
        await self.follow(urgent=True)
        return 0
