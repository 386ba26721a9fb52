"""Events callers publish themselves (EventService.PublishEvent), next to those memoryd writes.

Callers may publish only the compress events (CompressRequested, CompressProgress: a
caller compressing a session's memory tells the others); every other type is written by
memoryd in the transaction of the change it reports (memoryd.domain.events).
"""

from __future__ import annotations

from typing import Any

from memoryd.domain.errors import FieldViolation, InvalidArgument
from memoryd.domain.models import Event, EventDraft, EventType, now_ms
from memoryd.domain.store import Store

PUBLISHABLE = frozenset({EventType.COMPRESS_REQUESTED, EventType.COMPRESS_PROGRESS})


async def publish(store: Store, tenant: str, event_type: EventType, session_id: str, payload: dict[str, Any]) -> Event:
    """Append a caller's event to the tenant's log on its own; returns it with its seq."""
    if event_type not in PUBLISHABLE:
        names = " or ".join(t.payload_field for t in sorted(PUBLISHABLE))
        raise InvalidArgument(FieldViolation("payload", f"callers publish only {names}"))
    return await store.publish(tenant, EventDraft(event_type, session_id, payload), now_ms())
