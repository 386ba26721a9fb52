"""Local mode only: the points' filterable facts, kept in process.

Qdrant's local mode has no payload indexes: a filtered search, count or delete evaluates
the filter in Python for every point of the collection (about 50 µs each, so half a
second at 10k points, with the event loop blocked). One process owns a local folder (an
exclusive lock), so an in-process map of every point's tenant, session, platform,
sender, mentions, message id, timestamp, model and indexing time is complete: scoped
searches score just the admitted points and deletes remove exactly the matching ids.
Built once per collection from a scroll, updated on every upsert and delete.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from memoryd.domain.vectors import Scope, VectorSelector

FIELDS = ("tenant", "session_id", "platform", "sender_id")
PAYLOAD_KEYS = [*FIELDS, "mentioned_ids", "message_id", "timestamp", "model_id", "indexed_at"]


@dataclass(frozen=True, slots=True)
class _Facts:
    keys: tuple[tuple[str, str], ...]
    message_id: str
    timestamp: int
    model_id: str
    indexed_at: int


class LocalScopeIndex:
    def __init__(self) -> None:
        self._ids: dict[tuple[str, str], set[str]] = defaultdict(set)
        self._facts: dict[str, _Facts] = {}

    def __len__(self) -> int:
        return len(self._facts)

    def add(self, point_id: str, payload: dict[str, Any]) -> None:
        self.discard([point_id])
        keys = [(f, str(payload[f])) for f in FIELDS if payload.get(f)]
        keys += [("mentioned_ids", str(m)) for m in payload.get("mentioned_ids") or ()]
        for key in keys:
            self._ids[key].add(point_id)
        self._facts[point_id] = _Facts(
            tuple(keys),
            str(payload.get("message_id") or ""),
            int(payload.get("timestamp") or 0),
            str(payload.get("model_id") or ""),
            int(payload.get("indexed_at") or 0),
        )

    def add_all(self, points: Iterable[tuple[str, dict[str, Any]]]) -> None:
        for point_id, payload in points:
            self.add(point_id, payload)

    def discard(self, point_ids: Iterable[str]) -> None:
        for point_id in point_ids:
            facts = self._facts.pop(point_id, None)
            for key in facts.keys if facts else ():
                ids = self._ids.get(key)
                if ids is not None:
                    ids.discard(point_id)
                    if not ids:
                        del self._ids[key]

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

    def matching(self, selector: VectorSelector) -> list[str]:
        """Ids of the points a delete selects: the same conditions as its Qdrant filter."""
        ids = self._ids.get(("tenant", selector.tenant), set())
        if selector.session_id is not None:
            ids = ids & self._ids.get(("session_id", selector.session_id), set())
        message_ids, timestamps = set(selector.message_ids), set(selector.timestamps)
        found = []
        for point_id in ids:
            facts = self._facts[point_id]
            if selector.model_id is not None and facts.model_id != selector.model_id:
                continue
            if selector.indexed_before is not None and not facts.indexed_at < selector.indexed_before:
                continue
            if (message_ids or timestamps) and not (
                (facts.message_id and facts.message_id in message_ids) or facts.timestamp in timestamps
            ):
                continue
            found.append(point_id)
        return found

    def model_counts(self, tenant: str) -> Counter[str]:
        """The tenant's points per model id ("" for legacy points without one)."""
        return Counter(self._facts[i].model_id for i in self._ids.get(("tenant", tenant), ()))
