"""The profile strategy: one bounded document per user, rewritten from the user's current
facts. A log consumer of the fact events (memory formed / superseded / removed of kind
"fact", written by the facts strategy and by UpdateFact / DeleteFact): each user they name is
brought up to date once per batch. The profile records the facts it was written from (ids and
versions: its fingerprint), so a replay with nothing new calls no model; a user left without
current facts has no profile (removed). The text is cut to `profile_max_chars`."""

from __future__ import annotations

import hashlib
from collections.abc import Collection, Sequence
from typing import Any

from memoryd.consumers.runtime import Consumer
from memoryd.domain.models import Event, EventType, now_ms
from memoryd.domain.store import Store
from memoryd.formation import common, llm
from memoryd.formation.meter import Meter
from memoryd.formation.records import Fact, FactRecords, Profile, memory_event
from memoryd.formation.settings import SettingsStore

STRATEGY = "profile"
NAME = "memoryd.formation.profile"
VERSION = "profile-1"
# Facts given to the model at most (the newest).
MAX_FACTS = 200

SCHEMA: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "required": ["profile"],
    "properties": {"profile": {"type": "string", "minLength": 1, "maxLength": 40000}},
}

SYSTEM = (
    "You maintain a short profile of a user for an assistant: who they are, what they prefer, "
    "their plans and circumstances, written as compact notes from the facts given, newest facts "
    "winning over older ones. Do not invent anything. Stay under {limit} characters. " + llm.DATA_RULE
)


def fingerprint(facts: Sequence[Fact]) -> str:
    joined = ",".join(f"{f.id}:{f.version}" for f in facts)
    return hashlib.blake2b(joined.encode(), digest_size=12).hexdigest()


class ProfileConsumer(Consumer):
    name = NAME
    event_types: Collection[EventType] = (
        EventType.MEMORY_FORMED,
        EventType.MEMORY_SUPERSEDED,
        EventType.MEMORY_REMOVED,
    )
    batch = 500

    def __init__(self, store: Store, meter: Meter, settings: SettingsStore, locks: common.Locks) -> None:
        self.store = store
        self.meter = meter
        self.settings = settings
        self.records = FactRecords(store)
        self.locks = locks

    def fingerprint(self) -> str:
        return VERSION

    async def apply(self, tenant: str, events: Sequence[Event]) -> None:
        users = {e.payload.get("user_id", "") for e in events if e.payload.get("kind") == "fact"}
        for user in sorted(u for u in users if u):
            await self.refresh(tenant, user)
        self.meter.succeeded(tenant, STRATEGY)

    async def rebuild(self, tenant: str) -> int | None:
        latest = (await self.store.event_bounds(tenant))[1]
        users: set[str] = set()
        after: str | None = None
        while True:
            names = await self.store.list_namespaces(tenant, "memoryd.facts/", after, 500)
            users.update(n.removeprefix("memoryd.facts/") for n in names)
            if len(names) < 500:
                break
            after = names[-1]
        key: str | None = None
        while True:
            rows = await self.store.list_metadata(tenant, "memoryd.profiles", key, 500)
            users.update(row.key for row in rows)
            if len(rows) < 500:
                break
            key = rows[-1].key
        for user in sorted(users):
            await self.refresh(tenant, user)
        return latest

    async def refresh(self, tenant: str, user: str) -> None:
        """Bring the user's profile in line with the user's current facts."""
        settings = await self.settings.effective(tenant)
        facts = (await self.records.facts(tenant, user))[:MAX_FACTS]
        before = await self.records.profile(tenant, user)
        if not facts or not settings.profile_enabled:
            if before is not None:
                async with self.locks(tenant):
                    event = memory_event(EventType.MEMORY_REMOVED, "profile", user, user, reason="sources_gone")
                    await self.records.save_profile(tenant, before, None, [event], now_ms())
            return
        mark = fingerprint(facts)
        if before is not None and before.fingerprint == mark:
            return
        limit = settings.profile_max_chars
        known = "\n".join(
            f"- ({f.category}{', ' + common.day(f.event_time) if f.event_time else ''}) {f.text}" for f in facts
        )
        user_prompt = "Facts about the user, newest first:\n" + llm.fence(known)
        if before is not None:
            user_prompt = "Current profile:\n" + llm.fence(before.text) + "\n\n" + user_prompt
        request = llm.ChatRequest(SYSTEM.replace("{limit}", str(limit)), user_prompt, "memoryd_profile", SCHEMA, 2048)
        answer = await self.meter.complete(tenant, STRATEGY, request)
        text = llm.clip(answer.data["profile"].strip(), limit)
        async with self.locks(tenant):
            now = now_ms()
            after = Profile(user, text, tuple(f.id for f in facts), now, mark)
            event = memory_event(EventType.MEMORY_FORMED, "profile", user, user)
            await self.records.save_profile(tenant, before, after, [event], now)
