"""The durable outbox of vector deletes that could not run (Qdrant unreachable).

Entries live in the message store (SQLite or MongoDB) as metadata records of a reserved
system tenant, so they survive restarts and every replica sees them:
namespace `memory-vector-outbox`, key `<created ms>-<random>` (oldest first), data
`{"selector": VectorSelector.to_dict(), "created_at": ms}`. The system tenant is not a
name the authenticator can hand out, so no caller can read or change it.

`OutboxDrainer` retries them with exponential backoff until Qdrant takes them; each
entry is removed only after its delete succeeded (deletes are idempotent, so a crash
between the two just repeats one).
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from dataclasses import dataclass

from memoryd import shutdown
from memoryd.domain.errors import MemorydError
from memoryd.domain.models import now_ms
from memoryd.domain.store import Store
from memoryd.domain.vectors import VectorIndex, VectorSelector
from memoryd.vectors.reconcile import DeletionReconciler

log = logging.getLogger(__name__)

# Contains a space: tenant names from the token config never do (transport/auth.py).
SYSTEM_TENANT = "memoryd system"
NAMESPACE = "memory-vector-outbox"
PAGE = 100


@dataclass(frozen=True, slots=True)
class OutboxEntry:
    key: str
    selector: VectorSelector
    created_at: int


class Outbox:
    def __init__(self, store: Store) -> None:
        self.store = store

    async def add(self, selector: VectorSelector) -> str:
        created = now_ms()
        key = f"{created:013d}-{uuid.uuid4().hex[:12]}"
        await self.store.save_metadata(
            SYSTEM_TENANT, NAMESPACE, key, {"selector": selector.to_dict(), "created_at": created}, created
        )
        log.warning("vector store unavailable: vector delete deferred to the outbox")
        return key

    async def pending(self, limit: int = PAGE, after_key: str | None = None) -> list[OutboxEntry]:
        records = await self.store.list_metadata(SYSTEM_TENANT, NAMESPACE, after_key, limit)
        return [
            OutboxEntry(r.key, VectorSelector.from_dict(r.data["selector"]), int(r.data.get("created_at", 0)))
            for r in records
        ]

    async def done(self, key: str) -> None:
        await self.store.delete_metadata(SYSTEM_TENANT, NAMESPACE, key, now_ms())

    async def count(self, cap: int = 10_000) -> int:
        total, after = 0, None
        while total < cap:
            page = await self.store.list_metadata(SYSTEM_TENANT, NAMESPACE, after, PAGE)
            total += len(page)
            if len(page) < PAGE:
                break
            after = page[-1].key
        return total


class OutboxDrainer:
    """Background task: apply outbox deletes, backing off while Qdrant stays down."""

    def __init__(
        self,
        outbox: Outbox,
        index: VectorIndex,
        *,
        poll_seconds: float = 5.0,
        min_backoff_seconds: float = 1.0,
        max_backoff_seconds: float = 60.0,
        reconciler: DeletionReconciler | None = None,
    ) -> None:
        self.outbox = outbox
        self.index = index
        self.reconciler = reconciler
        self.poll_seconds = poll_seconds
        self.min_backoff = min_backoff_seconds
        self.max_backoff = max_backoff_seconds
        self._wake = asyncio.Event()

    def wake(self) -> None:
        self._wake.set()

    async def drain_once(self) -> int:
        """Apply every pending entry in order, then the logged message deletions not yet
        applied; stops at the first failure. Returns the deletes done."""
        done = 0
        while True:
            entries = await self.outbox.pending()
            if not entries:
                if self.reconciler is not None:
                    done += await self.reconciler.sync_once()
                return done
            for entry in entries:
                removed = await self.index.delete(entry.selector)
                await self.outbox.done(entry.key)
                done += 1
                log.info("outbox vector delete applied: removed=%d", removed)

    async def run(self) -> None:
        backoff = self.min_backoff
        while True:
            shutdown.raise_if_cancelled()
            try:
                await self.drain_once()
                delay, backoff = self.poll_seconds, self.min_backoff
            except MemorydError as error:
                delay, backoff = backoff, min(backoff * 2, self.max_backoff)
                log.info("outbox drain failed (%s); retrying in %.1fs", error.reason, delay)
            self._wake.clear()
            try:
                async with asyncio.timeout(delay):
                    await self._wake.wait()
            except TimeoutError:
                pass
