"""Session attributes: who a session belongs to (user_id, agent_id) and its labels.

The rules live here, once, and both stores apply them inside the transaction that reads
and writes the session row (so two writers never both win):
- writes merge: an empty user_id/agent_id leaves the stored one, labels given set their
  keys, `remove_labels` deletes keys, other labels stay;
- the owner is set once: a different non-empty user_id/agent_id than the stored one is
  refused (SESSION_OWNER_MISMATCH), so a session never moves to another user or agent;
- a session carries at most `max_labels` labels (SESSION_LABELS_FULL);
- a session is *listed* (ListSessions, GetSession) while it holds messages or carries
  attributes.

Ownership (docs/SECURITY.md, "Session ownership"). Besides its attributes a session row
holds its *owner*, fixed by the first write that creates or takes the row and kept
through every emptying (ClearSession of any target, DeleteMessages, PopMessages,
ReplaceHistory, ClearAll):
- a user's id: the first write named that user (a token bound to the user, or a tenant
  token whose session_attributes.user_id names it); the session is that user's for good,
  and its attributes' user_id stays the owner (clearing metadata keeps it);
- TENANT (""): the first write was a tenant token naming no user; the tenant may still
  give the session to one user (session_attributes.user_id), once;
- None: no owner: the row was forgotten (ForgetUser, retention: everything of the session
  went with it), so its id may be taken again by whoever writes it next.
A *claim* (a write by a token bound to one end user) goes ahead only on the user's own
session or one with no owner (no row, or a forgotten one); any other answers
USER_ACCESS_DENIED and stores nothing, whatever the session still holds or no longer holds.

Records derived from a session (summary slices and cursor, caller vectors, slice points)
carry the owner the session had when they were written (`record_owner`), and a user-bound
read returns only records stamped with its user (`readable_by`): a record the tenant or
another user wrote under the same id is never read, even if the id changed hands.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from memoryd.domain.errors import FailedPrecondition, PermissionDenied

# Separates a label's key from its value in the stores' label index entries. Validation
# refuses control characters in keys and values, so a pair encodes unambiguously.
LABEL_PAIR_SEPARATOR = "\x1f"


@dataclass(frozen=True, slots=True)
class SessionAttributes:
    user_id: str = ""
    agent_id: str = ""
    labels: Mapping[str, str] = field(default_factory=dict)

    def __bool__(self) -> bool:
        return bool(self.user_id or self.agent_id or self.labels)

    def to_dict(self) -> dict:
        """The event payload (proto SessionAttributes in JSON field names)."""
        return {"user_id": self.user_id, "agent_id": self.agent_id, "labels": dict(self.labels)}

    def label_pairs(self) -> list[str]:
        return label_pairs(self.labels)


def label_pairs(labels: Mapping[str, str]) -> list[str]:
    """Index entries of labels: one string per (key, value), sorted."""
    return sorted(f"{key}{LABEL_PAIR_SEPARATOR}{value}" for key, value in labels.items())


@dataclass(frozen=True, slots=True)
class SessionUpdate:
    """What a write asks of a session's attributes (merged by `apply`)."""

    attributes: SessionAttributes = SessionAttributes()
    remove_labels: Sequence[str] = ()
    max_labels: int = 100
    claim: bool = False  # attributes.user_id is the caller's end user (see the module docstring)

    def __bool__(self) -> bool:
        return bool(self.attributes or self.remove_labels)


@dataclass(frozen=True, slots=True)
class SessionFilter:
    """ListSessions filters; empty fields filter nothing, labels must all match.

    The time range is on a session's last activity, half open: `active_since` <=
    last_activity < `active_before` (None: unbounded). Every adapter puts exactly
    `matches_activity`'s condition into its query (tests/conformance/test_sessions.py)."""

    user_id: str = ""
    agent_id: str = ""
    labels: Mapping[str, str] = field(default_factory=dict)
    active_since: int | None = None
    active_before: int | None = None

    def scope(self) -> tuple:
        """What a page token is bound to (without a time range, what it was before there was one)."""
        scope: tuple = (self.user_id, self.agent_id, sorted(self.labels.items()))
        if self.active_since is not None or self.active_before is not None:
            scope += (self.active_since, self.active_before)
        return scope

    def matches_activity(self, last_activity: int) -> bool:
        """Whether a session last written at `last_activity` is in the time range."""
        if self.active_since is not None and last_activity < self.active_since:
            return False
        return self.active_before is None or last_activity < self.active_before


@dataclass(frozen=True, slots=True)
class SessionTotals:
    """A tenant's listed sessions (`listed`) added up: GetMemoryStats."""

    sessions: int = 0
    messages: int = 0  # archived included
    unarchived: int = 0
    labelled: int = 0  # carrying the retention label (retention.RETENTION_LABEL)


