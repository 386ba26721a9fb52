"""Formation settings: the server's defaults, overridden per tenant, then per session, field by
field (memoryd.v1.FormationSettings). Stored as metadata records of the tenant:

    namespace "memoryd.formation-settings", key "tenant" or "session/<session id>"

holding only the fields set (unset inherits)."""

from __future__ import annotations

from dataclasses import dataclass, fields, replace
from typing import Any

from memoryd.domain.models import now_ms
from memoryd.domain.store import Store

NAMESPACE = "memoryd.formation-settings"
TENANT_KEY = "tenant"
MAX_SUMMARY_MESSAGES = 50
MIN_PROFILE_CHARS, MAX_PROFILE_CHARS = 100, 8000


def session_key(session_id: str) -> str:
    return "session/" + session_id


@dataclass(frozen=True, slots=True)
class Settings:
    summary_enabled: bool = True
    summary_max_messages: int = MAX_SUMMARY_MESSAGES
    summary_max_chars: int = 20_000
    summary_idle_seconds: int = 1800
    facts_enabled: bool = True
    profile_enabled: bool = True
    profile_max_chars: int = 2000

    def overridden(self, stored: dict[str, Any] | None) -> Settings:
        if not stored:
            return self
        known = {f.name for f in fields(self)}
        return replace(self, **{k: v for k, v in stored.items() if k in known and v is not None})

    def fingerprint(self) -> str:
        return ",".join(f"{f.name}={getattr(self, f.name)}" for f in fields(self))


def problems(stored: dict[str, Any]) -> list[tuple[str, str]]:
    """(field, what is wrong) of stored settings; empty when they are valid."""
    found = []
    n = stored.get("summary_max_messages")
    if n is not None and not 1 <= n <= MAX_SUMMARY_MESSAGES:
        found.append(("summary_max_messages", f"must be between 1 and {MAX_SUMMARY_MESSAGES}"))
    c = stored.get("summary_max_chars")
    if c is not None and not 100 <= c <= 1_000_000:
        found.append(("summary_max_chars", "must be between 100 and 1,000,000"))
    idle = stored.get("summary_idle_seconds")
    if idle is not None and not 0 <= idle <= 30 * 86400:
        found.append(("summary_idle_seconds", "must be between 0 and 2,592,000"))
    p = stored.get("profile_max_chars")
    if p is not None and not MIN_PROFILE_CHARS <= p <= MAX_PROFILE_CHARS:
        found.append(("profile_max_chars", f"must be between {MIN_PROFILE_CHARS} and {MAX_PROFILE_CHARS}"))
    return found


class SettingsStore:
    def __init__(self, store: Store, defaults: Settings) -> None:
        self.store = store
        self.defaults = defaults

    async def stored(self, tenant: str, session_id: str = "") -> dict[str, Any]:
        key = session_key(session_id) if session_id else TENANT_KEY
        entry = await self.store.get_metadata(tenant, NAMESPACE, key)
        return dict(entry.data) if entry else {}

    async def effective(self, tenant: str, session_id: str = "") -> Settings:
        settings = self.defaults.overridden(await self.stored(tenant))
        if session_id:
            settings = settings.overridden(await self.stored(tenant, session_id))
        return settings

    async def save(self, tenant: str, session_id: str, stored: dict[str, Any]) -> Settings:
        key = session_key(session_id) if session_id else TENANT_KEY
        values = {k: v for k, v in stored.items() if v is not None}
        if values:
            await self.store.save_metadata(tenant, NAMESPACE, key, values, now_ms())
        else:
            await self.store.delete_metadata(tenant, NAMESPACE, key, now_ms())
        return await self.effective(tenant, session_id)
