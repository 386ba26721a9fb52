"""A consumer's lease: with several processes on one message store (MongoDB replicas,
`--workers N`), exactly one process applies a consumer's logs at a time.

The lease is a metadata record of the system tenant (namespace `<consumer name>-lease`, key
`all`: one shard of every tenant), `{"holder": id, "expires": ms}`, taken and renewed by a
compare-and-set on `expires` (Store.write_metadata_guarded), so two processes that read the
same record can never both take it. The holder renews it when a third of its time is left;
when the holder dies, another takes it over once it has expired (TTL_SECONDS, plus at most one
poll interval of the others).
"""

from __future__ import annotations

import os
import socket
import uuid

from memoryd.domain.models import SYSTEM_TENANT, now_ms
from memoryd.domain.store import MetadataGuard, MetadataWrite, Store

KEY = "all"
TTL_SECONDS = 10.0


def namespace_of(consumer: str) -> str:
    """The lease record's namespace for a consumer's cursor namespace."""
    return f"{consumer}-lease"


class Lease:
    def __init__(
        self, store: Store, namespace: str, *, ttl_seconds: float = TTL_SECONDS, holder: str | None = None
    ) -> None:
        self.store = store
        self.namespace = namespace
        self.ttl_ms = int(ttl_seconds * 1000)
        self.holder = holder or f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"
        self._until = 0  # ms: held until then, as far as this process knows

    @property
    def held(self) -> bool:
        return self._until > now_ms()

    async def hold(self) -> bool:
        """Take or renew the lease when due; whether this process holds it."""
        now = now_ms()
        if self._until - now > self.ttl_ms * 2 // 3:
            return True
        entry = await self.store.get_metadata(SYSTEM_TENANT, self.namespace, KEY)
        data = entry.data if entry is not None else None
        if data is not None and data.get("holder") != self.holder and int(data.get("expires", 0)) > now:
            self._until = 0
            return False
        expires = now + self.ttl_ms
        taken = {"holder": self.holder, "expires": expires}
        guard = MetadataGuard(self.namespace, KEY, "expires", data.get("expires") if data is not None else None)
        written = await self.store.write_metadata_guarded(
            SYSTEM_TENANT, [MetadataWrite(self.namespace, KEY, taken)], guard, [], now
        )
        self._until = expires if written else 0
        return written

    async def release(self) -> None:
        """Let another process take over at once (a graceful stop)."""
        if not self.held:
            return
        self._until = 0
        entry = await self.store.get_metadata(SYSTEM_TENANT, self.namespace, KEY)
        if entry is not None and entry.data.get("holder") == self.holder:
            guard = MetadataGuard(self.namespace, KEY, "expires", entry.data.get("expires"))
            await self.store.write_metadata_guarded(
                SYSTEM_TENANT, [MetadataWrite(self.namespace, KEY, None)], guard, [], now_ms()
            )
