"""Session retention: sessions nobody wrote to for longer than their window are deleted (or
archived) by a background task (app.py), in bounded batches (docs/OPERATIONS.md).

The window of a session is its label `memoryd.retention-days` when it carries one (a
number of days, or "never"), else its tenant's policy (MEMORYD_SESSION_RETENTION_DAYS,
per tenant MEMORYD_SESSION_RETENTION_TENANTS; 0 keeps sessions). "Idle" is measured from the
session's last write (SessionInfo.last_activity): every write keyed by the session counts,
reads do not. Its messages (appends, deletes, trims, rewrites, pops) and attributes move it
themselves; the stores move it for the other writes, in their transaction, by
`active_sessions` (a summary saved, a compress event published, a metadata record keyed by
the session id saved or deleted), and for caller vectors (UpsertVectors: Store.touch_sessions).

A sweep of one tenant walks two indexes, a bounded batch of sessions at a time:
- the idle sessions without the label, oldest first, up to the tenant's cutoff (a walk that
  meets only sessions to expire: each one expired leaves the walk's range);
- the sessions carrying the label, each against its own window.
Each session is expired in its own transaction, guarded (store.SessionGuard): a session
written to since it was read (its last write no longer before its cutoff) is left alone,
so a session written to within its window is never touched. Deleting is ForgetUser's
forgetting of one session (domain/forget.py: messages, attributes, session records,
summaries, with their events; vectors follow); archiving is TrimHistory(keep_recent = 0).
Replicas and workers may sweep at once: the guard makes the second expiry of a session a no-op.
"""

from __future__ import annotations

import enum
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

import structlog

from memoryd.domain import forget
from memoryd.domain.hooks import MessageHooks
from memoryd.domain.models import EventDraft, EventType, SessionInfo, now_ms
from memoryd.domain.store import SessionChanged, SessionGuard, Store

RETENTION_LABEL = "memoryd.retention-days"
NEVER = "never"
DAY_MS = 24 * 3600 * 1000

log = structlog.get_logger("memoryd.retention")


class Action(enum.Enum):
    DELETE = "delete"
    ARCHIVE = "archive"


@dataclass(frozen=True, slots=True)
class Policy:
    """A tenant's retention: sessions idle longer than `days` are expired by `action` (0: kept)."""

    days: float = 0.0
    action: Action = Action.DELETE


@dataclass(frozen=True, slots=True)
class Settings:
    default: Policy = Policy()
    tenants: Mapping[str, Policy] = field(default_factory=dict)

    def policy(self, tenant: str) -> Policy:
        return self.tenants.get(tenant, self.default)


# Events whose change the session's row does not record by itself (module doc).
_ACTIVE_TYPES = frozenset({EventType.SUMMARY_SAVED, EventType.COMPRESS_REQUESTED, EventType.COMPRESS_PROGRESS})


def active_sessions(drafts: Sequence[EventDraft]) -> list[str]:
    """The sessions whose last write the writes of these events move (those that exist):
    the session of a summary saved or a compress event, and the key of a metadata record
    written or deleted (a record keyed by a session id is that session's, as ClearSession's
    metadata target takes it)."""
    sessions: set[str] = set()
    for draft in drafts:
        if draft.type in _ACTIVE_TYPES and draft.session_id:
            sessions.add(draft.session_id)
        elif draft.type is EventType.METADATA_CHANGED and draft.payload.get("key"):
            sessions.add(str(draft.payload["key"]))
    return sorted(sessions)


def label_problem(value: str) -> str | None:
    """Why `value` is not a valid retention label (None: it is)."""
    if value == NEVER:
        return None
    try:
        days = float(value)
    except ValueError:
        days = math.nan
    if not math.isfinite(days) or days <= 0:
        return f'must be a positive number of days or "{NEVER}"'
    return None


def label_days(value: str) -> float | None:
    """The window a retention label sets, in days; None: "never" (or a value stored before
    labels were checked, which keeps the session as well)."""
    return None if label_problem(value) or value == NEVER else float(value)


