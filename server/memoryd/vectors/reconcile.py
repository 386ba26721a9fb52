"""Vector deletes driven by the durable event log, so a crash can never leave orphans.

The message store writes every messages-deleted event in the same transaction as the
deletion. The immediate vector delete (VectorRecall.messages_deleted) runs after that
commit; if the process dies in between, nothing else would remember the work. This
reconciler reads each tenant's log after a persisted cursor and applies the same delete
for every message deletion (idempotent, so the usual double application is harmless),
advancing the cursor only after Qdrant accepted it. While Qdrant is down it stops and the
drainer's backoff retries it, so the log itself is the durable outbox.
"""

from __future__ import annotations

import logging

from memoryd.domain.models import EventType, now_ms
from memoryd.domain.store import Store
from memoryd.domain.vectors import VectorIndex, VectorSelector

log = logging.getLogger(__name__)

CURSOR_NAMESPACE = "memoryd.vector-sync"
BATCH = 500
# The deletions whose vectors VectorRecall removes right away; session and tenant clears
# remove vectors only when the caller names the vectors target.
DELETION_CAUSES = frozenset({int(EventType.MESSAGES_DELETED), int(EventType.HISTORY_REPLACED)})


class DeletionReconciler:
    def __init__(self, store: Store, index: VectorIndex, system_tenant: str) -> None:
        self.store = store
        self.index = index
        self.system_tenant = system_tenant
        # Cursors read or written by this process: each poll then costs one event_bounds
        # read per tenant, not two reads. A cursor another replica advanced meanwhile only
        # makes this one re-apply idempotent deletes.
        self._cursors: dict[str, int] = {}

    async def _cursor(self, tenant: str) -> int:
        if tenant not in self._cursors:
            entry = await self.store.get_metadata(self.system_tenant, CURSOR_NAMESPACE, tenant)
            self._cursors[tenant] = int(entry.data.get("seq", 0)) if entry is not None else 0
        return self._cursors[tenant]

    async def _advance(self, tenant: str, seq: int) -> None:
        await self.store.save_metadata(self.system_tenant, CURSOR_NAMESPACE, tenant, {"seq": seq}, now_ms())
        self._cursors[tenant] = seq

    async def sync_once(self) -> int:
        """Apply every logged message deletion not yet applied; returns deletes applied.

        Raises the store's or Qdrant's error on the first failure (the caller backs off).
        """
        applied = 0
        for tenant in await self.store.event_tenants():
            if tenant != self.system_tenant:
                applied += await self._sync_tenant(tenant)
        return applied

    async def _sync_tenant(self, tenant: str) -> int:
        cursor = await self._cursor(tenant)
        floor, latest = await self.store.event_bounds(tenant)
        if latest <= cursor:
            return 0
        if cursor < floor:
            log.warning("vector sync: events up to seq %d were compacted before they were applied", floor)
            cursor = floor
        applied = 0
        while cursor < latest:
            # Only deletions, read up to the bound seen above: the store skips the rest of
            # the log (every append has an event) without handing it over.
            events = await self.store.read_events(
                tenant, cursor, BATCH, types=(EventType.MESSAGES_DELETED,), through_seq=latest
            )
            for event in events:
                if event.payload.get("cause") in DELETION_CAUSES:
                    await self.index.delete(
                        VectorSelector(
                            tenant,
                            session_id=event.session_id,
                            timestamps=tuple(event.payload.get("timestamps", ())),
                            message_ids=tuple(event.payload.get("ids", ())),
                            indexed_before=event.time + 1,
                        )
                    )
                    applied += 1
            cursor = events[-1].seq if len(events) == BATCH else latest
            await self._advance(tenant, cursor)
        return applied