def _owner(field_name: str, current: str, wanted: str, session_id: str) -> str:
    if not wanted or wanted == current:
        return current
    if current:
        raise FailedPrecondition(
            f"session {session_id!r} belongs to another {field_name}; its owner is set once",
            reason="SESSION_OWNER_MISMATCH",
            metadata={"session_id": session_id, "field": field_name},
        )
    return wanted


def apply(session_id: str, current: SessionAttributes, update: SessionUpdate) -> SessionAttributes:
    """The attributes after `update`, or FailedPrecondition (nothing may then be stored)."""
    wanted = update.attributes
    labels = {**current.labels, **wanted.labels}
    for key in update.remove_labels:
        labels.pop(key, None)
    if len(labels) > update.max_labels and len(labels) > len(current.labels):
        raise FailedPrecondition(
            f"session {session_id!r} would carry {len(labels)} labels; at most {update.max_labels}",
            reason="SESSION_LABELS_FULL",
            metadata={"session_id": session_id, "labels": str(len(labels)), "capacity": str(update.max_labels)},
        )
    return SessionAttributes(
        user_id=_owner("user_id", current.user_id, wanted.user_id, session_id),
        agent_id=_owner("agent_id", current.agent_id, wanted.agent_id, session_id),
        labels=dict(sorted(labels.items())),
    )


TENANT = ""  # the owner of a session the tenant wrote first without naming a user
OWNER_KEY = "owner"  # the owner stamp's key in derived records (summaries, vector payloads)
# The stamp of a record written under no user (the tenant's): never a user id, which holds
# no "/" (transport/principals.py), and never empty (vector payloads leave empty fields out).
TENANT_STAMP = "/"


def listed(message_count: int, attributes: SessionAttributes) -> bool:
    """Whether ListSessions lists the session and GetSession finds it."""
    return message_count > 0 or bool(attributes)


def _not_the_users(session_id: str) -> PermissionDenied:
    return PermissionDenied(
        f"session {session_id!r} is not this token's end user's",
        reason="USER_ACCESS_DENIED",
        metadata={"field": "session_id"},
    )


def check_claim(session_id: str, owner: str | None, update: SessionUpdate) -> None:
    """A claim goes ahead on the user's own session or on one with no owner (None: never
    written, or forgotten); on any other (the tenant's, another user's) it is refused."""
    if update.claim and owner is not None and owner != update.attributes.user_id:
        raise _not_the_users(session_id)


def owner_after(session_id: str, owner: str | None, after: SessionAttributes) -> str:
    """The session's owner after a write that leaves `after` as its attributes: the first
    write fixes it (the user it names, else TENANT); a TENANT session goes to the one user a
    tenant write names; a user's stays that user's (another user: SESSION_OWNER_MISMATCH)."""
    if owner is None or owner == TENANT:
        return after.user_id
    if after.user_id not in (TENANT, owner):
        raise FailedPrecondition(
            f"session {session_id!r} belongs to another user_id; its owner is set once",
            reason="SESSION_OWNER_MISMATCH",
            metadata={"session_id": session_id, "field": "user_id"},
        )
    return owner


def owned_attributes(owner: str | None, attributes: SessionAttributes) -> SessionAttributes:
    """The attributes a session keeps when its attributes are cleared (ClearSession or
    ClearAll of metadata): its owner's user id, nothing else."""
    return SessionAttributes(user_id=owner or "") if owner else SessionAttributes()


def may_reach(owner: str | None, exists: bool, user: str, *, creates: bool, reads: bool) -> bool:
    """Whether a token bound to `user` may name a session with this owner (`exists`: it has
    a row): its own; for a write that may create its session (`creates`), one with no
    owner (the store re-checks in the write's transaction: check_claim); for a read, one
    never written (it reads as empty)."""
    if exists and owner == user:
        return True
    if creates:
        return owner is None
    return reads and not exists


def record_owner(owner: str | None) -> str:
    """The owner stamp a record derived from a session carries: the session's owner when it
    is written, TENANT_STAMP for the tenant's or a session without one (nobody's but the
    tenant's)."""
    return owner or TENANT_STAMP


def readable_by(stamp: str | None, user: str | None) -> bool:
    """Whether a record stamped `stamp` (None: written before records were stamped) may be
    returned to a caller bound to `user` (None: a tenant token, which reads every record)."""
    return user is None or stamp is None or stamp == user


async def owner_stamps(store: Any, tenant: str, session_ids: Iterable[str]) -> dict[str, str]:
    """record_owner of each session (`store`: a domain.store.Store), read before the write
    that stamps its records. A session changing owner meanwhile can only be claimed from no
    owner, given by the tenant, or forgotten: the stamp then names the tenant or the earlier
    owner, never a user the record was not written for."""
    stamps = {}
    for session_id in dict.fromkeys(session_ids):
        info = await store.get_session(tenant, session_id)
        stamps[session_id] = record_owner(info.owner if info is not None else None)
    return stamps
