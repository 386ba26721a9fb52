"""The recall index against the message store, for tests and benchmarks (what used to be in
server/memoryd/vectors/sync.py): `difference` (message points vs stored messages, by message
id), `slice_difference` (slice points vs stored slices), and `drained` (wait until a
VectorRecall's index applied every tenant's log as it is now)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from memoryd.domain.models import SYSTEM_TENANT, Message
from memoryd.domain.store import Store
from memoryd.vectors.slices import slice_identity, slice_tenant, stored_slices
from memoryd.vectors.sync import SESSION_PAGE, RecallIndexer, indexed_messages, stored_pages


async def drained(vectors) -> None:
    """Wait until every tenant's log, as it is now, is applied to `vectors`' index (a
    VectorRecall: its runtime here, or the engine's)."""
    if vectors.runtime is not None:
        tenants = await vectors.runtime.tenant_logs()  # (a test may follow only its own)
    else:
        tenants = [t for t in await vectors.store.event_tenants() if t != SYSTEM_TENANT]
    for tenant in tenants:
        await vectors.positions.wait_for(tenant, (await vectors.store.event_bounds(tenant))[1])


async def stored_messages(store: Store, tenant: str, indexable: Callable[[Message], bool]) -> set[tuple[str, str]]:
    """(session, message id) of the tenant's stored messages that `indexable` admits."""
    async with store.snapshot() as view:
        return {(s, m.id) async for s, messages in stored_pages(view, tenant, 1000) for m in messages if indexable(m)}


@dataclass(frozen=True, slots=True)
class Difference:
    missing: set[tuple[str, str]]  # stored and indexable, no point of the space compared
    orphans: set[tuple[str, str]]  # a point, no stored message

    @property
    def exact(self) -> bool:
        return not (self.missing or self.orphans)


async def slice_difference(indexer: RecallIndexer, tenant: str) -> Difference:
    """Slice points vs stored slices, by (session, "from_seq/summary id"): every stored slice
    has a keyword point, and every slice point (keyword or dense) a stored slice."""
    stored: set[tuple[str, str]] = set()
    async for page in stored_slices(indexer.store, tenant, SESSION_PAGE):
        stored.update((s.session_id, f"{s.from_seq}/{s.id}") for s in page)
    key = slice_tenant(tenant)
    keyword = {slice_identity(s, r) for s, r in await indexed_messages(indexer.index, key, dimensions=())}
    every = {slice_identity(s, r) for s, r in await indexed_messages(indexer.index, key)}
    return Difference(stored - keyword, every - stored)  # type: ignore[operator]


async def difference(indexer: RecallIndexer, tenant: str, *, dimension: int = 0) -> Difference:
    """Index vs store by message id for a whole tenant: every indexable message has a point of
    `dimension` (0: its keyword point; an embedding model's: its dense point, with the
    indexer's embedder), and every point (keyword or dense) a stored message."""
    stored = await stored_messages(indexer.store, tenant, indexer.indexable)
    covered = await indexed_messages(
        indexer.index, tenant, dimensions=[dimension] if dimension else (), keyword=not dimension
    )
    every = await indexed_messages(indexer.index, tenant)
    all_stored = await stored_messages(indexer.store, tenant, lambda m: True)
    return Difference(stored - covered, every - all_stored)
