"""One-time migration of a data dir written by earlier releases: the vectors they kept in
qdrant-client's local mode under `<data-dir>/qdrant` (collections `<prefix>_d<dim>`) move
into Qdrant Edge on first start. Every point (id, vector, payload) is copied, then read
back from Edge and compared; only then is the old folder removed. A failed or interrupted
migration leaves it in place and runs again on the next start (upserts are idempotent).
"""

from __future__ import annotations

import logging
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol, TypeVar, cast

import numpy as np

from memoryd.storage.qdrant import points as p

log = logging.getLogger(__name__)

T = TypeVar("T")


class Target(Protocol):
    """What the migration uses of the EdgeIndex it fills (edge.py; not imported: edge.py
    imports this module)."""

    prefix: str

    async def _run(self, fn: Callable[..., T], *args: Any, budget: float | None | bool = True) -> T: ...

    async def _ensure(self, space: int) -> None: ...

    async def _upsert(self, space: int, points: list[Any]) -> None: ...

    async def retrieve(self, space: int, ids: list[str]) -> list[Any]: ...


BATCH = 1000
VECTOR_TOLERANCE = 1e-5  # float32; compared after normalizing (cosine only sees directions)


class _LocalMode:
    """The old folder through qdrant-client's local mode (pure Python, blocking: run in a thread)."""

    def __init__(self, path: Path) -> None:
        from qdrant_client import QdrantClient

        self.client = QdrantClient(path=str(path))

    def collections(self) -> list[str]:
        return [c.name for c in self.client.get_collections().collections]

    def page(self, collection: str, offset: Any) -> tuple[list[tuple[str, list[float], dict[str, Any]]], Any]:
        records, offset = self.client.scroll(
            collection, limit=BATCH, offset=offset, with_payload=True, with_vectors=True
        )
        # (with the tenant-and-model key model filters match, which that release did not write)
        rows = [
            (str(r.id), list(cast(list[float], r.vector)), p.with_tenant_model(dict(r.payload or {}))) for r in records
        ]
        return rows, offset

    def close(self) -> None:
        self.client.close()


def unit(vector: Any) -> np.ndarray:
    """Local mode keeps vectors as given, Edge normalizes them (cosine)."""
    array = np.asarray(vector, dtype=np.float32)
    return array / max(float(np.linalg.norm(array)), 1e-12)


def _same(expected: tuple[str, list[float], dict[str, Any]], found: Any) -> bool:
    if found is None or (found.payload or {}) != expected[2]:
        return False
    return bool(np.allclose(unit(found.vector), unit(expected[1]), atol=VECTOR_TOLERANCE))


async def migrate_local_mode(old: Path, index: Target) -> bool:
    """Copy, verify, remove. True when the old folder was migrated and removed."""
    try:
        source = await index._run(_LocalMode, old, budget=None)
    except Exception as error:  # noqa: BLE001 - unreadable old folder: keep it, say so
        log.error("vector migration from %s failed to open it (%s); the folder is kept", old, error)
        return False
    try:
        counts: dict[str, int] = {}
        for collection in await index._run(source.collections, budget=None):
            dimension = p.dimension_of(index.prefix, collection)
            if dimension is None:
                log.warning("vector migration: skipping collection %s (not %s_d<dimension>)", collection, index.prefix)
                continue
            await index._ensure(dimension)
            copied = await _copy(source, collection, dimension, index)
            mismatched = await _verify(source, collection, dimension, index)
            if mismatched:
                log.error(
                    "vector migration of %s: %d of %d points differ after the copy; %s is kept and the "
                    "migration runs again on the next start",
                    collection,
                    mismatched,
                    copied,
                    old,
                )
                return False
            counts[collection] = copied
            log.info("vector migration: %s: %d points copied and verified", collection, copied)
    finally:
        await index._run(source.close, budget=None)
    await index._run(shutil.rmtree, old, budget=None)
    log.info(
        "vector migration from qdrant-client local mode done: %d points in %d collections (%s); removed %s",
        sum(counts.values()),
        len(counts),
        ", ".join(f"{k}={v}" for k, v in counts.items()) or "none",
        old,
    )
    return True


async def _copy(source: _LocalMode, collection: str, dimension: int, index: Target) -> int:
    copied, offset = 0, None
    while True:
        rows, offset = await index._run(source.page, collection, offset, budget=None)
        if rows:
            await index._upsert(dimension, rows)
            copied += len(rows)
        if offset is None:
            return copied


async def _verify(source: _LocalMode, collection: str, dimension: int, index: Target) -> int:
    mismatched, offset = 0, None
    while True:
        rows, offset = await index._run(source.page, collection, offset, budget=None)
        found = {str(r.id): r for r in await index.retrieve(dimension, [row[0] for row in rows])}
        mismatched += sum(not _same(row, found.get(row[0])) for row in rows)
        if offset is None:
            return mismatched
