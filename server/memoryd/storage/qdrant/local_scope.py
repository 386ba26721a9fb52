"""Local mode only: which points a scope admits, kept in process.

Qdrant's local mode has no payload indexes: a filtered search evaluates the filter in
Python for every point of the collection (about 50 µs each, so half a second at 10k
points). One process owns a local folder (an exclusive lock), so an in-process map of
the points' tenant, session, platform, sender and mentions is complete, and a scoped
search can score just the admitted points. Built once per collection from a scroll,
kept up to date on upsert; deleted points are simply not found any more when their
vectors are read (stale ids are harmless and dropped on the next rebuild).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from typing import Any

from memoryd.domain.vectors import Scope

FIELDS = ("tenant", "session_id", "platform", "sender_id")
PAYLOAD_KEYS = [*FIELDS, "mentioned_ids"]


class LocalScopeIndex:
    def __init__(self) -> None:
        self._ids: dict[tuple[str, str], set[str]] = defaultdict(set)
        self._keys: dict[str, list[tuple[str, str]]] = {}

    def add(self, point_id: str, payload: dict[str, Any]) -> None:
        self.remove(point_id)
        keys = [(f, str(payload[f])) for f in FIELDS if payload.get(f)]
        keys += [("mentioned_ids", str(m)) for m in payload.get("mentioned_ids") or ()]
        for key in keys:
            self._ids[key].add(point_id)
        self._keys[point_id] = keys

    def add_all(self, points: Iterable[tuple[str, dict[str, Any]]]) -> None:
        for point_id, payload in points:
            self.add(point_id, payload)

    def remove(self, point_id: str) -> None:
        for key in self._keys.pop(point_id, ()):
            ids = self._ids.get(key)
            if ids is not None:
                ids.discard(point_id)
                if not ids:
                    del self._ids[key]

    def __len__(self) -> int:
        return len(self._keys)

    def only_tenant(self, tenant: str) -> bool:
        """True when no other tenant has points here (then no tenant filter is needed)."""
        return all(value == tenant for field, value in self._ids if field == "tenant")

    def admitted(self, tenant: str, scope: Scope) -> set[str]:
        """Ids of the tenant's points the scope admits (any of its set conditions)."""
        tenant_ids = self._ids.get(("tenant", tenant), set())
        if scope.unrestricted:
            return set(tenant_ids)
        keys = []
        if scope.session_id:
            keys.append(("session_id", scope.session_id))
        if scope.platform:
            keys.append(("platform", scope.platform))
        for speaker in scope.speaker_ids:
            keys += [("sender_id", speaker), ("mentioned_ids", speaker)]
        admitted: set[str] = set()
        for key in keys:
            admitted |= self._ids.get(key, set())
        return admitted & tenant_ids
