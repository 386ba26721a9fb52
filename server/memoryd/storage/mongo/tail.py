"""Cross-process wake-ups on MongoDB: commits made by other memoryd processes wake this one's watchers.

Every mutation bumps its tenant's counter document in `event_log` inside its transaction, so
one change-stream notification arrives per committed mutation, whichever process made it.
Each one only calls `store.notifier.notify()`: wake-ups carry no data, the watch hub re-reads
the log (the source of truth), and a lost wake-up only delays delivery.

Where change streams are unavailable (servers without them, or `mode="poll"`), the watchers
are woken every `poll_interval` seconds instead. A wake-up costs one indexed read per tenant
that has watchers in this process, and nothing when nobody watches.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from pymongo.errors import OperationFailure, PyMongoError

from memoryd import shutdown
from memoryd.domain.errors import MemorydError
from memoryd.storage.mongo.indexes import EVENT_LOG
from memoryd.storage.mongo.store import MongoStore

log = logging.getLogger(__name__)

MODES = ("auto", "poll")

# Server answers that mean "this deployment has no change streams" (not "try again later").
NO_CHANGE_STREAMS = frozenset(
    {
        40573,  # The $changeStream stage is only supported on replica sets
        40324,  # Unrecognized pipeline stage name: '$changeStream'
        115,  # CommandNotSupported
        20,  # IllegalOperation
    }
)

# Counter documents are inserted (a tenant's first event) or updated (every later mutation).
PIPELINE: list[dict[str, Any]] = [
    {"$match": {"operationType": {"$in": ["insert", "update", "replace"]}}},
    {"$project": {"_id": 1}},
]


async def follow_commits(
    store: MongoStore, *, mode: str = "auto", poll_interval: float = 1.0, retry_interval: float = 1.0
) -> None:
    """Wake the store's watchers on every commit to its database, until cancelled."""
    if mode not in MODES:
        raise ValueError(f"change stream mode must be one of {MODES}, not {mode!r}")
    while mode == "auto":
        shutdown.raise_if_cancelled()
        try:
            await _follow_change_stream(store)
        except OperationFailure as exc:
            if exc.code not in NO_CHANGE_STREAMS:
                await _retry_later(store, exc, retry_interval)
                continue
            log.warning("MongoDB change streams unavailable (code %s); polling every %.1fs", exc.code, poll_interval)
            mode = "poll"
        except (PyMongoError, MemorydError) as exc:
            await _retry_later(store, exc, retry_interval)
    while True:
        shutdown.raise_if_cancelled()
        await asyncio.sleep(poll_interval)
        store.notifier.notify()


async def _follow_change_stream(store: MongoStore) -> None:
    stream = await store.db[EVENT_LOG].watch(PIPELINE)
    async with stream:
        # Commits that landed while no stream was open are found by this re-read.
        store.notifier.notify()
        async for _change in stream:
            shutdown.raise_if_cancelled()
            store.notifier.notify()


async def _retry_later(store: MongoStore, exc: Exception, retry_interval: float) -> None:
    log.warning("event change stream interrupted (%s); reopening in %.1fs", type(exc).__name__, retry_interval)
    # Poll once per interval while the stream is down, so delivery is only delayed.
    await asyncio.sleep(retry_interval)
    store.notifier.notify()