def parse_action(text: str) -> Action:
    try:
        return Action(text.strip().lower())
    except ValueError:
        raise ValueError(f"a retention action must be delete or archive, not {text!r}") from None


def parse_days(text: str) -> float:
    days = float(text)
    if not math.isfinite(days) or days < 0:
        raise ValueError(f"retention days must be a number of days >= 0, not {text!r}")
    return days


def parse_tenants(text: str, default_action: Action) -> dict[str, Policy]:
    """MEMORYD_SESSION_RETENTION_TENANTS: comma-separated `tenant=days[:delete|:archive]`."""
    policies: dict[str, Policy] = {}
    for item in filter(None, (part.strip() for part in text.split(","))):
        tenant, sep, rule = item.rpartition("=")
        if not sep or not tenant.strip():
            raise ValueError(f"a per-tenant retention is tenant=days[:delete|:archive], not {item!r}")
        days, _, action = rule.partition(":")
        policies[tenant.strip()] = Policy(parse_days(days), parse_action(action) if action else default_action)
    return policies


def settings(days: float, action: str, tenants: str) -> Settings:
    """The retention settings of Config's three fields; ValueError names a malformed one."""
    default = Policy(parse_days(str(days)), parse_action(action))
    return Settings(default, parse_tenants(tenants, default.action))


@dataclass(slots=True)
class Swept:
    """What one sweep expired (and how many it left alone: written to since they were read)."""

    deleted: int = 0
    archived: int = 0
    messages: int = 0
    skipped: int = 0


class Retention:
    def __init__(
        self,
        store: Store,
        hooks: MessageHooks,
        settings: Settings,
        *,
        batch: int = 100,
        clock: Callable[[], int] = now_ms,
    ) -> None:
        self.store = store
        self.hooks = hooks
        self.settings = settings
        self.batch = batch
        self.clock = clock  # ms since the epoch: what "now" is for the windows (tests move it)

    async def sweep(self, tenant: str) -> Swept:
        policy = self.settings.policy(tenant)
        swept = Swept()
        now = self.clock()
        if policy.days > 0:
            cutoff = now - int(policy.days * DAY_MS)
            unarchived = policy.action is Action.ARCHIVE
            after: tuple[int, str] | None = None
            while True:
                page = await self.store.idle_sessions(tenant, cutoff, after, self.batch, unarchived=unarchived)
                for info in page:
                    await self._expire(tenant, info, cutoff, policy.action, swept)
                if len(page) < self.batch:
                    break
                after = (page[-1].last_activity, page[-1].session_id)
        labelled: tuple[str, str] | None = None
        while True:
            page = await self.store.retention_labelled(tenant, labelled, self.batch)
            for info in page:
                days = label_days(info.attributes.labels.get(RETENTION_LABEL, NEVER))
                if days is not None and info.last_activity < now - int(days * DAY_MS):
                    await self._expire(tenant, info, now - int(days * DAY_MS), policy.action, swept)
            if len(page) < self.batch:
                return swept
            labelled = (page[-1].attributes.labels.get(RETENTION_LABEL, ""), page[-1].session_id)

    async def _expire(self, tenant: str, info: SessionInfo, cutoff: int, action: Action, swept: Swept) -> None:
        guard = SessionGuard(idle_before=cutoff)
        if action is Action.ARCHIVE:
            if not info.unarchived_count:
                return
            try:
                swept.messages += await self.store.trim(tenant, info.session_id, 0, self.clock(), guard)
                swept.archived += 1
            except SessionChanged:
                swept.skipped += 1
            return
        session = await forget.forget_session(self.store, self.hooks, tenant, info.session_id, guard, self.clock())
        if session is None:
            swept.skipped += 1
            return
        swept.deleted += 1
        swept.messages += session.messages

    async def sweep_all(self, tenants: list[str]) -> Swept:
        """Sweep each tenant; returns the totals (logged by the caller)."""
        total = Swept()
        for tenant in tenants:
            swept = await self.sweep(tenant)
            total.deleted += swept.deleted
            total.archived += swept.archived
            total.messages += swept.messages
            total.skipped += swept.skipped
        return total
